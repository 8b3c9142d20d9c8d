"""Nightly reports: history, comparison with the previous run, HTML, Dask."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from privbound.reports import history as H
from privbound.reports.html import render_html
from privbound.reports.nightly import run_nightly
from privbound.reports.schema import NightlyResults


def _results(started, audits, checks=()):
    return {
        "schema": "privbound.nightly/2", "profile": "smoke", "started_utc": started, "finished_utc": started,
        "wall_seconds": 1.0, "code_version": "test", "seed": 0, "audit_family_confidence": 0.95,
        "audit_confidence": 0.95, "audits": audits, "checks": list(checks),
        "counts": {"holds": 0, "violated": 0, "caught": 0, "missed": 0, "error": 0, "checks_pass": 0,
                   "checks_fail": 0, "checks_inconclusive": 0, "checks_expected_fail": 0},
    }


def _audit(name, status, lb, claim=1.0, tpr=0.5, fpr=0.3, n=8000):
    return {"target": name, "family": "f", "paper": None, "planted_bug": status in ("caught", "missed"),
            "status": status, "error": None,
            "result": {"epsilon_lower_bound": lb, "epsilon_claimed": claim, "p_value": 0.5, "delta": 0.0,
                       "method": "clopper-pearson/split(0.2)", "tpr": tpr, "fpr": fpr, "n_evaluation": n}}


def _check(cid, status):
    return {"claim_id": cid, "check": "c", "kind": "probabilistic", "status": status, "observed": 0.1, "bound": 0.2,
            "ratio": 0.5, "p_value": 0.3, "details": {}, "trials": 10}


def test_compare_lists_new_violations_first(tmp_path):
    db = tmp_path / "history.sqlite"
    first = _results("2026-01-01T00:00:00+00:00",
                     [_audit("a", "holds", 0.5), _audit("b", "holds", 0.2), _audit("c", "caught", 2.0)],
                     [_check("robust-halfspaces/lemma-9", "pass")])
    H.record_run(db, first, tmp_path)
    second = _results("2026-01-02T00:00:00+00:00",
                      [_audit("a", "holds", 0.9), _audit("b", "violated", 1.3), _audit("c", "caught", 2.0)],
                      [_check("robust-halfspaces/lemma-9", "fail")])
    prev = H.previous_run(db, "smoke", second["started_utc"])
    changes = H.compare(second, prev)
    assert [c["name"] for c in changes] == ["b", "robust-halfspaces/lemma-9:c", "a"]
    assert changes[0]["change"] == "holds -> violated"
    assert "rose 0.500 -> 0.900" in changes[2]["change"]
    # A rise well inside both runs' sampling spread is not significant.
    third = _results("2026-01-03T00:00:00+00:00", [_audit("a", "holds", 0.91), _audit("b", "violated", 1.3),
                                                   _audit("c", "caught", 2.0)], [_check("robust-halfspaces/lemma-9", "fail")])
    H.record_run(db, second, tmp_path)
    assert H.compare(third, H.previous_run(db, "smoke", third["started_utc"])) == []
    assert H.previous_run(db, "smoke", third["started_utc"])["run_id"] == H.run_id_of(second)
    assert len(H.load_history(db)) == 8


def test_no_previous_run_means_no_changes(tmp_path):
    assert H.previous_run(tmp_path / "none.sqlite", "smoke", "2030") is None
    assert H.compare(_results("x", []), None) == []


def test_html_is_self_contained():
    res = _results("2026-01-01T00:00:00+00:00", [_audit("a", "holds", 0.5)])
    res["audits"][0]["result"]["details"] = {"roc": {"fpr": [0, 0.5, 1], "tpr": [0, 0.7, 1]}}
    res["audits"][0]["result"].update(fpr=0.5, tpr=0.7)
    page = render_html(NightlyResults.from_dict(res), [{"id": "robust-halfspaces/theorem-2", "checks": [],
                                                        "uncheckable_reason": "lower bound", "pending": None}])
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page
    assert not re.search(r"(src|href)=\"(https?:)?//", page)
    assert page.count("data:image/png;base64,") >= 2  # the epsilon plot and the ROC curve
    assert "Reference mechanisms" in page and "theorem-2" in page


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("night") / "2026-01-01"
    results, out = run_nightly("smoke", out, target_names=["randomized-response", "report-noisy-max-value", "gaussian-analytic"],
                               claim_ids=["decision-lists-winnow/lemma-3"], progress=False)
    return results, out


def test_nightly_writes_html_and_history(small_run):
    results, out = small_run
    page = (out / "report.html").read_text()
    assert "randomized-response" in page and "report-noisy-max-value" in page
    assert (out.parent / "history.sqlite").exists()
    # The accountant's second claim (the Gaussian mechanism's DpEvent) reaches the page.
    acc = next(a for a in results.audits if a.target == "gaussian-analytic").result["accountant_epsilon"]
    assert acc and all(f"{k} {v:.3g}" in page for k, v in acc.items())


def _chromium_console(browser, page, profile_dir):
    """Render ``page`` headless; return (exit code, DOM, console lines logged by the page)."""
    proc = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--enable-logging=stderr", "--v=0",
         f"--user-data-dir={profile_dir}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    console = [ln for ln in proc.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]
    return proc.returncode, proc.stdout, console


def test_html_renders_in_headless_chromium(small_run, tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        pytest.skip("no Chromium installed: the headless rendering check needs one (apt-get install chromium)")
    _, out = small_run
    code, dom, console = _chromium_console(browser, out / "report.html", tmp_path / "profile")
    assert code == 0
    assert "privbound nightly report" in dom
    assert console == [], console
    # Negative control: the same detector sees the errors of a broken page.
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><script>console.error("boom"); undefinedFn();</script></body></html>')
    _, _, console = _chromium_console(browser, bad, tmp_path / "profile2")
    assert any("boom" in ln for ln in console) and any("Uncaught" in ln for ln in console)


def test_same_results_on_a_dask_local_cluster(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    import joblib

    names = ["laplace-eps1", "above-threshold", "svt-no-cutoff"]
    local, _ = run_nightly("smoke", tmp_path / "local", target_names=names, claim_ids=[], progress=False, n_jobs=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster), joblib.parallel_config(backend="dask"):
        remote, _ = run_nightly("smoke", tmp_path / "dask", target_names=names, claim_ids=[], progress=False, n_jobs=-1)

    def strip(audits):
        return json.dumps([{k: v for k, v in (a.result or {}).items() if k not in ("wall_seconds", "details")}
                           for a in audits], sort_keys=True)

    assert strip(local.audits) == strip(remote.audits)


def test_html_renders_one_and_two_sided_scaling_fits():
    res = _results("2026-01-01T00:00:00+00:00", [])
    base = {"claim_id": "agnostic-halfspaces/theorem-2.1", "kind": "scaling", "status": "pass", "observed": 1.8,
            "bound": 2.0, "ratio": 0.9, "p_value": 0.7, "trials": 4}
    xs = {"x": [10.0, 20.0, 40.0, 80.0], "y": [300.0, 1200.0, 3200.0, 12000.0], "intercept": 1.5, "parameter": "1/alpha"}
    res["checks"] = [dict(base, check="one-sided", details=dict(xs, slope_ci=[1.4, None], sense="at-most")),
                     dict(base, check="two-sided", details=dict(xs, slope_ci=[1.4, 2.2]))]
    page = render_html(NightlyResults.from_dict(res))
    assert "Scaling fits" in page and page.count("data:image/png;base64,") == 2  # one figure per fit


@pytest.mark.slow
def test_whole_smoke_profile_on_a_dask_local_cluster_matches_local(tmp_path):
    # The smoke profile on a LocalCluster (worker processes on loopback) gives the same
    # results.json as a local run: same seeds per chunk, same order, whatever runs the chunks.
    distributed = pytest.importorskip("dask.distributed")
    import joblib

    local, _ = run_nightly("smoke", tmp_path / "local" / "day", progress=False, resume=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster, distributed.Client(cluster), \
            joblib.parallel_config(backend="dask"):
        remote, _ = run_nightly("smoke", tmp_path / "dask" / "day", progress=False, n_jobs=-1, resume=False)

    # Targets that draw from their own generator (OpenDP's) do not repeat for a seed: they must run on
    # the cluster, and every other audit must repeat exactly.
    from privbound.audit.targets import get_target

    unseeded = {name for name in {a.target for a in local.audits}  # "<target>" or "<target>:floating-point"
                if getattr(get_target(name.split(":")[0]).mechanism, "draws_own_randomness", False)}
    assert all(a.status != "error" for a in remote.audits), [a.error for a in remote.audits if a.error]

    def strip(res):
        def clean(d):
            return {k: v for k, v in (d or {}).items() if k not in ("wall_seconds", "details")}
        return json.dumps({"audits": [clean(a.result) for a in res.audits if a.target not in unseeded],
                           "checks": [clean(c) for c in res.checks], "counts": res.counts.to_dict()}, sort_keys=True)

    assert strip(local) == strip(remote)


def _png_size(png: bytes) -> tuple[int, int]:
    import struct

    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", png[16:24])


def test_every_figure_fits_a_1400_px_window(small_run):
    import base64

    _, out = small_run
    page = (out / "report.html").read_text()
    sizes = [_png_size(base64.b64decode(m)) for m in re.findall(r'src="data:image/png;base64,([^"]+)"', page)]
    assert sizes and max(w for w, _ in sizes) <= 1250  # the page's content width: figures at natural size


def test_report_screenshot_at_1400_px_in_headless_chromium(small_run, tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        pytest.skip("no Chromium installed: the screenshot check needs one (apt-get install chromium)")
    import numpy as np
    from PIL import Image

    _, out = small_run
    shot = tmp_path / "report.png"
    proc = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,2400", f"--screenshot={shot}",
         (out / "report.html").as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0 and shot.exists(), proc.stderr
    img = np.asarray(Image.open(shot).convert("L"))
    assert img.shape[1] == 1400
    ink = img < 200
    assert ink.mean() > 0.01  # something rendered: text, tables, figures
    assert not ink[:, -40:].any()  # nothing spills past the right margin at 1400 px
    assert ink[:200].any()  # the header is at the top


def test_the_comparison_names_the_libraries_whose_version_changed(tmp_path):
    # An upgraded DP library is a reason for a verdict to move, as a code change is: the comparison says which.
    import sqlite3

    db = tmp_path / "history.sqlite"
    first = {**_results("2026-01-01T00:00:00+00:00", [_audit("a", "holds", 0.5)]),
             "libraries": ["numpy=2.0.0", "diffprivlib=0.6.6", "opacus=-"]}
    H.record_run(db, first, tmp_path)
    second = {**first, "started_utc": "2026-01-02T00:00:00+00:00",
              "libraries": ["numpy=2.0.0", "diffprivlib=0.6.7", "opacus=1.5.2"]}
    prev = H.previous_run(db, "smoke", second["started_utc"])
    assert prev["libraries"] == first["libraries"]
    differences = H.comparison_summary(second, prev).differences
    assert list(differences) == ["library versions differ: diffprivlib 0.6.6 -> 0.6.7, opacus - -> 1.5.2"]
    assert not H.comparison_summary({**second, "libraries": first["libraries"]}, prev).differences
    # a history written before library versions were kept: nothing to compare, no false difference
    old = tmp_path / "old.sqlite"
    with sqlite3.connect(old) as con:
        con.executescript("CREATE TABLE runs (run_id TEXT PRIMARY KEY, started_utc TEXT, profile TEXT, "
                          "code_version TEXT, seed INTEGER, out_dir TEXT, wall_seconds REAL, host TEXT); "
                          "CREATE TABLE rows (run_id TEXT, kind TEXT, name TEXT, status TEXT, value REAL, "
                          "reference REAL, p_value REAL, extra TEXT, PRIMARY KEY (run_id, kind, name));")
        con.execute("INSERT INTO runs VALUES ('r0', '2026-01-01T00:00:00+00:00', 'smoke', 'test', 0, '.', 1.0, 'h')")
    before = H.previous_run(old, "smoke", second["started_utc"])
    assert before["libraries"] is None and not H.comparison_summary(second, before).differences
    H.record_run(old, second, tmp_path)  # and writing to it adds the column
    assert H.previous_run(old, "smoke", "2026-01-03")["libraries"] == second["libraries"]
