"""Perceptrons of Ghazi, Kumar, Manurangsi & Nguyen, "Robust and Private Learning of Halfspaces"
(AISTATS 2021, arXiv:2011.14580), paper id ``robust-halfspaces``: Sec. 3.2, Sec. 4 and App. F.

* :class:`Perceptron` -- the classical online perceptron (Rosenblatt), whose mistakes are
  bounded by Novikoff's (R/gamma)^2 (cited in Sec. 3 and App. F).
* :class:`MarginPerceptron` -- the noiseless batch margin perceptron: Algorithm 1 with
  sigma = 0, no Laplace noise (b -> 0) and sampling rate 1 by default; its iteration count is
  bounded by Lemma 18's T = ceil(1500/(alpha gamma_gap^2)).
* :class:`DPBatchPerceptron` -- Algorithm 1 ("DP Batch Perceptron", Theorem 6, App. F):
  Poisson subsampling with rate p, the Laplace-noised stopping test (Lines 8-10), Gaussian
  noise on the summed margin mistakes (Lines 11-13). ``variant="theory"`` uses Lemma 19's
  (p, sigma, b) unless they are given ("free parameters"); ``variant="experimental"`` is the
  Section 4 variant (no stopping test, a fixed number of steps, sigma calibrated with
  dp_accounting's RDP or PLD accountant for a target (epsilon, delta)). ``sample`` runs many
  independent runs as array operations (distributionally identical to ``fit``; tested).
* :class:`OneVsRestDPPerceptron` -- the multi-class wrapper of Sec. 4, whose *total* privacy
  budget across the classes is stated (the paper does not say how it is accounted; [NOT STATED]).

Conventions and errata:

* Erratum (Algorithm 1, Line 6): at iteration 1, w_0 = 0 and w_0/||w_0|| is undefined; we take
  w_hat = 0 (every sampled point is a mistake, since y * 0 = 0 <= gamma'). If the stopping test
  fires at i = 1 the output w_0/||w_0|| of Line 10 is 0/0 as well: we return FAIL
  (data-independent, so privacy is unaffected).
* FAIL is represented by the all-zero vector in batched outputs (``sample``) so that outputs are
  finite arrays; ``fit`` sets ``failed_ = True`` and ``coef_`` to zeros.
* The stopping threshold 0.3 alpha p n uses the paper's *sample size n*, a public parameter fixed in
  advance (App. A). Under add/remove neighbours len(X) differs by one, so a threshold computed from
  len(X) is itself a (tiny, unaccounted) function of the data. Pass ``n_nominal`` to fix it; when it is
  ``None`` len(X) is used, as in the paper's text (our remark; the paper does not discuss it).
* Neighbouring datasets differ by adding or removing one point; inputs must lie in the unit ball
  (``input_check``: "clip" projects onto the ball, "normalize" scales every row to unit norm,
  "check" raises, "none" accepts anything -- only for planted-bug audits).
* ``clip_norm`` R (default 1, the paper's unit ball) runs Algorithm 1 on the data scaled by 1/R, written in the
  data's own units: inputs are clipped to the ball of radius R, a point is a margin mistake when
  y <w_hat, x> <= gamma' R, and the Gaussian noise has standard deviation sigma R (:func:`gaussian_noise_std`;
  sigma is the noise multiplier, R the sum's sensitivity); the count's sensitivity stays 1.
* ``run_batch(group_identical=True)`` Poisson-subsamples identical records together: a record repeated m times
  enters a step's sums Binomial(m, p) times (the law of m independent inclusions), so data sets with many copies of
  a record cost what their distinct records cost.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from dataclasses import dataclass, replace
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import special

from privbound._validation import (
    Interval,
    StrOptions,
    check_delta,
    check_epsilon,
    check_finite_array,
    check_int,
    check_probability,
    check_real,
    validate_parameters,
)
from privbound.learners.accounting import calibrate_noise, epsilon_of
from privbound.learners.neighbouring import NeighbouringRelation
from privbound.learners.mechanisms import PrivacyGuarantee

if TYPE_CHECKING:  # annotations only: dp_accounting is imported when an accountant is asked for
    import dp_accounting

__all__ = [
    "PerceptronTrace",
    "distinct_rows",
    "Perceptron",
    "MarginPerceptron",
    "BatchPerceptronParameters",
    "DPBatchPerceptron",
    "OneVsRestDPPerceptron",
    "lemma18_iterations",
    "lemma19_parameters",
    "stopping_threshold",
    "gdp_mu_of_pure_dp",
    "algorithm1_dp_event",
    "subsampled_laplace_gaussian_pld",
    "calibrate_gaussian_noise",
    "prepare_inputs",
    "halfspace_predict",
    "gaussian_noise_std",
    "margin_threshold",
    "noisy_count_logpdf",
    "noisy_count_cdf",
]

_ADD_REMOVE = NeighbouringRelation.ADD_OR_REMOVE_ONE
_INPUT_CHECKS = ("clip", "normalize", "check", "none")
_RANDOM_STATE = [None, Integral, np.random.SeedSequence, np.random.Generator]


# --------------------------------------------------------------------------- helpers


def _rng_of(random_state: Any) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (int, np.integer, np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    raise TypeError(f"random_state must be None, an int, a SeedSequence or a numpy Generator, got {type(random_state).__name__}")


def _check_labels(y: Any, n: int, name: str = "y") -> np.ndarray:
    y = check_finite_array(y, name, ndim=1)
    if y.shape[0] != n:
        raise ValueError(f"{name} must have one label per row of X ({n}), got {y.shape[0]}")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError(f"{name} must contain only labels -1 and +1")
    return y


def prepare_inputs(X: Any, y: Any, input_check: str = "clip", *, radius: float = 1.0,
                   name: str = "X") -> tuple[np.ndarray, np.ndarray]:
    """Validate (X, y) for the paper's learners: X in the ball of radius ``radius`` (the unit ball B^d of Sec. 1 by
    default), y in {-1, +1}.

    ``input_check``: "clip" projects rows of norm > radius onto the sphere of that radius, "normalize" scales every
    non-zero row to norm ``radius``, "check" raises ``ValueError`` on a row of norm > radius, "none" leaves X as it is.
    """
    if input_check not in _INPUT_CHECKS:
        raise ValueError(f"input_check must be one of {_INPUT_CHECKS}, got {input_check!r}")
    radius = check_real(radius, "radius", low=0.0, low_inclusive=False)
    X = check_finite_array(X, name, ndim=2)
    y = _check_labels(y, X.shape[0])
    norms = np.linalg.norm(X, axis=1)
    if input_check == "clip":
        X = X * (radius / np.maximum(norms, radius))[:, None]
    elif input_check == "normalize":
        X = X * (radius / np.where(norms > 0, norms, radius))[:, None]
    elif input_check == "check" and np.any(norms > radius * (1 + 1e-9)):
        i = int(np.argmax(norms))
        ball = "the unit ball" if radius == 1.0 else f"the ball of radius {radius:g}"
        raise ValueError(f"{name} rows must lie in {ball} (||x|| <= {radius:g}); row {i} has norm {norms[i]:.6g}")
    return X, y


def halfspace_predict(w: np.ndarray, X: Any) -> np.ndarray:
    """h_w(x) = sgn(<w, x>) with a zero score predicted as -1 (a zero score is a mistake for either label)."""
    return np.where(check_finite_array(X, "X", ndim=2) @ w > 0, 1.0, -1.0)


def _split_data(data: Any) -> tuple[Any, Any]:
    if isinstance(data, (tuple, list)) and len(data) == 2:
        return data[0], data[1]
    raise TypeError("data must be a pair (X, y)")


def lemma18_iterations(alpha: float, gamma: float) -> int:
    """Lemma 18: T = ceil(1500 / (alpha gamma_gap^2)), gamma_gap = 0.05 gamma (= ceil(6e5/(alpha gamma^2))).

    The exact integer ceiling of the quotient of the parameters as written (their shortest decimal forms, in
    rational arithmetic): alpha = gamma = 0.1 gives 6e8, and alpha = 0.007, gamma = 0.0031 gives 8919280511373,
    where float arithmetic would give 6e8 + 1 and a 12-digit rounding 8919280511370.
    """
    alpha = check_probability(alpha, "alpha", open_low=True, open_high=True)
    gamma = check_real(gamma, "gamma", low=0.0, high=1.0, low_inclusive=False)
    quotient = Fraction(1500) / (Fraction(repr(alpha)) * (Fraction(1, 20) * Fraction(repr(gamma))) ** 2)
    return math.ceil(quotient)


def lemma19_parameters(epsilon: float, delta: float, T: int) -> tuple[float, float, float]:
    """Lemma 19 (App. F.2): p = 1/sqrt(T), sigma = 100 ln(T/delta)/epsilon, b = 100 sqrt(ln(T/delta))/epsilon."""
    L = math.log(T / delta)
    return 1 / math.sqrt(T), 100 * L / epsilon, 100 * math.sqrt(L) / epsilon


def stopping_threshold(alpha: float, p: float, n: float) -> float:
    """The stopping threshold 0.3 alpha p n of Algorithm 1, Line 9 (n: the sample size)."""
    return 0.3 * alpha * p * n


def gdp_mu_of_pure_dp(epsilon: float) -> float:
    """mu such that every epsilon-DP mechanism is mu-GDP (Dong, Roth & Su 2019): -2 Phi^{-1}(1/(1+e^epsilon)).

    The Gaussian trade-off curve G_mu is convex and meets both linear pieces of f_{epsilon,0} at its fixed
    point and at the ends, so G_mu <= f_{epsilon,0}.
    """
    return float(-2 * special.ndtri(special.expit(-epsilon)))


def algorithm1_dp_event(p: float, sigma: float, b: float | None, T: int, repeats: int = 1) -> dp_accounting.DpEvent:
    """DpEvent of Algorithm 1 (T Poisson(p)-subsampled steps, ``repeats`` independent runs).

    Without the stopping test (``b is None``) a step is a Gaussian of noise multiplier sigma
    (sensitivity 1). With it, a step releases Lap(b) on |M_i| and N(0, sigma^2 I) on u_i, both on
    the same subsample; dp_accounting cannot Poisson-subsample a composition, so the step is
    replaced by a dominating Gaussian: Lap(b) is (1/b)-DP hence mu_L-GDP, the pair is
    sqrt(1/sigma^2 + mu_L^2)-GDP, i.e. dominated by a Gaussian of noise multiplier 1/mu; subsampling
    and composition preserve dominance, so the accountants' epsilon is a valid upper bound.
    """
    import dp_accounting

    if b is None or b == 0:
        if sigma <= 0:
            return dp_accounting.NonPrivateDpEvent()
        step = dp_accounting.GaussianDpEvent(sigma)
    else:
        if sigma <= 0:
            return dp_accounting.NonPrivateDpEvent()
        mu = math.hypot(1 / sigma, gdp_mu_of_pure_dp(1 / b))
        step = dp_accounting.GaussianDpEvent(1 / mu)
    ev = dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(p, step), T)
    return ev if repeats == 1 else dp_accounting.SelfComposedDpEvent(ev, repeats)


def _laplace_loss_cdf(s: np.ndarray, b: float, *, left: bool = False) -> np.ndarray:
    """P[loss <= s] (``left``: P[loss < s]) of the privacy loss (|l| - |l - 1|)/b of Lap(1, b) against Lap(0, b),
    for l ~ Lap(0, b).

    An atom -1/b of mass 1/2 (l <= 0), an atom 1/b of mass e^{-1/b}/2 (l >= 1) and, between, (2l - 1)/b with l
    of density e^{-l/b}/(2b) on (0, 1).
    """
    s = np.asarray(s, dtype=float)
    l = np.clip((b * s + 1.0) / 2.0, 0.0, 1.0)
    mid = 0.5 + 0.5 * -np.expm1(-l / b)
    if left:
        return np.where(s <= -1.0 / b, 0.0, np.where(s > 1.0 / b, 1.0, mid))
    return np.where(s < -1.0 / b, 0.0, np.where(s >= 1.0 / b, 1.0, mid))


def _count_sums(n: int, p: float, b: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """log P(K <= j), log sum_{k <= j} P(K = k) e^{k/b} and log sum_{k >= j} P(K = k) e^{-k/b}, j = 0..n, K ~ Bin(n, p)."""
    from scipy import stats

    k = np.arange(n + 1)
    log_pmf = stats.binom.logpmf(k, n, p)
    return (np.logaddexp.accumulate(log_pmf), np.logaddexp.accumulate(log_pmf + k / b),
            np.logaddexp.accumulate((log_pmf - k / b)[::-1])[::-1])


def _count_split(x: np.ndarray, n: int, sums) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three sums of :func:`_count_sums` split at floor(x): over k <= x (the first two) and k > x (the third)."""
    below, left, right = sums
    j = np.floor(x).astype(np.int64)
    at, after = np.clip(j, 0, n), np.clip(j + 1, 0, n)
    return (np.where(j >= 0, below[at], -np.inf), np.where(j >= 0, left[at], -np.inf),
            np.where(j + 1 <= n, right[after], -np.inf))


