"""Checks of Appendix B (auxiliary results) of "Differentially private agnostic learning of halfspaces under
Gaussian marginals" (paper id ``agnostic-halfspaces``; the source text, ``papers/dp-agnostic-halfspaces.txt``,
has lost its title page, so authors, venue and arXiv id are not known here).

Lemma B.1 (vector Bernstein), Lemma B.3 (post-processing), Lemma B.5 (selection by the exponential
mechanism: failure rate and privacy), Fact B.6 (random thresholding), Lemma B.7 (uniform deviation),
Lemma B.8 (Hermite basis), Lemma B.9 (Mehler's formula: series and quadrature), Fact B.11 (covers),
Fact B.12 (Gaussian halfspace discretisation), Fact B.13 (log-concave density bound) and the explicit
steps of Lemma B.15's proof. Monte Carlo runs through the audit chunk engine, seeded by the check's seed.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, special, stats

from privbound.bounds import checks as C
from privbound.bounds.agnostic_halfspaces.common import (
    bonferroni,
    combine,
    gauss_hermite,
    hermite_features_independent,
    mc_parts,
    mc_sum,
    multi_indices_independent,
)
from privbound.bounds.agnostic_halfspaces.formulas import (
    fact_b_6_bound,
    fact_b_11_size,
    fact_b_12_direction_bound,
    fact_b_12_far_threshold,
    fact_b_12_threshold_bound,
    fact_b_13_density,
    lemma_b_1_bound,
    lemma_b_5_bound,
    lemma_b_7_bound,
    lemma_b_9_kernel,
    lemma_b_15_modulus_bound,
    lemma_b_15_tail,
    mehler_kernel,
)
from privbound.bounds.checks import CheckContext, CheckResult
from privbound.learners.agnostic_halfspaces.common import exp_mech_log_probabilities, exp_mech_select_rows
from privbound.learners.agnostic_halfspaces.hermite import hermite_1d


def check_b1_bernstein(ctx: CheckContext) -> CheckResult:
    """Lemma B.1 on two families: U_i = B * Rademacher * e_1 (d = 1) and U_i = B * uniform unit vector (d = 5).

    Both are independent, mean zero, ||U_i|| = B, so v = n B^2. Stated failure probability beta = 0.1.
    The check fails (before Holm) with probability <= 0.001 if the lemma holds.
    """
    n, B, beta = 50, 1.0, 0.1
    bound = lemma_b_1_bound(n * B**2, B, beta, n)
    trials = ctx.trials(20_000)

    def fn(size, rng):
        s1 = np.abs(2.0 * rng.binomial(n, 0.5, size=size) - n) * B / n
        g = rng.standard_normal((size, n, 5))
        u = g / np.linalg.norm(g, axis=2, keepdims=True)
        s5 = np.linalg.norm(u.sum(axis=1), axis=1) * B / n
        return [np.sum(s1 > bound), np.sum(s5 > bound), np.max(s1), np.max(s5)]

    parts = np.array(mc_parts(ctx, fn, trials))
    f1, f5 = int(parts[:, 0].sum()), int(parts[:, 1].sum())
    outs = [C.failure_rate(f1, trials, beta, family="rademacher-1d", n=n, B=B, bound=bound,
                           looseness=bound / parts[:, 2].max()),
            C.failure_rate(f5, trials, beta, family="uniform-sphere-5d", n=n, B=B, bound=bound,
                           looseness=bound / parts[:, 3].max())]
    return bonferroni(outs)


def hockey_stick(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    """delta_eps(P || Q) = sum max(P - e^eps Q, 0) of two finite distributions."""
    return float(np.sum(np.maximum(p - math.exp(eps) * q, 0.0)))


def check_b3_postprocessing(ctx: CheckContext) -> CheckResult:
    """Lemma B.3 exactly on finite mechanisms: for random output-distribution pairs (P, Q) and random
    Markov kernels K, delta_eps(PK || QK) <= delta_eps(P || Q) at every eps (both directions)."""
    rng = ctx.rng
    worst = -np.inf
    for _ in range(ctx.trials(300)):
        k, k2 = rng.integers(2, 8), rng.integers(2, 8)
        P, Q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        Kern = rng.dirichlet(np.ones(k2) * rng.uniform(0.1, 3), size=k)
        for eps in (0.0, 0.1, 0.5, 1.0, 2.0):
            for a, b in ((P, Q), (Q, P)):
                worst = max(worst, hockey_stick(a @ Kern, b @ Kern, eps) - hockey_stick(a, b, eps))
    return C.exact(worst, 0.0, sense="<=", atol=1e-12, note="observed = max(delta after - delta before)")


def check_b5_selection(ctx: CheckContext) -> CheckResult:
    """Lemma B.5: err(h_j^) <= min_j err(h_j) + bound w.p. >= 1 - eta, on the instance closest to the bound.

    Worst case for the bound: one good candidate (error 0.2) and K - 1 = 19 bad ones whose error exceeds it by
    just more than the bound (+0.002), each erring on an independent region (independent validation counts
    Binomial(m, e_j)); the check fails when the failure rate (a bad one selected) exceeds eta = 0.1. The
    exponential mechanism's part of the bound is tight here when eps sqrt(m) is small: P[bad] ~ (K-1)/(2K) eta
    exp(-eps m H/2), H the Hoeffding part; at K = 20, m = 1e5, eps = 2e-4 (eps m = 20) the failure rate is
    ~0.42 eta (``details['rate_over_eta']``). Selection by the learners' Gumbel-max
    (:func:`~privbound.learners.agnostic_halfspaces.common.exp_mech_select_rows`). False-fail rate <= 0.001.
    (Nested candidates at m = 100, eps = 0.5 are no test: their largest excess, 0.6, stays below the bound
    0.606, so no selection can fail it.)
    """
    K, m, eps, eta, e0 = 20, 100_000, 2e-4, 0.1, 0.2
    bound = lemma_b_5_bound(K, eta, eps, m)
    e = np.concatenate([[e0], np.full(K - 1, min(e0 + bound + 0.002, 1.0))])
    trials = ctx.trials(20_000)

    def fn(size, rng):
        counts = rng.binomial(m, e, size=(size, K))
        j = exp_mech_select_rows(counts, eps, rng)
        excess = e[j] - e.min()
        return [np.sum(excess > bound), np.max(excess)]

    parts = np.array(mc_parts(ctx, fn, trials))
    fails = int(parts[:, 0].sum())
    return C.failure_rate(fails, trials, eta, bound=bound, max_excess=float(parts[:, 1].max()), K=K, m=m, epsilon=eps,
                          bad_excess=float(e[1] - e0), rate_over_eta=fails / trials / eta)


def check_b5_privacy(ctx: CheckContext) -> CheckResult:
    """Lemma B.5's exponential mechanism is eps-DP: exact max |log P(j|S) - log P(j|S')| over random neighbours.

    Neighbouring validation sets change each score m * err^ by at most 1 (any pattern of -1/0/+1). The law
    is the learners' (:func:`~privbound.learners.agnostic_halfspaces.common.exp_mech_log_probabilities`,
    P[j] ~ exp(-eps err_j / 2)), evaluated per neighbouring pair on the first ctx.trials(500) pairs (one call per
    score vector) and on all pairs by the same law vectorised.
    """
    rng = ctx.rng
    eps, K, m = 0.7, 12, 50
    n = ctx.trials(5_000)
    s = rng.integers(0, m + 1, (n, K)).astype(float)
    s2 = np.clip(s + rng.integers(-1, 2, (n, K)), 0, m)
    lp = -eps * s / 2 - special.logsumexp(-eps * s / 2, axis=1, keepdims=True)
    lq = -eps * s2 / 2 - special.logsumexp(-eps * s2 / 2, axis=1, keepdims=True)
    learner = max(float(np.max(np.abs(exp_mech_log_probabilities(a, eps) - exp_mech_log_probabilities(b, eps))))
                  for a, b in zip(s[: ctx.trials(500)], s2[: ctx.trials(500)]))
    worst = max(float(np.abs(lp - lq).max()), learner)
    return C.inequality(worst, eps, sense="<=", instances=n, K=K)


def check_b6_threshold(ctx: CheckContext) -> CheckResult:
    """Fact B.6 by quadrature: P_tau[sign(z - tau) != y] = (1/2) int_{-1}^{1} 1{sign(z-tau) != y} dtau <= |z-y|/2.

    sign(0) = +1 (the learners' convention). Grid z in [-3, 3], y in {-1, +1}.
    """
    worst = -np.inf
    for z in np.linspace(-3, 3, 121):
        for y in (-1.0, 1.0):
            val, _ = integrate.quad(lambda t: 0.5 * float((1.0 if z - t >= 0 else -1.0) != y), -1, 1,
                                    points=[min(max(z, -1), 1)], epsabs=1e-13)
            worst = max(worst, val - fact_b_6_bound(z, y))
    return C.exact(worst, 0.0, sense="<=", atol=1e-10, note="observed = max(probability - |z - y|/2)")


def check_b7_rademacher(ctx: CheckContext) -> CheckResult:
    """Lemma B.7 sanity (a lower bound on the supremum, so only a violation is informative).

    phi(X) ~ N(0, I_D) (E||phi||^2 = D), Y = +-1 independent, so L_P(v) = E|N(-1, ||v||^2)| in closed
    form. The supremum over ||v|| <= R is lower-bounded by the best of radial candidates r * u with
    u = sum_i Y_i phi_i / ||.||; the mean of that lower bound minus 3 standard errors must stay <= 2R sqrt(D/n).
    """
    D, n, R = 10, 40, 1.0
    bound = lemma_b_7_bound(R, D, n)
    r = np.linspace(0, R, 21)

    def LP(s):  # E|s Z - 1| for Z ~ N(0, 1); equals 1 at s = 0
        s = np.maximum(s, 1e-12)
        return s * math.sqrt(2 / math.pi) * np.exp(-1 / (2 * s**2)) + (1 - 2 * stats.norm.cdf(-1 / s))

    trials = ctx.trials(2_000)

    def fn(size, rng):
        Phi = rng.standard_normal((size, n, D))
        Y = rng.choice([-1.0, 1.0], (size, n))
        u = np.einsum("tn,tnd->td", Y, Phi)
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        proj = np.einsum("tnd,td->tn", Phi, u)
        emp = np.abs(r[None, :, None] * proj[:, None, :] - Y[:, None, :]).mean(axis=2)
        gaps = (LP(r)[None, :] - emp).max(axis=1)
        return [gaps.sum(), (gaps**2).sum()]

    s, s2 = mc_sum(ctx, fn, trials, chunk_size=500)
    mean = s / trials
    se = math.sqrt(max(s2 / trials - mean**2, 0) / trials)
    return C.inequality(mean - 3 * se, bound, sense="<=", lower_bound_mean=mean, se=se,
                        looseness=bound / max(mean, 1e-12), D=D, n=n, R=R)


def check_b8_orthonormal(ctx: CheckContext) -> CheckResult:
    """Lemma B.8: {h_kappa : |kappa| <= p} is orthonormal in L^2(N(0, I_d)) and has C(d+p, p) elements.

    Gauss--Hermite quadrature with 2p+1 nodes per axis is exact for the degree-2p products.
    """
    worst, count_ok = 0.0, True
    for d, p in ((1, 6), (2, 4), (3, 3)):
        nodes, w = gauss_hermite(d, 2 * p + 1)
        F = hermite_features_independent(nodes, p)
        G = (F * w[:, None]).T @ F
        worst = max(worst, float(np.abs(G - np.eye(F.shape[1])).max()))
        count_ok &= F.shape[1] == math.comb(d + p, p)
    if not count_ok:
        return C.exact(1.0, 0.0, sense="<=", atol=1e-10, count_matches_binomial=False)
    return C.exact(worst, 0.0, sense="<=", atol=1e-10, count_matches_binomial=True)


def check_b9_mehler_series(ctx: CheckContext) -> CheckResult:
    """Lemma B.9: the series sum_kappa rho^|kappa| h_kappa(x) h_kappa(y) (|kappa| <= 80) vs the closed form.

    d = 1 and d = 2 (multi-index enumeration), random x, y with |x_j| <= 2, rho in {-0.6, 0.3, 0.7}.
    """
    rng = ctx.rng
    worst = 0.0
    for d, N in ((1, 120), (2, 80)):
        idx = np.array(multi_indices_independent(d, N))
        deg = idx.sum(axis=1)
        for _ in range(5):
            x, y = rng.uniform(-2, 2, d), rng.uniform(-2, 2, d)
            Hx, Hy = hermite_1d(x, N), hermite_1d(y, N)
            hx = np.prod(Hx[np.arange(d), idx], axis=1)
            hy = np.prod(Hy[np.arange(d), idx], axis=1)
            for rho in (-0.6, 0.3, 0.7):
                series = float(np.sum(rho**deg * hx * hy))
                closed = mehler_kernel(rho, x, y)
                worst = max(worst, abs(series - closed) / abs(closed))
    return C.exact(worst, 0.0, sense="<=", atol=1e-9, note="observed = max relative error")


def check_b9_mehler_quadrature(ctx: CheckContext) -> CheckResult:
    """Lemma B.9 by quadrature: int K_rho(x, y) h_m(y) phi(y) dy = rho^m h_m(x) (the kernel's eigen-expansion).

    Adaptive quadrature (scipy.integrate.quad) for m <= 4 at two x, cross-checked by a 150-node
    Gauss--Hermite rule for m <= 8 (the integrand / phi is smooth and Gaussian-damped).
    """
    worst = 0.0
    y_gh, w_gh = np.polynomial.hermite_e.hermegauss(150)
    w_gh = w_gh / math.sqrt(2 * math.pi)
    H_gh = hermite_1d(y_gh, 8)
    for rho in (-0.5, 0.4, 0.8):
        r2 = 1 - rho**2
        for x in (-1.3, 1.9):
            hx = hermite_1d(x, 8)
            # Lemma B.9's kernel at the nodes, vectorised (numpy's exp, not lemma_b_9_kernel's math.exp)
            kern = r2**-0.5 * np.exp((2 * rho * x * y_gh - rho**2 * (x * x + y_gh**2)) / (2 * r2))
            for m in range(9):
                worst = max(worst, abs(float(np.sum(w_gh * kern * H_gh[:, m])) - rho**m * hx[m]))
            for m in range(5):
                coef = np.zeros(m + 1)
                coef[m] = 1 / math.sqrt(math.factorial(m))
                val, _ = integrate.quad(
                    lambda y: lemma_b_9_kernel(rho, x, y)
                    * np.polynomial.hermite_e.hermeval(y, coef) * math.exp(-y * y / 2) / math.sqrt(2 * math.pi),
                    -np.inf, np.inf, epsabs=1e-12, epsrel=1e-11)
                worst = max(worst, abs(val - rho**m * hx[m]))
    return C.exact(worst, 0.0, sense="<=", atol=1e-8, note="observed = max |integral - rho^m h_m(x)|")


def check_b11_cover(ctx: CheckContext) -> CheckResult:
    """Fact B.11 with the volumetric constant C = 3: a greedy gamma-net of 4000 points of the unit ball of R^k
    is gamma-separated (so its size is <= (1 + 2/gamma)^k <= (3/gamma)^k) and covers every point within gamma."""
    rng = ctx.rng
    worst = 0.0
    rows = []
    for k, gamma in ((1, 0.1), (2, 0.3), (3, 0.5)):
        g = rng.standard_normal((4000, k))
        pts = g / np.linalg.norm(g, axis=1, keepdims=True) * rng.uniform(0, 1, (4000, 1)) ** (1 / k)
        centres = []
        alive = np.ones(len(pts), bool)
        while alive.any():
            c = pts[np.flatnonzero(alive)[0]]
            centres.append(c)
            alive &= np.linalg.norm(pts - c, axis=1) > gamma
        cen = np.array(centres)
        cover = float(np.min(np.linalg.norm(pts[:, None, :] - cen[None], axis=2), axis=1).max())
        bound = fact_b_11_size(gamma, k, C=3.0)
        r = len(cen) / bound
        rows.append(dict(k=k, gamma=gamma, size=len(cen), bound=bound, cover_radius=cover))
        worst = max(worst, r, cover / gamma)
    return C.inequality(worst, 1.0, sense="<=", covers=rows, note="observed = max(size/bound, radius/gamma)")


def check_b12_discretisation(ctx: CheckContext) -> CheckResult:
    """Fact B.12 with explicit constants, exactly (bivariate normal cdf / Phi):

    (i)  P[sign(u.X+t) != sign(v.X+t)] <= ||u - v|| / 2 (t = 0: theta/pi <= sin(theta/2));
    (ii) P[sign(u.X+t1) != sign(u.X+t2)] = |Phi(t1) - Phi(t2)| <= |t1 - t2| / sqrt(2 pi);
    (iii) P[sign(v.X+t) != sign(t)] = Phi(-|t|) <= gamma/2 when |t| >= sqrt(2 ln(1/gamma)) (C = sqrt 2).
    """
    r1 = 0.0
    for th in np.linspace(0.05, math.pi - 0.05, 12):
        c = math.cos(th)
        mvn = stats.multivariate_normal(mean=[0, 0], cov=[[1, c], [c, 1]])
        for t in np.linspace(-3, 3, 9):
            P = 2 * stats.norm.cdf(t) - 2 * mvn.cdf([t, t])
            r1 = max(r1, P / fact_b_12_direction_bound(2 * math.sin(th / 2)))  # ||u - v|| = 2 sin(theta/2)
    t = np.linspace(-5, 5, 201)
    T1, T2 = np.meshgrid(t, t)
    diff = np.abs(T1 - T2)
    P2 = np.abs(stats.norm.cdf(T1) - stats.norm.cdf(T2))
    r2 = float(np.max(np.where(diff > 0, P2 / fact_b_12_threshold_bound(np.where(diff > 0, diff, 1)), 0)))
    g = np.logspace(-12, -0.1, 50)
    r3 = float(np.max(stats.norm.cdf(-fact_b_12_far_threshold(g)) / (g / 2)))
    worst = max(r1, r2, r3)
    return C.exact(worst, 1.0, sense="<=", rtol=1e-9, ratio_direction=r1, ratio_threshold=r2, ratio_far=r3,
                   note="observed = max ratio of probability to explicit bound over the three parts")


ISOTROPIC_LOG_CONCAVE = {
    "gaussian": stats.norm(),
    "laplace": stats.laplace(scale=1 / math.sqrt(2)),
    "logistic": stats.logistic(scale=math.sqrt(3) / math.pi),
    "uniform": stats.uniform(loc=-math.sqrt(3), scale=2 * math.sqrt(3)),
    "exponential": stats.expon(loc=-1.0),
}


def check_b13_density(ctx: CheckContext) -> CheckResult:
    """Fact B.13 on isotropic (mean 0, variance 1) log-concave densities: max_x g(x) e^{|x|/16} / e <= 1."""
    x = np.linspace(-60, 60, 240_001)
    ratios = {}
    for name, dist in ISOTROPIC_LOG_CONCAVE.items():
        assert abs(dist.mean()) < 1e-12 and abs(dist.var() - 1) < 1e-12
        ratios[name] = float(np.max(dist.pdf(x) / fact_b_13_density(x)))
    return C.inequality(max(ratios.values()), 1.0, sense="<=", ratios=ratios,
                        looseness=1 / max(ratios.values()))


def check_b15_pieces(ctx: CheckContext) -> CheckResult:
    """Lemma B.15's proof, explicit steps, by quadrature with W(x) = e^{-|x|}, H_theta = sign(x - theta) W:

    ||H_theta||_1 = 2;  ||H_theta(.+h) - H_theta||_1 <= 4|h|;  int_{|z|>=sqrt p} |H_theta| = 2 e^{-sqrt p}.
    """
    def H(x, th):
        return (1.0 if x - th >= 0 else -1.0) * math.exp(-abs(x))

    errs, ratio = [], 0.0
    for th in (-2.0, -0.3, 0.0, 0.7, 3.0):
        n1 = sum(integrate.quad(lambda x: abs(H(x, th)), a, b, points=pts)[0]
                 for a, b, pts in ((-np.inf, 0, None), (0, np.inf, None)))
        errs.append(abs(n1 - 2))
        for h in (1e-3, 0.05, 0.3, -0.2, 1.0):
            brk = sorted({0.0, -h, th, th - h})
            edges = [-60.0] + brk + [60.0]
            val = sum(integrate.quad(lambda x: abs(H(x + h, th) - H(x, th)), a, b, epsabs=1e-13)[0]
                      for a, b in zip(edges[:-1], edges[1:]))
            ratio = max(ratio, val / lemma_b_15_modulus_bound(h))
        for p in (2, 9, 30):
            r = math.sqrt(p)
            tail = integrate.quad(lambda x: math.exp(-x), r, np.inf)[0] * 2
            errs.append(abs(tail - lemma_b_15_tail(p)))
    outs = [C.exact(max(errs), 0.0, sense="<=", atol=1e-9, part="||H||_1 = 2 and the tail identity"),
            C.exact(ratio, 1.0, sense="<=", rtol=1e-8, part="modulus of continuity <= 4|h|")]
    return combine(outs)
