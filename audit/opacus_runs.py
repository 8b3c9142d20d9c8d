"""Many independent Opacus DP-SGD trainings as one Opacus training (needs the ``torch`` extra: torch and opacus).

A training here is Opacus' ``PrivacyEngine.make_private`` on a small model (logistic regression, or a one-hidden-
layer MLP) and a handful of records; an audit needs thousands of them. :func:`train_batch` runs R of them as ONE
Opacus training of a model that holds the R models' parameters side by side, each parameter tensor an
``nn.Embedding`` with one row per model, indexed by the model a record belongs to. The dataset is the R copies of
the records, each tagged with its model. This is the same law as R independent trainings:

* the per-sample gradient of a record of model r (Opacus' Embedding grad sampler) is zero outside row r, so its
  flat norm -- and Opacus' clip factor C / (norm + 1e-6) -- is that of the record's gradient in model r alone;
  per-layer clipping likewise (one norm per parameter tensor, again only row r);
* Opacus adds i.i.d. N(0, sigma^2 C^2) noise to every coordinate, so each row gets noise independent of the others;
* Poisson sampling (Opacus' ``DPDataLoader``, its rate set to q: Opacus' own 1 / len(loader) is q only when R n q is
  a whole batch) includes every record of every copy independently with probability q, which is each model sampling
  its own records; an empty batch is a step of noise alone, as in Opacus; shuffled batches
  (``poisson_sampling=False``) come from :class:`PerModelShuffle`, which permutes each model's records independently
  (a uniform permutation, as ``DataLoader(shuffle=True)``) and cuts each into the same consecutive batches;
* the losses are summed (``loss_reduction="sum"``) and the step is ``lr / b`` with the public normaliser b, which
  is what ``loss_reduction="mean"`` does with Opacus' ``expected_batch_size = b`` for one model.

Records are ordinary examples (``kind`` 0: logistic loss of the model's logit) or *gradient records* (``kind`` 1:
loss ``a * u`` with u the first layer's pre-activation without bias -- ``w . x`` for logistic regression, the first
hidden unit's ``W1[0] . x`` for the MLP), whose per-example gradient is exactly ``a * x`` on those weights whatever
the parameters: a Dirac gradient canary (Nasr et al., USENIX Security 2023, arXiv:2302.07956) when x = e_j.

Randomness: every draw (Poisson masks or permutations, noise, the MLP's initialisation) comes from torch
generators seeded from the trial's ``numpy.random.Generator``; the global torch state is forked and restored, so
a run repeats for a seed and leaves no trace. Parameters are float64; Opacus draws its noise in float32.
"""

from __future__ import annotations

import importlib.util
import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from privbound._validation import check_finite_array, check_int, check_real

__all__ = ["UNAVAILABLE", "OpacusRun", "PerModelShuffle", "train_batch", "train_one", "opacus_epsilon",
           "opacus_noise_multiplier", "OPACUS_CLIP_EPS", "opacus_version"]

UNAVAILABLE: str | None = (None if importlib.util.find_spec("torch") is not None
                           and importlib.util.find_spec("opacus") is not None
                           else "torch or opacus is not installed: pip install 'privbound[torch]'")

# Opacus' clip factor is C / (norm + OPACUS_CLIP_EPS), capped at 1 (opacus.optimizers.optimizer).
OPACUS_CLIP_EPS = 1e-6
# Models per Opacus training (memory grows linearly with it under ghost clipping).
MODELS_PER_RUN = 2500


def opacus_version() -> str:
    import opacus

    return str(opacus.__version__)