def noisy_count_logpdf(x: Any, n: int, p: float, b: float) -> np.ndarray:
    """log density at ``x`` of the noisy count K + Lap(b) of Line 9 when n records are margin mistakes,
    K ~ Binomial(n, p) (Poisson subsampling).

    Exact: sum_k P(K = k) e^{-|x - k|/b} / (2b) is e^{-x/b} sum_{k <= x} P(K = k) e^{k/b} + e^{x/b} sum_{k > x}
    P(K = k) e^{-k/b}, over 2b: cumulative sums in log space over the n + 1 values of k.
    """
    n, p, b = check_int(n, "n", low=0), check_probability(p, "p"), check_real(b, "b", low=0.0, low_inclusive=False)
    x = np.asarray(x, dtype=float)
    _, left, right = _count_split(x, n, _count_sums(n, p, b))
    return np.logaddexp(left - x / b, right + x / b) - math.log(2 * b)


def noisy_count_cdf(x: Any, n: int, p: float, b: float) -> np.ndarray:
    """P(K + Lap(b) <= x), K ~ Binomial(n, p): sum_{k <= x} P(K = k)(1 - e^{-(x - k)/b}/2) + sum_{k > x} P(K = k)
    e^{(x - k)/b}/2, with the sums of :func:`noisy_count_logpdf`."""
    n, p, b = check_int(n, "n", low=0), check_probability(p, "p"), check_real(b, "b", low=0.0, low_inclusive=False)
    x = np.asarray(x, dtype=float)
    below, left, right = _count_split(x, n, _count_sums(n, p, b))
    return np.clip(np.exp(below) - 0.5 * np.exp(left - x / b) + 0.5 * np.exp(right + x / b), 0.0, 1.0)


