"""Differential-privacy primitives.

Each mechanism is a frozen dataclass holding its parameters (validated in
``__post_init__``) with one release ``__call__(data, rng)``, a vectorised batch
``sample(data, rng, size)`` (``size`` independent releases stacked on axis 0,
distributionally identical to ``size`` calls of ``__call__``), its own privacy
accounting ``guarantee`` and a ``dp_accounting`` description ``dp_event()``.

Sources
-------
* Laplace mechanism: Dwork & Roth 2014, Def. 3.3 / Thm 3.6.
* Gaussian mechanism: classic calibration Dwork & Roth 2014, Thm A.1
  (epsilon < 1); analytic calibration and exact privacy curve Balle & Wang 2018,
  "Improving the Gaussian mechanism", Thm 8 (via ``dp_accounting``).
* k-ary randomized response: Warner 1965; Kairouz, Oh & Viswanath 2014.
* Geometric (discrete Laplace) mechanism: Ghosh, Roughgarden & Sundararajan 2009.
* Exponential mechanism: McSherry & Talwar 2007; Dwork & Roth 2014, Thm 3.10/3.11;
  Winnow paper (``dp-decision-lists-winnow``) Lemma 3 -- with its sign ERRATUM.
* Report noisy max: Dwork & Roth 2014, Claim 3.9 (Laplace); Gumbel noise is the
  exponential mechanism exactly (Gumbel-max trick).
* Sparse vector: Dwork & Roth 2014, Alg. 1 "AboveThreshold", Thm 3.23/3.24;
  Winnow paper Sec. 3.7 interface and Lemma 10 (accuracy alpha [RECON]);
  Lyu, Su & Li 2017, "Understanding the sparse vector technique", Alg. 1.
* Poisson subsampling: Balle, Barthe & Gaboardi 2018, "Privacy amplification by
  subsampling", Thm 8 (add/remove neighbours).
"""

from __future__ import annotations

import functools
import math
import numbers
from fractions import Fraction
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from scipy import special

from privbound.learners.neighbouring import NeighbouringRelation
from privbound._validation import (
    check_delta,
    check_epsilon,
    check_finite_array,
    check_int,
    check_probability,
    check_real,
    check_rng,
)

if TYPE_CHECKING:  # annotations only: dp_accounting is imported when an accountant is asked for
    import dp_accounting

__all__ = [
    "PrivacyGuarantee",
    "LaplaceMechanism",
    "GaussianMechanism",
    "gaussian_delta",
    "RandomizedResponse",
    "GeometricMechanism",
    "uniform_double",
    "bernoulli_exp",
    "discrete_laplace",
    "discrete_gaussian",
    "discrete_gaussian_delta",
    "SnappingLaplaceMechanism",
    "DiscreteLaplaceMechanism",
    "DiscreteGaussianMechanism",
    "ExponentialMechanism",
    "exponential_mechanism_log_probabilities",
    "exponential_mechanism_utility_bound",
    "ReportNoisyMax",
    "AboveThreshold",
    "InitializeAboveThr",
    "above_threshold_alpha",
    "above_threshold_firing_logprobs",
    "above_threshold_first_firing",
    "SparseVector",
    "poisson_subsample",
    "PoissonSubsampled",
]


# --------------------------------------------------------------------------- guarantee


@dataclass(frozen=True)
class PrivacyGuarantee:
    """An (epsilon, delta)-DP claim from a mechanism's own accounting.

    Attributes
    ----------
    epsilon, delta : float
        The claimed budget.
    neighbouring : NeighbouringRelation
        The neighbouring relation the claim is about.
    source : str
        The theorem the claim rests on.
    event : dp_accounting.DpEvent, a callable returning one, or None
        The mechanism described for an RDP/PLD accountant (returned by :meth:`dp_event`;
        not compared), so an accountant can give a second claim. A callable is called
        on demand, so that stating a guarantee does not import dp_accounting.
    condition : str
        What the relation presumes of the input, e.g. ``"L1-sensitivity <= 1"``.
    """

    epsilon: float
    delta: float
    neighbouring: NeighbouringRelation
    source: str
    event: Any = field(default=None, repr=False, compare=False)
    condition: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_real(self.epsilon, "epsilon", low=0.0))
        object.__setattr__(self, "delta", check_delta(self.delta, "delta"))
        if not isinstance(self.neighbouring, NeighbouringRelation):
            raise TypeError(
                f"neighbouring must be a NeighbouringRelation ({', '.join(r.name for r in NeighbouringRelation)}), "
                f"got {self.neighbouring!r}"
            )
        if not isinstance(self.source, str) or not isinstance(self.condition, str):
            raise TypeError("source and condition must be strings")

    def dp_event(self) -> Any:
        """The ``dp_accounting.DpEvent`` describing the mechanism (``None`` if not given)."""
        return self.event() if callable(self.event) else self.event


# --------------------------------------------------------------------------- helpers

# Primitives are stated for inputs whose query answers (or scores) move within the sensitivity.
_QUERY = NeighbouringRelation.BOUNDED_QUERY_CHANGE



def _check_size(size: Any) -> int:
    return check_int(size, "size", low=1)


def _check_query(query: Any, name: str = "query") -> None:
    if query is not None and not callable(query):
        raise TypeError(f"{name} must be callable(data) or None (identity), got {type(query).__name__}")


def _apply(fn: Callable | None, data: Any) -> Any:
    return data if fn is None else fn(data)


def _scalar_or_array(out: np.ndarray) -> Any:
    """A 0-d result as a Python scalar, otherwise the array unchanged."""
    if out.ndim == 0:
        return out.item()
    return out


