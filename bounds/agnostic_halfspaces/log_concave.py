"""Checks of App. D (log-concave marginals) of "Differentially private agnostic learning of halfspaces under
Gaussian marginals" (paper id ``agnostic-halfspaces``; the source text, ``papers/dp-agnostic-halfspaces.txt``,
has lost its title page, so authors, venue and arXiv id are not known here).

Theorem D.1 (accuracy of Algorithm 1 with the G_p^{-1/2} basis and Eq. (25)'s clipping radius) and
Proposition D.2 (its privacy, by Proposition C.1's argument).
"""

from __future__ import annotations

import numpy as np

from privbound.bounds import checks as C
from privbound.bounds.agnostic_halfspaces.common import combine, learner_runs, pld_epsilon, selection_max_log_ratio
from privbound.bounds.checks import CheckContext, CheckResult
from privbound.learners.agnostic_halfspaces.common import HalfspaceProblem, remark3_clip_radius
from privbound.learners.agnostic_halfspaces.hermite import (
    MonomialBasis,
    clip_features,
    clipping_radius,
    n_features,
    sample_marginal,
)
from privbound.learners.agnostic_halfspaces.regression import PrivatePolynomialRegression


def _logconcave_problem(marginal: str, d: int, rng: np.random.Generator):
    """A random problem with 10% random classification noise under a standardised product ``marginal``."""
    return HalfspaceProblem.random(d, rng, t=float(rng.uniform(-0.3, 0.3)), rate=0.1, marginal=marginal)


def _logconcave_T(basis, c_alpha: float, rng: np.random.Generator, n: int = 100_000) -> float:
    """Eq. (25)'s clipping radius from a Monte Carlo sample of ||psi_p(X)|| under the known marginal."""
    X = sample_marginal(basis.marginal, n, basis.d, rng)
    return clipping_radius(np.linalg.norm(basis.transform(X), axis=1), c_alpha)


def check_d1_accuracy(ctx: CheckContext) -> CheckResult:
    """Theorem D.1 (Theorem 2.1's accuracy for log-concave marginals): Algorithm 1 with psi_p = G_p^{-1/2} m_p,
    the ball of radius R_0 = 2 and T from Eq. (25) has Pr[err > OPT + alpha] <= beta.

    d = 3, p = 2 (D_p = 10), marginals laplace / logistic / uniform (standardised products, known moments),
    10% random classification noise (OPT = 0.1 exactly: the target is Bayes-optimal), alpha = 0.15, beta = 0.1,
    eps = 0.5, delta = 1e-5, c = 0.25, n = 20000. The theorem's p = ceil(exp(C/alpha)) is a knob here (it makes
    D_p explode); also checked: 1 - c alpha <= T <= sqrt(D_p/(c alpha)) (the regime of the formula).
    False-fail rate <= 0.001 (exact binomial).
    """
    d, p, alpha, beta, c = 3, 2, 0.15, 0.1, 0.25
    trials_each = ctx.trials(4, minimum=1)
    Ts, fails, excesses = {}, 0, []
    marginals = ("laplace",) if ctx.profile.scale < 0.5 else ("laplace", "logistic", "uniform")  # smoke: one
    for marginal in marginals:
        basis = MonomialBasis(d, p, marginal)
        T = _logconcave_T(basis, c * alpha, np.random.default_rng([ctx.seed, 1]))
        Ts[marginal] = T
        if not (1 - c * alpha <= T <= remark3_clip_radius(basis.n_features, c, alpha)):
            return C.inequality(T, remark3_clip_radius(basis.n_features, c, alpha), sense="<=", marginal=marginal,
                                note="T of Eq. (25) outside [1 - c alpha, sqrt(D_p/(c alpha))]")

        def one(rng, basis=basis, T=T, marginal=marginal):
            prob = _logconcave_problem(marginal, d, rng)
            X, y = prob.sample(20_000, rng)
            m = PrivatePolynomialRegression(epsilon=0.5, delta=1e-5, alpha=alpha, beta=beta, c=c, basis=basis,
                                            clip_radius=T, radius=2.0, random_state=rng).fit(X, y)
            return prob.error(m.predict, rng, 100_000) - prob.opt_exact

        ex = learner_runs(ctx, one, trials_each)
        excesses += list(ex)
        fails += int(np.sum(ex > alpha))
    n_tr = len(marginals) * trials_each
    return C.failure_rate(fails, n_tr, beta, D_p=n_features(d, p), d=d, p=p, T=Ts, n=20_000,
                          mean_excess=float(np.mean(excesses)), max_excess=float(np.max(excesses)))


def check_d2_privacy(ctx: CheckContext) -> CheckResult:
    """Proposition D.2 (privacy of the log-concave variant, by Prop. C.1's argument), three parts:

    (i) the premise of the sensitivity: every clipped feature vector has norm <= T (so the per-example loss
    |<v, psi_bar> - y| is T-Lipschitz and the mean subgradient moves by <= 2T/n_0), on heavy-tailed samples;
    (ii) the fitted learner's selection step is eps-DP exactly (max |log ratio| over neighbouring count vectors);
    (iii) dp_accounting's PLD accountant on the learner's dp_event() (K composed Gaussian steps) gives eps <= the
    claimed eps at the claimed delta. Laplace marginal, d = 2, p = 3 (D_p = 10).
    """
    rng = ctx.rng
    basis = MonomialBasis(2, 3, "laplace")
    eps, delta = 0.5, 1e-5
    prob = _logconcave_problem("laplace", 2, rng)
    X, y = prob.sample(6000, rng)
    m = PrivatePolynomialRegression(epsilon=eps, delta=delta, alpha=0.2, basis=basis, radius=2.0, max_iter=60,
                                    clip_radius=_logconcave_T(basis, 0.05, rng), random_state=rng).fit(X, y)
    Xh = sample_marginal("laplace", ctx.trials(20_000, minimum=2000), 2, rng) * 4.0  # far outside the bulk
    norms = np.linalg.norm(clip_features(basis.transform(Xh), m.clip_radius_), axis=1)
    c = m.validation_errors_.ravel().astype(float)
    pats = [np.eye(c.size)[j] * s for j in range(c.size) for s in (1, -1)]
    pats += list(rng.integers(-1, 2, size=(ctx.trials(1000), c.size)).astype(float))
    worst = selection_max_log_ratio(c, eps, pats)
    eps_pld = pld_epsilon(m.dp_event(), delta)
    return combine([C.exact(float(norms.max()), m.clip_radius_, sense="<=", rtol=1e-9, what="max clipped norm vs T"),
                    C.exact(worst, eps, sense="<=", rtol=1e-12, what="selection max |log ratio|", candidates=c.size),
                    C.exact(eps_pld, eps, sense="<=", rtol=2e-3, what="PLD epsilon of the per-block ERM",
                            iterations=m.erm_iterations_)],
                   note="three premises of Prop. C.1's argument for the G_p^{-1/2} basis", T=m.clip_radius_,
                   D_p=basis.n_features)
