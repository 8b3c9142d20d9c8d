"""Batched vs single runs of DP-Winnow and DP-GreedyCover ("Privately Learning Decision Lists and a
Differentially Private Winnow", Algorithm 4.2 and Sec. 3.1).

For each learner, the wall time of ``N`` independent runs done two ways, best of
``--repeats`` (``time.perf_counter``; the machine may be shared):

* **loop** -- a Python loop of ``N`` single runs (``DPWinnow.run`` with its
  ``AboveThreshold`` objects; ``greedy_cover_run``, the literal pseudocode);
* **batched** -- one call that runs all ``N`` at once as array operations
  (``DPWinnow.run_batch``; ``greedy_cover_sample``).

Workloads: DP-Winnow on a majority-of-3 sequence, d = 50, T = 2000, relaxed
parameters (eps_hat = 2, eta = 0.125, m = 101, L = 10, K = 40); DP-GreedyCover on 40
records over {0,1}^8 (coordinate features, M = 9 rounds, eps_step = 1). Target:
speedup >= 10 for both. The distributional identity of the two paths is tested in
tests/learners/decision_lists_winnow/test_winnow.py and test_decision_lists.py.

Usage::

    python benchmarks/dlw_batched.py [--quick] [--repeats R]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from privbound.learners.decision_lists_winnow.decision_lists import feature_matrix, greedy_cover_run, greedy_cover_sample
from privbound.learners.decision_lists_winnow.winnow import DPWinnow, generate_instance


def _best(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def bench_dp_winnow(N: int, T: int, repeats: int) -> tuple[float, float]:
    inst = generate_instance("majority", np.random.default_rng(0), 50, T, k=3)
    dw = DPWinnow(epsilon_hat=2.0, eta=0.125, m=101, L=10.0, K=40)

    def loop():
        rng = np.random.default_rng(1)
        for _ in range(N):
            dw.run(inst.X, inst.y, rng)

    def batched():
        dw.run_batch(inst.X, inst.y, np.random.default_rng(2), N)

    return _best(loop, repeats), _best(batched, repeats)


def bench_greedy_cover(N: int, repeats: int) -> tuple[float, float]:
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(40, 8))
    y = np.where(X[:, 0] == 1, 1, np.where(X[:, 1] == 1, 0, 1))
    Phi = feature_matrix(X)

    def loop():
        r = np.random.default_rng(4)
        for _ in range(N):
            greedy_cover_run(Phi, y, 1.0, r)

    def batched():
        greedy_cover_sample(Phi, y, 1.0, np.random.default_rng(5), N)

    return _best(loop, repeats), _best(batched, repeats)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small N (smoke run)")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    Nw, T, Ng = (50, 300, 200) if a.quick else (300, 2000, 2000)
    rows = [("DPWinnow", Nw, *bench_dp_winnow(Nw, T, a.repeats)),
            ("DPGreedyCover", Ng, *bench_greedy_cover(Ng, a.repeats))]
    print(f"{'learner':15s} {'runs':>6s} {'loop s':>9s} {'batched s':>10s} {'speedup':>8s}  reach (>= 10x)")
    ok = True
    for name, n, tl, tb in rows:
        sp = tl / tb
        ok &= sp >= 10
        print(f"{name:15s} {n:6d} {tl:9.3f} {tb:10.4f} {sp:8.1f}  {'PASS' if sp >= 10 else 'FAIL'}")
    return 0 if ok or a.quick else 1


if __name__ == "__main__":
    raise SystemExit(main())
