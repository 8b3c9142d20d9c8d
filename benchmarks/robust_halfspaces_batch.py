"""Benchmark: batched DP Batch Perceptron trials (``run_batch``) vs a Python loop of single ``fit`` runs
("Robust and Private Learning of Halfspaces", Algorithm 1).

The batched path is what makes the audits' thousands of trials cheap; the target is a speed-up >= 10x.
Run: ``python benchmarks/robust_halfspaces_batch.py``.
"""

from __future__ import annotations

import time

import numpy as np

from privbound.learners.robust_halfspaces.perceptron import DPBatchPerceptron
from privbound.learners.robust_halfspaces.instances import margin_realizable


def main(runs: int = 500) -> list[dict]:
    rows = []
    for n, d, T in ((50, 3, 16), (500, 10, 16), (2000, 20, 8)):
        X, y, _ = margin_realizable(n, d, 0.3, np.random.default_rng(0))
        kw = dict(epsilon=1.0, delta=1e-5, variant="experimental", sampling_rate=0.25, n_iter=T, noise_std=2.0)
        est = DPBatchPerceptron(0.3, **kw)
        t = time.perf_counter()
        for s in range(runs):
            DPBatchPerceptron(0.3, random_state=s, **kw).fit(X, y)
        loop = time.perf_counter() - t
        t = time.perf_counter()
        est.run_batch(X, y, np.random.default_rng(1), runs)
        batch = time.perf_counter() - t
        rows.append(dict(n=n, d=d, T=T, runs=runs, loop_s=loop, batch_s=batch, speedup=loop / batch))
    print(f"{'n':>6} {'d':>4} {'T':>4} {'runs':>6} {'loop s':>8} {'batch s':>8} {'speed-up':>9}")
    for r in rows:
        print(f"{r['n']:>6} {r['d']:>4} {r['T']:>4} {r['runs']:>6} {r['loop_s']:>8.3f} {r['batch_s']:>8.3f} {r['speedup']:>9.1f}")
    return rows


if __name__ == "__main__":
    main()
