"""Reach of the audits of DP code people ship, over seeds: Opacus trainings (``audit/targets/opacus.py``) with the
numpy last-iterate design, and diffprivlib's and PipelineDP's mechanisms (``audit/targets/libraries.py``).

Run: ``python benchmarks/shipped_code.py [--seeds 5] [--parts ABCDEF] [--targets NAME ...] [--quick] [--csv PATH]``
(A-D need the torch extra, E-F the libs extra; a part whose library is missing is skipped with a note).

A: white-box, all iterates, gradient canary (composition estimator) at eps = 2, 4, 8 and the MLP at 4, 1e4 trials;
B: black-box, last iterate, worst-case initial model at eps = 8 (Opacus and numpy), 1e4 trials;
C: shuffled loader against the Poisson claim (planted bug) and the Poisson control at the same parameters;
D: every planted Opacus bug at its default trials;
E: every diffprivlib and PipelineDP target, mathematical audit, at its default trials;
F: their floating-point audits (``estimator="floating-point"``), for the targets registered with ``float_safe``.
Prints one row per audit: bound mean (min, max) over the seeds at confidence 0.95, / claim, / tight, the number of
seeds flagged at 0.95 and at the default nightly's per-audit confidence (the same trials, read back from a chunk
cache), seconds per audit. ``--csv`` writes one line per (audit, seed).
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
LIBRARY_FAMILIES = ("diffprivlib", "pipelinedp")


def library_rows(float_audit: bool) -> list[tuple[str, None]]:
    """Part E (``float_audit`` False) or F: the diffprivlib and PipelineDP targets at their default trials."""
    from privbound.audit.targets import targets

    return [(t.name, None) for t in targets() if t.family in LIBRARY_FAMILIES
            and (not float_audit or t.float_safe is not None)]


def part_rows(part: str) -> list[tuple[str, int | None]]:
    return PARTS[part] if part in PARTS else library_rows(part == "F")


def missing(part: str) -> str | None:
    """Why the part's targets are not registered, or None."""
    if part in PARTS:
        from privbound.audit.targets.opacus import UNAVAILABLE

        return UNAVAILABLE
    from privbound.audit.targets.libraries import UNAVAILABLE

    return "; ".join(UNAVAILABLE.values()) or None


def nightly_confidence() -> float:
    """The default nightly's per-audit confidence with every registered target (Bonferroni over its audits)."""
    from privbound.audit.targets import targets
    from privbound.reports.nightly import audit_confidence, audit_jobs

    return audit_confidence(len(audit_jobs(targets())))


def _rows(name: str, trials: int | None, seeds: list[int], confidence: float, strict: float, cache: str,
          writer, float_audit: bool = False) -> str:
    from privbound.audit.targets import get_target

    t = get_target(name)
    label = f"{name}:floating-point" if float_audit else name
    t.tight()  # calibrate (Opacus' get_noise_multiplier) and compute the tight value before timing
    estimator = "floating-point" if float_audit else "auto"
    bounds, flagged, flagged_strict, secs, tight = [], 0, 0, [], None
    n = trials or t.default_trials
    for s in seeds:
        t0 = time.perf_counter()
        r = t.audit(trials=n, seed=s, confidence=confidence, cache_dir=cache, estimator=estimator)
        secs.append(time.perf_counter() - t0)
        # the same chunks, another confidence
        rs = t.audit(trials=n, seed=s, confidence=strict, cache_dir=cache, estimator=estimator)
        bounds.append(r.epsilon_lower_bound)
        flagged += int(r.violation)
        flagged_strict += int(rs.violation)
        tight = r.epsilon_tight
        if writer is not None:
            writer.writerow(dict(target=label, seed=s, trials=n, claim=t.epsilon, tight=tight,
                                 bound=r.epsilon_lower_bound, violation=r.violation, strict_confidence=strict,
                                 strict_bound=rs.epsilon_lower_bound, strict_violation=rs.violation,
                                 seconds=secs[-1]))
    b = np.array(bounds)
    tight_s = f"{b.mean() / tight:.3f}" if tight and not float_audit else "-"
    return (f"| `{label}` | {t.epsilon:g} | {n:.0e} | {b.mean():.3f} ({b.min():.3f}, {b.max():.3f}) | "
            f"{b.mean() / t.epsilon:.3f} | {tight_s} | {flagged}/{len(seeds)} | {flagged_strict}/{len(seeds)} | "
            f"{np.mean(secs):.1f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--parts", default="ABCDEF")
    ap.add_argument("--targets", nargs="*", default=None, help="these targets (of any part) instead of --parts")
    ap.add_argument("--quick", action="store_true", help="one seed, 1000 trials (a smoke run)")
    ap.add_argument("--csv", default=None, help="write one line per (target, seed) here")
    args = ap.parse_args(argv)
    seeds = [0] if args.quick else list(range(args.seeds))
    confidence, strict = 0.95, nightly_confidence()
    unknown_parts = sorted(set(args.parts) - set("ABCDEF"))
    if unknown_parts:
        ap.error(f"--parts takes letters of ABCDEF, got {', '.join(unknown_parts)}")
    for part in sorted({m for p in args.parts if (m := missing(p))}):
        print(f"skipped: {part}")
    parts = [p for p in args.parts if missing(p) is None]
    rows = [(name, n, p == "F") for p in parts for name, n in part_rows(p)]
    if args.targets:
        known = {name: (n, p == "F") for p in "ABCDEF" if missing(p) is None for name, n in part_rows(p)}
        unknown = [name for name in args.targets if name not in known]
        if unknown:
            ap.error(f"not a target of this benchmark: {', '.join(unknown)}")
        rows = [(name, *known[name]) for name in args.targets]
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
            for name, n, float_audit in rows:
                print(_rows(name, 1000 if args.quick else n, seeds, confidence, strict, cache, writer, float_audit),
                      flush=True)
                if out is not None:
                    out.flush()
    finally:
        if out is not None:
            out.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
