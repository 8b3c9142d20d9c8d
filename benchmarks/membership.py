"""Membership inference: LiRA, RMIA and the loss threshold on non-private and private models.

Parts (``--parts ABCDE``, all by default):

A. **Attacks by reference models.** For each target and each number of reference models K (16, 64,
   256 by default), a fresh run (no cache) of ``membership_audit`` with 8 target models: TPR at FPR 1e-3,
   AUC and advantage of every attack, the epsilon lower bound, and the wall seconds of the run.
B. **LiRA against the loss threshold** on the overfitted logistic regression of the digits, 64 reference
   models: TPR at FPR 1e-3 of online LiRA over the loss threshold's (target: >= 3x), over ``--seeds`` seeds.
C. **RMIA against offline LiRA** with 4, 8 and 16 reference models (same models), over ``--seeds`` seeds
   (target: RMIA's TPR at FPR 1e-3 matches or beats offline LiRA's).
D. **Soundness and planted bugs over seeds.** DP Batch Perceptron at its claimed (1, 1e-5): the largest
   epsilon lower bound over the seeds (must not exceed 1); the exactly 1-DP randomized-response model: the
   rate of runs above the claim (nominal at most 5%); the planted bugs: the rate at which they are flagged.
E. **256 reference models, resumable.** Trains 256 reference models of the digits logistic regression on
   ``--n-jobs`` workers into a cache, kills the run (SIGKILL) at 60% of its uninterrupted time, reruns it
   and compares the scores with the uninterrupted run's.

Usage::

    python benchmarks/membership.py [--quick] [--parts ABCDE] [--seeds S] [--n-jobs J]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

from privbound.audit.targets.membership import get_membership_target

ATTACKS = ("lira-online", "lira-offline", "rmia-online", "rmia-offline", "loss")


def part_a(names, ks, n_jobs) -> None:
    print("\nA. attacks by number of reference models (8 target models, seed 0; fresh runs, no cache)\n")
    head = f"{'target':30s} {'K':>4s} {'attack':13s} {'TPR@1e-3':>9s} {'AUC':>6s} {'adv':>6s} {'eps_lb':>7s} {'seconds':>8s}"
    print(head)
    print("-" * len(head))
    for name in names:
        t = get_membership_target(name)
        for k in ks:
            t0 = time.perf_counter()
            r = t.audit(n_reference=k, n_targets=8, seed=0, n_jobs=n_jobs)
            sec = time.perf_counter() - t0
            for i, a in enumerate(r.attacks):
                eps = f"{r.epsilon_lower_bound:7.3f}" if i == 0 else ""
                s = f"{sec:8.1f}" if i == 0 else ""
                print(f"{name if i == 0 else '':30s} {k if i == 0 else '':>4} {a.attack:13s} {a.tpr_at(1e-3):9.4f} "
                      f"{a.auc:6.3f} {a.advantage:6.3f} {eps:>7s} {s:>8s}")


def _tprs(name, k, seed, n_jobs, cache):
    r = get_membership_target(name).audit(n_reference=k, n_targets=8, seed=seed, n_jobs=n_jobs, cache_dir=cache)
    return {a.attack: a.tpr_at(1e-3) for a in r.attacks}


def part_b(seeds, n_jobs, cache, k=64) -> None:
    print(f"\nB. online LiRA vs the loss threshold, digits-logreg, {k} reference models, 8 targets, TPR at FPR 1e-3\n")
    ratios = []
    for s in range(seeds):
        t = _tprs("digits-logreg", k, s, n_jobs, cache)
        ratio = t["lira-online"] / max(t["loss"], 1e-12)
        ratios.append(ratio)
        print(f"  seed {s}: LiRA online {t['lira-online']:.4f}, offline {t['lira-offline']:.4f}, "
              f"RMIA offline {t['rmia-offline']:.4f}, loss {t['loss']:.4f}  -> LiRA / loss = {ratio:.1f}x")
    ok = min(ratios) >= 3
    print(f"  [{'PASS' if ok else 'FAIL'}] LiRA >= 3x the loss threshold at FPR 1e-3 on every seed "
          f"(min {min(ratios):.1f}x, median {np.median(ratios):.1f}x)")


def part_c(seeds, n_jobs, cache, ks=(4, 8, 16)) -> None:
    print("\nC. RMIA vs offline LiRA with the same reference models, digits-logreg, 8 targets, TPR at FPR 1e-3\n")
    wins = total = 0
    for k in ks:
        for s in range(seeds):
            t = _tprs("digits-logreg", k, s, n_jobs, cache)
            best = max(t["rmia-offline"], t["rmia-online"])
            wins += best >= t["lira-offline"]
            total += 1
            print(f"  K={k:3d} seed {s}: RMIA offline {t['rmia-offline']:.4f}, online {t['rmia-online']:.4f}; "
                  f"LiRA offline {t['lira-offline']:.4f}, online {t['lira-online']:.4f}")
    print(f"  [{'PASS' if wins == total else 'FAIL'}] RMIA (offline or online) >= offline LiRA in {wins}/{total} runs")


def part_d(seeds, n_jobs, k=16) -> None:
    print(f"\nD. soundness and planted bugs over {seeds} seeds (95% confidence per run)\n")
    t = get_membership_target("batch-perceptron")
    b = [t.audit(n_reference=k, n_targets=k, seed=s, n_jobs=n_jobs).epsilon_lower_bound for s in range(seeds)]
    print(f"  batch-perceptron (claim 1): largest bound {max(b):.3f}, above the claim in {sum(x > 1 for x in b)}/{seeds}")
    t = get_membership_target("randomized-response-eps1")
    b = [t.audit(seed=s, n_jobs=n_jobs).epsilon_lower_bound for s in range(seeds)]
    print(f"  randomized-response-eps1 (exactly 1-DP): bounds median {np.median(b):.3f}, max {max(b):.3f}, "
          f"above the claim in {sum(x > 1 for x in b)}/{seeds} (nominal <= 5%)")
    for name in ("batch-perceptron-noise-div100", "randomized-response-eps1-bug"):
        t = get_membership_target(name)
        b = [t.audit(seed=s, n_jobs=n_jobs).epsilon_lower_bound for s in range(seeds)]
        print(f"  {name} (planted bug, claim 1): flagged in {sum(x > 1 for x in b)}/{seeds}, "
              f"bounds min {min(b):.3f}, median {np.median(b):.3f}")


_RUN = textwrap.dedent("""
    import sys, json
    from privbound.audit.targets.membership import get_membership_target
    r = get_membership_target("digits-logreg").audit(n_reference=256, n_targets=8, seed=0, n_jobs=int(sys.argv[2]),
                                                     cache_dir=sys.argv[1])
    json.dump({k: v.tolist() for k, v in r.scores.items()}, open(sys.argv[3], "w"))
    print(f"{r.train_seconds:.1f}")