@dataclass(frozen=True)
class OpacusRun:
    """The hyper-parameters of one Opacus DP-SGD training.

    Parameters
    ----------
    model : "logistic" or "mlp"
    hidden : hidden units of the MLP.
    fit_intercept : logistic regression with a bias.
    sampling_rate : Poisson rate q (``poisson_sampling=True``); with ``batch_size`` set, ignored.
    batch_size : fixed batch size of a shuffled loader (``poisson_sampling=False``); None for Poisson sampling.
    steps : optimizer steps (Poisson), or epochs (shuffled: ``steps`` epochs of ceil(n / batch_size) batches).
    noise_multiplier : sigma.
    clip_norm : C (flat clipping), or each tensor's norm with ``per_layer``.
    learning_rate : lr; the step is lr / ``normaliser`` times the noisy sum.
    normaliser : the public b (``expected_batch_size`` of ``loss_reduction="mean"``).
    init : public initial parameters per tensor name (``w``, ``b`` / ``W1``, ``b1``, ``w2``, ``b2``), or None for
        zeros (logistic) and Opacus-free N(0, 1/d), N(0, 1/H) draws per run (MLP).
    per_layer : per-layer clipping (``clipping="per_layer"``, one norm C per parameter tensor).
    clip_after_build : with ``per_layer``, the first tensor's clipping norm set to this after ``make_private``
        (a user's change the noise, fixed at construction from the norms given then, does not follow).
    steps_per_batch : optimizer steps on each batch (1 in a correct loop).
    """

    model: str = "logistic"
    hidden: int = 4
    fit_intercept: bool = True
    sampling_rate: float = 0.1
    batch_size: int | None = None
    steps: int = 100
    noise_multiplier: float = 1.0
    clip_norm: float = 1.0
    learning_rate: float = 0.01
    normaliser: float = 1.0
    init: tuple | None = None
    per_layer: bool = False
    clip_after_build: float | None = None
    steps_per_batch: int = 1

    def __post_init__(self) -> None:
        if self.model not in ("logistic", "mlp"):
            raise ValueError(f"model must be 'logistic' or 'mlp', got {self.model!r}")
        check_int(self.hidden, "hidden", low=1)
        if self.batch_size is None:
            q = check_real(self.sampling_rate, "sampling_rate", low=0.0, high=1.0, low_inclusive=False)
            if abs(1.0 / q - round(1.0 / q)) > 1e-9:
                raise ValueError(f"sampling_rate must be 1 / k for an integer k (Opacus' rate is 1 / len(loader)), "
                                 f"got {q}")
        else:
            check_int(self.batch_size, "batch_size", low=1)
        check_int(self.steps, "steps", low=1)
        check_real(self.noise_multiplier, "noise_multiplier", low=0.0)
        check_real(self.clip_norm, "clip_norm", low=0.0, low_inclusive=False)
        check_real(self.learning_rate, "learning_rate", low=0.0, low_inclusive=False)
        check_real(self.normaliser, "normaliser", low=0.0, low_inclusive=False)
        check_int(self.steps_per_batch, "steps_per_batch", low=1)
        if self.clip_after_build is not None:
            if not self.per_layer:
                raise ValueError("clip_after_build needs per_layer=True (flat clipping's noise follows the norm)")
            check_real(self.clip_after_build, "clip_after_build", low=0.0, low_inclusive=False)

    @property
    def poisson(self) -> bool:
        return self.batch_size is None

    def tensor_names(self) -> tuple[str, ...]:
        if self.model == "logistic":
            return ("w", "b") if self.fit_intercept else ("w",)
        return ("W1", "b1", "w2", "b2")

    def n_steps(self, n_records: int) -> int:
        """Optimizer steps of a training on ``n_records`` records."""
        if self.poisson:
            return self.steps * self.steps_per_batch
        return self.steps * math.ceil(n_records / self.batch_size) * self.steps_per_batch

    def accountant_rate_and_steps(self, n_records: int) -> tuple[float, int]:
        """(q, T) as Opacus' accountant sees them: q = 1 / len(loader), one accountant step per optimizer step."""
        if self.poisson:
            return float(self.sampling_rate), self.n_steps(n_records)
        return 1.0 / math.ceil(n_records / self.batch_size), self.n_steps(n_records)

    def noise_std(self) -> float:
        """The standard deviation of the noise Opacus adds to each coordinate of the summed clipped gradients."""
        n_tensors = len(self.tensor_names())
        C = math.sqrt(n_tensors) * self.clip_norm if self.per_layer else self.clip_norm
        return self.noise_multiplier * C


