"""Tests of privbound.audit.one_run: one-run auditing (Steinke, Nasr & Jagielski 2023; Mahloujifar et al. 2024)."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from scipy import stats

from privbound.audit.one_run import (
    default_guess_grid,
    fdp_one_run_epsilon_lower_bound,
    guesses_from_scores,
    one_run_audit,
    one_run_audit_target,
    one_run_epsilon_lower_bound,
    one_run_p_value,
)
from privbound.audit.targets.reference import LaplaceInvertedScale
from privbound.audit.targets import Target
from privbound.learners.mechanisms import LaplaceMechanism

# Soundness acceptance rule: 300 runs at confidence 0.95, fail when more than 25 exceed the true epsilon;
# false-failure probability P(Bin(300, .05) > 25) = 0.0068 if the procedure holds its level.
RUNS, M, MAX_EXCEED = 300, 1000, 25


def test_p_value_single_guess_is_randomized_response_accuracy():
    # SNJ Thm 3.1 with delta = 0: W ~< Bin(r, e^eps/(1+e^eps)); r = v = 1 gives P[W >= 1] = e^eps/(1+e^eps).
    assert one_run_p_value(10, 1, 1, 1.0) == pytest.approx(math.exp(1) / (1 + math.exp(1)), rel=1e-12)
    # r = v = 2: q^2.
    q = 1 / (1 + math.exp(-0.7))
    assert one_run_p_value(10, 2, 2, 0.7) == pytest.approx(q * q, rel=1e-12)


def test_p_value_with_delta_by_hand():
    # m = 10, r = v = 2, eps = 0: q = 1/2, beta = P[Bin(2,1/2) >= 2] = 1/4.
    # i = 1: (P[Bin >= 1] - beta)/1 = (3/4 - 1/4) = 1/2;  i = 2: (P[Bin >= 0] - beta)/2 = (1 - 1/4)/2 = 3/8.
    # alpha = max = 1/2, p = beta + alpha * delta * 2m = 1/4 + 1/2 * 0.01 * 20 = 0.35.
    assert one_run_p_value(10, 2, 2, 0.0, 0.01) == pytest.approx(0.35, rel=1e-12)


def test_epsilon_bound_inverts_the_p_value():
    m, r, v = 1000, 200, 150
    e = one_run_epsilon_lower_bound(m, r, v, confidence=0.95)
    assert e > 0
    assert one_run_p_value(m, r, v, e) <= 0.05 + 1e-12  # the reported eps is rejected
    assert one_run_p_value(m, r, v, e + 1e-4) > 0.05  # and it is the largest (bisection tolerance 1e-5)
    # Bound increases with the number of correct guesses; none when guessing at chance.
    assert one_run_epsilon_lower_bound(m, r, v + 10) > e
    assert one_run_epsilon_lower_bound(m, r, 100) == 0.0


def test_guesses_from_scores():
    g = guesses_from_scores([0.1, 0.9, 0.5, -2.0, 0.3], k_plus=2, k_minus=1)
    assert g.tolist() == [0, 1, 1, -1, 0]
    with pytest.raises(ValueError, match="k_minus"):
        guesses_from_scores([0.1, 0.2], k_plus=2, k_minus=1)


def test_default_grid_is_fixed_in_advance():
    assert default_guess_grid(1000) == ((5, 5), (10, 10), (25, 25), (50, 50), (100, 100), (250, 250), (500, 500))


@pytest.mark.parametrize("delta, fdp", [(0.0, False), (1e-5, False), (1e-5, True)], ids=["pure", "delta", "delta-fdp"])
def test_audit_is_the_best_rule_at_the_bonferroni_level_by_hand(delta, fdp):
    # Recomputed rule by rule: every rule of the fixed grid for m = 1000 (7 two-sided rules; with the f-DP
    # refinement at delta > 0, 4 one-sided rules more, r = 20, 50, 100, 200) is tested at 0.05 / (number of tests),
    # and the best bound is reported. The grid depends on m only: the secret bits and the scores choose the best
    # rule among them, never the rules. Without the f-DP tests the count of tests is the grid's; with them it is not.
    rng = np.random.default_rng(3)
    m = 1000
    s = rng.random(m) < 0.5
    scores = s + rng.normal(0, 0.6, m)
    res = one_run_audit(scores, s, delta=delta, fdp=fdp)
    grid = default_guess_grid(m)
    fdp_rules = [(20, 0), (50, 0), (100, 0), (200, 0)] if fdp and delta > 0 else []
    level = 1 - 0.05 / (len(grid) + len(fdp_rules))
    truth = np.where(s, 1, -1)

    def counts(rule):
        g = guesses_from_scores(scores, *rule)
        return int(np.count_nonzero(g)), int(np.count_nonzero(g == truth))

    snj = {rule: one_run_epsilon_lower_bound(m, *counts(rule), delta=delta, confidence=level) for rule in grid}
    assert res.n_rules == len(grid) + len(fdp_rules)
    assert res.epsilon_lower_bound == max(snj.values()) > 0
    assert (res.k_plus, res.k_minus) in grid and snj[(res.k_plus, res.k_minus)] == res.epsilon_lower_bound
    if fdp_rules:
        best_fdp = max(fdp_one_run_epsilon_lower_bound(m, *counts(rule), delta=delta, confidence=level)
                       for rule in fdp_rules)
        assert res.epsilon_fdp_lower_bound == best_fdp > 0
    else:
        assert res.epsilon_fdp_lower_bound is None


def test_soundness_randomized_response_canaries_300_runs():
    # eps-randomized response on each canary bit is the extremal eps-DP mechanism for this game: the auditor's
    # correct guesses are exactly Bin(r, e^eps/(1+e^eps)) when it guesses the reported bit.
    eps = 1.0
    p = 1 / (1 + math.exp(-eps))
    rng = np.random.default_rng(21)
    vals = []
    for _ in range(RUNS):
        s = rng.random(M) < 0.5
        report = np.where(rng.random(M) < p, s, ~s)
        scores = report + 1e-3 * rng.random(M)  # tie-break within each reported bit, independent of S
        vals.append(one_run_audit(scores, s, delta=0.0).epsilon_lower_bound)
    vals = np.array(vals)
    assert np.sum(vals > eps) <= MAX_EXCEED
    assert vals.mean() >= 0.6  # measured 0.815 with m = 1000 canaries


def test_soundness_gaussian_canaries_snj_and_fdp_300_runs():
    # Gaussian canaries: o_i = S_i + N(0, sigma^2), sigma calibrated to (2, 1e-5) (Balle & Wang via
    # dp_accounting), each canary's release is exactly (2, 1e-5)-DP and exactly that Gaussian trade-off curve.
    eps, delta = 2.0, 1e-5
    sigma = dp_accounting.get_sigma_gaussian(eps, delta)
    rng = np.random.default_rng(22)
    snj, fdp = [], []
    for _ in range(RUNS):
        s = rng.random(M) < 0.5
        out = s + rng.normal(0, sigma, M)
        res = one_run_audit(out, s, delta=delta, fdp=True)
        snj.append(res.epsilon_lower_bound)
        fdp.append(res.epsilon_fdp_lower_bound)
    snj, fdp = np.array(snj), np.array(fdp)
    assert np.sum(snj > eps) <= MAX_EXCEED
    assert np.sum(fdp > eps) <= MAX_EXCEED
    assert snj.mean() >= 0.4 and fdp.mean() >= 0.4  # measured 0.55 and 0.52


def test_fdp_bound_by_hand_limits():
    # No correct guesses: nothing refuted. All 100 of 100 guesses correct among m = 1000: strong evidence,
    # positive bound that stays finite.
    assert fdp_one_run_epsilon_lower_bound(1000, 100, 0, delta=1e-5) == 0.0
    e = fdp_one_run_epsilon_lower_bound(1000, 100, 100, delta=1e-5)
    assert 0 < e < 50


def _count_pair():
    d0 = np.array([1, 1, 1, 0, 0, 0, 0, 0])
    d1 = d0.copy()
    d1[-1] = 1
    return d0, d1


def test_one_run_target_flags_planted_bug_and_passes_reference():
    # Same definitions as the registered targets "laplace-inverted-scale" and "laplace-eps1" (privbound.audit.targets).
    d0, d1 = _count_pair()
    bug_t = Target("laplace-inverted-scale", "laplace", LaplaceInvertedScale(0.5, query=np.sum), d0, d1, 0.5,
                   planted_bug=True)
    ok_t = Target("laplace-eps1", "laplace", LaplaceMechanism(1.0, query=np.sum), d0, d1, 1.0)
    bug = one_run_audit_target(bug_t, 1000, seed=0)
    assert bug.violation  # true eps = 2 vs claimed 0.5; measured bound 1.82
    ok = one_run_audit_target(ok_t, 1000, seed=0)
    assert not ok.violation and ok.epsilon_lower_bound > 0.5  # measured 0.906
    assert "SNJ" in bug.summary()


def test_one_run_input_validation():
    with pytest.raises(ValueError, match="equal length"):
        one_run_audit([0.1, 0.2], [True])
    with pytest.raises(ValueError, match="r must be"):
        one_run_p_value(10, 11, 1, 1.0)
    assert stats.binom.sf(MAX_EXCEED, RUNS, 0.05) < 0.01


@pytest.mark.slow  # ~9 s: the RDP noise calibration of the learner dominates
def test_perceptron_orthogonal_canaries_flag_noise_bug():
    # DP Batch Perceptron, experimental variant (T = 4, p = 1/2, sigma from the RDP accountant for (1, 1e-5)),
    # one training run with m = 1000 orthogonal canaries. Correct noise: no violation of the claim eps = 1
    # (measured bounds 0.02-0.44 over seeds 0-2). Noise divided by 10 (planted bug of the registered target
    # batch-perceptron-noise-div10; PLD accountant: true eps <= 22.3): flagged (measured SNJ 2.1-2.4).
    from privbound.audit.targets.robust_halfspaces import perceptron_canary_one_run
    from privbound.learners.robust_halfspaces.perceptron import DPBatchPerceptron

    rng = np.random.default_rng(20210413)
    n = 20
    y0 = rng.choice([-1.0, 1.0], size=n)
    s = rng.uniform(0.3, 1.0, size=n)
    x0 = np.stack([y0 * s, rng.uniform(-1, 1, size=n) * np.sqrt(1 - s**2)], -1)  # 0.3-margin data in R^2
    good = DPBatchPerceptron(0.3, epsilon=1.0, delta=1e-5, variant="experimental", sampling_rate=0.5, n_iter=4)
    bad = DPBatchPerceptron(0.3, epsilon=1.0, delta=1e-5, variant="experimental", sampling_rate=0.5, n_iter=4,
                            noise_std=good.parameters().sigma / 10)
    ok = perceptron_canary_one_run(good, (x0, y0), 1000, seed=1, epsilon_claimed=1.0)
    assert not ok.violation
    flagged = perceptron_canary_one_run(bad, (x0, y0), 1000, seed=1, epsilon_claimed=1.0)
    assert flagged.violation and flagged.epsilon_lower_bound > 1.5
