"""Tests of the conditional odds-ratio test of one event's counts (``conditional_epsilon_bound``).

* its level, EXACT, by enumerating both binomial laws on the null boundary (two sample sizes,
  delta = 0 and delta > 0, three epsilons, a grid of nuisance probabilities);
* its conditional law against scipy's ``nchypergeom_fisher``;
* its power against the two Clopper--Pearson bounds where both probabilities are small, and the
  choice between the two tests;
* p-value and bound agree, and an audit whose selection part prefers it reports it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privbound.audit.statistics import (
    Explicit,
    choose_test,
    clopper_pearson_upper,
    conditional_epsilon_bound,
    epsilon_bound_from_counts,
    estimate_epsilon,
    event_bound,
    p_value,
)

ALPHA = 0.05


def _worst_level(n_top, n_bot, delta, eps):
    """max over the null boundary p = e^eps r + delta of P(bound > eps), by enumeration (no simulation)."""
    bounds = np.array([[conditional_epsilon_bound(x, n_top, y, n_bot, delta=delta, alpha=ALPHA)
                        for y in range(n_bot + 1)] for x in range(n_top + 1)])
    exceed = (bounds > eps).astype(float)
    worst = 0.0
    for r in np.linspace(1e-3, (1 - delta) / math.exp(eps), 120):
        px = stats.binom.pmf(np.arange(n_top + 1), n_top, min(1.0, math.exp(eps) * r + delta))
        py = stats.binom.pmf(np.arange(n_bot + 1), n_bot, r)
        worst = max(worst, float(px @ exceed @ py))
    return worst


@pytest.mark.parametrize("n_top,n_bot", [(30, 30), (20, 45)])
@pytest.mark.parametrize("delta", [0.0, 0.05])
def test_level_is_exact_by_enumeration(n_top, n_bot, delta):
    # The null is p <= e^eps r + delta; its boundary is the worst case (the test's tail grows with p
    # and falls with r). Every point of a grid of 120 r per eps is checked exactly. Breaks when the
    # odds ratio is bounded by e^eps alone (level 0.62 and more measured at n = 40), when the tail
    # leaves out the observed count, or when the nuisance interval is not paid for at large p.
    for eps in (0.3, 1.0, 2.0):
        assert _worst_level(n_top, n_bot, delta, eps) <= ALPHA


def test_conditional_law_matches_scipy():
    # The test's tail P_psi(K_top >= k | T) against scipy's Fisher noncentral hypergeometric at the
    # odds ratio the test uses: the bound is the eps at which that tail crosses alpha - gamma.
    from privbound.audit import statistics as E

    k_top, n_top, k_bot, n_bot = 84, 1600, 31, 1600
    eps = conditional_epsilon_bound(k_top, n_top, k_bot, n_bot, delta=0.0, alpha=ALPHA)
    gamma = E._NUISANCE_SHARE * ALPHA
    r_hi = float(E.clopper_pearson_upper(k_bot, n_bot, gamma))
    q = math.exp(eps) * r_hi
    psi = q * (1 - r_hi) / (r_hi * (1 - q))
    tail = stats.nchypergeom_fisher.sf(k_top - 1, n_top + n_bot, n_top, k_top + k_bot, psi)
    assert tail == pytest.approx(ALPHA - gamma, rel=1e-4)


@pytest.mark.parametrize("counts, binding", [((60, 200, 5, 200, 0.05), "r_hi"), ((84, 1600, 31, 1600, 0.01), "r_lo")],
                         ids=["upper-end-binds", "lower-end-binds"])
def test_conditional_law_with_delta_matches_scipy_at_both_ends(counts, binding):
    # delta > 0: the nuisance r is confined to [r_lo, r_hi] by two Clopper-Pearson bounds at gamma / 2 each
    # (r_hi on the bottom count, p_lo on the top count, r_lo = (p_lo - delta) e^-eps), and the odds ratio by the
    # larger of g at the two ends. Recomputed by hand: at the bound, the scipy tail at that odds ratio is
    # alpha - gamma. One case where the upper end gives the larger g, one where the lower end does, so that
    # spending gamma (not gamma / 2) on either bound, or dropping either end, moves the bound.
    from privbound.audit import statistics as E

    k_top, n_top, k_bot, n_bot, delta = counts
    eps = conditional_epsilon_bound(k_top, n_top, k_bot, n_bot, delta=delta, alpha=ALPHA)
    gamma = E._NUISANCE_SHARE * ALPHA
    r_hi = float(E.clopper_pearson_upper(k_bot, n_bot, gamma / 2))
    p_lo = float(E.clopper_pearson_lower(k_top, n_top, gamma / 2))
    r_lo = (p_lo - delta) / math.exp(eps)

    def g(r):
        q = math.exp(eps) * r + delta
        return q * (1 - r) / (r * (1 - q))

    psi = max(g(r_hi), g(r_lo))
    assert (g(r_hi) > g(r_lo)) == (binding == "r_hi")
    tail = stats.nchypergeom_fisher.sf(k_top - 1, n_top + n_bot, n_top, k_top + k_bot, psi)
    assert tail == pytest.approx(ALPHA - gamma, rel=1e-4)


def test_more_power_than_two_clopper_pearson_bounds_on_rare_events():
    # k-ary randomized response (k = 50, eps = 1) found at 1600 evaluation outputs per side: the
    # event {o = d0's value} has rates 0.0526 and 0.0193. The two one-sided Clopper-Pearson bounds
    # (alpha/2 each) give 0.430; judged together, the two counts certify 0.633.
    cp = float(epsilon_bound_from_counts(84, 1600, 31, 1600, delta=0.0, alpha=ALPHA))
    cond = conditional_epsilon_bound(84, 1600, 31, 1600, delta=0.0, alpha=ALPHA)
    assert cp == pytest.approx(0.430, abs=1e-3)
    assert cond == pytest.approx(0.633, abs=1e-3)
    # With delta > 0 the interval for p is two-sided; still above Clopper-Pearson here.
    assert conditional_epsilon_bound(84, 1600, 31, 1600, delta=1e-3, alpha=ALPHA) > float(
        epsilon_bound_from_counts(84, 1600, 31, 1600, delta=1e-3, alpha=ALPHA))


def test_choice_of_test_follows_the_predicted_bound():
    # Rare events: conditional. An event that always occurs on one side and never on the other:
    # Clopper-Pearson certifies more (5.60 vs 4.98 at 1000 per side), as the conditional law given
    # T = 1000 has no room left to tell odds ratios apart.
    assert choose_test(0.0526, 0.0193, 1600, 1600, delta=0.0, alpha=ALPHA) == "conditional"
    assert choose_test(1.0, 0.0, 1000, 1000, delta=0.0, alpha=ALPHA) == "clopper-pearson"
    with pytest.raises(ValueError, match="test must be one of"):
        event_bound("wald", 1, 2, 1, 2, delta=0.0, alpha=ALPHA)
    with pytest.raises(ValueError, match="Explicit.test"):
        Explicit(0.5, test="wald")


def test_no_evidence_gives_no_bound():
    assert conditional_epsilon_bound(0, 100, 0, 100, delta=0.0, alpha=ALPHA) == -math.inf
    assert conditional_epsilon_bound(10, 100, 10, 100, delta=0.0, alpha=ALPHA) == -math.inf
    assert conditional_epsilon_bound(3, 1000, 0, 1000, delta=0.01, alpha=ALPHA) == -math.inf  # p could be <= delta
    # e^eps r_hi >= 1: no event refutes eps there, so the bound stays below log(1/r_hi).
    r_hi = float(clopper_pearson_upper(0, 100, 0.02 * ALPHA))
    assert 0.0 < conditional_epsilon_bound(100, 100, 0, 100, delta=0.0, alpha=ALPHA) < math.log(1 / r_hi)


def test_p_value_and_bound_agree_for_the_conditional_test():
    # An Explicit event with the conditional test: the p-value at the bound is alpha (bisection on
    # both sides), below it smaller, above it larger.
    rng = np.random.default_rng(0)
    s_in = (rng.random(1600) < 0.0526).astype(float)
    s_out = (rng.random(1600) < 0.0193).astype(float)
    est = estimate_epsilon(s_in, s_out, strategy=Explicit(0.5, "ge", 1, test="conditional"))
    assert est.test == "conditional" and est.method == "conditional/explicit"
    b = est.epsilon_lower_bound
    assert b > float(epsilon_bound_from_counts(est.k_in, 1600, est.k_out, 1600, delta=0.0, alpha=ALPHA))
    assert p_value(est, b) == pytest.approx(ALPHA, rel=1e-3)
    assert p_value(est, 0.8 * b) < ALPHA < p_value(est, 1.2 * b)


def test_split_chooses_the_test_on_the_selection_part():
    # Rare-event scores: the selection part predicts more from the conditional test, and the choice
    # is the same whatever the evaluation scores are -- also for evaluation scores on which the choice would be
    # Clopper-Pearson (the last: every d1 score 1, every d0 score 0, as in test_choice_of_test_follows_the_
    # predicted_bound), so a choice that read the evaluation part would show.
    rng = np.random.default_rng(1)
    sel_in = (rng.random(1000) < 0.08).astype(float)
    sel_out = (rng.random(1000) < 0.02).astype(float)
    methods, events = set(), set()
    for trial in range(4):
        r = np.random.default_rng(10 + trial)
        if trial < 3:
            ev_in, ev_out = (r.random(4000) < 0.04 * (trial + 1)).astype(float), (r.random(4000) < 0.02).astype(float)
        else:
            ev_in, ev_out = np.ones(4000), np.zeros(4000)
            assert choose_test(1.0, 0.0, 4000, 4000, delta=0.0, alpha=ALPHA) == "clopper-pearson"
        est = estimate_epsilon(np.r_[sel_in, ev_in], np.r_[sel_out, ev_out], strategy=None)
        methods.add(est.method)
        events.add(est.event)
    assert methods == {"conditional/split(0.2)"} and len(events) == 1
