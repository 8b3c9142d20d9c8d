"""The statistics of the black-box estimators: from attack scores on d0 and d1 to a lower confidence bound on epsilon.

The hypothesis-testing view of differential privacy (Kairouz, Oh & Viswanath 2015;
Jagielski, Ullman & Oprea 2020; Nasr et al. 2021): if a mechanism is
(epsilon, delta)-DP, then for every event E and both orderings (a, b) of the
neighbouring pair,

    P_a(E) <= e^epsilon P_b(E) + delta,   so   epsilon >= ln((P_a(E) - delta) / P_b(E)).

For a score s (higher meaning "came from d1") the candidate events are the
threshold events {s >= t} and {s < t}, with d1 or d0 in the role of ``a``. Plugging
in a one-sided Clopper--Pearson lower bound for P_a(E) and an upper bound for
P_b(E), each at level (1 - confidence)/2, gives a lower confidence bound on
epsilon that holds with probability >= ``confidence`` for that event. For rare events
the two counts are better judged together: :func:`conditional_epsilon_bound` tests
them conditionally on their sum (Fisher's noncentral hypergeometric law, with the
nuisance bounded as Berger & Boos 1994 do). Which of the two tests (:data:`TESTS`)
evaluates an event is decided with the event, on the selection part
(:func:`choose_test`).

The event is chosen by a threshold strategy (a tiny frozen dataclass, in the style
of ``jax_privacy.auditing``):

* :class:`Split` (default): choose the event on a held-out *selection* part of the
  trials and evaluate it on the rest; no multiplicity correction is needed because
  the evaluation data never influenced the choice.
* :class:`AllThresholds`: use every trial and take the best of all candidate events,
  with a Bonferroni correction over all of them (``4 (n0 + n1 + 1)`` events).
* :class:`Explicit`: one event fixed in advance.

Directions: ``"two-sided"`` considers all four event families; ``"in-above"`` only
the events that say d1 scores high ({s >= t} with d1 on top, {s < t} with d0 on top);
``"in-below"`` the mirror image.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import special

from privbound._validation import check_confidence, check_delta, check_int, check_real

__all__ = [
    "Split",
    "AllThresholds",
    "Explicit",
    "Event",
    "Estimate",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_bound_from_counts",
    "conditional_epsilon_bound",
    "TESTS",
    "event_bound",
    "event_rejects",
    "choose_test",
    "choose_event_test",
    "expected_event_rates",
    "event_coins",
    "best_event",
    "evaluate_event",
    "null_estimate",
    "top_first",
    "small_space_estimate",
    "SMALL_SPACE_MAX",
    "estimate_epsilon",
    "predicted_split_bound",
    "joint_optimism",
    "optimistic_rates_bound",
    "optimistic_event_bound",
    "event_resolution",
    "difference_evidence",
    "strongest_difference_event",
    "epsilon_lower_bound",
    "auroc",
    "check_scores",
]

Direction = Literal["two-sided", "in-above", "in-below"]
_DIRECTIONS = ("two-sided", "in-above", "in-below")

# Event families: (event side, top dataset). side "ge" means {s >= t}; "lt" means {s < t}.
# top 1 means P_d1(E) <= e^eps P_d0(E) + delta is tested (d1 on top).
_FAMILIES = (("ge", 1), ("lt", 0), ("ge", 0), ("lt", 1))
_FAMILIES_IN_ABOVE = (0, 1)
_FAMILIES_IN_BELOW = (2, 3)


# --------------------------------------------------------------------- strategies


@dataclass(frozen=True)
class Split:
    """Choose the event on the first ``fraction`` of the trials, evaluate on the rest.

    The selection step only ever sees the first ``floor(fraction * n)`` scores of each
    side; the evaluation part is never looked at before the event is fixed, so the
    Clopper--Pearson bound on it needs no multiplicity correction. For a selection
    fraction that shrinks with the number of trials see :meth:`for_trials`.
    """

    fraction: float = 0.2

    def __post_init__(self) -> None:
        check_real(self.fraction, "Split.fraction", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)

    @classmethod
    def after(cls, prefix: int, n: int) -> "Split":
        """The Split whose selection part of ``n`` trials per side is exactly the first ``prefix``:
        ``floor(fraction * n) == prefix`` with the fraction half a trial above ``prefix / n``, clear of rounding."""
        n = check_int(n, "n", low=2)
        prefix = check_int(prefix, "prefix", low=1, high=n - 1)
        return cls((prefix + 0.5) / n)

    @staticmethod
    def selection_size(n: int, *, base: float = 0.2, pivot: int = 10_000, exponent: float = 0.5) -> int:
        """Selection size of the N-dependent rule of :meth:`for_trials` for ``n`` trials per side.

        ``m(n) = floor(base * n)`` for ``n <= pivot`` and
        ``m(n) = ceil(base * pivot^(1 - exponent) * n^exponent)`` above it (continuous at
        the pivot up to rounding, growing like ``n^exponent``), capped at ``n - 1``.
        """
        n = check_int(n, "n", low=2)
        base = check_real(base, "base", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        pivot = check_int(pivot, "pivot", low=1)
        exponent = check_real(exponent, "exponent", low=0.0, high=1.0)
        if n <= pivot:
            m = int(math.floor(base * n))
        else:
            m = int(math.ceil(base * pivot ** (1.0 - exponent) * n**exponent))
        return max(1, min(m, n - 1))

    @classmethod
    def for_trials(cls, n: int, *, base: float = 0.2, pivot: int = 10_000, exponent: float = 0.5) -> "Split":
        """An N-dependent split (opt-in): a selection part of :meth:`selection_size` trials.

        Up to ``pivot`` trials per side this is ``Split(base)``; above it the selection
        part grows like ``n^exponent``, so large audits spend a smaller fraction on
        choosing the event (default: 20% up to 1e4 trials, 6325 selection trials at 1e5
        (6.3%), 20000 at 1e6 (2%)). The rule depends on ``n`` only, never on the scores,
        so the evaluation part is still never looked at by the selection and the bound is
        valid at its confidence for every ``n``. The returned ``Split`` holds the fraction
        ``(m + 1/2) / n``, whose ``floor(fraction * n)`` is exactly ``m``.

        It is not uniformly tighter than ``Split(0.2)``: a smaller selection part makes the
        event choice noisier (benchmarks/README.md, 'N-dependent selection split').
        """
        m = cls.selection_size(n, base=base, pivot=pivot, exponent=exponent)
        return cls((m + 0.5) / n)


@dataclass(frozen=True)
class AllThresholds:
    """Best event over all thresholds on all trials, Bonferroni-corrected over every candidate."""


@dataclass(frozen=True)
class Explicit:
    """One event fixed before seeing the data: ``{s >= threshold}`` or ``{s < threshold}``.

    ``top`` is the dataset whose probability of the event is bounded above by
    ``e^eps`` times the other's (1 = d1, 0 = d0). ``tie_fraction`` q makes the event
    randomised at the threshold (``{s > t}`` or ``{s < t}``, plus each score equal to t with
    probability q; see :class:`Event`), so that a fixed event can have any size on tied scores.
    ``test`` is the test of the event's counts, one of :data:`TESTS`, fixed in advance as well.
    """

    threshold: float
    side: Literal["ge", "lt"] = "ge"
    top: int = 1
    tie_fraction: float | None = None
    test: str = "clopper-pearson"

    def __post_init__(self) -> None:
        if self.side not in ("ge", "lt"):
            raise ValueError(f"Explicit.side must be 'ge' or 'lt', got {self.side!r}")
        if self.top not in (0, 1):
            raise ValueError(f"Explicit.top must be 0 or 1, got {self.top!r}")
        if self.tie_fraction is not None:
            check_real(self.tie_fraction, "Explicit.tie_fraction", low=0.0, high=1.0)
        if self.test not in TESTS:
            raise ValueError(f"Explicit.test must be one of {TESTS}, got {self.test!r}")


Strategy = Split | AllThresholds | Explicit


@dataclass(frozen=True)
class Event:
    """A threshold event and the ordering of the pair it is tested in.

    ``side="ge"`` is ``{s >= t}`` and ``side="lt"`` is ``{s < t}``. With ``tie_fraction`` q
    the event is randomised at the atom ``{s = t}``: ``{s > t}`` (resp. ``{s < t}``) plus each
    output with ``s = t`` independently with probability q, the coins drawn from the audit's
    seed (DP-Sniper's randomised threshold, Bichsel et al., S&P 2021), so that an event on
    tied scores can have any size. ``label`` describes the event in the output space when
    it is not a threshold on an attack score (a set of output values).
    """

    threshold: float
    side: str  # "ge" or "lt"
    top: int  # 1: P_d1(E) <= e^eps P_d0(E) + delta; 0: the reverse
    tie_fraction: float | None = None
    label: str | None = None

    def describe(self) -> str:
        a, b = ("d1", "d0") if self.top == 1 else ("d0", "d1")
        if self.label is not None:
            return f"P_{a}({self.label}) <= e^eps P_{b}(same) + delta"
        t = f"{self.threshold:.6g}"
        if self.tie_fraction is None:
            what = f"score {'>=' if self.side == 'ge' else '<'} {t}"
        else:
            what = f"score {'>' if self.side == 'ge' else '<'} {t}, or = {t} w.p. {self.tie_fraction:g}"
        return f"P_{a}({what}) <= e^eps P_{b}(same) + delta"

    def indicator(self, scores: np.ndarray, coins: np.ndarray | None = None) -> np.ndarray:
        """Which scores fall in the event; ``coins`` (uniforms, one per score) decide the tied ones."""
        s = np.asarray(scores, dtype=float)
        if self.tie_fraction is None:
            return s >= self.threshold if self.side == "ge" else s < self.threshold
        if coins is None or np.shape(coins) != s.shape:
            raise ValueError("a randomised event needs one uniform coin per score")
        strict = s > self.threshold if self.side == "ge" else s < self.threshold
        return strict | ((s == self.threshold) & (np.asarray(coins) < self.tie_fraction))


def _pattern_text(key) -> str:
    """An output pattern (a key of :func:`privbound.audit.features.pattern_keys`) as the user wrote it."""
    if isinstance(key, bytes):
        values = np.frombuffer(key, dtype=float).tolist()
        return f"{values[0]:g}" if len(values) == 1 else "(" + ", ".join(f"{v:g}" for v in values) + ")"
    if isinstance(key, tuple) and len(key) == 1:
        return repr(key[0])
    return repr(key)


def label_event(event: Event | None, attack) -> Event | None:
    """``event`` named in the output space when ``attack`` scores outputs by a table of output patterns (the
    single-pattern attack's ``top_``, the plug-in attack's ``table_``), so that its description reads
    ``output == 'no'`` instead of ``score < 1``; any other event is returned unchanged."""
    if event is None or event.label is not None or event.tie_fraction is not None:
        return event
    t, ge = event.threshold, event.side == "ge"
    top = getattr(attack, "top_", None)
    if isinstance(top, tuple) and len(top) == 2 and getattr(attack, "name", "") == "single-pattern":
        scores = {top[1]: 1.0, top[0]: -1.0} if top[0] is not None or top[1] is not None else {}
        scores = {k: v for k, v in scores.items() if k is not None}
        rest = 0.0
    elif isinstance(getattr(attack, "table_", None), dict) and getattr(attack, "name", "") == "plug-in":
        scores, rest = attack.table_, float(attack.pooled_)
    else:
        return event
    inside = [k for k, v in scores.items() if (v >= t) == ge]
    outside = [k for k, v in scores.items() if (v >= t) != ge]
    rest_in = (rest >= t) == ge
    if not rest_in and len(inside) == 1:
        label = f"output == {_pattern_text(inside[0])}"
    elif not rest_in and inside:
        label = "output in {" + ", ".join(sorted(_pattern_text(k) for k in inside)) + "}"
    elif rest_in and len(outside) == 1:
        label = f"output != {_pattern_text(outside[0])}"
    elif rest_in and outside:
        label = "output not in {" + ", ".join(sorted(_pattern_text(k) for k in outside)) + "}"
    else:
        return event
    return Event(event.threshold, event.side, event.top, event.tie_fraction, label=label)


@dataclass(frozen=True)
class Estimate:
    """What an estimator found: the bound, the event and the counts behind it, and the test of those counts."""

    epsilon_lower_bound: float
    event: Event | None
    confidence: float
    delta: float
    n_in: int  # d1 scores used for evaluation
    n_out: int  # d0 scores used for evaluation
    k_in: int  # d1 scores in the event
    k_out: int  # d0 scores in the event
    n_candidates: int  # events the confidence was corrected for (1 unless AllThresholds)
    method: str
    test: str = "clopper-pearson"  # the test of the event's counts, one of TESTS

    @property
    def tpr(self) -> float:
        """P_d1(E) estimated on the evaluation trials."""
        return self.k_in / self.n_in if self.n_in else float("nan")

    @property
    def fpr(self) -> float:
        """P_d0(E) estimated on the evaluation trials."""
        return self.k_out / self.n_out if self.n_out else float("nan")


# ----------------------------------------------------------------- Clopper-Pearson


def clopper_pearson_lower(k, n, alpha):
    """One-sided (1 - alpha) Clopper--Pearson lower bound on a binomial proportion (vectorised)."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = special.betaincinv(k, n - k + 1.0, alpha)
    return np.where(k <= 0, 0.0, out)


def clopper_pearson_upper(k, n, alpha):
    """One-sided (1 - alpha) Clopper--Pearson upper bound on a binomial proportion (vectorised)."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = special.betaincinv(k + 1.0, n - k, 1.0 - alpha)
    return np.where(k >= n, 1.0, out)


def epsilon_bound_from_counts(k_top, n_top, k_bottom, n_bottom, *, delta: float, alpha: float):
    """ln((CP_lower(k_top/n_top) - delta) / CP_upper(k_bottom/n_bottom)), each at level alpha/2.

    Returns ``-inf`` where the lower bound on the top probability does not exceed delta.
    Vectorised over counts. This is a valid (1 - alpha) lower confidence bound on epsilon
    for one event fixed independently of these counts.
    """
    lo = clopper_pearson_lower(k_top, n_top, alpha / 2)
    hi = clopper_pearson_upper(k_bottom, n_bottom, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.log(lo - delta) - np.log(hi)
    return np.where(lo > delta, val, -np.inf)


# Share of alpha spent on the Clopper--Pearson bounds on the nuisance probabilities that bound the odds
# ratio under the null in :func:`conditional_epsilon_bound` (Berger & Boos 1994 spend 0.001 of 0.05).
_NUISANCE_SHARE = 0.02


def conditional_epsilon_bound(k_top: int, n_top: int, k_bottom: int, n_bottom: int, *, delta: float,
                              alpha: float) -> float:
    """Lower confidence bound on epsilon from one event's counts by a conditional odds-ratio test.

    The counts are ``K_top ~ Bin(n_top, p)`` and ``K_bottom ~ Bin(n_bottom, r)``, independent;
    the null of epsilon is ``p <= e^eps r + delta``. Given the total ``T = K_top + K_bottom``,
    ``K_top`` follows Fisher's noncentral hypergeometric law with odds ratio
    ``psi = p (1 - r) / (r (1 - p))`` alone (Lehmann & Romano, *Testing Statistical Hypotheses*,
    3rd ed., Sec. 4.5), and its upper tail grows with ``psi``. Under the null ``psi`` grows with
    ``p``, so ``psi <= g(r) = q (1 - r) / (r (1 - q))`` with ``q = e^eps r + delta``, which depends
    on the unknown ``r``. Following Berger & Boos (JASA 1994: p-values maximised over a confidence
    set for the nuisance parameter), Clopper--Pearson bounds at level ``gamma = _NUISANCE_SHARE *
    alpha`` confine ``r``: below ``r_hi``, and, when delta > 0, above ``(p_lo - delta) e^-eps``
    (the null and ``p >= p_lo``); ``log g`` is convex in ``r`` (its derivative
    ``-delta/(r q) - 1/(1 - r) + e^eps/(1 - q)`` increases), so ``psi_0``, the larger of ``g`` at the
    two ends, bounds ``psi``. The null is rejected when ``P_{psi_0}(K_top >= k_top | T) <= alpha -
    gamma`` (or when the two bounds leave it no ``r``). The rejection probability under the null is
    at most ``gamma + (alpha - gamma) = alpha``. No event can refute eps once ``e^eps r_hi + delta
    >= 1`` (the null then holds for any ``p``), and neither does this test.

    ``psi_0`` increases with eps, so the rejected eps form an interval ``[0, eps_hat)``; the bound
    is ``eps_hat`` (``-inf`` when eps = 0 is not rejected). Where both probabilities are small
    the test judges the two counts together, as the rate ratio of two Poisson counts, instead of
    spending half of alpha on each count (:func:`epsilon_bound_from_counts`): on ``84/1600``
    against ``31/1600`` at alpha 0.05 it certifies 0.63 where the two Clopper--Pearson bounds give 0.43.
    """
    rejected = _conditional_rejection(k_top, n_top, k_bottom, n_bottom, delta=delta, alpha=alpha)
    if rejected is None or not rejected(0.0):
        return -math.inf
    lo, hi = 0.0, 1.0
    while rejected(hi):
        lo, hi = hi, 2.0 * hi
        if hi > 1e3:
            return lo
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if rejected(mid):
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-7:
            break
    return lo


@functools.lru_cache(maxsize=64)
def _conditional_law(k_top: int, n_top: int, k_bottom: int, n_bottom: int):
    """``(support, log weights, upper tail mask)`` of K_top given K_top + K_bottom, up to the odds-ratio factor."""
    total = k_top + k_bottom
    support = np.arange(max(0, total - n_bottom), min(n_top, total) + 1)
    log_weights = (special.gammaln(n_top + 1) - special.gammaln(support + 1) - special.gammaln(n_top - support + 1)
                   + special.gammaln(n_bottom + 1) - special.gammaln(total - support + 1)
                   - special.gammaln(n_bottom - total + support + 1))
    upper = support >= k_top
    for a in (support, log_weights, upper):
        a.flags.writeable = False  # shared through the cache
    return support, log_weights, upper


def _conditional_rejection(k_top, n_top, k_bottom, n_bottom, *, delta: float, alpha: float):
    """``eps -> whether the conditional test at level alpha rejects (eps, delta)`` (:func:`conditional_epsilon_bound`);
    ``None`` when it rejects no eps."""
    k_top, n_top, k_bottom, n_bottom = int(k_top), int(n_top), int(k_bottom), int(n_bottom)
    gamma = _NUISANCE_SHARE * alpha
    log_level = math.log(alpha - gamma)
    if k_top == 0 or k_top <= delta * n_top:
        return None
    if delta > 0.0:
        p_lo = float(clopper_pearson_lower(k_top, n_top, gamma / 2))
        r_hi = float(clopper_pearson_upper(k_bottom, n_bottom, gamma / 2))
        if not p_lo > delta:
            return None
    else:
        p_lo, r_hi = None, float(clopper_pearson_upper(k_bottom, n_bottom, gamma))
    support, log_weights, upper = _conditional_law(k_top, n_top, k_bottom, n_bottom)

    def log_odds_bound(eps: float) -> float:
        """log psi_0(eps): +inf when the null allows any odds ratio, -inf when the bounds exclude the null."""
        a = math.exp(min(eps, 700.0))
        ends = [r_hi] if p_lo is None else [r_hi, (p_lo - delta) / a]
        if len(ends) == 2 and ends[1] > r_hi:
            return -math.inf
        out = -math.inf
        for r in ends:
            q = a * r + delta
            if q >= 1.0:
                return math.inf
            out = max(out, math.log(q) + math.log1p(-r) - math.log(r) - math.log1p(-q))
        return out

    def rejected(eps: float) -> bool:
        log_psi = log_odds_bound(eps)
        if math.isinf(log_psi):
            return log_psi < 0
        w = log_weights + support * log_psi
        return float(special.logsumexp(w[upper]) - special.logsumexp(w)) <= log_level

    return rejected


# Tests of one event's counts: "clopper-pearson" (:func:`epsilon_bound_from_counts`) and
# "conditional" (:func:`conditional_epsilon_bound`).
TESTS = ("clopper-pearson", "conditional")


def event_bound(test: str, k_top, n_top, k_bottom, n_bottom, *, delta: float, alpha: float) -> float:
    """The lower bound on epsilon of one event's counts by ``test`` (one of :data:`TESTS`)."""
    if test == "conditional":
        return conditional_epsilon_bound(k_top, n_top, k_bottom, n_bottom, delta=delta, alpha=alpha)
    if test == "clopper-pearson":
        return float(epsilon_bound_from_counts(k_top, n_top, k_bottom, n_bottom, delta=delta, alpha=alpha))
    raise ValueError(f"test must be one of {TESTS}, got {test!r}")


def event_rejects(test: str, k_top, n_top, k_bottom, n_bottom, *, epsilon: float, delta: float,
                  alpha: float) -> bool:
    """Whether ``test`` at level ``alpha`` rejects "(epsilon, delta)" on these counts, i.e. its bound exceeds epsilon."""
    if test == "conditional":
        rejected = _conditional_rejection(k_top, n_top, k_bottom, n_bottom, delta=delta, alpha=alpha)
        return rejected is not None and rejected(epsilon)
    return event_bound(test, k_top, n_top, k_bottom, n_bottom, delta=delta, alpha=alpha) > epsilon


def choose_test(rate_top: float, rate_bottom: float, n_top: int, n_bottom: int, *, delta: float,
                alpha: float) -> str:
    """The test of :data:`TESTS` predicted to certify more on ``n_top`` / ``n_bottom`` evaluation outputs.

    The prediction evaluates both tests at the counts the selection part's rates would give
    there; it reads the selection part only, so choosing the test keeps the evaluation's level.
    Clopper--Pearson unless the conditional test is predicted to do better.
    """
    kt, kb = int(round(rate_top * n_top)), int(round(rate_bottom * n_bottom))
    cp, cond = (event_bound(t, kt, n_top, kb, n_bottom, delta=delta, alpha=alpha) for t in TESTS)
    return "conditional" if cond > cp else "clopper-pearson"


# ------------------------------------------------------------------------ helpers


def check_scores(scores, name: str) -> np.ndarray:
    """A non-empty, finite, 1-d float array of scores."""
    try:
        arr = np.asarray(scores, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a 1-d array of real scores") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(f"{name} must be finite; entry {bad} is {arr[bad]!r}")
    return arr


def _families(direction: str) -> tuple[int, ...]:
    if direction == "two-sided":
        return (0, 1, 2, 3)
    if direction == "in-above":
        return _FAMILIES_IN_ABOVE
    if direction == "in-below":
        return _FAMILIES_IN_BELOW
    raise ValueError(f"direction must be one of {_DIRECTIONS}, got {direction!r}")


def _event_counts(s_in: np.ndarray, s_out: np.ndarray, thresholds: np.ndarray):
    """Counts of scores >= t for each threshold t (sorted inputs not required)."""
    a = np.sort(s_in)
    b = np.sort(s_out)
    ge_in = a.size - np.searchsorted(a, thresholds, side="left")
    ge_out = b.size - np.searchsorted(b, thresholds, side="left")
    return ge_in, ge_out


def _candidate_table(s_in, s_out, thresholds, families):
    """(k_top, n_top, k_bottom, n_bottom, side, top, threshold index) for every candidate event."""
    ge_in, ge_out = _event_counts(s_in, s_out, thresholds)
    n_in, n_out = s_in.size, s_out.size
    rows = []
    for f in families:
        side, top = _FAMILIES[f]
        k_in = ge_in if side == "ge" else n_in - ge_in
        k_out = ge_out if side == "ge" else n_out - ge_out
        if top == 1:
            rows.append((k_in, n_in, k_out, n_out, f))
        else:
            rows.append((k_out, n_out, k_in, n_in, f))
    return rows


def wilson_z(alpha: float) -> float:
    """The two-sided normal quantile at ``alpha``: the standard errors of the Wilson bounds at the audit's level."""
    return float(special.ndtri(1.0 - alpha / 2))


def _wilson(k, n, z, sign):
    """Wilson score bound for a proportion k/n: lower for sign -1, upper for +1."""
    p = k / n
    centre = p + z * z / (2 * n)
    half = z * np.sqrt(np.maximum(p * (1 - p), 0.0) / n + z * z / (4 * n * n))
    return np.clip((centre + sign * half) / (1 + z * z / n), 0.0, 1.0)


def _wilson_bound(k_top, n_top, k_bot, n_bot, *, delta, alpha):
    """Cheap normal (Wilson score) approximation of :func:`epsilon_bound_from_counts`.

    Used only to choose among candidate events, never as the reported bound.
    """
    z = wilson_z(alpha)
    lo = _wilson(np.asarray(k_top, float), n_top, z, -1.0)
    hi = _wilson(np.asarray(k_bot, float), n_bot, z, +1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.log(lo - delta) - np.log(hi)
    return np.where(lo > delta, val, -np.inf)


_SHORTLIST = 64


def _shortlist(k_top, n_top, k_bot, n_bot, *, delta, alpha):
    """Exact bound on a shortlist of candidates; returns (best value, index).

    The shortlist holds the ``_SHORTLIST`` best candidates by the Wilson approximation
    and their neighbours. Any rule for picking among candidates is valid for every
    strategy here: Split evaluates its pick on fresh data, and AllThresholds corrects
    for every candidate whether it was examined or not.
    """
    k_top = np.asarray(k_top)
    k_bot = np.asarray(k_bot)
    if k_top.size <= 4 * _SHORTLIST:
        idx = np.arange(k_top.size)
    else:
        approx = _wilson_bound(k_top, n_top, k_bot, n_bot, delta=delta, alpha=alpha)
        top = np.argpartition(-approx, _SHORTLIST)[:_SHORTLIST]
        idx = np.unique(np.clip(np.concatenate([top - 1, top, top + 1]), 0, k_top.size - 1))
    vals = epsilon_bound_from_counts(k_top[idx], n_top, k_bot[idx], n_bot, delta=delta, alpha=alpha)
    j = int(np.argmax(vals))  # first maximum: the smallest threshold among the shortlist
    return float(vals[j]), int(idx[j])


def _thresholds(values: np.ndarray) -> np.ndarray:
    """Candidate thresholds: every distinct value, plus +inf (the empty / full event)."""
    return np.append(np.unique(values), np.inf)


def _pick(candidates):
    """The best (value, threshold, family) candidate.

    Ties are broken by event side ({s >= t} first), then by the smallest threshold,
    never by which dataset is on top: so swapping the two score samples selects the
    mirror-image event and the two-sided bound is symmetric.
    """
    return max(candidates, key=lambda c: (c[0], _FAMILIES[c[2]][0] == "ge", -c[1]))


# Number of candidate thresholds offered to the selection step (order statistics spaced
# geometrically towards both tails). Tuned on Laplace and Gaussian score pairs at
# N = 1e3..1e6 (see benchmarks/auditor_tightness.py): a coarse grid plus a one-step
# Clopper--Pearson penalty beat both "all distinct values" and Bonferroni-style penalties.
_SELECTION_GRID = 200


def _threshold_grid(values: np.ndarray, size: int | None) -> np.ndarray:
    """Candidate thresholds for selection: all distinct values, or about ``size`` order statistics
    spaced geometrically towards both tails (so tail events are represented without
    offering thousands of nearly identical noisy candidates)."""
    u = np.unique(values)
    if size is None or u.size <= size:
        return np.append(u, np.inf)
    grid = np.unique(np.sort(values)[_geometric_positions(values.size, size)])
    if grid.size < size // 2:
        # Large atoms (a value taken by most outputs) collapse the quantile grid onto a few
        # values: spread candidates over the distinct values as well.
        grid = np.union1d(grid, u[_geometric_positions(u.size, size)])
    return np.append(grid, np.inf)


def _geometric_positions(m: int, size: int) -> np.ndarray:
    """About ``size`` positions in ``range(m)``, spaced geometrically towards both ends."""
    half = np.geomspace(1.0 / m, 0.5, size // 2)
    levels = np.concatenate([half, 1.0 - half])
    return np.clip(np.round(levels * m).astype(int), 0, m - 1)


# Tie fractions offered at each atom of discrete scores (randomised events).
_TIE_FRACTIONS = (0.25, 0.5, 0.75)


def best_event(s_in_sel, s_out_sel, n_in_eval, n_out_eval, *, delta, alpha, families=(0, 1, 2, 3),
               randomize_ties=False, selection_z=None):
    """Pick the event predicted to give the largest bound on the evaluation data: ``(prediction, Event)``.

    Maximising a noisy estimate over thousands of thresholds picks the luckiest tail
    event (the winner's curse: a 3-sigma fluctuation somewhere in the tail is the rule,
    not the exception). So the candidates are a grid of about ``_SELECTION_GRID``
    order statistics, and the prediction is deliberately pessimistic: the selection
    data give (Wilson) confidence bounds on the two probabilities at the audit's own
    level, and the prediction is the evaluation-size bound at those pessimistic rates.
    Any selection rule keeps the final bound valid, since it is evaluated on fresh data;
    the approximation only affects which event is chosen.

    ``randomize_ties``: when the scores take few enough values for every one to be a
    candidate threshold, also offer the randomised events that include a fraction
    ``q`` of an atom (:data:`_TIE_FRACTIONS`); their counts interpolate those of the two
    neighbouring thresholds.

    ``selection_z``: the standard errors by which the Wilson bounds move the selection rates (by default the
    two-sided normal quantile at ``alpha``, the audit's own level).
    """
    thresholds = _threshold_grid(np.concatenate([s_in_sel, s_out_sel]), _SELECTION_GRID)
    discrete = np.unique(np.concatenate([s_in_sel, s_out_sel])).size + 1 == thresholds.size
    fractions = _TIE_FRACTIONS if randomize_ties and discrete and thresholds.size > 1 else ()
    z_sel = wilson_z(alpha) if selection_z is None else selection_z
    candidates = []
    for k_top, n_top, k_bot, n_bot, f in _candidate_table(s_in_sel, s_out_sel, thresholds, families):
        side, top = _FAMILIES[f]
        n_top_eval = n_in_eval if top == 1 else n_out_eval
        n_bot_eval = n_out_eval if top == 1 else n_in_eval

        def predict(kt, kb):
            rate_top = _wilson(np.asarray(kt, float), n_top, z_sel, -1.0)
            rate_bot = _wilson(np.asarray(kb, float), n_bot, z_sel, +1.0)
            return _wilson_bound(rate_top * n_top_eval, n_top_eval, rate_bot * n_bot_eval, n_bot_eval,
                                 delta=delta, alpha=alpha)

        pred = predict(k_top, k_bot)
        i = int(np.argmax(pred))  # first maximum: the smallest threshold of this family
        candidates.append((float(pred[i]), float(thresholds[i]), f, None))
        for q in fractions:
            # {s > t_j} plus q of {s = t_j}: "ge" counts q k(t_j) + (1 - q) k(t_{j+1}); "lt" (1 - q) k(t_j) + q k(t_{j+1}).
            w = q if side == "ge" else 1.0 - q
            kt = w * np.asarray(k_top[:-1], float) + (1 - w) * np.asarray(k_top[1:], float)
            kb = w * np.asarray(k_bot[:-1], float) + (1 - w) * np.asarray(k_bot[1:], float)
            pred_q = predict(kt, kb)
            j = int(np.argmax(pred_q))
            candidates.append((float(pred_q[j]), float(thresholds[j]), f, q))
    value, threshold, f, q = max(candidates, key=lambda c: (c[0], _FAMILIES[c[2]][0] == "ge", c[3] is None, -c[1]))
    return value, Event(threshold, *_FAMILIES[f], tie_fraction=q)


def predicted_split_bound(
    in_scores,
    out_scores,
    n_evaluation: int,
    *,
    delta: float = 0.0,
    confidence: float = 0.95,
    direction: Direction = "two-sided",
) -> float:
    """The bound :class:`Split` expects to certify on ``n_evaluation`` fresh scores per side.

    The pessimistic prediction its selection step maximises: Wilson bounds at the
    audit's level on the two event probabilities from these (selection) scores, plugged
    into the bound at the evaluation size, for the best threshold event. ``-inf`` when
    no event is predicted to have a top probability above ``delta``. A ranking criterion
    (used by the neighbour search), never a confidence bound. (A plug-in prediction with
    the observed rates ranks worse: zero counts in the tails make noise look like signal.)
    """
    s_in = check_scores(in_scores, "in_scores")
    s_out = check_scores(out_scores, "out_scores")
    pred, _ = best_event(s_in, s_out, int(n_evaluation), int(n_evaluation), delta=check_delta(delta),
                                 alpha=1.0 - check_confidence(confidence), families=_families(direction))
    return float(pred)


def _log_ratio_moves(k_top, n_top: int, k_bottom, n_bottom: int, *, delta: float, z: float) -> tuple:
    """``(up, down)``: how far ``z`` Wilson standard errors of the top rate (raised) and of the bottom rate
    (lowered), each alone, move the log ratio ``ln((p_top - delta) / p_bottom)`` of these counts up (``inf`` where
    the observed or moved ratio is not finite)."""
    k_top, k_bottom = np.asarray(k_top, float), np.asarray(k_bottom, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.log(_wilson(k_top, n_top, z, +1.0) - delta) - np.log(k_top / n_top - delta)
        down = np.log(k_bottom / n_bottom) - np.log(_wilson(k_bottom, n_bottom, z, -1.0))
    return np.where(np.isnan(up), np.inf, up), np.where(np.isnan(down), np.inf, down)


def joint_optimism(k_top, n_top: int, k_bottom, n_bottom: int, *, delta: float, z: float) -> tuple:
    """``(z_top, z_bottom)``, with ``z_top**2 + z_bottom**2 == z**2``: ``z`` standard errors of the log ratio
    ``ln((p_top - delta) / p_bottom)`` shared between its two rates in proportion to how far ``z`` Wilson standard
    errors of each alone move it -- to first order the direction in which a move of ``z`` standard errors of the
    two independent rates raises the ratio most, so the optimistic ratio is exceeded at the rate of one normal
    ``z``-tail (``Phi(-z)``), not of the rectangle's corner (down to ``Phi(-z sqrt 2)`` for equal moves). A rate
    whose move is unbounded (an empty bottom count, a top rate not above ``delta``) takes all of ``z``; where both
    are, or neither moves, each takes ``z`` (the corner)."""
    z = check_real(z, "z", low=0.0)
    up, down = _log_ratio_moves(k_top, n_top, k_bottom, n_bottom, delta=delta, z=z)
    corner = np.isinf(up) & np.isinf(down) | (up + down == 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        w_top = np.where(np.isinf(up), 1.0, np.where(np.isinf(down), 0.0, up / np.hypot(up, down)))
    w_top = np.where(corner, 1.0, w_top)
    w_bottom = np.where(corner, 1.0, np.sqrt(np.maximum(1.0 - w_top ** 2, 0.0)))
    return z * w_top, z * w_bottom


def optimistic_rates_bound(k_top, n_top: int, k_bottom, n_bottom: int, n_evaluation: int, *, delta: float,
                           confidence: float, z: float) -> np.ndarray:
    """The bound events with these counts would certify on ``n_evaluation`` trials per side (the Wilson
    approximation of the evaluation's bound) if their rates were moved jointly by ``z`` standard errors of their
    log ratio towards a larger bound (:func:`joint_optimism`: the top rate raised, the bottom rate lowered). A
    stopping criterion of the sequential audit, never a confidence bound."""
    z_top, z_bot = joint_optimism(k_top, n_top, k_bottom, n_bottom, delta=delta, z=z)
    rate_top = _wilson(np.asarray(k_top, float), n_top, z_top, +1.0)
    rate_bot = _wilson(np.asarray(k_bottom, float), n_bottom, z_bot, -1.0)
    return _wilson_bound(rate_top * n_evaluation, n_evaluation, rate_bot * n_evaluation, n_evaluation, delta=delta,
                         alpha=1.0 - confidence)


def _observed_top_first(event, s_in, s_out) -> tuple:
    """``(p_top, n_top, p_bottom, n_bottom)``: the event's rates on these scores and their sizes, top first."""
    r_in, r_out = expected_event_rates(event, s_in, s_out)
    return top_first(event.top, r_in, s_in.size, r_out, s_out.size)


def optimistic_event_bound(event, s_in, s_out, n_eval: int, *, delta: float, confidence: float, z: float) -> float:
    """The bound ``event`` would certify on ``n_eval`` trials per side if its rates on these scores were moved
    jointly by ``z`` standard errors of their log ratio towards a larger bound (:func:`optimistic_rates_bound`)."""
    p_top, n_top, p_bot, n_bot = _observed_top_first(event, s_in, s_out)
    return float(optimistic_rates_bound(p_top * n_top, n_top, p_bot * n_bot, n_bot, n_eval, delta=delta,
                                        confidence=confidence, z=z))


def event_resolution(event, s_in, s_out, *, delta: float, z: float) -> float:
    """How far ``z`` Wilson standard errors of each rate, both at once (the rectangle's corner), move an event's
    log ratio ln((p_top - delta) / p_bottom) up from its observed value on these scores (``inf`` when the
    observed ratio is not finite): how finely these scores resolve each of its two rates."""
    p_top, n_top, p_bot, n_bot = _observed_top_first(event, s_in, s_out)
    up, down = _log_ratio_moves(p_top * n_top, n_top, p_bot * n_bot, n_bot, delta=delta, z=z)
    return float(up + down)


def difference_evidence(in_scores, out_scores, *, delta: float = 0.0, direction: Direction = "two-sided") -> float:
    """Largest two-proportion z statistic ``(p_top - delta - p_bottom) / se`` over the selection grid's events.

    How strongly these scores show *any* difference between the two datasets (pooled
    standard error, so every event is on the same noise scale whatever its rate). The
    neighbour search ranks pairs by it when no pair's :func:`predicted_split_bound` is
    positive yet: the pessimistic prediction is then largest for near-full events (both
    rates near 1), whose value reflects the sample size and not the signal. A ranking
    criterion, never a bound.
    """
    return strongest_difference_event(in_scores, out_scores, delta=delta, direction=direction)[0]


def strongest_difference_event(in_scores, out_scores, *, delta: float = 0.0,
                               direction: Direction = "two-sided") -> tuple[float, Event | None]:
    """``(z, event)``: the grid event of :func:`difference_evidence` and its z statistic (``None`` if none).

    Complementary events ({s < t} with d0 on top, {s >= t} with d1 on top) have the same z;
    of events tied on z the one with the larger log ratio ln(p_top / p_bottom) is returned,
    since that is the one whose bound on epsilon is larger.
    """
    s_in = check_scores(in_scores, "in_scores")
    s_out = check_scores(out_scores, "out_scores")
    delta = check_delta(delta)
    thresholds = _threshold_grid(np.concatenate([s_in, s_out]), _SELECTION_GRID)
    zs, ratios, events = [], [], []
    for k_top, n_top, k_bot, n_bot, f in _candidate_table(s_in, s_out, thresholds, _families(direction)):
        p_top, p_bot = np.asarray(k_top) / n_top, np.asarray(k_bot) / n_bot
        pooled = (np.asarray(k_top) + np.asarray(k_bot)) / (n_top + n_bot)
        se = np.sqrt(np.maximum(pooled * (1 - pooled), 0.0) * (1 / n_top + 1 / n_bot))
        with np.errstate(divide="ignore", invalid="ignore"):
            zs.append(np.where(se > 0, (p_top - delta - p_bot) / se, -np.inf))
            ratios.append(np.where(p_bot > 0, np.log(np.maximum(p_top - delta, 0.0)) - np.log(p_bot), np.inf))
        events += [(float(t), f) for t in thresholds]
    z, ratio = np.concatenate(zs), np.concatenate(ratios)
    z_max = float(np.max(z))
    if not np.isfinite(z_max):
        return z_max, None
    tied = np.flatnonzero(z >= z_max - 1e-9 * max(1.0, abs(z_max)))
    t, f = events[int(tied[np.argmax(ratio[tied])])]
    return z_max, Event(t, *_FAMILIES[f])


def top_first(top: int, k_in, n_in, k_out, n_out) -> tuple:
    """``(k_top, n_top, k_bottom, n_bottom)``: the counts in the order an inequality with ``top`` on top reads them."""
    return (k_in, n_in, k_out, n_out) if top == 1 else (k_out, n_out, k_in, n_in)


def expected_event_rates(event: Event, s_in: np.ndarray, s_out: np.ndarray) -> tuple[float, float]:
    """``(rate on d1, rate on d0)`` of ``event`` on these scores, a tied atom counted at its tie fraction."""
    def rate(s):
        s = np.asarray(s, dtype=float)
        if event.tie_fraction is None:
            return float(np.mean(event.indicator(s)))
        strict = s > event.threshold if event.side == "ge" else s < event.threshold
        return float(np.mean(strict) + event.tie_fraction * np.mean(s == event.threshold))
    return rate(s_in), rate(s_out)


def choose_event_test(event: Event, sel_in, sel_out, n_in_eval: int, n_out_eval: int, *, delta: float,
                      alpha: float) -> str:
    """:func:`choose_test` for ``event`` from its rates on the selection scores ``sel_in`` / ``sel_out``."""
    r_in, r_out = expected_event_rates(event, sel_in, sel_out)
    rt, nt, rb, nb = top_first(event.top, r_in, n_in_eval, r_out, n_out_eval)
    return choose_test(rt, rb, nt, nb, delta=delta, alpha=alpha)


def evaluate_event(s_in, s_out, event: Event, *, delta, alpha, n_candidates, method, confidence,
                   coins_in=None, coins_out=None, test: str = "clopper-pearson") -> Estimate:
    """The estimate of one event fixed before these scores were seen: its counts and the bound of ``test``
    at level ``alpha / n_candidates`` (``coins`` decide the tied scores of a randomised event)."""
    k_in = int(np.count_nonzero(event.indicator(s_in, coins_in)))
    k_out = int(np.count_nonzero(event.indicator(s_out, coins_out)))
    val = event_bound(test, *top_first(event.top, k_in, s_in.size, k_out, s_out.size), delta=delta,
                      alpha=alpha / n_candidates)
    return Estimate(
        epsilon_lower_bound=max(0.0, float(val)),
        event=event,
        confidence=confidence,
        delta=delta,
        n_in=s_in.size,
        n_out=s_out.size,
        k_in=k_in,
        k_out=k_out,
        n_candidates=n_candidates,
        method=method,
        test=test,
    )


def event_coins(seed: int, n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    """The uniforms that decide tied scores of a randomised event, from the audit's seed (own stream)."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x7E5]))
    return rng.random(n_in), rng.random(n_out)


# An output space of at most this many values is audited on all trials with every event.
SMALL_SPACE_MAX = 5


def small_space_estimate(values_in, values_out, space, *, delta: float = 0.0, confidence: float = 0.95) -> Estimate:
    """Lower bound on epsilon from outputs in a small, declared output space, on all trials.

    Every event (a nonempty proper subset of ``space``, in both orderings of the pair) is
    a candidate; no selection split is spent. The bound holds simultaneously for all of
    them: for each of the ``m = 2^(k-1) - 1`` subsets ``A`` that exclude the last value,
    two-sided Clopper--Pearson intervals on ``P_d1(A)`` and ``P_d0(A)`` at ``alpha/(4m)``
    per tail hold together with probability >= 1 - alpha, and the interval of a complement
    follows (Clopper--Pearson is symmetric), so each of the ``4m`` inequalities uses one-sided
    bounds at ``alpha/(4m)``: :func:`epsilon_bound_from_counts` at ``alpha/(2m)``.
    ``values_in`` are outputs on d1, ``values_out`` on d0; ``space`` lists the k possible
    values (``2 <= k <=`` :data:`SMALL_SPACE_MAX`).
    """
    space = tuple(space)
    k = len(space)
    if not 2 <= k <= SMALL_SPACE_MAX or len(set(space)) != k:
        raise ValueError(f"space must list 2..{SMALL_SPACE_MAX} distinct values, got {space!r}")
    delta = check_delta(delta)
    confidence = check_confidence(confidence)
    index = {v: i for i, v in enumerate(space)}
    counts = []
    for name, values in (("values_in", values_in), ("values_out", values_out)):
        idx = np.array([index.get(v, -1) for v in values])
        if idx.size == 0:
            raise ValueError(f"{name} must not be empty")
        if np.any(idx < 0):
            bad = values[int(np.flatnonzero(idx < 0)[0])]
            raise ValueError(f"{name} holds {bad!r}, which is not in the declared output space {space!r}")
        counts.append(np.bincount(idx, minlength=k))
    c_in, c_out = counts
    n_in, n_out = int(c_in.sum()), int(c_out.sum())
    subsets = [s for s in range(1, 2 ** k - 1)]  # bit masks of the nonempty proper subsets
    m = 2 ** (k - 1) - 1
    n_candidates = 2 * m
    alpha = 1.0 - confidence
    best = None
    for mask in subsets:
        members = [i for i in range(k) if mask >> i & 1]
        k_in, k_out = int(c_in[members].sum()), int(c_out[members].sum())
        for top in (1, 0):
            args = top_first(top, k_in, n_in, k_out, n_out)
            val = float(epsilon_bound_from_counts(*args, delta=delta, alpha=alpha / n_candidates))
            if best is None or val > best[0]:
                label = "output in {" + ", ".join(repr(space[i]) for i in members) + "}"
                best = (val, Event(0.5, "ge", top, label=label), k_in, k_out)
    val, event, k_in, k_out = best
    method = f"clopper-pearson/all-trials-{k}-values"
    if not val > 0.0:
        return null_estimate(n_in, n_out, delta=delta, confidence=confidence, method=method, n_candidates=n_candidates)
    return Estimate(max(0.0, val), event, confidence, delta, n_in, n_out, k_in, k_out, n_candidates, method)


def null_estimate(n_in, n_out, *, delta, confidence, method, n_candidates=1) -> Estimate:
    """The estimate with no event: a bound of 0, always valid."""
    return Estimate(0.0, None, confidence, delta, n_in, n_out, 0, 0, n_candidates, method)


# ---------------------------------------------------------------------- estimators


def estimate_epsilon(
    in_scores,
    out_scores,
    *,
    delta: float = 0.0,
    confidence: float = 0.95,
    strategy: Strategy | None = None,
    direction: Direction = "two-sided",
    randomize_ties: bool = False,
    seed: int = 0,
) -> Estimate:
    """Lower confidence bound on epsilon from scores on d1 (``in``) and d0 (``out``).

    With :class:`Split`, the first ``fraction`` of each score array selects the event
    and the rest evaluates it: pass the scores in trial order (the trials are i.i.d.,
    so any split fixed in advance is valid). ``randomize_ties`` lets :class:`Split` choose
    a randomised event on tied scores (:class:`Event`), whose coins come from ``seed``.
    """
    s_in = check_scores(in_scores, "in_scores")
    s_out = check_scores(out_scores, "out_scores")
    delta = check_delta(delta)
    confidence = check_confidence(confidence)
    families = _families(direction)
    strategy = Split() if strategy is None else strategy
    alpha = 1.0 - confidence

    if isinstance(strategy, Explicit):
        event = Event(float(strategy.threshold), strategy.side, strategy.top, tie_fraction=strategy.tie_fraction)
        coins = event_coins(seed, s_in.size, s_out.size) if event.tie_fraction is not None else (None, None)
        return evaluate_event(s_in, s_out, event, delta=delta, alpha=alpha, n_candidates=1,
                               method=f"{strategy.test}/explicit", confidence=confidence,
                               coins_in=coins[0], coins_out=coins[1], test=strategy.test)

    if isinstance(strategy, AllThresholds):
        thresholds = _thresholds(np.concatenate([s_in, s_out]))
        # Correct for every event that could have been examined: a data-independent count,
        # so the bound cannot shrink because ties merged thresholds.
        n_candidates = len(families) * (s_in.size + s_out.size + 1)
        candidates = []
        for k_top, n_top, k_bot, n_bot, f in _candidate_table(s_in, s_out, thresholds, families):
            value, i = _shortlist(k_top, n_top, k_bot, n_bot, delta=delta, alpha=alpha / n_candidates)
            candidates.append((value, float(thresholds[i]), f))
        value, threshold, f = _pick(candidates)
        method = "clopper-pearson/all-thresholds"
        if not value > 0.0:
            return null_estimate(s_in.size, s_out.size, delta=delta, confidence=confidence,
                                  method=method, n_candidates=n_candidates)
        return evaluate_event(s_in, s_out, Event(threshold, *_FAMILIES[f]), delta=delta, alpha=alpha,
                               n_candidates=n_candidates, method=method, confidence=confidence)

    if isinstance(strategy, Split):
        n_sel_in = int(math.floor(strategy.fraction * s_in.size))
        n_sel_out = int(math.floor(strategy.fraction * s_out.size))
        if min(n_sel_in, n_sel_out) < 1 or min(s_in.size - n_sel_in, s_out.size - n_sel_out) < 1:
            raise ValueError(
                f"Split(fraction={strategy.fraction}) needs at least one selection and one evaluation score "
                f"on each side; got {s_in.size} in_scores and {s_out.size} out_scores"
            )
        sel_in, ev_in = s_in[:n_sel_in], s_in[n_sel_in:]
        sel_out, ev_out = s_out[:n_sel_out], s_out[n_sel_out:]
        pred, event = best_event(sel_in, sel_out, ev_in.size, ev_out.size, delta=delta, alpha=alpha,
                                      families=families, randomize_ties=randomize_ties)
        if not pred > 0.0:
            # The selection data see nothing to detect: report 0 (always a valid lower bound).
            return null_estimate(ev_in.size, ev_out.size, delta=delta, confidence=confidence,
                                  method=f"clopper-pearson/split({strategy.fraction:g})")
        test = choose_event_test(event, sel_in, sel_out, ev_in.size, ev_out.size, delta=delta, alpha=alpha)
        coins = event_coins(seed, ev_in.size, ev_out.size) if event.tie_fraction is not None else (None, None)
        return evaluate_event(ev_in, ev_out, event, delta=delta, alpha=alpha, n_candidates=1,
                               method=f"{test}/split({strategy.fraction:g})", confidence=confidence,
                               coins_in=coins[0], coins_out=coins[1], test=test)

    raise TypeError(f"strategy must be Split, AllThresholds or Explicit, got {type(strategy).__name__}")


def epsilon_lower_bound(
    in_scores,
    out_scores,
    *,
    delta: float = 0.0,
    confidence: float = 0.95,
    strategy: Strategy | None = None,
    direction: Direction = "two-sided",
) -> float:
    """A ``confidence`` lower confidence bound on epsilon from attack scores.

    ``in_scores`` are scores of outputs on d1, ``out_scores`` on d0 (higher meaning
    "came from d1"). See :func:`estimate_epsilon` for the strategies.
    """
    return estimate_epsilon(
        in_scores, out_scores, delta=delta, confidence=confidence, strategy=strategy, direction=direction
    ).epsilon_lower_bound


def p_value(estimate: Estimate, epsilon: float) -> float:
    """p-value of "the mechanism is (epsilon, delta)-DP" for the estimate's event and counts.

    The smallest alpha at which the (1 - alpha) lower bound on epsilon for this event
    (with the estimate's multiplicity correction) exceeds ``epsilon``; 1 when even the
    point estimate does not exceed it.
    """
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_inclusive=False)
    e = estimate
    if e.event is None:
        return 1.0
    args = top_first(e.event.top, e.k_in, e.n_in, e.k_out, e.n_out)

    def rejects(alpha: float) -> bool:
        return event_rejects(e.test, *args, epsilon=epsilon, delta=e.delta, alpha=alpha / e.n_candidates)

    hi = 1.0 - 1e-12
    if not rejects(hi):
        return 1.0
    lo = 1e-300
    if rejects(lo):
        return lo
    # Bisection in log(alpha): the bound increases with alpha.
    llo, lhi = math.log(lo), math.log(hi)
    for _ in range(200):
        mid = 0.5 * (llo + lhi)
        if rejects(math.exp(mid)):
            lhi = mid
        else:
            llo = mid
        if lhi - llo < 1e-10:
            break
    return float(math.exp(lhi))


def auroc(in_scores, out_scores) -> float:
    """Area under the ROC curve of the scores (probability an in-score beats an out-score, ties 1/2)."""
    s_in = check_scores(in_scores, "in_scores")
    s_out = check_scores(out_scores, "out_scores")
    from scipy.stats import rankdata

    ranks = rankdata(np.concatenate([s_in, s_out]))
    r_in = ranks[: s_in.size].sum()
    return float((r_in - s_in.size * (s_in.size + 1) / 2) / (s_in.size * s_out.size))
