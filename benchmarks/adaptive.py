"""The sequential audit (``trials="auto"``) on the project's suite, and the record-domain neighbour search.

Part A. Every mechanism of ``benchmarks/auditor_tightness.py`` (Laplace eps = 0.1 and 1, binary randomized
response, the analytic Gaussian) and of ``benchmarks/attack_power.py`` (its correct mechanisms and planted bugs),
plus three families at several leak sizes -- sparse vector (cutoff 2, query and threshold noise divided by
1.25, 1.5, 2), report-noisy-max (epsilon 1.25, 1.5, 2 answering for 1) and a noisy histogram (noise divided by
1.25, 1.5, 2; on these pairs the correct mechanisms reach bounds of only 0.62, 0.56 and 0.04 at their
claims 1, 1 and 0.1, so a leak of 1.25x or 1.5x need not exceed the claim on the pair and cannot then be flagged by a
sound audit) -- audited with ``trials="auto"`` at a budget of ``--max-trials`` (default 2e6) per side, seeds
0 .. S-1: bound, trials spent, wall time, flagged, why it stopped; and (unless ``--no-fixed``) the fixed-trials
audit at the trials it spent (the ratio of the two bounds; 1.0 when the sequential audit is, as designed,
the fixed-trials audit at its trial count). The floating-point attack is off (``float_audit=False``): this
part measures the mathematical verdict.

Part S. The neighbour search (``search_and_audit``) given only the mechanism, the claim and a record domain
(or the query box of the sensitivity-1 query vectors) against the hand-picked pair. ``--search-fraction F``
(default 0.2, the search's own default) is the share of the search's trials that explores; its total is sized
so that it certifies on as many fresh trials as the hand-picked audit evaluates on (Split's 80% of the same
trials): at 0.2 both audits spend the same trials, above it the search explores with extra trials.

Usage::

    python benchmarks/adaptive.py [--parts AS] [--seeds S] [--max-trials N] [--no-fixed] [--csv PATH]
                                  [--mechanisms NAME ...] [--search-fraction F] [--quick]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privbound import audit_mechanism
from privbound.audit.estimators import BlackBox
from privbound.audit.search import BoxNeighbours, RecordDomain, search_and_audit
from privbound.audit.targets.reference import Float32SumLaplace, UnclampedSum
from privbound.learners import mechanisms as M

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import attack_power  # noqa: E402  (the suite's mechanisms)
import auditor_tightness  # noqa: E402

CONFIDENCE = 0.95
LEAKS = (1.25, 1.5, 2.0)


@dataclass(frozen=True)
class ScaledSparseVector(M.SparseVector):
    """Sparse vector whose query and threshold noise are divided by ``leak`` (1: the correct mechanism)."""

    leak: float = 1.0

    @property
    def query_scale(self) -> float:
        return super().query_scale / self.leak

    @property
    def threshold_scale(self) -> float:
        return super().threshold_scale / self.leak


@dataclass(frozen=True)
class Row:
    """One mechanism of part A: its pair, claim and whether it is a planted bug; ``estimator`` when the default
    would not be a black-box one."""

    name: str
    mechanism: Any
    d0: Any
    d1: Any
    epsilon: float
    delta: float
    bug: bool
    estimator: Any = "auto"


def rows() -> list[Row]:
    out = []
    for c in auditor_tightness.cases():
        est = BlackBox() if getattr(c.mechanism, "output_space", None) is not None else "auto"
        out.append(Row(c.name, c.mechanism, 0.0 if est == "auto" else 0, 1.0 if est == "auto" else 1,
                       c.epsilon, c.delta, False, est))
    for c in attack_power.suite():
        est = BlackBox() if getattr(c.correct, "output_space", None) is not None else "auto"
        out.append(Row(c.name, c.correct, c.d0, c.d1, c.epsilon, c.delta, False, est))
        out.append(Row(c.name + ":bug", c.bug, c.d0, c.d1, c.epsilon, c.delta, True, est))
    half_up = np.r_[np.ones(5), np.zeros(5)]
    hist0 = np.array([10.0, 5.0, 3.0, 2.0, 1.0])
    for leak in (1.0,) + LEAKS:
        tag = "" if leak == 1.0 else f":leak{leak:g}"
        out.append(Row("sparse-vector" + tag, ScaledSparseVector(1.0, threshold=0.5, cutoff=2, leak=leak),
                       half_up[::-1].copy(), half_up, 1.0, 0.0, leak > 1.0))
        out.append(Row("report-noisy-max" + tag, M.ReportNoisyMax(leak, score=np.asarray),
                       np.r_[1.0, np.zeros(4)], np.r_[0.0, 1.0, np.zeros(3)], 1.0, 0.0, leak > 1.0))
        out.append(Row("histogram" + tag, attack_power.NoisyVector(0.1, noise_factor=1.0 / leak), hist0,
                       hist0 + np.r_[1.0, np.zeros(4)], 0.1, 0.0, leak > 1.0))
    return out


def run_part_a(selected: list[Row], seeds, max_trials: int, fixed: bool) -> pd.DataFrame:
    records = []
    for row in selected:
        for seed in seeds:
            start = time.perf_counter()
            r = audit_mechanism(row.mechanism, row.d0, row.d1, epsilon=row.epsilon, delta=row.delta, trials="auto",
                                max_trials=max_trials, seed=seed, confidence=CONFIDENCE, estimator=row.estimator,
                                float_audit=False)
            seconds = time.perf_counter() - start
            rec = dict(mechanism=row.name, bug=row.bug, seed=seed, bound=r.epsilon_lower_bound, claim=row.epsilon,
                       trials=r.trials, seconds=seconds, flagged=r.violation, mu=r.mu_lower_bound,
                       stop=r.stop_reason.split(":")[0].split(" (")[0])
            if fixed:
                f = audit_mechanism(row.mechanism, row.d0, row.d1, epsilon=row.epsilon, delta=row.delta,
                                    trials=r.trials, seed=seed, confidence=CONFIDENCE, estimator=row.estimator,
                                    float_audit=False)
                rec["fixed_bound"] = f.epsilon_lower_bound
                rec["ratio"] = (r.epsilon_lower_bound / f.epsilon_lower_bound if f.epsilon_lower_bound > 0
                                else (1.0 if r.epsilon_lower_bound == 0 else math.inf))
            records.append(rec)
            print(f"  {row.name:34s} seed {seed}: bound {r.epsilon_lower_bound:.4f} trials {r.trials:>8d} "
                  f"{seconds:6.1f} s {'FLAGGED' if r.violation else 'holds':7s} {rec['stop']}", flush=True)
    return pd.DataFrame(records)


def summarise_a(df: pd.DataFrame, n_seeds: int) -> None:
    agg = dict(bound=("bound", "mean"), trials=("trials", "mean"), max_trials=("trials", "max"),
               seconds=("seconds", "mean"), flagged=("flagged", "sum"))
    if "ratio" in df:
        agg["min_ratio"] = ("ratio", "min")
    table = df.groupby(["mechanism", "bug"], sort=False).agg(**agg).reset_index()
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    bugs, ok = table[table.bug], table[~table.bug]
    missed = bugs[bugs.flagged < n_seeds].mechanism.tolist()
    print(f"\n  planted bugs flagged on {n_seeds} of {n_seeds} seeds: {len(bugs) - len(missed)}/{len(bugs)}"
          + (f" (not: {missed})" if missed else ""))
    print(f"  correct mechanisms flagged: {int(ok.flagged.sum())} of {len(ok) * n_seeds} audits")
    print(f"  mean trials per side on correct mechanisms: {df[~df.bug].trials.mean():.4g} "
          f"(median {df[~df.bug].trials.median():.4g}); on planted bugs {df[df.bug].trials.mean():.4g}")
    if "ratio" in df:
        print(f"  bound / fixed-trials bound at the trials spent: min {df.ratio.min():.4f}")
    print("  stop reasons: " + ", ".join(f"{k}: {v}" for k, v in df.stop.value_counts().items()))


# ------------------------------------------------------------------ part S


def search_cases() -> list[tuple]:
    """``(name, mechanism, space, hand d0, hand d1, epsilon, trials)``: mechanisms with a hand-picked pair."""
    half_up = np.r_[np.ones(5), np.zeros(5)]
    m = 2.0 ** 26
    box = lambda n, hi: BoxNeighbours(n, low=0.0, high=hi, radius=1.0)  # noqa: E731
    return [
        ("float32-sum (record domain)", Float32SumLaplace(1.0), RecordDomain(4, -2.0 ** 30, 2.0 ** 30, radius=1.0),
         np.r_[np.full(3, m), m + 15.9], np.r_[np.full(3, m), m + 16.9], 1.0, 20_000),
        ("unclamped-sum (record domain, clips)", UnclampedSum(1.0), RecordDomain(3, 0.0, 1.0, clips=True),
         np.ones(3), np.r_[1.0, 1.0, 11.0], 1.0, 20_000),
        ("svt-indicators:bug (query box)", attack_power.SparseVectorCutoffBlindNoise(1.0, threshold=0.5, cutoff=2),
         box(10, 1.0), half_up[::-1].copy(), half_up, 1.0, 200_000),
        ("sparse-vector:leak2 (query box)", ScaledSparseVector(1.0, threshold=0.5, cutoff=2, leak=2.0), box(10, 1.0),
         half_up[::-1].copy(), half_up, 1.0, 200_000),
        ("report-noisy-max:leak2 (query box)", M.ReportNoisyMax(2.0, score=np.asarray), box(5, 1.0),
         np.r_[1.0, np.zeros(4)], np.r_[0.0, 1.0, np.zeros(3)], 1.0, 200_000),
        ("noisy-max-index-value:bug (query box)", attack_power.ReportNoisyMaxWithValue(1.0), box(5, 1.0), np.ones(5),
         np.zeros(5), 1.0, 200_000),
    ]


HAND_EVALUATION_SHARE = 0.8  # Split's default: the hand-picked audit evaluates on 80% of its trials


def run_part_s(seeds, quick: bool, search_fraction: float = 0.2) -> pd.DataFrame:
    records = []
    for name, mech, space, d0, d1, eps, trials in search_cases():
        trials = min(trials, 20_000) if quick else trials
        search_total = int(round(trials * HAND_EVALUATION_SHARE / (1.0 - search_fraction)))
        for seed in seeds:
            hand = audit_mechanism(mech, d0, d1, epsilon=eps, trials=trials, seed=seed, float_audit=False)
            start = time.perf_counter()
            found = search_and_audit(mech, space, epsilon=eps, trials=search_total, seed=seed,
                                     search_fraction=search_fraction)
            seconds = time.perf_counter() - start
            kinds = {}
            for c in found.candidates:
                kinds[c["origin"]] = kinds.get(c["origin"], 0) + 1
            records.append(dict(mechanism=name, seed=seed, trials=trials, search_trials=search_total,
                                hand=hand.epsilon_lower_bound,
                                search=found.epsilon_lower_bound,
                                ratio=found.epsilon_lower_bound / hand.epsilon_lower_bound if hand.epsilon_lower_bound
                                else math.nan, seconds=seconds, origin=found.audit.details["best_origin"],
                                pairs=" ".join(f"{k}:{v}" for k, v in kinds.items())))
            print(f"  {name:40s} seed {seed}: hand {hand.epsilon_lower_bound:.4f} search "
                  f"{found.epsilon_lower_bound:.4f} ({seconds:.1f} s, best {records[-1]['origin']})", flush=True)
    return pd.DataFrame(records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="AS")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--max-trials", type=int, default=2_000_000)
    parser.add_argument("--no-fixed", action="store_true", help="skip the fixed-trials audit at the trials spent")
    parser.add_argument("--csv", default=None, help="write part A's rows to this CSV file")
    parser.add_argument("--mechanisms", nargs="+", default=None, metavar="NAME")
    parser.add_argument("--search-fraction", type=float, default=0.2,
                        help="part S: the search's exploring share (its certification trials equal the hand audit's)")
    parser.add_argument("--quick", action="store_true", help="three mechanisms, one seed, a 1e5 budget")
    args = parser.parse_args(argv)
    pd.set_option("display.width", 200)
    seeds = range(1 if args.quick else args.seeds)
    if "A" in args.parts:
        selected = rows()
        if args.mechanisms:
            known = {r.name for r in selected}
            unknown = sorted(set(args.mechanisms) - known)
            if unknown:
                parser.error(f"--mechanisms: unknown {unknown}; known: {sorted(known)}")
            selected = [r for r in selected if r.name in args.mechanisms]
        if args.quick:
            selected = [r for r in selected if r.name in ("Laplace eps=1", "report-noisy-max:leak2", "rr-k2:bug")]
        max_trials = 100_000 if args.quick else args.max_trials
        print(f"Part A: trials='auto', budget {max_trials} per side, confidence {CONFIDENCE}, seeds {list(seeds)}")
        df = run_part_a(selected, seeds, max_trials, fixed=not args.no_fixed)
        if args.csv:
            df.to_csv(args.csv, index=False)
        summarise_a(df, len(seeds))
    if "S" in args.parts:
        if not 0.0 < args.search_fraction < 1.0:
            parser.error(f"--search-fraction must be in (0, 1), got {args.search_fraction}")
        print(f"\nPart S: neighbour search against the hand-picked pair, search fraction {args.search_fraction:g}, "
              f"certifying on the hand audit's evaluation trials")
        ds = run_part_s(seeds, args.quick, args.search_fraction)
        table = ds.groupby("mechanism", sort=False).agg(hand=("hand", "mean"), search=("search", "mean"),
                                                         min_ratio=("ratio", "min"), max_seconds=("seconds", "max"),
                                                         search_trials=("search_trials", "first"),
                                                         pairs=("pairs", "first")).reset_index()
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        print(f"  search >= 0.9 x hand-picked on every seed: {int((ds.groupby('mechanism').ratio.min() >= 0.9).sum())}"
              f"/{ds.mechanism.nunique()}; longest search {ds.seconds.max():.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
