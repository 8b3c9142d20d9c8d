"""Tests of the epsilon estimators ``audit/statistics.py``.

* Clopper--Pearson bounds: closed forms at the extremes, agreement with an
  independent implementation (statsmodels), and EXACT coverage by enumeration of
  the binomial law (plus a seeded simulation).
* epsilon bounds from counts: hand-derived values.
* hypothesis properties of the bound (>= 0; invariance to strictly increasing
  transforms of the scores; symmetry of the two-sided bound in swapping the
  samples; monotonicity when the samples are pulled apart, for a fixed event and for
  ``AllThresholds`` with ``direction="in-above"``), and a recorded counterexample
  showing that the data-split ``Split`` strategy is NOT monotone.
* bad input.

Statistical tests fix their seeds and state their false-failure rate.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from privbound.audit.statistics import (
    AllThresholds,
    Explicit,
    Split,
    auroc,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_bound_from_counts,
    epsilon_lower_bound,
    estimate_epsilon,
    p_value,
)

# derandomize: the examples are a fixed function of the test, so CI runs are reproducible.
HYP = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

# --------------------------------------------------------------------- Clopper-Pearson


@pytest.mark.parametrize("n", [1, 7, 100, 5_000])
@pytest.mark.parametrize("a", [0.05, 0.001])
def test_clopper_pearson_closed_forms_at_the_extremes(n, a):
    # k = n: the lower bound p solves P(Bin(n, p) >= n) = p^n = a, so p = a^(1/n).
    # k = 0: the upper bound p solves P(Bin(n, p) <= 0) = (1 - p)^n = a, so p = 1 - a^(1/n).
    assert clopper_pearson_lower(n, n, a) == pytest.approx(a ** (1 / n), rel=1e-10)
    assert clopper_pearson_upper(0, n, a) == pytest.approx(1 - a ** (1 / n), rel=1e-10)
    assert clopper_pearson_lower(0, n, a) == 0.0
    assert clopper_pearson_upper(n, n, a) == 1.0


def test_clopper_pearson_matches_statsmodels():
    # statsmodels' two-sided "beta" (Clopper-Pearson) interval at level 2a has one-sided
    # a bounds at its ends: an independent implementation of the same definition.
    k = np.array([1, 3, 10, 50, 99])
    n = 100
    for a in (0.025, 0.001):
        lo, hi = proportion_confint(k, n, alpha=2 * a, method="beta")
        np.testing.assert_allclose(clopper_pearson_lower(k, n, a), lo, rtol=1e-9)
        np.testing.assert_allclose(clopper_pearson_upper(k, n, a), hi, rtol=1e-9)


@pytest.mark.parametrize("n", [20, 200])
def test_clopper_pearson_exact_coverage_and_sharpness(n):
    # Exact non-coverage by enumeration: miss(p) = sum_k Bin(k; n, p) [bound(k) on the wrong side of p].
    # Clopper-Pearson guarantees miss(p) <= a for every p; it is also sharp: just
    # below each bound value p = L(k), miss(p) = P(K >= k) which approaches a, so the
    # supremum over a fine grid must come close to a (we require >= 0.8 a for n = 20
    # and 200, where the binomial lattice is fine enough).
    a = 0.05
    k = np.arange(n + 1)
    lower = clopper_pearson_lower(k, n, a)
    upper = clopper_pearson_upper(k, n, a)
    # grid: the bound values themselves, nudged just above/below, plus a uniform grid
    grid = np.unique(np.clip(np.concatenate([lower * (1 + 1e-9), upper * (1 - 1e-9),
                                             np.linspace(0.001, 0.999, 999)]), 1e-6, 1 - 1e-6))
    pmf = stats.binom.pmf(k[None, :], n, grid[:, None])
    miss_lower = (pmf * (lower[None, :] > grid[:, None])).sum(axis=1)
    miss_upper = (pmf * (upper[None, :] < grid[:, None])).sum(axis=1)
    assert miss_lower.max() <= a + 1e-9
    assert miss_upper.max() <= a + 1e-9
    assert miss_lower.max() >= 0.8 * a
    assert miss_upper.max() >= 0.8 * a


def test_clopper_pearson_simulated_coverage():
    # 20_000 simulated Bin(300, 0.3) counts; the one-sided 95% lower bound must cover
    # 0.3 in at least 95% of them. The exact miss rate m <= 0.05 (previous test); we
    # reject only when the observed misses exceed the 1 - 1e-4 quantile of Bin(20_000, 0.05)
    # (false-failure rate <= 1e-4 when the bound is valid).
    rng = np.random.default_rng(12345)
    counts = rng.binomial(300, 0.3, size=20_000)
    misses = int((clopper_pearson_lower(counts, 300, 0.05) > 0.3).sum())
    assert misses <= stats.binom.ppf(1 - 1e-4, 20_000, 0.05)
    misses_up = int((clopper_pearson_upper(counts, 300, 0.05) < 0.3).sum())
    assert misses_up <= stats.binom.ppf(1 - 1e-4, 20_000, 0.05)


# --------------------------------------------------------------------- epsilon from counts


def test_epsilon_bound_from_counts_hand_value():
    # All n top trials in the event, none of the n bottom ones: with a = alpha/2 per side,
    # lower = a^(1/n), upper = 1 - a^(1/n), so eps_lb = ln(a^(1/n) / (1 - a^(1/n))).
    n, alpha = 50, 0.05
    a = alpha / 2
    expected = math.log(a ** (1 / n) / (1 - a ** (1 / n)))
    assert float(epsilon_bound_from_counts(n, n, 0, n, delta=0.0, alpha=alpha)) == pytest.approx(expected, rel=1e-10)
    # with delta: ln((a^(1/n) - delta) / (1 - a^(1/n)))
    d = 0.1
    expected_d = math.log((a ** (1 / n) - d) / (1 - a ** (1 / n)))
    assert float(epsilon_bound_from_counts(n, n, 0, n, delta=d, alpha=alpha)) == pytest.approx(expected_d, rel=1e-10)
    # lower bound on the top probability below delta: no information, -inf
    assert float(epsilon_bound_from_counts(0, n, 0, n, delta=0.0, alpha=alpha)) == -math.inf


def test_explicit_estimate_counts_and_value():
    # in = 1..10, out = 0..9, event {s >= 5} with d1 on top: k_in = 6 (5..10), k_out = 5 (5..9).
    s_in = np.arange(1, 11, dtype=float)
    s_out = np.arange(0, 10, dtype=float)
    est = estimate_epsilon(s_in, s_out, strategy=Explicit(5.0, "ge", 1), confidence=0.5)
    assert (est.k_in, est.k_out, est.n_in, est.n_out, est.n_candidates) == (6, 5, 10, 10, 1)
    lo = stats.beta.ppf(0.25, 6, 10 - 6 + 1)  # CP lower of 6/10 at 0.25
    hi = stats.beta.ppf(0.75, 5 + 1, 10 - 5)  # CP upper of 5/10 at 0.25
    assert est.epsilon_lower_bound == pytest.approx(max(0.0, math.log(lo / hi)), abs=1e-12)


def test_all_thresholds_correction_count():
    # Bonferroni over every threshold event: 4 families x (n_in + n_out + 1) thresholds
    # (every distinct value plus +inf), data-independent.
    est = estimate_epsilon(np.r_[np.ones(30), 2 * np.ones(10)], np.zeros(20), strategy=AllThresholds())
    assert est.n_candidates == 4 * (40 + 20 + 1)
    est2 = estimate_epsilon(np.ones(40), np.zeros(20), strategy=AllThresholds(), direction="in-above")
    assert est2.n_candidates == 2 * (40 + 20 + 1)


def test_perfect_separation_gives_the_all_in_all_out_bound():
    # in all 1, out all 0, Explicit {s >= 0.5}: k_in = n, k_out = 0 -> the closed form above.
    n = 200
    est = estimate_epsilon(np.ones(n), np.zeros(n), strategy=Explicit(0.5))
    a = 0.025
    assert est.epsilon_lower_bound == pytest.approx(math.log(a ** (1 / n) / (1 - a ** (1 / n))), rel=1e-10)
    assert p_value(est, est.epsilon_lower_bound * 0.99) <= 0.05
    assert p_value(est, est.epsilon_lower_bound * 1.01) > 0.05


def test_p_value_matches_the_confidence_bound():
    # p-value of "eps-DP": the smallest alpha with lb(alpha) > eps; so lb at confidence
    # 1 - p equals eps (continuity of the CP bounds in alpha).
    s_in = np.r_[np.ones(60), np.zeros(40)]
    s_out = np.r_[np.ones(20), np.zeros(80)]
    est = estimate_epsilon(s_in, s_out, strategy=Explicit(0.5), confidence=0.95)
    eps = 0.5
    p = p_value(est, eps)
    assert 0.0 < p < 1.0
    lb_at_p = epsilon_lower_bound(s_in, s_out, strategy=Explicit(0.5), confidence=1 - p)
    assert lb_at_p == pytest.approx(eps, abs=1e-6)


def test_auroc_hand_values():
    assert auroc([1.0, 2.0], [0.0, 0.5]) == 1.0
    assert auroc([0.0], [1.0]) == 0.0
    assert auroc([1.0, 1.0], [1.0, 1.0]) == 0.5  # all ties count 1/2


# --------------------------------------------------------------------- hypothesis properties

small_ints = st.lists(st.integers(min_value=-4, max_value=4), min_size=10, max_size=60)
floats = st.lists(st.floats(min_value=-50, max_value=50, allow_nan=False, width=32), min_size=10, max_size=60)
strategies = st.sampled_from([Split(), Split(0.5), AllThresholds()])
directions = st.sampled_from(["two-sided", "in-above", "in-below"])
deltas = st.sampled_from([0.0, 1e-3, 0.1])
confidences = st.sampled_from([0.5, 0.9, 0.95])

# Strictly increasing AND injective on the integers -4..4 in floating point (exact or
# well separated values), so ties are preserved exactly.
TRANSFORMS = {
    "affine": lambda x: 3.0 * x + 7.0,
    "exp": lambda x: np.exp(x / 2.0),
    "cubic": lambda x: x**3 + x,
    "arctan": lambda x: np.arctan(x),
}


@HYP
@given(a=floats, b=floats, strategy=strategies, direction=directions, delta=deltas, conf=confidences)
def test_bound_is_nonnegative_and_finite(a, b, strategy, direction, delta, conf):
    lb = epsilon_lower_bound(a, b, strategy=strategy, direction=direction, delta=delta, confidence=conf)
    assert lb >= 0.0 and math.isfinite(lb)


@HYP
@given(a=small_ints, b=small_ints, strategy=strategies, direction=directions,
       transform=st.sampled_from(sorted(TRANSFORMS)), conf=confidences)
def test_bound_invariant_to_strictly_increasing_transforms(a, b, strategy, direction, transform, conf):
    f = TRANSFORMS[transform]
    a, b = np.array(a, float), np.array(b, float)
    x = epsilon_lower_bound(a, b, strategy=strategy, direction=direction, confidence=conf)
    y = epsilon_lower_bound(f(a), f(b), strategy=strategy, direction=direction, confidence=conf)
    assert x == y


@HYP
@given(a=small_ints, b=small_ints, t=st.integers(-4, 5), side=st.sampled_from(["ge", "lt"]),
       top=st.sampled_from([0, 1]), transform=st.sampled_from(sorted(TRANSFORMS)))
def test_explicit_invariant_when_the_threshold_is_transformed_too(a, b, t, side, top, transform):
    f = TRANSFORMS[transform]
    a, b = np.array(a, float), np.array(b, float)
    x = epsilon_lower_bound(a, b, strategy=Explicit(float(t), side, top))
    y = epsilon_lower_bound(f(a), f(b), strategy=Explicit(float(f(np.float64(t))), side, top))
    assert x == y


@HYP
@given(a=floats, b=floats, strategy=strategies, delta=deltas, conf=confidences)
def test_two_sided_bound_symmetric_in_swapping_the_samples(a, b, strategy, delta, conf):
    x = epsilon_lower_bound(a, b, strategy=strategy, delta=delta, confidence=conf)
    y = epsilon_lower_bound(b, a, strategy=strategy, delta=delta, confidence=conf)
    assert x == y


@HYP
@given(a=floats, b=floats, t=st.floats(-50, 50, width=32), side=st.sampled_from(["ge", "lt"]),
       top=st.sampled_from([0, 1]))
def test_explicit_swap_is_the_mirror_event(a, b, t, side, top):
    # Swapping d0 and d1 and the role of the top dataset tests the same inequality.
    x = epsilon_lower_bound(a, b, strategy=Explicit(t, side, top))
    y = epsilon_lower_bound(b, a, strategy=Explicit(t, side, 1 - top))
    assert x == y


@HYP
@given(a=floats, b=floats, t=st.floats(-50, 50, width=32), event=st.sampled_from([("ge", 1), ("lt", 0)]),
       up=st.floats(0, 10, width=32), down=st.floats(0, 10, width=32), delta=deltas)
def test_fixed_event_bound_never_decreases_when_samples_pulled_apart(a, b, t, event, up, down, delta):
    # For the "in-above" events {s >= t} (d1 on top) and {s < t} (d0 on top), shifting
    # in-scores up and out-scores down can only raise the top count and lower the bottom
    # count; the CP lower bound increases in k_top and the upper bound in k_bottom.
    a, b = np.array(a, float), np.array(b, float)
    strat = Explicit(t, *event)
    x = epsilon_lower_bound(a, b, strategy=strat, delta=delta)
    y = epsilon_lower_bound(a + up, b - down, strategy=strat, delta=delta)
    assert y >= x


@HYP
@given(a=floats, b=floats, up=st.floats(0, 10, width=32), delta=deltas, conf=confidences)
def test_all_thresholds_in_above_never_decreases_when_in_scores_shift_up(a, b, up, delta, conf):
    # For every real t, k_in(>= t) can only grow when the in-scores move up, and the
    # Bonferroni count 2 (n_in + n_out + 1) does not change; the sup over t of a bound
    # increasing in k_top and decreasing in k_bottom is attained at data points, so the
    # maximum over the candidate thresholds cannot decrease.
    a, b = np.array(a, float), np.array(b, float)
    x = epsilon_lower_bound(a, b, strategy=AllThresholds(), direction="in-above", delta=delta, confidence=conf)
    y = epsilon_lower_bound(a + up, b, strategy=AllThresholds(), direction="in-above", delta=delta,
                            confidence=conf)
    assert y >= x


@settings(max_examples=15, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(200, 700), up=st.floats(0, 1))
def test_all_thresholds_in_above_monotone_on_the_shortlist_path(seed, n, up):
    # More than 4 * 64 candidate thresholds: the exact bound is computed on a Wilson
    # shortlist only; the property must survive that shortcut too.
    rng = np.random.default_rng(seed)
    a = rng.laplace(size=n) + 1.0
    b = rng.laplace(size=n)
    x = epsilon_lower_bound(a, b, strategy=AllThresholds(), direction="in-above")
    y = epsilon_lower_bound(a + up, b, strategy=AllThresholds(), direction="in-above")
    assert y >= x


def test_split_is_not_monotone_counterexample():
    """Documented limitation: the Split strategy selects its event on the first part of
    the data, so moving the in-scores up can change the selected event to one that does
    worse on the evaluation part. Found by random search; recorded here.

    Split(0.5), 7 scores per side -> 3 selection + 4 evaluation scores each.
    Before the shift: selection in = [3, 2, 3], out = [1, 1, 3]; the event {s < 2} with d0
    on top is chosen (2 of 3 out-scores below 2, none of the in-scores); on evaluation
    out = [1, 1, 1, 3] has 3/4 below 2 and in = [2, 2, 3, 2] has 0/4: a positive bound.
    After in += 1: selection in = [4, 3, 4] makes the tail event {s >= 4} (d1 on top) look
    better (2 of 3 in-scores, no out-score reach 4), so it is chosen; on evaluation only
    1 of in = [3, 3, 4, 3] reaches 4 and the bound drops to 0.
    """
    a = np.array([3.0, 2.0, 3.0, 2.0, 2.0, 3.0, 2.0])
    b = np.array([1.0, 1.0, 3.0, 1.0, 1.0, 1.0, 3.0])
    kw = dict(strategy=Split(0.5), direction="in-above", confidence=0.5)
    before = estimate_epsilon(a, b, **kw)
    after = estimate_epsilon(a + 1.0, b, **kw)
    assert before.epsilon_lower_bound > 0.4  # 0.443...: positive evidence before the shift
    assert after.epsilon_lower_bound < before.epsilon_lower_bound  # the counterexample
    assert after.epsilon_lower_bound == 0.0
    assert (before.event.threshold, before.event.side, before.event.top) == (2.0, "lt", 0)
    assert (before.k_in, before.k_out) == (0, 3)
    assert (after.event.threshold, after.event.side, after.event.top) == (4.0, "ge", 1)
    assert (after.k_in, after.k_out) == (1, 0)
    # The same shift never hurts AllThresholds (property above) on this example.
    x = epsilon_lower_bound(a, b, strategy=AllThresholds(), direction="in-above", confidence=0.5)
    y = epsilon_lower_bound(a + 1.0, b, strategy=AllThresholds(), direction="in-above", confidence=0.5)
    assert y >= x


# --------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "in_scores, out_scores, exc, pattern",
    [
        ([], [1.0, 2.0], ValueError, "in_scores must not be empty"),
        ([1.0, 2.0], [], ValueError, "out_scores must not be empty"),
        ([1.0, np.nan], [1.0, 2.0], ValueError, "in_scores must be finite; entry 1"),
        ([1.0, 2.0], [np.inf, 2.0], ValueError, "out_scores must be finite; entry 0"),
        ([[1.0, 2.0]], [1.0, 2.0], ValueError, "in_scores must be 1-dimensional"),
        (["a", "b"], [1.0, 2.0], TypeError, "in_scores must be a 1-d array of real scores"),
    ],
)
def test_bad_scores(in_scores, out_scores, exc, pattern):
    with pytest.raises(exc, match=pattern):
        epsilon_lower_bound(in_scores, out_scores)


@pytest.mark.parametrize(
    "kwargs, exc, pattern",
    [
        (dict(delta=-0.1), ValueError, r"delta must be in \[0.0, 1.0\)"),
        (dict(delta=1.0), ValueError, "delta"),
        (dict(delta=float("nan")), ValueError, "delta must be finite"),
        (dict(confidence=0.0), ValueError, r"confidence must be in \(0.0, 1.0\)"),
        (dict(confidence=1.0), ValueError, "confidence"),
        (dict(confidence=1.5), ValueError, "confidence"),
        (dict(confidence="high"), TypeError, "confidence must be a real number"),
        (dict(direction="up"), ValueError, "direction must be one of"),
        (dict(strategy="split"), TypeError, "strategy must be Split, AllThresholds or Explicit"),
    ],
)
def test_bad_estimator_arguments(kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        epsilon_lower_bound(np.arange(20.0), np.arange(20.0), **kwargs)


def test_bad_strategy_parameters():
    with pytest.raises(ValueError, match="Split.fraction"):
        Split(0.0)
    with pytest.raises(ValueError, match="Split.fraction"):
        Split(1.0)
    with pytest.raises(ValueError, match="Explicit.side"):
        Explicit(0.0, side="gt")
    with pytest.raises(ValueError, match="Explicit.top"):
        Explicit(0.0, top=2)
    with pytest.raises(ValueError, match=r"Split\(fraction=0.2\) needs at least one selection"):
        epsilon_lower_bound([1.0, 2.0], [0.0, 1.0])  # floor(0.2 * 2) = 0 selection scores


# --------------------------------------------------------------------- N-dependent split (opt-in)


@pytest.mark.parametrize(
    "n, kwargs, m",
    [
        # n <= pivot: floor(0.2 n), i.e. Split(0.2)'s selection size.
        (1_000, {}, 200),
        (10_000, {}, 2_000),
        # n > pivot: ceil(0.2 * 1e4^(1/2) * n^(1/2)) = ceil(20 sqrt(n)):
        # 20 sqrt(1e5) = 6324.555... -> 6325; 20 sqrt(1e6) = 20000 exactly.
        (100_000, {}, 6_325),
        (1_000_000, {}, 20_000),
        # exponent 0.75, pivot 1e4: 0.2 * 1e4^(1/4) * 1e6^(3/4) = 0.2 * 10 * 31622.776... = 63245.55... -> 63246
        (1_000_000, dict(exponent=0.75), 63_246),
        # pivot 100, N = 1000: ceil(0.2 * 10 * sqrt(1000)) = ceil(63.2455...) = 64
        (1_000, dict(pivot=100), 64),
        # exponent 1 is the fixed fraction again: ceil(0.2 * 1e6) = 200000
        (1_000_000, dict(exponent=1.0), 200_000),
        # the cap: at least one evaluation trial (base 0.9, n = 2: floor(1.8) = 1 = n - 1)
        (2, dict(base=0.9), 1),
    ],
)
def test_split_for_trials_selection_sizes(n, kwargs, m):
    assert Split.selection_size(n, **kwargs) == m
    split = Split.for_trials(n, **kwargs)
    # The fraction (m + 1/2) / n must reproduce exactly m selection trials under floor(fraction * n),
    # which is how estimate_epsilon and audit_outputs cut the scores.
    assert math.floor(split.fraction * n) == m
    rng = np.random.default_rng(0)
    est = estimate_epsilon(rng.normal(size=n) + 5.0, rng.normal(size=n), strategy=split) if n >= 10 else None
    if est is not None:
        assert (est.n_in, est.n_out) == (n - m, n - m)  # evaluated on exactly the other n - m trials


def test_split_for_trials_bad_arguments():
    with pytest.raises(ValueError, match=r"n must be an integer in \[2, inf\]"):
        Split.for_trials(1)
    with pytest.raises(TypeError, match="n must be an integer"):
        Split.for_trials(1e5)
    with pytest.raises(ValueError, match="base"):
        Split.for_trials(1000, base=1.0)
    with pytest.raises(ValueError, match="exponent"):
        Split.for_trials(1000, exponent=1.5)
    with pytest.raises(ValueError, match="pivot"):
        Split.for_trials(1000, pivot=0)


def test_split_for_trials_is_sound_with_a_small_selection_part():
    # Soundness of the N-dependent rule where it differs from Split(0.2): pivot = 100 at
    # N = 1000 gives a 64-trial selection part (6.4%, hand value above). 300 independent
    # Laplace(scale 1) score pairs at locations 0 and 1 (TRUE epsilon exactly 1, delta 0),
    # bound at 95% confidence: each exceeds 1 with probability <= 0.05. Fail only if the
    # count exceeds the 0.999 quantile of Bin(300, 0.05) (= 28): false-failure rate <= 1e-3.
    n, audits = 1_000, 300
    split = Split.for_trials(n, pivot=100)
    rng = np.random.default_rng(20240607)
    bounds = []
    for _ in range(audits):
        s_in = rng.laplace(1.0, 1.0, size=n)
        s_out = rng.laplace(0.0, 1.0, size=n)
        bounds.append(epsilon_lower_bound(s_in, s_out, strategy=split))
    flags = int(np.sum(np.array(bounds) > 1.0))
    assert flags <= stats.binom.ppf(1 - 1e-3, audits, 0.05), f"{flags}/{audits} bounds above the true epsilon"
    assert np.mean(bounds) > 0.3  # not vacuous: the rule still detects a 1-DP difference at N = 1000


def test_p_value_bad_epsilon():
    est = estimate_epsilon(np.ones(20), np.zeros(20), strategy=Explicit(0.5))
    for bad in (0.0, -1.0, float("inf")):
        with pytest.raises(ValueError, match="epsilon"):
            p_value(est, bad)


# ------------------------------------------------------------------ pinned values (Bonferroni, p-value)


def _cp_bound_by_hand(k_top, n_top, k_bot, n_bot, alpha_event):
    """ln(CP_lo / CP_hi) with scipy's beta quantiles, each one-sided at alpha_event / 2."""
    lo = stats.beta.ppf(alpha_event / 2, k_top, n_top - k_top + 1)
    hi = stats.beta.ppf(1 - alpha_event / 2, k_bot + 1, n_bot - k_bot)
    return math.log(lo / hi)


