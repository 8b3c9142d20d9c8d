"""Algorithm 1: private polynomial L^1 regression with thresholds (Sec. 2, Theorem 2.1; App. C, D).

From "Differentially private agnostic learning of halfspaces under Gaussian marginals" (paper id
``agnostic-halfspaces``; the source text, ``papers/dp-agnostic-halfspaces.txt``, has lost its title page,
so authors, venue and arXiv id are not known here).

* :class:`PrivatePolynomialRegression` -- the learner, with the Hermite basis (Theorem 2.1) or the
  log-concave basis of App. D (Theorem D.1, through
  :class:`privbound.learners.agnostic_halfspaces.hermite.MonomialBasis`);
* :func:`alg1_grid`, :func:`alg1_thresholds`, :func:`alg1_erm_schedule` -- its parameters;
* :func:`alg1_release_batch` -- ``size`` independent end-to-end runs as array operations (for the
  audits), distributionally identical to independent fits (tested), with the DP-ERM's transcript (every
  noisy subgradient) on request; :func:`alg1_erm_law` -- what that DP-ERM runs with (the clipped blocks,
  the schedule), for the audits' exact per-step densities; :func:`l1_subgradient` -- the subgradient it noises.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from privbound.learners.agnostic_halfspaces.common import (
    as_generator,
    check_xy,
    error_counts_by_threshold,
    exp_mech_select,
    exp_mech_select_rows,
    gaussian_clip_radius,
    gaussian_epsilon,
    remark3_clip_radius,
    sign,
)
from privbound.learners.agnostic_halfspaces.hermite import MonomialBasis, clip_features, hermite_features, n_features
from privbound.learners.accounting import replace_one_noise_multiplier
from privbound.learners.mechanisms import PrivacyGuarantee
from privbound.learners.neighbouring import NeighbouringRelation
from privbound._validation import Interval, StrOptions, check_finite_array, check_int, validate_parameters

__all__ = [
    "alg1_grid",
    "alg1_thresholds",
    "alg1_erm_sigma",
    "alg1_erm_schedule",
    "erm_update",
    "alg1_erm_rate_bound",
    "l1_subgradient",
    "dp_erm_l1",
    "alg1_erm_law",
    "alg1_validation_errors",
    "alg1_release_batch",
    "changed_row",
    "alg1_pair_epsilon",
    "PrivatePolynomialRegression",
]


def alg1_grid(alpha: float, beta: float, c: float, C_M: float = 1.0) -> tuple[int, int]:
    """Algorithm 1 step 1: ``k = ceil(log2(2/beta))`` blocks and ``M = ceil(max(C_M, 1/(2c))/alpha)`` thresholds.

    ``C_M`` is the hidden constant of ``M = ceil(C/alpha)``; the grid must reach ``1/(2c)`` (Eq. (21)).
    """
    k = math.ceil(math.log2(2 / beta))
    M = math.ceil(max(C_M, 1 / (2 * c)) / alpha)
    return k, M


def alg1_thresholds(M: int) -> np.ndarray:
    """Algorithm 1 step 4: ``t_l = -1 + (2l - 1)/M``, l = 1..M."""
    return -1 + (2 * np.arange(1, M + 1) - 1) / M


def alg1_erm_sigma(n0: int, T: float, K: int, s_unit: float, compose: bool = True) -> float:
    """The DP-ERM's noise ``sigma_g = (2T/n0) sqrt(K) s``: K adaptive Gaussian steps of replace-one sensitivity
    2T/n0 (subgradients of norm <= T) compose exactly to (sqrt(K) 2T/(n0 sigma_g))-GDP (Dong, Roth & Su 2019,
    Cor. 3.3), so ``s`` = ``get_sigma_gaussian(eps, delta)`` makes the K steps exactly (eps, delta)-DP.
    ``compose=False`` (noise for ONE step) is a planted bug for the audits only."""
    return (2 * T / n0) * (math.sqrt(K) if compose else 1.0) * s_unit


def alg1_erm_schedule(n0: int, D: int, T: float, R: float, epsilon: float, delta: float, max_iter: int,
                      compose: bool = True):
    """Algorithm 1's DP-ERM schedule (our stand-in for Lemma B.4's algorithm): ``(K, sigma_g, step, s)``.

    ``s = get_sigma_gaussian(eps, delta)`` (one exactly calibrated Gaussian of sensitivity 1), ``K =
    min(max_iter, ceil(n0^2 / (4 D s^2)))`` steps, ``sigma_g`` of :func:`alg1_erm_sigma`, step
    ``R / sqrt(K (T^2 + D sigma_g^2))``. ``compose=False`` is a planted bug for the audits only (noise for ONE
    step: the composition over K iterations forgotten).
    """
    import dp_accounting

    s_unit = float(dp_accounting.get_sigma_gaussian(epsilon, delta))
    K = int(min(max_iter, max(1, math.ceil(n0**2 / (4 * D * s_unit**2)))))
    sigma_g = alg1_erm_sigma(n0, T, K, s_unit, compose)
    step = R / math.sqrt(K * (T**2 + D * sigma_g**2))
    return K, sigma_g, step, s_unit


def alg1_erm_rate_bound(R: float, T: float, K: int, D: int, s_unit: float, n0: int) -> float:
    """The DP-ERM's proven rate ``E[L^(v_bar)] - min L^ <= R T sqrt(1/K + 4 D s^2 / n_0^2)`` (projected subgradient
    descent with gradients of norm <= T, noise sigma_g = (2T/n_0) sqrt(K) s per coordinate, step
    R / sqrt(K (T^2 + D sigma_g^2))); reported by the learner as ``excess_risk_bound_``."""
    return R * T * math.sqrt(1 / K + 4 * D * s_unit**2 / n0**2)


def l1_subgradient(Fb, yb, V) -> np.ndarray:
    """The mean subgradient of the clipped L1 loss (4) over each block: ``(1/n_0) sum sign(<v, psi_bar> - y) psi_bar``.

    ``Fb`` (k, n0, D) clipped block features, ``yb`` (k, n0), ``V`` (..., k, D) -> (..., k, D); ``sign(0) = 0``.
    Each row's term has norm <= ||psi_bar|| <= T, so the mean moves by at most 2T/n_0 when one row is replaced.
    """
    r = np.einsum("knd,...kd->...kn", Fb, V) - yb
    return np.einsum("...kn,knd->...kd", np.sign(r), Fb) / Fb.shape[1]


def erm_update(V, noisy_gradient, step: float, R: float) -> np.ndarray:
    """One step of the DP-ERM: ``Proj_{B(R)}(V - step * noisy_gradient)`` (last axis)."""
    V = V - step * noisy_gradient
    return V / np.maximum(1.0, np.linalg.norm(V, axis=-1, keepdims=True) / R)


def dp_erm_l1(Fb, yb, K: int, sigma_g: float, step: float, R: float, rng: np.random.Generator,
              size: int | None = None, record: bool = False):
    """Noisy projected subgradient descent on the clipped L1 loss (4), averaged iterate (Algorithm 1 step 3).

    ``Fb`` (k, n0, D) clipped block features, ``yb`` (k, n0). Returns (k, D) (``size=None``, the learner's
    path) or (size, k, D): ``size`` independent runs on the same blocks, as array operations (each step's
    noise has the same shape as the iterate, so a batch is ``size`` independent single runs). ``record=True``
    returns ``(average, noisy)`` with ``noisy`` the K noisy subgradients ``g_t + Z_t`` of every run, shape
    (size, K, k, D) (or (K, k, D)): the transcript the DP-ERM's Gaussian composition is about.
    """
    Fb = np.asarray(Fb, dtype=float)
    yb = np.asarray(yb, dtype=float)
    k, n0, D = Fb.shape
    shape = (k, D) if size is None else (check_int(size, "size", low=1), k, D)
    V = np.zeros(shape)
    Vsum = np.zeros(shape)
    noisy = []
    for _ in range(K):
        g = l1_subgradient(Fb, yb, V) + rng.normal(0.0, sigma_g, size=V.shape)
        if record:
            noisy.append(g)
        V = erm_update(V, g, step, R)
        Vsum += V
    if record:
        return Vsum / K, np.stack(noisy, axis=-3)
    return Vsum / K


def alg1_erm_law(X, y, *, epsilon, delta, compose: bool = True, clip: bool = True, **params) -> dict:
    """What Algorithm 1's DP-ERM runs with on ``(X, y)`` (as :class:`PrivatePolynomialRegression` and
    :func:`alg1_release_batch` run it): the block features ``Fb`` (k, n0, D) (clipped at T, or not with the
    planted bug ``clip=False``) and labels ``yb``, the validation rows ``Fv``, ``yv``, and the schedule ``K``,
    ``sigma_g``, ``step``, ``R``, ``M`` (:func:`alg1_erm_schedule`; ``compose=False`` is its planted bug).

    Step t releases ``l1_subgradient(Fb, yb, V_{t-1}) + N(0, sigma_g^2 I)``, V_{t-1} the iterate before it.
    """
    est = PrivatePolynomialRegression(epsilon=epsilon, delta=delta, **params)
    X, y = check_xy(X, y)
    plan = est._plan(X, y)
    F = plan["F"] if clip else plan["F_unclipped"]
    k, n0, M, m, D, R = plan["k"], plan["n0"], plan["M"], plan["m"], plan["D"], plan["R"]
    K, sigma_g, step, _ = alg1_erm_schedule(n0, D, plan["T"], R, epsilon, delta, int(est.max_iter), compose)
    return dict(Fb=F[: k * n0].reshape(k, n0, D), yb=y[: k * n0].reshape(k, n0), Fv=F[k * n0: k * n0 + m],
                yv=y[k * n0: k * n0 + m], K=K, sigma_g=sigma_g, step=step, R=R, M=M, k=k, n0=n0, T=plan["T"])


def alg1_validation_errors(Fv, yv, coefs, thresholds) -> np.ndarray:
    """Error counts of ``h_{j,l}(x) = sign(<v_j, psi_bar(x)> - t_l)`` on the validation set.

    ``coefs`` (..., k, D) -> counts (..., k, M) (sign(0) = +1), vectorised over any leading batch axes.
    """
    S = np.einsum("md,...kd->...km", np.asarray(Fv, dtype=float), np.asarray(coefs, dtype=float))
    pred = S[..., None] - np.asarray(thresholds, dtype=float) >= 0  # (..., k, m, M)
    return np.sum(pred != (np.asarray(yv) > 0)[:, None], axis=-2)


def alg1_release_batch(X, y, *, degree, epsilon, delta, alpha=0.1, beta=0.1, c=0.25, n_blocks=None, n_grid=None,
                       n_validation=None, clip_radius=None, basis="hermite", radius=1.0, max_iter=300,
                       rng: np.random.Generator, size: int, compose: bool = True, clip: bool = True,
                       transcript: bool = False):
    """``size`` independent end-to-end runs of Algorithm 1 on one dataset, as array operations.

    Same parameters, partition and steps as :class:`PrivatePolynomialRegression` (the released output is
    the selected hypothesis): returns (size, D_p + 1) rows ``[v_j^, t_l^]``. ``compose=False`` (noise
    for one ERM step) and ``clip=False`` (features not clipped) are planted bugs for the audits only.
    ``transcript=True`` returns ``(rows, releases)`` with the DP-ERM's noisy subgradients ``gradients``
    (size, K, k, D) and the selected flat index ``selected`` (size,).
    """
    law = alg1_erm_law(X, y, degree=degree, epsilon=epsilon, delta=delta, alpha=alpha, beta=beta, c=c,
                       n_blocks=n_blocks, n_grid=n_grid, n_validation=n_validation, clip_radius=clip_radius,
                       basis=basis, radius=radius, max_iter=max_iter, compose=compose, clip=clip)
    k, M = law["k"], law["M"]
    V, noisy = dp_erm_l1(law["Fb"], law["yb"], law["K"], law["sigma_g"], law["step"], law["R"], rng, size,
                         record=True)  # (size, k, D), (size, K, k, D)
    ts = alg1_thresholds(M)
    errs = alg1_validation_errors(law["Fv"], law["yv"], V, ts).reshape(size, k * M)
    flat = exp_mech_select_rows(errs, epsilon, rng)
    j, l = np.divmod(flat, M)
    out = np.concatenate([V[np.arange(size), j], ts[l][:, None]], axis=1)
    if transcript:
        return out, dict(gradients=noisy, selected=flat)
    return out


def changed_row(d0, d1) -> int:
    """The one row where two replace-one neighbours ``(X, y)`` differ (``ValueError`` otherwise)."""
    (X0, y0), (X1, y1) = check_xy(*d0), check_xy(*d1)
    if X0.shape != X1.shape:
        raise ValueError(f"replace-one neighbours have the same shape, got {X0.shape} and {X1.shape}")
    rows = np.flatnonzero(np.any(X0 != X1, axis=1) | (y0 != y1))
    if rows.size != 1:
        raise ValueError(f"the datasets must differ in exactly one row (replace-one), they differ in {rows.size}")
    return int(rows[0])


def alg1_pair_epsilon(d0, d1, *, epsilon, delta, compose: bool = True, clip: bool = True, **params) -> tuple[float, str]:
    """``(epsilon, source)``: the tightest epsilon at ``delta`` of Algorithm 1 (as :func:`alg1_release_batch` runs it)
    on the replace-one pair ``(d0, d1)``, from the part of the data the changed row is in.

    The parts are disjoint and data-independent. A row of block j enters only that block's DP-ERM: K adaptive
    Gaussian steps (noise ``sigma_g``), each moving by at most ``|sign(r) - sign(r')| ||psi|| / n_0 <= 2 ||psi|| /
    n_0`` for a changed label (``(||psi|| + ||psi'||) / n_0`` otherwise), ``psi`` the features the code uses
    (clipped at T, or not with ``clip=False``): :func:`gaussian_epsilon` of the K steps (exact when every step
    moves by that much; the averaged iterate, the data-independent thresholds and the selection are
    post-processing). A validation row enters only the selection (pure epsilon, its worst case); other rows
    nothing. The source also gives the worst case over the changed row's position.
    """
    est = PrivatePolynomialRegression(epsilon=epsilon, delta=delta, **params)
    i = changed_row(d0, d1)
    plans = [est._plan(*check_xy(*d)) for d in (d0, d1)]
    k, n0, m, D, T, R = (plans[0][key] for key in ("k", "n0", "m", "D", "T", "R"))
    K, sigma_g, _, _ = alg1_erm_schedule(n0, D, T, R, epsilon, delta, int(est.max_iter), compose)
    worst_erm = gaussian_epsilon(2 * T / n0, sigma_g, delta, K) if clip else math.inf
    worst = f"worst case over the changed row's position: {max(worst_erm, float(epsilon)):.4g} (max of the ERM's and the selection's)"
    if i < k * n0:
        F = [pl["F" if clip else "F_unclipped"][i] for pl in plans]
        same_x = np.array_equal(check_xy(*d0)[0][i], check_xy(*d1)[0][i])
        shift = (2 * np.linalg.norm(F[0]) if same_x else np.linalg.norm(F[0]) + np.linalg.norm(F[1])) / n0
        return gaussian_epsilon(shift, sigma_g, delta, K), (
            f"Gaussian composition of block {i // n0}'s DP-ERM, the only part the changed row enters: K = {K} "
            f"steps of noise sigma_g = {sigma_g:.4g}, each moving by <= {shift:.4g} ({'label flip, ' if same_x else ''}"
            f"features {'clipped at T' if clip else 'NOT clipped'}); exact for the steps when each moves by that "
            f"much, the released average being post-processing; {worst}")
    if i < k * n0 + m:
        return float(epsilon), f"the changed row is a validation row: the selection's pure epsilon (its worst case); {worst}"
    return 0.0, f"the changed row is in no part (unused); {worst}"


_POSITIVE = Interval(Real, 0, None, closed="neither")
_OPEN_UNIT = Interval(Real, 0, 1, closed="neither")
_COUNT = Interval(Integral, 1, None, closed="left")


class PrivatePolynomialRegression(ClassifierMixin, BaseEstimator):
    """Algorithm 1: private polynomial L^1 regression with thresholds (Sec. 2, Thm 2.1; App. C, D).

    1. Split S into ``k`` disjoint blocks of ``n_0`` and a validation set of ``m`` (data-independent).
    2. Per block: a DP convex ERM of the clipped L1 loss ``|<v, psi_bar(x)> - y|`` over the ball
       B_2^{D_p}(R) (Lemma B.4). The paper leaves the algorithm of Lemma B.4 open; implemented as noisy
       projected full-batch subgradient descent: ``K_it`` steps, subgradients of norm <= T so the mean
       has replace-one sensitivity ``Delta = 2T/n_0``, Gaussian noise ``sigma_g``; the averaged
       iterate is returned. Accounting: K adaptive Gaussian steps of noise multiplier z are exactly
       (sqrt(K)/z)-GDP (Dong, Roth & Su 2019, Cor. 3.3), so ``sigma_g = Delta sqrt(K) s(eps, delta)``
       with ``s`` = ``dp_accounting.get_sigma_gaussian`` is exactly (eps, delta)-DP; ``dp_event()``
       describes it as ``SelfComposed(Gaussian(z), K)`` under replace-one for the PLD accountant.
       **Achieved rate** (standard projected-subgradient analysis, step ``R/sqrt(K (T^2 + D sigma_g^2))``):
       ``E[L^(v_bar)] - min L^ <= R T sqrt(1/K + 4 D s^2 / n_0^2)`` (``excess_risk_bound_``), i.e.
       ``O(T R sqrt(D log(1/delta))/(n_0 eps))`` once ``K >= n_0^2/(4 D s^2)`` -- Lemma B.4's rate with
       R the radius (Lemma B.4's R is the diameter, 2R; constants only). ``K`` is capped
       at ``max_iter``; the bound above is then reported with the capped K.
    3. Candidates ``h_{j,l}(x) = sign(<v_j, psi_bar(x)> - t_l)``, ``t_l = -1 + (2l - 1)/M``.
    4. Exponential mechanism on the validation set: P ~ exp(-eps m err^/2) (Lemma B.5).

    Parallel composition over the disjoint parts gives (eps, delta)-DP (Prop. C.1 / D.2).

    Parameters (stored unchanged): ``degree`` p; ``epsilon``, ``delta`` (Thm 2.1: <= 1/2);
    ``alpha`` and ``c`` (grid M and Remark 3's T); ``beta`` (k = ceil(log2(2/beta)));
    ``n_blocks`` / ``n_grid`` override k / M; ``n_validation`` (default: n // 5);
    ``clip_radius``: ``None`` = Remark 3's ``sqrt(D_p/(c alpha))`` (corrected, see
    :func:`~privbound.learners.agnostic_halfspaces.common.remark3_clip_radius`),
    ``"gaussian"`` = ``2 sqrt(D_p)`` (needs d >= 2p^2/(c alpha)), or a number (e.g. Eq. (25)'s T);
    ``basis``: ``"hermite"`` or a :class:`privbound.learners.agnostic_halfspaces.hermite.MonomialBasis` (App. D);
    ``radius`` R of the coefficient ball (1 for Hermite; R_0 for App. D);
    ``max_iter`` caps K; ``random_state``.
    """

    _parameter_constraints = {
        "degree": [_COUNT],
        "epsilon": [_POSITIVE],
        "delta": [_OPEN_UNIT],
        "alpha": [_OPEN_UNIT],
        "beta": [_OPEN_UNIT],
        "c": [Interval(Real, 0, 0.25, closed="right")],
        "n_blocks": [_COUNT, None],
        "n_grid": [_COUNT, None],
        "n_validation": [_COUNT, None],
        "clip_radius": [None, StrOptions({"gaussian"}), _POSITIVE],
        "basis": [StrOptions({"hermite"}), MonomialBasis],
        "radius": [_POSITIVE],
        "max_iter": [_COUNT],
    }

    def __init__(self, degree=3, epsilon=0.5, delta=1e-5, alpha=0.1, beta=0.1, c=0.25, n_blocks=None,
                 n_grid=None, n_validation=None, clip_radius=None, basis="hermite", radius=1.0, max_iter=300,
                 random_state=None):
        self.degree = degree
        self.epsilon = epsilon
        self.delta = delta
        self.alpha = alpha
        self.beta = beta
        self.c = c
        self.n_blocks = n_blocks
        self.n_grid = n_grid
        self.n_validation = n_validation
        self.clip_radius = clip_radius
        self.basis = basis
        self.radius = radius
        self.max_iter = max_iter
        self.random_state = random_state

    # -------------------------------------------------------------- helpers
    def _features(self, X) -> np.ndarray:
        if isinstance(self.basis, MonomialBasis):
            return self.basis.transform(X)
        return hermite_features(X, self.degree_)

    def _resolve_T(self, D: int) -> float:
        if self.clip_radius is None:
            return remark3_clip_radius(D, float(self.c), float(self.alpha))
        if isinstance(self.clip_radius, str):
            return gaussian_clip_radius(D)
        return float(self.clip_radius)

    def _plan(self, X, y) -> dict:
        """Validated parameters, the data-independent partition sizes and the (clipped) features."""
        validate_parameters(self)
        eps, delta, R = float(self.epsilon), float(self.delta), float(self.radius)
        if isinstance(self.basis, MonomialBasis):
            if self.basis.d != X.shape[1]:
                raise ValueError(f"basis.d = {self.basis.d} but X has {X.shape[1]} columns")
            self.degree_ = self.basis.p
        else:
            self.degree_ = int(self.degree)
        n, d = X.shape
        D = isinstance(self.basis, MonomialBasis) and self.basis.n_features or n_features(d, self.degree_)
        k, M = alg1_grid(float(self.alpha), float(self.beta), float(self.c))
        k = k if self.n_blocks is None else int(self.n_blocks)
        M = M if self.n_grid is None else int(self.n_grid)
        m = n // 5 if self.n_validation is None else int(self.n_validation)
        n0 = (n - m) // k
        if n0 < 2 or m < 1:
            raise ValueError(f"n = {n} too small for k = {k} blocks of n_0 >= 2 and a validation set of m = {m}")
        T = self._resolve_T(D)
        F0 = self._features(X)
        return dict(eps=eps, delta=delta, R=R, n=n, d=d, D=D, k=k, M=M, m=m, n0=n0, T=T, F=clip_features(F0, T),
                    F_unclipped=F0)

    def fit(self, X, y):
        X, y = check_xy(X, y)
        plan = self._plan(X, y)
        eps, delta, R, d, D, k, M, m, n0, T, F = (plan[key] for key in
                                                   ("eps", "delta", "R", "d", "D", "k", "M", "m", "n0", "T", "F"))
        rng = as_generator(self.random_state)
        self.n_features_in_ = d
        self.n_features_poly_ = D
        self.clip_radius_ = T
        self.n_blocks_, self.n_grid_, self.block_size_, self.n_validation_ = k, M, n0, m

        Fb = F[: k * n0].reshape(k, n0, D)
        yb = y[: k * n0].reshape(k, n0)
        Fv, yv = F[k * n0: k * n0 + m], y[k * n0: k * n0 + m]

        # DP convex ERM, all k blocks at once (independent noise per block).
        K, sigma_g, step, s_unit = alg1_erm_schedule(n0, D, T, R, eps, delta, int(self.max_iter))
        sens = 2 * T / n0
        Vsum = dp_erm_l1(Fb, yb, K, sigma_g, step, R, rng) * K
        self.coef_ = Vsum / K
        self.erm_iterations_ = K
        self.erm_sigma_ = sigma_g
        self.erm_noise_multiplier_ = sigma_g / sens
        self.erm_step_ = step
        self.excess_risk_bound_ = alg1_erm_rate_bound(R, T, K, D, s_unit, n0)

        # thresholds and private selection
        self.thresholds_ = alg1_thresholds(M)
        S = Fv @ self.coef_.T  # (m, k)
        self.validation_errors_ = np.stack(
            [error_counts_by_threshold(S[:, j], yv, -self.thresholds_)[0] for j in range(k)])  # (k, M)
        flat = exp_mech_select(self.validation_errors_, eps, rng)
        j, l = divmod(flat, M)
        self.selected_ = (int(j), int(l))
        self.threshold_ = float(self.thresholds_[l])
        self.selected_coef_ = self.coef_[j]
        self.guarantee_ = PrivacyGuarantee(
            eps, delta, NeighbouringRelation.REPLACE_ONE,
            "Algorithm 1 / Prop. C.1: parallel composition of per-block DP-ERM (Gaussian, exact GDP "
            "composition) and the eps-DP exponential mechanism on the validation set",
            self.dp_event())
        return self

    def dp_event(self):
        """The per-block ERM as ``SelfComposed(Gaussian(z), K)`` under replace-one, z the per-record form of
        ``erm_noise_multiplier_`` (the neighbour lies in one part only)."""
        import dp_accounting

        return dp_accounting.SelfComposedDpEvent(
            dp_accounting.GaussianDpEvent(replace_one_noise_multiplier(self.erm_noise_multiplier_)), self.erm_iterations_)

    def decision_function(self, X):
        X = check_finite_array(X, "X", ndim=2)
        return clip_features(self._features(X), self.clip_radius_) @ self.selected_coef_ - self.threshold_

    def predict(self, X):
        return sign(self.decision_function(X))