def _diluted_count_loss_masses(copies: int, p: float, b: float, h: float, ks: np.ndarray, *, under_q: bool) -> np.ndarray:
    """Masses on the bins ((k-1)h, kh] (k in ``ks``) of the count's privacy loss log g(c - 1)/g(c), g the law of
    :func:`noisy_count_cdf` with ``copies`` records, for c ~ g (P) or c - 1 ~ g (Q), each loss rounded up.

    g is log-concave (Binomial and Laplace are), so the loss is non-decreasing in c: a cell of a fine grid of c
    takes the loss of its right end (the largest), the cell below the grid the loss at its bottom and the cell
    above it the supremum 1/b.
    """
    mean = copies * p
    c = np.arange(min(-1.0, mean - 60 * b), max(copies + 1.0, mean + 60 * b) + 0.5, 0.5)
    loss = np.r_[noisy_count_logpdf(c - 1, copies, p, b) - noisy_count_logpdf(c, copies, p, b), 1.0 / b]
    mass = np.diff(np.r_[0.0, noisy_count_cdf(c - (1.0 if under_q else 0.0), copies, p, b), 1.0])
    k = np.clip(np.ceil(loss / h - 1e-12).astype(np.int64), ks[0], ks[-1])
    return np.bincount(k - ks[0], weights=np.maximum(mass, 0.0), minlength=ks.size)


def subsampled_laplace_gaussian_pld(p: float, sigma: float, b: float, count: int = 1, *,
                                    grid: int = 20_000, value_discretization: float | None = None,
                                    count_copies: int = 0) -> Any:
    """dp_accounting PLD of ``count`` steps, each releasing a sensitivity-1 count + Lap(b) and a sensitivity-1
    sum + N(0, sigma^2) on ONE Poisson(p) subsample (Algorithm 1's step with its stopping test; add-or-remove-one).

    The pair of one unsampled step is P = Lap(0, b) x N(0, sigma^2) against Q = Lap(1, b) x N(1, sigma^2); its log
    ratio S = log dQ/dP is the sum of the Laplace loss (:func:`_laplace_loss_cdf`) and the Gaussian loss
    N(-mu^2/2, mu^2), mu = 1/sigma, independent under P and under Q (where S has the law of -S under P, the pair
    being symmetric). The subsampled pairs are functions of S: remove ((1-p)P + pQ against P) has the loss
    log(1 - p + p e^S) under (1-p)P + pQ, add (P against (1-p)P + pQ) has -log(1 - p + p e^S) under P.
    Each part of S is rounded up to a grid of ``grid`` steps over its range (exact masses from the CDFs; the
    masses beyond the Gaussian's +-12 standard deviations go to the extreme bins, pessimistically), the sums
    convolved, and the losses rounded up to the PLD's ``value_discretization`` (default: 1/20000 of the step's
    largest loss): every rounding raises the loss, so the PLD is pessimistic.

    ``count_copies`` n > 0: the pair of a dataset whose n other records are margin mistakes at every step, so that
    the count carries their Binomial(n, p) subsample beside Lap(b) (:func:`noisy_count_cdf`): the count's loss is
    that of g(c - 1) against g(c) (:func:`_diluted_count_loss_masses`), below the Laplace's.
    """
    from dp_accounting.pld import privacy_loss_distribution as pld
    from scipy import signal, stats

    p = check_probability(p, "p", open_low=True)
    sigma = check_real(sigma, "sigma", low=0.0, low_inclusive=False)
    b = check_real(b, "b", low=0.0, low_inclusive=False)
    copies = check_int(count_copies, "count_copies", low=0)
    mu = 1.0 / sigma
    span = 1.0 / b + 12.0 * mu + mu * mu / 2
    h = span / grid
    ks = np.arange(-grid, grid + 1)
    edges = np.r_[ks - 1, ks[-1]] * h  # bins ((k-1)h, kh], k in ks

    def rounded_up(cdf) -> np.ndarray:
        F = cdf(edges)
        m = np.diff(F)
        m[0] += F[0]  # below the grid: to the lowest bin (rounding up)
        m[-1] += 1.0 - F[-1]  # above: to the highest bin (its loss is above every loss in the bin)
        return np.maximum(m, 0.0)

    def law_of_s(sign: float) -> np.ndarray:  # S rounded up, under P (sign = +1) or Q (sign = -1)
        gauss = rounded_up(lambda x: stats.norm.cdf(x, loc=-sign * mu * mu / 2, scale=mu))
        if copies:
            lap = _diluted_count_loss_masses(copies, p, b, h, ks, under_q=sign < 0)
        else:
            lap = rounded_up(lambda x: _laplace_loss_cdf(x, b) if sign > 0 else 1.0 - _laplace_loss_cdf(-x, b, left=True))
        return np.maximum(signal.fftconvolve(gauss, lap), 0.0)  # S index ks[0] + ks[0] .. 2 ks[-1]

    S = np.arange(2 * ks[0], 2 * ks[-1] + 1) * h
    on_p, on_q = law_of_s(1.0), law_of_s(-1.0)
    remove_loss = np.logaddexp(math.log1p(-p), math.log(p) + S) if p < 1 else S
    remove_mass = (1.0 - p) * on_p + p * on_q
    # add: S under P is -S under Q, rounded down there by rounding -S up under Q
    add_loss = -(np.logaddexp(math.log1p(-p), math.log(p) - S) if p < 1 else -S)
    add_mass = on_q
    top = float(max(remove_loss.max(), add_loss.max()))
    step = top / 20000.0 if value_discretization is None else check_real(value_discretization, "value_discretization",
                                                                       low=0.0, low_inclusive=False)

    def rounded_pmf(loss: np.ndarray, mass: np.ndarray) -> dict[int, float]:
        idx = np.ceil(loss / step - 1e-9).astype(np.int64)
        keep = mass > 0
        uniq, inv = np.unique(idx[keep], return_inverse=True)
        return dict(zip(uniq.tolist(), np.bincount(inv, weights=mass[keep]).tolist()))

    out = pld.PrivacyLossDistribution.create_from_rounded_probability(
        rounded_pmf(remove_loss, remove_mass), 0.0, step, pessimistic_estimate=True,
        rounded_probability_mass_function_add=rounded_pmf(add_loss, add_mass), infinity_mass_add=0.0,
        symmetric=False)
    return out.self_compose(check_int(count, "count", low=1)) if count > 1 else out


