"""The command line answers at once and behaves as an operator expects (reports/cli.py, index.py, locations.py).

Each test runs ``privbound`` as a user types it (a fresh interpreter); where the answer is promised within about
a second, the test times it (budget :data:`FAST`, above a second because the test machine is shared) and also
checks the cause of speed that timing alone would not pin down: nothing heavy (numpy) was imported.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from privbound.reports.cli import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, list_lines, main

FAST = 2.5  # seconds: "about a second" on a 2-core machine shared with other jobs
ROOT = Path(__file__).resolve().parents[2]

# Runs the command line in-process and then reports whether numpy was imported (a heavy import costs seconds).
_PROBE = ("import sys, json\nfrom privbound.reports.cli import main\ncode = main(sys.argv[1:])\n"
          "print(json.dumps({'code': code, 'numpy': 'numpy' in sys.modules}), file=sys.stderr)\n")


@pytest.fixture
def index_dir(tmp_path, monkeypatch):
    """A private index folder for the command line run in subprocesses (built once per test)."""
    d = tmp_path / "index"
    monkeypatch.setenv("PRIVBOUND_INDEX_DIR", str(d))
    return d


def timed(*argv, env=None, input=None):
    """``python -m privbound ARGV`` in a fresh interpreter: (wall seconds, completed process)."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "privbound", *argv], capture_output=True, text=True, timeout=300,
                          env=env, input=input)
    return time.perf_counter() - t0, proc


