"""How close today's audits of the learner targets come to the tightest epsilon of what the code runs.

For every target of the three papers (``Target.paper``), the table gives the claim, the tight epsilon
(``Target.tight()``: an accountant's PLD of what runs, or the exact privacy curve on the target's pair) and
the claim's looseness claim / tight, then, for each nightly profile (``privbound.reports.nightly``: the
trials it gives the target, ``trials_for``), the audit's epsilon lower bound at seed 0
(``Target.audit(trials=..., seed=0)``), bound / tight, the trials per dataset and the audit's wall time.
A design reaches its target when a correct learner's bound / tight is >= 0.9; a planted bug's tight value
over its claim is its overspend. The sources of the tight values are listed after the table.

``--mutants`` adds a second table: every learner mutant of the selected targets (``Target.mutants``) audited
at the default nightly's trials and seed 0 (``Target.audit_mutant``), its bound against the correct code's
tight epsilon and whether the audit flags it. ``--overspend`` adds a third: per target with an
``overspend`` factory, the smallest factor of the grid whose overspending learner the audit flags at the
default nightly's trials (the audits stop at the first flagged factor). ``--soundness RUNS`` adds a fourth:
per correct learner target, RUNS audits at ``--soundness-trials`` trials per dataset and confidence 0.95
(seeds 0 .. RUNS - 1), the number whose bound exceeds the tight epsilon and the binomial probability of at least
that many if each exceeded with probability 0.05 (a sound design: small counts, large probabilities).

Usage::

    python benchmarks/learner_tightness.py [--profiles smoke default] [--n-jobs 1] [--targets NAME ...]
                                           [--papers PAPER ...] [--tight-only] [--mutants] [--overspend]
                                           [--soundness RUNS [--soundness-trials N]] [--csv FILE]
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

PAPERS = ("decision-lists-winnow", "robust-halfspaces", "agnostic-halfspaces")
OVERSPEND_GRID = (1.05, 1.1, 1.15, 1.2, 1.25, 1.5, 2.0)


def _ratio(a: float, b: float) -> float:
    if b == 0:
        return math.inf if a > 0 else math.nan
    if math.isinf(b):
        return 0.0 if math.isfinite(a) else math.nan
    return a / b


def rows(names=None, papers=PAPERS, profiles=("smoke", "default"), n_jobs=1, tight_only=False):
    """One dict per target: the claim, the tight value and, per profile, the audit's bound, trials and wall time."""
    from privbound.reports.nightly import NIGHTLY_PROFILES, trials_for

    for t in _selected(names, papers):
        t0 = time.perf_counter()
        te = t.tight()
        row = {"target": t.name, "paper": t.paper, "bug": t.planted_bug, "claim": t.epsilon, "delta": t.delta,
               "tight": math.nan if te is None else te.epsilon,
               "tight_s": round(time.perf_counter() - t0, 2),
               "source": t.no_tight_epsilon if te is None else te.source}
        row["claim/tight"] = _ratio(t.epsilon, row["tight"])
        if not tight_only:
            for prof in profiles:
                trials = trials_for(t, NIGHTLY_PROFILES[prof])
                t0 = time.perf_counter()
                res = t.audit(trials=trials, seed=0, n_jobs=n_jobs)
                row[f"{prof}_trials"] = trials
                row[f"{prof}_bound"] = res.epsilon_lower_bound
                row[f"{prof}_bound/tight"] = _ratio(res.epsilon_lower_bound, row["tight"])
                row[f"{prof}_violation"] = res.violation
                row[f"{prof}_s"] = round(time.perf_counter() - t0, 1)
        yield row


def _selected(names, papers):
    from privbound.audit.targets import get_target, targets

    return [get_target(n) for n in names] if names else [t for t in targets() if t.paper in papers]


def mutant_rows(names=None, papers=PAPERS):
    """One dict per learner mutant: its audit at the default nightly's trials, seed 0, against the correct tight."""
    from privbound.reports.nightly import NIGHTLY_PROFILES, trials_for

    for t in _selected(names, papers):
        for m in t.mutants:
            trials = trials_for(t, NIGHTLY_PROFILES["default"])
            t0 = time.perf_counter()
            res = t.audit_mutant(m, trials=trials, seed=0)
            yield {"target": t.name, "mutant": m.name, "tight": res.epsilon_tight, "bound": res.epsilon_lower_bound,
                   "bound/tight": _ratio(res.epsilon_lower_bound, res.epsilon_tight or math.nan),
                   "flagged": bool(res.tight_violation if res.epsilon_tight is not None else res.violation),
                   "trials": trials, "s": round(time.perf_counter() - t0, 1), "description": m.description}


