"""Reach of the Opacus audits (``audit/targets/opacus.py``) and of the numpy last-iterate design, over seeds.

Run: ``python benchmarks/opacus_audit.py [--seeds 5] [--parts ABCD] [--targets NAME ...] [--quick] [--csv PATH]``
(needs the torch extra).

A: white-box, all iterates, gradient canary (composition estimator) at eps = 2, 4, 8 and the MLP at 4, 1e4 trials;
B: black-box, last iterate, worst-case initial model at eps = 8 (Opacus and numpy), 1e4 trials;
C: shuffled loader against the Poisson claim (planted bug) and the Poisson control at the same parameters;
D: every planted Opacus bug at its default trials.
Prints one row per target: bound mean (min, max) over the seeds at confidence 0.95, / claim, / tight, the number of
seeds flagged at 0.95 and at the default nightly's per-audit confidence (the same trials, read back from a chunk
cache), seconds per audit. ``--csv`` writes one line per (target, seed).
"""

from __future__ import annotations

import argparse
import csv
import tempfile
import time

import numpy as np

PARTS = {
    "A": [("opacus-gradient-eps2", 10_000), ("opacus-gradient-eps4", 10_000), ("opacus-gradient-eps8", 10_000),
          ("opacus-mlp-gradient-eps4", 10_000)],
    "B": [("opacus-input-worst-init-eps8", 10_000), ("dpsgd-input-worst-init-eps8", 10_000)],
    "C": [("opacus-gradient-poisson-sampling-false", None), ("opacus-shuffle-poisson-control", None)],
    "D": [("opacus-gradient-other-eps-noise", None), ("opacus-gradient-per-layer-clip-raised", None),
          ("opacus-gradient-two-steps-per-batch", None), ("opacus-input-worst-init-other-eps-noise", None)],
}


def nightly_confidence() -> float:
    """The default nightly's per-audit confidence with every registered target (Bonferroni over its audits)."""
    from privbound.audit.targets import targets
    from privbound.reports.nightly import audit_confidence, audit_jobs

    return audit_confidence(len(audit_jobs(targets())))


def _rows(name: str, trials: int | None, seeds: list[int], confidence: float, strict: float, cache: str,
          writer) -> str:
    from privbound.audit.targets import get_target

    t = get_target(name)
    t.tight()  # calibrate (Opacus' get_noise_multiplier) and compute the tight value before timing
    bounds, flagged, flagged_strict, secs, tight = [], 0, 0, [], None
    n = trials or t.default_trials
    for s in seeds:
        t0 = time.perf_counter()
        r = t.audit(trials=n, seed=s, confidence=confidence, cache_dir=cache)
        secs.append(time.perf_counter() - t0)
        rs = t.audit(trials=n, seed=s, confidence=strict, cache_dir=cache)  # the same chunks, another confidence
        bounds.append(r.epsilon_lower_bound)
        flagged += int(r.violation)
        flagged_strict += int(rs.violation)
        tight = r.epsilon_tight
        if writer is not None:
            writer.writerow(dict(target=name, seed=s, trials=n, claim=t.epsilon, tight=tight,
                                 bound=r.epsilon_lower_bound, violation=r.violation, strict_confidence=strict,
                                 strict_bound=rs.epsilon_lower_bound, strict_violation=rs.violation,
                                 seconds=secs[-1]))
    b = np.array(bounds)
    tight_s = f"{b.mean() / tight:.3f}" if tight else "-"
    return (f"| `{name}` | {t.epsilon:g} | {n:.0e} | {b.mean():.3f} ({b.min():.3f}, {b.max():.3f}) | "
            f"{b.mean() / t.epsilon:.3f} | {tight_s} | {flagged}/{len(seeds)} | {flagged_strict}/{len(seeds)} | "
            f"{np.mean(secs):.1f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--parts", default="ABCD")
    ap.add_argument("--targets", nargs="*", default=None, help="these targets (of any part) instead of --parts")
    ap.add_argument("--quick", action="store_true", help="one seed, 1000 trials (a smoke run)")
    ap.add_argument("--csv", default=None, help="write one line per (target, seed) here")
    args = ap.parse_args(argv)
    from privbound.audit.targets.opacus import UNAVAILABLE

    if UNAVAILABLE is not None:
        print(f"skipped: {UNAVAILABLE}")
        return 0
    seeds = [0] if args.quick else list(range(args.seeds))
    confidence, strict = 0.95, nightly_confidence()
    rows = [row for part in args.parts for row in PARTS[part]]
    if args.targets:
        known = dict(row for part in PARTS.values() for row in part)
        unknown = [name for name in args.targets if name not in known]
        if unknown:
            ap.error(f"not a target of this benchmark: {', '.join(unknown)}")
        rows = [(name, known[name]) for name in args.targets]
    out = open(args.csv, "w", newline="") if args.csv else None
    writer = None
    if out is not None:
        writer = csv.DictWriter(out, ["target", "seed", "trials", "claim", "tight", "bound", "violation",
                                      "strict_confidence", "strict_bound", "strict_violation", "seconds"])
        writer.writeheader()
    print(f"| target | claim | trials | bound mean (min, max) | / claim | / tight | flagged at 0.95 | "
          f"flagged at {strict:.6f} | s per audit |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    try:
        with tempfile.TemporaryDirectory() as cache:
            for name, n in rows:
                print(_rows(name, 1000 if args.quick else n, seeds, confidence, strict, cache, writer), flush=True)
                if out is not None:
                    out.flush()
    finally:
        if out is not None:
            out.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