def opacus_epsilon(noise_multiplier: float, sampling_rate: float, steps: int, delta: float,
                   accountant: str = "prv") -> float:
    """epsilon at ``delta`` by Opacus' own accountant (PRV by default, as ``PrivacyEngine()``) for ``steps`` steps of
    the Poisson-subsampled Gaussian at (q, sigma) -- what ``privacy_engine.get_epsilon(delta)`` reports."""
    from opacus.accountants import create_accountant

    acc = create_accountant(mechanism=accountant)
    acc.history = [(float(noise_multiplier), float(sampling_rate), int(steps))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(acc.get_epsilon(delta=float(delta)))


def opacus_noise_multiplier(epsilon: float, delta: float, sampling_rate: float, steps: int,
                            accountant: str = "prv") -> float:
    """sigma for (epsilon, delta) by Opacus' ``get_noise_multiplier`` (its accountant, tolerance 0.01)."""
    from opacus.accountants.utils import get_noise_multiplier

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(get_noise_multiplier(target_epsilon=float(epsilon), target_delta=float(delta),
                                          sample_rate=float(sampling_rate), steps=int(steps), accountant=accountant))


# --------------------------------------------------------------------------- torch parts (built on first use)


def _torch_parts():
    import torch
    from torch import nn

    class BatchedModel(nn.Module):
        """R models side by side, one Embedding row per model and tensor; forward -> (logit, first-layer u)."""

        def __init__(self, run: OpacusRun, R: int, d: int):
            super().__init__()
            self.kind, self.d, self.H = run.model, d, run.hidden
            dt = torch.float64
            if run.model == "logistic":
                self.w = nn.Embedding(R, d, dtype=dt)
                if run.fit_intercept:
                    self.b = nn.Embedding(R, 1, dtype=dt)
            else:
                H = run.hidden
                self.W1 = nn.Embedding(R, H * d, dtype=dt)
                self.b1 = nn.Embedding(R, H, dtype=dt)
                self.w2 = nn.Embedding(R, H, dtype=dt)
                self.b2 = nn.Embedding(R, 1, dtype=dt)

        def forward(self, idx, x):
            if self.kind == "logistic":
                u = (self.w(idx) * x).sum(-1)
                z = u + self.b(idx)[:, 0] if hasattr(self, "b") else u
                return z, u
            pre = torch.bmm(self.W1(idx).view(-1, self.H, self.d), x[:, :, None])[:, :, 0]
            h = torch.tanh(pre + self.b1(idx))
            z = (self.w2(idx) * h).sum(-1) + self.b2(idx)[:, 0]
            return z, pre[:, 0]

    return torch, nn, BatchedModel


class PerModelShuffle:
    """Batch sampler of shuffled fixed-size batches for R models of ``n`` records each (record i of model r at index
    r n + i): every epoch draws an independent uniform permutation per model and yields batch k = the union over
    models of positions k b .. k b + b - 1 of their permutations (the last batch smaller when b does not divide n,
    as ``DataLoader(batch_size=b, shuffle=True)``)."""

    def __init__(self, R: int, n: int, batch_size: int, generator: Any):
        self.R, self.n, self.b, self.generator = R, n, batch_size, generator

    def __len__(self) -> int:
        return math.ceil(self.n / self.b)

    def __iter__(self):
        import torch

        perm = torch.argsort(torch.rand(self.R, self.n, generator=self.generator), dim=1)
        idx = perm + torch.arange(self.R)[:, None] * self.n
        for k in range(len(self)):
            yield idx[:, k * self.b:(k + 1) * self.b].reshape(-1).tolist()


class _BatchFetch:
    """A map-style dataset of tensors that fetches a whole batch by one indexing (``__getitems__``, which torch's
    DataLoader prefers to one ``__getitem__`` per record); the same records as ``TensorDataset``."""

    def __init__(self, *tensors):
        self.tensors = tensors

    def __len__(self) -> int:
        return len(self.tensors[0])

    def __getitem__(self, i):
        return tuple(t[i] for t in self.tensors)

    def __getitems__(self, indices):
        import torch

        index = torch.as_tensor(indices, dtype=torch.long)
        return _Batch(t[index] for t in self.tensors)


class _Batch(tuple):
    """A fetched batch (a tuple of tensors); :func:`_as_batch` passes it through the loader's collation."""


def _as_batch(batch):
    return tuple(batch) if isinstance(batch, _Batch) else torch_default_collate(batch)


def torch_default_collate(batch):
    from torch.utils.data import default_collate

    return default_collate(batch)


def _check_records(X: Any, y: Any, kind: Any, a: Any):
    X = check_finite_array(X, "X", ndim=2)
    n = X.shape[0]
    y = check_finite_array(y, "y", ndim=1)
    kind = np.zeros(n, np.int64) if kind is None else np.asarray(kind, dtype=np.int64)
    a = np.zeros(n) if a is None else check_finite_array(a, "a", ndim=1)
    if y.shape[0] != n or kind.shape != (n,) or a.shape != (n,):
        raise ValueError(f"y, kind and a must have one entry per record ({n})")
    if not np.all((kind == 0) | (kind == 1)):
        raise ValueError("kind must be 0 (an example) or 1 (a gradient record)")
    if not np.all((y[kind == 0] == 0) | (y[kind == 0] == 1)):
        raise ValueError("the labels y of examples (kind 0) must be 0 or 1")
    return X, y, kind, a


def _init_tensors(model, run: OpacusRun, R: int, d: int, gen) -> None:
    import torch

    with torch.no_grad():
        for name in run.tensor_names():
            p = getattr(model, name).weight
            if run.init is not None:
                value = dict(run.init)[name]
                p.copy_(torch.as_tensor(np.broadcast_to(np.asarray(value, float), p.shape[1:]).copy(),
                                        dtype=p.dtype).expand_as(p))
            elif run.model == "mlp" and name in ("W1", "w2"):
                scale = 1.0 / math.sqrt(d if name == "W1" else run.hidden)
                p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * scale)
            else:
                p.zero_()


