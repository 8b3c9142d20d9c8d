"""Every check of agnostic-halfspaces is seen to fail on its mutants (privbound.bounds.agnostic_halfspaces.mutants).

One parametrised test over (claim, check, mutant): the check runs with the mutant applied, at the mutant's own
profile, with the runner's stable seed (the one ``privbound.bounds.run_mutants`` uses), and must FAIL. Mutants
detected at "smoke" run in the default suite (a few seconds each at most); "default"/"full" ones are ``slow``.
The real code passing is ``test_claims.py::test_checks_smoke``. Seeded: each case is deterministic.
"""

from __future__ import annotations

import pytest

from privbound import bounds
from privbound.bounds.agnostic_halfspaces.mutants import MUTANTS, WITHOUT_MUTANTS
from privbound.bounds.checks import CheckStatus, _profile, _run_one

P = "agnostic-halfspaces/"


def _cases(slow: bool):
    out = []
    for c in bounds.claims("agnostic-halfspaces"):
        for chk in c.checks:
            for m in chk.mutants:
                if (m.profile != "smoke") == slow:
                    out.append(pytest.param(c.id, chk.name, m.name, id=f"{c.number}:{chk.name}:{m.name}"))
    return out


def _run_with(claim_id: str, check: str, mutant: str):
    claim = bounds.get(claim_id)
    chk = next(k for k in claim.checks if k.name == check)
    m = next(x for x in chk.mutants if x.name == mutant)
    with m.apply():
        res = _run_one(claim, chk, seed=None, profile=_profile(m.profile), n_jobs=1)
    return m, res


@pytest.mark.parametrize("claim_id, check, mutant", _cases(slow=False))
def test_check_fails_on_its_smoke_mutant(claim_id, check, mutant):
    m, res = _run_with(claim_id, check, mutant)
    assert res.status is CheckStatus.FAIL, (m.description, res.summary())


@pytest.mark.slow
@pytest.mark.parametrize("claim_id, check, mutant", _cases(slow=True))
def test_check_fails_on_its_mutant_at_its_profile(claim_id, check, mutant):
    m, res = _run_with(claim_id, check, mutant)
    assert res.status is CheckStatus.FAIL, (m.description, m.profile, res.summary())


def test_every_check_has_a_mutant_except_the_documented_errata():
    # The checks that fail by design (a printed statement of the paper) carry no mutant; every other check does,
    # and the table names no check that does not exist.
    declared = set()
    for c in bounds.claims("agnostic-halfspaces"):
        for chk in c.checks:
            declared.add((c.number, chk.name))
            if (c.number, chk.name) in WITHOUT_MUTANTS:
                assert not chk.mutants, (c.number, chk.name)
            else:
                assert chk.mutants, (c.number, chk.name)
    assert set(MUTANTS) <= declared and set(WITHOUT_MUTANTS) <= declared


def test_at_least_90_percent_of_mutants_detected_at_smoke_or_default():
    ms = [m for c in bounds.claims("agnostic-halfspaces") for chk in c.checks for m in chk.mutants]
    assert len(ms) >= 55
    assert sum(m.profile in ("smoke", "default") for m in ms) >= 0.9 * len(ms)


def test_mutant_is_removed_after_the_run():
    # After a mutant ran, the real check passes again (the patch is undone).
    _run_with(P + "remark-2", "grid", "ratio-inverted")
    claim = bounds.get(P + "remark-2")
    chk = next(k for k in claim.checks if k.name == "grid")
    assert _run_one(claim, chk, seed=None, profile=_profile("smoke"), n_jobs=1).status is CheckStatus.PASS