@pytest.mark.parametrize("swap", [False, True])
def test_all_thresholds_bound_pinned_by_hand_in_both_orderings(swap):
    # in: 300 ones of 500, out: 100 ones of 500. Best event {s >= 1} with d1 on top (or its mirror after the
    # swap): counts 300/500 vs 100/500, Bonferroni over 4 x (500 + 500 + 1) = 4004 events at alpha = 0.05.
    s_in, s_out = np.r_[np.ones(300), np.zeros(200)], np.r_[np.ones(100), np.zeros(400)]
    if swap:
        s_in, s_out = s_out, s_in
    est = estimate_epsilon(s_in, s_out, strategy=AllThresholds(), confidence=0.95)
    expected = _cp_bound_by_hand(300, 500, 100, 500, 0.05 / 4004)
    assert est.n_candidates == 4004 and expected > 0.5
    assert est.epsilon_lower_bound == pytest.approx(expected, rel=1e-9)
    # without the correction the bound would be larger: the pin has teeth
    assert _cp_bound_by_hand(300, 500, 100, 500, 0.05) > expected + 0.1


@pytest.mark.parametrize("swap", [False, True])
def test_p_value_pinned_by_hand_with_the_correction_in_both_orderings(swap):
    from scipy import optimize

    s_in, s_out = np.r_[np.ones(300), np.zeros(200)], np.r_[np.ones(100), np.zeros(400)]
    if swap:
        s_in, s_out = s_out, s_in
    est = estimate_epsilon(s_in, s_out, strategy=AllThresholds(), confidence=0.95)
    eps = 0.5
    # the p-value is the alpha at which the corrected bound equals eps: solve with scipy by hand
    alpha = optimize.brentq(lambda a: _cp_bound_by_hand(300, 500, 100, 500, a / 4004) - eps, 1e-12, 0.999)
    assert p_value(est, eps) == pytest.approx(alpha, rel=1e-6)
    uncorrected = optimize.brentq(lambda a: _cp_bound_by_hand(300, 500, 100, 500, a) - eps, 1e-15, 0.999)
    assert p_value(est, eps) > 100 * uncorrected


def test_split_choice_never_depends_on_the_evaluation_scores():
    # The selection part is the first 20% of each side; whatever the other 80% hold, the event is the same.
    rng = np.random.default_rng(11)
    sel_in, sel_out = rng.laplace(size=200) + 1.0, rng.laplace(size=200)
    events = set()
    for t in range(6):
        r = np.random.default_rng(100 + t)
        ev_in = r.normal(size=800) * (t + 1) + t
        ev_out = r.uniform(-5, 5, size=800)
        est = estimate_epsilon(np.r_[sel_in, ev_in], np.r_[sel_out, ev_out], strategy=Split(0.2))
        events.add((est.event.threshold, est.event.side, est.event.top))
    assert len(events) == 1
