"""DP-SGD (Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar & Zhang, "Deep learning with differential
privacy", CCS 2016, arXiv:1607.00133, Algorithm 1) in numpy, for the models of
:mod:`privbound.learners.dpsgd.models`.

Each of the T steps

1. draws a Poisson(q) subsample B_t: every record (and every gradient canary) independently with
   probability q;
2. clips every per-example gradient to L2 norm at most C: g_i <- g_i min(1, C/||g_i||);
3. releases the noisy update u_t = (sum_{i in B_t} g_i + N(0, sigma^2 C^2 I)) / b, with b a public
   constant (the expected batch size), and steps theta_{t+1} = theta_t - lr u_t.

Its claim (add/remove one record) comes from its own accounting
(:mod:`privbound.learners.dpsgd.accounting`): ``noise_multiplier=None`` calibrates sigma as the
smallest with which the T steps are (epsilon, delta)-DP by dp_accounting's PLD (default) or RDP
accountant; a given ``noise_multiplier`` is accounted instead.

Records and gradient canaries. The data are ``(X, y)`` with labels in {0, 1}. A *gradient canary*
(Nasr et al., "Tight auditing of differentially private machine learning", USENIX Security 2023,
arXiv:2302.07956) is a record whose per-example gradient is a fixed vector chosen by the adversary
rather than the gradient of a loss; ``gradient_canaries`` (k, p) are such records, sampled, clipped
and summed like the others (after the data rows, in order).

Batched runs. :meth:`DPSGD.run_batch` advances ``size`` independent runs together (axis 0 of every
array). It draws, at every step, the subsample masks of all runs (``rng.random((size, n + k))``)
and then their noise (``rng.normal(0, sigma C, (size, p))``); :meth:`DPSGD.fit` is the one-run
reference implementation (a loop over examples with :meth:`example_gradient`) drawing the same
numbers in the same order, so ``fit`` and ``run_batch(size=1)`` agree to rounding for a common
seed, and the rows of a batch are independent runs (tested, with the distributional identity of
batched and independent single runs).

Normaliser. ``expected_batch_size=None`` divides by q times the number of records (data rows plus
gradient canaries) -- the usual choice, a (slight) function of the dataset's size; the audit targets
pass a fixed public ``expected_batch_size``.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Callable

import numpy as np

from privbound.learners.dpsgd.accounting import (
    PLD_STEP,
    calibrate_noise_multiplier,
    dpsgd_dp_event,
    dpsgd_epsilon,
)
from privbound.learners.dpsgd.models import LogisticRegression, check_labels, check_model
from privbound.learners.mechanisms import PrivacyGuarantee
from privbound.learners.neighbouring import NeighbouringRelation
from privbound._validation import (
    Interval,
    StrOptions,
    check_finite_array,
    check_int,
    check_rng,
    validate_parameters,
)

__all__ = ["DPSGD", "DPSGDParameters", "split_training_data"]

_RANDOM_STATE = [None, Integral, np.random.SeedSequence, np.random.Generator]


def _rng_of(random_state: Any) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(random_state)


def split_training_data(data: Any) -> tuple[Any, Any, Any]:
    """``(X, y)`` or ``(X, y, gradient_canaries)`` -> ``(X, y, gradient_canaries or None)``."""
    if isinstance(data, (tuple, list)) and len(data) in (2, 3):
        return data[0], data[1], (data[2] if len(data) == 3 else None)
    raise TypeError("data must be a pair (X, y) or a triple (X, y, gradient_canaries)")


@dataclass(frozen=True)
class DPSGDParameters:
    """The resolved hyper-parameters of one DP-SGD configuration.

    ``accounting_rate`` is the sampling rate the accountant is given (the sampler's rate in a correct
    implementation); ``source`` says where sigma comes from.
    """

    sampling_rate: float
    steps: int
    noise_multiplier: float
    clip_norm: float
    learning_rate: float
    expected_batch_size: float | None
    accounting_rate: float
    source: str


class DPSGD:
    """DP-SGD with Poisson subsampling, per-example clipping and Gaussian noise (module docstring).

    Parameters
    ----------
    model : LogisticRegression (default) or MLP
    epsilon, delta : the target budget (add/remove one record) that ``noise_multiplier=None`` calibrates to.
    sampling_rate : Poisson sampling rate q in (0, 1].
    steps : number of steps T.
    clip_norm : per-example L2 clipping norm C.
    learning_rate : step size lr.
    noise_multiplier : sigma (noise standard deviation sigma C on the clipped sum); ``None`` calibrates it.
    expected_batch_size : the public normaliser b; ``None`` is q times the number of records.
    init : initial parameters (p,), public and the same for every run; ``None`` is the model's own
        initialisation (zeros for logistic regression, a fresh random draw per run for the MLP).
    accountant : "pld" (default) or "rdp".
    random_state : seed or ``numpy.random.Generator`` of :meth:`fit`.

    Fitted attributes of :meth:`fit`: ``coef_`` (theta_T), ``updates_`` (T, p) the released noisy updates,
    ``batch_sizes_`` (T,), ``parameters_``.
    """

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "sampling_rate": [Interval(Real, 0, 1, closed="right")],
        "steps": [Interval(Integral, 1, None, closed="left")],
        "clip_norm": [Interval(Real, 0, None, closed="neither")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "noise_multiplier": [Interval(Real, 0, None, closed="left"), None],
        "expected_batch_size": [Interval(Real, 0, None, closed="neither"), None],
        "accountant": [StrOptions({"rdp", "pld"})],
        "random_state": _RANDOM_STATE,
    }

    def __init__(self, model: Any = None, *, epsilon: float = 1.0, delta: float = 1e-5, sampling_rate: float = 0.1,
                 steps: int = 100, clip_norm: float = 1.0, learning_rate: float = 0.1,
                 noise_multiplier: float | None = None, expected_batch_size: float | None = None,
                 init: Any = None, accountant: str = "pld", random_state: Any = None):
        self.model = LogisticRegression() if model is None else model
        self.epsilon = epsilon
        self.delta = delta
        self.sampling_rate = sampling_rate
        self.steps = steps
        self.clip_norm = clip_norm
        self.learning_rate = learning_rate
        self.noise_multiplier = noise_multiplier
        self.expected_batch_size = expected_batch_size
        self.init = init
        self.accountant = accountant
        self.random_state = random_state

    def __repr__(self) -> str:
        keys = ("epsilon", "delta", "sampling_rate", "steps", "clip_norm", "learning_rate", "noise_multiplier",
                "expected_batch_size", "accountant")
        args = ", ".join(f"{k}={getattr(self, k)!r}" for k in keys)
        init = "" if self.init is None else ", init=<fixed>"
        return f"{type(self).__name__}({self.model!r}, {args}{init})"

    # ------------------------------------------------------------------ parameters and accounting
    def accounting_sampling_rate(self) -> float:
        """The sampling rate given to the accountant: the sampler's rate."""
        return float(self.sampling_rate)

    def parameters(self) -> DPSGDParameters:
        """Validate the hyper-parameters and resolve sigma (calibrated on first use, then cached)."""
        validate_parameters(self)
        check_model(self.model)
        q, T = float(self.sampling_rate), int(self.steps)
        q_acc = self.accounting_sampling_rate()
        if self.noise_multiplier is None:
            sigma = calibrate_noise_multiplier(float(self.epsilon), float(self.delta), q_acc, T, self.accountant)
            src = f"sigma calibrated by dp_accounting ({self.accountant}) for ({float(self.epsilon):g}, {float(self.delta):g})"
        else:
            sigma = float(self.noise_multiplier)
            src = "given noise multiplier"
        b = None if self.expected_batch_size is None else float(self.expected_batch_size)
        return DPSGDParameters(q, T, sigma, float(self.clip_norm), float(self.learning_rate), b, q_acc, src)

    def run_parameters(self) -> DPSGDParameters:
        """The parameters the runs use: :meth:`parameters` (a planted-bug variant may differ from its claim)."""
        return self.parameters()

    def dp_event(self) -> Any:
        """``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), T)`` (the accountant's view)."""
        P = self.parameters()
        return dpsgd_dp_event(P.accounting_rate, P.noise_multiplier, P.steps)

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """The (epsilon, delta) claim from this learner's own accounting (add/remove one record)."""
        P = self.parameters()
        delta = float(self.delta)
        cond = (f"per-example gradients clipped to L2 norm {P.clip_norm:g}, Poisson sampling at rate "
                f"{P.accounting_rate:g}, {P.steps} steps, a public normaliser")
        if self.noise_multiplier is None:
            eps = float(self.epsilon)
        else:
            eps = dpsgd_epsilon(P.accounting_rate, P.noise_multiplier, P.steps, delta, self.accountant)
        src = (f"Abadi et al. 2016, Alg. 1; dp_accounting {self.accountant}"
               + (f" (discretisation {PLD_STEP:g})" if self.accountant == "pld" else "") + f": {P.source}")
        return PrivacyGuarantee(eps, delta, NeighbouringRelation.ADD_OR_REMOVE_ONE, src, self.dp_event, condition=cond)

    # ------------------------------------------------------------------ hooks (planted-bug variants override these)
    def _clip_factors(self, norms: np.ndarray, mask: np.ndarray, clip_norm: float) -> np.ndarray:
        """Per-example scale factors min(1, C/||g||), shape of ``norms`` (runs x examples, data rows first)."""
        with np.errstate(divide="ignore"):
            return np.where(norms > clip_norm, clip_norm / norms, 1.0)

    def _normaliser(self, batch_sizes: np.ndarray, expected: float) -> np.ndarray:
        """The divisor of each run's noisy sum: the public expected batch size."""
        return np.full(batch_sizes.shape, expected)

    # ------------------------------------------------------------------ input handling
    def _prepare(self, X: Any, y: Any, gradient_canaries: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        X = check_finite_array(X, "X", ndim=2, min_size=0)
        if X.shape[1] < 1:
            raise ValueError(f"X must have at least one feature column, got shape {X.shape}")
        y = check_labels(y, X.shape[0])
        p = self.model.n_parameters(X.shape[1])
        if gradient_canaries is None:
            G = np.zeros((0, p))
        else:
            G = check_finite_array(gradient_canaries, "gradient_canaries", min_size=0)
            if G.ndim == 1:
                G = G[None, :]
            if G.ndim != 2 or G.shape[1] != p:
                raise ValueError(f"gradient_canaries must have shape (k, {p}) (one parameter vector per canary), "
                                 f"got {G.shape}")
        if X.shape[0] + G.shape[0] == 0:
            raise ValueError("the dataset must hold at least one record or gradient canary")
        return X, y, G, p

    def _initial(self, d: int, p: int, rng: np.random.Generator, size: int) -> np.ndarray:
        if self.init is None:
            return self.model.init(d, rng, size)
        theta0 = check_finite_array(self.init, "init", ndim=1)
        if theta0.shape[0] != p:
            raise ValueError(f"init must have {p} entries (the model's parameters), got {theta0.shape[0]}")
        return np.broadcast_to(theta0, (size, p)).copy()

    # ------------------------------------------------------------------ one run (reference)
    def fit(self, X: Any, y: Any, gradient_canaries: Any = None) -> "DPSGD":
        """One training run, example by example (the reference the batched path is tested against)."""
        P = self.run_parameters()
        X, y, G, p = self._prepare(X, y, gradient_canaries)
        rng = _rng_of(self.random_state)
        n, d = X.shape
        m = n + G.shape[0]
        b = P.sampling_rate * m if P.expected_batch_size is None else P.expected_batch_size
        theta = self._initial(d, p, rng, 1)[0]
        updates = np.zeros((P.steps, p))
        sizes = np.zeros(P.steps, np.int64)
        for t in range(P.steps):
            mask = rng.random(m) < P.sampling_rate
            grads = [self.model.example_gradient(theta, X[i], y[i]) for i in range(n)] + list(G)
            norms = np.array([np.linalg.norm(g) for g in grads])
            factors = self._clip_factors(norms[None, :], mask[None, :], P.clip_norm)[0]
            total = np.zeros(p)
            for i in np.flatnonzero(mask):
                total += factors[i] * grads[i]
            if P.noise_multiplier > 0:
                total = total + rng.normal(0.0, P.noise_multiplier * P.clip_norm, p)
            sizes[t] = int(mask.sum())
            updates[t] = total / self._normaliser(sizes[t:t + 1], b)[0]
            theta = theta - P.learning_rate * updates[t]
        self.coef_ = theta
        self.updates_ = updates
        self.batch_sizes_ = sizes
        self.parameters_ = P
        return self

    # ------------------------------------------------------------------ batched runs
    def run_batch(self, X: Any, y: Any, rng: np.random.Generator, size: int, *, gradient_canaries: Any = None,
                  record: Callable[[int, np.ndarray], np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """``size`` independent training runs as array operations (axis 0 indexes runs).

        Returns ``theta`` (size, p), the final parameters, and ``batch_sizes`` (size, T); with
        ``record(t, updates)`` -- called at every step with the (size, p) noisy updates u_t, returning an
        array with ``size`` rows -- also ``records`` (size, T, ...): what an observer of every update keeps.
        """
        P = self.run_parameters()
        rng = check_rng(rng)
        size = check_int(size, "size", low=1)
        X, y, G, p = self._prepare(X, y, gradient_canaries)
        n, d = X.shape
        m = n + G.shape[0]
        b = P.sampling_rate * m if P.expected_batch_size is None else P.expected_batch_size
        theta = self._initial(d, p, rng, size)
        g_norms = np.linalg.norm(G, axis=1)
        sizes = np.zeros((size, P.steps), np.int64)
        records = []
        for t in range(P.steps):
            mask = rng.random((size, m)) < P.sampling_rate
            per = self.model.per_example(theta, X, y)
            norms = np.empty((size, m))
            norms[:, :n] = per.norms
            norms[:, n:] = g_norms
            weights = mask * self._clip_factors(norms, mask, P.clip_norm)
            total = per.weighted_sum(weights[:, :n])
            if G.shape[0]:
                total += weights[:, n:] @ G
            if P.noise_multiplier > 0:
                total += rng.normal(0.0, P.noise_multiplier * P.clip_norm, (size, p))
            sizes[:, t] = mask.sum(axis=1)
            total /= self._normaliser(sizes[:, t], b)[:, None]  # the released update u_t
            if record is not None:
                records.append(np.asarray(record(t, total)))
            theta -= P.learning_rate * total
        out = {"theta": theta, "batch_sizes": sizes}
        if record is not None:
            out["records"] = np.stack(records, axis=1)
        return out

    # ------------------------------------------------------------------ mechanism interface
    def sample(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        """The last iterate of ``size`` independent runs on ``data`` = ``(X, y)`` or ``(X, y, gradient_canaries)``."""
        X, y, G = split_training_data(data)
        return self.run_batch(X, y, rng, size, gradient_canaries=G)["theta"]

    def __call__(self, data: Any, rng: np.random.Generator) -> np.ndarray:
        return self.sample(data, rng, 1)[0]

    # ------------------------------------------------------------------ fitted model
    def decision_function(self, X: Any) -> np.ndarray:
        """Logits of the fitted model on ``X``."""
        X = check_finite_array(X, "X", ndim=2)
        return self.model.logits(self.coef_[None, :], X)[0]

    def predict_proba(self, X: Any) -> np.ndarray:
        """P(y = 1 | x) under the fitted model."""
        X = check_finite_array(X, "X", ndim=2)
        return self.model.predict_proba(self.coef_[None, :], X)[0]

    def predict(self, X: Any) -> np.ndarray:
        return (self.decision_function(X) > 0).astype(float)

    def loss(self, X: Any, y: Any) -> np.ndarray:
        """Per-example logistic losses under the fitted model."""
        X = check_finite_array(X, "X", ndim=2)
        return self.model.losses(self.coef_[None, :], X, check_labels(y, X.shape[0]))[0]
