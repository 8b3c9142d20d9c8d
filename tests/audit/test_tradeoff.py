"""Trade-off curves: the simultaneous band covers the attack's true curve, and the certified curve and the
Gaussian-DP mu are sound, at the stated rate (300 runs each; failure rates stated per test)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from privbound.audit import audit_mechanism, audit_outputs
from privbound.audit.result import joint_confidence
from privbound.audit.tradeoff import (
    MIN_CURVE_OUTPUTS,
    curve_of_event_family,
    curve_thresholds,
    gaussian_tradeoff,
    gdp_mu_lower_bound,
    tradeoff_curve,
)
from privbound.learners.mechanisms import LaplaceMechanism

RUNS = 300
# At most this many of 300 runs may miss when each misses with probability <= 0.05:
# P(Binomial(300, 0.05) > 27) < 1e-3, so a sound band fails this test with probability below 1e-3.
MAX_MISSES = 27


def _gaussian_scores(rng, n, mu):
    """Scores of mu-GDP's canonical pair: N(0, 1) on d0 and N(mu, 1) on d1."""
    return rng.normal(mu, 1.0, n), rng.normal(0.0, 1.0, n)


def test_the_band_covers_the_true_curve_of_the_tests_simultaneously():
    # N(0,1) vs N(mu,1): the threshold test {s >= t} has alpha = 1 - Phi(t), beta = Phi(t - mu) exactly.
    mu, n = 1.0, 4_000
    misses = 0
    for seed in range(RUNS):
        rng = np.random.default_rng(seed)
        sel_in, sel_out = _gaussian_scores(rng, 1_000, mu)
        ev_in, ev_out = _gaussian_scores(rng, n, mu)
        t = curve_thresholds(np.concatenate([sel_in, sel_out]))
        c = tradeoff_curve(ev_in, ev_out, t, confidence=0.95)
        # the curve's points in the order of increasing alpha, i.e. decreasing threshold
        true_alpha = stats.norm.sf(np.sort(t)[::-1])
        true_beta = stats.norm.cdf(np.sort(t)[::-1] - mu)
        inner = slice(1, -1)  # the trivial tests are exact
        covered = (np.all(np.array(c.alpha_lower[inner]) <= true_alpha + 1e-12)
                   and np.all(true_alpha <= np.array(c.alpha_upper[inner]) + 1e-12)
                   and np.all(np.array(c.beta_lower[inner]) <= true_beta + 1e-12)
                   and np.all(true_beta <= np.array(c.beta_upper[inner]) + 1e-12))
        misses += not covered
    assert misses <= MAX_MISSES, f"the band missed the true curve in {misses} of {RUNS} runs (nominal 5%)"


def test_certified_curve_and_mu_are_sound_on_a_gaussian_mechanism():
    # The audit's certified points lie on or above G_mu (the mechanism's trade-off function) and its mu lower
    # bound is at most mu, in all but a nominal 5% of runs.
    mu, n = 1.0, 3_000
    misses, mus = 0, []
    for seed in range(RUNS):
        rng = np.random.default_rng(10_000 + seed)
        out1, out0 = _gaussian_scores(rng, n, mu)
        r = audit_outputs(out0, out1, epsilon=5.0, seed=seed)
        a, b = np.array(r.tradeoff["alpha_upper"]), np.array(r.tradeoff["beta_upper"])
        below = np.any(b < gaussian_tradeoff(a, mu) - 1e-12)
        misses += bool(below or r.mu_lower_bound > mu)
        mus.append(r.mu_lower_bound)
    assert misses <= MAX_MISSES, f"the certified curve fell below G_mu in {misses} of {RUNS} runs"
    assert np.mean(mus) > 0.7 * mu, f"mean mu lower bound {np.mean(mus):.3f} of mu = {mu}: the curve certifies little"


def test_statements_at_their_own_confidences_hold_together_at_bonferronis():
    assert joint_confidence(0.95, 0.96) == pytest.approx(0.91)
    assert joint_confidence(0.99) == pytest.approx(0.99) and joint_confidence(0.5, 0.4) == 0.0