""")


def part_e(n_jobs) -> None:
    print(f"\nE. 256 reference models (+ 8 targets) of digits-logreg on n_jobs={n_jobs}, killed and resumed\n")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        script = tmp / "run.py"
        script.write_text(_RUN)
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, str(script), str(tmp / "ref-cache"), str(n_jobs), str(tmp / "ref.json")],
                             check=True, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        print(f"  uninterrupted: {wall:.1f} s wall ({out.stdout.strip()} s training)")
        proc = subprocess.Popen([sys.executable, str(script), str(tmp / "cache"), str(n_jobs), str(tmp / "got.json")])
        time.sleep(0.6 * wall)
        proc.kill()
        proc.wait()
        done = len(list((tmp / "cache").glob("*/*.npz")))
        t0 = time.perf_counter()
        subprocess.run([sys.executable, str(script), str(tmp / "cache"), str(n_jobs), str(tmp / "got.json")],
                       check=True, capture_output=True, text=True)
        print(f"  killed at 60% with {done} of {256 // 4 + 2} chunks cached; the rerun took {time.perf_counter() - t0:.1f} s")
        same = json.loads((tmp / "ref.json").read_text()) == json.loads((tmp / "got.json").read_text())
        print(f"  [{'PASS' if same else 'FAIL'}] resumed scores identical to the uninterrupted run's: {same}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    p.add_argument("--parts", default="ABCDE")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--n-jobs", type=int, default=2)
    args = p.parse_args(argv)
    if args.quick:
        names, ks, seeds = ["synthetic-logreg", "randomized-response-eps1"], (4, 8), 1
    else:
        names = ["digits-logreg", "breast-cancer-forest", "synthetic-logreg", "batch-perceptron",
                 "batch-perceptron-nonprivate", "agnostic-proper", "agnostic-proper-nonprivate"]
        ks, seeds = (16, 64, 256), args.seeds
    with tempfile.TemporaryDirectory() as cache:
        if "A" in args.parts:
            part_a(names, ks, args.n_jobs)
        if "B" in args.parts and not args.quick:
            part_b(seeds, args.n_jobs, cache)
        if "C" in args.parts and not args.quick:
            part_c(seeds, args.n_jobs, cache)
        if "D" in args.parts:
            part_d(2 if args.quick else 10 * seeds, args.n_jobs, k=8 if args.quick else 16)
        if "E" in args.parts and not args.quick:
            part_e(args.n_jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
