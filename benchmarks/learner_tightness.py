"""How close today's audits of the learner targets come to the tightest epsilon of what the code runs.

For every target of the three papers (``Target.paper``), the table gives the claim, the tight epsilon
(``Target.tight()``: an accountant's PLD of what runs, or the exact privacy curve on the target's pair) and
the claim's looseness claim / tight, then, for each nightly profile (``privbound.reports.nightly``: the
trials it gives the target, ``trials_for``), the audit's epsilon lower bound at seed 0
(``Target.audit(trials=..., seed=0)``), bound / tight, the trials per dataset and the audit's wall time.
A design reaches its target when a correct learner's bound / tight is >= 0.9; a planted bug's tight value
over its claim is its overspend. The sources of the tight values are listed after the table.

Usage::

    python benchmarks/learner_tightness.py [--profiles smoke default] [--n-jobs 1] [--targets NAME ...]
                                           [--papers PAPER ...] [--tight-only] [--csv FILE]
"""

from __future__ import annotations

import argparse
import math
import sys
import time

PAPERS = ("decision-lists-winnow", "robust-halfspaces", "agnostic-halfspaces")


def _ratio(a: float, b: float) -> float:
    if b == 0:
        return math.inf if a > 0 else math.nan
    if math.isinf(b):
        return 0.0 if math.isfinite(a) else math.nan
    return a / b


def rows(names=None, papers=PAPERS, profiles=("smoke", "default"), n_jobs=1, tight_only=False):
    """One dict per target: the claim, the tight value and, per profile, the audit's bound, trials and wall time."""
    from privbound.audit.targets import get_target, targets
    from privbound.reports.nightly import NIGHTLY_PROFILES, trials_for

    selected = [get_target(n) for n in names] if names else [t for t in targets() if t.paper in papers]
    for t in selected:
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
    if args.csv:
        pd.DataFrame(out).to_csv(args.csv, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