def test_mu_lower_bound_is_the_gaussian_curve_through_the_best_certified_point():
    a, b = np.array([0.01, 0.1, 0.5]), np.array([0.9, 0.5, 0.2])
    want = max(stats.norm.ppf(1 - a) - stats.norm.ppf(b))
    assert gdp_mu_lower_bound(a, b) == pytest.approx(want)
    # G_mu at that mu passes through the maximising point
    i = int(np.argmax(stats.norm.ppf(1 - a) - stats.norm.ppf(b)))
    assert gaussian_tradeoff(a[i], want) == pytest.approx(b[i])
    assert gdp_mu_lower_bound([0.5], [0.6]) == 0.0  # a point above the identity refutes nothing


def test_every_black_box_and_white_box_result_carries_its_curve_in_json():
    r = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials=5_000)
    d = json.loads(r.to_json())
    assert d["tradeoff"]["alpha"][0] == 0.0 and d["tradeoff"]["alpha"][-1] == 1.0
    assert len(d["tradeoff"]["beta_upper"]) == len(d["tradeoff"]["alpha"]) > 10
    assert d["mu_lower_bound"] == pytest.approx(r.mu_lower_bound) and r.mu_lower_bound > 0.5
    mu_line = next(line for line in r.summary().splitlines() if "Gaussian-DP mu" in line)
    # two statements at 96% each (the float attack has 1% of 5%) off the same outputs hold together at 92%
    # (Bonferroni), not at 96%
    assert mu_line.endswith("both at 92.0%)") and f"{r.mu_lower_bound:.4f} at 96.0% confidence" in mu_line
    from privbound.audit.estimators import WhiteBox

    w = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials=5_000,
                        estimator=WhiteBox(lambda o: np.abs(o - 1.0) - np.abs(o)))
    assert w.tradeoff is not None and w.mu_lower_bound > 0.5


def test_the_curve_of_a_family_swaps_null_and_alternative_with_the_top_dataset():
    rng = np.random.default_rng(0)
    s_in, s_out = rng.normal(1, 1, 2000), rng.normal(0, 1, 2000)
    c1 = curve_of_event_family(s_in[:500], s_out[:500], s_in[500:], s_out[500:], side="ge", top=1, confidence=0.95)
    c0 = curve_of_event_family(-s_out[:500], -s_in[:500], -s_out[500:], -s_in[500:], side="lt", top=0,
                               confidence=0.95)
    assert (c1.null, c0.null) == ("d0", "d1")
    assert c1.mu_lower_bound > 0.5 and c0.mu_lower_bound > 0.5


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="side"):
        tradeoff_curve([1.0], [0.0], [0.5], side="gt")
    with pytest.raises(ValueError, match="confidence"):
        tradeoff_curve([1.0], [0.0], [0.5], confidence=1.5)
    with pytest.raises(ValueError, match="thresholds"):
        tradeoff_curve([1.0], [0.0], [np.inf])
    with pytest.raises(ValueError, match="^eval_alt holds 1 NaN"):  # NaN is at least every threshold to numpy
        tradeoff_curve([1.0, np.nan], [0.0, 0.5], [0.5])
    with pytest.raises(ValueError, match="^eval_null holds 1 NaN"):
        tradeoff_curve([1.0], [np.nan], [0.5])
    with pytest.raises(ValueError, match="alpha_upper and beta_upper must be error rates"):
        gdp_mu_lower_bound([np.nan], [0.1])
    with pytest.raises(ValueError, match="one shape"):
        gdp_mu_lower_bound([0.1, 0.2], [0.1])


def test_the_curves_family_is_the_one_chosen_on_the_selection_part(monkeypatch):
    # The band is simultaneous over the thresholds of ONE family; that family must be fixed by the selection
    # part. When the evaluation part certifies nothing (the estimate is the null one, with no event), the curve
    # must still use the family of the event chosen on the selection part, not a default picked after seeing
    # the evaluation. Identical output laws, so most seeds certify nothing.
    from privbound.audit.estimators import BlackBox, black_box

    seen = {}
    choose, family_curve = black_box.choose_on_selection, black_box._family_curve

    def spy_choose(*args, **kwargs):
        seen["choice"] = choose(*args, **kwargs)
        return seen["choice"]

    def spy_curve(attack, sel0, sel1, e_in, e_out, event, confidence):
        seen["event"] = event
        return family_curve(attack, sel0, sel1, e_in, e_out, event, confidence)

    monkeypatch.setattr(black_box, "choose_on_selection", spy_choose)
    monkeypatch.setattr(black_box, "_family_curve", spy_curve)
    nulls = 0
    for seed in range(1, 5):
        rng = np.random.default_rng(seed)
        r = audit_outputs(rng.normal(size=2000), rng.normal(size=2000), epsilon=1.0,
                          estimator=BlackBox(attack="threshold"), seed=0)
        nulls += r.event is None
        assert seen["choice"].event is not None and seen["event"] == seen["choice"].event
    assert nulls >= 3  # the case that matters: nothing certified on the evaluation part


