"""Algorithm 2: private proper agnostic learner of halfspaces under Gaussian marginals (Sec. 3, Theorem 3.1).

From "Differentially private agnostic learning of halfspaces under Gaussian marginals" (paper id
``agnostic-halfspaces``; the source text, ``papers/dp-agnostic-halfspaces.txt``, has lost its title page,
so authors, venue and arXiv id are not known here). Lemmas 3.2-3.5 and App. E analyse it.

* :class:`PrivateProperHalfspace` -- the learner;
* :func:`alg2_sigma` and :func:`alg2_noise_multiplier` -- the calibration of its Gaussian release;
* :func:`coefficient_release` -- Algorithm 2 step 4, one release or a batch of ``size`` (for the
  audits), the same law (tested);
* :func:`alg2_coefficient_law` and :func:`alg2_coefficient_step` -- steps 3-4 on the raw rows of S_1 (features,
  clipping at T, calibration, release): the one code path of the learner and of its audits, which read the
  law (mean and sigma) the step runs with from :func:`alg2_coefficient_law`.
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
    gaussian_clip_radius,
    halfspace_predict,
    remark3_clip_radius,
    sign,
    sphere_cover,
)
from privbound.learners.agnostic_halfspaces.hermite import clip_features, gradient_matrix, hermite_features, n_features
from privbound.learners.accounting import replace_one_noise_multiplier
from privbound.learners.mechanisms import PrivacyGuarantee
from privbound.learners.neighbouring import NeighbouringRelation
from privbound._validation import Interval, StrOptions, check_finite_array, check_int, validate_parameters

__all__ = ["alg2_degree", "alg2_sigma", "alg2_noise_multiplier", "coefficient_mean", "coefficient_release",
           "alg2_coefficient_law", "alg2_coefficient_step", "PrivateProperHalfspace"]


def alg2_degree(alpha: float, c: float, C_0: float = 1.0) -> int:
    """Theorem 3.1 / Algorithm 2 step 1: the degree ``p = ceil(C_0 / (c alpha)^2)`` (Lemma 3.2 at accuracy c alpha).

    Erratum: the algorithm box prints ``ceil(C_0 / (c alpha))`` (the square is missing; that form is
    :func:`privbound.bounds.agnostic_halfspaces.formulas.theorem_3_1_degree_printed`); the theorem and its
    proof use the square, which is needed for degree O(alpha^-2) and for C_dim >= 2 (C_0 + 1)^2 c^-5.
    The learner takes ``degree`` as a knob (this p makes D_p explode); the claim and its checks use this.
    """
    return math.ceil(C_0 / (c * alpha) ** 2)


def alg2_sigma(T: float, epsilon: float, delta: float, n: int, sensitivity_factor: float = 4.0) -> float:
    """Algorithm 2 step 3: sigma = 4 T sqrt(2 ln(1.25/delta)) / (eps n) (l2-sensitivity 4T/n; eps < 1).

    ``sensitivity_factor`` exists for the planted bug (2 instead of 4); the learner always uses 4.
    """
    return sensitivity_factor * T * math.sqrt(2 * math.log(1.25 / delta)) / (epsilon * n)


def alg2_noise_multiplier(epsilon: float, delta: float) -> float:
    """sigma / sensitivity of Algorithm 2's release: ``sqrt(2 ln(1.25/delta)) / eps`` (classical calibration)."""
    return math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def coefficient_mean(features, y) -> np.ndarray:
    """The statistic Algorithm 2 step 4 privatises: ``(2/n) sum_{S_1} Y psi_bar`` (the mean over S_1)."""
    F = np.asarray(features, dtype=float)
    return (np.asarray(y, dtype=float) @ F) / F.shape[0]


def coefficient_release(features, y, sigma: float, rng: np.random.Generator, size: int | None = None,
                        project: bool = True):
    """Algorithm 2 step 4: ``Proj_{B_2}( (2/n) sum_{S_1} Y psi_bar + Z )``, Z ~ N(0, sigma^2 I).

    ``features`` are the (already clipped) features of S_1 (|S_1| = n/2, so (2/n) sum = mean).
    Returns one vector (``size=None``) or ``size`` independent releases, shape (size, D_p). ``project=False``
    returns the Gaussian release before the projection onto the unit ball (post-processing), which is what
    Lemma 3.4's guarantee is about.
    """
    return _projected_gaussian(coefficient_mean(features, y), sigma, rng, size, project)