def _one_run(run: OpacusRun, X, y, kind, a, R: int, seed: int, observe: tuple[str, int] | None):
    with warnings.catch_warnings():
        # Opacus' hooks on a model whose inputs need no gradient, and its notice that secure_mode is off
        warnings.filterwarnings("ignore", message="Full backward hook is firing")
        warnings.filterwarnings("ignore", message="Secure RNG turned off")
        return _one_run_quiet(run, X, y, kind, a, R, seed, observe)


def _one_run_quiet(run: OpacusRun, X, y, kind, a, R: int, seed: int, observe: tuple[str, int] | None):
    torch, nn, BatchedModel = _torch_parts()
    from opacus import PrivacyEngine
    from opacus.utils.fast_gradient_clipping_utils import DPTensorFastGradientClipping

    n, d = X.shape
    gen = torch.Generator().manual_seed(seed)
    noise_gen = torch.Generator().manual_seed(seed ^ 0x5DEECE66D)
    model = BatchedModel(run, R, d)
    _init_tensors(model, run, R, d, gen)
    idx = torch.arange(R).repeat_interleave(n)
    Xt = torch.as_tensor(np.tile(X, (R, 1)), dtype=torch.float64)
    yt = torch.as_tensor(np.tile(y, R), dtype=torch.float64)
    kt = torch.as_tensor(np.tile(kind, R), dtype=torch.bool)
    at = torch.as_tensor(np.tile(a, R), dtype=torch.float64)
    dataset = _BatchFetch(idx, Xt, yt, kt, at)
    if run.poisson:
        loader = torch.utils.data.DataLoader(dataset, batch_size=max(1, round(run.sampling_rate * R * n)),
                                             collate_fn=_as_batch)
    else:
        loader = torch.utils.data.DataLoader(dataset, batch_sampler=PerModelShuffle(R, n, run.batch_size, gen),
                                             collate_fn=_as_batch)
    optimizer = torch.optim.SGD(model.parameters(), lr=run.learning_rate / run.normaliser)
    names = run.tensor_names()
    clip = [run.clip_norm] * len(names) if run.per_layer else run.clip_norm
    ghost = not run.per_layer  # Opacus' ghost clipping: the same clip factors, no (batch, R, width) tensors
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        made = PrivacyEngine().make_private(
            module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=run.noise_multiplier,
            max_grad_norm=clip, poisson_sampling=run.poisson, loss_reduction="sum", noise_generator=noise_gen,
            clipping="per_layer" if run.per_layer else "flat", grad_sample_mode="ghost" if ghost else "hooks",
            **({"criterion": torch.nn.BCEWithLogitsLoss(reduction="sum")} if ghost else {}))
    module, optimizer, loader = (made[0], made[1], made[3]) if ghost else made
    if run.clip_after_build is not None:
        optimizer.max_grad_norms = [run.clip_after_build] + list(optimizer.max_grad_norms[1:])
    if run.poisson:
        # Opacus' DPDataLoader samples at 1 / len(loader), which is 1 / round(R n q) of R n records: q only when R n q
        # is (close to) an integer; each model samples its own records at exactly q.
        loader.batch_sampler.sample_rate = loader.sample_rate = run.sampling_rate
        loader.batch_sampler.generator = gen
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    watched = None if observe is None else getattr(model, observe[0]).weight
    records = []
    epochs = run.steps if not run.poisson else math.ceil(run.steps * run.sampling_rate)
    done = 0
    for _ in range(epochs if not run.poisson else 10 ** 9):
        for bidx, bx, by, bk, ba in loader:
            for _ in range(run.steps_per_batch):
                before = None if watched is None else watched[:, observe[1]].detach().clone()
                optimizer.zero_grad()
                if ghost and not len(bidx):
                    # an empty Poisson batch (of all R models) steps by the noise alone; Opacus' ghost clipping of an
                    # Embedding cannot take one (it reshapes zero ids), so its gradients are set to zero here
                    for p in model.parameters():
                        p.grad = torch.zeros_like(p)
                else:
                    z, u = module(bidx, bx)
                    per_sample = torch.where(bk, ba * u, bce(z, by, reduction="none"))
                    if ghost:
                        DPTensorFastGradientClipping(module, optimizer, per_sample, "sum").backward()
                    else:
                        per_sample.sum().backward()
                optimizer.step()
                if watched is not None:
                    records.append((watched[:, observe[1]].detach() - before).numpy())
            done += 1
            if run.poisson and done == run.steps:
                break
        if run.poisson and done == run.steps:
            break
    params = {name: getattr(model, name).weight.detach().numpy().copy() for name in names}
    obs = None if watched is None else np.stack(records, axis=1)
    return params, obs