def _area(x, y):
    order = np.argsort(x, kind="stable")
    return float(np.trapezoid(np.asarray(y, float)[order], np.asarray(x, float)[order]))


def test_the_roc_its_auroc_and_the_trade_off_curve_describe_one_test_family_whichever_dataset_is_d0():
    areas = []
    for d0, d1 in ((0.0, 1.0), (1.0, 0.0)):
        r = audit_mechanism(lambda x, rng: x + rng.laplace(scale=0.5), d0, d1, epsilon=1.0, trials=5_000, seed=0,
                            float_audit=False)
        roc, curve = r.details["roc"], r.tradeoff
        assert _area(roc["fpr"], roc["tpr"]) == pytest.approx(r.auroc, abs=0.01)
        assert _area(curve["alpha"], 1.0 - np.asarray(curve["beta"])) == pytest.approx(r.auroc, abs=0.03)
        areas.append(r.auroc)
    assert min(areas) > 0.8 and abs(areas[0] - areas[1]) < 0.03  # it read 0.87 one way and 0.13 the other
    # a weak signal whose event the estimate drops: the ROC keeps the chosen family, as the curve does
    weak = audit_mechanism(lambda x, rng: x + rng.laplace(scale=1 / 0.15), 1.0, 0.0, epsilon=1.0, trials=2_000,
                           seed=4, float_audit=False)
    roc_area = _area(weak.details["roc"]["fpr"], weak.details["roc"]["tpr"])
    curve_area = _area(weak.tradeoff["alpha"], 1.0 - np.asarray(weak.tradeoff["beta"]))
    assert weak.event is None and (roc_area - 0.5) * (curve_area - 0.5) > 0


def test_a_black_box_audit_without_a_selection_split_carries_a_curve_too():
    # AllThresholds evaluates on every trial: the curve's thresholds and direction come from a pilot share, so
    # it is traced whichever dataset is d0 (Laplace of scale 1 at epsilon 1: true mu about 1.03)
    from privbound.audit.estimators import BlackBox
    from privbound.audit.statistics import AllThresholds

    for d0, d1 in ((0.0, 1.0), (1.0, 0.0)):
        r = audit_mechanism(lambda x, rng: x + rng.laplace(scale=1.0), d0, d1, epsilon=1.0, trials=10_000, seed=0,
                            estimator=BlackBox(attack="threshold", strategy=AllThresholds()), float_audit=False)
        assert r.tradeoff is not None and 0.8 < r.mu_lower_bound < 1.03
        assert "Gaussian-DP mu      : >= " in r.summary()


def _rr_mu(epsilon: float) -> float:
    """The smallest mu for which binary randomized response at ``epsilon`` is mu-GDP: its trade-off curve is
    (eps, 0)-DP's, whose kink (p, p), p = 1 / (1 + e^eps), G_mu must pass below (G_mu is convex, the rest are
    chords): mu = 2 Phi^-1(1 - p)."""
    return 2.0 * stats.norm.ppf(1.0 / (1.0 + np.exp(-epsilon)))


def _rr_tradeoff(alpha, epsilon: float) -> np.ndarray:
    """(eps, 0)-DP's trade-off function, binary randomized response's exactly (Dong, Roth & Su, Prop. 2.5)."""
    a = np.asarray(alpha, dtype=float)
    return np.maximum.reduce([np.zeros_like(a), 1.0 - np.exp(epsilon) * a, np.exp(-epsilon) * (1.0 - a)])


