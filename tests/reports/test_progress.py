"""A night is never silent and reads green when it is green (reports/progress.py, reports/nightly.py).

Progress: every item's own seconds, a heartbeat for an item that runs long (on a terminal and in a log), the
report phase, the opening lines; documented errata logged as expected; unrun mutants counted in one line; one
wall time everywhere; the cache reused whole by a rerun and pruned.
"""

from __future__ import annotations

import io
import json
import os
import re
import time

import pytest

from privbound.reports import nightly, progress
from privbound.reports.cli import _nightly_footer
from privbound.reports.progress import PhaseProgress
from privbound.reports.nightly import run_nightly

CLAIM_WITH_ERRATA = "robust-halfspaces/observation-8"  # two checks of printed forms that fail by design (fast)


class Slow:
    """A Laplace count of scale 1 whose batches take ``seconds`` each (a slow fake item)."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def sample(self, data, rng, size):
        time.sleep(self.seconds)
        return data + rng.laplace(size=size)

    def __repr__(self) -> str:
        return f"Slow({self.seconds})"


# ------------------------------------------------------------------ the progress lines


@pytest.mark.parametrize("terminal", [False, True])
def test_a_slow_item_gets_heartbeats_on_a_terminal_and_in_a_log(terminal):
    stream = io.StringIO()
    bar = PhaseProgress("audits", 2, stream=stream, terminal=terminal, heartbeat=0.2)
    bar.start("fast-one")
    bar.done("fast-one", "holds")
    bar.start("slow-one")
    time.sleep(0.75)
    bar.done("slow-one", "holds")
    bar.close()
    beats = [ln for ln in re.split(r"[\r\n]", stream.getvalue()) if "still running" in ln]
    assert len(beats) >= 2, stream.getvalue()
    assert all(re.search(r"\[audits 2/2\] slow-one: still running \(\d+ s\)", b) for b in beats)
    assert not any("fast-one: still running" in ln for ln in stream.getvalue().splitlines())


def test_each_line_carries_the_items_own_seconds_even_without_start():
    stream = io.StringIO()
    bar = PhaseProgress("mutants", 3, stream=stream, terminal=False, heartbeat=None)
    for name in ("a", "b", "c"):  # done() only, as a phase whose items are not announced
        time.sleep(0.3)
        bar.done(name, "detected")
    bar.close()
    seconds = [float(s) for s in re.findall(r"\(([\d.]+) s\)", stream.getvalue())]
    assert len(seconds) == 3 and all(0.25 <= s < 0.6 for s in seconds), seconds  # not 0.3, 0.6, 0.9


def test_a_night_heartbeats_on_a_slow_target_and_opens_with_its_plan(tmp_path, monkeypatch):
    from privbound.audit.targets import registry

    slow = registry.Target("slow-fixture", "fixture-laplace", Slow(0.4), 0.0, 1.0, 2.0, default_trials=2_000,
                           description="a Laplace count whose batches take 0.4 s (a test fixture)")
    monkeypatch.setitem(registry._TARGETS, "slow-fixture", slow)
    monkeypatch.setattr(progress, "HEARTBEAT_SECONDS", 0.3)
    stream = io.StringIO()
    run_nightly("smoke", tmp_path / "run", target_names=["slow-fixture"], claim_ids=[], progress=True, stream=stream)
    log = stream.getvalue().splitlines()
    assert log[0].startswith("privbound nightly, profile smoke:")
    assert str(tmp_path / "run") in log[1] and "items: 1 audits" in log[2]
    assert log[3].startswith("  the cache holds 0 of 1 audits") and log[4].startswith("  expected time:")
    assert any(re.fullmatch(r"\[audits 1/1\] slow-fixture: still running \(\d+ s\)", ln) for ln in log), log
    assert any(ln.startswith("[report ") and "report.html: Headline" in ln for ln in log)


def test_the_expected_time_comes_from_this_machines_history(tmp_path):
    first, _ = run_nightly("smoke", tmp_path / "a", target_names=["randomized-response"], claim_ids=[],
                           progress=False)
    stream = io.StringIO()
    run_nightly("smoke", tmp_path / "b", target_names=["randomized-response"], claim_ids=[], progress=True,
                stream=stream)
    line = next(ln for ln in stream.getvalue().splitlines() if "expected time" in ln)
    assert "median of the last 1 smoke run(s) on this machine" in line
    assert f"about {first.wall_seconds:.0f} s" in line



def test_without_a_history_the_expected_time_states_the_idle_and_the_loaded_measurement(tmp_path):
    from privbound.reports.locations import NIGHTLY_PROFILES

    line = nightly.expected_time(NIGHTLY_PROFILES["default"], tmp_path / "none.sqlite", readable=False)
    (idle, idle_load), (loaded, load) = NIGHTLY_PROFILES["default"].measured
    assert idle < loaded and idle_load < 2 <= load
    assert line.startswith(f"{idle:g} min cold on a 2-core machine at load average {idle_load:g}, "
                           f"{loaded:g} min at {load:g}")
    assert "no default run on this machine in the history yet" in line
    assert nightly.expected_time(NIGHTLY_PROFILES["full"], tmp_path / "none.sqlite", readable=False).startswith(
        "unknown")


# ------------------------------------------------------------------ green reads green


def test_documented_errata_log_as_expected_fails_with_their_form(tmp_path):
    stream = io.StringIO()
    results, _ = run_nightly("smoke", tmp_path / "run", target_names=[], claim_ids=[CLAIM_WITH_ERRATA],
                             progress=True, stream=stream)
    log = stream.getvalue()
    expected = [c for c in results.checks if c.get("expected")]
    assert expected and nightly.main_status(results) == 0
    assert ": fail (" not in log
    for c in expected:
        form = c["details"]["erratum_form"]
        assert f"{c['claim_id']}:{c['check']}: expected fail (documented erratum, {form} form)" in log


def test_a_smoke_night_counts_its_unrun_mutants_in_one_line(tmp_path):
    results, out = run_nightly("smoke", tmp_path / "run", target_names=[], claim_ids=[CLAIM_WITH_ERRATA],
                               progress=False)
    page = (out / "report.html").read_text()
    assert results.mutants == () and results.counts.mutants_not_run > 0
    assert "not run tonight" not in page and "detected at the smoke profile" not in page
    assert f"{results.counts.mutants_not_run} registered mutant(s) not run: the smoke profile runs no mutants" in page
    assert json.loads((out / "results.json").read_text())["counts"]["mutants_not_run"] == results.counts.mutants_not_run


def test_one_wall_time_in_the_terminal_summary_and_report(tmp_path):
    results, out = run_nightly("smoke", tmp_path / "run", target_names=["randomized-response"],
                               claim_ids=[CLAIM_WITH_ERRATA], progress=False)
    wall = f"{results.wall_seconds:.1f} s"
    assert json.loads((out / "results.json").read_text())["wall_seconds"] == results.wall_seconds
    assert f"wall time {wall}" in (out / "summary.md").read_text()
    assert f"wall time {wall}" in (out / "report.html").read_text()
    assert _nightly_footer(results, out)[-1].split("; total ")[1].startswith(wall)
    assert results.wall_seconds >= sum(results.phases.values()) - 1e-6  # the phases, report included, fit in it


# ------------------------------------------------------------------ the cache


def test_a_cached_rerun_recomputes_no_audit(tmp_path, monkeypatch):
    names = ["randomized-response", "laplace-inverted-scale"]
    first, out = run_nightly("smoke", tmp_path / "run", target_names=names, claim_ids=[], progress=False)

    def refuse(self, *a, **k):
        raise AssertionError("an audit was recomputed although the cache holds its record")

    monkeypatch.setattr(type(nightly.targets()[0]), "audit", refuse)
    stream = io.StringIO()
    again, _ = run_nightly("smoke", tmp_path / "run", target_names=names, claim_ids=[], progress=True, stream=stream)
    assert [a.to_dict() for a in again.audits] == [a.to_dict() for a in first.audits]
    n = len(first.audits)
    assert f"the cache holds {n} of {n} audits" in stream.getvalue()


def test_pruning_drops_the_least_recently_used_and_keeps_what_the_night_used(tmp_path):
    from privbound.audit.cache import ResultCache, cache_size, prune_cache

    cache = ResultCache(tmp_path / "c")
    for i in range(4):
        cache.store(f"k{i}", {"v": "x" * 1000})
        os.utime(cache._path(f"k{i}"), (1000.0 + i, 1000.0 + i))
    assert cache.load("k0") is not None  # used now: the most recent
    since = time.time() - 1
    pruned = prune_cache(tmp_path / "c", 2 * 1100, keep_since=since)
    left = sorted(p.stem for p in (tmp_path / "c").glob("*.json"))
    assert left == ["k0", "k3"] and pruned.removed_files == 2
    pruned = prune_cache(tmp_path / "c", 0, keep_since=since)  # k0 was used this "night": kept over the cap
    assert sorted(p.stem for p in (tmp_path / "c").glob("*.json")) == ["k0"] and cache_size(tmp_path / "c") > 0
    assert pruned.protected_bytes == cache_size(tmp_path / "c")


def test_a_night_prunes_its_cache_to_cache_max_and_says_so(tmp_path):
    old = tmp_path / ".cache" / "chunks" / "old-namespace"
    old.mkdir(parents=True)
    (old / "chunk-000000-10.npz").write_bytes(b"x" * 200_000)
    os.utime(old / "chunk-000000-10.npz", (1000.0, 1000.0))
    results, out = run_nightly("smoke", tmp_path / "run", target_names=["randomized-response"], claim_ids=[],
                               progress=False, cache_max=50_000)
    assert not old.exists()
    assert results.cache["pruned_bytes"] >= 200_000 and results.cache["bytes"] > 0  # its own entries kept
    assert "pruned to stay under 50.0 KB" in "\n".join(_nightly_footer(results, out))


def test_a_record_is_reused_only_for_the_same_target(tmp_path, laplace_target):
    laplace_target("fixture-same-name", tight=None, claim=2.0)
    first, _ = run_nightly("smoke", tmp_path / "run", target_names=["fixture-same-name"], claim_ids=[], progress=False)
    laplace_target("fixture-same-name", tight=None, claim=0.5)  # same name, another claim: audited afresh
    again, _ = run_nightly("smoke", tmp_path / "run", target_names=["fixture-same-name"], claim_ids=[],
                           progress=False)
    assert first.audits[0].result["epsilon_claimed"] == 2.0 and again.audits[0].result["epsilon_claimed"] == 0.5
    assert (first.audits[0].status, again.audits[0].status) == ("holds", "violated")
