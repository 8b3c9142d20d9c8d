"""The tightest epsilon of what each learner target's code runs (``Target.tight``), for the three papers.

Every target of the papers states a tight value or the reason it has none; a correct target's claim is never
below its tight value (the claim must hold for what the code runs) and a planted bug's tight value is above its
claim (the bug overspends). Registered values are pinned where a hand computation or an independent route
gives them. Each computation's own checks against an independent route are in ``tests/learners/<paper>/``.
"""

from __future__ import annotations

import math

import pytest

from privbound.audit.targets import get_target, targets

PAPERS = ("decision-lists-winnow", "robust-halfspaces", "agnostic-halfspaces")
NAMES = [t.name for t in targets() if t.paper in PAPERS]


@pytest.mark.parametrize("name", NAMES)
def test_every_learner_target_has_a_tight_value_or_a_reason(name):
    t = get_target(name)
    if t.tight_epsilon is None:
        assert t.no_tight_epsilon, f"{name}: neither tight_epsilon nor no_tight_epsilon"
        assert t.tight() is None
        return
    te = t.tight()
    assert te.epsilon >= 0 and te.source, name
    assert t.tight() is te  # cached
    if t.planted_bug:
        assert te.epsilon > t.epsilon, f"{name}: a planted bug must overspend its claim ({te})"
    else:
        assert te.epsilon <= t.epsilon * (1 + 1e-9), f"{name}: the claim is below what the code runs ({te})"


# ============================================================================ decision-lists-winnow


def test_greedy_cover_canary_tight_is_the_enumerated_exact_epsilon():
    # The symmetry-grouped law on the registered canary pair (|F| = 5, small enough to enumerate every output
    # list) gives the plain enumeration's exact epsilon at the target's delta.
    from privbound.learners.decision_lists_winnow.decision_lists import exact_epsilon, greedy_cover_exact_logprobs

    t = get_target("greedy-cover-canary")
    lp0, lp1, _ = greedy_cover_exact_logprobs(*t.d0, *t.d1, t.mechanism.epsilon_step)
    assert t.tight().epsilon == pytest.approx(exact_epsilon(lp0, lp1, t.delta), abs=1e-9)
    assert "this pair" in t.tight().source


def test_greedy_cover_one_round_claim_overspends_the_accumulating_pair():
    # The accumulating pair's pure epsilon on this pair (8.99) is above the one-round claim of 4 and above the
    # same pair's epsilon at delta = 1e-5 (the correct target), which itself is far below the loose claim 551.9.
    bug, ok = get_target("greedy-cover-one-round-claim"), get_target("greedy-cover-accumulation")
    assert bug.tight().epsilon == pytest.approx(8.987, abs=1e-3)
    assert ok.tight().epsilon == pytest.approx(8.903, abs=1e-3)
    assert ok.tight().epsilon < bug.tight().epsilon < ok.epsilon / 50


def test_dp_winnow_targets_tight_values():
    # dp-winnow-replay claims delta = 0: the tight value is the sum of the pure steps, 1 + 4 * 0.05 * 5 * 3 = 4
    # (= the claim). The one-run learner at delta = 1e-6 is below its advanced-composition claim 3.063.
    assert get_target("dp-winnow-replay").tight().epsilon == pytest.approx(4.0, rel=1e-12)
    one = get_target("dp-winnow-one-run")
    assert 3.0 < one.tight().epsilon < one.epsilon
    for name in ("dp-winnow-query-on-mistakes", "dp-winnow-release-shadow", "winnow-release-weights",
                 "dp-winnow-one-run-query-on-mistakes", "dp-winnow-one-run-release-shadow",
                 "winnow-one-run-release-weights"):
        assert get_target(name).tight().epsilon == math.inf, name
