"""One-run canary audits of DP-Winnow and DP-GreedyCover (privbound.audit.targets.decision_lists_winnow).

Soundness: when the learner's claimed (epsilon, delta) is right, the Steinke--Nasr--Jagielski
bound exceeds it with probability <= 5% (confidence 0.95, Bonferroni over the guess rules);
the seeds are fixed, so each "not flagged" assertion is reproducible and could fail only with
that probability over the choice of seed. Planted bugs: the expected lower bounds are derived
in the comments from the SNJ binomial bound (all r guesses correct).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privbound.audit.one_run import one_run_epsilon_lower_bound
from privbound.audit.targets.decision_lists_winnow import (
    dp_winnow_canary_one_run,
    greedy_cover_canary_data,
    greedy_cover_canary_one_run,
    greedy_cover_canary_scores,
    winnow_canary_scores,
    winnow_canary_stream,
)
from privbound.learners.decision_lists_winnow.decision_lists import DPGreedyCover
from privbound.learners.decision_lists_winnow.winnow import DPWinnow


def _winnow():
    # Relaxed parameters with a small claim: eps_hat = 1, eta = 0.001, m = 1, K = 300, delta = 1e-6.
    # Own accounting (Lemma 11 [RECON], sharp): 1 + 0.004 sqrt(2 * 300 * ln(1e6)) + 300 * 0.004 (e^0.004 - 1)
    # = 1 + 0.004 * 91.05 + 0.0048 = 1.369 (< the pure 1 + 4 * 0.001 * 300 = 2.2).
    return DPWinnow(epsilon_hat=1.0, eta=0.001, m=1, L=1.0, K=300, delta=1e-6)


def test_winnow_claim_by_hand():
    g = _winnow().guarantee
    assert g.epsilon == pytest.approx(1 + 0.004 * math.sqrt(600 * math.log(1e6)) + 1.2 * math.expm1(0.004), rel=1e-12)
    assert g.delta == 1e-6


def test_winnow_canary_stream_flip_is_one_round_and_initial_prediction_is_minus():
    inc = np.array([True, False, True, False, False])
    X, y = winnow_canary_stream(inc)
    assert X.shape == (5, 6) and np.all(np.abs(X) == 1)
    # uniform weights: <w, x_i> = (1 - 5)/6 < 0 -> predicts -1: included canaries (+1) are mistakes
    assert np.all(X.mean(axis=1) < 0) and list(y) == [1, -1, 1, -1, -1]
    inc2 = inc.copy()
    inc2[3] = True
    X2, y2 = winnow_canary_stream(inc2)
    assert np.array_equal(X, X2) and np.flatnonzero(y != y2).tolist() == [3]  # event-level neighbour


def test_winnow_canary_scores_by_hand():
    # 4 canaries, d = 5, m = 2 samples: update at round 1 with counts (0, 2, 0, 0, 0), update at round 3
    # with counts (1, 0, 1, 0, 0). Counts from each canary's round on (release u counts iff r_u >= i),
    # divided by m: canary 0: (0 + 1)/2 = 1/2; canary 1: (2 + 0)/2 = 1; canary 2: 1/2 (release 2 only);
    # canary 3: 0. Max 1, so the count term is 1e-3 * ev / 2. Firings: round 1 after a window of 2
    # rounds (0, 1) -> 2 + 1/2; round 3 after a window of 2 rounds (2, 3) -> 2 + 1/2.
    s = winnow_canary_scores([1, 3, -1], [[0, 2, 0, 0, 0], [1, 0, 1, 0, 0], [0] * 5], 4, m_samples=2)
    assert np.allclose(s, [1e-3 * 0.25, 2.5 + 1e-3 * 0.5, 1e-3 * 0.25, 2.5])
    # lexicographic order: any firing above any count evidence; a shorter window above a longer one
    s = winnow_canary_scores([0, 3], np.zeros((2, 5)), 4, m_samples=1)
    assert np.allclose(s, [3.0, 0.0, 0.0, 2.0 + 1.0 / 3.0])


def test_dp_winnow_one_run_sound_on_correct_learner():
    dw = _winnow()
    for seed in (0, 1):
        r = dp_winnow_canary_one_run(dw, 1000, seed)
        assert r.epsilon_lower_bound <= r.epsilon_claimed, r.summary()
        assert not r.violation


@pytest.mark.parametrize("kw", [dict(release="shadow"), dict(release="winnow")])
def test_dp_winnow_one_run_flags_planted_bugs(kw):
    # Released shadow weights / non-private Winnow weights: every canary used by an update is visible
    # exactly, so the top-r "+1" guesses are all correct. With r = 200 correct out of 200 (one-sided rule,
    # 20% of m = 1000), Bonferroni over the 7 rules: q^200 <= 0.05/7 gives q = e^eps/(1+e^eps) <= 0.9756,
    # eps ~= 3.68 > claim 1.369 (delta = 1e-6 adds <= 2 m delta = 0.002 to the p-value).
    r = dp_winnow_canary_one_run(_winnow(), 1000, 0, **kw)
    assert r.violation, r.summary()
    assert r.epsilon_lower_bound > 3.0
    assert r.epsilon_lower_bound == pytest.approx(
        one_run_epsilon_lower_bound(1000, r.r, r.v, delta=1e-6, confidence=1 - 0.05 / 7), abs=1e-9)


def test_greedy_cover_canary_data_and_scores_by_hand():
    inc = np.array([True, False, True])
    Phi, y = greedy_cover_canary_data(inc)
    # feature i fires on record i only, T (last column) on all; labels 1 iff included
    assert Phi.tolist() == [[True, False, False, True], [False, True, False, True], [False, False, True, True]]
    assert y.tolist() == [1, 0, 1]
    # output list [(f2, 1), (T, 0), (f0, 1), (f1, 0)], M = 4: only f2 comes before T (round 0), score
    # (1 - 1/2)(2 - 0/4) = 1; f0 and f1 come after T (uniform bits): 0.
    assert greedy_cover_canary_scores([2, 3, 0, 1], [1, 0, 1, 0], 3).tolist() == [0.0, 0.0, 1.0]
    # [(f1, 0), (f0, 1), (f2, 1), (T, 1)]: f1 round 0 -> -1/2 * 2 = -1; f0 round 1 -> 1/2 * 1.75;
    # f2 round 2 -> 1/2 * 1.5
    assert greedy_cover_canary_scores([1, 0, 2, 3], [0, 1, 1, 1], 3).tolist() == [0.875, -1.0, 0.75]


def test_greedy_cover_one_run_sound_and_flags_noise_dropped():
    # Claim (Theorem 7 [RECON], replace-one) at eps_step = 0.2, delta = 1e-6:
    # (e^0.1 - 1)(e^0.1 ln(1e6) + 1) + 0.1 = 0.10517 * 16.268 + 0.1 = 1.811.
    gc = DPGreedyCover(epsilon_step=0.2, delta=1e-6)
    assert gc.guarantee.epsilon == pytest.approx(math.expm1(0.1) * (math.exp(0.1) * math.log(1e6) + 1) + 0.1)
    ok = greedy_cover_canary_one_run(gc, 500, 0)
    assert not ok.violation and ok.epsilon_lower_bound <= ok.epsilon_claimed, ok.summary()
    # Planted bug: rounds run at eps_step = 40 (exponential mechanism ~ argmax) under the 0.2 claim. Every
    # canary bit equals its label w.p. 1/(1 + e^-20); the two-sided rule with r = 250 (50% of 500) all correct
    # gives q^250 <= 0.05/7 -> q <= 0.9804 -> eps ~= 3.9 > 1.811.
    bug = greedy_cover_canary_one_run(gc, 500, 0, epsilon_step_run=40.0)
    assert bug.violation and bug.epsilon_lower_bound > 3.5, bug.summary()


def test_bad_arguments():
    with pytest.raises(TypeError, match="DPWinnow"):
        dp_winnow_canary_one_run(DPGreedyCover(), 10)
    with pytest.raises(ValueError, match="release"):
        dp_winnow_canary_one_run(_winnow(), 10, release="weights")
    with pytest.raises(ValueError, match="replace-one"):
        greedy_cover_canary_one_run(DPGreedyCover(neighbouring="add/remove"), 10)


# ---------------------------------------------------------------- the parameters of the one-run targets


def _one_run_winnow():
    # The learner of the registered target dp-winnow-one-run: eps_hat = 3, eta = 1e-4, m = 3, L = 1.5, K = 300.
    # Claim (Lemma 11 [RECON], sharp): 3 + 4e-4 sqrt(2 * 900 * ln(1e6)) + 900 * 4e-4 (e^4e-4 - 1)
    # = 3 + 4e-4 * 157.66 + 1.44e-4 = 3.0632 (< the pure 3 + 4 * 1e-4 * 900 = 3.36).
    return DPWinnow(epsilon_hat=3.0, eta=1e-4, m=3, L=1.5, K=300, delta=1e-6)


def test_one_run_winnow_claim_by_hand():
    g = _one_run_winnow().guarantee
    assert g.epsilon == pytest.approx(3 + 4e-4 * math.sqrt(1800 * math.log(1e6)) + 0.36 * math.expm1(4e-4), rel=1e-12)


def test_dp_winnow_one_run_correct_learner_positive_and_below_claim():
    # Soundness (<= 5% over the seed by construction); power: the bound is positive at most seeds but not all
    # (benchmarks/README.md, 'Decision lists and DP-Winnow: measured values'), so "positive" is asserted at seed 0
    # only (the fixed seed makes it
    # reproducible; it documents that the design carries evidence at these parameters).
    r = dp_winnow_canary_one_run(_one_run_winnow(), 1000, 0)
    assert not r.violation and 0.0 < r.epsilon_lower_bound < r.epsilon_claimed, r.summary()


@pytest.mark.parametrize("kw", [dict(release="shadow"), dict(release="winnow"), dict(query_every_round=False)])
def test_dp_winnow_one_run_parameters_flag_every_planted_bug(kw):
    # Each bug makes the top 200 scores all included canaries: the cached canaries (shadow: 2 eta boost;
    # >= 200 updates), every included canary (non-private Winnow updates on all of them), or the firings
    # (AddQuery on mistakes only: a firing happens at a mistake, i.e. an included canary; more than 200
    # firings at these parameters, benchmarks/README.md, 'Decision lists and DP-Winnow: measured values'). r = v = 200
    # at level 0.05/7: q^200 <= 0.00714 -> eps ~= 3.68 > 3.063.
    r = dp_winnow_canary_one_run(_one_run_winnow(), 1000, 0, **kw)
    assert r.violation and r.epsilon_lower_bound > 3.5, r.summary()
