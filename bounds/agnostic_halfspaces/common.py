"""Tools the checks of "Differentially private agnostic learning of halfspaces under Gaussian marginals" share.

Paper id ``agnostic-halfspaces`` (the source text, ``papers/dp-agnostic-halfspaces.txt``, has lost its
title page, so authors, venue and arXiv id are not known here).

* seeded Monte Carlo through :func:`privbound.audit.engine.map_chunks`: :func:`mc_sum` (counts) and
  :func:`learner_runs` (one learner run per trial);
* combining sub-results: :func:`combine` (worst status wins) and :func:`bonferroni`;
* exact tools: :func:`gauss_hermite` quadrature, the privacy curve of a Gaussian mechanism over a grid
  (:func:`gm_calibration`) cross-checked by dp_accounting (:func:`pld_delta`, :func:`pld_epsilon`), and
  :func:`selection_max_log_ratio` for the exponential mechanism;
* Hermite features re-derived independently of the learner (:func:`multi_indices_independent`,
  :func:`hermite_features_independent`, :func:`hermite_sq_norm_independent`), so that the checks of
  Lemmas B.8, B.9, C.2 and 3.3 do not test the learner's code against itself; a test ties them to
  :mod:`privbound.learners.agnostic_halfspaces.hermite`.
"""

from __future__ import annotations

import itertools
import math
from typing import Callable

import numpy as np

from privbound.learners.accounting import delta_of, epsilon_of
from privbound.audit.engine import map_chunks
from privbound.bounds import checks as C
from privbound.bounds.checks import CheckContext, CheckResult
from privbound.learners.agnostic_halfspaces.common import exp_mech_log_probabilities
from privbound.learners.agnostic_halfspaces.hermite import hermite_1d
from privbound.learners.mechanisms import gaussian_delta
from privbound.learners.neighbouring import NeighbouringRelation

__all__ = [
    "CHUNK",
    "mc_parts",
    "mc_sum",
    "learner_runs",
    "combine",
    "bonferroni",
    "gauss_hermite",
    "multi_indices_independent",
    "hermite_features_independent",
    "hermite_sq_norm_independent",
    "feature_tail_failures",
    "gaussian_delta_mu",
    "pld_delta",
    "pld_epsilon",
    "gm_calibration",
    "selection_max_log_ratio",
]

CHUNK = 2_000


# ------------------------------------------------------------------ Monte Carlo


def mc_sum(ctx: CheckContext, fn: Callable[[int, np.random.Generator], np.ndarray], n: int,
           chunk_size: int = CHUNK) -> np.ndarray:
    """Sum over chunks of ``fn(size, rng)`` (an array of counts), through the audit chunk engine."""
    return np.sum(mc_parts(ctx, fn, n, chunk_size), axis=0)


def mc_parts(ctx: CheckContext, fn: Callable[[int, np.random.Generator], np.ndarray], n: int,
             chunk_size: int = CHUNK) -> list:
    """The per-chunk values of ``fn(size, rng)`` (one rng per chunk, seeded from ``ctx.seed``)."""

    def chunk(size, ss):
        return np.asarray(fn(size, np.random.default_rng(ss)), dtype=float)

    return map_chunks(chunk, n, seed=ctx.seed, chunk_size=chunk_size, n_jobs=ctx.n_jobs)


def learner_runs(ctx: CheckContext, one_run: Callable[[np.random.Generator], float], trials: int) -> np.ndarray:
    """``trials`` independent learner runs (values of ``one_run(rng)``), chunks of 4 runs per seed child."""

    def chunk(size, ss):
        rng = np.random.default_rng(ss)
        return np.array([one_run(rng) for _ in range(size)], dtype=float)

    return np.concatenate(map_chunks(chunk, trials, seed=ctx.seed, chunk_size=4, n_jobs=ctx.n_jobs))


# ------------------------------------------------------------------ combining results


def combine(outcomes: list[CheckResult], **details) -> CheckResult:
    """Several sub-outcomes of one check: the worst status wins, the others go into details."""
    order = {"fail": 0, "inconclusive": 1, "pass": 2}
    worst = min(outcomes, key=lambda o: order[o.status])
    subs = [dict(status=o.status, observed=o.observed, bound=o.bound, **o.details) for o in outcomes]
    return CheckResult(worst.status, worst.observed, worst.bound, worst.kind, confidence=worst.confidence,
                       trials=worst.trials, p_value=worst.p_value, details=dict(details, parts=subs))


def bonferroni(outs: list[CheckResult]) -> CheckResult:
    """Combine failure-rate sub-tests by Bonferroni: report the smallest p-value times their number."""
    k = len(outs)
    worst = min(outs, key=lambda o: o.p_value)
    p_adj = min(1.0, worst.p_value * k)
    status = "fail" if p_adj < 1 - worst.confidence else "pass"
    return CheckResult(status, worst.observed, worst.bound, "probabilistic", confidence=worst.confidence,
                       trials=worst.trials, p_value=p_adj,
                       details=dict(bonferroni=k, parts=[dict(o.details, rate=o.observed, p_value=o.p_value)
                                                         for o in outs]))


# ------------------------------------------------------------------ quadrature and Hermite features