def alg2_coefficient_law(X1, y1, *, degree: int, clip_radius: float, epsilon: float, delta: float,
                         sensitivity_factor: float = 4.0, clip: bool = True) -> tuple[np.ndarray, float]:
    """``(mean, sigma)`` of Algorithm 2 steps 3-4 on S_1 = ``(X1, y1)``: the clipped-feature mean the step
    privatises and the noise it adds (:func:`alg2_sigma` with n = 2 |S_1|).

    ``sensitivity_factor`` (2: sigma for sensitivity 2T/n) and ``clip=False`` (features not clipped at T) are
    planted bugs for the audits only.
    """
    F = hermite_features(np.asarray(X1, dtype=float), degree)
    if clip:
        F = clip_features(F, clip_radius)
    return coefficient_mean(F, y1), alg2_sigma(clip_radius, epsilon, delta, 2 * F.shape[0], sensitivity_factor)


def alg2_coefficient_step(X1, y1, *, degree: int, clip_radius: float, epsilon: float, delta: float,
                          rng: np.random.Generator, size: int | None = None, project: bool = True,
                          sensitivity_factor: float = 4.0, clip: bool = True):
    """Algorithm 2 steps 3-4 on the raw rows of S_1: the law of :func:`alg2_coefficient_law`, released by
    :func:`coefficient_release` (one vector, or ``size`` of them; ``project=False``: before the projection)."""
    mean, sigma = alg2_coefficient_law(X1, y1, degree=degree, clip_radius=clip_radius, epsilon=epsilon, delta=delta,
                                       sensitivity_factor=sensitivity_factor, clip=clip)
    return _projected_gaussian(mean, sigma, rng, size, project)


def _projected_gaussian(mean: np.ndarray, sigma: float, rng: np.random.Generator, size: int | None, project: bool):
    """``mean + N(0, sigma^2 I)``, projected onto the unit ball unless ``project=False``; one or ``size`` rows."""
    n = 1 if size is None else check_int(size, "size", low=1)
    raw = mean[None, :] + rng.normal(0.0, sigma, size=(n, mean.size))
    out = raw / np.maximum(1.0, np.linalg.norm(raw, axis=1, keepdims=True)) if project else raw
    return out[0] if size is None else out


_POSITIVE = Interval(Real, 0, None, closed="neither")
_OPEN_UNIT = Interval(Real, 0, 1, closed="neither")