def test_an_output_space_audit_carries_a_sound_curve_whichever_dataset_is_d0():
    # Binary randomized response at eps = 1, audited by the output-space estimator (every event on all trials):
    # its curve's certified points lie on or above the mechanism's trade-off function and its mu is at most the
    # mechanism's, in all but a nominal 5% of runs, with either value on d1 (MAX_MISSES of RUNS).
    from privbound.audit.estimators import OutputSpace

    epsilon, n = 1.0, 2_000
    p_flip = 1.0 / (1.0 + np.exp(epsilon))
    for one_on in ("d1", "d0"):
        misses, mus = 0, []
        for seed in range(RUNS):
            rng = np.random.default_rng(20_000 + seed)
            flips0, flips1 = rng.random(n) < p_flip, rng.random(n) < p_flip
            out0, out1 = (flips0.astype(int), (~flips1).astype(int))
            if one_on == "d0":
                out0, out1 = out1, out0
            r = audit_outputs(out0, out1, epsilon=epsilon, estimator=OutputSpace((0, 1)), seed=seed)
            a, b = np.array(r.tradeoff["alpha_upper"]), np.array(r.tradeoff["beta_upper"])
            misses += bool(np.any(b < _rr_tradeoff(a, epsilon) - 1e-12) or r.mu_lower_bound > _rr_mu(epsilon))
            mus.append(r.mu_lower_bound)
        assert misses <= MAX_MISSES, f"{one_on}: the certified curve fell below the true one in {misses} of {RUNS}"
        assert np.mean(mus) > 0.8 * _rr_mu(epsilon), f"{one_on}: mean mu {np.mean(mus):.3f} certifies little"
        assert r.details["roc"]["fpr"][0] == 0.0 and 0.65 < r.auroc < 0.8  # the exact AUROC is 1 - p = 0.731


def test_an_output_space_audit_ranks_a_larger_space_on_its_pilot_share():
    # Three values whose likelihood-ratio order is not the declared order: the pilot share finds it, so the
    # curve certifies the strong event {output = "b"} (exact log ratio 1.5 against 0 and -1.5)
    from privbound.audit.estimators import OutputSpace

    rng = np.random.default_rng(3)
    space = ("a", "b", "c")
    p0, p1 = np.array([0.4, 0.1, 0.5]), np.array([0.4, 0.1 * np.exp(1.5), 0.5 - 0.1 * (np.exp(1.5) - 1)])
    out0, out1 = rng.choice(space, 20_000, p=p0), rng.choice(space, 20_000, p=p1)
    r = audit_outputs(out0, out1, epsilon=2.0, estimator=OutputSpace(space), seed=0)
    first = 1  # the first test past the trivial "never say d1"
    assert r.tradeoff["alpha"][first] == pytest.approx(0.1, abs=0.01)  # {b} alone: P_d0 = 0.1
    assert r.mu_lower_bound > 0.8


def test_a_result_too_small_for_its_curve_says_so():
    from privbound.audit.estimators import WhiteBox

    loss = WhiteBox(lambda o: np.abs(o - 1.0) - np.abs(o))
    small = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials=10, estimator=loss)
    assert small.tradeoff is None and small.mu_lower_bound is None
    reason = json.loads(small.to_json())["details"]["no_tradeoff_curve"]
    assert reason.startswith("fewer than 10 outputs per dataset")
    assert f"Gaussian-DP mu      : - (no trade-off curve: {reason})" in small.summary()
    larger = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials=200, estimator=loss)
    assert "no_tradeoff_curve" not in larger.details and larger.tradeoff is not None
    # a black-box audit's curve needs as many evaluation outputs: 10 trials leave 8 past the 20% selection part
    kw = dict(epsilon=1.0, float_audit=False)
    split = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, trials=10, **kw)
    assert split.n_evaluation == 8 and split.tradeoff is None and split.details["no_tradeoff_curve"] == reason
    assert audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, trials=12, **kw).tradeoff["n_null"] == 10


@pytest.mark.parametrize("small_side", ["in", "out"])
def test_a_curve_needs_its_minimum_of_evaluation_outputs_on_each_side(small_side):
    rng = np.random.default_rng(0)
    small, big = rng.normal(size=MIN_CURVE_OUTPUTS - 1), rng.normal(size=500)
    ev_in, ev_out = (small, big) if small_side == "in" else (big, small)
    assert curve_of_event_family(big, big, ev_in, ev_out, side="ge", top=1, confidence=0.95) is None
    assert curve_of_event_family(big, big, big, big, side="ge", top=1, confidence=0.95) is not None


def _chosen_test_on_its_curve(r) -> bool:
    """Whether the chosen event's (FPR, TPR) is a point of the result's empirical curve, drawn the same way."""
    fpr, power = np.asarray(r.tradeoff["alpha"]), 1.0 - np.asarray(r.tradeoff["beta"])
    i = int(np.argmin(np.abs(fpr - r.fpr)))
    return abs(fpr[i] - r.fpr) < 0.01 and abs(power[i] - r.tpr) < 0.02


