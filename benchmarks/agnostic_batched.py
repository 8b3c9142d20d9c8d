"""Benchmark: batched private releases of the agnostic-halfspaces learners vs a Python loop of single runs,
and the "privacy for free" table of Remark 2.

Run: ``python benchmarks/agnostic_batched.py [--quick]``. Prints two tables:

1. runs/second of Algorithm 2's coefficient release, Algorithm 1's selection step, and the end-to-end
   Algorithm 1 / Algorithm 4 releases (``alg1_release_batch``, ``alg4_release_batch`` of
   ``privbound.learners.agnostic_halfspaces``) against loops of the learners' own single-run calls
   (``fit`` with size 1), and the speedup;
2. Remark 2: the smallest n (doubling grid) at which the mean ||m~ - m_T|| of Algorithm 2's release is <= 0.1,
   for eps in {alpha, 2 alpha, 4 alpha} against eps = inf (d = 2, p = 2, alpha = 0.2, delta = 1e-5).

Two more parts, for benchmarks/README.md, 'Agnostic halfspaces: checks with teeth':

* ``--mutants [--profile P]``: every check of the paper run with each of its mutants
  (:func:`privbound.bounds.run_mutants`; at each mutant's own profile unless ``--profile`` is given): detected or
  not, observed and bound under the mutant;
* ``--instances [--runs R]``: Theorem 2.1 at the degree it prescribes (p = ceil(1/alpha^2) = 12, alpha = 0.3,
  d = 2, Remark 3's T, eps = 0.5): excess err - OPT over alpha for four noise models at n = 10,000 and 20,000,
  R runs each (default 6), the measurement behind the instance of ``theorem-2.1: accuracy-applicable-degree``.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from privbound.learners.agnostic_halfspaces.common import HalfspaceProblem, exp_mech_select, gaussian_clip_radius
from privbound.learners.agnostic_halfspaces.hermite import clip_features, hermite_features
from privbound.learners.agnostic_halfspaces.proper import alg2_sigma, coefficient_release
from privbound.learners.agnostic_halfspaces.regression import PrivatePolynomialRegression, alg1_release_batch
from privbound.learners.agnostic_halfspaces.semi_agnostic import SemiAgnosticHalfspace, alg4_release_batch


def _rate(fn, n):
    t = time.perf_counter()
    fn(n)
    return n / (time.perf_counter() - t)


def speedups(quick: bool) -> list[tuple[str, float, float]]:
    rng = np.random.default_rng(0)
    prob = HalfspaceProblem(2, (1.0, 0.5), t=0.2, rate=0.1)
    X, y = prob.sample(2000, rng)
    T = gaussian_clip_radius(6)
    F = clip_features(hermite_features(X[:1000], 2), T)
    sigma = alg2_sigma(T, 0.5, 1e-5, 2000)
    counts = rng.integers(20, 60, size=40)
    nb, ns = (2000, 200) if quick else (20000, 2000)
    rows = [
        ("alg2 coefficient release", lambda n: coefficient_release(F, y[:1000], sigma, rng, n),
         lambda n: [coefficient_release(F, y[:1000], sigma, rng) for _ in range(n)], nb, ns),
        ("alg1 selection (40 candidates)", lambda n: exp_mech_select(counts, 0.5, rng, n),
         lambda n: [exp_mech_select(counts, 0.5, rng) for _ in range(n)], nb, ns),
    ]
    Xs, ys = X[:300], y[:300]
    kw1 = dict(degree=2, epsilon=0.5, delta=1e-5, alpha=0.2, n_blocks=2, max_iter=50)
    rows.append(("alg1 end to end (n = 300)", lambda n: alg1_release_batch(Xs, ys, rng=rng, size=n, **kw1),
                 lambda n: [PrivatePolynomialRegression(random_state=rng, **kw1).fit(Xs, ys) for _ in range(n)],
                 nb // 10, ns // 10))
    X4, y4 = HalfspaceProblem(4, (1.0, 0.5, -0.5, 0.0), t=0.2, rate=0.1).sample(250, rng)
    rows.append(("alg4 end to end (n = 250)",
                 lambda n: alg4_release_batch(X4, y4, alpha=0.3, epsilon=0.9, delta=1e-3, n_validation=50,
                                              rng=rng, size=n),
                 lambda n: [SemiAgnosticHalfspace(alpha=0.3, epsilon=0.9, delta=1e-3, n_validation=50,
                                                  random_state=rng).fit(X4, y4) for _ in range(n)], nb, ns // 4))
    return [(name, _rate(b, n_b), _rate(s, n_s)) for name, b, s, n_b, n_s in rows]


def privacy_for_free(quick: bool) -> tuple[int, dict]:
    rng = np.random.default_rng(1)
    prob = HalfspaceProblem(2, (1.0, 0.5), t=0.2, rate=0.1)
    T = gaussian_clip_radius(6)
    Xb, yb = prob.sample(1_000_000, rng)
    mT = yb @ clip_features(hermite_features(Xb, 2), T) / Xb.shape[0]
    reps = 5 if quick else 20

    def n_needed(eps):
        for n in (250 * 2**k for k in range(12)):
            e = []
            for _ in range(reps):
                X, y = prob.sample(n // 2, rng)
                F = clip_features(hermite_features(X, 2), T)
                s = 1e-300 if eps is None else alg2_sigma(T, eps, 1e-5, n)
                e.append(np.linalg.norm(coefficient_release(F, y, s, rng) - mT))
            if np.mean(e) <= 0.1:
                return n
        return math.inf

    base = n_needed(None)
    return base, {eps: n_needed(eps) for eps in (0.2, 0.4, 0.8)}


def mutant_table(profile=None) -> list:
    """``privbound.bounds.run_mutants`` over the paper's claims (rows of MutantResult)."""
    from privbound import bounds

    ids = [c.id for c in bounds.claims("agnostic-halfspaces") if any(k.mutants for k in c.checks)]
    return bounds.run_mutants(ids, profile=profile)


