"""Wall time of the composition estimator with many kinds of steps.

``privbound.audit.estimators.composition.composed_epsilon_lower_bound`` on outputs of K independent steps, each its
own kind (``groups=range(K)``): each kind gets its own band and its own self-convolution, and the kinds are then
convolved together. The step losses are those of a Gaussian mechanism of mu = 0.3 per step (the privacy loss of
N(0, 1) against N(mu, 1) is N(mu^2 / 2, mu^2) under d0), n = 500 trials per side, delta = 1e-5, confidence 0.95,
with the p-value against a claimed epsilon of 5 (which bisects over the band's level, composing again each time).
Each row is the best of ``--repeats`` runs (``time.perf_counter``; the machine may be shared). The exact epsilon of
K such steps (``privbound.learners.agnostic_halfspaces.common.gaussian_epsilon``) is printed beside, and so is the
bound of the same outputs declared as one kind (``groups=None``: all n K draws in one band, composed K times). Each
kind's band is at level alpha / K from its n draws, so declaring kinds costs the bound as K grows.

Usage::

    python benchmarks/composition_kinds.py [--kinds K ...] [--trials N] [--repeats R]
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from privbound.audit.estimators.composition import composed_epsilon_lower_bound
from privbound.learners.agnostic_halfspaces.common import gaussian_epsilon

MU = 0.3
DELTA = 1e-5
CLAIM = 5.0


def step_losses(kinds: int, trials: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-step log-likelihood ratios log p_d0 / p_d1 of outputs drawn on d0 and on d1."""
    rng = np.random.default_rng(seed)
    l0 = rng.normal(MU ** 2 / 2, MU, size=(trials, kinds))
    l1 = rng.normal(-MU ** 2 / 2, MU, size=(trials, kinds))
    return l0, l1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kinds", type=int, nargs="+", default=[1, 10, 50, 100, 200])
    ap.add_argument("--trials", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args(argv)
    print(f"{'kinds':>6} {'bound':>8} {'exact':>8} {'p-value':>8} {'seconds':>8} {'one kind':>9}")
    for k in args.kinds:
        l0, l1 = step_losses(k, args.trials, seed=0)
        best, est = math.inf, None
        for _ in range(args.repeats):
            start = time.perf_counter()
            est = composed_epsilon_lower_bound(l0, l1, delta=DELTA, confidence=0.95, epsilon_claimed=CLAIM,
                                               groups=np.arange(k))
            best = min(best, time.perf_counter() - start)
        one = composed_epsilon_lower_bound(l0, l1, delta=DELTA, confidence=0.95).epsilon_lower_bound
        print(f"{k:>6d} {est.epsilon_lower_bound:8.4f} {gaussian_epsilon(MU, 1.0, DELTA, count=k):8.4f} "
              f"{est.p_value:8.3g} {best:8.1f} {one:9.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
