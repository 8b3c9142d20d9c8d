"""Privacy audits of every decision-lists-winnow target at its default trials (privbound.audit.targets.decision_lists_winnow).

Each correct target must NOT be flagged and each planted bug MUST be flagged (seed 0,
95% confidence: a correct target is wrongly flagged with probability <= 5% by
construction of the estimator, and the fixed seed makes the outcome reproducible).
The greedy-cover canary pair is small enough (|F| = 5) to compare the auditor with the
exact privacy curve by enumeration.
"""

from __future__ import annotations

import pytest

from privbound.audit.targets import get_target, targets
from privbound.audit.targets.decision_lists_winnow import greedy_cover_canary_pair
from privbound.learners.decision_lists_winnow.decision_lists import exact_epsilon, greedy_cover_exact_logprobs, hockey_stick_delta

PAPER = "decision-lists-winnow"
NAMES = [t.name for t in targets() if t.paper == PAPER]


def test_families_and_bugs_registered():
    fams = {get_target(n).family for n in NAMES}
    assert fams == {"greedy-cover", "winnow"}
    bugs = {n for n in NAMES if get_target(n).planted_bug}
    assert bugs == {"greedy-cover-one-round-claim", "dp-winnow-query-on-mistakes",
                    "dp-winnow-release-shadow", "winnow-release-weights",
                    "dp-winnow-one-run-query-on-mistakes", "dp-winnow-one-run-release-shadow",
                    "winnow-one-run-release-weights", "greedy-cover-one-run-step-40"}


def test_one_run_twins_claim_the_correct_learners_guarantee():
    # Every planted-bug twin of a one-run target claims exactly the correct target's (epsilon, delta).
    for ok, twins in (("dp-winnow-one-run", ("dp-winnow-one-run-query-on-mistakes", "dp-winnow-one-run-release-shadow",
                                             "winnow-one-run-release-weights")),
                      ("greedy-cover-one-run", ("greedy-cover-one-run-step-40",))):
        t = get_target(ok)
        assert not t.planted_bug and t.one_run_design is not None
        for name in twins:
            b = get_target(name)
            assert b.planted_bug and (b.epsilon, b.delta, b.one_run_design) == (t.epsilon, t.delta, t.one_run_design), name
            assert b.d0 is t.d0 and b.d1 is t.d1, name
    # DP-GreedyCover claim by hand (Theorem 7 [RECON], replace-one): x = eps_step/2 = 0.2, delta = 1e-5:
    # (e^0.2 - 1)(e^0.2 ln(1e5) + 1) + 0.2 = 0.22140 * 15.0624 + 0.2 = 3.5348.
    import math

    assert get_target("greedy-cover-one-run").epsilon == pytest.approx(
        math.expm1(0.2) * (math.exp(0.2) * math.log(1e5) + 1) + 0.2, rel=1e-12)


def test_one_run_pairs_differ_in_one_record():
    import numpy as np

    for name in ("dp-winnow-one-run", "greedy-cover-one-run"):
        t = get_target(name)
        (A0, y0), (A1, y1) = t.d0, t.d1
        assert np.array_equal(A0, A1) and np.flatnonzero(np.asarray(y0) != np.asarray(y1)).tolist() == [0]


@pytest.mark.parametrize("name", NAMES)
def test_audit_verdict_matches_planted_bug(name):
    t = get_target(name)
    r = t.audit(seed=0)
    assert r.violation == t.planted_bug, r.summary()


def test_canary_exact_privacy_curve_vs_claim_and_auditor():
    # Theorem 7 [RECON]: exact delta at the claimed epsilon is <= the claimed delta, and the auditor's epsilon
    # lower bound (seed 0, default trials) does not exceed the exact epsilon at the claimed delta.
    t = get_target("greedy-cover-canary")
    (P0, y0), (P1, y1) = greedy_cover_canary_pair()
    lp0, lp1, _ = greedy_cover_exact_logprobs(P0, y0, P1, y1, t.mechanism.epsilon_step)
    assert hockey_stick_delta(lp0, lp1, t.epsilon) <= t.delta
    eps_exact = exact_epsilon(lp0, lp1, t.delta)
    assert t.audit(seed=0).epsilon_lower_bound <= eps_exact
