"""The night as a typed value (reports/schema.py): results.json is its JSON form, read back exactly, and
summary.md and report.html are rendered from it.

One small smoke night (three targets, one claim, one membership audit; about two seconds), deterministic
given seed 0.
"""

from __future__ import annotations

import json
import re
from dataclasses import fields, replace

import pytest

from privbound.reports import schema
from privbound.reports.html import render_html
from privbound.reports.nightly import claims_info, render_summary, run_nightly
from privbound.reports.schema import (SCHEMA, AuditRecord, BaselineRun, Counts, LearnerMutantRecord, NightlyResults,
                                     load_results)


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    out = tmp_path_factory.mktemp("schema") / "night"
    results, out = run_nightly("smoke", out, target_names=["randomized-response", "laplace-inverted-scale",
                                                           "dp-winnow-replay"],
                               claim_ids=["decision-lists-winnow/lemma-3"],
                               membership_names=["randomized-response-eps1"], progress=False)
    return results, out


def test_results_json_is_the_structure_and_reads_back_exactly(night):
    results, out = night
    text = (out / "results.json").read_text()
    assert text == results.to_json()
    back = load_results(out / "results.json")
    assert back == results and back.to_json() == text
    assert isinstance(back.audits[0], AuditRecord) and isinstance(back.counts, Counts)
    assert [a.target for a in back.audits] == ["randomized-response", "laplace-inverted-scale", "dp-winnow-replay"]
    assert back.membership[0].target == "randomized-response-eps1" and back.paths.out == out
    assert back.history is None  # how the history was updated is not part of results.json


def test_summary_and_report_are_rendered_from_the_structure_read_back(night):
    results, out = night
    back = load_results(out / "results.json")
    assert render_summary(back) == (out / "summary.md").read_text()
    assert render_html(back, claims_info()) == (out / "report.html").read_text()


def test_to_dict_keeps_the_key_order_of_the_schema(night):
    results, _ = night
    d = results.to_dict()
    assert list(d) == ["schema", "run_id", "profile", "started_utc", "finished_utc", "wall_seconds", "phases",
                       "code_version", "libraries", "seed", "audit_family_confidence", "audit_confidence", "paths", "warnings",
                       "notes", "audits", "checks", "counts", "membership", "mutants", "learner_mutants", "changes",
                       "comparison"]
    assert list(d["audits"][0]) == ["target", "family", "paper", "planted_bug", "audit", "status", "tight_status",
                                    "tight_reason", "result", "error"]


def test_every_key_is_documented_in_the_schema(night):
    results, _ = night
    d = results.to_dict()
    documented = set(re.findall(r'"(\w+)"', schema.__doc__)) | set(re.findall(r"[{,]\s*(\w+)", schema.__doc__))
    keys = {*d, *d["paths"], *d["comparison"], *(f.name for f in fields(BaselineRun)), *d["counts"], *d["audits"][0],
            *d["membership"][0], *(f.name for f in fields(LearnerMutantRecord)), *d["phases"]}
    assert keys - documented == set()


def _minimal():
    return {"schema": SCHEMA, "profile": "smoke", "started_utc": "t0", "finished_utc": "t1", "wall_seconds": 1.0,
            "code_version": "v", "seed": 0, "audit_family_confidence": 0.95, "audit_confidence": 0.95,
            "audits": [], "checks": [],
            "counts": {k: 0 for k in ("holds", "violated", "caught", "missed", "error", "checks_pass", "checks_fail",
                                      "checks_inconclusive")}}


def test_fields_added_within_the_schema_read_as_empty_when_absent():
    res = NightlyResults.from_dict(_minimal())
    assert res.run_id is None and res.paths is None and res.comparison is None and res.phases == {}
    assert res.warnings == () and res.membership == () and res.mutants == () and res.changes == ()
    assert res.counts.mutants_detected == 0 and res.counts.checks_expected_fail == 0 and res.counts.tight_violated == 0
    rec = AuditRecord.from_dict({"target": "t", "family": "f", "paper": None, "planted_bug": False,
                                 "status": "holds", "result": None, "error": None})
    assert rec.audit == "mathematical" and rec.tight_status is None and rec.tight_reason is None