def overspend_rows(names=None, papers=PAPERS, grid=OVERSPEND_GRID):
    """Per target with an ``overspend`` factory: the smallest factor of ``grid`` its default audit flags."""
    from privbound.reports.nightly import NIGHTLY_PROFILES, trials_for

    for t in _selected(names, papers):
        if t.overspend is None:
            continue
        trials = trials_for(t, NIGHTLY_PROFILES["default"])
        row = {"target": t.name, "trials": trials, "smallest flagged": math.nan}
        t0 = time.perf_counter()
        for f in grid:
            res = t.audit_mutant(t.overspend(f), trials=trials, seed=0)
            row[f"x{f:g}"] = res.epsilon_lower_bound
            if res.tight_violation:
                row["smallest flagged"] = f
                break
        row["tight"] = res.epsilon_tight
        row["s"] = round(time.perf_counter() - t0, 1)
        yield row


def soundness_rows(names=None, papers=PAPERS, runs=300, trials=500):
    """Per correct learner target with a tight epsilon: ``runs`` audits at ``trials`` trials, how many exceed it."""
    from scipy import stats

    for t in _selected(names, papers):
        te = t.tight()
        if t.planted_bug or te is None:
            continue
        t0 = time.perf_counter()
        bounds = np.array([t.audit(trials=trials, seed=s, confidence=0.95).epsilon_lower_bound for s in range(runs)])
        above = int(np.sum(bounds > te.epsilon))
        yield {"target": t.name, "tight": te.epsilon, "runs": runs, "trials": trials, "above tight": above,
               "P(Bin(runs, 0.05) >= above)": float(stats.binom.sf(above - 1, runs, 0.05)),
               "mean bound/tight": float(bounds.mean() / te.epsilon), "s": round(time.perf_counter() - t0, 1)}


def _fmt(v) -> str:
    if isinstance(v, bool):
        return "BUG" if v else ""
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        if math.isinf(v):
            return "inf"
        return f"{v:.4g}"
    return str(v)


def markdown_table(body: list[list[str]], header: list[str]) -> str:
    """A GitHub markdown table, columns padded to their widest cell."""
    width = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(header)]

    def line(cells):
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, width)) + " |"

    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in width) + "|", *map(line, body)])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profiles", nargs="+", default=["smoke", "default"], help="nightly profiles to audit at")
    ap.add_argument("--n-jobs", type=int, default=1, help="joblib workers of each audit (the machine may be shared)")
    ap.add_argument("--targets", nargs="+", help="target names (default: every target of --papers)")
    ap.add_argument("--papers", nargs="+", default=list(PAPERS))
    ap.add_argument("--tight-only", action="store_true", help="the tight values only, no audit")
    ap.add_argument("--mutants", action="store_true", help="also audit every learner mutant at the default trials")
    ap.add_argument("--overspend", action="store_true", help="also the smallest overspend factor each audit flags")
    ap.add_argument("--soundness", type=int, default=0, metavar="RUNS",
                    help="also RUNS audits of each correct target at small trials, counted above its tight epsilon")
    ap.add_argument("--soundness-trials", type=int, default=500, help="trials per dataset of each soundness audit")
    ap.add_argument("--csv", help="also write the rows to this CSV file")
    args = ap.parse_args(argv)
    import pandas as pd

    show = ["target", "bug", "claim", "delta", "tight", "claim/tight"]
    if not args.tight_only:
        show += [f"{p}_{k}" for p in args.profiles for k in ("bound", "bound/tight", "trials", "s")]
    out = []
    for row in rows(args.targets, tuple(args.papers), tuple(args.profiles), args.n_jobs, args.tight_only):
        out.append(row)
        print("  ".join(_fmt(row[c]) for c in show), file=sys.stderr, flush=True)  # progress
    print(markdown_table([[_fmt(r[c]) for c in show] for r in out], show))
    print("\nSources of the tight values:")
    for r in out:
        print(f"- {r['target']}: {r['source']}")
    if args.mutants:
        cols = ["target", "mutant", "tight", "bound", "bound/tight", "flagged", "trials", "s"]
        found = list(mutant_rows(args.targets, tuple(args.papers)))
        print("\nLearner mutants at the default nightly's trials (seed 0):\n")
        print(markdown_table([[_fmt(r[c]) if c != "flagged" else ("yes" if r[c] else "NO") for c in cols]
                              for r in found], cols))
    if args.overspend:
        cols = ["target", "tight", *(f"x{f:g}" for f in OVERSPEND_GRID), "smallest flagged", "trials", "s"]
        found = list(overspend_rows(args.targets, tuple(args.papers)))
        print("\nSmallest overspend flagged at the default nightly's trials (seed 0; bounds per factor):\n")
        print(markdown_table([[_fmt(r.get(c, math.nan)) for c in cols] for r in found], cols))
    if args.soundness:
        found = list(soundness_rows(args.targets, tuple(args.papers), args.soundness, args.soundness_trials))
        cols = ["target", "tight", "runs", "trials", "above tight", "P(Bin(runs, 0.05) >= above)",
                "mean bound/tight", "s"]
        print(f"\nSoundness: {args.soundness} audits per correct target at {args.soundness_trials} trials, "
              "confidence 0.95:\n")
        print(markdown_table([[_fmt(r[c]) for c in cols] for r in found], cols))
    if args.csv:
        pd.DataFrame(out).to_csv(args.csv, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
