"""What a set of targets adds to a nightly: each audit the night makes of them (its mathematical audit and, for a
floating-point implementation, its floating-point audit) at the profile's trials (``privbound.reports.nightly.
trials_for``) and the night's per-audit confidence, timed one after another in this process from a cold start
(no chunk cache; noise calibration inside the first audit that needs it).

Run: ``python benchmarks/nightly_added.py [--profiles smoke default] [--targets NAME ...] [--csv PATH]``; without
``--targets``, the targets the ``torch`` and ``libs`` extras register besides OpenDP's (paper ``opacus``, families
``diffprivlib`` and ``pipelinedp``, ``dpsgd-input-worst-init-eps8``). Prints one row per audit (wall and CPU
seconds, trials, bound, status) and the totals per profile, with the 1-minute load average at the start and end.
"""

from __future__ import annotations

import argparse
import csv
import os
import time

ADDED_FAMILIES = ("diffprivlib", "pipelinedp")
ADDED_NAMES = ("dpsgd-input-worst-init-eps8",)


def added_targets():
    """The targets of the torch and libs extras besides OpenDP's, as the nightly orders them."""
    from privbound.audit.targets import targets

    return [t for t in targets() if t.paper == "opacus" or t.family in ADDED_FAMILIES or t.name in ADDED_NAMES]


def measure(profile_name: str, selected, writer=None) -> tuple[float, float]:
    from privbound.audit.targets import targets
    from privbound.reports.nightly import (NIGHTLY_PROFILES, audit_confidence, audit_jobs, audit_name, audit_status,
                                           trials_for)

    profile = NIGHTLY_PROFILES[profile_name]
    confidence = audit_confidence(len(audit_jobs(targets())))  # the night audits every registered target
    wall_total = cpu_total = 0.0
    print(f"\n{profile_name} (per-audit confidence {confidence:.6f}; load {os.getloadavg()[0]:.2f} at start)")
    print("| audit | trials | wall s | CPU s | bound | status |")
    print("| --- | --- | --- | --- | --- | --- |")
    skipped = [t.name for t in selected if not t.audited_in(profile_name)]
    if skipped:
        print(f"not audited in the {profile_name} night (nightly_profile 'full'): {', '.join(skipped)}")
    for t, float_audit in audit_jobs([t for t in selected if t.audited_in(profile_name)]):
        n = trials_for(t, profile, float_audit)
        w0, c0 = time.perf_counter(), time.process_time()
        r = t.audit(trials=n, seed=0, confidence=confidence, estimator="floating-point" if float_audit else "auto")
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        wall_total += wall
        cpu_total += cpu
        status = audit_status(t, r.violation, float_audit)
        name = audit_name(t, float_audit)
        print(f"| `{name}` | {n} | {wall:.1f} | {cpu:.1f} | {r.epsilon_lower_bound:.3f} | {status} |", flush=True)
        if writer is not None:
            writer.writerow(dict(profile=profile_name, audit=name, trials=n, wall_s=round(wall, 2),
                                 cpu_s=round(cpu, 2), bound=r.epsilon_lower_bound, status=status))
    print(f"| total ({profile_name}) | | {wall_total:.1f} | {cpu_total:.1f} | | |")
    print(f"load {os.getloadavg()[0]:.2f} at end")
    return wall_total, cpu_total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profiles", nargs="+", default=["smoke", "default"], choices=["smoke", "default", "full"])
    ap.add_argument("--targets", nargs="*", default=None)
    ap.add_argument("--csv", default=None)
    args = ap.parse_args(argv)
    from privbound.audit.targets import get_target

    selected = added_targets() if not args.targets else [get_target(n) for n in args.targets]
    out = open(args.csv, "w", newline="") if args.csv else None
    writer = None
    if out is not None:
        writer = csv.DictWriter(out, ["profile", "audit", "trials", "wall_s", "cpu_s", "bound", "status"])
        writer.writeheader()
    try:
        for p in args.profiles:
            measure(p, selected, writer)
    finally:
        if out is not None:
            out.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
