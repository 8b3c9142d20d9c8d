"""The nightly's floating-point audits, the CLI's ``--float`` and the note for a missing optional library.

Statistical parts run the audits at the smoke profile's trials with seed 0: the float-unsafe
Laplace is caught with an epsilon lower bound several times its claim (a miss would need the
floating-point attack to fail outright), and a float-safe target reports a false violation with
probability at most the run's family-wise 5%.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from privbound.audit.targets import get_target
from privbound.audit.targets import libraries as library_targets
from privbound.audit.targets import opacus as opacus_targets
from privbound.audit.targets import opendp as opendp_targets
from privbound.audit.targets import registry
from privbound.reports import nightly
from privbound.reports.cli import main
from privbound.reports.nightly import audit_jobs, main_status, run_nightly

CLAIMS = ["decision-lists-winnow/lemma-3"]


def _by_name(results):
    return {a.target: a for a in results.audits}


def test_float_implementations_get_a_second_audit_and_an_unsafe_one_must_be_caught(tmp_path):
    names = ["laplace-eps1", "snapping-laplace", "randomized-response"]
    results, _ = run_nightly("smoke", tmp_path / "run", target_names=names, claim_ids=CLAIMS, progress=False)
    audits = _by_name(results)
    # randomized-response is not a floating-point implementation: no second audit
    assert set(audits) == {*names, "laplace-eps1:floating-point", "snapping-laplace:floating-point"}
    assert audits["laplace-eps1"].status == "holds" and audits["laplace-eps1"].audit == "mathematical"
    unsafe = audits["laplace-eps1:floating-point"]
    assert unsafe.audit == "floating-point" and unsafe.status == "caught"
    assert unsafe.result["float_audit"] and unsafe.result["epsilon_lower_bound"] > 2 * 1.0
    assert audits["snapping-laplace:floating-point"].status == "holds"
    # the five audits share the family-wise confidence
    assert results.audit_confidence == pytest.approx(1 - 0.05 / 5)
    assert main_status(results) == 0
    summary = (tmp_path / "run" / "summary.md").read_text()
    assert "| laplace-eps1:floating-point |" in summary and "| floating-point |" in summary
    assert "laplace-eps1:floating-point" in (tmp_path / "run" / "report.html").read_text()


def test_a_float_safe_implementation_registered_as_unsafe_is_a_miss_and_fails_the_night(tmp_path, monkeypatch):
    # The exact discrete Laplace has no floating-point leak: a night that expects one must say "missed".
    mislabelled = dataclasses.replace(get_target("discrete-laplace"), name="discrete-laplace-mislabelled",
                                      float_safe=False)
    monkeypatch.setitem(registry._TARGETS, mislabelled.name, mislabelled)
    results, _ = run_nightly("smoke", tmp_path / "run", target_names=[mislabelled.name], claim_ids=CLAIMS,
                          progress=False)
    audits = _by_name(results)
    assert audits[mislabelled.name].status == "holds"
    assert audits[f"{mislabelled.name}:floating-point"].status == "missed"
    assert results.counts.missed == 1 and main_status(results) == 1


def test_audit_jobs_order_and_targets_without_a_floating_point_question():
    ts = [get_target(n) for n in ("randomized-response", "laplace-eps1", "discrete-gaussian")]
    assert [(t.name, f) for t, f in audit_jobs(ts)] == [
        ("randomized-response", False), ("laplace-eps1", False), ("discrete-gaussian", False),
        ("laplace-eps1", True), ("discrete-gaussian", True)]


def test_cli_float_audit_exit_status_follows_the_registered_float_safety(capsys):
    assert main(["audit", "laplace-eps1", "--float", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["float_audit"] is True and out["violation"] is True
    assert main(["audit", "snapping-laplace", "--float"]) == 0
    assert "no floating-point leak found" in capsys.readouterr().out
    # the ordinary audit of the same float-unsafe target keeps its meaning: the claim holds
    assert main(["audit", "laplace-eps1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["violation"] is False


def test_cli_float_is_refused_with_one_run_and_judges_the_pair_a_search_found(capsys):
    assert main(["audit", "laplace-eps1", "--float", "--one-run"]) == 2
    assert "--float does not apply to --one-run" in capsys.readouterr().err
    # a float-unsafe target: the search's floating-point verdict catches it on the pair found (exit 0)
    assert main(["audit", "laplace-eps1", "--search", "--float", "--trials", "20000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["violation"] is False and out["floating_point"]["violation"] is True
    # without --float the target declares its own floating-point audit: the search does not run the attack
    assert main(["audit", "laplace-eps1", "--search", "--trials", "20000", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["floating_point"] is None


def test_a_missing_optional_library_is_one_note_in_the_outputs(tmp_path, monkeypatch):
    monkeypatch.setattr(library_targets, "UNAVAILABLE", {})
    monkeypatch.setattr(opacus_targets, "UNAVAILABLE", None)
    monkeypatch.setattr(opendp_targets, "UNAVAILABLE", "opendp is not installed: pip install 'privbound[libs]'")
    assert nightly.skipped_target_notes() == [
        "OpenDP targets skipped: opendp is not installed: pip install 'privbound[libs]'"]
    monkeypatch.setattr(nightly, "targets", lambda: [get_target("randomized-response")])
    results, _ = run_nightly("smoke", tmp_path / "run", claim_ids=CLAIMS, membership_names=[], progress=False)
    assert list(results.notes) == nightly.skipped_target_notes()
    assert "> OpenDP targets skipped: opendp is not installed" in (tmp_path / "run" / "summary.md").read_text()
    assert "OpenDP targets skipped" in (tmp_path / "run" / "report.html").read_text()
    monkeypatch.setattr(opendp_targets, "UNAVAILABLE", None)
    assert nightly.skipped_target_notes() == []
    monkeypatch.setattr(library_targets, "UNAVAILABLE", {"pipeline-dp": "pipeline-dp is not installed"})
    monkeypatch.setattr(opacus_targets, "UNAVAILABLE", "torch or opacus is not installed")
    assert nightly.skipped_target_notes() == ["pipeline-dp targets skipped: pipeline-dp is not installed",
                                              "Opacus targets skipped: torch or opacus is not installed"]


def _float_leaking_correct_target():
    # gaussian-classic samples its noise in doubles; with float_safe undeclared its audit runs the floating-point
    # attack beside the mathematical one, which finds the leak (bound 2.4 against 0.5 at 1000 trials, seed 0)
    import dataclasses

    return dataclasses.replace(get_target("gaussian-classic"), float_safe=None)


def test_a_float_leak_found_beside_the_mathematical_audit_fails_the_night(monkeypatch):
    t = _float_leaking_correct_target()
    [rec] = nightly.run_audits([t], nightly.NIGHTLY_PROFILES["smoke"], seed=0, n_jobs=1)
    assert rec.result["violation"] is False and rec.result["floating_point"]["violation"] is True
    assert rec.status == "violated"


def test_a_float_leak_found_beside_the_mathematical_audit_fails_the_cli(monkeypatch, capsys):
    from privbound.audit import targets as target_package
    from privbound.reports import cli

    monkeypatch.setattr(target_package, "get_target", lambda name: _float_leaking_correct_target())
    code = cli.main(["audit", "gaussian-classic", "--trials", "1000"])
    assert "FLOAT-UNSAFE" in capsys.readouterr().out and code == 1
