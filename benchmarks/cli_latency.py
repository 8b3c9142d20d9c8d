"""Start-up latency of the command line: ``privbound --help``, ``privbound list``, ``privbound bounds list``.

Each command runs in a fresh interpreter (as a user types it), ``--repeats`` times; the
table shows the median and the best wall time, next to the baseline
``python -c "import numpy, scipy, sklearn"`` -- the libraries any privbound command
needs -- and the ratio of each median to the baseline's. Target: ``privbound list``
within 1.5x of the baseline (registering targets computes nothing; mechanisms
calibrate on first use).

Usage::

    python benchmarks/cli_latency.py [--quick] [--repeats R]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import pandas as pd

COMMANDS = {
    "import numpy, scipy, sklearn (baseline)": [sys.executable, "-c", "import numpy, scipy, sklearn"],
    "python -c 'import privbound'": [sys.executable, "-c", "import privbound"],
    "privbound --help": [sys.executable, "-m", "privbound", "--help"],
    "privbound list": [sys.executable, "-m", "privbound", "list"],
    "privbound bounds list": [sys.executable, "-m", "privbound", "bounds", "list"],
}
TARGET_RATIO = 1.5


def wall_times(command: list[str], repeats: int) -> list[float]:
    """Wall time of ``repeats`` runs of ``command`` (output discarded; a failing command raises)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times


def latency_table(repeats: int) -> pd.DataFrame:
    """One row per command: median and best seconds, and the median's ratio to the baseline."""
    rows = []
    for name, command in COMMANDS.items():
        t = wall_times(command, repeats)
        rows.append({"command": name, "median_s": statistics.median(t), "best_s": min(t)})
    table = pd.DataFrame(rows)
    table["x_baseline"] = table["median_s"] / table["median_s"].iloc[0]
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="runs per command (default 7)")
    parser.add_argument("--quick", action="store_true", help="2 runs per command")
    args = parser.parse_args(argv)
    repeats = 2 if args.quick else max(1, args.repeats)
    table = latency_table(repeats)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    ratio = float(table.loc[table["command"] == "privbound list", "x_baseline"].iloc[0])
    verdict = "PASS" if ratio <= TARGET_RATIO else "FAIL"
    print(f"\nTargets:\n  privbound list within {TARGET_RATIO}x of the baseline: {ratio:.2f}x  {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
