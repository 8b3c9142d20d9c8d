"""Operating the nightly: every failure path keeps a night whole (reports/nightly.py, history.py, locking.py).

Each test is one row of README's "Operating the nightly" table.
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from privbound.bounds.registry import claims
from privbound.reports import history as H
from privbound.reports import nightly
from privbound.reports.cli import main
from privbound.reports.nightly import EXIT_HISTORY_NOT_UPDATED, NightlyError, main_status, run_nightly

TARGETS = ["randomized-response", "laplace-inverted-scale"]
CLAIMS = ["decision-lists-winnow/lemma-3"]


def small(out, **kw):
    kw.setdefault("target_names", TARGETS)
    kw.setdefault("claim_ids", CLAIMS)
    kw.setdefault("progress", False)
    return run_nightly("smoke", out, **kw)


def cli(capsys, *argv):
    """``privbound ARGV``: (exit status, stdout, stderr without the command line's "loading" line)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    err = "".join(ln for ln in err.splitlines(keepends=True) if not ln.startswith("privbound nightly --profile"))
    return code, out, err


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if any audit starts: validation must come first."""
    def boom(*a, **k):
        raise AssertionError("an audit ran before the locations were validated")

    monkeypatch.setattr(nightly, "run_audits", boom)


# ------------------------------------------------------------------ bad locations


@pytest.mark.parametrize("option", ["--out", "--cache"])
def test_a_regular_file_as_folder_is_refused_before_any_work(tmp_path, capsys, no_work, option):
    afile = tmp_path / "afile"
    afile.write_text("x")
    argv = ["nightly", "--profile", "smoke", "--out", str(tmp_path / "run")]
    argv += [option, str(afile)] if option == "--cache" else []
    if option == "--out":
        argv[-1] = str(afile)
    code, out, err = cli(capsys, *argv)
    assert code == 2
    assert err.strip() == f"error: {option} {afile}: exists and is not a directory"
    assert "Traceback" not in err and out == ""


def test_an_uncreatable_out_is_refused_before_any_work(capsys, no_work):
    code, out, err = cli(capsys, "nightly", "--profile", "smoke", "--out", "/proc/nope/run")
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "--out /proc/nope/run: cannot create the directory" in err
    assert not Path("/proc/.cache").exists()


def test_a_folder_as_history_is_refused_before_any_work(tmp_path, capsys, no_work):
    code, _, err = cli(capsys, "nightly", "--profile", "smoke", "--out", str(tmp_path / "run"),
                       "--history", str(tmp_path))
    assert code == 2 and f"--history {tmp_path}: is a directory" in err


def test_cache_and_history_go_where_the_options_say(tmp_path):
    results, out = small(tmp_path / "night" / "run", cache=tmp_path / "c", history=tmp_path / "h" / "runs.sqlite")
    assert (tmp_path / "h" / "runs.sqlite").exists() and any((tmp_path / "c").iterdir())
    assert not (tmp_path / "night" / ".cache").exists() and not (tmp_path / "night" / "history.sqlite").exists()
    assert results.paths.to_dict() == {"out": str(out), "cache": str(tmp_path / "c"),
                                       "history": str(tmp_path / "h" / "runs.sqlite")}


def test_help_documents_the_default_locations(capsys):
    assert main(["nightly", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "<parent of --out>/.cache" in text and "<parent of --out>/history.sqlite" in text
    assert "history was not updated" in text


# ------------------------------------------------------------------- concurrency

_HELD_RUN = textwrap.dedent("""
    import os, sys, time
    from privbound.reports import nightly
    from privbound.reports.cli import main
    real = nightly.run_audits
    def held(*a, **k):
        # Holds the folder until the test creates the release file (at most 300 s).
        deadline = time.monotonic() + 300
        while sys.argv[1] != "-" and not os.path.exists(sys.argv[1]) and time.monotonic() < deadline:
            time.sleep(0.05)
        return real(*a, **k)
    nightly.run_audits = held
    real_run = nightly.run_nightly
    def small(*a, **k):
        k.update(target_names=["randomized-response"], claim_ids=["decision-lists-winnow/lemma-3"])
        return real_run(*a, **k)
    nightly.run_nightly = small
    sys.exit(main(sys.argv[2:]))
""")


def _start(script, release, *argv):
    return subprocess.Popen([sys.executable, str(script), str(release), *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_concurrent_runs_into_one_folder_refuse_or_wait_and_never_mix(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(_HELD_RUN)
    release = tmp_path / "release"
    out = tmp_path / "D" / "run"
    common = ["nightly", "--profile", "smoke", "--out", str(out)]
    first = _start(script, release, *common, "--seed", "0")
    lock = out / ".nightly.lock"
    deadline = time.monotonic() + 300
    while not (lock.exists() and lock.read_text().strip()):
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the first run never took the lock"
        time.sleep(0.05)
    # A second run into the same folder refuses at once, naming the holder.
    refused = subprocess.run([sys.executable, str(script), "-", *common, "--seed", "1"], capture_output=True,
                             text=True, timeout=300)
    assert refused.returncode == 2
    assert re.fullmatch(rf"error: --out {re.escape(str(out))} is in use by pid {first.pid} on \S+, run \S+, "
                        r"since \S+; wait for it or pass --wait", refused.stderr.strip()), refused.stderr
    # A third one waits for it (its first line says so), then runs.
    waiter = _start(script, "-", *common, "--seed", "1", "--wait")
    first_line = waiter.stderr.readline()
    if first_line.startswith("privbound nightly --profile smoke: loading"):  # the command line's own first line
        first_line = waiter.stderr.readline()
    assert "is in use by" in first_line and "waiting" in first_line, first_line
    time.sleep(1.5)  # so that the waiter's launch and the first run's release fall in different seconds
    release.touch()
    assert first.wait(timeout=300) == 0, first.communicate()
    _, w_err = waiter.communicate(timeout=300)
    assert waiter.returncode == 0, w_err
    # The folder holds one run, whole: the three files agree on the run id and the seed.
    data = json.loads((out / "results.json").read_text())
    assert data["seed"] == 1
    assert f"Run `{data['run_id']}`" in (out / "summary.md").read_text()
    assert f"run <code>{data['run_id']}</code>" in (out / "report.html").read_text()
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "results.json", "summary.md"]  # lock removed
    runs = H.load_history(out.parent / "history.sqlite")["run_id"].unique()
    assert len(runs) == 2 and data["run_id"] in runs
    assert data["comparison"]["baseline"]["seed"] == 0  # compared with the first run, which it names
    # the waiter's work started once the folder was its own: after the first run was released, not when launched
    import datetime as dt

    released = dt.datetime.fromtimestamp(release.stat().st_mtime, dt.timezone.utc).replace(microsecond=0)
    assert dt.datetime.fromisoformat(data["started_utc"]) >= released, (data["started_utc"], released)


def test_runs_started_in_the_same_second_get_distinct_ids(tmp_path, monkeypatch):
    import datetime as dt

    fixed = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)

    class Frozen(dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return fixed

    monkeypatch.setattr(nightly._dt, "datetime", Frozen)
    a, _ = small(tmp_path / "a" / "run", history=tmp_path / "h.sqlite")
    b, _ = small(tmp_path / "b" / "run", history=tmp_path / "h.sqlite")
    assert a.started_utc == b.started_utc and a.run_id != b.run_id
    hist = H.load_history(tmp_path / "h.sqlite")
    assert sorted(hist["run_id"].unique()) == sorted([a.run_id, b.run_id])
    assert (hist.groupby("run_id").size() == len(hist) // 2).all()  # two whole runs, not one merged
    assert b.comparison.baseline.run_id == a.run_id


# ----------------------------------------------------------------------- history


def test_a_corrupt_history_costs_the_comparison_not_the_night(tmp_path):
    hist = tmp_path / "history.sqlite"
    junk = os.urandom(4096)
    hist.write_bytes(junk)
    stream = io.StringIO()
    results, out = small(tmp_path / "run", stream=stream)
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "results.json", "summary.md"]
    assert main_status(results) == EXIT_HISTORY_NOT_UPDATED  # all good, but the history was not updated
    assert hist.read_bytes() == junk  # not touched
    warnings = [ln for ln in stream.getvalue().splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1 and str(hist) in warnings[0] and "cannot read history" in warnings[0]
    data = json.loads((out / "results.json").read_text())
    assert data["comparison"]["baseline"] is None and str(hist) in data["comparison"]["note"]
    assert str(hist) in (out / "summary.md").read_text()


def test_a_corrupt_history_gives_exit_4_on_the_command_line(tmp_path, capsys, monkeypatch):
    (tmp_path / "history.sqlite").write_bytes(b"\x00garbage" * 100)
    real = nightly.run_nightly
    monkeypatch.setattr(nightly, "run_nightly", lambda *a, **k: real(*a, **dict(k, target_names=TARGETS,
                                                                                claim_ids=CLAIMS, progress=False)))
    code, out, err = cli(capsys, "nightly", "--profile", "smoke", "--out", str(tmp_path / "run"))
    assert code == 4
    assert "history NOT updated" in out and str(tmp_path / "history.sqlite") in err
    assert "Traceback" not in err


def test_a_read_only_history_keeps_the_outputs_and_says_history_not_updated(tmp_path, monkeypatch):
    hist = tmp_path / "history.sqlite"
    first, _ = small(tmp_path / "day1", history=hist)
    before = hist.read_bytes()
    hist.chmod(0o444)
    if os.geteuid() == 0:  # root writes through file modes: open the history the way a read-only file opens
        monkeypatch.setattr(H, "_open_write", H._open_read)
    stream = io.StringIO()
    try:
        results, out = small(tmp_path / "day2", history=hist, seed=1, stream=stream)
    finally:
        hist.chmod(0o644)
    assert (out / "results.json").exists() and (out / "report.html").exists()
    assert main_status(results) == EXIT_HISTORY_NOT_UPDATED
    assert results.history.updated is False and str(hist) in results.history.problem
    assert results.comparison.baseline.run_id == first.run_id  # still compared: reading works
    assert hist.read_bytes() == before
    warnings = [ln for ln in stream.getvalue().splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1 and str(hist) in warnings[0] and "OperationalError" not in warnings[0]


def test_a_full_disk_publishes_nothing_and_leaves_the_history_alone(tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"
    first, _ = small(out)
    kept = {p.name: p.read_bytes() for p in out.iterdir()}
    real = nightly.stage_bytes

    def full_disk(path, writer):
        if Path(path).name == "summary.md":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(path, writer)

    monkeypatch.setattr(nightly, "stage_bytes", full_disk)
    with pytest.raises(NightlyError, match=rf"cannot write {re.escape(str(out / 'summary.md'))}: No space left"):
        small(out, seed=1)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == kept  # the previous night, whole
    assert not list(tmp_path.glob("**/*.tmp"))
    assert list(H.load_history(tmp_path / "history.sqlite")["run_id"].unique()) == [first.run_id]
    # On the command line: one line, exit 2.
    real_run = nightly.run_nightly
    monkeypatch.setattr(nightly, "run_nightly", lambda *a, **k: real_run(*a, **dict(k, target_names=TARGETS,
                                                                                     claim_ids=CLAIMS, progress=False)))
    code, _, err = cli(capsys, "nightly", "--profile", "smoke", "--out", str(out), "--seed", "1")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "No space left on device" in err
    # Space freed: the rerun finishes.
    monkeypatch.setattr(nightly, "stage_bytes", real)
    again, _ = small(out, seed=1)
    assert json.loads((out / "results.json").read_text())["run_id"] == again.run_id


def test_a_cache_write_that_fails_does_not_fail_the_run(tmp_path, monkeypatch):
    from privbound.audit import cache

    def full_disk(path, writer):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(cache, "atomic_write_bytes", full_disk)
    results, _ = small(tmp_path / "run")
    assert results.counts.error == 0 and results.counts.holds == 1


# --------------------------------------------------------------- progress, logs


def test_progress_is_one_line_per_item_when_not_a_terminal(tmp_path):
    stream = io.StringIO()
    small(tmp_path / "run", progress=True, stream=stream)
    lines = [ln for ln in stream.getvalue().splitlines() if not ln.startswith(("privbound nightly", "  ", "[report"))]
    assert re.fullmatch(r"\[audits 1/2\] randomized-response: holds, eps lower bound [0-9.]+ \([0-9.]+ s\)", lines[0])
    assert lines[1].startswith("[audits 2/2] laplace-inverted-scale: caught")
    n_checks = sum(len(c.checks) for c in claims() if c.id in CLAIMS)
    assert n_checks >= 2
    assert [ln.split("]")[0] for ln in lines[2:]] == [f"[checks {i}/{n_checks}" for i in range(1, n_checks + 1)]
    assert "decision-lists-winnow/lemma-3:" in lines[2]


def test_membership_audits_report_progress_like_the_others(tmp_path):
    stream = io.StringIO()
    small(tmp_path / "run", claim_ids=[], membership_names=["randomized-response-eps1"], progress=True, stream=stream)
    lines = [ln for ln in stream.getvalue().splitlines() if ln.startswith("[membership")]
    assert len(lines) == 1
    assert re.fullmatch(r"\[membership 1/1\] randomized-response-eps1: holds, eps lower bound [0-9.]+ \([0-9.]+ s\)",
                        lines[0]), lines


def test_the_last_lines_name_every_file_and_the_time_per_phase(tmp_path, capsys, monkeypatch):
    real = nightly.run_nightly
    monkeypatch.setattr(nightly, "run_nightly", lambda *a, **k: real(*a, **dict(k, target_names=TARGETS,
                                                                                claim_ids=CLAIMS, progress=False)))
    out = tmp_path / "run"
    code, stdout, _ = cli(capsys, "nightly", "--profile", "smoke", "--out", str(out))
    assert code == 0
    tail = stdout.strip().splitlines()[-7:]
    assert re.fullmatch(r"run \S+ wrote:", tail[0])
    assert tail[1:4] == [f"  {out / n}" for n in ("results.json", "summary.md", "report.html")]
    assert tail[4] == f"  {tmp_path / 'history.sqlite'} (history: run appended)"
    assert re.fullmatch(rf"  {re.escape(str(tmp_path / '.cache'))} \(cache: [0-9.]+ [KMG]?B, [0-9.]+ [KMG]?B added "
                        r"tonight\)", tail[5])
    assert re.fullmatch(r"wall time: audits [0-9.]+ s, learner mutants [0-9.]+ s, checks [0-9.]+ s, mutants [0-9.]+ s, "
                        r"membership [0-9.]+ s, report [0-9.]+ s; total [0-9.]+ s, then history [0-9.]+ s", tail[6])


# ------------------------------------------------------------------- comparison


def test_summary_shows_the_seed_and_names_the_baseline(tmp_path):
    a, _ = small(tmp_path / "run", seed=0)
    b, out = small(tmp_path / "run", seed=1)
    text = (out / "summary.md").read_text()
    assert "seed **1**" in text
    assert text.index("Seed differs: baseline 0, this run 1") < text.index("## Changes since the previous run")
    assert f"Compared with run {a.run_id}" in text
    page = (out / "report.html").read_text()
    assert "Seed differs: baseline 0, this run 1" in page and a.run_id in page


def test_no_baseline_and_no_change_read_differently(tmp_path):
    _, out = small(tmp_path / "run")
    assert "No baseline: no previous run of profile smoke" in (out / "summary.md").read_text()
    _, out = small(tmp_path / "run")  # same seed, same code: identical bounds
    text = (out / "summary.md").read_text()
    assert "No change: same statuses, and no epsilon lower bound moved significantly." in text
