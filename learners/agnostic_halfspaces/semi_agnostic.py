"""Algorithm 4: DP semi-agnostic proper learner of halfspaces, err <= C OPT + alpha (Sec. 4, Theorem 4.1; App. F).

From "Differentially private agnostic learning of halfspaces under Gaussian marginals" (paper id
``agnostic-halfspaces``; the source text, ``papers/dp-agnostic-halfspaces.txt``, has lost its title page,
so authors, venue and arXiv id are not known here).

* :class:`SemiAgnosticHalfspace` -- the learner: DPSAS (Algorithm 3) on a grid of eta, then selection;
* :func:`alg4_grid` -- its grid and partition;
* :func:`alg4_release_batch` -- ``size`` independent end-to-end runs as array operations (for the
  audits), distributionally identical to independent fits (tested).
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from privbound.learners.agnostic_halfspaces.common import (
    HalfspaceClassifierMixin,
    as_generator,
    check_xy,
    exp_mech_select,
    exp_mech_select_rows,
    gaussian_epsilon,
    laplace_epsilon,
)
from privbound.learners.agnostic_halfspaces.dpsas import (
    DPSAS,
    clip_rows,
    dpsas_clip_norm,
    dpsas_laplace_scale,
    dpsas_release_batch,
    dpsas_schedule,
    dpsas_sigma,
)
from privbound.learners.agnostic_halfspaces.regression import changed_row
from privbound.learners.mechanisms import PrivacyGuarantee
from privbound.learners.neighbouring import NeighbouringRelation
from privbound._validation import Interval, validate_parameters

__all__ = ["alg4_grid_size", "alg4_grid", "alg4_part_schedules", "SemiAgnosticHalfspace", "alg4_release_batch",
           "alg4_pair_epsilon"]


def alg4_grid_size(alpha: float, C_K: float = 1.0) -> int:
    """Algorithm 4 step 1: ``K = ceil(C_K log2(1/alpha))`` grid points.

    Erratum (base of the log): the paper writes ``C_K log(1/alpha)`` without a base; its accuracy argument
    needs ``eta_K = 2^{K-1} C_eta alpha >= 1/2 >= OPT``, which base 2 gives for every C_K >= 1, C_eta > 1
    (``2^{K-1} >= 1/(2 alpha)``). The natural-log reading
    (:func:`privbound.bounds.agnostic_halfspaces.formulas.alg4_grid_size_printed`) stops short of 1/2, e.g.
    eta_K = 0.176 at alpha = 0.01 with C_K = 1, C_eta = 1.1.
    """
    return max(1, math.ceil(C_K * math.log2(1 / alpha)))


def alg4_grid(n: int, alpha: float, C_K: float, C_eta: float, n_validation=None):
    """Algorithm 4 steps 1-3: ``(K, m, part, etas)``.

    K = ceil(C_K log2(1/alpha)) grid points (base 2: the paper's log must be base 2, or C_K >= 1/ln 2,
    for the grid to reach 1/2), |D_val| = m (default n // 5), the rest split into K parts of ``part``
    examples, and eta_k = 2^{k-1} C_eta alpha.
    """
    K = alg4_grid_size(alpha, C_K)
    m = n // 5 if n_validation is None else int(n_validation)
    part = (n - m) // K
    if part < 4:
        raise ValueError(f"n = {n} too small for K = {K} parts")
    etas = C_eta * alpha * 2.0 ** np.arange(K)
    return K, m, part, etas


def alg4_part_schedules(n: int, *, alpha, C_K=1.0, C_eta=1.1, n_validation=None, dpsas_params=None) -> list[dict]:
    """Where each DPSAS run of Algorithm 4 reads its data (rows ``start + ...`` of part k): per part, its ``eta``,
    ``start``, iterations ``T`` and batch size ``m0`` (D_init = rows [start, start + m0), D_tau the next m0, then
    T gradient batches), as :func:`alg4_release_batch` and ``SemiAgnosticHalfspace.fit`` run them."""
    K, m, part, etas = alg4_grid(n, alpha, C_K, C_eta, n_validation)
    out = []
    for k in range(K):
        sub = DPSAS(eta=min(float(etas[k]), 0.999), **dict(dpsas_params or {}))
        _, T, m0 = dpsas_schedule(sub.eta, sub.C_s, sub.C_T, sub.n_iter, part)
        out.append(dict(eta=sub.eta, start=k * part, part=part, T=T, m0=m0))
    return out


_OPEN_UNIT = Interval(Real, 0, 1, closed="neither")


class SemiAgnosticHalfspace(HalfspaceClassifierMixin, ClassifierMixin, BaseEstimator):
    """Algorithm 4: DP semi-agnostic proper learner, err <= C OPT + alpha (Sec. 4, Thm 4.1).

    K = ceil(C_K log2(1/alpha)) (base 2, see :func:`alg4_grid`); eta_k = 2^{k-1} C_eta alpha;
    |D_val| = ``n_validation`` (default n // 5; the paper's O(log(K/beta)/alpha^2 + log(K/beta)/(alpha eps))
    with its constant is ``validation_size(...)``); the rest split into K equal parts, DPSAS(eta_k) on part k;
    exponential mechanism with Score = accuracy on D_val, sensitivity 1/|D_val|, i.e.
    P[h_k] ~ exp(-eps errors_k / 2). Runs with eta_k >= 1/2 are kept with kappa capped (see DPSAS).
    """

    _parameter_constraints = {
        "alpha": [_OPEN_UNIT],
        "epsilon": [_OPEN_UNIT],
        "C_eta": [Interval(Real, 1, None, closed="neither")],
        "C_K": [Interval(Real, 1, None, closed="left")],
        "n_validation": [Interval(Integral, 1, None, closed="left"), None],
        "dpsas_params": [dict, None],
    }

    def __init__(self, alpha=0.05, epsilon=0.5, delta=1e-5, beta=0.1, C_K=1.0, C_eta=1.1, n_validation=None,
                 dpsas_params=None, random_state=None):
        self.alpha = alpha
        self.epsilon = epsilon
        self.delta = delta
        self.beta = beta
        self.C_K = C_K
        self.C_eta = C_eta
        self.n_validation = n_validation
        self.dpsas_params = dpsas_params
        self.random_state = random_state

    @staticmethod
    def validation_size(alpha, epsilon, beta, K, C_v=1.0) -> int:
        """|D_val| = C_v (ln(K/beta)/alpha^2 + ln(K/beta)/(alpha eps)) (Algorithm 4 step 2)."""
        lk = math.log(K / beta)
        return math.ceil(C_v * (lk / alpha**2 + lk / (alpha * epsilon)))

    def fit(self, X, y):
        X, y = check_xy(X, y)
        validate_parameters(self)
        alpha, eps = float(self.alpha), float(self.epsilon)
        rng = as_generator(self.random_state)
        n = X.shape[0]
        K, m, part, self.etas_ = alg4_grid(n, alpha, float(self.C_K), self.C_eta, self.n_validation)
        Xv, yv = X[n - m:], y[n - m:]
        params = dict(self.dpsas_params or {})
        self.candidates_ = []
        errs = []
        for k in range(K):
            sub = DPSAS(eta=min(float(self.etas_[k]), 0.999), epsilon=eps, delta=self.delta,
                        random_state=rng, **params)
            sub.fit(X[k * part: (k + 1) * part], y[k * part: (k + 1) * part])
            self.candidates_.append((sub.coef_.copy(), sub.threshold_))
            errs.append(int(np.sum(sub.predict(Xv) != yv)))
        self.validation_errors_ = np.array(errs)
        self.selected_ = exp_mech_select(self.validation_errors_, eps, rng)
        self.coef_, self.threshold_ = self.candidates_[self.selected_]
        self.n_grid_, self.n_validation_, self.part_size_ = K, m, part
        self.guarantee_ = PrivacyGuarantee(
            eps, self.delta, NeighbouringRelation.REPLACE_ONE,
            "Algorithm 4 / Prop. F.1 (stated (O(eps), O(delta))): DPSAS runs on disjoint parts and the "
            "eps-DP exponential mechanism on D_val; parallel composition gives (eps, delta)", None)
        return self


def alg4_release_batch(X, y, *, alpha=0.05, epsilon=0.5, delta=1e-5, C_K=1.0, C_eta=1.1, n_validation=None,
                       dpsas_params=None, rng: np.random.Generator, size: int, transcript: bool = False, **bugs):
    """``size`` independent runs of :class:`SemiAgnosticHalfspace` (Algorithm 4) on one dataset.

    Same grid, partition and selection as ``SemiAgnosticHalfspace.fit``; returns (size, d + 1) rows
    ``[w_k^, tau_k^]`` of the selected candidate. ``bugs`` are passed to :func:`dpsas_release_batch`.
    ``transcript=True`` returns ``(rows, releases)``: ``releases["parts"]`` the K DPSAS transcripts
    (:func:`dpsas_release_batch`'s), ``releases["selected"]`` the selected part of every run.
    """
    X, y = check_xy(X, y)
    n, d = X.shape
    K, m, part, etas = alg4_grid(n, alpha, C_K, C_eta, n_validation)
    Xv, yv = X[n - m:], y[n - m:]
    Ws, taus, errs, parts = [], [], [], []
    for k in range(K):
        W, tau, *releases = dpsas_release_batch(X[k * part: (k + 1) * part], y[k * part: (k + 1) * part],
                                                eta=min(float(etas[k]), 0.999), epsilon=epsilon, delta=delta, rng=rng,
                                                size=size, transcript=transcript, **dict(dpsas_params or {}), **bugs)
        parts.extend(releases)
        pred = (Xv @ W.T + tau[None, :]) >= 0  # (m, size)
        errs.append(np.sum(pred != (yv > 0)[:, None], axis=0))
        Ws.append(W)
        taus.append(tau)
    E = np.stack(errs, axis=1)  # (size, K)
    sel = exp_mech_select_rows(E, epsilon, rng)
    Wsel = np.stack(Ws, axis=1)[np.arange(size), sel]
    tsel = np.stack(taus, axis=1)[np.arange(size), sel]
    out = np.concatenate([Wsel, tsel[:, None]], axis=1)
    if transcript:
        return out, dict(parts=parts, selected=sel)
    return out


def alg4_pair_epsilon(d0, d1, *, alpha=0.05, epsilon=0.5, delta=1e-5, C_K=1.0, C_eta=1.1, n_validation=None,
                      dpsas_params=None, laplace_factor: float = 2.0, with_L: bool = True) -> tuple[float, str]:
    """``(epsilon, source)``: the tightest epsilon at ``delta`` of Algorithm 4 (as :func:`alg4_release_batch` runs it,
    ``laplace_factor`` / ``with_L`` its planted bugs) on the replace-one pair ``(d0, d1)``, from the step the changed
    row enters.

    The K parts, their DPSAS batches and D_val are disjoint and data-independent. A row of part k enters one
    step of DPSAS(eta_k): in D_init the Gaussian initial direction (moves by ``||y x - y' x'|| / m_0``, rows clipped
    to L), in D_tau the Laplace label mean (moves by ``|y - y'| / m_0``), in a gradient batch one Gaussian gradient
    step (moves by at most ``(||x|| + ||x'||) / m_0``, 2 ||x|| / m_0 for a flipped label: an upper bound); a
    validation row only the selection (pure epsilon, its worst case); other rows nothing. Everything else is
    post-processing of, or composition with, steps the row does not enter. The source also gives the worst case over
    the changed row's position.
    """
    (X0, y0), (X1, y1) = check_xy(*d0), check_xy(*d1)
    n, d = X0.shape
    K, m, part, etas = alg4_grid(n, alpha, C_K, C_eta, n_validation)
    i = changed_row(d0, d1)
    L = dpsas_clip_norm(d)
    x0, x1 = clip_rows(X0[i:i + 1], L)[0], clip_rows(X1[i:i + 1], L)[0]

    def schedule(k):
        sub = DPSAS(eta=min(float(etas[k]), 0.999), epsilon=epsilon, delta=delta, **dict(dpsas_params or {}))
        _, T, m0 = dpsas_schedule(sub.eta, sub.C_s, sub.C_T, sub.n_iter, part)
        return T, m0, dpsas_sigma(L, epsilon, delta, m0, with_L), dpsas_laplace_scale(epsilon, m0, laplace_factor)

    per_part = [schedule(k) for k in range(K)]
    worst = max([float(epsilon)] + [max(laplace_epsilon(2.0 / m0, scale, delta), gaussian_epsilon(2 * L / m0, sigma, delta))
                                    for _, m0, sigma, scale in per_part])
    where = f"worst case over the changed row's position: {worst:.4g}"
    if i >= n - m:
        return float(epsilon), f"the changed row is a validation row: the selection's pure epsilon (its worst case); {where}"
    if i >= K * part:
        return 0.0, f"the changed row is in no part (unused); {where}"
    k, j = divmod(i, part)
    T, m0, sigma, scale = per_part[k]
    if j < m0:
        shift = float(np.linalg.norm(y0[i] * x0 - y1[i] * x1)) / m0
        return gaussian_epsilon(shift, sigma, delta), (
            f"exact Gaussian mechanism of part {k}'s initial direction (DPSAS step 6), the only step the changed row "
            f"enters: moves by {shift:.4g}, sigma = {sigma:.4g}; {where}")
    if j < 2 * m0:
        shift = abs(y0[i] - y1[i]) / m0
        return laplace_epsilon(shift, scale, delta), (
            f"exact Laplace mechanism of part {k}'s label mean (DPSAS step 4), the only step the changed row enters: "
            f"moves by {shift:.4g}, scale = {scale:.4g}; {where}")
    if j < (T + 2) * m0:
        same_x = np.array_equal(X0[i], X1[i])
        shift = float(2 * np.linalg.norm(x0) if same_x else np.linalg.norm(x0) + np.linalg.norm(x1)) / m0
        return gaussian_epsilon(shift, sigma, delta), (
            f"Gaussian mechanism of part {k}'s gradient step {j // m0 - 2} (DPSAS step 9.3), the only step the changed "
            f"row enters: moves by <= {shift:.4g}, sigma = {sigma:.4g} (an upper bound on this pair); {where}")
    return 0.0, f"the changed row is in no DPSAS batch of part {k} (unused); {where}"
