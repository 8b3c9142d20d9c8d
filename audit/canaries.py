"""Canary designs for auditing private training, and an adapter for a user's own ``train(dataset, rng) -> model``.

A canary design says what the adversary inserts, what it observes and how it scores what it sees;
each states its threat model (:class:`ThreatModel`). The neighbouring pair is always add/remove of
the canary: d0 = the dataset, d1 = the dataset with the canary.

* :class:`GradientCanary` -- white-box, all iterates (Nasr, Hayes, Steinke, Balle, Tramèr, Jagielski,
  Carlini & Terzis, "Tight auditing of differentially private machine learning", USENIX Security 2023,
  arXiv:2302.07956): the adversary inserts a *Dirac gradient canary* -- a record whose per-example
  gradient is ``norm * e_j`` on one parameter coordinate j -- and sees every noisy update u_t. It
  observes o_t = scale * u_t[j] (``scale`` = b / C for DP-SGD with normaliser b and clip norm C, so that
  the noise has standard deviation sigma and an included canary shifts o_t by min(norm, C) / C). The
  score is the sum of the observations over the steps. If the data's gradients vanish on coordinate j
  (a parameter that multiplies a feature which is zero in every record), the observations are
  independent, N(0, sigma^2) under d0 and the mixture (1 - q) N(0, sigma^2) + q N(shift, sigma^2) under
  d1: :func:`subsampled_gaussian_log_likelihood_ratio` is their exact log-likelihood ratio, which the
  white-box estimator (:mod:`privbound.audit.estimators.whitebox`) turns into a bound; the steps are independent and
  identically distributed, so the composition estimator (:mod:`privbound.audit.estimators.composition`) can bound the
  law of one step's loss from all T steps of every trial, with
  :func:`subsampled_gaussian_step_log_likelihood_ratio`, and compose it.
* :class:`InputCanary` -- black-box, last iterate (Jagielski, Ullman & Oprea, "Auditing differentially
  private machine learning: how private is private SGD?", NeurIPS 2020, arXiv:2006.07709; Nasr et al.
  2023): the adversary inserts a record (x, y) -- mislabelled or out of distribution -- and sees only the
  final model; the score is minus the canary's loss under it (a low loss says "trained on it").
* :class:`GradientCanaries`, :class:`InputCanaries` -- m canaries of either kind for a one-run audit
  (Steinke, Nasr & Jagielski, "Privacy auditing with one (1) training run", NeurIPS 2023,
  arXiv:2305.08846): each included with probability 1/2, one training run, one score per canary.

The adapter: :func:`audit_training` runs a user's ``train(dataset, rng) -> model`` on both datasets
through the trial engine (one call per trial) and returns an :class:`~privbound.audit.core.AuditResult`
whose ``details["threat_model"]`` states the threat model; :func:`one_run_training_audit` is the
one-run audit of the same function. For gradient canaries the dataset handed to ``train`` is a triple
``(X, y, G)`` whose rows G are the canaries' gradients, and ``train`` must add them, as extra
examples, to its per-example gradients (:class:`privbound.learners.dpsgd.DPSGD` does); the model must
expose its noisy updates (``model.updates_`` of shape (T, p), or an ``updates`` accessor).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any, Callable, ClassVar, Sequence

import numpy as np

from privbound.audit.core import audit_mechanism
from privbound.audit.estimators import Composition, Estimator, WhiteBox, resolve_estimator
from privbound.audit.result import AuditResult
from privbound.audit.engine import map_chunks
from privbound.audit.one_run import OneRunResult, one_run_audit
from privbound._validation import (
    check_confidence,
    check_delta,
    check_epsilon,
    check_finite_array,
    check_int,
    check_probability,
    check_real,
)

__all__ = [
    "ThreatModel",
    "subsampled_gaussian_log_likelihood_ratio",
    "subsampled_gaussian_step_log_likelihood_ratio",
    "last_iterate_log_likelihood_ratio",
    "GradientCanary",
    "InputCanary",
    "GradientCanaries",
    "InputCanaries",
    "TrainingRelease",
    "audit_training",
    "one_run_training_audit",
    "pad_features",
]


class ThreatModel(str, enum.Enum):
    """What the auditing adversary inserts and observes."""

    WHITE_BOX_ALL_ITERATES = "white-box-all-iterates"
    BLACK_BOX_LAST_ITERATE = "black-box-last-iterate"

    @property
    def description(self) -> str:
        return _THREAT_MODELS[self]

    def __str__(self) -> str:
        return self.value


_THREAT_MODELS = {
    ThreatModel.WHITE_BOX_ALL_ITERATES: (
        "white-box, all iterates: the adversary inserts a Dirac gradient canary and observes every noisy update "
        "(Nasr et al. 2023)"),
    ThreatModel.BLACK_BOX_LAST_ITERATE: (
        "black-box, last iterate: the adversary inserts an input-space canary record and observes only the final "
        "model; score = minus the canary's loss (Jagielski et al. 2020)"),
}


def subsampled_gaussian_step_log_likelihood_ratio(observations: Any, *, sampling_rate: float, noise_multiplier: float,
                                                  shift: float = 1.0) -> np.ndarray:
    """log p_d0(o_t) / p_d1(o_t) of each of T independent observations per row (axis 1 indexes steps).

    d0: o_t ~ N(0, s^2); d1: o_t ~ (1 - q) N(0, s^2) + q N(shift, s^2), with q = ``sampling_rate`` and
    s = ``noise_multiplier``. Hence log p0/p1 = -log(1 - q + q exp((shift o_t - shift^2/2) / s^2)) at each
    step, computed with ``logaddexp``: the privacy loss of one step of the Poisson-subsampled Gaussian
    mechanism along the canary direction (Balle, Barthe & Gaboardi 2018; Mironov, Talwar & Zhang 2019), the
    dominating pair of DP-SGD under add/remove. Shape (runs, T).
    """
    q = check_probability(sampling_rate, "sampling_rate", open_low=True)
    s = check_real(noise_multiplier, "noise_multiplier", low=0.0, low_inclusive=False)
    a = check_real(shift, "shift")
    o = np.asarray(observations, dtype=float)
    if o.ndim == 1:
        o = o[:, None]
    if o.ndim != 2:
        raise ValueError(f"observations must be 2-d (runs x steps), got shape {o.shape}")
    x = (a * o - 0.5 * a * a) / (s * s)
    return -(x if q == 1.0 else np.logaddexp(np.log1p(-q), np.log(q) + x))


def subsampled_gaussian_log_likelihood_ratio(observations: Any, *, sampling_rate: float, noise_multiplier: float,
                                             shift: float = 1.0) -> np.ndarray:
    """log p_d0(o) / p_d1(o) of T independent observations per row: the sum over the steps of
    :func:`subsampled_gaussian_step_log_likelihood_ratio`, the exact privacy loss of T steps of the
    Poisson-subsampled Gaussian mechanism along the canary direction."""
    return subsampled_gaussian_step_log_likelihood_ratio(observations, sampling_rate=sampling_rate,
                                                         noise_multiplier=noise_multiplier, shift=shift).sum(axis=1)


def last_iterate_log_likelihood_ratio(scores: Any, *, noise_multiplier: float, steps: int, learning_rate: float,
                                      normaliser: float, magnitude: float, initial_weight: float,
                                      shift: float) -> np.ndarray:
    """Exact log p_d0 / p_d1 of an input canary's score in the worst-case-initial-model design, per run.

    Black-box, last iterate (Annamalai & De Cristofaro, NeurIPS 2024, arXiv:2405.14106: DP-SGD's guarantee holds
    for any initial parameters, so the auditor picks them). The canary x = magnitude e_j (label 1) sits on a
    feature that is zero in every record of a logistic regression without intercept, and the initial weight w_0 of
    that feature is so negative that the canary's logit z = magnitude w stays far below zero: its clipped gradient
    is -shift e_j at every step (shift = min(magnitude, C) in units of C), and nothing else moves w. With full
    batches (q = 1) and T steps of lr / b times the noisy sum, w_T ~ N(w_0, (lr / b)^2 sigma^2 T) under d0 and the
    same shifted by T (lr / b) shift under d1: the last iterate keeps all the T updates say about the canary. The
    score (minus the canary's loss softplus(-z), which is z while z << 0) is z_T = magnitude w_T.
    """
    z = np.asarray(scores, float)
    if z.ndim != 1:
        raise ValueError(f"scores must be 1-d (one per run), got shape {z.shape}")
    step = learning_rate / normaliser
    m0 = magnitude * initial_weight
    m1 = m0 + magnitude * steps * step * shift
    v = (magnitude * step * noise_multiplier) ** 2 * steps
    return -(m1 - m0) * (z - 0.5 * (m0 + m1)) / v


def _split_dataset(dataset: Any, name: str = "dataset") -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    if not isinstance(dataset, (tuple, list)) or len(dataset) not in (2, 3):
        raise TypeError(f"{name} must be a pair (X, y) or a triple (X, y, gradient_canaries), got {type(dataset).__name__}")
    X = check_finite_array(dataset[0], f"{name}[0] (X)", ndim=2, min_size=0)
    y = check_finite_array(dataset[1], f"{name}[1] (y)", ndim=1, min_size=0)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"{name}: y must have one label per row of X ({X.shape[0]}), got {y.shape[0]}")
    G = None
    if len(dataset) == 3 and dataset[2] is not None:
        G = check_finite_array(dataset[2], f"{name}[2] (gradient_canaries)", ndim=2, min_size=0)
    return X, y, G


def pad_features(X: Any, k: int) -> np.ndarray:
    """``X`` with ``k`` zero columns appended: features no record uses, so that a parameter multiplying one of
    them has zero gradient for every record (the coordinate of a Dirac canary, or of an out-of-distribution
    input canary)."""
    X = check_finite_array(X, "X", ndim=2, min_size=0)
    k = check_int(k, "k", low=0)
    return np.hstack([X, np.zeros((X.shape[0], k))])


def _updates_of(model: Any, accessor: Callable[[Any], Any] | None) -> np.ndarray:
    if accessor is not None:
        u = accessor(model)
    elif hasattr(model, "updates_"):
        u = model.updates_
    else:
        raise TypeError(
            "a gradient canary observes every noisy update: the trained model must have an attribute updates_ "
            f"(T, p), or pass updates=callable(model) -> (T, p); got {type(model).__name__}"
        )
    u = np.asarray(u, dtype=float)
    if u.ndim != 2:
        raise ValueError(f"the noisy updates must be a (T, p) array, got shape {u.shape}")
    return u


# --------------------------------------------------------------------------- single canaries


@dataclass(frozen=True)
class GradientCanary:
    """A Dirac gradient canary ``norm * e_coordinate``; white-box, every noisy update observed (module docstring).

    ``scale`` turns an update coordinate into an observation in units of the noise multiplier (b / C for
    DP-SGD with normaliser b and clip norm C). ``updates(model) -> (T, p)`` reads the noisy updates of a
    trained model (default: ``model.updates_``).
    """

    coordinate: int
    norm: float = 1.0
    scale: float = 1.0
    updates: Callable[[Any], Any] | None = field(default=None, repr=False, compare=False)
    threat_model: ClassVar[ThreatModel] = ThreatModel.WHITE_BOX_ALL_ITERATES

    def __post_init__(self) -> None:
        object.__setattr__(self, "coordinate", check_int(self.coordinate, "coordinate", low=0))
        object.__setattr__(self, "norm", check_real(self.norm, "norm", low=0.0, low_inclusive=False))
        object.__setattr__(self, "scale", check_real(self.scale, "scale", low=0.0, low_inclusive=False))
        if self.updates is not None and not callable(self.updates):
            raise TypeError(f"updates must be callable(model) -> (T, p) or None, got {type(self.updates).__name__}")

    def describe(self) -> str:
        return f"Dirac gradient canary {self.norm:g} e_{self.coordinate} (add/remove)"

    def gradient(self, p: int) -> np.ndarray:
        """The canary's gradient in a model of ``p`` parameters."""
        p = check_int(p, "p", low=self.coordinate + 1)
        g = np.zeros(p)
        g[self.coordinate] = self.norm
        return g

    def _rows(self, dataset: Any, p: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        X, y, G = _split_dataset(dataset)
        if G is not None and G.shape[0] > 0:
            if p is not None and p != G.shape[1]:
                raise ValueError(f"p = {p} but the dataset's gradient canaries have {G.shape[1]} entries")
            p = G.shape[1]
        if p is None:
            raise ValueError("give p (the model's number of parameters) to add a gradient canary to (X, y)")
        p = check_int(p, "p", low=self.coordinate + 1)
        return X, y, (np.zeros((0, p)) if G is None or G.shape[0] == 0 else G)

    def exclude(self, dataset: Any, p: int | None = None) -> tuple:
        """d0: the dataset as a triple ``(X, y, G)`` (G with no rows when it had none; ``p`` parameters)."""
        return self._rows(dataset, p)

    def insert(self, dataset: Any, p: int | None = None) -> tuple:
        """d1: the dataset with the canary's gradient appended to its gradient canaries (``p`` parameters)."""
        X, y, G = self._rows(dataset, p)
        return (X, y, np.vstack([G, self.gradient(G.shape[1])[None, :]]))

    def observe_updates(self, updates: np.ndarray) -> np.ndarray:
        """The observations scale * u[..., coordinate] of updates whose last axis indexes parameters."""
        return self.scale * np.asarray(updates, dtype=float)[..., self.coordinate]

    def observe(self, model: Any) -> np.ndarray:
        """The T observations of one trained model."""
        return self.observe_updates(_updates_of(model, self.updates))

    def score(self, observations: np.ndarray) -> np.ndarray:
        """The sum of the per-step observations (higher = "canary included")."""
        o = np.asarray(observations, dtype=float)
        return o.reshape(o.shape[0], -1).sum(axis=1)

    def log_likelihood_ratio(self, *, sampling_rate: float, noise_multiplier: float, clip_norm: float = 1.0,
                             clipped: bool = True) -> Callable[[np.ndarray], np.ndarray]:
        """The exact log p_d0 / p_d1 of the observations of DP-SGD at (q, sigma, C) with this canary.

        Exact when the data's gradients vanish on the canary's coordinate and ``scale`` is b / C; the shift is
        min(norm, C) / C (``clipped=False``: norm / C, for an implementation that does not clip the canary).
        The row sums of :meth:`step_log_likelihood_ratio`.
        """
        per_step = self.step_log_likelihood_ratio(sampling_rate=sampling_rate, noise_multiplier=noise_multiplier,
                                                  clip_norm=clip_norm, clipped=clipped)

        def llr(observations):
            return per_step(observations).sum(axis=1)

        return llr

    def step_log_likelihood_ratio(self, *, sampling_rate: float, noise_multiplier: float, clip_norm: float = 1.0,
                                  clipped: bool = True) -> Callable[[np.ndarray], np.ndarray]:
        """The exact per-step log p_d0 / p_d1 of the observations (shape (runs, T)), for the composition
        estimator (``estimator=Composition(...)`` of :func:`audit_training`): the steps of DP-SGD along this
        canary are independent and identically distributed given the dataset (Poisson sampling, fresh noise)."""
        C = check_real(clip_norm, "clip_norm", low=0.0, low_inclusive=False)
        shift = (min(self.norm, C) if clipped else self.norm) / C
        q, s = sampling_rate, noise_multiplier

        def llr(observations):
            return subsampled_gaussian_step_log_likelihood_ratio(observations, sampling_rate=q, noise_multiplier=s,
                                                                 shift=shift)

        return llr


@dataclass(frozen=True)
class InputCanary:
    """An input-space canary record (x, y); black-box, only the final model observed (module docstring).

    ``loss(model, X, y) -> per-example losses`` (default: ``model.loss(X, y)``).
    """

    x: Any
    y: float
    loss: Callable[[Any, np.ndarray, np.ndarray], Any] | None = field(default=None, repr=False, compare=False)
    threat_model: ClassVar[ThreatModel] = ThreatModel.BLACK_BOX_LAST_ITERATE

    def __post_init__(self) -> None:
        object.__setattr__(self, "x", check_finite_array(self.x, "x", ndim=1))
        object.__setattr__(self, "y", check_real(self.y, "y"))
        if self.loss is not None and not callable(self.loss):
            raise TypeError(f"loss must be callable(model, X, y) -> losses or None, got {type(self.loss).__name__}")

    def describe(self) -> str:
        return f"input canary record (x with ||x|| = {np.linalg.norm(self.x):.3g}, y = {self.y:g}) (add/remove)"

    def exclude(self, dataset: Any) -> tuple:
        X, y, G = _split_dataset(dataset)
        return (X, y) if G is None else (X, y, G)

    def insert(self, dataset: Any) -> tuple:
        X, y, G = _split_dataset(dataset)
        if X.shape[1] != self.x.shape[0]:
            raise ValueError(f"the canary has {self.x.shape[0]} features and the dataset {X.shape[1]}")
        X1, y1 = np.vstack([X, self.x[None, :]]), np.append(y, self.y)
        return (X1, y1) if G is None else (X1, y1, G)

    def observe(self, model: Any) -> float:
        """The canary's loss under the trained model."""
        fn = self.loss if self.loss is not None else _model_loss
        return float(np.ravel(np.asarray(fn(model, self.x[None, :], np.array([self.y])), dtype=float))[0])

    def score(self, observations: np.ndarray) -> np.ndarray:
        """Minus the loss (higher = "canary included")."""
        return -np.asarray(observations, dtype=float).reshape(len(observations))


def _model_loss(model: Any, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    if not callable(getattr(model, "loss", None)):
        raise TypeError(
            "an input canary is scored by its loss: the trained model must have a method loss(X, y) -> per-example "
            f"losses, or pass loss=callable(model, X, y); got {type(model).__name__}"
        )
    return model.loss(X, y)


# --------------------------------------------------------------------------- many canaries (one run)


@dataclass(frozen=True)
class GradientCanaries:
    """m Dirac gradient canaries ``norm * e_j`` on distinct coordinates (one-run, white-box, all iterates).

    The score of canary i is the sum of its observations scale * u_t[j_i]; with ``sampling_rate`` and
    ``noise_multiplier`` given it is minus :func:`subsampled_gaussian_log_likelihood_ratio` (with the mean
    ``shift`` of a sampled canary's observation: min(norm, C) / C for DP-SGD with scale b / C) instead, the
    optimal per-canary statistic. Any score is valid for the one-run bound, which needs only that it be
    computed from the run's output.
    """

    coordinates: Any
    norm: float = 1.0
    scale: float = 1.0
    sampling_rate: float | None = None
    noise_multiplier: float | None = None
    shift: float = 1.0
    updates: Callable[[Any], Any] | None = field(default=None, repr=False, compare=False)
    threat_model: ClassVar[ThreatModel] = ThreatModel.WHITE_BOX_ALL_ITERATES

    def __post_init__(self) -> None:
        c = np.asarray(self.coordinates)
        if c.ndim != 1 or c.size < 2 or c.dtype.kind not in "iu" or np.any(c < 0):
            raise ValueError("coordinates must be a 1-d array of at least 2 non-negative integers")
        if np.unique(c).size != c.size:
            raise ValueError("coordinates must be distinct (one parameter coordinate per canary)")
        object.__setattr__(self, "coordinates", c.astype(np.int64))
        object.__setattr__(self, "norm", check_real(self.norm, "norm", low=0.0, low_inclusive=False))
        object.__setattr__(self, "scale", check_real(self.scale, "scale", low=0.0, low_inclusive=False))
        if (self.sampling_rate is None) != (self.noise_multiplier is None):
            raise ValueError("give both sampling_rate and noise_multiplier (likelihood-ratio scores) or neither")
        if self.sampling_rate is not None:
            object.__setattr__(self, "sampling_rate", check_probability(self.sampling_rate, "sampling_rate",
                                                                        open_low=True))
            object.__setattr__(self, "noise_multiplier", check_real(self.noise_multiplier, "noise_multiplier",
                                                                    low=0.0, low_inclusive=False))
        object.__setattr__(self, "shift", check_real(self.shift, "shift"))

    @property
    def m(self) -> int:
        return int(self.coordinates.size)

    def build(self, dataset: Any, included: np.ndarray, p: int) -> tuple:
        """The dataset of the run: ``(X, y, G)`` with one gradient row per included canary."""
        X, y, G0 = _split_dataset(dataset)
        rows = np.zeros((int(np.count_nonzero(included)), p))
        rows[np.arange(rows.shape[0]), self.coordinates[included]] = self.norm
        G = rows if G0 is None or G0.shape[0] == 0 else np.vstack([G0, rows])
        return (X, y, G)

    def scores_from_observations(self, observations: np.ndarray) -> np.ndarray:
        """Scores from the (T, m) observations scale * u_t[j_i]."""
        o = np.asarray(observations, dtype=float)
        if self.sampling_rate is None:
            return o.sum(axis=0)
        return -subsampled_gaussian_log_likelihood_ratio(o.T, sampling_rate=self.sampling_rate,
                                                         noise_multiplier=self.noise_multiplier,
                                                         shift=self.shift)

    def scores(self, model: Any) -> np.ndarray:
        u = _updates_of(model, self.updates)
        return self.scores_from_observations(self.scale * u[:, self.coordinates])


@dataclass(frozen=True)
class InputCanaries:
    """m input-space canary records (one-run, black-box, last iterate); score = minus each canary's loss."""

    X: Any
    y: Any
    loss: Callable[[Any, np.ndarray, np.ndarray], Any] | None = field(default=None, repr=False, compare=False)
    threat_model: ClassVar[ThreatModel] = ThreatModel.BLACK_BOX_LAST_ITERATE

    def __post_init__(self) -> None:
        X = check_finite_array(self.X, "X", ndim=2)
        y = check_finite_array(self.y, "y", ndim=1)
        if X.shape[0] < 2 or y.shape[0] != X.shape[0]:
            raise ValueError(f"X and y must hold at least 2 canaries, one label each; got {X.shape} and {y.shape}")
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)

    @property
    def m(self) -> int:
        return int(self.X.shape[0])

    def build(self, dataset: Any, included: np.ndarray, p: int | None = None) -> tuple:
        X, y, G = _split_dataset(dataset)
        if X.shape[1] != self.X.shape[1]:
            raise ValueError(f"the canaries have {self.X.shape[1]} features and the dataset {X.shape[1]}")
        X1, y1 = np.vstack([X, self.X[included]]), np.append(y, self.y[included])
        return (X1, y1) if G is None else (X1, y1, G)

    def scores_from_losses(self, losses: np.ndarray) -> np.ndarray:
        return -np.asarray(losses, dtype=float)

    def scores(self, model: Any) -> np.ndarray:
        fn = self.loss if self.loss is not None else _model_loss
        return self.scores_from_losses(np.ravel(np.asarray(fn(model, self.X, self.y), dtype=float)))


# --------------------------------------------------------------------------- the adapter


@dataclass(frozen=True)
class TrainingRelease:
    """A mechanism for the auditor: train on the data, then return what the canary design observes."""

    train: Callable[[Any, np.random.Generator], Any] = field(repr=False)
    canary: GradientCanary | InputCanary

    def __call__(self, data: Any, rng: np.random.Generator) -> Any:
        return self.canary.observe(self.train(data, rng))


def _check_train(train: Any) -> None:
    if not callable(train):
        raise TypeError(f"train must be callable(dataset, rng) -> model, got {type(train).__name__}")


def _check_canary(canary: Any, kinds: tuple, name: str) -> None:
    if not isinstance(canary, kinds):
        allowed = " or ".join(k.__name__ for k in kinds)
        raise TypeError(f"{name} must be a privbound.audit.canaries {allowed}, got {type(canary).__name__}")


def audit_training(
    train: Callable[[Any, np.random.Generator], Any],
    dataset: Any,
    canary: GradientCanary | InputCanary,
    *,
    epsilon: float,
    delta: float = 0.0,
    trials: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    n_jobs: int | None = 1,
    p: int | None = None,
    estimator: Estimator | str = "auto",
    name: str | None = None,
) -> AuditResult:
    """Audit a training function ``train(dataset, rng) -> model`` against its claimed (epsilon, delta).

    d0 = ``dataset`` and d1 = ``dataset`` with ``canary`` (add/remove). Every trial trains once on each
    (seeded chunks of the trial engine, ``n_jobs`` workers) and keeps what the canary's threat model lets
    the adversary see: the canary's loss under the final model (:class:`InputCanary`) or the T observations
    of the canary coordinate (:class:`GradientCanary`; ``p`` = the model's number of parameters when the
    dataset has no gradient canaries yet). The score is the canary's own (minus the loss; the sum of the
    observations), judged by the black-box estimator (``estimator="auto"``). A gradient canary's exact
    density switches estimator: ``WhiteBox(canary.log_likelihood_ratio(...))`` (DP-SGD's parameters
    known) for the white-box estimator, ``Composition(canary.step_log_likelihood_ratio(...))`` for the
    composition estimator of :mod:`privbound.audit.estimators.composition`, which also needs the steps to
    be independent and identically distributed; each is valid only if that density is exact for ``train``.
    ``result.details["threat_model"]`` states the threat model.
    """
    _check_train(train)
    _check_canary(canary, (GradientCanary, InputCanary), "canary")
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    white_box = isinstance(estimator, (WhiteBox, Composition))
    if isinstance(canary, GradientCanary):
        d0, d1 = canary.exclude(dataset, p), canary.insert(dataset, p)
    else:
        if white_box:
            raise ValueError(f"the {estimator.name} estimator is for gradient canaries (an exact density of the "
                             "observations); an input canary is audited black-box")
        d0, d1 = canary.exclude(dataset), canary.insert(dataset)
    result = audit_mechanism(
        TrainingRelease(train, canary), d0, d1, epsilon=epsilon, delta=delta, trials=trials, confidence=confidence,
        seed=seed, n_jobs=n_jobs, estimator=resolve_estimator(estimator, score=canary.score), name=name,
    )
    return replace(result, details={**result.details, "threat_model": canary.threat_model.value,
                                    "threat_model_description": canary.threat_model.description,
                                    "canary": canary.describe()})


def one_run_training_audit(
    train: Callable[[Any, np.random.Generator], Any],
    dataset: Any,
    canaries: GradientCanaries | InputCanaries,
    *,
    epsilon: float | None = None,
    delta: float = 0.0,
    seed: int = 0,
    confidence: float = 0.95,
    p: int | None = None,
    grid: Sequence[tuple[int, int]] | None = None,
) -> OneRunResult:
    """One-run audit of ``train(dataset, rng) -> model`` with m canaries (Steinke, Nasr & Jagielski 2023).

    Canary i is included with probability 1/2 (bits from ``SeedSequence([seed, 1])``); ONE training run on
    the dataset with the included canaries (the first chunk seed of ``seed``, as every trial of the engine)
    gives one score per canary, and the SNJ bound is computed at ``delta`` against ``epsilon`` (the claim).
    ``p`` is the model's number of parameters (gradient canaries). ``details["threat_model"]`` states it.
    """
    _check_train(train)
    _check_canary(canaries, (GradientCanaries, InputCanaries), "canaries")
    delta = check_delta(delta)
    confidence = check_confidence(confidence)
    check_int(seed, "seed", low=0)
    if epsilon is not None:
        epsilon = check_epsilon(epsilon)
    if isinstance(canaries, GradientCanaries):
        if p is None:
            raise ValueError("give p (the model's number of parameters) for gradient canaries")
        p = check_int(p, "p", low=int(canaries.coordinates.max()) + 1)
    included = np.random.default_rng(np.random.SeedSequence([seed, 1])).random(canaries.m) < 0.5
    data = canaries.build(dataset, included, p)
    model = map_chunks(lambda size, ss: train(data, np.random.default_rng(ss)), 1, seed=seed)[0]
    scores = np.asarray(canaries.scores(model), dtype=float)
    res = one_run_audit(scores, included, delta=delta, confidence=confidence, grid=grid, epsilon_claimed=epsilon)
    res.details.update(threat_model=canaries.threat_model.value, design=type(canaries).__name__, seed=seed)
    return res
