"""The privbound command line and the nightly run (reports/cli.py, reports/nightly.py)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from privbound.reports.cli import main
from privbound.reports.nightly import main_status, run_nightly
from privbound.reports.schema import AuditRecord


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_json_has_one_record_per_target(capsys):
    from privbound.audit.targets import targets

    code, out, _ = run(capsys, "list", "--json")
    assert code == 0
    recs = json.loads(out)
    assert [r["name"] for r in recs] == [t.name for t in targets()]
    assert {"name", "family", "epsilon", "delta", "planted_bug"} <= set(recs[0])
    assert any(r["planted_bug"] for r in recs) and not all(r["planted_bug"] for r in recs)


def test_audit_json_is_the_audit_result(capsys):
    code, out, _ = run(capsys, "audit", "randomized-response", "--trials", "2000", "--seed", "3", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["name"] == "randomized-response" and d["trials"] == 2000 and d["seed"] == 3
    assert 0 <= d["epsilon_lower_bound"] <= 1.0 and d["violation"] is False


def test_audit_of_a_planted_bug_exits_0_when_caught(capsys):
    code, out, _ = run(capsys, "audit", "laplace-inverted-scale")
    assert code == 0 and "caught" in out


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["audit", "no-such-target"], "no target named"),
        (["audit", "laplace-eps1", "--trials", "0"], "trials must be >= 10, got 0"),
        (["audit", "laplace-eps1", "--confidence", "1.5"], "confidence must be in (0, 1)"),
        (["audit", "laplace-eps1", "--seed", "-1"], "seed must be >= 0"),
        (["nightly", "--profile", "huge"], "invalid choice"),
        (["bounds", "eval", "decision-lists-winnow/lemma-9", "d=100", "rho=0.2", "eta=0.5", "c=0"], "violated condition"),
        (["bounds", "eval", "decision-lists-winnow/lemma-9", "d=abc"], "must be a number"),
        (["bounds", "eval", "no/such"], "no claim"),
        (["frobnicate"], "invalid choice"),
        # Options that do nothing in the chosen mode are errors, not silently ignored.
        (["audit", "laplace-eps1", "--canaries", "10"], "--canaries only applies to a one-run audit"),
        (["audit", "laplace-eps1", "--search", "--canaries", "10"], "--canaries only applies to a one-run audit"),
        (["audit", "laplace-eps1", "--one-run", "--trials", "100"], "--trials does not apply to --one-run"),
        (["experiment", "robust-halfspaces", "--data", "/tmp/x"], "--data does not apply to --dataset digits"),
        # A parameter given twice is an error, not "the last one wins".
        (["bounds", "eval", "decision-lists-winnow/lemma-9", "d=100", "rho=0.2", "eta=0.2", "c=0", "d=5"],
         "parameter 'd' given twice"),
        (["bounds", "eval", "decision-lists-winnow/lemma-9", "=3"], "parameters are key=value"),
        (["nightly", "--wait", "-3"], "--wait"),
    ],
)
def test_bad_arguments_give_one_line_and_exit_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_bounds_eval_prints_the_value(capsys):
    code, out, _ = run(capsys, "bounds", "eval", "decision-lists-winnow/lemma-9", "d=100", "rho=0.2", "eta=0.2", "c=0",
                       "--json")
    assert code == 0
    assert json.loads(out)["value"] == pytest.approx(math.log(100) / 0.02)


def test_bounds_list_json(capsys):
    code, out, _ = run(capsys, "bounds", "list", "--json")
    assert code == 0
    recs = json.loads(out)
    assert any(r["id"] == "robust-halfspaces/lemma-21" for r in recs)


def test_nightly_writes_schema_and_exit_status(tmp_path):
    results, out = run_nightly(
        "smoke", tmp_path / "night", target_names=["randomized-response", "laplace-inverted-scale"],
        claim_ids=["decision-lists-winnow/lemma-3"], progress=False,
    )
    data = json.loads((out / "results.json").read_text())
    assert data["schema"] == "privbound.nightly/2" and data["profile"] == "smoke"
    assert {a["target"]: a["status"] for a in data["audits"]} == {
        "randomized-response": "holds", "laplace-inverted-scale": "caught"}
    assert data["counts"]["holds"] == 1 and data["counts"]["caught"] == 1
    assert (out / "summary.md").read_text().startswith("# privbound nightly")
    assert main_status(data) == 0
    # No temporary files are left behind, nor the folder's lock.
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "results.json", "summary.md"]
    assert data["run_id"] and data["phases"]["audits"] >= 0 and "comparison" in data


def test_nightly_exit_1_when_a_planted_bug_is_missed(tmp_path, monkeypatch):
    from privbound.reports import nightly

    def never_flag(selected, profile, **kw):
        return [AuditRecord(target=t.name, family=t.family, paper=None, planted_bug=True, audit="mathematical",
                            status="missed", result=None, error=None) for t in selected]

    monkeypatch.setattr(nightly, "run_audits", never_flag)
    results, _ = run_nightly("smoke", tmp_path, target_names=["laplace-inverted-scale"], claim_ids=[], progress=False)
    assert main_status(results) == 1


def test_module_entry_point_runs():
    proc = subprocess.run([sys.executable, "-m", "privbound.reports.cli", "list"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "laplace-eps1" in proc.stdout


def test_audit_one_run_and_search_modes(capsys):
    code, out, _ = run(capsys, "audit", "laplace-inverted-scale", "--one-run", "--canaries", "1000", "--json")
    d = json.loads(out)
    assert code == 0 and d["m"] == 1000 and d["epsilon_lower_bound"] > 0.5  # planted bug caught in one run
    code, out, _ = run(capsys, "audit", "randomized-response", "--search", "--trials", "4000", "--json")
    d = json.loads(out)
    assert code == 0 and d["violation"] is False and d["trials"] > 0
    code, _, err = run(capsys, "audit", "laplace-eps1", "--one-run", "--search")
    assert code == 2 and "not allowed" in err