def train_batch(run: OpacusRun, X: Any, y: Any, rng: np.random.Generator, size: int, *, kind: Any = None,
                a: Any = None, observe: tuple[str, int] | None = None,
                models_per_run: int = MODELS_PER_RUN) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """``size`` independent Opacus trainings of ``run`` on the records (X, y, kind, a) (module docstring).

    Returns the final parameters of each training, ``{tensor name: (size, width)}``, and with ``observe =
    (tensor name, column)`` the change of that parameter at every optimizer step, shape (size, steps): minus
    lr / b times the noisy update, read from consecutive model states. Trainings run ``models_per_run`` at a time;
    each group draws its torch seeds from ``rng``.
    """
    import torch

    if not isinstance(run, OpacusRun):
        raise TypeError(f"run must be an OpacusRun, got {type(run).__name__}")
    X, y, kind, a = _check_records(X, y, kind, a)
    size = check_int(size, "size", low=1)
    models_per_run = check_int(models_per_run, "models_per_run", low=1)
    parts, obs = [], []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: one thread is several times faster than contending ones
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(rng.integers(2 ** 62)))
            for start in range(0, size, models_per_run):
                R = min(models_per_run, size - start)
                params, o = _one_run(run, X, y, kind, a, R, int(rng.integers(2 ** 62)), observe)
                parts.append(params)
                obs.append(o)
    finally:
        torch.set_num_threads(threads)
    params = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    return params, (None if observe is None else np.concatenate(obs))


