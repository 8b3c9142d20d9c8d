"""Wall time of ``privbound nightly`` per profile, from a cold cache, idle and under load, and the cache it leaves.

Each run is a fresh ``python -m privbound nightly --profile P --out TMP/run`` (its own empty
cache and history), as an operator starts it. ``--load N`` adds N busy processes (one
spinning Python loop each) for the duration of the run, to measure a loaded machine. The
table shows the wall time, every phase the run reported (audits, learner mutants, checks,
mutants, membership, report; then history), the size of the cache after the night and the
1-minute load average at the start. ``--rerun`` runs each night a second time on its own cache
(the cached rerun). ``--keep DIR`` keeps each run's folder as ``DIR/<profile>-load<N>``.

Usage::

    python benchmarks/nightly_profiles.py [--profiles smoke default] [--load 0 2] [--rerun] [--keep DIR]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _spin() -> None:  # pragma: no cover - runs in a child process
    while True:
        pass


def _cache_bytes(folder: str) -> int:
    return sum(f.stat().st_size for f in Path(folder).rglob("*") if f.is_file())


def _phases(stdout: str) -> dict[str, float]:
    """The phases of the closing line "wall time: audits 60.2 s, ..., report 9.1 s; total T s, then history H s"."""
    last = next((ln for ln in reversed(stdout.splitlines()) if ln.startswith("wall time:")), "")
    found = re.findall(r"([a-z][a-z ]*?) ([0-9.]+) s", last.partition(":")[2])
    return {name.replace("then ", "").strip().replace(" ", "_"): float(v) for name, v in found}


def _night(profile: str, folder: str) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "privbound", "nightly", "--profile", profile, "--out",
                           os.path.join(folder, "run")], capture_output=True, text=True)
    return time.perf_counter() - t0, proc


def measure(profile: str, load: int, rerun: bool = False, keep: str | None = None) -> list[dict]:
    """One cold run of ``profile`` with ``load`` busy processes beside it (and its cached rerun)."""
    spinners = [mp.Process(target=_spin, daemon=True) for _ in range(load)]
    for p in spinners:
        p.start()
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for kind in ("cold", "cached rerun")[: 2 if rerun else 1]:
                load_avg = os.getloadavg()[0]
                wall, proc = _night(profile, tmp)
                rows.append({"profile": profile, "run": kind, "load": load,
                             "load_avg_1min_at_start": round(load_avg, 2), "wall_s": round(wall, 1),
                             "exit": proc.returncode, "cache_MB": round(_cache_bytes(os.path.join(tmp, ".cache")) / 1e6),
                             **{f"{k}_s": v for k, v in _phases(proc.stdout).items()}})
                print(rows[-1], flush=True)
            if keep is not None:
                dest = Path(keep) / f"{profile}-load{load}"
                shutil.rmtree(dest, ignore_errors=True)
                shutil.copytree(tmp, dest)
                (dest / "stdout.txt").write_text(proc.stdout)
                (dest / "stderr.txt").write_text(proc.stderr)
    finally:
        for p in spinners:
            p.terminate()
            p.join()
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profiles", nargs="+", default=["smoke", "default"])
    ap.add_argument("--load", nargs="+", type=int, default=[0, 2], help="busy processes beside the run")
    ap.add_argument("--rerun", action="store_true", help="also time a second run on the first one's cache")
    ap.add_argument("--keep", default=None, metavar="DIR", help="keep each run's folder under DIR")
    args = ap.parse_args(argv)
    import pandas as pd

    rows = []
    for n in args.load:
        for p in args.profiles:
            rows += measure(p, n, rerun=args.rerun, keep=args.keep)  # each run printed as it finishes
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
