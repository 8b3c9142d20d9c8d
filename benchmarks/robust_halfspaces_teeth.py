"""Benchmark: the robust-halfspaces checks with teeth ("Robust and Private Learning of Halfspaces").

Prints (A) every check's registered mutants and whether the check detects each (at the mutant's own profile, or
at ``--profile``), with the stated power, (B) the worst-case instances' observed/bound ratios, and (C) the errata
pairs (printed check -> status, corrected check -> status). Results:
benchmarks/README.md, 'Robust halfspaces: checks with teeth'.

Run: ``python benchmarks/robust_halfspaces_teeth.py [--profile smoke|default|full] [--parts A B C]``.
"""

from __future__ import annotations

import argparse

from privbound import bounds
from privbound.bounds.robust_halfspaces.claims import ERRATA_PAIRS

PAPER = "robust-halfspaces"



def part_a(profile: str | None) -> None:
    print("| claim | check | mutant | profile | detected | observed / bound | power |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in bounds.run_mutants([c.id for c in bounds.claims(PAPER) if c.checks], profile=profile):
        print(f"| {r.claim_id.split('/')[1]} | {r.check} | {r.mutant} | {r.profile} | {'yes' if r.detected else 'NO'} | "
              f"{r.observed:.4g} / {r.bound:.4g} | {r.power or ''} |", flush=True)


def _sub(claim: str, check: str, profile: str) -> dict:
    res = bounds.check(f"{PAPER}/{claim}", profile=profile)
    parts = res.details["checks"] if "checks" in res.details else [res.to_dict()]
    return next(p for p in parts if p["check"] == check)


def part_b(profile: str) -> None:
    nov = _sub("fact-novikoff", "perceptron-runs", profile)["details"]
    print("Novikoff, orthogonal sequences (mistakes / (R/gamma)^2):", nov["worst_case_observed_over_bound"])
    print("Novikoff, random margin data (max, median):", nov["random_data_observed_over_bound"])
    l18 = _sub("lemma-18", "noiseless-margin-perceptron", profile)["details"]
    for row in l18["worst_case_instances"]:
        print("Lemma 18, tilted instance:", row)
    t6 = _sub("theorem-6", "accuracy-scaled", profile)
    d = t6["details"]
    print(f"Theorem 6 accuracy on the tilted instance: failures {d['failures']}/{t6['trials']} (bound 0.01), updates "
          f"mean {d['mean_iterations']:.1f} (min {d['min_iterations']}, max {d['max_iterations']}) of T = "
          f"{d['parameters']['T']}, mean updates / T = {d['mean_iterations_over_T']:.3f}")


def part_c(profile: str) -> None:
    for claim, pairs in ERRATA_PAIRS.items():
        res = bounds.check(f"{PAPER}/{claim}", profile=profile)
        status = {c["check"]: (c["status"], c["observed"], c["bound"]) for c in res.details["checks"]}
        for printed, corrected in pairs:
            print(f"{claim}: {printed} -> {status[printed]}, {corrected} -> {status[corrected]}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default=None, help="run every mutant at this profile (default: each at its own)")
    ap.add_argument("--parts", nargs="+", default=["A", "B", "C"])
    args = ap.parse_args(argv)
    prof = args.profile or "smoke"
    if "A" in args.parts:
        part_a(args.profile)
    if "B" in args.parts:
        part_b(prof)
    if "C" in args.parts:
        part_c(prof)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