def thm21_instances(runs: int = 6) -> list[tuple[str, int, float, float, float]]:
    """(noise model, n, OPT, mean excess/alpha, max excess/alpha) for Algorithm 1 at p = 12, alpha = 0.3, d = 2."""
    alpha, d = 0.3, 2
    p = math.ceil(1 / alpha**2)
    out = []
    for n in (10_000, 20_000):
        for kind in ("random, t = 0", "random, t ~ U[-1, 1], 20%", "slab |w.x| <= 0.15", "far region u.x >= 1"):
            ex = []
            for i in range(runs):
                rng = np.random.default_rng(i)
                if kind.startswith("random, t = 0"):
                    prob = HalfspaceProblem.random(d, rng, t=0.0, rate=0.1)
                elif kind.startswith("random"):
                    prob = HalfspaceProblem.random(d, rng, t=float(rng.uniform(-1, 1)), rate=0.2)
                elif kind.startswith("slab"):
                    prob = HalfspaceProblem.random(d, rng, t=0.0, noise="slab", width=0.15)
                else:
                    prob = HalfspaceProblem.random(d, rng, t=0.0, noise="far", radius=1.0)
                opt = prob.opt_exact if prob.opt_exact is not None else prob.opt_by_search(rng, n=100_000,
                                                                                            n_directions=400)
                X, y = prob.sample(n, rng)
                m = PrivatePolynomialRegression(degree=p, epsilon=0.5, delta=1e-5, alpha=alpha, beta=0.1,
                                                random_state=rng).fit(X, y)
                ex.append(prob.error(m.predict, rng, 100_000) - opt)
            out.append((kind, n, float(opt), float(np.mean(ex)) / alpha, float(np.max(ex)) / alpha))
    return out


def main(argv=None) -> None:
    argv = list(argv if argv is not None else sys.argv[1:])
    if "--mutants" in argv:
        profile = argv[argv.index("--profile") + 1] if "--profile" in argv else None
        print(f"{'claim':18s} {'check':32s} {'mutant':32s} {'profile':8s} {'detected':8s} {'observed':>10s} "
              f"{'bound':>10s} {'s':>6s}")
        for r in mutant_table(profile):
            print(f"{r.claim_id.split('/')[1]:18s} {r.check:32s} {r.mutant:32s} {r.profile:8s} {str(r.detected):8s} "
                  f"{r.observed:10.4g} {r.bound:10.4g} {r.wall_seconds:6.1f}")
        return
    if "--instances" in argv:
        runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 6
        print(f"{'noise model':28s} {'n':>7s} {'OPT':>6s} {'mean excess/alpha':>18s} {'max excess/alpha':>17s}")
        for kind, n, opt, mean, mx in thm21_instances(runs):
            print(f"{kind:28s} {n:7d} {opt:6.3f} {mean:18.2f} {mx:17.2f}")
        return
    quick = "--quick" in argv
    print(f"{'release':34s} {'batched runs/s':>15s} {'loop runs/s':>12s} {'speedup':>8s}")
    for name, b, s in speedups(quick):
        print(f"{name:34s} {b:15.0f} {s:12.0f} {b / s:8.1f}")
    base, table = privacy_for_free(quick)
    print("\nRemark 2 (privacy for free), Algorithm 2's release, d = 2, p = 2 (D_p = 6), alpha = 0.2, target 0.1")
    print(f"{'eps':>6s} {'n(eps)':>8s} {'n(eps)/n(inf)':>14s}")
    print(f"{'inf':>6s} {base:8d} {1.0:14.1f}")
    for eps, n in table.items():
        print(f"{eps:6.2f} {n:8d} {n / base:14.1f}")


if __name__ == "__main__":
    main()
