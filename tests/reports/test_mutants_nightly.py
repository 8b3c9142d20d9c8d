"""The nightly runs each check on its mutants (default and full profiles) and lists them in the report.

Deterministic given the checks' stable seeds: the mutants of the claim used here are detected at
the smoke profile with observed values far from their bounds (an exponential mechanism with
exp(eps q) has privacy loss 2 eps against a claim of eps).
"""

from __future__ import annotations

import contextlib
from dataclasses import replace

from privbound.bounds import registry
from privbound.bounds.registry import Mutant, get
from privbound.reports.nightly import main_status, run_nightly

CLAIM = "decision-lists-winnow/lemma-3"
TARGETS = ["randomized-response"]


def test_the_default_night_runs_every_mutant_and_the_report_lists_each(tmp_path):
    results, _ = run_nightly("default", tmp_path / "run", target_names=TARGETS, claim_ids=[CLAIM], progress=False)
    declared = [(k.name, m.name) for k in get(CLAIM).checks for m in k.mutants]
    assert len(declared) >= 2
    assert [(m["check"], m["mutant"]) for m in results.mutants] == declared
    assert all(m["detected"] for m in results.mutants)
    assert results.counts.mutants_detected == len(declared) and results.counts.mutants_undetected == 0
    assert main_status(results) == 0
    html = (tmp_path / "run" / "report.html").read_text()
    assert "Checks with teeth: mutants" in html
    assert all(name in html for _, name in declared) and "NOT detected" not in html
    assert f'<details class="rows"><summary>the {len(declared)} mutant(s) run tonight</summary>' in html  # closed
    assert f"detected **{len(declared)}**" in (tmp_path / "run" / "summary.md").read_text()


def test_a_mutant_the_check_does_not_detect_fails_the_night(tmp_path, monkeypatch):
    claim = get(CLAIM)
    inert = Mutant("inert", "changes nothing", contextlib.nullcontext)
    first = replace(claim.checks[0], mutants=(inert,))
    monkeypatch.setitem(registry._REGISTRY, CLAIM, replace(claim, checks=(first,)))
    results, _ = run_nightly("default", tmp_path / "run", target_names=TARGETS, claim_ids=[CLAIM], progress=False)
    assert [m["detected"] for m in results.mutants] == [False]
    assert results.counts.mutants_undetected == 1 and main_status(results) == 1
    assert f"not detected: `{CLAIM}:{first.name}` under `inert`" in (tmp_path / "run" / "summary.md").read_text()
    page = (tmp_path / "run" / "report.html").read_text()
    assert "NOT detected" in page
    assert '<details class="rows" open><summary>the 1 mutant(s) run tonight</summary>' in page  # open: one failed


def test_the_smoke_night_counts_the_mutants_without_running_them(tmp_path):
    results, _ = run_nightly("smoke", tmp_path / "run", target_names=TARGETS, claim_ids=[CLAIM], progress=False)
    assert results.mutants == () and main_status(results) == 0
    n = results.counts.mutants_not_run
    assert n == sum(len(k.mutants) for k in get(CLAIM).checks) > 0
    html = (tmp_path / "run" / "report.html").read_text()
    assert f"{n} registered mutant(s) not run: the smoke profile runs no mutants" in html
    assert "not run tonight" not in html  # counted in one line, not listed row by row
    assert f"not run **{n}** (the smoke profile runs no mutants" in (tmp_path / "run" / "summary.md").read_text()
