"""Benchmark: the separation headline of "Robust and Private Learning of Halfspaces" (Table 1: robust and private
learning needs more samples than either alone) as a fitted table.

Sample size needed by each learner against the scaling parameter, with the OLS log-log exponent and its 95% CI
(statsmodels), next to the theorems' exponents:

* DP Batch Perceptron, d >= 1/gamma^2 (gamma = 0.3, d in {32..2048}, scaled privacy parameters): ~ sqrt(d)
  (Theorem 6; Monte Carlo, check ``robust-halfspaces/theorem-6`` scaling-sqrt-d);
* DP Batch Perceptron on the Theorem 4 instance, d = floor(1/gamma^2): ~ gamma^-2 (Theorems 4 and 6; Monte Carlo,
  exact error on D_s, check ``theorem-4`` ds-dp-perceptron-scaling);
* non-private noiseless margin perceptron on the same data as the first row: flat in d (Monte Carlo);
* sphere exponential mechanism (pure DP, eps = 1) on the Theorem 2 packing: ~ d (exact closed form in any d,
  check ``theorem-2`` packing-em-exact); non-private: one sample at every d (one margin-perceptron update is
  1.01 gamma w_i).

Run: ``python benchmarks/robust_halfspaces_separation.py [--profile smoke|default]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from privbound.bounds.checks import PROFILES, CheckContext
from privbound.bounds.robust_halfspaces.batch_perceptron import check_theorem6_scaling_d
from privbound.bounds.robust_halfspaces.non_robust_lower_bound import check_theorem4_ds_scaling
from privbound.bounds.robust_halfspaces.pure_dp_lower_bound import check_theorem2_packing_em
from privbound.learners.robust_halfspaces.instances import in_packing_cell, packing_sample
from privbound.learners.robust_halfspaces.perceptron import MarginPerceptron


def main(profile: str = "default", seed: int = 0) -> list[dict]:
    ctx = lambda: CheckContext(rng=np.random.default_rng(seed), seed=seed, profile=PROFILES[profile])
    rows = []
    t = time.perf_counter()
    a = check_theorem6_scaling_d(ctx())
    rows.append(dict(learner="DP Batch Perceptron (approx DP)", regime="d >= 1/gamma^2, gamma=0.3", param="d",
                     x=a.details["x"], n=a.details["required_n"], slope=a.observed, ci=a.details["slope_ci"], theory="0.5",
                     status=a.status, seconds=time.perf_counter() - t))
    ns0 = a.details["noiseless_required_n"]
    rows.append(dict(learner="noiseless margin perceptron (non-private)", regime="same data", param="d", x=a.details["x"],
                     n=ns0, slope=float(np.polyfit(np.log(a.details["x"]), np.log(ns0), 1)[0]), ci=None, theory="0",
                     status="flat" if max(ns0) <= min(ns0) * 1.5 else "not flat", seconds=0.0))
    t = time.perf_counter()
    b = check_theorem4_ds_scaling(ctx())
    rows.append(dict(learner="DP Batch Perceptron (approx DP)", regime="D_s, d = floor(1/gamma^2)", param="gamma",
                     x=b.details["x"], n=b.details["needed_n"], slope=b.observed, ci=b.details["slope_ci"], theory="-2",
                     status=b.status, seconds=time.perf_counter() - t))
    t = time.perf_counter()
    c = check_theorem2_packing_em(ctx())
    rows.append(dict(learner="sphere EM (pure DP, exact)", regime="packing D^(i), any gamma", param="d", x=c.details["dims"],
                     n=c.details["em_needed_n_success_0_5"], slope=c.details["fitted_slope"], ci=c.details["fitted_slope_ci95"],
                     theory="1", status=c.status, seconds=time.perf_counter() - t,
                     note=f"local slope at the largest d: {c.details['local_slopes'][-1]:.4f}"))

    rng = np.random.default_rng(seed)
    one = []
    for d in c.details["dims"]:  # measured: one sample of D^(i) puts the noiseless margin perceptron in G^(i)
        w_i = rng.choice([-1.0, 1.0], size=d) / np.sqrt(d)
        X, y = packing_sample(w_i, 0.5, 1, rng)
        one.append(bool(in_packing_cell(MarginPerceptron(0.5, alpha=0.1).fit(X, y).coef_, w_i, 0.5)[0]))
    rows.append(dict(learner="margin perceptron (non-private)", regime="packing D^(i), gamma=0.5", param="d", x=c.details["dims"],
                     n=[1] * len(one), slope=0.0, ci=None, theory="0", status="flat" if all(one) else "FAILED", seconds=0.0))
    print(f"{'learner':<42} {'regime':<28} {'par':<6} {'fitted exp.':>11} {'95% CI':>18} {'theory':>7} {'status':>8} {'s':>6}")
    for r in rows:
        ci = "" if r["ci"] is None else f"[{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]"
        print(f"{r['learner']:<42} {r['regime']:<28} {r['param']:<6} {r['slope']:>11.3f} {ci:>18} {r['theory']:>7} "
              f"{r['status']:>8} {r['seconds']:>6.1f}")
        print(f"{'':<42} {r['param']}: {', '.join(f'{v:g}' for v in r['x'])}")
        print(f"{'':<42} n: {', '.join(f'{v:.4g}' for v in r['n'])}" + (f"  ({r['note']})" if r.get("note") else ""))
    return rows


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="default", choices=sorted(PROFILES))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    main(args.profile, args.seed)