@pytest.mark.parametrize("change, error, message", [
    (lambda d: d.pop("profile"), ValueError, "results: missing key(s) ['profile']"),
    (lambda d: d.update(extra=1), ValueError, "results: unknown key(s) ['extra']"),
    (lambda d: d.update(schema="privbound.nightly/1"), ValueError, "results: schema must be 'privbound.nightly/2'"),
    (lambda d: d.update(audits={}), TypeError, "results.audits must be a list"),
    (lambda d: d["counts"].pop("holds"), ValueError, "results.counts: missing key(s) ['holds']"),
    (lambda d: d.update(audits=[{"target": "t", "family": "f", "paper": None, "planted_bug": False,
                                 "status": "fine", "result": None, "error": None}]),
     ValueError, "audit record 't': status must be one of"),
    (lambda d: d.update(audits=[{"target": "t"}]), ValueError, "results.audits[0]: missing key(s)"),
    (lambda d: d.update(comparison={"baseline": None}), ValueError, "results.comparison: missing key(s)"),
])
def test_a_results_object_that_does_not_fit_the_schema_is_refused_naming_the_key(change, error, message):
    data = _minimal()
    change(data)
    with pytest.raises(error) as err:
        NightlyResults.from_dict(data)
    assert str(err.value).startswith(message), str(err.value)


def test_records_refuse_unknown_statuses_and_results_refuse_untyped_records():
    with pytest.raises(ValueError, match="audit record 'x': audit must be one of"):
        AuditRecord("x", "f", None, False, "approximate", "holds", None, None)
    res = NightlyResults.from_dict(_minimal())
    with pytest.raises(TypeError, match=r"NightlyResults.audits\[0\] must be an instance of AuditRecord, got dict"):
        replace(res, audits=({"target": "x"},))
    with pytest.raises(TypeError, match="results must be a NightlyResults or a results.json mapping, got list"):
        schema.as_results([])


def test_the_repr_is_short(night):
    results, _ = night
    text = repr(results)
    assert len(text) < 300 and results.run_id in text and "holds 2" in text
    assert json.loads(results.to_json())["counts"]["holds"] == 2


def test_a_night_records_the_libraries_that_sample_and_an_upgrade_changes_every_cache_key(night, monkeypatch):
    # An upgraded DP library must be audited afresh: its version is part of the chunk cache's key and of the
    # finished records' key, and the night records it (a diffprivlib relabelled with a third of the noise was read
    # "holds" from the old cache).
    from privbound.audit import cache
    from privbound.audit.targets import get_target
    from privbound.reports import nightly

    results, out = night
    assert [v.split("=")[0] for v in results.libraries] == list(cache.SAMPLING_LIBRARIES)
    numpy_version = next(v for v in results.libraries if v.startswith("numpy="))
    assert numpy_version in (out / "summary.md").read_text()
    target = get_target("randomized-response")
    chunks, records = target.cache_key(0), nightly.environment_key()
    upgraded = tuple(v if not v.startswith("diffprivlib=") else "diffprivlib=99.0"
                     for v in cache.sampling_library_versions())
    monkeypatch.setattr(cache, "sampling_library_versions", lambda: upgraded)
    assert target.cache_key(0) != chunks and nightly.environment_key() != records


def test_summary_md_lists_the_audits_that_do_not_repeat_for_the_seed(tmp_path):
    # A target whose library samples from its own generator: its audits (mathematical and floating-point) are
    # valid but another run draws other trials, and the night's "seed 0" must not read as if it fixed them.
    pytest.importorskip("opendp")
    from privbound.audit.targets import targets

    own = next(t for t in targets() if getattr(t.mechanism, "draws_own_randomness", False))
    results, out = run_nightly("smoke", tmp_path / "night", target_names=[own.name], claim_ids=[], progress=False)
    assert results.unrepeatable() == [a.target for a in results.audits]  # each audit of it, named once
    assert all(a.target in (own.name, f"{own.name}:floating-point") for a in results.audits)
    assert all(a.result["details"]["draws_own_randomness"] for a in results.audits if a.result)
    summary = (out / "summary.md").read_text()
    assert "Audits that do not repeat for the seed" in summary and f"`{own.name}`" in summary
    assert ":floating-point:floating-point" not in summary
