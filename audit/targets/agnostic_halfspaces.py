"""Audit targets of "Differentially private agnostic learning of halfspaces under Gaussian marginals".

Paper id ``agnostic-halfspaces`` (the source text, ``papers/dp-agnostic-halfspaces.txt``, has lost its
title page, so authors, venue and arXiv id are not known here). Families and targets (registered at import):

* ``proper-halfspace`` -- Algorithm 2's coefficient release ``Proj(mean_{S_1} Y psi_bar + Z)``
  (Lemma 3.4) with worst-case neighbours: a point with ``||psi_p(x)|| >= T`` (clipped to norm T) whose
  label is flipped, so the mean moves by exactly 4T/n. The attack is the exact Gaussian likelihood
  ratio of the pre-projection release (monotone in ``<o, u>``, u the shift direction); the
  projection is post-processing. Planted bugs: sigma calibrated for sensitivity 2T/n instead of
  4T/n; features not clipped.
* ``polynomial-regression`` -- Algorithm 1's selection step (Lemma B.5): the exponential mechanism over
  kM candidates whose error counts move by at most 1 when one validation point changes; the
  attack is the exact likelihood ratio (the indicator of the candidates whose count moved).
* ``semi-agnostic`` -- Algorithm 3's Laplace label mean, Gaussian initial direction and one
  Gaussian gradient step (noise in w-perp). Planted bug: Claim 4.3's printed sigma without
  the factor L (an erratum: Algorithm 3, Prop. F.1 and Claim 4.5 have it) at d = 4 (L = 4).

* ``polynomial-regression`` -- Algorithm 1 end to end (``alg1-end-to-end``): the released
  hypothesis ``[v_j^, t_l^]`` of the whole learner (DP-ERM, thresholds, selection), batched by
  :func:`privbound.learners.agnostic_halfspaces.regression.alg1_release_batch`; neighbours differ in the label
  of one training point (x = 50, d = 1, p = 1, so its clipped features have norm T = 1; the other block points
  sit at x = 0 with balanced labels, so their subgradients cancel and the canary's push is the whole signal).
  The attack is the projection of the released coefficients on the canary's feature direction. Planted bugs:
  the ERM noise calibrated for ONE step (composition over the K iterations forgotten) and features not clipped.
* ``semi-agnostic`` -- Algorithm 4 end to end
  (:func:`privbound.learners.agnostic_halfspaces.semi_agnostic.alg4_release_batch`): the selected
  ``[w^, tau^]`` with the neighbour in part 1's D_tau (attack: tau^) or in part 1's D_init
  (``n_iter=0`` so the initial direction is released; attack: its coordinate along the canary). Planted
  bugs: Laplace scale for sensitivity 1/m_0 instead of 2/m_0; Claim 4.3's printed sigma (no L).

Each correct target's exact privacy curve is below its claim (the classical calibrations are
loose); each bug's true epsilon at the claimed delta is well above the claim, so the audits at
``default_trials`` flag the bugs and not the correct targets (``tests/audit/targets/test_agnostic_halfspaces.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privbound.audit.targets.registry import Target, TightEpsilon, register_target
from privbound.learners.agnostic_halfspaces.common import (
    HalfspaceProblem,
    exp_mech_select,
    gaussian_clip_radius,
    gaussian_epsilon,
    laplace_epsilon,
    selection_pair_epsilon,
)
from privbound.learners.agnostic_halfspaces.dpsas import (
    clip_rows,
    dpsas_clip_norm,
    dpsas_gradient,
    dpsas_gradient_release,
    dpsas_initial_direction,
    dpsas_initial_mean,
    dpsas_label_mean,
    dpsas_laplace_scale,
    dpsas_noise_multiplier,
    dpsas_sigma,
)
from privbound.learners.agnostic_halfspaces.hermite import clip_features, hermite_features, n_features
from privbound.learners.accounting import replace_one_noise_multiplier
from privbound.learners.agnostic_halfspaces.proper import alg2_noise_multiplier, alg2_sigma, coefficient_mean, coefficient_release
from privbound.learners.agnostic_halfspaces.regression import PrivatePolynomialRegression, alg1_pair_epsilon, alg1_release_batch
from privbound.learners.agnostic_halfspaces.semi_agnostic import SemiAgnosticHalfspace, alg4_pair_epsilon, alg4_release_batch
from privbound.learners.neighbouring import NeighbouringRelation as NR

PAPER = "agnostic-halfspaces"


@dataclass(frozen=True)
class Alg2CoefficientRelease:
    """Algorithm 2 steps 3-4 on data ``(X_1, y_1)`` (|S_1| = n/2), batched.

    The release is :func:`~privbound.learners.agnostic_halfspaces.proper.coefficient_release`.

    ``sensitivity_factor=2`` (BUG: sigma for sensitivity 2T/n) and ``clip=False`` (BUG: features not
    clipped) are the planted bugs; the defaults are the paper's algorithm.
    """

    degree: int
    epsilon: float
    delta: float
    sensitivity_factor: float = 4.0
    clip: bool = True

    def clip_radius(self, d: int) -> float:
        return gaussian_clip_radius(n_features(d, self.degree))  # T = 2 sqrt(D_p) (Lemma 3.5)

    def sigma(self, X1) -> float:
        return alg2_sigma(self.clip_radius(X1.shape[1]), self.epsilon, self.delta, 2 * X1.shape[0],
                          self.sensitivity_factor)

    def features(self, X1):
        F = hermite_features(X1, self.degree)
        return clip_features(F, self.clip_radius(X1.shape[1])) if self.clip else F

    def sample(self, data, rng, size):
        X1, y1 = data
        return coefficient_release(self.features(X1), y1, self.sigma(X1), rng, size)

    def __call__(self, data, rng):
        return self.sample(data, rng, 1)[0]

    def dp_event(self):
        # sigma / (4T/n) = sqrt(2 ln(1.25/delta)) / eps * factor/4, per record under replace-one
        import dp_accounting

        z = alg2_noise_multiplier(self.epsilon, self.delta) * self.sensitivity_factor / 4.0
        return dp_accounting.GaussianDpEvent(replace_one_noise_multiplier(z))


@dataclass(frozen=True)
class Alg1Selection:
    """Algorithm 1 step 5 on a vector of validation error counts (data), batched Gumbel-max."""

    epsilon: float

    def sample(self, data, rng, size):
        return exp_mech_select(np.asarray(data, dtype=float), self.epsilon, rng, size)

    def __call__(self, data, rng):
        return exp_mech_select(np.asarray(data, dtype=float), self.epsilon, rng)


@dataclass(frozen=True)
class DpsasLabelMean:
    """Algorithm 3 step 4 on the labels of D_tau (data)."""

    epsilon: float

    def sample(self, data, rng, size):
        return dpsas_label_mean(data, self.epsilon, rng, size)

    def __call__(self, data, rng):
        return dpsas_label_mean(data, self.epsilon, rng)

    def dp_event(self):
        import dp_accounting

        # scale (2/(eps m_0)) / sensitivity (2/m_0), per record under replace-one
        return dp_accounting.LaplaceDpEvent(replace_one_noise_multiplier(1.0 / self.epsilon))


@dataclass(frozen=True)
class DpsasGaussianStep:
    """Algorithm 3 step 6 (``w=None``) or one step-9.3 gradient release at a fixed unit ``w``.

    Data ``(X, y)`` of one batch (rows clipped to L = 2 sqrt(d) inside). ``with_L=False`` is the
    planted bug (Claim 4.3's printed sigma).
    """

    epsilon: float
    delta: float
    w: tuple[float, ...] | None = None
    a: float = 1.0
    b: float = 0.0
    with_L: bool = True

    def sigma(self, X) -> float:
        return dpsas_sigma(dpsas_clip_norm(X.shape[1]), self.epsilon, self.delta, X.shape[0], self.with_L)

    def sample(self, data, rng, size):
        X, y = data
        Xc = clip_rows(X, dpsas_clip_norm(X.shape[1]))
        if self.w is None:
            return dpsas_initial_direction(Xc, y, self.sigma(X), rng, size)
        return dpsas_gradient_release(Xc, y, np.asarray(self.w), self.a, self.b, self.sigma(X), rng, size)

    def __call__(self, data, rng):
        return self.sample(data, rng, 1)[0]

    def dp_event(self):
        # sigma / (2L/m_0) = sqrt(2 ln(2/delta))/eps (times 1/L for the bug at the L of the pair; d = 4 -> L = 4),
        # per record under replace-one
        import dp_accounting

        z = dpsas_noise_multiplier(self.epsilon, self.delta)
        return dp_accounting.GaussianDpEvent(replace_one_noise_multiplier(z if self.with_L else z / 4.0))


def _projection_score(direction: np.ndarray):
    u = np.asarray(direction, dtype=float)
    u = u / np.linalg.norm(u)

    def score(outputs):
        return np.asarray(outputs, dtype=float) @ u

    return score


def gaussian_llr(direction: np.ndarray, center: np.ndarray, shift: float, sigma: float):
    """Exact log p_d0(o)/p_d1(o) of N(m_0, s^2 I) vs N(m_0 + shift u, s^2 I), as a function of <o - m_0, u>."""
    u = np.asarray(direction, dtype=float)
    u = u / np.linalg.norm(u)
    c = np.asarray(center, dtype=float)

    def llr(outputs):
        z = (np.asarray(outputs, dtype=float) - c) @ u
        return (shift**2 / 2 - shift * z) / sigma**2

    return llr


# ---------------------------------------------------------------- tight epsilons of the targets


def _alg2_tight(mech: Alg2CoefficientRelease, d0, d1, delta: float) -> TightEpsilon:
    """The coefficient release on the pair: the Gaussian mechanism with the realised change of the clipped mean."""
    (X1, y0), (_, y1) = d0, d1
    F, sigma = mech.features(X1), mech.sigma(X1)
    shift = float(np.linalg.norm(coefficient_mean(F, y0) - coefficient_mean(F, y1)))
    worst = gaussian_epsilon(4 * mech.clip_radius(X1.shape[1]) / (2 * X1.shape[0]), sigma, delta) if mech.clip else math.inf
    return TightEpsilon(gaussian_epsilon(shift, sigma, delta),
                        f"exact Gaussian mechanism on this pair (the mean moves by {shift:.4g}, sigma = {sigma:.4g}) "
                        f"before the projection onto the unit ball (post-processing); worst case over pairs: {worst:.4g}")


def _dpsas_label_mean_tight(mech: DpsasLabelMean, y0, y1, delta: float) -> TightEpsilon:
    """The Laplace label mean on the pair: the realised change of the mean over the scale the step uses."""
    m0 = np.asarray(y0).size
    shift, scale = abs(float(np.mean(y0) - np.mean(y1))), dpsas_laplace_scale(mech.epsilon, m0)
    return TightEpsilon(laplace_epsilon(shift, scale, delta),
                        f"exact Laplace mechanism on this pair (the mean moves by {shift:.4g}, scale = {scale:.4g}); "
                        f"worst case over pairs: {laplace_epsilon(2.0 / m0, scale, delta):.4g}")


def _dpsas_gaussian_tight(mech: DpsasGaussianStep, d0, d1, delta: float) -> TightEpsilon:
    """A DPSAS Gaussian step on the pair: the realised change of its statistic (in w-perp for a gradient step)."""
    (X, y0), (_, y1) = d0, d1
    L = dpsas_clip_norm(X.shape[1])
    Xc, sigma = clip_rows(X, L), mech.sigma(X)
    if mech.w is None:
        stat = [dpsas_initial_mean(Xc, y) for y in (y0, y1)]
    else:
        stat = [dpsas_gradient(Xc, y, np.asarray(mech.w), mech.a, mech.b) for y in (y0, y1)]
    shift = float(np.linalg.norm(stat[0] - stat[1]))
    return TightEpsilon(gaussian_epsilon(shift, sigma, delta),
                        f"exact Gaussian mechanism on this pair (the statistic moves by {shift:.4g}, sigma = {sigma:.4g}"
                        f"{', noise and move in w-perp' if mech.w is not None else ''}); worst case over pairs: "
                        f"{gaussian_epsilon(2 * L / X.shape[0], sigma, delta):.4g}")


def _selection_tight(epsilon: float, counts0, counts1, delta: float) -> TightEpsilon:
    """The selection on the pair's two vectors of error counts (exact), with its worst case."""
    moves = np.unique(np.asarray(counts1) - np.asarray(counts0))
    return TightEpsilon(selection_pair_epsilon(counts0, counts1, epsilon, delta),
                        f"exact hockey-stick divergence of the selection law on this pair (counts move by "
                        f"{moves.astype(int).tolist()}); worst case over pairs: eps = {epsilon:g} (a supremum, with counts "
                        f"moving both ways; moves of one sign reach at most eps/2)")


# ---------------------------------------------------------------- neighbouring pairs


def alg2_pair(d: int = 2, degree: int = 2, half: int = 500, seed: int = 7):
    """S_1 of ``half`` Gaussian rows; row 0 is x = (3, ..., 3) with ||psi_p(x)|| > T; d1 flips its label."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((half, d))
    X[0] = 3.0
    y = np.where(rng.random(half) < 0.5, 1.0, -1.0)
    y1 = y.copy()
    y1[0] = -y[0]
    T = gaussian_clip_radius(n_features(d, degree))
    assert np.linalg.norm(hermite_features(X[:1], degree)) >= T
    return (X, y), (X, y1)


def dpsas_pair(d: int = 4, m0: int = 50, seed: int = 11, orthogonal_to=None):
    """A batch of m_0 rows; row 0 has norm exactly L = 2 sqrt(d) (orthogonal to ``orthogonal_to``); d1 flips its label."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m0, d))
    e = np.zeros(d)
    e[-1] = 1.0
    X[0] = dpsas_clip_norm(d) * e
    y = np.where(rng.random(m0) < 0.5, 1.0, -1.0)
    y1 = y.copy()
    y1[0] = -y[0]
    return (X, y), (X, y1)


def _register() -> None:
    # ------------------------------------------------------------ Algorithm 2
    eps2, delta2 = 0.9, 1e-3
    d0, d1 = alg2_pair()
    X0 = d0[0]
    shift_dir = clip_features(hermite_features(X0[:1], 2), gaussian_clip_radius(n_features(2, 2)))[0]
    for name, mech, bug, desc in (
        ("alg2-coefficients", Alg2CoefficientRelease(2, eps2, delta2), False,
         "Algorithm 2 coefficient release, sigma = 4T sqrt(2 ln(1.25/delta))/(eps n), worst-case label flip"),
        ("alg2-coefficients-sensitivity-2T", Alg2CoefficientRelease(2, eps2, delta2, sensitivity_factor=2.0), True,
         "BUG: sigma calibrated for sensitivity 2T/n instead of 4T/n (true mu doubles)"),
        ("alg2-coefficients-unclipped", Alg2CoefficientRelease(2, eps2, delta2, clip=False), True,
         "BUG: features not clipped at T (the flipped point has ||psi|| = 12.8 > T = 4.9)"),
    ):
        register_target(Target(
            name, "proper-halfspace", mech, d0, d1, eps2, delta2,
            neighbouring=NR.REPLACE_ONE, canary="label of a point with ||psi_p(x)|| >= T flipped", planted_bug=bug,
            description=desc, paper=PAPER, score=_projection_score(shift_dir * (-d0[1][0])),
            default_trials=400_000, claim_source="Lemma 3.4 / Thm 3.1",
            tight_epsilon=lambda mech=mech: _alg2_tight(mech, d0, d1, delta2),
        ))

    # ------------------------------------------------------------ Algorithm 1 selection
    eps1 = 1.0
    counts0 = np.array([30.0, 31, 33, 36, 30, 32, 35, 40])  # k = 2 blocks x M = 4 thresholds
    moved = np.array([0, 1, 0, 1, 1, 0, 1, 0], dtype=float)  # the changed validation point's errors
    counts1 = counts0 + moved
    register_target(Target(
        "alg1-selection", "polynomial-regression", Alg1Selection(eps1), counts0, counts1, eps1,
        neighbouring=NR.REPLACE_ONE, canary="one validation point replaced (every error count moves by <= 1)",
        description="Algorithm 1 step 5: exponential mechanism P ~ exp(-eps m err^/2) over kM = 8 candidates",
        paper=PAPER, score=lambda o: -moved[np.asarray(o, dtype=int)],
        default_trials=200_000, claim_source="Lemma B.5 / Prop. C.1",
        tight_epsilon=lambda: _selection_tight(eps1, counts0, counts1, 0.0),
    ))

    # ------------------------------------------------------------ Algorithm 3
    eps3, delta3 = 0.9, 1e-3
    ylab = np.r_[np.ones(30), -np.ones(20)]
    ylab1 = ylab.copy()
    ylab1[0] = -1.0
    register_target(Target(
        "dpsas-label-mean", "semi-agnostic", DpsasLabelMean(1.0), ylab, ylab1, 1.0,
        neighbouring=NR.REPLACE_ONE, canary="one label of D_tau flipped",
        description="Algorithm 3 step 4: mean label + Lap(2/(eps m_0)), m_0 = 50",
        paper=PAPER, score=lambda o: -np.asarray(o, dtype=float), default_trials=200_000,
        claim_source="Claim 4.6 / Algorithm 3",
        tight_epsilon=lambda: _dpsas_label_mean_tight(DpsasLabelMean(1.0), ylab, ylab1, 0.0),
    ))
    p0, p1 = dpsas_pair()
    e_last = np.zeros(4)
    e_last[-1] = 1.0
    sgn = -p0[1][0]  # flipping y_0 moves the mean by 2 L y_1(0) e / m_0
    register_target(Target(
        "dpsas-initial-direction", "semi-agnostic", DpsasGaussianStep(eps3, delta3), p0, p1, eps3, delta3,
        neighbouring=NR.REPLACE_ONE, canary="label of a point with ||x|| = L flipped",
        description="Algorithm 3 step 6: mean of x y + N(0, sigma^2 I), sigma = 2L sqrt(2 ln(2/delta))/(eps m_0), d = 4",
        paper=PAPER, score=_projection_score(sgn * e_last), default_trials=400_000,
        claim_source="Claim 4.5 / Algorithm 3 line 6",
        tight_epsilon=lambda: _dpsas_gaussian_tight(DpsasGaussianStep(eps3, delta3), p0, p1, delta3),
    ))
    w_fixed = (1.0, 0.0, 0.0, 0.0)  # x_0 is orthogonal to w and inside the band |w.x - b| <= a
    register_target(Target(
        "dpsas-gradient-step", "semi-agnostic", DpsasGaussianStep(eps3, delta3, w=w_fixed), p0, p1, eps3, delta3,
        neighbouring=NR.REPLACE_ONE, canary="label of a point with ||x|| = L, x in w-perp, flipped",
        description="Algorithm 3 step 9.3: ramp-loss gradient + N(0, sigma^2 (I - w w^T)), d = 4",
        paper=PAPER, score=_projection_score(-sgn * e_last), default_trials=400_000,
        claim_source="Claim 4.3 [corrected sigma] / Algorithm 3",
        tight_epsilon=lambda: _dpsas_gaussian_tight(DpsasGaussianStep(eps3, delta3, w=w_fixed), p0, p1, delta3),
    ))
    register_target(Target(
        "dpsas-printed-sigma", "semi-agnostic", DpsasGaussianStep(eps3, delta3, with_L=False), p0, p1, eps3, delta3,
        planted_bug=True, neighbouring=NR.REPLACE_ONE, canary="label of a point with ||x|| = L flipped",
        description="BUG: Claim 4.3's printed sigma = 2 sqrt(2 ln(2/delta))/(eps m_0), no factor L = 4 (d = 4)",
        paper=PAPER, score=_projection_score(sgn * e_last), default_trials=100_000,
        claim_source="Claim 4.3 as printed (erratum: the factor L is missing)",
        tight_epsilon=lambda: _dpsas_gaussian_tight(DpsasGaussianStep(eps3, delta3, with_L=False), p0, p1, delta3),
    ))


# ---------------------------------------------------------------- end-to-end targets


@dataclass(frozen=True)
class Alg1EndToEnd:
    """Algorithm 1's released hypothesis ``[v_j^, t_l^]``, batched; ``__call__`` runs the learner itself."""

    epsilon: float
    delta: float
    compose: bool = True
    clip: bool = True
    params: tuple = (("degree", 1), ("alpha", 0.2), ("n_blocks", 1), ("n_grid", 4), ("n_validation", 20),
                     ("clip_radius", 1.0))

    def sample(self, data, rng, size):
        X, y = data
        return alg1_release_batch(X, y, epsilon=self.epsilon, delta=self.delta, rng=rng, size=size,
                                    compose=self.compose, clip=self.clip, **dict(self.params))

    def __call__(self, data, rng):
        if not (self.compose and self.clip):
            return self.sample(data, rng, 1)[0]
        X, y = data
        est = PrivatePolynomialRegression(epsilon=self.epsilon, delta=self.delta, random_state=rng,
                                            **dict(self.params)).fit(X, y)
        return np.r_[est.selected_coef_, est.threshold_]


@dataclass(frozen=True)
class Alg4EndToEnd:
    """Algorithm 4's released ``[w^, tau^]``, batched; ``__call__`` runs the learner itself."""

    epsilon: float
    delta: float
    alpha: float = 0.3
    n_validation: int = 50
    dpsas_params: tuple = ()
    bugs: tuple = ()

    def sample(self, data, rng, size):
        X, y = data
        return alg4_release_batch(X, y, alpha=self.alpha, epsilon=self.epsilon, delta=self.delta,
                                  n_validation=self.n_validation, dpsas_params=dict(self.dpsas_params), rng=rng,
                                  size=size, **dict(self.bugs))

    def __call__(self, data, rng):
        if self.bugs:
            return self.sample(data, rng, 1)[0]
        X, y = data
        est = SemiAgnosticHalfspace(alpha=self.alpha, epsilon=self.epsilon, delta=self.delta,
                                    n_validation=self.n_validation, dpsas_params=dict(self.dpsas_params),
                                    random_state=rng).fit(X, y)
        return np.r_[est.coef_, est.threshold_]


def alg1_end_to_end_pair(n_zero: int = 20, m: int = 20, seed: int = 3):
    """One block: the canary x = 50 (row 0, label +1; flipped in d1) and ``n_zero`` points at x = 0 with
    alternating labels; then ``m`` Gaussian validation points labelled by sign(x). d = 1, p = 1: psi = (1, x)."""
    rng = np.random.default_rng(seed)
    Xb = np.r_[[[50.0]], np.zeros((n_zero, 1))]
    yb = np.r_[1.0, np.tile([1.0, -1.0], n_zero // 2)]
    Xv = rng.standard_normal((m, 1))
    X = np.r_[Xb, Xv]
    y0 = np.r_[yb, np.where(Xv[:, 0] >= 0, 1.0, -1.0)]
    y1 = y0.copy()
    y1[0] = -1.0
    return (X, y0), (X, y1)


ALG4_D, ALG4_M0 = 4, 25


def alg4_pair(where: str, seed: int = 5):
    """n = 250 rows of a d = 4 Gaussian problem (10% noise); K = 2 parts of 100 (part 1: DPSAS at eta = 0.33,
    T = 2 iterations, m_0 = 25), |D_val| = 50. The canary is row m_0 (first of part 1's D_tau) for
    ``where="tau"`` or row 0 (first of D_init, moved to x = L e_4, ||x|| = L) for ``where="init"``; d1 flips its label."""
    rng = np.random.default_rng(seed)
    prob = HalfspaceProblem(ALG4_D, (1.0, 0.5, -0.5, 0.0), t=0.2, rate=0.1)
    X, y = prob.sample(250, rng)
    i = ALG4_M0 if where == "tau" else 0
    if where == "init":
        X[i] = 0.0
        X[i, -1] = dpsas_clip_norm(ALG4_D)
    y1 = y.copy()
    y1[i] = -y[i]
    return (X, y), (X, y1)


def _register_end_to_end() -> None:
    # ------------------------------------------------------------ Algorithm 1 end to end
    eps1, delta1 = 1.0, 1e-3
    a0, a1 = alg1_end_to_end_pair()
    u = np.array([1.0, 50.0]) / math.hypot(1.0, 50.0)  # direction of psi_bar(50) = (1, 50)/||(1, 50)|| (T = 1)

    def alg1_score(o, u=u):
        return -np.asarray(o, dtype=float)[:, :2] @ u  # d1 (label -1) pushes v towards -u

    for name, mech, bug, desc in (
        ("alg1-end-to-end", Alg1EndToEnd(eps1, delta1), False,
         "Algorithm 1 end to end: DP-ERM (sigma_g = (2T/n_0) sqrt(K) s(eps, delta)), thresholds, selection; "
         "one training label flipped"),
        ("alg1-erm-noise-one-step", Alg1EndToEnd(eps1, delta1, compose=False), True,
         "BUG: ERM noise calibrated for one step (composition over K iterations forgotten; mu x sqrt(K))"),
        ("alg1-features-unclipped", Alg1EndToEnd(eps1, delta1, clip=False), True,
         "BUG: features not clipped at T (the canary's ||psi|| = 50 > T = 1)"),
    ):
        register_target(Target(
            name, "polynomial-regression", mech, a0, a1, eps1, delta1,
            neighbouring=NR.REPLACE_ONE, canary="label of one training point with ||psi_p(x)|| >= T flipped", planted_bug=bug,
            description=desc, paper=PAPER, score=alg1_score, default_trials=200_000,
            claim_source="Prop. C.1 / Thm 2.1",
            tight_epsilon=lambda mech=mech: TightEpsilon(*alg1_pair_epsilon(
                a0, a1, epsilon=mech.epsilon, delta=mech.delta, compose=mech.compose, clip=mech.clip, **dict(mech.params))),
        ))

    # ------------------------------------------------------------ Algorithm 4 end to end
    eps4, delta4 = 0.9, 1e-3
    t0, t1 = alg4_pair("tau")
    s_tau = -t0[1][ALG4_M0]  # flipping that label moves y^ (hence tau^) by 2 s_tau/m_0

    def tau_score(o, s=s_tau):
        return s * np.asarray(o, dtype=float)[:, -1]

    i0, i1 = alg4_pair("init")
    s_init = -i0[1][0]

    def init_score(o, s=s_init):
        return s * np.asarray(o, dtype=float)[:, ALG4_D - 1]

    for name, mech, pair, score, bug, desc in (
        ("alg4-end-to-end-threshold", Alg4EndToEnd(eps4, delta4), (t0, t1), tau_score, False,
         "Algorithm 4 end to end (K = 2 DPSAS runs + selection), neighbour in part 1's D_tau (Laplace step)"),
        ("alg4-laplace-sensitivity-1", Alg4EndToEnd(eps4, delta4, bugs=(("laplace_factor", 1.0),)), (t0, t1),
         tau_score, True, "BUG: DPSAS's Laplace scale 1/(eps m_0) (sensitivity of a mean of +-1 labels is 2/m_0)"),
        ("alg4-end-to-end-direction", Alg4EndToEnd(eps4, delta4, dpsas_params=(("n_iter", 0),)), (i0, i1),
         init_score, False,
         "Algorithm 4 end to end with DPSAS n_iter = 0 (released direction = private initializer), "
         "neighbour in part 1's D_init"),
        ("alg4-printed-sigma", Alg4EndToEnd(eps4, delta4, dpsas_params=(("n_iter", 0),), bugs=(("with_L", False),)),
         (i0, i1), init_score, True, "BUG: Claim 4.3's printed sigma without L = 4 in every DPSAS run (d = 4)"),
    ):
        register_target(Target(
            name, "semi-agnostic", mech, pair[0], pair[1], eps4, delta4,
            neighbouring=NR.REPLACE_ONE, canary="one label of part 1 flipped", planted_bug=bug, description=desc, paper=PAPER,
            score=score, default_trials=200_000 if "direction" in name or "sigma" in name else 100_000,
            claim_source="Thm 4.1 / Prop. F.1",
            tight_epsilon=lambda mech=mech, pair=pair: TightEpsilon(*alg4_pair_epsilon(
                *pair, alpha=mech.alpha, epsilon=mech.epsilon, delta=mech.delta, n_validation=mech.n_validation,
                dpsas_params=dict(mech.dpsas_params), **dict(mech.bugs))),
        ))


_register()
_register_end_to_end()