def probe(*argv):
    """Run ``main(argv)`` in a fresh interpreter: (wall seconds, exit code, imported numpy?, stdout, stderr)."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - t0
    info = json.loads(proc.stderr.strip().splitlines()[-1])
    return wall, info["code"], info["numpy"], proc.stdout, "\n".join(proc.stderr.strip().splitlines()[:-1])


# ------------------------------------------------------------------ in about a second


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["nightly", "--help"]])
def test_help_and_version_answer_at_once_without_the_auditor(argv):
    wall, code, numpy, out, err = probe(*argv)
    assert code == 0 and out and not err
    assert not numpy, "the command imported numpy: it must import lazily"
    assert wall < FAST, f"{argv} took {wall:.1f} s"


def test_version_names_the_commit_of_a_checkout():
    _, proc = timed("--version")
    assert proc.returncode == 0
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    assert proc.stdout.startswith("privbound 0.") and f"+g{commit}" in proc.stdout


@pytest.mark.parametrize("argv, needle", [
    (["nightly", "--out", "/proc/nope/run", "--history", "/tmp"], "--history /tmp: is a directory"),
    (["nightly", "--cache-max", "lots"], "cache-max must be a size"),
    (["audit", "laplace-eps1", "--trials", "0"], "trials must be >= 10, got 0"),
    (["audit", "laplace-eps1", "--canaries", "5"], "--canaries only applies to a one-run audit"),
    (["bounds", "eval", "decision-lists-winnow/lemma-9", "d=abc"], "must be a number"),
])
def test_argument_and_location_errors_answer_at_once(argv, needle):
    wall, code, numpy, out, err = probe(*argv)
    assert code == 2 and needle in err and len(err.splitlines()) == 1
    assert not numpy, "the refusal imported numpy: it must come before the heavy imports"
    assert wall < FAST, f"{argv} took {wall:.1f} s"


def test_list_and_unknown_names_answer_at_once_from_the_index(index_dir):
    first_wall, first = timed("list")  # builds the index (imports every target once)
    assert first.returncode == 0 and list(index_dir.glob("targets-*.json"))
    wall, code, numpy, out, _ = probe("list")
    assert code == 0 and out == first.stdout
    assert not numpy and wall < FAST, f"privbound list took {wall:.1f} s (the first, building the index: {first_wall:.1f} s)"
    wall, code, numpy, _, err = probe("audit", "laplace-epsl")
    assert code == 2 and "no target named 'laplace-epsl'" in err and "did you mean laplace-eps1" in err
    assert not numpy and wall < FAST
    assert timed("membership", "list")[1].returncode == 0  # builds the membership index
    wall, code, numpy, _, err = probe("membership", "digits-logrg")
    assert code == 2 and "no membership target 'digits-logrg' (did you mean digits-logreg" in err
    assert not numpy and wall < FAST


def test_a_changed_source_builds_a_new_index(index_dir, monkeypatch):
    from privbound.reports import index

    index.target_index()
    monkeypatch.setattr(index, "source_digest", lambda: "0123456789abcdef")
    index.target_index()
    assert len(list(index_dir.glob("targets-*.json"))) == 2


# ------------------------------------------------------------------ a refused run creates nothing


@pytest.mark.parametrize("bad", ["history-dir", "cache-file"])
def test_a_refused_nightly_creates_nothing(tmp_path, capsys, bad):
    out = tmp_path / "new" / "deeper" / "run"
    argv = ["nightly", "--profile", "smoke", "--out", str(out)]
    if bad == "history-dir":
        argv += ["--history", str(tmp_path)]
    else:
        (tmp_path / "afile").write_text("x")
        argv += ["--cache", str(tmp_path / "afile")]
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main(argv) == 2
    assert "error: --" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no out folder, no .cache, no history


def test_a_folder_that_cannot_be_created_leaves_nothing_behind(tmp_path):
    from privbound.reports.locations import NightlyError, create_locations, resolve_paths

    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    paths = resolve_paths(tmp_path / "fresh" / "run", cache=blocker / "cache")  # out can be made, cache cannot
    with pytest.raises(NightlyError, match="--cache"):
        create_locations(paths)
    assert not (tmp_path / "fresh").exists()


# ------------------------------------------------------------------ pipes and Ctrl-C


def test_a_closed_pipe_is_silent(index_dir):
    timed("list")  # the index
    # The reader is gone before the first write (as after `| head -1` has read its line): exit 141, silently.
    read_end, write_end = os.pipe()
    os.close(read_end)
    proc = subprocess.run([sys.executable, "-m", "privbound", "bounds", "list"], stdout=write_end,
                          stderr=subprocess.PIPE, text=True, timeout=300)
    os.close(write_end)
    assert proc.returncode == EXIT_BROKEN_PIPE and proc.stderr == ""
    # Through a shell: one line, and nothing on stderr whether or not the writer was still writing.
    shell = subprocess.run(f"'{sys.executable}' -m privbound bounds list | head -1", shell=True,
                           executable="/bin/bash", capture_output=True, text=True, timeout=300)
    assert len(shell.stdout.splitlines()) == 1 and shell.stderr == ""


def test_ctrl_c_exits_130_naming_the_cache_and_how_to_resume(tmp_path):
    out = tmp_path / "run"
    # A shell starts background jobs with SIGINT ignored, and Python keeps it so: give the child the default.
    proc = subprocess.Popen([sys.executable, "-m", "privbound", "nightly", "--profile", "smoke", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    for line in proc.stderr:  # wait until the audits are under way
        if line.startswith("[audits"):
            break
    proc.send_signal(signal.SIGINT)
    try:
        _, rest = proc.communicate(timeout=180)
    finally:
        proc.kill()
    assert proc.returncode == EXIT_INTERRUPTED
    last = rest.strip().splitlines()[-1]
    assert last.startswith("interrupted") and str(tmp_path / ".cache") in last and "resumes" in last
    assert "Traceback" not in rest


# ------------------------------------------------------------------ what the commands print


def test_code_version_outside_a_checkout_is_a_source_digest(tmp_path, monkeypatch):
    from privbound.reports import index

    monkeypatch.setattr(index, "_git", lambda args, cwd: "")
    v = index.code_version()
    assert re.fullmatch(r"\d+\.\d+\.\d+\+src\.[0-9a-f]{16}", v), v
    pkg = tmp_path / "privbound"
    pkg.mkdir()
    (pkg / "m.py").write_text("x = 1\n")
    monkeypatch.setattr(index, "source_roots", lambda: [pkg])
    one = index.code_version()
    (pkg / "m.py").write_text("x = 2\n")
    assert index.code_version() != one  # two different sources never look alike


def test_list_shows_a_description_per_target_and_wraps():
    records = [{"name": "short", "epsilon": 1.0, "delta": 0.0, "family": "laplace", "planted_bug": False,
                "description": "word " * 40},
               {"name": "a-very-long-target-name-that-is-longer-than-any-column-was", "epsilon": 0.5, "delta": 1e-5,
                "family": "gaussian", "planted_bug": True, "description": "short one"}]
    lines = list_lines(records, width=60)
    rows = [ln for ln in lines if not ln.startswith("    ")]
    assert len(rows) == 3  # header and one row per target
    assert len({row.index(col) for row, col in zip(rows, ["claim", "(1, 0)", "(0.5, 1e-05)"])}) == 1  # aligned
    described = [ln for ln in lines if ln.startswith("    ")]
    assert described and all(len(ln) <= 60 for ln in described)
    assert " ".join(" ".join(described).split()).startswith("word word")


def test_bounds_eval_labels_its_value(capsys):
    assert main(["bounds", "eval", "decision-lists-winnow/lemma-9", "d=100", "rho=0.2", "eta=0.2", "c=0"]) == 0
    out = capsys.readouterr().out.strip()
    assert re.fullmatch(r"decision-lists-winnow/lemma-9: .+ = 230\.2585093 at d=100, rho=0\.2, eta=0\.2, c=0", out), out
    assert not out.split(": ", 1)[1].startswith("value")  # the claim's quantity, not a placeholder


def test_nightly_help_describes_every_profile(capsys):
    from privbound.reports.locations import NIGHTLY_PROFILES

    assert main(["nightly", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for p in NIGHTLY_PROFILES.values():
        assert f"{p.name} {' '.join(p.summary.split())}" in text


def test_a_failing_assert_dp_starts_with_the_verdict(tmp_path):
    test = tmp_path / "test_leaky.py"
    test.write_text("from privbound import assert_dp\n\n"
                    "def test_leaky():\n"
                    "    leaky = lambda x, rng: x + rng.laplace(scale=0.1)  # claims 1, spends 10\n"
                    "    assert_dp(leaky, 0.0, 1.0, epsilon=1.0, trials=2000)\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 1
    report = proc.stdout[proc.stdout.index("test_leaky ___"):]
    assert "def assert_dp(" not in report and "next_alpha(" not in report  # no plugin source
    first_error = next(ln for ln in report.splitlines() if ln.startswith("E "))
    assert first_error.startswith("E       AssertionError: assert_dp: VIOLATED"), first_error