def gauss_hermite(d: int, npts: int) -> tuple[np.ndarray, np.ndarray]:
    """Product Gauss--Hermite rule for N(0, I_d): nodes (N, d) and weights (N,) summing to 1.

    Exact for polynomials of degree <= 2 npts - 1 in each coordinate.
    """
    x, w = np.polynomial.hermite_e.hermegauss(npts)
    w = w / math.sqrt(2 * math.pi)
    nodes = np.array(list(itertools.product(x, repeat=d)))
    weights = np.prod(np.array(list(itertools.product(w, repeat=d))), axis=1)
    return nodes, weights


def multi_indices_independent(d: int, p: int) -> list[tuple[int, ...]]:
    """All ``kappa`` in N_0^d with ``|kappa| <= p`` (lexicographic; the learner's order is graded)."""
    return [k for k in itertools.product(range(p + 1), repeat=d) if sum(k) <= p]


def hermite_features_independent(X: np.ndarray, p: int) -> np.ndarray:
    """``psi_p(x) = (h_kappa(x))_{|kappa| <= p}`` for the rows of ``X`` (shape (n, D_p)), columns in the order
    of :func:`multi_indices_independent`; the one-dimensional ``h_m`` are the learner's recurrence."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    H = hermite_1d(X, p)  # (n, d, p+1)
    idx = multi_indices_independent(X.shape[1], p)
    cols = [np.prod([H[:, j, k[j]] for j in range(X.shape[1])], axis=0) for k in idx]
    return np.stack(cols, axis=1)


def hermite_sq_norm_independent(X: np.ndarray, p: int) -> np.ndarray:
    """``K_p(x) = ||psi_p(x)||^2 = sum_{|kappa|<=p} h_kappa(x)^2`` without forming psi_p.

    The sum over multi-indices is the sum of the coefficients of t^0..t^p of
    ``prod_j sum_m h_m(x_j)^2 t^m`` (a truncated polynomial product, vectorised over rows).
    """
    X = np.atleast_2d(np.asarray(X, dtype=float))
    H2 = hermite_1d(X, p) ** 2  # (n, d, p+1)
    acc = H2[:, 0, :].copy()
    for j in range(1, X.shape[1]):
        new = np.zeros_like(acc)
        for a in range(p + 1):
            new[:, a:] += acc[:, a:a + 1] * H2[:, j, : p + 1 - a]
        acc = new
    return acc.sum(axis=1)


def feature_tail_failures(ctx: CheckContext, d: int, p: int, thr2: float, trials: int) -> int:
    """Number of ``trials`` Gaussian draws X in R^d with ``||psi_p(X)||^2 > thr2`` (seeded by ``ctx``)."""
    (f,) = mc_sum(ctx, lambda size, rng: [np.sum(hermite_sq_norm_independent(rng.standard_normal((size, d)), p)
                                                 > thr2)], trials)
    return int(f)


# ------------------------------------------------------------------ privacy curves and accountants


def gaussian_delta_mu(epsilon: float, mu: float) -> float:
    """Exact delta(eps) of the Gaussian mechanism with ``mu = sensitivity / sigma`` (Balle & Wang 2018, Thm 8).

    :func:`privbound.learners.mechanisms.gaussian_delta` at sigma = 1 and sensitivity mu.
    """
    return gaussian_delta(1.0, epsilon, mu)


def pld_delta(epsilon: float, noise_multiplier: float) -> float:
    """The same curve from dp_accounting's PLD accountant (a second, independent computation): a shift by the
    sensitivity, the relation ``BOUNDED_QUERY_CHANGE``."""
    import dp_accounting

    return delta_of(dp_accounting.GaussianDpEvent(noise_multiplier), epsilon, "pld",
                    neighbouring=NeighbouringRelation.BOUNDED_QUERY_CHANGE)


def pld_epsilon(event, delta: float) -> float:
    """epsilon at ``delta`` of a learner's ``DpEvent`` by dp_accounting's PLD accountant, under replace-one (the
    relation of the paper's guarantees)."""
    return epsilon_of(event, delta, "pld", neighbouring=NeighbouringRelation.REPLACE_ONE)


def gm_calibration(ctx: CheckContext, sigma_over_sens: Callable[[float, float], float], eps_grid, delta_grid,
                   label: str) -> CheckResult:
    """max over the grid of delta(eps) / delta for a Gaussian mechanism with sigma/sensitivity as given."""
    worst, where = 0.0, None
    for eps in eps_grid:
        for delta in delta_grid:
            mu = 1.0 / sigma_over_sens(eps, delta)
            r = gaussian_delta_mu(eps, mu) / delta
            if r > worst:
                worst, where = r, dict(epsilon=eps, delta=delta, mu=mu)
    # cross-check the worst point with dp_accounting's PLD accountant
    pld = pld_delta(where["epsilon"], 1 / where["mu"]) / where["delta"]
    return C.exact(worst, 1.0, sense="<=", rtol=1e-12, worst_at=where, pld_ratio=pld, mechanism=label,
                   note="observed = max over the grid of exact delta(eps) / delta; <= 1 means (eps, delta)-DP")


def selection_max_log_ratio(counts: np.ndarray, eps: float, patterns) -> float:
    """max over neighbouring count vectors ``counts + pattern`` of max_j |log P(j|S) - log P(j|S')|.

    P is the exact law of the learners' selection step
    (:func:`privbound.learners.agnostic_halfspaces.common.exp_mech_log_probabilities`).
    """
    base = exp_mech_log_probabilities(counts, eps)
    worst = 0.0
    for pat in patterns:
        worst = max(worst, float(np.max(np.abs(exp_mech_log_probabilities(counts + pat, eps) - base))))
    return worst