# Discretisation of the PLD accountant this learner calibrates and accounts with.
PLD_STEP = 1e-3


@functools.lru_cache(maxsize=256)
def calibrate_gaussian_noise(epsilon: float, delta: float, p: float, T: int, accountant: str = "rdp", repeats: int = 1) -> float:
    """The smallest noise multiplier sigma such that ``repeats`` x T steps of the Poisson(p)-subsampled
    Gaussian (sensitivity 1) are (epsilon, delta)-DP by dp_accounting's ``accountant`` (TF Privacy style)."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    return calibrate_noise(lambda s: algorithm1_dp_event(p, s, None, T, repeats), epsilon, delta, accountant,
                           neighbouring=_ADD_REMOVE, pld_discretization=PLD_STEP)


# --------------------------------------------------------------------------- Perceptron


@dataclass(frozen=True)
class PerceptronTrace:
    """Trace of an online run: predictions, mistake flags, indices of updates, final weights."""

    predictions: np.ndarray
    mistakes: np.ndarray
    updates: np.ndarray
    weights: np.ndarray

    @property
    def n_mistakes(self) -> int:
        return int(self.mistakes.sum())


class Perceptron:
    """Classical online perceptron (Rosenblatt 1958): predict sgn(<w, x>) (sgn(0) = +1 is not used:
    a zero score counts as a mistake), update w += y x on a mistake.

    Novikoff (1963): on a sequence with ||x|| <= R separated by a unit w* with margin gamma
    (y <w*, x> >= gamma), it makes at most (R/gamma)^2 mistakes, whatever the order and number of passes.
    """

    _parameter_constraints = {
        "max_epochs": [Interval(Integral, 1, None, closed="left")],
        "random_state": _RANDOM_STATE,
    }

    def __init__(self, *, max_epochs: int = 1000, random_state: Any = None):
        self.max_epochs = max_epochs
        self.random_state = random_state

    def run(self, X: Any, y: Any, w0: Any = None) -> PerceptronTrace:
        """One online pass in the given order; returns the trace."""
        X = check_finite_array(X, "X", ndim=2)
        y = _check_labels(y, X.shape[0])
        w = np.zeros(X.shape[1]) if w0 is None else check_finite_array(w0, "w0", ndim=1).copy()
        preds = np.empty(X.shape[0])
        mist = np.zeros(X.shape[0], bool)
        for t in range(X.shape[0]):
            s = float(X[t] @ w)
            preds[t] = 1.0 if s > 0 else -1.0
            if y[t] * s <= 0:
                mist[t] = True
                w += y[t] * X[t]
        return PerceptronTrace(preds, mist, np.flatnonzero(mist), w)

    def fit(self, X: Any, y: Any) -> "Perceptron":
        """Cycle through (X, y) (shuffled per epoch when ``random_state`` is set) until an epoch has no mistake."""
        validate_parameters(self)
        max_epochs = int(self.max_epochs)
        X = check_finite_array(X, "X", ndim=2)
        y = _check_labels(y, X.shape[0])
        rng = None if self.random_state is None else _rng_of(self.random_state)
        w = np.zeros(X.shape[1])
        total = 0
        self.converged_ = False
        for epoch in range(1, max_epochs + 1):
            order = np.arange(X.shape[0]) if rng is None else rng.permutation(X.shape[0])
            tr = self.run(X[order], y[order], w)
            w = tr.weights
            total += tr.n_mistakes
            if tr.n_mistakes == 0:
                self.converged_ = True
                break
        self.coef_ = w
        self.n_mistakes_ = total
        self.n_epochs_ = epoch
        return self

    def predict(self, X: Any) -> np.ndarray:
        return halfspace_predict(self.coef_, X)


# --------------------------------------------------------------------------- MarginPerceptron


class MarginPerceptron:
    """Noiseless batch margin perceptron: Algorithm 1 with sigma = 0 and no Laplace noise.

    Each iteration takes the Poisson(``sampling_rate``) batch (all points by default), collects
    M_i = {(x, y): y <w_hat, x> <= gamma'} (gamma' = ``margin_ratio`` * gamma; w_hat = 0 at i = 1,
    see the erratum in the module docstring), stops and returns w_{i-1}/||w_{i-1}|| when
    |M_i| < 0.3 alpha p n (Line 9 with b -> 0), and otherwise adds sum_{M_i} y x. ``max_iter`` defaults
    to Lemma 18's T; ``n_iter_`` is the number of completed updates (the index of the stopping
    iteration minus one).
    """

    _parameter_constraints = {
        "gamma": [Interval(Real, 0, 1, closed="right")],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "margin_ratio": [Interval(Real, 0, 1, closed="both")],
        "sampling_rate": [Interval(Real, 0, 1, closed="right")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": _RANDOM_STATE,
    }

    def __init__(self, gamma: float, *, alpha: float = 0.1, margin_ratio: float = 0.95, sampling_rate: float = 1.0,
                 max_iter: int | None = None, random_state: Any = None):
        self.gamma = gamma
        self.alpha = alpha
        self.margin_ratio = margin_ratio
        self.sampling_rate = sampling_rate
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X: Any, y: Any) -> "MarginPerceptron":
        validate_parameters(self)
        gamma, alpha = float(self.gamma), float(self.alpha)
        ratio, p = float(self.margin_ratio), float(self.sampling_rate)
        T = lemma18_iterations(alpha, gamma) if self.max_iter is None else int(self.max_iter)
        X, y = prepare_inputs(X, y, "check")
        rng = _rng_of(self.random_state)
        n, d = X.shape
        gp = ratio * gamma
        w = np.zeros(d)
        sizes = []
        self.stopped_ = False
        for i in range(1, T + 1):
            nrm = np.linalg.norm(w)
            what = w / nrm if nrm > 0 else w
            batch = rng.random(n) < p if p < 1 else np.ones(n, bool)
            mist = batch & (y * (X @ what) <= gp)
            sizes.append(int(mist.sum()))
            if sizes[-1] < stopping_threshold(alpha, p, n):
                self.stopped_ = True
                break
            w = w + (y[mist]) @ X[mist]
        nrm = np.linalg.norm(w)
        self.coef_ = w / nrm if nrm > 0 else w
        self.n_iter_ = len(sizes) - 1 if self.stopped_ else len(sizes)
        self.mistakes_per_iter_ = np.asarray(sizes)
        self.max_iter_ = T
        return self

    def predict(self, X: Any) -> np.ndarray:
        return halfspace_predict(self.coef_, X)


# --------------------------------------------------------------------------- DPBatchPerceptron


@dataclass(frozen=True)
class BatchPerceptronParameters:
    """Resolved parameters of one Algorithm 1 configuration."""

    T: int
    p: float
    sigma: float
    b: float | None  # None: no stopping test (experimental variant)
    gamma_prime: float
    alpha: float
    stopping: bool
    source: str
    clip_norm: float = 1.0  # R: inputs are clipped to the ball of radius R (the sum's sensitivity)


def gaussian_noise_std(P: BatchPerceptronParameters) -> float:
    """Standard deviation of Line 12's Gaussian noise: the noise multiplier sigma times the clip norm R, the
    sensitivity of the sum of clipped records (add-or-remove-one)."""
    return P.sigma * P.clip_norm


def margin_threshold(P: BatchPerceptronParameters) -> float:
    """Line 6's threshold in the data's units: a point is a margin mistake when y <w_hat, x> <= gamma' R."""
    return P.gamma_prime * P.clip_norm


def distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``rows`` in order of first occurrence, and how many times each occurs."""
    _, first, counts = np.unique(rows, axis=0, return_index=True, return_counts=True)
    order = np.argsort(first)
    return rows[first[order]], counts[order]


def _poisson_counts(rng: np.random.Generator, multiplicity: np.ndarray, p: float, runs: int) -> np.ndarray:
    """How many copies of each distinct record one Poisson(p) subsample takes, in ``runs`` independent runs: a
    Bernoulli(p) draw per record of multiplicity 1 (one uniform each, as a per-record subsample draws them) and
    Binomial(m, p) for a record repeated m times. Shape (runs, distinct records)."""
    single = multiplicity == 1
    out = np.empty((runs, multiplicity.size), dtype=np.int64)
    out[:, single] = rng.random((runs, int(single.sum()))) < p
    if not single.all():
        out[:, ~single] = rng.binomial(multiplicity[~single], p, (runs, int((~single).sum())))
    return out


class DPBatchPerceptron:
    """DP Batch Perceptron (Algorithm 1; Theorem 6, Lemmas 18-19, App. F) and its Section 4 variant.

    Parameters
    ----------
    gamma : margin parameter (gamma' = margin_ratio * gamma is used in Line 6).
    epsilon, delta : target privacy (add/remove one record).
    alpha : accuracy parameter (stopping threshold 0.3 alpha p n; default T of Lemma 18).
    variant : "theory" (Lines 1-14, stopping test) or "experimental" (no Lines 9-10, fixed
        ``n_iter`` steps, returns w_T/||w_T||, sigma from dp_accounting for (epsilon, delta)).
    n_iter, sampling_rate, noise_std, laplace_scale : free parameters; ``None`` means Lemma 18/19's
        value (theory) or T = 1/p "one epoch", p = 0.1 and the calibrated sigma (experimental).
    n_nominal : the sample size n in the stopping threshold (public); ``None`` uses len(X).
    accountant : "rdp" or "pld", for the experimental calibration and free-parameter guarantees.
    input_check : "clip" (default), "normalize", "check" or "none" (see :func:`prepare_inputs`).
    clip_norm : R, the radius of the input ball (default 1, the paper's unit ball); sigma (and ``noise_std``) is the
        noise multiplier, the Gaussian's standard deviation being sigma R (:func:`gaussian_noise_std`).
    """

    _parameter_constraints = {
        "gamma": [Interval(Real, 0, 1, closed="right")],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "margin_ratio": [Interval(Real, 0, 1, closed="both")],
        "variant": [StrOptions({"theory", "experimental"})],
        "n_iter": [Interval(Integral, 1, None, closed="left"), None],
        "sampling_rate": [Interval(Real, 0, 1, closed="right"), None],
        "noise_std": [Interval(Real, 0, None, closed="left"), None],
        "laplace_scale": [Interval(Real, 0, None, closed="left"), None],
        "n_nominal": [Interval(Integral, 1, None, closed="left"), None],
        "accountant": [StrOptions({"rdp", "pld"})],
        "input_check": [StrOptions(set(_INPUT_CHECKS))],
        "clip_norm": [Interval(Real, 0, None, closed="neither")],
        "random_state": _RANDOM_STATE,
    }

    def __init__(self, gamma: float, *, epsilon: float = 1.0, delta: float = 1e-5, alpha: float = 0.1,
                 margin_ratio: float = 0.95, variant: str = "theory", n_iter: int | None = None,
                 sampling_rate: float | None = None, noise_std: float | None = None,
                 laplace_scale: float | None = None, n_nominal: int | None = None, accountant: str = "rdp",
                 input_check: str = "clip", clip_norm: float = 1.0, random_state: Any = None):
        self.gamma = gamma
        self.epsilon = epsilon
        self.delta = delta
        self.alpha = alpha
        self.margin_ratio = margin_ratio
        self.variant = variant
        self.n_iter = n_iter
        self.sampling_rate = sampling_rate
        self.noise_std = noise_std
        self.laplace_scale = laplace_scale
        self.n_nominal = n_nominal
        self.accountant = accountant
        self.input_check = input_check
        self.clip_norm = clip_norm
        self.random_state = random_state

    # ------------------------------------------------------------------ parameters
    def parameters(self) -> BatchPerceptronParameters:
        """Validate the hyper-parameters and resolve the defaults of the chosen variant."""
        validate_parameters(self)
        gamma, eps, delta = float(self.gamma), float(self.epsilon), float(self.delta)
        alpha, ratio = float(self.alpha), float(self.margin_ratio)
        if self.variant == "theory":
            P = self._theory_parameters(gamma, eps, delta, alpha, ratio)
        else:
            P = self._experimental_parameters(gamma, eps, delta, alpha, ratio)
        return replace(P, clip_norm=float(self.clip_norm))

    def _theory_parameters(self, gamma: float, eps: float, delta: float, alpha: float, ratio: float) -> BatchPerceptronParameters:
        """Lines 1-14 with Lemma 18's T and Lemma 19's (p, sigma, b), each replaced where given."""
        if delta <= 0:
            raise ValueError("delta must be in (0, 1) for DPBatchPerceptron, got 0.0")
        T = lemma18_iterations(alpha, gamma) if self.n_iter is None else int(self.n_iter)
        p0, s0, b0 = lemma19_parameters(eps, delta, T)
        p = p0 if self.sampling_rate is None else float(self.sampling_rate)
        s = s0 if self.noise_std is None else float(self.noise_std)
        b = b0 if self.laplace_scale is None else float(self.laplace_scale)
        free = (self.sampling_rate, self.noise_std, self.laplace_scale) != (None, None, None)
        src = "free parameters" if free else "Lemma 19 (p = 1/sqrt T, sigma = 100 ln(T/delta)/eps, b = 100 sqrt(ln(T/delta))/eps)"
        return BatchPerceptronParameters(T, p, s, b, ratio * gamma, alpha, True, src)

    def _experimental_parameters(self, gamma: float, eps: float, delta: float, alpha: float, ratio: float) -> BatchPerceptronParameters:
        """The Section 4 variant: no stopping test, T = 1/p steps by default, sigma from the accountant."""
        if self.laplace_scale is not None:
            raise ValueError("laplace_scale must be None for variant='experimental' (it has no stopping test)")
        p = 0.1 if self.sampling_rate is None else float(self.sampling_rate)
        T = max(1, round(1 / p)) if self.n_iter is None else int(self.n_iter)
        if self.noise_std is None:
            if delta <= 0:
                raise ValueError("delta must be in (0, 1) to calibrate Gaussian noise, got 0.0")
            s = calibrate_gaussian_noise(eps, delta, p, T, self.accountant)
            src = f"sigma calibrated by dp_accounting ({self.accountant}) for ({eps:g}, {delta:g})"
        else:
            s = float(self.noise_std)
            src = "free parameters"
        return BatchPerceptronParameters(T, p, s, None, ratio * gamma, alpha, False, src)

    def dp_event(self) -> dp_accounting.DpEvent:
        """Algorithm 1 as a DpEvent (a dominating Gaussian replaces the Laplace+Gaussian step; see
        :func:`algorithm1_dp_event`)."""
        P = self.parameters()
        return algorithm1_dp_event(P.p, P.sigma, P.b, P.T)

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """The claimed (epsilon, delta) from the learner's own accounting."""
        P = self.parameters()
        eps, delta = float(self.epsilon), float(self.delta)
        event = algorithm1_dp_event(P.p, P.sigma, P.b, P.T)
        if P.source.startswith("free"):
            if P.sigma <= 0 or (P.stopping and not P.b):
                raise ValueError("no privacy guarantee: noise_std (and laplace_scale with the stopping test) must be > 0")
            e = epsilon_of(event, delta, self.accountant, neighbouring=_ADD_REMOVE, pld_discretization=PLD_STEP)
            return PrivacyGuarantee(e, delta, _ADD_REMOVE, f"dp_accounting {self.accountant} on the DpEvent (free parameters)", event)
        if P.stopping:
            return PrivacyGuarantee(eps, delta, _ADD_REMOVE,
                                    "Lemma 19 (Lemmas 20, 21; with the corrected ln(1/(p delta_0)))", event)
        return PrivacyGuarantee(eps, delta, _ADD_REMOVE, P.source, event)

    def tight_epsilon(self, delta: float, data: Any = None, *, count_copies: int = 0) -> tuple[float, str]:
        """``(epsilon, source)``: the tightest epsilon at ``delta`` of the composition Algorithm 1 runs with the
        resolved parameters (add-or-remove-one), by dp_accounting's PLD, built here from the noise scales, not from
        :meth:`dp_event` (which dominates the stopping test's Laplace by a Gaussian).

        Each of the T steps is a Poisson(p)-subsampled release of the mistakes' sum + N(0, sigma^2 I) and, with the
        stopping test, of their count + Lap(b) on the same subsample (:func:`subsampled_laplace_gaussian_pld`); a
        stop is an adaptive end of the composition and the output is post-processing. The sum's sensitivity is 1
        when the inputs are clipped, checked or normalised, in units of the clip norm R (noise std sigma R,
        :func:`gaussian_noise_std`); with ``input_check="none"`` it is unbounded (no finite epsilon) unless ``data``
        is given: then the largest norm of its records (the value on that pair). ``count_copies`` n > 0 (with the
        stopping test): the value on a pair whose n other records are margin mistakes at every step, their Binomial
        subsample diluting the count (:func:`subsampled_laplace_gaussian_pld`).
        """
        from dp_accounting.pld import privacy_loss_distribution as pld

        P = self.parameters()
        if self.input_check != "none":
            sens, where = P.clip_norm, "worst case over pairs"
        elif data is None:
            return math.inf, "no clipping (input_check='none'): the sum's sensitivity is unbounded"
        else:
            X, _ = _split_data(data)
            sens = float(np.max(np.linalg.norm(check_finite_array(X, "X", ndim=2), axis=1)))
            where = f"on this pair: no clipping, sensitivity = the largest record norm {sens:g}"
        if P.sigma <= 0 or (P.stopping and not P.b):
            return math.inf, ("the stopping test releases the exact count (b = 0)" if P.sigma > 0 else
                              "no Gaussian noise (sigma = 0)") + ": no finite epsilon"
        steps = f"T = {P.T} Poisson(p = {P.p:g})-subsampled steps"
        std = gaussian_noise_std(P)
        if P.stopping:
            out = subsampled_laplace_gaussian_pld(P.p, std / sens, P.b, P.T, count_copies=count_copies)
            what = (f"each Lap(b = {P.b:.4g}) on the count and N(0, {std:.4g}^2) on the sum (sensitivity {sens:g}) of "
                    "one subsample")
            if count_copies:
                what += f", the count diluted by the Binomial subsample of {count_copies} records that are always mistakes"
                where = "on such a pair"
        else:
            out = pld.from_gaussian_mechanism(std / sens, sampling_prob=P.p, value_discretization_interval=PLD_STEP / 10)
            out = out.self_compose(P.T) if P.T > 1 else out
            what = f"each N(0, {std:.4g}^2) on the sum (sensitivity {sens:g})"
        return float(out.get_epsilon_for_delta(delta)), f"dp_accounting PLD of {steps}, {what} (add-or-remove-one; {where})"

    def first_step_stop_probability(self, n: int) -> float:
        """P[Line 10 fires at i = 1] on a dataset of ``n`` records: w_hat = 0 there, so every sampled record is a
        mistake and |M_1| ~ Binomial(n, p); the test fires iff |M_1| + Lap(b) < 0.3 alpha p n_ref (the output
        is then FAIL)."""
        from scipy import stats

        P = self.parameters()
        if not P.stopping:
            return 0.0
        n = check_int(n, "n", low=0)
        k = np.arange(n + 1)
        gap = self._threshold(P, n) - k  # fires iff Lap(b) < gap
        below = (gap > 0).astype(float) if not P.b else np.where(gap >= 0, 1 - 0.5 * np.exp(-gap / P.b),
                                                                0.5 * np.exp(gap / P.b))
        return float(np.sum(stats.binom.pmf(k, n, P.p) * below))

    # ------------------------------------------------------------------ single run
    def _threshold(self, P: BatchPerceptronParameters, n: int) -> float:
        n_ref = n if self.n_nominal is None else int(self.n_nominal)
        return stopping_threshold(P.alpha, P.p, n_ref)

    def fit(self, X: Any, y: Any) -> "DPBatchPerceptron":
        """One run of Algorithm 1 (reference implementation, one iteration at a time).

        Fitted attributes: ``coef_`` (unit vector, zeros on FAIL), ``failed_``, ``n_iter_`` (updates
        made), ``stopped_`` (Line 10 fired), ``raw_coef_`` (w before normalisation), ``batch_sizes_``,
        ``mistake_counts_``, ``parameters_``. The guarantee is the ``guarantee`` property
        (computed on demand: with free parameters it runs an accountant).
        """
        P = self.parameters()
        X, y = prepare_inputs(X, y, self.input_check, radius=P.clip_norm)
        rng = _rng_of(self.random_state)
        n, d = X.shape
        thr = self._threshold(P, n)
        margin, std = margin_threshold(P), gaussian_noise_std(P)
        w = np.zeros(d)
        batch_sizes, counts = [], []
        stopped, out = False, None
        for i in range(1, P.T + 1):
            nrm = np.linalg.norm(w)
            what = w / nrm if nrm > 0 else np.zeros(d)  # w_hat = 0 at i = 1 (erratum, Line 6)
            batch = rng.random(n) < P.p
            mist = batch & (y * (X @ what) <= margin)
            batch_sizes.append(int(batch.sum()))
            counts.append(int(mist.sum()))
            if P.stopping:
                nu = rng.laplace(0.0, P.b) if P.b > 0 else 0.0
                if counts[-1] + nu < thr:
                    stopped, out = True, what  # zeros (FAIL) if i == 1: w_0/||w_0|| is 0/0
                    break
            u = y[mist] @ X[mist]
            g = rng.normal(0.0, std, d) if std > 0 else 0.0
            w = w + u + g
        if not P.stopping:
            nrm = np.linalg.norm(w)
            out = w / nrm if nrm > 0 else np.zeros(d)
        self.raw_coef_ = w
        self.stopped_ = stopped
        self.failed_ = bool(out is None or not np.any(out))
        self.coef_ = np.zeros(d) if out is None else out
        self.n_iter_ = len(counts) - 1 if stopped else len(counts)
        self.batch_sizes_ = np.asarray(batch_sizes)
        self.mistake_counts_ = np.asarray(counts)
        self.parameters_ = P
        return self

    def predict(self, X: Any) -> np.ndarray:
        return halfspace_predict(self.coef_, X)

    def decision_function(self, X: Any) -> np.ndarray:
        return check_finite_array(X, "X", ndim=2) @ self.coef_

    # ------------------------------------------------------------------ batched runs
    def run_batch(self, X: Any, y: Any, rng: np.random.Generator, size: int, *, transcript: bool = False,
                  group_identical: bool = False) -> dict[str, np.ndarray]:
        """``size`` independent runs of Algorithm 1 as array operations.

        Returns a dict with ``coef`` (size, d) (zeros on FAIL), ``failed``, ``stopped``, ``n_iter``
        (updates made), ``raw`` (size, d) the last w, and with ``transcript=True`` ``iterates``
        (size, T, d): w_1..w_T (rows after a stop repeat the last w), and with the stopping test
        ``noisy_counts`` (size, T): |M_i| + Lap(b) of every step a run reached (NaN after its stop). With
        ``group_identical`` identical records are subsampled together (module docstring): the same law as
        independent inclusions, another random stream, a cost that of the distinct records.
        """
        P = self.parameters()
        size = check_int(size, "size", low=1)
        X, y = prepare_inputs(X, y, self.input_check, radius=P.clip_norm)
        n, d = X.shape
        thr = self._threshold(P, n)
        margin, std = margin_threshold(P), gaussian_noise_std(P)
        rows, mult = distinct_rows(y[:, None] * X) if group_identical else (y[:, None] * X, np.ones(n, np.int64))
        W = np.zeros((size, d))
        out = np.zeros((size, d))
        active = np.ones(size, bool)
        stopped = np.zeros(size, bool)
        n_iter = np.zeros(size, np.int64)
        its = np.zeros((size, P.T, d)) if transcript else None
        noisy_counts = np.full((size, P.T), np.nan) if transcript and P.stopping else None
        for i in range(1, P.T + 1):
            idx = np.flatnonzero(active)
            if idx.size == 0:
                if transcript:
                    its[:, i - 1:] = W[:, None, :]
                break
            Wa = W[idx]
            nrm = np.linalg.norm(Wa, axis=1)
            What = np.divide(Wa, nrm[:, None], out=np.zeros_like(Wa), where=nrm[:, None] > 0)
            mist = np.where(What @ rows.T <= margin, _poisson_counts(rng, mult, P.p, idx.size), 0)
            go = np.ones(idx.size, bool)
            if P.stopping:
                nu = rng.laplace(0.0, P.b, idx.size) if P.b > 0 else np.zeros(idx.size)
                noisy = mist.sum(axis=1) + nu
                if noisy_counts is not None:
                    noisy_counts[idx, i - 1] = noisy
                stop = noisy < thr
                out[idx[stop]] = What[stop]
                stopped[idx[stop]] = True
                active[idx[stop]] = False
                go = ~stop
            k = idx[go]
            upd = mist[go].astype(float) @ rows
            if std > 0:
                upd += rng.normal(0.0, std, (k.size, d))
            W[k] += upd
            n_iter[k] += 1
            if transcript:
                its[:, i - 1] = W
        if not P.stopping:
            nrm = np.linalg.norm(W, axis=1)
            out = np.divide(W, nrm[:, None], out=np.zeros_like(W), where=nrm[:, None] > 0)
        res = dict(coef=out, failed=~np.any(out != 0, axis=1), stopped=stopped, n_iter=n_iter, raw=W)
        if transcript:
            res["iterates"] = its
            if noisy_counts is not None:
                res["noisy_counts"] = noisy_counts
        return res

    def sample(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        """Mechanism interface for the auditor: ``size`` released outputs (unit vectors or zeros = FAIL)."""
        X, y = _split_data(data)
        return self.run_batch(X, y, rng, size)["coef"]

    def __call__(self, data: Any, rng: np.random.Generator) -> np.ndarray:
        return self.sample(data, rng, 1)[0]


# --------------------------------------------------------------------------- multi-class


class OneVsRestDPPerceptron:
    """One-vs-rest DP Batch Perceptrons (Sec. 4), predicting argmax_k <w_k, x>.

    Every example is used by all K binary problems, so the *total* budget must be accounted
    (the paper does not say how; [NOT STATED]). We state the total:

    * ``variant="experimental"``: the K runs are K x T Poisson-subsampled Gaussian steps with the same
      sigma, calibrated with dp_accounting for K x T steps at the total (epsilon, delta);
    * ``variant="theory"``: basic composition, each class at (epsilon/K, delta/K).

    ``guarantee_`` is the total guarantee; ``per_class_guarantee_`` the one of each binary run.
    Other keyword arguments are passed to :class:`DPBatchPerceptron`.
    """

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "variant": [StrOptions({"theory", "experimental"})],
        "random_state": _RANDOM_STATE,
    }

    def __init__(self, gamma: float, *, epsilon: float = 1.0, delta: float = 1e-5, variant: str = "experimental",
                 random_state: Any = None, **params: Any):
        self.gamma = gamma
        self.epsilon = epsilon
        self.delta = delta
        self.variant = variant
        self.random_state = random_state
        self.params = params

    def fit(self, X: Any, y: Any) -> "OneVsRestDPPerceptron":
        validate_parameters(self)
        X = check_finite_array(X, "X", ndim=2)
        y = np.asarray(y)
        if y.shape != (X.shape[0],):
            raise ValueError(f"y must have one label per row of X ({X.shape[0]}), got shape {y.shape}")
        eps, delta = float(self.epsilon), float(self.delta)
        self.classes_ = np.unique(y)
        K = len(self.classes_)
        if K < 2:
            raise ValueError("y must contain at least two classes")
        rng = _rng_of(self.random_state)
        params = dict(self.params)
        if self.variant == "experimental":
            probe = dict(params, noise_std=params.get("noise_std") or 1.0)  # p and T only; no calibration here
            base = DPBatchPerceptron(self.gamma, epsilon=eps, delta=delta, variant="experimental", **probe)
            P = base.parameters()
            if params.get("noise_std") is None:
                params["noise_std"] = calibrate_gaussian_noise(eps, delta, P.p, P.T, base.accountant, K)
            per = dict(epsilon=eps, delta=delta)
            event = algorithm1_dp_event(P.p, params["noise_std"], None, P.T, K)
            total = epsilon_of(event, delta, base.accountant, neighbouring=_ADD_REMOVE, pld_discretization=PLD_STEP)
            self.guarantee_ = PrivacyGuarantee(total, delta, _ADD_REMOVE,
                                               f"dp_accounting {base.accountant}: {K} classes x {P.T} subsampled Gaussian steps", event)
        else:
            per = dict(epsilon=eps / K, delta=delta / K)
            self.guarantee_ = PrivacyGuarantee(eps, delta, _ADD_REMOVE, f"basic composition of {K} runs at (eps/K, delta/K), Lemma 19 each")
        self.estimators_ = []
        for c in self.classes_:
            est = DPBatchPerceptron(self.gamma, variant=self.variant, random_state=rng, **per, **params)
            est.fit(X, np.where(y == c, 1.0, -1.0))
            self.estimators_.append(est)
        self.per_class_guarantee_ = self.estimators_[0].guarantee
        self.coef_ = np.stack([e.coef_ for e in self.estimators_])
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        return check_finite_array(X, "X", ndim=2) @ self.coef_.T

    def predict(self, X: Any) -> np.ndarray:
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]
