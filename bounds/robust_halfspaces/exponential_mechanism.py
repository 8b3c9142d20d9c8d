"""Checks of the pure-DP robust learner (Sec. 3.1 and App. E) of "Robust and Private Learning of Halfspaces":
Lemma 16 (uniform convergence of the margin error), Lemma 17 (McSherry & Talwar's tail bound for the
exponential mechanism) and Theorem 5 (the exponential mechanism over the sphere learns with
O_alpha(max{d, 1/gamma^2}/epsilon) samples): the exact tail facts of its proof and the learner at scaled constants.

Ghazi, Kumar, Manurangsi & Nguyen, AISTATS 2021, arXiv:2011.14580 (paper id ``robust-halfspaces``).

Erratum (proof of Theorem 5): Eq. (7) should read -0.01 Lambda gamma and < -1e4 sqrt(log(1/alpha)), and the final
step gives a failure probability <= 0.01, not <= 0.99.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

from privbound.audit.engine import map_chunks
from privbound.bounds import checks as C
from privbound.bounds.robust_halfspaces.formulas import lemma16_deviation, lemma17_bound, theorem5_lambda, theorem5_sample_size
from privbound.learners.robust_halfspaces.instances import margin_realizable
from privbound.learners.robust_halfspaces.robustness import margin_error
from privbound.learners.robust_halfspaces.sphere import SphereExponentialMechanism

__all__ = [
    "THEOREM5_SCALED",
    "check_lemma16",
    "em_arcs_independent",
    "check_lemma17",
    "check_theorem5_tails",
    "check_theorem5_scaled",
]


# --------------------------------------------------------------------------- Lemma 16


def _lemma16_chunk(n: int, M_le_g: np.ndarray):
    N = M_le_g.shape[0]

    def fn(size, ss):
        rng = np.random.default_rng(ss)
        counts = rng.multinomial(n, np.full(N, 1.0 / N), size=size)  # sample X ~ D^n (D uniform on N points)
        return counts @ M_le_g / n  # err^X_{gamma_hat}(w) for every w, per trial

    return fn


def check_lemma16(ctx: C.CheckContext) -> C.CheckResult:
    """Lemma 16 by simulation: Pr[exists w: err^D_{0.95 g}(w) > err^X_g(w) + 400 sqrt(ln(4/xi)/(n g^2))] <= xi.

    D is uniform on N = 400 fixed points of the unit ball of R^5 with labels of a noisy halfspace,
    so err^D is exact; X ~ D^n is drawn through its multinomial counts, which makes n = 4e7 cheap.
    The supremum over the ball is approximated over 257 hypotheses (w* and 256 random vectors of
    norm in [0.3, 1]), so the observed deviation is a lower bound on the true one. gamma_hat = 0.5,
    xi_hat = 0.1; at n = 4e7 the bound is 0.243 (at n = 1000 it is 48, vacuous).
    """
    rng = ctx.rng
    d, N, g, xi = 5, 400, 0.5, 0.1
    X = rng.normal(size=(N, d))
    X *= (rng.uniform(size=N) ** (1 / d) / np.linalg.norm(X, axis=1))[:, None]
    w_star = np.eye(d)[0]
    y = np.sign(X @ w_star + 1e-12)
    y[rng.uniform(size=N) < 0.1] *= -1
    W = rng.normal(size=(256, d))
    W *= (rng.uniform(0.3, 1.0, size=256) / np.linalg.norm(W, axis=1))[:, None]
    W = np.vstack([w_star, W])
    M = y[:, None] * (X @ W.T)
    errD = np.mean(M <= 0.95 * g, axis=0)
    n = 40_000_000
    bound = lemma16_deviation(n, g, xi)
    trials = ctx.trials(500, minimum=50)
    parts = map_chunks(_lemma16_chunk(n, (M <= g).astype(float)), trials, seed=ctx.seed, chunk_size=250, n_jobs=ctx.n_jobs)
    errX = np.vstack(parts)
    dev = np.max(errD[None, :] - errX, axis=1)
    failures = int(np.sum(dev > bound))
    out = C.failure_rate(failures, trials, xi, n=n, gamma_hat=g, xi_hat=xi, bound=bound,
                         max_observed_deviation=float(dev.max()),
                         looseness=bound / max(float(dev.max()), 1.0 / math.sqrt(n)),
                         bound_at_n_1000=lemma16_deviation(1000, g, xi))
    return out


# --------------------------------------------------------------------------- Lemma 17


def em_arcs_independent(X: np.ndarray, y: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray]:
    """The arcs of the unit circle on which q(X, w) = -#{i: y_i <w, x_i> <= c} is constant: (score, measure) per arc.

    Derived point by point, independently of the sampler's
    :func:`privbound.learners.robust_halfspaces.sphere.circle_arcs` (a test ties the two); the measure is the
    arc length over 2 pi.
    """
    r = np.linalg.norm(X, axis=1)
    phi = np.arctan2(X[:, 1], X[:, 0])
    cuts = [0.0, 2 * np.pi]
    for ri, pi_, yi in zip(r, phi, y):
        if ri > 0 and abs(c / ri) <= 1:
            a = math.acos(c / (yi * ri)) if abs(c / (yi * ri)) <= 1 else None
            if a is not None:
                for th in (pi_ + a, pi_ - a):
                    cuts.append(th % (2 * np.pi))
    cuts = np.unique(cuts)
    mids = (cuts[:-1] + cuts[1:]) / 2
    lengths = np.diff(cuts)
    Wm = np.stack([np.cos(mids), np.sin(mids)], -1)
    q = -np.sum(y[:, None] * (X @ Wm.T) <= c, axis=0)
    return q.astype(float), lengths / (2 * np.pi)


def check_lemma17(ctx: C.CheckContext) -> C.CheckResult:
    """Lemma 17 (McSherry-Talwar) exactly in d = 2: Pr[w_hat not in S_{2t}] <= exp(-eps t / 2) / mu(S_t).

    The exponential mechanism of Theorem 5 (density prop. to exp(eps q / 2) w.r.t. the uniform measure
    on the circle, q = -n err_{0.95 gamma}) has a piecewise-constant score; the arcs between the
    2n breakpoints are computed exactly, so both sides are exact. Random margin-separable data sets,
    eps in {0.1, 1, 5}, every t in {0, 0.5, ..., n}. Observed: max of lhs / rhs (<= 1).
    """
    rng = ctx.rng
    worst, tight_ratio = 0.0, []
    for _ in range(ctx.trials(30, minimum=5)):
        n, gamma = int(rng.integers(5, 60)), float(rng.uniform(0.05, 0.5))
        ws = rng.normal(size=2)
        ws /= np.linalg.norm(ws)
        X = rng.normal(size=(n, 2))
        X *= (rng.uniform(size=n) ** 0.5 / np.linalg.norm(X, axis=1))[:, None]
        y = np.where(X @ ws >= 0, 1.0, -1.0)
        y[rng.uniform(size=n) < 0.2] *= -1
        q, mu = em_arcs_independent(X, y, 0.95 * gamma)
        for eps in (0.1, 1.0, 5.0):
            logmass = np.log(mu) + eps * q / 2
            logZ = special.logsumexp(logmass)
            for t in np.arange(0, n + 0.5, 0.5):
                outside = q < -2 * t
                lhs = float(np.exp(special.logsumexp(logmass[outside]) - logZ)) if outside.any() else 0.0
                mu_t = float(mu[q >= -t].sum())
                rhs = lemma17_bound(eps, t, mu_t) if mu_t > 0 else math.inf
                worst = max(worst, lhs / rhs)
                if lhs > 0:
                    tight_ratio.append(lhs / rhs)
    return C.exact(worst, 1.0, sense="<=", rtol=1e-9, max_lhs_over_rhs=worst,
                   median_lhs_over_rhs=float(np.median(tight_ratio)) if tight_ratio else None)


# --------------------------------------------------------------------------- Theorem 5


def check_theorem5_tails(ctx: C.CheckContext) -> C.CheckResult:
    """Proof steps of Theorem 5 (exact tail computations with scipy), not the learner's accuracy.

    Over a grid of alpha, d, gamma with Lambda = 1e6 sqrt(ln(1/alpha)) max(sqrt d, 1/gamma):
    (7, corrected) Pr[N(0,1) < -1e4 sqrt(ln(1/alpha))] <= 0.1 alpha;
    (8) Pr[chi_{d-1} > 1e4 sqrt(d ln(1/alpha))] <= 0.1 alpha;
    (10) Pr[N(0,1) >= Lambda] >= 2^{-10 Lambda^2};
    final step (corrected): exp(-0.125 eps alpha n) 2^{20 Lambda^2} <= 0.01 with the theorem's n.
    All in log space. Observed: max over the grid of log(lhs) - log(rhs) (<= 0).
    """
    worst = -math.inf
    for alpha in (1e-6, 1e-3, 0.1, 0.5, 0.9):
        la = math.log(1 / alpha)
        t7 = float(special.log_ndtr(-1e4 * math.sqrt(la))) - math.log(0.1 * alpha)
        worst = max(worst, t7)
        for d in (2, 10, 1000, 10**6):
            t8 = float(stats.chi2.logsf(1e8 * d * la, d - 1)) - math.log(0.1 * alpha)
            worst = max(worst, t8)
            for gamma in (1e-3, 0.1, 1.0):
                Lam = theorem5_lambda(d, gamma, alpha)
                t10 = -10 * Lam**2 * math.log(2) - float(special.log_ndtr(-Lam))
                worst = max(worst, t10)
                for eps in (0.01, 1.0):
                    n = theorem5_sample_size(d, gamma, alpha, eps)
                    tf = -0.125 * eps * alpha * n + 20 * Lam**2 * math.log(2) - math.log(0.01)
                    worst = max(worst, tf)
    return C.exact(worst, 0.0, sense="<=", atol=0.0, rtol=0.0, quantity="max log-ratio lhs/rhs over the grid")


THEOREM5_SCALED = dict(gamma=0.3, alpha=0.2, epsilon=1.0, c=4.0)


def margin_realizable_2d(n, g, rng):
    """n gamma-margin-realizable points in the unit disc with a random (unnormalised) realiser direction."""
    w = rng.standard_normal(2)
    return margin_realizable(n, 2, g, rng, w_star=w)


def check_theorem5_scaled(ctx: C.CheckContext) -> C.CheckResult:
    """Theorem 5 at scaled constants in d = 2 (exact angular sampler): with n = ceil(c max{d, 1/gamma^2} ln(1/alpha)/(alpha eps)),
    c = 4, the sphere exponential mechanism's output has err^X_{0.95 gamma} <= 0.5 alpha with probability >= 0.99
    (the proof's final step, as corrected: <= 0.01). Failures over independent data sets and outputs vs 0.01."""
    g, a, eps, c = (THEOREM5_SCALED[k] for k in ("gamma", "alpha", "epsilon", "c"))
    n = math.ceil(c * max(2, 1 / g**2) * math.log(1 / a) / (a * eps))
    runs = ctx.trials(2000, minimum=200)
    em = SphereExponentialMechanism(g, eps)

    def fn(size, ss):
        rng = np.random.default_rng(ss)
        out = []
        for _ in range(size // 10 + (size % 10 > 0)):
            X, y, _ = margin_realizable_2d(n, g, rng)
            W = em.sample((X, y), rng, 10)
            out.append(margin_error(W, X, y, 0.95 * g))
        return np.concatenate(out)[:size]

    err = np.concatenate(map_chunks(fn, runs, seed=ctx.seed, chunk_size=200, n_jobs=ctx.n_jobs))
    fails = int(np.sum(err > 0.5 * a))
    return C.failure_rate(fails, runs, 0.01, confidence=ctx.profile.confidence, n=n, mean_error=float(err.mean()),
                          scaled_constant_c=c, paper_n=None)