class PrivateProperHalfspace(ClassifierMixin, BaseEstimator):
    """Algorithm 2: private proper agnostic learner under Gaussian marginals (Sec. 3, Thm 3.1).

    1. Split S into S_1, S_2 (n/2 each). 2. Release ``m~ = Proj_{B_2}(mean_{S_1} Y psi_bar + Z)`` with
    ``sigma = 4T sqrt(2 ln(1.25/delta))/(eps n)`` (:func:`coefficient_release`; Lemma 3.4).
    3. ``q = <m~, psi_p>`` (unclipped basis), ``M = E[grad q grad q^T]`` (closed form), V = span of the
    eigenvectors with eigenvalue >= alpha'^2/C_0, alpha' = c alpha (Lemma 3.2). 4. A cover of the
    unit sphere of V (:func:`sphere_cover` at resolution alpha') times thresholds j alpha', |j alpha'| <= R,
    R = alpha' ceil(K_0 sqrt(ln(1/alpha'))/alpha'), plus sign(x_1 +- R). 5. Exponential mechanism on S_2.

    Practical only for dim V <= 3: ``max_subspace_dim`` keeps the top eigenvectors (the uncapped
    dimension is reported in ``subspace_dim_uncapped_``). Degree: the theorem's p = ceil(C_0/(c alpha)^2)
    is impractical (erratum: the algorithm box prints ceil(C_0/(c alpha)), the theorem and its proof
    use the square); ``degree`` is a knob. ``clip_radius``: ``None`` = 2 sqrt(D_p) (the only T
    analysed, Lemma 3.5), ``"remark3"`` = sqrt(D_p/(c alpha)) (an extrapolation of Remark 3 to
    Algorithm 2), or a number. eps must be < 1: the classical Gaussian mechanism's calibration is
    proved for eps < 1 only (Lemma 3.4 prints eps in (0, 1]).
    """

    _parameter_constraints = {
        "degree": [Interval(Integral, 1, None, closed="left")],
        "epsilon": [_OPEN_UNIT],
        "delta": [_OPEN_UNIT],
        "alpha": [_OPEN_UNIT],
        "c": [Interval(Real, 0, 1, closed="right")],
        "C0": [_POSITIVE],
        "K0": [_POSITIVE],
        "clip_radius": [None, StrOptions({"remark3"}), _POSITIVE],
        "max_subspace_dim": [Interval(Integral, 1, 3, closed="both")],
    }

    def __init__(self, degree=2, epsilon=0.5, delta=1e-5, alpha=0.2, c=0.5, C0=1.0, K0=1.0, clip_radius=None,
                 max_subspace_dim=2, random_state=None):
        self.degree = degree
        self.epsilon = epsilon
        self.delta = delta
        self.alpha = alpha
        self.c = c
        self.C0 = C0
        self.K0 = K0
        self.clip_radius = clip_radius
        self.max_subspace_dim = max_subspace_dim
        self.random_state = random_state

    def _resolve_T(self, D: int, c: float, alpha: float) -> float:
        if self.clip_radius is None:
            return gaussian_clip_radius(D)
        if isinstance(self.clip_radius, str):
            return remark3_clip_radius(D, c, alpha)
        return float(self.clip_radius)

    def _fit_subspace(self, ap: float, C0: float, kmax: int) -> int:
        """Lemma 3.2: V = span of the eigenvectors of M with eigenvalue >= alpha'^2/C_0 (top ``kmax``)."""
        evals, evecs = np.linalg.eigh(self.gradient_matrix_)
        order = np.argsort(evals)[::-1]
        evals, evecs = evals[order], evecs[:, order]
        keep = evals >= ap**2 / C0
        self.eigenvalues_ = evals
        self.subspace_dim_uncapped_ = int(keep.sum())
        kV = min(self.subspace_dim_uncapped_, kmax)
        self.subspace_ = evecs[:, :kV]
        return kV

    def _cover_errors(self, X2, y2, ap: float, K0: float, kV: int):
        """Step 4: the cover H(q) and the error counts of its members on S_2.

        Returns ``(dirs, ts, errs, const, R)``: unit directions in V, thresholds, their error counts
        (N, J) and those of the constant classifiers sign(x_1 +- R).
        """
        d = X2.shape[1]
        R = ap * math.ceil(K0 * math.sqrt(math.log(1 / ap)) / ap)
        jmax = int(round(R / ap))
        ts = ap * np.arange(-jmax, jmax + 1)
        if kV > 0:
            dirs = sphere_cover(kV, ap) @ self.subspace_.T  # (N, d), unit vectors in V
            errs = error_counts_by_threshold(X2 @ dirs.T, y2, ts)  # (N, J)
        else:
            dirs = np.zeros((0, d))
            errs = np.zeros((0, ts.size), dtype=np.int64)
        e1 = np.zeros(d)
        e1[0] = 1.0
        const = np.array([np.sum(halfspace_predict(X2, e1, s) != y2) for s in (R, -R)])
        return dirs, ts, errs, const, R

    def fit(self, X, y):
        X, y = check_xy(X, y)
        validate_parameters(self)
        eps, delta, alpha, c = float(self.epsilon), float(self.delta), float(self.alpha), float(self.c)
        C0, K0, p, kmax = float(self.C0), float(self.K0), int(self.degree), int(self.max_subspace_dim)
        rng = as_generator(self.random_state)
        n, d = X.shape
        half = n // 2
        if half < 2:
            raise ValueError(f"n = {n} too small: Algorithm 2 needs two halves of >= 2 examples")
        D = n_features(d, p)
        T = self._resolve_T(D, c, alpha)
        self.n_features_in_, self.n_features_poly_, self.clip_radius_ = d, D, T
        X1, y1, X2, y2 = X[:half], y[:half], X[half: 2 * half], y[half: 2 * half]
        _, self.sigma_ = alg2_coefficient_law(X1, y1, degree=p, clip_radius=T, epsilon=eps, delta=delta)
        self.sensitivity_ = 4 * T / (2 * half)
        self.coef_ = alg2_coefficient_step(X1, y1, degree=p, clip_radius=T, epsilon=eps, delta=delta, rng=rng)
        ap = c * alpha
        self.gradient_matrix_ = gradient_matrix(self.coef_, d, p)
        kV = self._fit_subspace(ap, C0, kmax)
        dirs, ts, errs, const, R = self._cover_errors(X2, y2, ap, K0, kV)
        all_errs = np.concatenate([errs.ravel(), const])
        self.n_hypotheses_ = int(all_errs.size)
        flat = exp_mech_select(all_errs, eps, rng)
        if flat < errs.size:
            i, j = divmod(flat, ts.size)
            self.w_, self.b_ = dirs[i], float(ts[j])
        else:
            e1 = np.zeros(d)
            e1[0] = 1.0
            self.w_, self.b_ = e1, float(R if flat == errs.size else -R)
        self.selection_errors_ = all_errs
        self.cover_radius_ = R
        self.guarantee_ = PrivacyGuarantee(
            eps, delta, NeighbouringRelation.REPLACE_ONE,
            "Algorithm 2 / Thm 3.1: Gaussian mechanism on S_1 (sensitivity 4T/n, classical calibration) "
            "and the eps-DP exponential mechanism on S_2; parallel composition", self.dp_event())
        return self

    def dp_event(self):
        """The coefficient release as a Gaussian event under replace-one (sigma / (4T/n), per record)."""
        import dp_accounting

        return dp_accounting.GaussianDpEvent(replace_one_noise_multiplier(self.sigma_ / self.sensitivity_))

    def decision_function(self, X):
        return check_finite_array(X, "X", ndim=2) @ self.w_ + self.b_

    def predict(self, X):
        return sign(self.decision_function(X))
