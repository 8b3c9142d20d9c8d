"""Which targets a night audits: every registered target in the full profile; smoke and default leave out those
registered with ``nightly_profile="full"`` and name them in the notes (deterministic: no statistical error)."""

from __future__ import annotations

import dataclasses

from privbound.audit.targets import get_target
from privbound.reports import nightly
from privbound.reports.nightly import run_nightly

CLAIMS = ["decision-lists-winnow/lemma-3"]


def _two_targets(monkeypatch):
    every = get_target("randomized-response")
    full_only = dataclasses.replace(get_target("laplace-eps1"), name="laplace-eps1-full-only", nightly_profile="full")
    monkeypatch.setattr(nightly, "targets", lambda: [every, full_only])
    monkeypatch.setattr(nightly, "skipped_target_notes", lambda: [])
    return every, full_only


def test_a_smoke_night_leaves_a_full_only_target_out_and_says_so(tmp_path, monkeypatch):
    every, full_only = _two_targets(monkeypatch)
    results, out = run_nightly("smoke", tmp_path / "run", claim_ids=CLAIMS, membership_names=[], progress=False)
    assert [a.target for a in results.audits] == [every.name]
    assert results.notes == (f"Audited only by the full profile: {full_only.name}",)
    assert results.audit_confidence == nightly.audit_confidence(1)
    assert full_only.name in (out / "summary.md").read_text()


def test_a_night_of_named_targets_audits_a_full_only_one(tmp_path, monkeypatch):
    _, full_only = _two_targets(monkeypatch)
    results, _ = run_nightly("smoke", tmp_path / "run", target_names=[full_only.name], claim_ids=CLAIMS,
                             progress=False)
    assert [a.target for a in results.audits] == [full_only.name, f"{full_only.name}:floating-point"]
    assert results.notes == ()
