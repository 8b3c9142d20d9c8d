"""Every robust-halfspaces check fails on its registered mutants (privbound.bounds.robust_halfspaces.mutants).

Each (claim, check, mutant) runs the check with the mutant applied at the mutant's own profile, with the check's usual
stable seed, and asserts that it is detected (status FAIL). The smoke-profile mutants run in the default suite, the
default/full ones are marked ``slow``. The real code passing the same checks is asserted by
test_claims.py::test_all_checks_smoke. A statistical check rejects a correct implementation with probability <= 0.001
per run (its docstring); under a mutant the detection at the fixed seed is deterministic.
"""

from __future__ import annotations

import pytest

from privbound import bounds
from privbound.bounds.checks import PROFILES, _run_one
from privbound.bounds.robust_halfspaces.mutants import MUTANTS, WITHOUT_MUTANTS

PAPER = "robust-halfspaces"

CASES = [(f"{PAPER}/{number}", chk, m.name, m.profile) for (number, chk), ms in sorted(MUTANTS.items()) for m in ms]


def _params(profiles):
    out = []
    for cid, chk, name, profile in CASES:
        if profile in profiles:
            marks = [pytest.mark.slow] if profile != "smoke" else []
            out.append(pytest.param(cid, chk, name, id=f"{cid.split('/')[1]}:{chk}:{name}", marks=marks))
    return out


def _run(cid, chk, name):
    claim = bounds.get(cid)
    check = next(c for c in claim.checks if c.name == chk)
    mutant = next(m for m in check.mutants if m.name == name)
    # the check exactly as the runner runs it (stable seed, the mutant's profile), with the mutant applied
    with mutant.apply():
        return _run_one(claim, check, seed=None, profile=PROFILES[mutant.profile], n_jobs=1)


@pytest.mark.parametrize("cid, chk, name", _params({"smoke"}))
def test_smoke_mutant_is_detected(cid, chk, name):
    res = _run(cid, chk, name)
    assert res.status == "fail", res.summary()


@pytest.mark.parametrize("cid, chk, name", _params({"default", "full"}))
def test_slow_mutant_is_detected(cid, chk, name):
    res = _run(cid, chk, name)
    assert res.status == "fail", res.summary()


def test_every_check_has_a_mutant_except_the_printed_forms():
    for claim in bounds.claims(PAPER):
        for chk in claim.checks:
            if chk.name.startswith("as-printed"):
                assert not chk.mutants, (claim.id, chk.name)  # expected to fail on the real code
                assert (claim.number, chk.name) in WITHOUT_MUTANTS, (claim.id, chk.name)
            else:
                assert chk.mutants, (claim.id, chk.name)
    registered = {(c.number, k.name) for c in bounds.claims(PAPER) for k in c.checks}
    assert set(MUTANTS) <= registered  # no mutant for a check that does not exist
    assert sum(m.profile == "smoke" for ms in MUTANTS.values() for m in ms) >= 0.9 * len(CASES)


def test_run_mutants_reports_detection_and_restores_the_code():
    rows = bounds.run_mutants([f"{PAPER}/observation-8"])
    assert {(r.check, r.mutant) for r in rows} == {("corrected", "runs-as-printed"), ("corrected", "runs-minus-one"),
                                                   ("boosting-corrected", "runs-as-printed"),
                                                   ("boosting-corrected", "selection-by-largest-error")}
    assert all(r.detected and r.error is None for r in rows)
    res = bounds.check(f"{PAPER}/observation-8", profile="smoke")
    assert {c["check"]: c["status"] for c in res.details["checks"]}["corrected"] == "pass"