class _QueryMechanism:
    """Shared ``__call__``/``sample`` plumbing.

    Subclasses implement ``_value(data)`` (the validated query answer, an array)
    and ``_release_batch(values, rng)`` (one independent release per row of
    ``values``, whose axis 0 indexes releases). ``__call__`` is a batch of one and
    ``sample`` broadcasts the answer ``size`` times, so the two paths run the same
    code and are distributionally identical by construction (and tested).
    :class:`PoissonSubsampled` uses ``_release_batch`` with a different answer
    per row.
    """

    def _value(self, data: Any) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _release_batch(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError


    def answer(self, data: Any) -> Any:
        """The exact answer the noise is added to (the query on ``data``, validated)."""
        return _scalar_or_array(self._value(data))

    def __call__(self, data: Any, rng: np.random.Generator) -> Any:
        rng = check_rng(rng)
        value = self._value(data)
        return _scalar_or_array(self._release_batch(value[None, ...], rng)[0])

    def sample(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        rng = check_rng(rng)
        size = _check_size(size)
        value = self._value(data)
        return self._release_batch(np.broadcast_to(value, (size,) + value.shape), rng)

    def dp_event(self) -> dp_accounting.DpEvent:
        import dp_accounting

        return dp_accounting.UnsupportedDpEvent()


def _real_answer(value: Any, name: str = "query(data)") -> np.ndarray:
    return check_finite_array(value, name)


def _integer_answer(value: Any, name: str = "query(data)") -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind not in "iub":
        f = check_finite_array(arr, name)
        if not np.all(f == np.round(f)):
            raise ValueError(f"{name} must be integer-valued, got {value!r}")
        arr = f
    if arr.size < 1:
        raise ValueError(f"{name} must have at least 1 element")
    return arr.astype(np.int64)


# --------------------------------------------------------------------------- Laplace


@dataclass(frozen=True)
class LaplaceMechanism(_QueryMechanism):
    """Laplace mechanism (Dwork & Roth 2014, Def. 3.3, Thm 3.6).

    Adds i.i.d. Laplace(``scale`` = sensitivity/epsilon) noise to every
    coordinate of ``query(data)``; epsilon-DP when the L1 sensitivity of the
    query is at most ``sensitivity``.
    """

    epsilon: float
    sensitivity: float = 1.0
    query: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sensitivity", check_real(self.sensitivity, "sensitivity", low=0.0, low_inclusive=False))
        _check_query(self.query)

    @property
    def scale(self) -> float:
        return self.sensitivity / self.epsilon

    def _value(self, data):
        return _real_answer(_apply(self.query, data))

    def _release_batch(self, values, rng):
        return values + rng.laplace(0.0, self.scale, size=values.shape)

    @property
    def guarantee(self) -> PrivacyGuarantee:
        return PrivacyGuarantee(
            self.epsilon, 0.0, _QUERY, "Dwork & Roth 2014, Thm 3.6", self.dp_event,
            condition=f"L1-sensitivity of the query <= {self.sensitivity:g}",
        )

    def dp_event(self) -> dp_accounting.DpEvent:
        import dp_accounting

        return dp_accounting.LaplaceDpEvent(noise_multiplier=self.scale / self.sensitivity)


# --------------------------------------------------------------------------- Gaussian


def gaussian_delta(sigma: Any, epsilon: Any, sensitivity: float = 1.0) -> Any:
    """Exact privacy curve of the Gaussian mechanism (Balle & Wang 2018, Thm 8).

    delta(eps) = Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D), with
    D = L2 sensitivity and s = sigma. Computed as exp(a) * (-expm1(b - a)) with
    a, b the logs of the two terms (``scipy.special.log_ndtr``), so tiny deltas
    keep their relative accuracy. ``epsilon`` may be an array (>= 0).
    """
    s = check_real(sigma, "sigma", low=0.0, low_inclusive=False)
    d = check_real(sensitivity, "sensitivity", low=0.0, low_inclusive=False)
    eps = np.asarray(epsilon, dtype=float)
    if not np.all(np.isfinite(eps)) or np.any(eps < 0):
        raise ValueError(f"epsilon must be finite and in [0, inf), got {epsilon!r}")
    a = special.log_ndtr(d / (2 * s) - eps * s / d)
    b = eps + special.log_ndtr(-d / (2 * s) - eps * s / d)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.where(b < a, np.exp(a) * -np.expm1(np.minimum(b - a, 0.0)), 0.0)
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class GaussianMechanism(_QueryMechanism):
    """Gaussian mechanism for L2 sensitivity ``sensitivity``.

    ``calibration="classic"``: sigma = D sqrt(2 ln(1.25/delta))/epsilon, valid
    for epsilon in (0, 1) only (Dwork & Roth 2014, Thm A.1).
    ``calibration="analytic"``: the smallest sigma whose exact privacy curve
    (:func:`gaussian_delta`) meets delta at epsilon, sigma = D *
    ``dp_accounting.get_sigma_gaussian(epsilon, delta)`` (Balle & Wang 2018);
    valid for every epsilon > 0.

    delta must lie in (0, 1): no finite sigma gives delta = 0.
    """

    epsilon: float
    delta: float
    sensitivity: float = 1.0
    calibration: str = "analytic"
    query: Callable[[Any], Any] | None = None
    _sigma: float = field(init=False, repr=False, compare=False, default=0.0)

    def __post_init__(self) -> None:
        eps = check_epsilon(self.epsilon)
        delta = check_real(self.delta, "delta", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        sens = check_real(self.sensitivity, "sensitivity", low=0.0, low_inclusive=False)
        if self.calibration not in ("analytic", "classic"):
            raise ValueError(f"calibration must be 'analytic' or 'classic', got {self.calibration!r}")
        _check_query(self.query)
        if self.calibration == "classic" and not eps < 1.0:
            raise ValueError(
                f"epsilon must be in (0, 1) for calibration='classic' (Dwork & Roth Thm A.1), "
                f"got {eps!r}; use calibration='analytic'"
            )
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "delta", delta)
        object.__setattr__(self, "sensitivity", sens)

    @property
    def sigma(self) -> float:
        """The noise standard deviation, calibrated on first use."""
        if self._sigma == 0.0:
            if self.calibration == "classic":
                sigma = self.sensitivity * math.sqrt(2.0 * math.log(1.25 / self.delta)) / self.epsilon
            else:
                import dp_accounting

                sigma = self.sensitivity * float(dp_accounting.get_sigma_gaussian(self.epsilon, self.delta))
            object.__setattr__(self, "_sigma", sigma)
        return self._sigma

    def _value(self, data):
        return _real_answer(_apply(self.query, data))

    def _release_batch(self, values, rng):
        return values + rng.normal(0.0, self.sigma, size=values.shape)

    @property
    def guarantee(self) -> PrivacyGuarantee:
        src = "Dwork & Roth 2014, Thm A.1" if self.calibration == "classic" else "Balle & Wang 2018, Thm 8"
        return PrivacyGuarantee(
            self.epsilon, self.delta, _QUERY, src, self.dp_event,
            condition=f"L2-sensitivity of the query <= {self.sensitivity:g}",
        )

    def dp_event(self) -> dp_accounting.DpEvent:
        import dp_accounting

        return dp_accounting.GaussianDpEvent(noise_multiplier=self.sigma / self.sensitivity)


# --------------------------------------------------------------------------- randomized response


@dataclass(frozen=True)
class RandomizedResponse(_QueryMechanism):
    """k-ary randomized response (Warner 1965; Kairouz, Oh & Viswanath 2014).

    ``query(data)`` must be an integer in {0, ..., k-1}. Keeps it with
    probability e^eps/(e^eps + k - 1), otherwise outputs one of the other k-1
    values uniformly: every output has probability ratio <= e^eps between any
    two inputs (epsilon-DP, local). In ``dp_accounting``'s parameterisation
    (uniform over all k values with probability p) p = k/(e^eps + k - 1).
    """

    epsilon: float
    k: int = 2
    query: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "k", check_int(self.k, "k", low=2))
        _check_query(self.query)

    @property
    def output_space(self) -> tuple[int, ...]:
        """The values a release can take, {0, ..., k-1} (declared, so an audit can use every event)."""
        return tuple(range(self.k))

    @property
    def keep_probability(self) -> float:
        # e^eps/(e^eps+k-1) = 1/(1 + (k-1) e^-eps), stable for large epsilon.
        return 1.0 / (1.0 + (self.k - 1) * math.exp(-self.epsilon))

    def probabilities(self, value: int) -> np.ndarray:
        """Exact output distribution (length k) for input ``value``."""
        v = self._check_bucket(value)
        p = np.full(self.k, (1.0 - self.keep_probability) / (self.k - 1))
        p[int(v)] = self.keep_probability
        return p

    def _value(self, data):
        return self._check_bucket(_apply(self.query, data))

    def _check_bucket(self, raw):
        if isinstance(raw, (bool, np.bool_)) or not isinstance(raw, (numbers.Integral, np.integer)):
            arr = np.asarray(raw)
            if arr.ndim != 0 or arr.dtype.kind not in "iu":
                raise TypeError(f"query(data) must return an integer in [0, {self.k - 1}], got {raw!r}")
            raw = arr.item()
        v = int(raw)
        if not 0 <= v < self.k:
            raise ValueError(f"query(data) must be an integer in [0, {self.k - 1}], got {v}")
        return np.asarray(v, dtype=np.int64)

    def _release_batch(self, values, rng):
        values = np.asarray(values, dtype=np.int64)
        keep = rng.random(values.shape) < self.keep_probability
        other = rng.integers(0, self.k - 1, size=values.shape)
        other = other + (other >= values)  # uniform over {0..k-1} \ {value}
        return np.where(keep, values, other)

    @property
    def guarantee(self) -> PrivacyGuarantee:
        return PrivacyGuarantee(
            self.epsilon, 0.0, NeighbouringRelation.ANY_TWO_INPUTS, "Kairouz, Oh & Viswanath 2014 (k-RR)",
            self.dp_event, condition=f"inputs in {{0..{self.k - 1}}} (local DP)",
        )

    def dp_event(self) -> dp_accounting.DpEvent:
        import dp_accounting

        p = self.k / (math.exp(self.epsilon) + self.k - 1)
        return dp_accounting.RandomizedResponseDpEvent(noise_parameter=p, num_buckets=self.k)


# --------------------------------------------------------------------------- geometric


@dataclass(frozen=True)
class _IntegerQueryMechanism(_QueryMechanism):
    """An epsilon-DP mechanism for an integer query of integer L1 sensitivity ``sensitivity``."""

    epsilon: float
    sensitivity: int = 1
    query: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sensitivity", check_int(self.sensitivity, "sensitivity", low=1))
        _check_query(self.query)

    def _value(self, data):
        return _integer_answer(_apply(self.query, data))


@dataclass(frozen=True)
class GeometricMechanism(_IntegerQueryMechanism):
    """Two-sided geometric (discrete Laplace) mechanism (Ghosh et al. 2009).

    Adds integer noise Z with P(Z = z) = (1-a)/(1+a) a^|z|, a = exp(-eps/D), to
    every coordinate of an integer query with integer L1 sensitivity D; sampled
    exactly as the difference of two i.i.d. geometric variables with success
    probability 1 - a (``rng.geometric``). epsilon-DP.
    """

    @property
    def alpha(self) -> float:
        """The ratio a = exp(-epsilon/sensitivity) of successive probabilities."""
        return math.exp(-self.epsilon / self.sensitivity)

    def _release_batch(self, values, rng):
        p = -math.expm1(-self.epsilon / self.sensitivity)  # 1 - a, accurate for small eps
        g1 = rng.geometric(p, size=values.shape)
        g2 = rng.geometric(p, size=values.shape)
        return values + (g1 - g2)

    @property
    def guarantee(self) -> PrivacyGuarantee:
        return PrivacyGuarantee(
            self.epsilon, 0.0, _QUERY, "Ghosh, Roughgarden & Sundararajan 2009", self.dp_event,
            condition=f"integer query of L1-sensitivity <= {self.sensitivity}",
        )

    def dp_event(self) -> dp_accounting.DpEvent:
        import dp_accounting

        return dp_accounting.dp_event.DiscreteLaplaceDpEvent(
            noise_parameter=self.epsilon / self.sensitivity, sensitivity=self.sensitivity
        )


# --------------------------------------------------------------------------- float-safe noise


def uniform_double(rng: np.random.Generator, size: int) -> np.ndarray:
    """Uniform draws from the doubles in (0, 1), each with its exact probability (its spacing).

    Exponent ``-e`` with ``e ~ Geometric(1/2)`` (binade ``[2^-e, 2^-e+1)`` has mass ``2^-e``) and
    52 uniform mantissa bits: every double in (0, 1) above 2^-1074 is reachable, which is what
    the snapping mechanism's proof assumes of ``U*`` (Mironov, CCS 2012, Sec. 5.2).
    """
    rng = check_rng(rng)
    e = rng.geometric(0.5, size)
    mantissa = rng.integers(0, 2**52, size, dtype=np.int64)
    return np.ldexp(1.0 + mantissa * 2.0**-52, -e)


def bernoulli_exp(numerators: np.ndarray, denominator: int, rng: np.random.Generator) -> np.ndarray:
    """Exact Bernoulli(exp(-n/d)) draws for integer arrays ``n >= 0`` and one integer ``d >= 1``.

    Canonne, Kamath & Steinke, "The discrete Gaussian for differential privacy", NeurIPS 2020
    (arXiv:2004.00010), Algorithm 1: only uniform integers and comparisons, no floating point.
    exp(-1) is drawn ``floor(n/d)`` times, then exp(-frac) by the alternating series.
    """
    n = np.asarray(numerators, dtype=np.int64)
    d = int(denominator)
    out = np.ones(n.shape, dtype=bool)
    whole, frac = np.divmod(n, d)
    # floor(gamma) factors of exp(-1), each by the gamma <= 1 routine with gamma = 1
    todo = whole.copy()
    while True:
        live = (todo > 0) & out
        if not live.any():
            break
        idx = np.flatnonzero(live)
        out[idx] &= _bernoulli_exp_at_most_one(np.full(idx.size, d, dtype=np.int64), d, rng)
        todo[idx] -= 1
    idx = np.flatnonzero(out)
    out[idx] = _bernoulli_exp_at_most_one(frac[idx], d, rng)
    return out


def _bernoulli_exp_at_most_one(n: np.ndarray, d: int, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-n/d)) for 0 <= n <= d: K = 1; while Bernoulli(gamma/K): K += 1; return K odd."""
    k = np.ones(n.shape, dtype=np.int64)
    live = np.ones(n.shape, dtype=bool)
    while live.any():
        idx = np.flatnonzero(live)
        accept = rng.integers(0, d * k[idx]) < n[idx]  # Bernoulli(n / (d K)) exactly
        k[idx[accept]] += 1
        live[idx[~accept]] = False
    return k % 2 == 1


def discrete_laplace(scale: Fraction, rng: np.random.Generator, size: int) -> np.ndarray:
    """Exact draws from the discrete Laplace distribution P(z) ∝ exp(-|z| / scale) on the integers.

    Canonne, Kamath & Steinke 2020, Algorithm 2, with ``scale = t/s`` a positive rational.
    """
    scale = Fraction(scale)
    if scale <= 0:
        raise ValueError(f"scale must be a positive rational, got {scale}")
    t, s = scale.numerator, scale.denominator
    out = np.zeros(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        m = todo.size
        u = rng.integers(0, t, m)
        ok = bernoulli_exp(u, t, rng)
        v = np.zeros(m, dtype=np.int64)
        live = ok.copy()
        while live.any():
            idx = np.flatnonzero(live)
            a = bernoulli_exp(np.ones(idx.size, dtype=np.int64), 1, rng)
            v[idx[a]] += 1
            live[idx[~a]] = False
        y = (u + t * v) // s
        b = rng.integers(0, 2, m)
        ok &= ~((b == 1) & (y == 0))
        out[todo[ok]] = (1 - 2 * b[ok]) * y[ok]
        todo = todo[~ok]
    return out


def discrete_gaussian(sigma2: Fraction, rng: np.random.Generator, size: int) -> np.ndarray:
    """Exact draws from the discrete Gaussian P(z) ∝ exp(-z^2 / (2 sigma^2)) on the integers.

    Canonne, Kamath & Steinke 2020, Algorithm 3, with ``sigma2`` = sigma^2 a positive rational:
    discrete Laplace proposals of scale t = floor(sigma) + 1, accepted with probability
    exp(-(|y| - sigma^2/t)^2 / (2 sigma^2)) by exact Bernoulli draws.
    """
    sigma2 = Fraction(sigma2)
    if sigma2 <= 0:
        raise ValueError(f"sigma2 must be a positive rational, got {sigma2}")
    a, b = sigma2.numerator, sigma2.denominator
    t = math.isqrt(a // b) + 1
    out = np.zeros(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        y = discrete_laplace(Fraction(t), rng, todo.size)
        num = (np.abs(y) * (b * t) - a) ** 2  # gamma = (|y| b t - a)^2 / (2 a b t^2)
        ok = bernoulli_exp(num, 2 * a * b * t * t, rng)
        out[todo[ok]] = y[ok]
        todo = todo[~ok]
    return out


def discrete_gaussian_delta(sigma2: float, epsilon: float, sensitivity: int = 1) -> float:
    """Exact privacy curve of the discrete Gaussian mechanism (Canonne, Kamath & Steinke 2020, Thm 7).

    delta(eps) = P[Y > eps s2/D - D/2] - e^eps P[Y > eps s2/D + D/2] with Y ~ N_Z(0, s2) and
    integer sensitivity D, summed over the lattice (mass beyond 60 sigma is below 1e-780).
    """
    s2 = check_real(sigma2, "sigma2", low=0.0, low_inclusive=False)
    eps = check_real(epsilon, "epsilon", low=0.0)
    d = check_int(sensitivity, "sensitivity", low=1)
    half = int(math.ceil(60 * math.sqrt(s2))) + d + 1
    z = np.arange(-half, half + 1)
    log_w = -(z.astype(float) ** 2) / (2 * s2)
    w = np.exp(log_w - log_w.max())
    w /= w.sum()
    lo, hi = eps * s2 / d - d / 2, eps * s2 / d + d / 2
    return float(max(0.0, w[z > lo].sum() - math.exp(eps) * w[z > hi].sum()))


@dataclass(frozen=True)
class SnappingLaplaceMechanism(_QueryMechanism):
    """Laplace noise that stays epsilon-DP in floating point: Mironov's snapping mechanism.

    Mironov, "On significance of the least significant bits for differential privacy", CCS 2012,
    Sec. 5.2: ``clamp_B(round_Lambda(clamp_B(f(D)) + S lambda ln(U*)))`` with ``lambda = 1/epsilon``,
    ``Lambda`` the smallest power of two >= lambda, ``S`` a random sign and ``U*`` a uniform double
    (:func:`uniform_double`). For a query of sensitivity 1 and ``lambda < bound < 2^46 lambda``
    it is ``(1/lambda + 2^-49 bound/lambda)``-DP: :attr:`guarantee` states that (slightly above
    ``epsilon``). The output set is the lattice ``Lambda Z`` in ``[-bound, bound]`` whatever the
    data, which is what the textbook ``x + rng.laplace(1/epsilon)`` lacks.
    """

    epsilon: float
    bound: float
    query: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        eps = check_epsilon(self.epsilon)
        lam = 1.0 / eps
        bound = check_real(self.bound, "bound", low=lam, high=2.0**46 * lam, low_inclusive=False,
                           high_inclusive=False)
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "bound", bound)
        _check_query(self.query)

    @property
    def lattice(self) -> float:
        """Lambda: the smallest power of two >= 1/epsilon."""
        return 2.0 ** math.ceil(math.log2(1.0 / self.epsilon))

    def _value(self, data):
        return _real_answer(_apply(self.query, data))

    def _release_batch(self, values, rng):
        lam, B, grid = 1.0 / self.epsilon, self.bound, self.lattice
        sign = rng.integers(0, 2, values.shape) * 2.0 - 1.0
        u = uniform_double(rng, values.size).reshape(values.shape)
        noisy = np.clip(values, -B, B) + sign * lam * np.log(u)
        return np.clip(np.round(noisy / grid) * grid, -B, B)  # dividing and multiplying by 2^k is exact

    @property
    def guarantee(self) -> PrivacyGuarantee:
        lam = 1.0 / self.epsilon
        return PrivacyGuarantee(
            1.0 / lam + 2.0**-49 * self.bound / lam, 0.0, _QUERY, "Mironov, CCS 2012, Sec. 5.2 (snapping mechanism)",
            self.dp_event, condition="L1-sensitivity of the query <= 1, |f(D)| clamped to the bound",
        )

    def dp_event(self) -> dp_accounting.DpEvent:
        import dp_accounting

        return dp_accounting.LaplaceDpEvent(noise_multiplier=1.0 / self.guarantee.epsilon)


@dataclass(frozen=True)
class DiscreteLaplaceMechanism(_IntegerQueryMechanism):
    """Integer noise of the discrete Laplace distribution with scale ``sensitivity/epsilon``, sampled exactly.

    P(z) ∝ exp(-epsilon |z| / sensitivity) on the integers (the geometric mechanism's noise),
    drawn with Canonne, Kamath & Steinke's exact sampler (:func:`discrete_laplace`): no floating
    point touches the output. ``epsilon`` is read as the rational it is written as
    (``Fraction(str(epsilon))``), so ``epsilon=0.1`` is exactly 1/10. epsilon-DP for an integer
    query of sensitivity ``sensitivity``.
    """

    @property
    def scale(self) -> Fraction:
        return Fraction(self.sensitivity) / Fraction(str(self.epsilon))

    def _release_batch(self, values, rng):
        return values + discrete_laplace(self.scale, rng, values.size).reshape(values.shape)

    @property
    def guarantee(self) -> PrivacyGuarantee:
        return PrivacyGuarantee(
            float(self.sensitivity / self.scale), 0.0, _QUERY, "Canonne, Kamath & Steinke, NeurIPS 2020 (exact sampling)",
            self.dp_event, condition=f"integer query of L1-sensitivity <= {self.sensitivity}",
        )

    def dp_event(self) -> dp_accounting.DpEvent:
        import dp_accounting

        return dp_accounting.dp_event.DiscreteLaplaceDpEvent(
            noise_parameter=float(1 / self.scale), sensitivity=self.sensitivity)


@dataclass(frozen=True)
class DiscreteGaussianMechanism(_QueryMechanism):
    """Integer noise of the discrete Gaussian N_Z(0, sigma^2), sampled exactly (Canonne, Kamath & Steinke 2020).

    ``sigma`` is read as the rational it is written as; the variance sigma^2 is then exact. The
    guarantee is (epsilon, delta)-DP with epsilon the smallest value whose exact privacy curve
    (:func:`discrete_gaussian_delta`, their Thm 7) meets ``delta``, for an integer query of L2
    sensitivity ``sensitivity``; ``dp_event()`` is the (D^2 / (2 sigma^2))-zCDP event of their Thm 4.
    """

    sigma: float
    delta: float
    sensitivity: int = 1
    query: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_real(self.sigma, "sigma", low=0.0, low_inclusive=False))
        object.__setattr__(self, "delta", check_real(self.delta, "delta", low=0.0, high=1.0, low_inclusive=False,
                                                     high_inclusive=False))
        object.__setattr__(self, "sensitivity", check_int(self.sensitivity, "sensitivity", low=1))
        _check_query(self.query)

    @property
    def variance(self) -> Fraction:
        return Fraction(str(self.sigma)) ** 2

    def _value(self, data):
        return _integer_answer(_apply(self.query, data))

    def _release_batch(self, values, rng):
        return values + discrete_gaussian(self.variance, rng, values.size).reshape(values.shape)

    @property
    def epsilon(self) -> float:
        """The smallest epsilon with delta(epsilon) <= delta on the exact curve (bisection)."""
        s2, d = float(self.variance), self.sensitivity
        lo, hi = 0.0, 1.0
        while discrete_gaussian_delta(s2, hi, d) > self.delta:
            hi *= 2.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if discrete_gaussian_delta(s2, mid, d) > self.delta else (lo, mid)
        return hi

    @property
    def guarantee(self) -> PrivacyGuarantee:
        return PrivacyGuarantee(
            self.epsilon, self.delta, _QUERY, "Canonne, Kamath & Steinke, NeurIPS 2020, Thm 7 (exact curve)",
            self.dp_event, condition=f"integer query of L2-sensitivity <= {self.sensitivity}",
        )

    def dp_event(self) -> dp_accounting.DpEvent:
        import dp_accounting

        return dp_accounting.ZCDpEvent(self.sensitivity**2 / (2 * float(self.variance)))


# --------------------------------------------------------------------------- exponential mechanism


def _check_scores(scores: Any, name: str = "scores") -> np.ndarray:
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1 or s.size < 1:
        raise ValueError(f"{name} must be a non-empty 1-d array, got shape {s.shape}")
    if np.any(np.isnan(s)) or np.any(s == np.inf) or not np.any(np.isfinite(s)):
        raise ValueError(f"{name} must be finite or -inf (excluded candidate), with at least one finite entry")
    return s


def exponential_mechanism_log_probabilities(scores: Any, epsilon: float, sensitivity: float = 1.0) -> np.ndarray:
    """log P[h] of the exponential mechanism, P[h] proportional to exp(eps*score_h/(2*sensitivity)).

    McSherry & Talwar 2007; higher score is better. Exact in log space
    (``scipy.special.logsumexp``). A score of -inf excludes a candidate.
    """
    eps = check_epsilon(epsilon)
    sens = check_real(sensitivity, "sensitivity", low=0.0, low_inclusive=False)
    s = _check_scores(scores)
    logits = (eps / (2.0 * sens)) * s
    return logits - special.logsumexp(logits)


def exponential_mechanism_utility_bound(n_candidates: int, epsilon: float, tau: float, sensitivity: float = 1.0) -> float:
    """Utility slack of the exponential mechanism (McSherry & Talwar; Winnow paper Lemma 3).

    With probability >= 1 - e^-tau the output h satisfies
    score(h) >= max score - (2*sensitivity/epsilon) * (ln|H| + tau).
    """
    n = check_int(n_candidates, "n_candidates", low=1)
    eps = check_epsilon(epsilon)
    tau = check_real(tau, "tau", low=0.0, low_inclusive=False)
    sens = check_real(sensitivity, "sensitivity", low=0.0, low_inclusive=False)
    return (2.0 * sens / eps) * (math.log(n) + tau)


@dataclass(frozen=True)
class ExponentialMechanism(_QueryMechanism):
    """Exponential mechanism (McSherry & Talwar 2007; Dwork & Roth 2014, Thm 3.10).

    Outputs an index h of ``score(data)`` (a 1-d array; ``None`` = data is the
    score vector) with P[h] proportional to exp(epsilon*score_h/(2*sensitivity)):
    higher score is better. epsilon-DP when neighbouring datasets change every
    score by at most ``sensitivity``. Sampled by Gumbel-max: argmax_h
    (epsilon*score_h/(2*sensitivity) + G_h), G_h i.i.d. standard Gumbel.

    ERRATUM (Winnow paper, Lemma 3; notes ``dp-decision-lists-winnow.notes.md``
    Sec. 2 "Lemma 3 ERRATUM"): the paper prints exp(-epsilon q(S,h)/2) for a
    score q that is *maximised*; that sign would select the worst candidate.
    The correct law, implemented here, is exp(+epsilon q/2) (DP-GreedyCover's
    q = -#errors gives exp(-epsilon #errors/2)).
    """

    epsilon: float
    sensitivity: float = 1.0
    score: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sensitivity", check_real(self.sensitivity, "sensitivity", low=0.0, low_inclusive=False))
        _check_query(self.score, "score")

    def log_probabilities(self, scores: Any) -> np.ndarray:
        return exponential_mechanism_log_probabilities(scores, self.epsilon, self.sensitivity)

    def utility_bound(self, n_candidates: int, tau: float) -> float:
        return exponential_mechanism_utility_bound(n_candidates, self.epsilon, tau, self.sensitivity)

    def _value(self, data):
        return _check_scores(_apply(self.score, data), "score(data)")

    def _release_batch(self, values, rng):
        logits = (self.epsilon / (2.0 * self.sensitivity)) * values
        return np.argmax(logits + rng.gumbel(size=values.shape), axis=-1)

    @property
    def guarantee(self) -> PrivacyGuarantee:
        return PrivacyGuarantee(
            self.epsilon, 0.0, _QUERY, "McSherry & Talwar 2007; Dwork & Roth 2014, Thm 3.10", self.dp_event,
            condition=f"every score changes by <= {self.sensitivity:g}",
        )


_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(48)


def _piecewise_quadrature(f: Callable[[np.ndarray], np.ndarray], kinks: np.ndarray, scale: float, dim: int) -> np.ndarray:
    """Integral over the real line of a vector integrand ``f`` that is smooth between ``kinks``.

    Gauss-Legendre (48 nodes) on every interval between consecutive edges, where
    the edges are the kinks and points 0.5, 1, 2, ..., 64 ``scale`` either side of
    each kink (the integrands here decay like exp(-|x|/scale) away from the kinks,
    so the neglected mass beyond 64 scales is below e^-64). ``f`` maps an array
    of points (n,) to values (n, dim).
    """
    kinks = np.asarray(kinks, dtype=float)
    tails = scale * np.array([0.5, 1, 2, 4, 8, 16, 32, 64])
    edges = np.unique(np.concatenate([kinks, (kinks[:, None] + tails[None, :]).ravel(),
                                      (kinks[:, None] - tails[None, :]).ravel()]))
    lo, hi = edges[:-1], edges[1:]
    half = (hi - lo) / 2
    x = (lo + hi)[:, None] / 2 + half[:, None] * _GL_NODES[None, :]
    w = half[:, None] * _GL_WEIGHTS[None, :]
    vals = np.asarray(f(x.ravel())).reshape(x.size, dim)
    return (w.ravel()[:, None] * vals).sum(axis=0)


# --------------------------------------------------------------------------- report noisy max


@dataclass(frozen=True)
class ReportNoisyMax(_QueryMechanism):
    """Report noisy max: release argmax_h (score_h + noise_h) only.

    * ``noise="laplace"``: Laplace(2*sensitivity/epsilon) noise for general
      scores, Laplace(sensitivity/epsilon) when ``monotone=True`` (counting
      queries: all scores move in the same direction; Dwork & Roth Claim 3.9).
    * ``noise="gumbel"``: Gumbel noise of scale 2*sensitivity/epsilon, which is
      exactly the exponential mechanism (Gumbel-max). With ``monotone=True`` the
      scale is sensitivity/epsilon, the exponential mechanism with
      exp(epsilon*score/sensitivity), epsilon-DP for monotone scores (Dwork &
      Roth 2014, remark after Thm 3.10).
    epsilon-DP in every case.
    """

    epsilon: float
    sensitivity: float = 1.0
    noise: str = "laplace"
    monotone: bool = False
    score: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sensitivity", check_real(self.sensitivity, "sensitivity", low=0.0, low_inclusive=False))
        if self.noise not in ("laplace", "gumbel"):
            raise ValueError(f"noise must be 'laplace' or 'gumbel', got {self.noise!r}")
        if not isinstance(self.monotone, (bool, np.bool_)):
            raise TypeError(f"monotone must be a bool, got {type(self.monotone).__name__}")
        _check_query(self.score, "score")

    @property
    def scale(self) -> float:
        return (1.0 if self.monotone else 2.0) * self.sensitivity / self.epsilon

    def log_probabilities(self, scores: Any) -> np.ndarray:
        """Exact log P[argmax = h].

        Gumbel: log-softmax of score/scale. Laplace: numerical quadrature of
        P[h] = int f(x - s_h) prod_{j != h} F(x - s_j) dx (piecewise Gauss-Legendre
        split at the scores, where the integrand has kinks; relative error ~1e-12).
        """
        s = _check_scores(scores)
        if self.noise == "gumbel":
            logits = s / self.scale
            return logits - special.logsumexp(logits)
        if not np.all(np.isfinite(s)):
            raise ValueError("scores must be finite for noise='laplace'")
        b = self.scale

        def integrand(x):
            # exp(log f(x - s_h) - log F(x - s_h) + sum_j log F(x - s_j)), all h at once
            z = (x[:, None] - s[None, :]) / b
            log_cdf = np.where(z < 0, math.log(0.5) + np.minimum(z, 0.0), np.log1p(-0.5 * np.exp(-np.abs(z))))
            log_pdf = -np.abs(z) - math.log(2.0 * b)
            return np.exp(log_pdf - log_cdf + log_cdf.sum(axis=1, keepdims=True))

        return np.log(_piecewise_quadrature(integrand, np.unique(s), b, s.size))

    def _value(self, data):
        s = _check_scores(_apply(self.score, data), "score(data)")
        if self.noise == "laplace" and not np.all(np.isfinite(s)):
            raise ValueError("score(data) must be finite for noise='laplace'")
        return s

    def _release_batch(self, values, rng):
        if self.noise == "laplace":
            noise = rng.laplace(0.0, self.scale, size=values.shape)
        else:
            noise = rng.gumbel(0.0, self.scale, size=values.shape)
        return np.argmax(values + noise, axis=-1)

    @property
    def guarantee(self) -> PrivacyGuarantee:
        if self.noise == "laplace":
            src = "Dwork & Roth 2014, Claim 3.9" + (" (monotone)" if self.monotone else " (general, 2x scale)")
        else:
            src = "Gumbel-max = exponential mechanism; Dwork & Roth 2014, Thm 3.10"
        kind = "monotone " if self.monotone else ""
        return PrivacyGuarantee(
            self.epsilon, 0.0, _QUERY, src, self.dp_event,
            condition=f"{kind}scores changing by <= {self.sensitivity:g}",
        )


# --------------------------------------------------------------------------- sparse vector


def above_threshold_alpha(epsilon: float, k: int, beta: float) -> float:
    """Accuracy slack of AboveThreshold over k queries: 8 ln(2k/beta)/epsilon.

    Winnow paper Lemma 10 [RECON]: Pr[|Lap(2/eps)| >= alpha/2] = e^{-alpha eps/4}
    <= beta/2 and k Pr[|Lap(4/eps)| >= alpha/2] = k e^{-alpha eps/8} <= beta/2.
    """
    eps = check_epsilon(epsilon)
    k = check_int(k, "k", low=1)
    beta = check_probability(beta, "beta", open_low=True, open_high=True)
    return 8.0 * math.log(2.0 * k / beta) / eps


class AboveThreshold:
    """AboveThreshold (Dwork & Roth 2014, Alg. 1; Winnow paper Sec. 3.7, Lemma 10).

    Interface of the Winnow paper: ``InitializeAboveThr(epsilon, L, beta, rng)``,
    ``AddQuery(q)``, ``TestAboveThr()``. At initialisation L_hat = L +
    Lap(2/epsilon); every query value q gets fresh Lap(4/epsilon) noise nu and
    the answer is TRUE iff q + nu >= L_hat, after which the instance halts and
    refuses further queries (``RuntimeError``). epsilon-DP for any number of
    sensitivity-1 queries up to and including the first TRUE (Thm 3.23).

    ``add_query`` draws the noise and fixes the answer; ``test_above_threshold``
    returns the answer of the most recent query (asking twice costs nothing).
    The state is mutable by nature, so this is a plain class, not a frozen
    dataclass. :meth:`noise_scales` is the one home of the two noise scales: every
    AboveThreshold that runs (this class, DP-Winnow's batched runs, the batched
    :func:`above_threshold_first_firing`) and the exact firing law
    (:func:`above_threshold_firing_logprobs`) read them there.
    """

    @staticmethod
    def noise_scales(epsilon: float) -> tuple[float, float]:
        """``(threshold_scale, query_scale) = (2/epsilon, 4/epsilon)``: the Laplace scales of the noisy
        threshold and of each query's noise (Dwork & Roth 2014, Alg. 1, sensitivity-1 queries)."""
        eps = check_epsilon(epsilon)
        return 2.0 / eps, 4.0 / eps

    def __init__(self, epsilon: float, threshold: float, beta: float, rng: np.random.Generator) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.threshold = check_real(threshold, "threshold")
        self.beta = check_probability(beta, "beta", open_low=True, open_high=True)
        self._rng = check_rng(rng)
        self._threshold_scale, self._query_scale = AboveThreshold.noise_scales(self.epsilon)
        self._noisy_threshold = self.threshold + self._rng.laplace(0.0, self._threshold_scale)
        self._halted = False
        self._last: bool | None = None
        self._n_queries = 0

    @property
    def halted(self) -> bool:
        return self._halted

    @property
    def n_queries(self) -> int:
        return self._n_queries

    def add_query(self, value: float) -> None:
        """Add the answer q(D) of a new sensitivity-1 query."""
        if self._halted:
            raise RuntimeError(
                "AboveThreshold has halted after answering TRUE and accepts no further queries; "
                "initialise a new instance"
            )
        q = check_real(value, "value")
        nu = self._rng.laplace(0.0, self._query_scale)
        self._last = bool(q + nu >= self._noisy_threshold)
        self._n_queries += 1
        if self._last:
            self._halted = True

    def test_above_threshold(self) -> bool:
        """Whether the most recent query was (noisily) above the threshold."""
        if self._last is None:
            raise RuntimeError("test_above_threshold() called before any add_query()")
        return self._last

    # The Winnow paper's names.
    AddQuery = add_query
    TestAboveThr = test_above_threshold

    def accuracy_alpha(self, k: int) -> float:
        """alpha = 8 ln(2k/beta)/epsilon for k queries (Lemma 10 [RECON])."""
        return above_threshold_alpha(self.epsilon, k, self.beta)

    @property
    def guarantee(self) -> PrivacyGuarantee:
        return PrivacyGuarantee(
            self.epsilon, 0.0, _QUERY, "Dwork & Roth 2014, Thm 3.23 (Alg. 1)", self.dp_event,
            condition="sensitivity-1 queries (|q(D) - q(D')| <= 1)",
        )

    def dp_event(self) -> dp_accounting.DpEvent:
        import dp_accounting

        return dp_accounting.UnsupportedDpEvent()

    def __repr__(self) -> str:
        return (f"AboveThreshold(epsilon={self.epsilon!r}, threshold={self.threshold!r}, beta={self.beta!r}, "
                f"halted={self._halted})")


def InitializeAboveThr(epsilon: float, L: float, beta: float, rng: np.random.Generator) -> AboveThreshold:
    """The Winnow paper's constructor name (Sec. 3.7): ``AboveThreshold(epsilon, L, beta, rng)``."""
    return AboveThreshold(epsilon, L, beta, rng)


def above_threshold_first_firing(queries: Any, threshold: float, epsilon: float, rng: np.random.Generator,
                                 size: int) -> np.ndarray:
    """``size`` independent runs of :class:`AboveThreshold` on one query sequence, vectorised over runs: the 0-based
    index of the first query answered TRUE, ``len(queries)`` when none is (same law as the class, whose noise
    scales it reads from :meth:`AboveThreshold.noise_scales`)."""
    q = check_finite_array(queries, "queries", ndim=1)
    threshold = check_real(threshold, "threshold")
    rng = check_rng(rng)
    size = check_int(size, "size", low=1)
    b_thr, b_q = AboveThreshold.noise_scales(epsilon)
    noisy = threshold + rng.laplace(0.0, b_thr, size)
    above = q[None, :] + rng.laplace(0.0, b_q, (size, q.size)) >= noisy[:, None]
    return np.where(above.any(axis=1), above.argmax(axis=1), q.size)


def above_threshold_firing_logprobs(queries: Any, threshold: float, epsilon: float) -> np.ndarray:
    """The exact law of :class:`AboveThreshold`'s first TRUE on a fixed query sequence: ``log P[first TRUE at
    query k]`` for k = 0..T-1 and, last, ``log P[no TRUE]`` (T + 1 values).

    With the noisy threshold L + z, z ~ Lap(b_thr), and query noises Lap(b_q) (:meth:`AboveThreshold.noise_scales`),
    P(k) = int p(z) prod_{i<k} F_i(z) (1 - F_k(z)) dz with F_i(z) = P[q_i + nu < L + z] (Dwork & Roth 2014,
    Alg. 1), integrated by ``scipy.integrate.quad`` piecewise between the kinks of the integrand.
    """
    q = check_finite_array(queries, "queries", ndim=1)
    L = check_real(threshold, "threshold")
    b0, b1 = AboveThreshold.noise_scales(epsilon)
    return np.array(_firing_logprobs(tuple(float(v) for v in q), L, float(b0), float(b1)))


@functools.lru_cache(maxsize=256)
def _firing_logprobs(qs: tuple, L: float, b0: float, b1: float) -> tuple:
    """:func:`above_threshold_firing_logprobs` for the scales (b0, b1) given, cached by value."""
    from scipy import integrate

    T = len(qs)
    kinks = sorted(set([0.0] + [v - L for v in qs]))

    def below(i, z):  # Laplace(0, b1) cdf at L + z - q_i (closed form; scipy.stats per call is too slow)
        u = L + z - qs[i]
        return 0.5 * math.exp(u / b1) if u < 0 else 1.0 - 0.5 * math.exp(-u / b1)

    def integrand(z, k):
        val = math.exp(-abs(z) / b0) / (2.0 * b0)
        for i in range(min(k, T)):
            val *= below(i, z)
        if k < T:
            val *= 1.0 - below(k, z)
        return val

    edges = [-math.inf] + kinks + [math.inf]
    out = []
    for k in range(T + 1):  # k = T: no TRUE
        tot = 0.0
        for a, b in zip(edges[:-1], edges[1:]):
            tot += integrate.quad(integrand, a, b, args=(k,), epsabs=0.0, epsrel=1e-11, limit=200)[0]
        out.append(math.log(tot) if tot > 0 else -math.inf)
    return tuple(out)


@dataclass(frozen=True)
class SparseVector(_QueryMechanism):
    """Sparse vector technique, batch form (Lyu, Su & Li 2017, Alg. 1).

    ``query(data)`` is the vector of query answers q_1..q_m. With eps1 = eps2 =
    epsilon/2: rho = Lap(sensitivity/eps1) once per run; query i gets nu_i =
    Lap(2*cutoff*sensitivity/eps2) (cutoff*sensitivity/eps2 when ``monotone``);
    answer 1 iff q_i + nu_i >= threshold_i + rho, else 0; after the cutoff-th 1
    the run stops and later entries are -1 (int8). epsilon-DP. cutoff=1 gives
    AboveThreshold's Lap(2/eps) and Lap(4/eps).
    """

    epsilon: float
    threshold: Any
    cutoff: int = 1
    sensitivity: float = 1.0
    monotone: bool = False
    query: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        if np.ndim(self.threshold) == 0:
            object.__setattr__(self, "threshold", check_real(self.threshold, "threshold"))
        else:
            object.__setattr__(self, "threshold", check_finite_array(self.threshold, "threshold", ndim=1))
        object.__setattr__(self, "cutoff", check_int(self.cutoff, "cutoff", low=1))
        object.__setattr__(self, "sensitivity", check_real(self.sensitivity, "sensitivity", low=0.0, low_inclusive=False))
        if not isinstance(self.monotone, (bool, np.bool_)):
            raise TypeError(f"monotone must be a bool, got {type(self.monotone).__name__}")
        _check_query(self.query)

    @property
    def threshold_scale(self) -> float:
        return self.sensitivity / (self.epsilon / 2.0)

    @property
    def query_scale(self) -> float:
        return (1.0 if self.monotone else 2.0) * self.cutoff * self.sensitivity / (self.epsilon / 2.0)

    def _value(self, data):
        q = check_finite_array(_apply(self.query, data), "query(data)", ndim=1)
        t = np.asarray(self.threshold)
        if t.ndim == 1 and t.shape != q.shape:
            raise ValueError(f"threshold has shape {t.shape} but query(data) has shape {q.shape}")
        return q

    def _release_batch(self, values, rng):
        runs, m = values.shape
        thr = np.broadcast_to(np.asarray(self.threshold, dtype=float), (m,))
        noisy_thr = rng.laplace(0.0, self.threshold_scale, size=runs)
        out = np.full((runs, m), -1, dtype=np.int8)
        count = np.zeros(runs, dtype=np.int64)
        for i in range(m):  # loop over queries, vectorised over runs
            active = count < self.cutoff
            if not active.any():
                break
            nu = rng.laplace(0.0, self.query_scale, size=runs)
            above = values[:, i] + nu >= thr[i] + noisy_thr
            out[active, i] = above[active].astype(np.int8)
            count += (above & active)
        return out

    @property
    def guarantee(self) -> PrivacyGuarantee:
        kind = "monotone " if self.monotone else ""
        return PrivacyGuarantee(
            self.epsilon, 0.0, _QUERY, "Lyu, Su & Li 2017, Alg. 1 / Thm 2; Dwork & Roth 2014, Thm 3.23",
            self.dp_event, condition=f"{kind}queries of sensitivity <= {self.sensitivity:g}",
        )


# --------------------------------------------------------------------------- Poisson subsampling


def poisson_subsample(data: Any, rate: float, rng: np.random.Generator) -> np.ndarray:
    """Keep each row (axis 0) of ``data`` independently with probability ``rate``."""
    rate = check_probability(rate, "rate", open_low=True)
    rng = check_rng(rng)
    arr = np.asarray(data)
    if arr.ndim == 0:
        raise ValueError("data must have at least one axis (rows on axis 0)")
    return arr[rng.random(arr.shape[0]) < rate]


@dataclass(frozen=True)
class PoissonSubsampled:
    """Poisson subsampling wrapper (Balle, Barthe & Gaboardi 2018, Thm 8).

    ``__call__`` keeps every row of ``data`` with probability ``rate`` and runs
    the inner mechanism on the sample. If the inner mechanism is
    (eps, delta)-DP under add/remove of one record, the composition is
    (ln(1 + rate (e^eps - 1)), rate*delta)-DP under add/remove.

    ``sample`` draws all subsample masks at once and, for privbound mechanisms,
    the noise for all runs at once; the inner query is evaluated once per run
    (a Python loop over runs; for ``query=np.sum`` it is a matrix product).
    """

    mechanism: Any
    rate: float

    def __post_init__(self) -> None:
        if not callable(self.mechanism) or not hasattr(self.mechanism, "guarantee"):
            raise TypeError("mechanism must be a privbound mechanism (callable with a guarantee)")
        object.__setattr__(self, "rate", check_probability(self.rate, "rate", open_low=True))

    def __call__(self, data: Any, rng: np.random.Generator) -> Any:
        rng = check_rng(rng)
        return self.mechanism(poisson_subsample(data, self.rate, rng), rng)

    def sample(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        rng = check_rng(rng)
        size = _check_size(size)
        arr = np.asarray(data)
        if arr.ndim == 0:
            raise ValueError("data must have at least one axis (rows on axis 0)")
        masks = rng.random((size, arr.shape[0])) < self.rate
        inner = self.mechanism
        if not isinstance(inner, _QueryMechanism):
            outs = [inner(arr[m], rng) for m in masks]
            return np.asarray(outs)
        additive = isinstance(inner, (LaplaceMechanism, GaussianMechanism, GeometricMechanism))
        if additive and inner.query is np.sum and arr.dtype.kind in "biuf":
            # Fast path: the sum over each subsample is a matrix product.
            flat = arr.reshape(arr.shape[0], -1).sum(axis=1)
            if flat.dtype.kind == "b":
                flat = flat.astype(np.int64)
            values = masks @ flat
            if isinstance(inner, GeometricMechanism):
                values = _integer_answer(values)
            else:
                values = _real_answer(values)
        else:
            values = np.stack([inner._value(arr[m]) for m in masks])
        return inner._release_batch(values, rng)

    @property
    def guarantee(self) -> PrivacyGuarantee:
        g = self.mechanism.guarantee
        eps = math.log1p(self.rate * math.expm1(g.epsilon))
        return PrivacyGuarantee(
            eps, self.rate * g.delta, NeighbouringRelation.ADD_OR_REMOVE_ONE,
            f"Balle, Barthe & Gaboardi 2018, Thm 8 (Poisson subsampling of: {g.source})", self.dp_event,
        )

    def dp_event(self) -> dp_accounting.DpEvent:
        import dp_accounting

        inner = self.mechanism.dp_event() if hasattr(self.mechanism, "dp_event") else dp_accounting.UnsupportedDpEvent()
        return dp_accounting.PoissonSampledDpEvent(sampling_probability=self.rate, event=inner)
