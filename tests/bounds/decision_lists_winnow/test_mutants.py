"""Every check of the decision-lists / DP-Winnow paper fails on each of its registered mutants
(privbound.bounds.decision_lists_winnow.mutants) and passes on the real code.

Each test runs one check with one mutant applied through ``privbound.bounds.run_mutants`` (the check's
usual stable seed), at the mutant's own profile: "smoke" mutants in the default suite, "default" ones
(and smoke ones that take more than a few seconds) marked ``slow``. The statistical checks are exact
binomial tests at confidence 0.999 with fixed seeds, so a detection is deterministic given the seed; a
correct learner would fail each with probability <= 0.001.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from privbound import bounds
from privbound.bounds import registry
from privbound.bounds.decision_lists_winnow.mutants import MUTANTS, WITHOUT_MUTANTS

P = "decision-lists-winnow/"

# smoke mutants whose check takes more than ~5 s under the mutant (measured on 2 loaded cores)
_HEAVY = {("lemma-9", "sequences", "update-sign-flipped"), ("lemma-11", "dp-accounting", "eta-without-m"),
          ("lemma-13", "pairs-union", "m-union-over-rounds"), ("lemma-14", "runs", "window-count-not-reset"),
          ("lemma-13", "runs", "m-divided-by-50")}

_CASES = [(c, k, mu.name, mu.profile) for (c, k), muts in sorted(MUTANTS.items()) for mu in muts]


def _params():
    out = []
    for c, k, name, profile in _CASES:
        slow = profile != "smoke" or (c, k, name) in _HEAVY
        out.append(pytest.param(c, k, name, profile, id=f"{c}:{k}:{name}", marks=[pytest.mark.slow] if slow else []))
    return out


def _run_one_mutant(monkeypatch, number: str, check: str, mutant: str, profile: str):
    cid = P + number
    claim = bounds.get(cid)
    chk = next(c for c in claim.checks if c.name == check)
    mu = next(m for m in chk.mutants if m.name == mutant)
    # run only this check with only this mutant (same claim id and check name, hence the same seed)
    monkeypatch.setitem(registry._REGISTRY, cid, replace(claim, checks=(replace(chk, mutants=(mu,)),)))
    (row,) = bounds.run_mutants([cid], profile=profile)
    return row


@pytest.mark.parametrize("number,check,mutant,profile", _params())
def test_check_detects_its_mutant(monkeypatch, number, check, mutant, profile):
    row = _run_one_mutant(monkeypatch, number, check, mutant, profile)
    assert row.error is None, row.error
    assert row.detected, (row.status, row.observed, row.bound)


def test_every_inequality_probabilistic_and_scaling_check_has_a_mutant():
    # The checks without one: the printed-form (erratum) checks, which fail on the real code by design, and the
    # always-inconclusive calibrated-vacuity report.
    exempt = {"printed-sign-utility", "printed-two-part-grid", "printed-m-pairs-union", "printed-recipe-margin",
              "window-count", "calibrated-vacuity"}
    missing = [(c.number, k.name) for c in bounds.claims("decision-lists-winnow") for k in c.checks
               if not k.mutants and k.name not in exempt]
    assert missing == []
    assert set(MUTANTS) == {(c.number, k.name) for c in bounds.claims("decision-lists-winnow") for k in c.checks
                            if k.mutants}
    assert {check for _, check in WITHOUT_MUTANTS} == exempt


def test_mutants_are_removed_after_use(monkeypatch, check_context):
    # the Winnow update mutant patches a module global: after it, the real learner passes again
    row = _run_one_mutant(monkeypatch, "lemma-9", "winnow-sweep", "update-rate-halved", "smoke")
    assert row.detected and row.observed > 1.0
    chk = next(c for c in bounds.get(P + "lemma-9").checks if c.name == "winnow-sweep")
    assert chk.run(check_context(5)).status == "pass"