def test_a_curve_without_a_selection_split_is_drawn_the_way_its_chosen_event_is():
    # The chosen events here have d0 on top (d0 says "1" more rarely; d0's scores are wider): the curve must take
    # d0 as its alternative too, else the report draws the chosen test far off its own curve and band.
    from privbound.audit.estimators import BlackBox, OutputSpace
    from privbound.audit.statistics import AllThresholds

    def rarely_zero_on_d1(x, rng):
        return 0 if rng.random() < (0.3 if x == 0 else 0.05) else 1

    space = audit_mechanism(rarely_zero_on_d1, 0, 1, epsilon=1.0, trials=20_000, seed=0,
                            estimator=OutputSpace((0, 1)))
    wide = audit_mechanism(lambda x, rng: rng.normal(scale=2.0 - x), 0, 1, epsilon=1.0, delta=1e-5, trials=20_000,
                           seed=0, estimator=BlackBox(attack="threshold", strategy=AllThresholds()),
                           float_audit=False)
    for r in (space, wide):
        assert r.event.startswith("P_d0(") and r.tradeoff["alternative"] == "d0", r.event
        assert _chosen_test_on_its_curve(r), (r.fpr, r.tpr, r.tradeoff["alpha"][:6])


def _exact_tradeoff(p_null: np.ndarray, p_alt: np.ndarray):
    """The trade-off function of a discrete pair (Neyman--Pearson: outcomes by decreasing likelihood ratio, the
    randomised tests between), as its kinks ``(alpha, beta)``."""
    order = np.argsort(-(np.log(p_alt) - np.log(p_null)))
    return np.r_[0.0, np.cumsum(p_null[order])], np.r_[1.0, 1.0 - np.cumsum(p_alt[order])]


def test_an_output_space_curve_is_sound_on_an_asymmetric_law():
    # Three values whose trade-off function is not symmetric (unlike binary randomized response), so a curve drawn
    # the wrong way round, or ranked on the outputs it is measured on, would show: its certified points lie on or
    # above the exact trade-off function of its own orientation, and its mu is at most the pair's, in all but a
    # nominal 5% of runs (MAX_MISSES of RUNS).
    from privbound.audit.estimators import OutputSpace

    p0, p1 = np.array([0.6, 0.3, 0.1]), np.array([0.2, 0.3, 0.5])
    curves = {"d0": _exact_tradeoff(p0, p1), "d1": _exact_tradeoff(p1, p0)}  # keyed by the null
    mu_true = max(float(np.max(stats.norm.ppf(1 - a[1:-1]) - stats.norm.ppf(b[1:-1]))) for a, b in curves.values())
    misses, mus, n = 0, [], 2_000
    for seed in range(RUNS):
        rng = np.random.default_rng(30_000 + seed)
        out0, out1 = rng.choice(3, n, p=p0), rng.choice(3, n, p=p1)
        r = audit_outputs(out0, out1, epsilon=5.0, estimator=OutputSpace((0, 1, 2)), seed=seed)
        a, b = np.array(r.tradeoff["alpha_upper"]), np.array(r.tradeoff["beta_upper"])
        kinks_a, kinks_b = curves[r.tradeoff["null"]]
        misses += bool(np.any(b < np.interp(a, kinks_a, kinks_b) - 1e-12) or r.mu_lower_bound > mu_true)
        mus.append(r.mu_lower_bound)
    assert misses <= MAX_MISSES, f"the certified curve fell below the true one in {misses} of {RUNS} runs"
    assert np.mean(mus) > 0.8 * mu_true, f"mean mu {np.mean(mus):.3f} of {mu_true:.3f}: the curve certifies little"


def test_a_curve_that_refutes_nothing_says_so_instead_of_mu_at_least_zero():
    # identical output laws: the certified curve refutes no mu > 0, and ">= 0.0000" would read as a measurement
    r = audit_mechanism(lambda x, rng: rng.laplace(), 0.0, 1.0, epsilon=1.0, trials=2_000, seed=0, float_audit=False)
    assert r.mu_lower_bound == 0.0
    assert "Gaussian-DP mu      : - (the certified trade-off curve refutes no mu > 0 at 95.0% confidence)" in r.summary()
    assert ">= 0.0000" not in r.summary()
