"""Wall time of ``privbound nightly`` per profile, from a cold cache, idle and under load.

Each run is a fresh ``python -m privbound nightly --profile P --out TMP/run`` (its own empty
cache and history), as an operator starts it. ``--load N`` adds N busy processes (one
spinning Python loop each) for the duration of the run, to measure a loaded machine. The
table shows the wall time, every phase the run reported (audits, checks, mutants, membership,
report, history) and the 1-minute load average at the start.

Usage::

    python benchmarks/nightly_profiles.py [--profiles smoke default] [--load 0 2]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import re
import subprocess
import sys
import tempfile
import time


def _spin() -> None:  # pragma: no cover - runs in a child process
    while True:
        pass


def measure(profile: str, load: int) -> dict:
    """One cold run of ``profile`` with ``load`` busy processes beside it."""
    spinners = [mp.Process(target=_spin, daemon=True) for _ in range(load)]
    for p in spinners:
        p.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            load_avg = os.getloadavg()[0]
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "privbound", "nightly", "--profile", profile, "--out",
                                   os.path.join(tmp, "run")], capture_output=True, text=True)
            wall = time.perf_counter() - t0
    finally:
        for p in spinners:
            p.terminate()
            p.join()
    last = proc.stdout.splitlines()[-1] if proc.stdout else ""  # "wall time: audits 60.2 s, checks ..., total T s"
    phases = dict(re.findall(r"(\w+) ([0-9.]+) s", last.partition(":")[2]))
    phases.pop("total", None)
    return {"profile": profile, "load": load, "load_avg_1min_at_start": round(load_avg, 2), "wall_s": round(wall, 1),
            "exit": proc.returncode, **{f"{k}_s": float(v) for k, v in phases.items()}}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profiles", nargs="+", default=["smoke", "default"])
    ap.add_argument("--load", nargs="+", type=int, default=[0, 2], help="busy processes beside the run")
    args = ap.parse_args(argv)
    import pandas as pd

    rows = []
    for n in args.load:
        for p in args.profiles:
            rows.append(measure(p, n))
            print(rows[-1], flush=True)  # each run as it finishes, then the table
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
