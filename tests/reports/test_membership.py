"""Tests of privbound.reports.membership: the ``privbound membership`` command and the nightly section.

Deterministic given the seeds (the verdicts asserted are far from their thresholds: bounds of 2.7 and 0.6
against a claim of 1 at seed 0).
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from privbound.reports.cli import main
from privbound.reports.html import render_html
from privbound.reports.membership import membership_failures, membership_section_html, run_membership
from privbound.reports.nightly import main_status, run_nightly
from privbound.reports.schema import SCHEMA, NightlyResults

RR = ["randomized-response-eps1", "randomized-response-eps1-bug"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_membership_list(capsys):
    code, out, _ = run(capsys, "membership", "list", "--json")
    recs = {r["name"]: r for r in json.loads(out)}
    assert code == 0 and recs["batch-perceptron"]["epsilon"] == 1.0 and recs["agnostic-proper"]["relation"] == "replace-one"
    assert recs["batch-perceptron-noise-div100"]["planted_bug"] and recs["digits-logreg"]["epsilon"] is None
    code, out, _ = run(capsys, "membership", "list")
    assert code == 0 and "randomized-response-eps1-bug" in out


def test_membership_command_prints_the_summary_and_exit_status(capsys, tmp_path):
    code, out, _ = run(capsys, "membership", RR[1], "--reference-models", "4", "--targets", "4", "--top", "2")
    assert code == 0 and "VIOLATION" in out and "planted bug        : caught" in out and "record" in out
    code, out, _ = run(capsys, "membership", RR[0], "--reference-models", "4", "--targets", "4", "--json",
                       "--cache", str(tmp_path))
    d = json.loads(out)
    assert code == 0 and d["name"] == RR[0] and not d["violation"] and d["n_reference"] == 4
    assert list(tmp_path.iterdir())  # the models are cached for a rerun


def test_membership_command_exits_1_when_a_planted_bug_is_missed(capsys, monkeypatch):
    from dataclasses import replace

    from privbound.audit.targets import membership as mt

    bug = mt.get_membership_target(RR[1])
    monkeypatch.setitem(mt.MEMBERSHIP_TARGETS, RR[1], replace(bug, make_estimator=lambda: mt.RandomizedResponseMemoriser(1.0)))
    code, out, _ = run(capsys, "membership", RR[1], "--reference-models", "4", "--targets", "4")
    assert code == 1 and "MISSED" in out


@pytest.mark.parametrize("argv, needle", [
    (["membership", "nope"], "no membership target 'nope'"),
    (["membership", "digits-logreg", "--reference-models", "1"], "reference-models must be >= 2"),
])
def test_membership_bad_arguments(capsys, argv, needle):
    code, _, err = run(capsys, *argv)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def membership_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("night") / "2026-01-01"
    return run_nightly("smoke", out, target_names=["randomized-response"], claim_ids=[], progress=False,
                       membership_names=RR)


def test_nightly_runs_the_membership_audits_and_reports_them(membership_run):
    results, out = membership_run
    assert {m.target: m.status for m in results.membership} == {RR[0]: "holds", RR[1]: "caught"}
    assert "record_risk" not in results.membership[0].result
    data = json.loads((out / "results.json").read_text())
    assert data["membership"][1]["result"]["epsilon_lower_bound"] > 1
    page = (out / "report.html").read_text()
    assert "Membership inference" in page and page.count('alt="membership ROC') == 2 and "Records at highest risk" in page
    assert "## Membership inference" in (out / "summary.md").read_text()
    assert main_status(results) == 0


def test_a_restricted_nightly_runs_no_membership_audit_and_a_missed_bug_fails_the_night(tmp_path, membership_run):
    results, _ = run_nightly("smoke", tmp_path / "day", target_names=["randomized-response"], claim_ids=[],
                             progress=False)
    assert results.membership == () and "Membership inference" not in (tmp_path / "day" / "report.html").read_text()
    missed = replace(membership_run[0], membership=(replace(membership_run[0].membership[1], status="missed"),))
    assert membership_failures(missed) == 1 and main_status(missed) == 1


def test_an_error_in_one_membership_target_is_recorded(monkeypatch):
    from privbound.audit.targets import membership as mt

    def boom():
        raise RuntimeError("no data")

    from dataclasses import replace

    monkeypatch.setitem(mt.MEMBERSHIP_TARGETS, RR[0], replace(mt.get_membership_target(RR[0]), load_data=boom))
    recs = run_membership("smoke", [RR[0]])
    assert recs[0].status == "error" and "no data" in recs[0].error
    assert "error" in membership_section_html(recs)


def test_the_section_is_empty_without_membership_audits():
    assert membership_section_html(None) == "" and membership_section_html([]) == ""
    res = NightlyResults.from_dict({
        "schema": SCHEMA, "profile": "smoke", "code_version": "x", "started_utc": "t", "finished_utc": "t",
        "wall_seconds": 1.0, "seed": 0, "audit_family_confidence": 0.95, "audit_confidence": 0.95,
        "counts": {k: 0 for k in ("holds", "violated", "caught", "missed", "error", "checks_pass", "checks_fail",
                                  "checks_inconclusive")}, "audits": [], "checks": []})
    assert "Membership inference" not in render_html(res)


def test_the_membership_benchmark_runs_quick(capsys):
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "membership.py"
    spec = importlib.util.spec_from_file_location("_bench_membership", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    assert mod.main(["--quick", "--parts", "D", "--n-jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "batch-perceptron (claim 1): largest bound" in out and "flagged in 2/2" in out
