"""The one-run canary design each target uses (``Target.one_run_design``, ``privbound audit NAME --one-run``).

Error rates: every one-run audit here is seeded, hence deterministic. A correct target is
flagged with probability <= 5% over the seed (confidence 0.95, Bonferroni over the guess
rules; Steinke, Nasr & Jagielski 2023), so a failing "not flagged" check is a soundness bug
or (<= 5%) an unlucky seed. The planted-bug checks assert bounds derived in the comments from
the SNJ binomial bound with all r guesses correct.
"""

from __future__ import annotations

import json

import pytest

from privbound.audit.targets.decision_lists_winnow import WINNOW_CANARY_ROUNDS_DESIGN
from privbound.audit.targets import get_target, targets
from privbound.reports.cli import main

WINNOW_ONE_RUN_BUGS = ["dp-winnow-one-run-query-on-mistakes", "dp-winnow-one-run-release-shadow",
                       "winnow-one-run-release-weights"]


def test_batch_perceptron_targets_use_orthogonal_canaries():
    assert get_target("batch-perceptron-rdp").one_run_design_name == "perceptron-orthogonal-canaries"
    assert get_target("batch-perceptron-rdp-transcript").one_run_design_name == "perceptron-orthogonal-canaries"
    assert get_target("laplace-eps1").one_run_design_name == "independent-releases"
    assert get_target("dp-winnow-replay").one_run_design_name == "independent-releases"


def test_routing_of_the_decision_list_and_winnow_families():
    got = {t.name: t.one_run_design_name for t in targets() if t.family in ("winnow", "greedy-cover")}
    assert got == {
        # K = 3 updates: canary rounds carry less evidence than independent releases (module docstring)
        "dp-winnow-replay": "independent-releases",
        "dp-winnow-query-on-mistakes": "independent-releases",
        "dp-winnow-release-shadow": "independent-releases",
        "winnow-release-weights": "independent-releases",
        "greedy-cover-canary": "independent-releases",
        # at least as strong as independent releases at most seeds
        # (benchmarks/README.md, 'Decision lists and DP-Winnow: measured values')
        "greedy-cover-accumulation": "greedy-cover-canary-features",
        "greedy-cover-one-round-claim": "greedy-cover-canary-features",
        # tagged one-run targets
        "dp-winnow-one-run": "dp-winnow-canary-rounds",
        "dp-winnow-one-run-query-on-mistakes": "dp-winnow-canary-rounds",
        "dp-winnow-one-run-release-shadow": "dp-winnow-canary-rounds",
        "winnow-one-run-release-weights": "dp-winnow-canary-rounds",
        "greedy-cover-one-run": "greedy-cover-canary-features",
        "greedy-cover-one-run-step-40": "greedy-cover-canary-features",
    }


def test_a_design_on_a_mismatched_mechanism_raises():
    from dataclasses import replace

    t = replace(get_target("laplace-eps1"), one_run_design=WINNOW_CANARY_ROUNDS_DESIGN)
    assert t.one_run_design_name == "dp-winnow-canary-rounds"
    with pytest.raises(TypeError, match="does not apply"):
        t.one_run_audit(10)


def test_one_run_verdicts_on_the_batch_perceptron():
    # One training run with 1000 orthogonal unit canaries (each included w.p. 1/2). Seeded, so
    # deterministic; the bound holds with probability >= 0.95 over the seed (measured bounds in
    # benchmarks/README.md, 'Robust halfspaces: measured values').
    ok = get_target("batch-perceptron-rdp").one_run_audit(1000, 0)
    assert not ok.violation and ok.epsilon_lower_bound <= 1.0
    bad = get_target("batch-perceptron-noise-div10").one_run_audit(1000, 0)
    assert bad.violation and bad.details["design_chosen"] == "perceptron-orthogonal-canaries"


def test_dp_winnow_one_run_target_holds_with_a_positive_bound():
    # Claim 3.063 (test_decision_lists_winnow_one_run.py derives it). Positive at seed 0 (and at most seeds,
    # benchmarks/README.md, 'Decision lists and DP-Winnow: measured values'): canary rounds carry evidence for this
    # learner.
    r = get_target("dp-winnow-one-run").one_run_audit(1000, 0)
    assert r.details["design_chosen"] == "dp-winnow-canary-rounds"
    assert not r.violation and 0.0 < r.epsilon_lower_bound < r.epsilon_claimed, r.summary()


@pytest.mark.parametrize("name", WINNOW_ONE_RUN_BUGS)
def test_dp_winnow_one_run_planted_bugs_are_flagged(name):
    # The top 200 scores are all included canaries (cached / Winnow-updated / fired at a mistake), so the
    # one-sided rule r = 200 has v = 200: q^200 <= 0.05/7 gives q = e^eps/(1 + e^eps) >= 0.9756, eps ~= 3.68
    # (2 m delta = 0.002 with delta = 1e-6 moves it by < 0.01) > claim 3.063.
    t = get_target(name)
    r = t.one_run_audit(1000, 0)
    assert r.details["design_chosen"] == "dp-winnow-canary-rounds"
    assert r.epsilon_claimed == t.epsilon and r.delta == t.delta
    assert r.violation and r.epsilon_lower_bound > 3.6, r.summary()


def test_greedy_cover_one_run_target_and_its_bug():
    # Correct: each canary bit is eps_step/2 = 0.2 randomised response; claim 3.535 (Theorem 7 [RECON], derived
    # in test_decision_lists_winnow.py). The bound is small and sometimes 0
    # (benchmarks/README.md, 'Decision lists and DP-Winnow: measured values'):
    # soundness only is asserted. Bug (rounds at eps_step = 40): bits equal the labels until T, so the two-sided
    # rule r = 500 (250 + 250, earliest choices) is all correct: q^500 <= 0.05/7 -> q >= 0.99017 ->
    # eps ~= 4.6 (delta = 1e-5 lowers it to 4.53) > 3.535.
    ok = get_target("greedy-cover-one-run").one_run_audit(1000, 0)
    assert ok.details["design_chosen"] == "greedy-cover-canary-features"
    assert not ok.violation and ok.epsilon_lower_bound <= ok.epsilon_claimed, ok.summary()
    bad = get_target("greedy-cover-one-run-step-40").one_run_audit(1000, 0)
    assert bad.violation and bad.epsilon_lower_bound > 4.4 and (bad.r, bad.v) == (500, 500), bad.summary()


def test_cli_one_run_reports_the_design(capsys):
    assert main(["audit", "batch-perceptron-noise-div10", "--one-run", "--canaries", "1000", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["details"]["design_chosen"] == "perceptron-orthogonal-canaries" and d["epsilon_lower_bound"] > 1.0


def test_cli_one_run_on_a_winnow_one_run_target(capsys):
    # Exit status 0 = the expected verdict (planted bug caught); same numbers as the direct call above.
    assert main(["audit", "dp-winnow-one-run-query-on-mistakes", "--one-run", "--canaries", "1000", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["details"]["design_chosen"] == "dp-winnow-canary-rounds" and d["m"] == 1000
    assert d["violation"] is True and d["epsilon_lower_bound"] > 3.6
    assert main(["audit", "dp-winnow-one-run", "--one-run", "--canaries", "1000", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["violation"] is False and d["details"]["design_chosen"] == "dp-winnow-canary-rounds"
