"""Reach of the Opacus audits (``audit/targets/opacus.py``) and of the numpy last-iterate design, over seeds.

Run: ``python benchmarks/opacus_audit.py [--seeds 5] [--parts ABCD] [--quick]`` (needs the torch extra).

A: white-box, all iterates, gradient canary (composition estimator) at eps = 2, 4, 8 and the MLP at 4, 1e4 trials;
B: black-box, last iterate, worst-case initial model at eps = 8 (Opacus and numpy), 1e4 trials;
C: shuffled loader against the Poisson claim (planted bug) and the Poisson control at the same parameters;
D: every planted Opacus bug at its default trials.
Prints one row per target: bound mean (min, max) over the seeds, / claim, / tight, flagged count, seconds per audit.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def _row(name: str, trials: int | None, seeds: list[int], confidence: float) -> str:
    from privbound.audit.targets import get_target

    t = get_target(name)
    bounds, flagged, secs, tight = [], 0, [], None
    for s in seeds:
        t0 = time.perf_counter()
        r = t.audit(trials=trials, seed=s, confidence=confidence)
        secs.append(time.perf_counter() - t0)
        bounds.append(r.epsilon_lower_bound)
        flagged += int(r.violation)
        tight = r.epsilon_tight
    b = np.array(bounds)
    n = trials or t.default_trials
    tight_s = f"{b.mean() / tight:.3f}" if tight else "-"
    return (f"| `{name}` | {t.epsilon:g} | {n:.0e} | {b.mean():.3f} ({b.min():.3f}, {b.max():.3f}) | "
            f"{b.mean() / t.epsilon:.3f} | {tight_s} | {flagged}/{len(seeds)} | {np.mean(secs):.1f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--parts", default="ABCD")
    ap.add_argument("--quick", action="store_true", help="one seed, 1000 trials (a smoke run)")
    args = ap.parse_args(argv)
    from privbound.audit.targets.opacus import UNAVAILABLE

    if UNAVAILABLE is not None:
        print(f"skipped: {UNAVAILABLE}")
        return 0
    seeds = [0] if args.quick else list(range(args.seeds))
    trials = 1000 if args.quick else None
    confidence = 0.95
    print("| target | claim | trials | bound mean (min, max) | / claim | / tight | flagged | s per audit |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    parts = {
        "A": [("opacus-gradient-eps2", 10_000), ("opacus-gradient-eps4", 10_000), ("opacus-gradient-eps8", 10_000),
              ("opacus-mlp-gradient-eps4", 10_000)],
        "B": [("opacus-input-worst-init-eps8", 10_000), ("dpsgd-input-worst-init-eps8", 10_000)],
        "C": [("opacus-gradient-poisson-sampling-false", None), ("opacus-shuffle-poisson-control", None)],
        "D": [("opacus-gradient-other-eps-noise", None), ("opacus-gradient-per-layer-clip-raised", None),
              ("opacus-gradient-two-steps-per-batch", None)],
    }
    for part in args.parts:
        for name, n in parts[part]:
            print(_row(name, trials if trials else n, seeds, confidence), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