def train_one(run: OpacusRun, X: Any, y: Any, seed: int, *, kind: Any = None, a: Any = None,
              observe: tuple[str, int] | None = None) -> tuple[dict[str, Any], np.ndarray | None]:
    """ONE training of ``run`` written as a user writes it: ``nn.Linear`` layers, a ``DataLoader`` over the records
    (``batch_size`` = q n for Poisson, re-sampled by Opacus; shuffled otherwise), ``make_private`` with
    ``loss_reduction="mean"`` (Opacus divides by its expected batch size; the learning rate is set so that the step
    is lr / b as in :func:`train_batch`). The reference :func:`train_batch` is tested against.
    Returns the final parameters (one row) and the observed coordinate's changes, shape (1, steps).
    """
    import torch
    from torch import nn
    from opacus import PrivacyEngine

    X, y, kind, a = _check_records(X, y, kind, a)
    n, d = X.shape
    batch = n * run.sampling_rate
    if run.poisson and (abs(batch - round(batch)) > 1e-9 or round(batch) < 1):
        raise ValueError(f"train_one needs sampling_rate * n to be a whole batch size (a user's loader of batch q n "
                         f"samples at q = 1 / len(loader)), got q = {run.sampling_rate:g}, n = {n}")
    with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Full backward hook is firing")
        warnings.filterwarnings("ignore", message="Secure RNG turned off")
        torch.manual_seed(seed)
        gen = torch.Generator().manual_seed(seed)
        # The biases are linear layers of a constant input: a gradient record's loss a * (w . x) then leaves them
        # no per-sample gradient in Opacus' grad samplers, which read each layer's own input and output.
        ones_in = run.model == "mlp" or run.fit_intercept
        if run.model == "logistic":
            first = nn.Linear(d, 1, bias=False, dtype=torch.float64)
            bias = nn.Linear(1, 1, bias=False, dtype=torch.float64) if run.fit_intercept else None
            layers = {"w": first.weight, "b": None if bias is None else bias.weight}
            second = None
        else:
            first = nn.Linear(d, run.hidden, bias=False, dtype=torch.float64)
            bias = nn.Linear(1, run.hidden, bias=False, dtype=torch.float64)
            second = nn.Linear(run.hidden, 1, dtype=torch.float64)
            layers = {"W1": first.weight, "b1": bias.weight, "w2": second.weight, "b2": second.bias}
        with torch.no_grad():
            for name in run.tensor_names():
                p = layers[name]
                if run.init is not None:
                    p.copy_(torch.as_tensor(np.asarray(dict(run.init)[name], float).reshape(p.shape)))
                elif run.model == "mlp" and name in ("W1", "w2"):
                    scale = 1.0 / math.sqrt(d if name == "W1" else run.hidden)
                    p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * scale)
                else:
                    p.zero_()

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.first = first
                if bias is not None:
                    self.bias = bias
                if second is not None:
                    self.second = second

            def forward(self, x):
                pre = self.first(x)
                if ones_in:
                    ones = torch.ones(len(x), 1, dtype=x.dtype)
                if run.model == "logistic":
                    z = pre[:, 0] + (self.bias(ones)[:, 0] if bias is not None else 0.0)
                    return z, pre[:, 0]
                return self.second(torch.tanh(pre + self.bias(ones)))[:, 0], pre[:, 0]

        module = Net()
        dataset = torch.utils.data.TensorDataset(torch.as_tensor(X), torch.as_tensor(y),
                                                 torch.as_tensor(kind, dtype=torch.bool), torch.as_tensor(a))
        if run.poisson:
            loader = torch.utils.data.DataLoader(dataset, batch_size=max(1, round(run.sampling_rate * n)))
        else:
            loader = torch.utils.data.DataLoader(dataset, batch_size=run.batch_size, shuffle=True, generator=gen)
        engine = PrivacyEngine()
        # "mean" divides the noisy sum by Opacus' expected batch size int(n q); lr is scaled so the step is lr / b
        q, _ = run.accountant_rate_and_steps(n)
        expected = int(n * q)
        optimizer = torch.optim.SGD(module.parameters(), lr=run.learning_rate * expected / run.normaliser)
        clip = [run.clip_norm] * len(run.tensor_names()) if run.per_layer else run.clip_norm
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module, optimizer, loader = engine.make_private(
                module=module, optimizer=optimizer, data_loader=loader, noise_multiplier=run.noise_multiplier,
                max_grad_norm=clip, poisson_sampling=run.poisson, loss_reduction="mean",
                noise_generator=torch.Generator().manual_seed(seed + 1),
                clipping="per_layer" if run.per_layer else "flat")
        if run.clip_after_build is not None:
            optimizer.max_grad_norms = [run.clip_after_build] + list(optimizer.max_grad_norms[1:])
        bce = torch.nn.functional.binary_cross_entropy_with_logits
        watched = None
        if observe is not None:
            watched = layers[observe[0]]
        records, done = [], 0
        target = run.steps if run.poisson else None
        epochs = 10 ** 9 if run.poisson else run.steps
        for _ in range(epochs):
            for bx, by, bk, ba in loader:
                for _ in range(run.steps_per_batch):
                    before = None if watched is None else watched.detach().reshape(-1)[observe[1]].item()
                    optimizer.zero_grad()
                    z, u = module(bx)  # an empty Poisson batch too: Opacus' step then adds the noise alone
                    loss = torch.where(bk, ba * u, bce(z, by, reduction="none")).mean()
                    loss.backward()
                    optimizer.step()
                    if watched is not None:
                        records.append(watched.detach().reshape(-1)[observe[1]].item() - before)
                done += 1
                if target is not None and done == target:
                    break
            if target is not None and done == target:
                break
        params = {name: layers[name].detach().numpy().reshape(1, -1).copy() for name in run.tensor_names()}
        history = list(engine.accountant.history)
    params["accountant_history"] = history
    return params, (None if observe is None else np.asarray(records)[None, :])
