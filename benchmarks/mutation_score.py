"""Mutation score: how many hand-made one-line bugs the default test suite and the smoke nightly catch.

For every :class:`~mutants.SourceMutant` of ``benchmarks/mutants/`` (or those named with
``--only``), the script edits the file in place, runs the tests most likely to see the bug first
(the test folders that mirror the mutated file's package, ``pytest -x``), then, if they all pass,
the whole default suite, then ``privbound nightly --profile smoke``; a mutant is *killed* when any
of them fails. The file is restored after every mutant, also on interruption. Run it from a clean
checkout installed in editable mode (``pip install -e .``): it refuses to start when a mutated file
has uncommitted changes. ``--scratch DIR`` instead runs in another checkout at DIR (a clone with its
own editable install, e.g. in its own virtual environment given by ``--python``), so that the
working tree can be edited meanwhile. Prints one row per mutant and the score.

Usage::

    python benchmarks/mutation_score.py [--only NAME ...] [--list] [--csv PATH] [--no-nightly]
                                        [--scratch DIR [--python PATH]]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from mutants import SourceMutant, all_mutants  # noqa: E402


def first_tests(path: str, root: Path = ROOT) -> list[str]:
    """The test folders most likely to see a bug in ``path``: the ones that mirror its package.

    A paper's learner or target module is also checked by that paper's bounds tests, which
    exercise the learner against its theorems.
    """
    parts = Path(path).parts
    if len(parts) > 2:
        cand = [Path("tests", *parts[:2])]
        if parts[0] in ("learners", "audit"):
            paper = parts[2].removesuffix(".py") if parts[1] == "targets" else parts[1]
            cand += [Path("tests", "bounds", paper)]
    else:
        cand = [Path("tests", parts[0])]
    found = [str(c) for c in cand if (root / c).is_dir()]
    return found or ["tests"]


def _run(cmd: list[str], timeout: int, root: Path = ROOT) -> bool:
    """True when the command succeeds (the mutant survives it)."""
    try:
        return subprocess.run(cmd, cwd=root, capture_output=True, timeout=timeout).returncode == 0
    except subprocess.TimeoutExpired:
        return False  # a hang is a detection too


def judge(m: SourceMutant, nightly: bool, root: Path = ROOT, python: str = sys.executable) -> tuple[str, float]:
    """Apply ``m`` in the checkout at ``root``, run the stages, restore; ``(stage that killed it or "survived", seconds)``."""
    target = root / m.path
    text = target.read_text()
    if text.count(m.old) != 1:
        raise ValueError(f"mutant {m.name!r}: the text to replace occurs {text.count(m.old)} times in {m.path}")
    start = time.perf_counter()
    try:
        target.write_text(text.replace(m.old, m.new))
        pytest = [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
        if not _run(pytest + first_tests(m.path, root), 1800, root):
            return "mirrored tests", time.perf_counter() - start
        if not _run(pytest, 3600, root):
            return "default suite", time.perf_counter() - start
        if nightly:
            with tempfile.TemporaryDirectory() as out:
                ok = _run([python, "-m", "privbound", "nightly", "--profile", "smoke", "--out",
                           str(Path(out) / "run")], 1800, root)
            if not ok:
                return "smoke nightly", time.perf_counter() - start
        return "survived", time.perf_counter() - start
    finally:
        target.write_text(text)


def _clean(paths: set[str], root: Path = ROOT) -> bool:
    out = subprocess.run(["git", "status", "--porcelain", "--", *paths], cwd=root, capture_output=True, text=True)
    return out.returncode == 0 and not out.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", default=None, help="mutant names to run")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--csv", default=None)
    parser.add_argument("--no-nightly", action="store_true", help="skip the smoke-nightly stage")
    parser.add_argument("--scratch", default=None, help="run in this other checkout (editable install) instead")
    parser.add_argument("--python", default=None, help="the interpreter of --scratch's environment")
    args = parser.parse_args(argv)
    root = ROOT if args.scratch is None else Path(args.scratch).resolve()
    python = args.python or sys.executable
    mutants = [m for m in all_mutants() if args.only is None or m.name in args.only]
    if args.list:
        for m in mutants:
            print(f"{m.name:48s} {m.path}: {m.description}")
        return 0
    if not _clean({m.path for m in mutants}, root):
        print("refusing to run: a file to mutate has uncommitted changes", file=sys.stderr)
        return 2
    rows = []
    for m in mutants:
        stage, secs = judge(m, nightly=not args.no_nightly, root=root, python=python)
        rows.append(dict(mutant=m.name, path=m.path, killed_by=stage, seconds=round(secs, 1), description=m.description))
        print(f"{m.name:48s} {stage:16s} {secs:7.1f} s", flush=True)
    table = pd.DataFrame(rows)
    if args.csv:
        table.to_csv(args.csv, index=False)
    killed = int((table.killed_by != "survived").sum()) if len(table) else 0
    print(f"\nmutation score: {killed}/{len(table)} killed"
          + (f" ({killed / len(table):.1%})" if len(table) else ""))
    for name in table[table.killed_by == "survived"].mutant if len(table) else []:
        print(f"  survived: {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
