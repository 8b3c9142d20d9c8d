"""Audit targets of the agnostic-halfspaces paper (notes Sec. 10, P1, P2, P4).

Families and targets (registered at import):

* ``proper-halfspace`` -- Algorithm 2's coefficient release ``Proj(mean_{S_1} Y psi_bar + Z)``
  (P1) with worst-case neighbours: a point with ``||psi_p(x)|| >= T`` (clipped to norm T) whose
  label is flipped, so the mean moves by exactly 4T/n. The attack is the exact Gaussian likelihood
  ratio of the pre-projection release (monotone in ``<o, u>``, u the shift direction); the
  projection is post-processing. Planted bugs: sigma calibrated for sensitivity 2T/n instead of
  4T/n; features not clipped.
* ``polynomial-regression`` -- Algorithm 1's selection step (P2): the exponential mechanism over
  kM candidates whose error counts move by at most 1 when one validation point changes; the
  attack is the exact likelihood ratio (the indicator of the candidates whose count moved).
* ``semi-agnostic`` -- Algorithm 3's Laplace label mean, Gaussian initial direction and one
  Gaussian gradient step (noise in w-perp) (P4). Planted bug: Claim 4.3's printed sigma without
  the factor L (notes Sec. 11 item 3) at d = 4 (L = 4).

Each correct target's exact privacy curve is below its claim (the classical calibrations are
loose); each bug's true epsilon at the claimed delta is well above the claim, so the audits at
``default_trials`` flag the bugs and not the correct targets (``tests/test_targets_agnostic_halfspaces.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import dp_accounting
import numpy as np

from audit.targets import Target, register_target
from learners import agnostic as A
from learners.hermite import clip_features, hermite_features, n_features

PAPER = "agnostic-halfspaces"


@dataclass(frozen=True)
class Alg2CoefficientRelease:
    """Algorithm 2 steps 3-4 on data ``(X_1, y_1)`` (|S_1| = n/2), batched via :func:`coefficient_release`.

    ``sensitivity_factor=2`` (BUG: sigma for sensitivity 2T/n) and ``clip=False`` (BUG: features not
    clipped) are the planted bugs; the defaults are the paper's algorithm.
    """

    degree: int
    epsilon: float
    delta: float
    sensitivity_factor: float = 4.0
    clip: bool = True

    def clip_radius(self, d: int) -> float:
        return 2 * math.sqrt(n_features(d, self.degree))  # T = 2 sqrt(D_p) (Lemma 3.5)

    def sigma(self, X1) -> float:
        return A.alg2_sigma(self.clip_radius(X1.shape[1]), self.epsilon, self.delta, 2 * X1.shape[0],
                            self.sensitivity_factor)

    def features(self, X1):
        F = hermite_features(X1, self.degree)
        return clip_features(F, self.clip_radius(X1.shape[1])) if self.clip else F

    def sample(self, data, rng, size):
        X1, y1 = data
        return A.coefficient_release(self.features(X1), y1, self.sigma(X1), rng, size)

    def __call__(self, data, rng):
        return self.sample(data, rng, 1)[0]

    def dp_event(self):
        # noise multiplier sigma / (4T/n) = sqrt(2 ln(1.25/delta)) / eps * factor/4
        z = math.sqrt(2 * math.log(1.25 / self.delta)) / self.epsilon * self.sensitivity_factor / 4.0
        return dp_accounting.GaussianDpEvent(z)


@dataclass(frozen=True)
class Alg1Selection:
    """Algorithm 1 step 5 on a vector of validation error counts (data), batched Gumbel-max."""

    epsilon: float

    def sample(self, data, rng, size):
        return A.exp_mech_select(np.asarray(data, dtype=float), self.epsilon, rng, size)

    def __call__(self, data, rng):
        return A.exp_mech_select(np.asarray(data, dtype=float), self.epsilon, rng)


@dataclass(frozen=True)
class DpsasLabelMean:
    """Algorithm 3 step 4 on the labels of D_tau (data)."""

    epsilon: float

    def sample(self, data, rng, size):
        return A.dpsas_label_mean(data, self.epsilon, rng, size)

    def __call__(self, data, rng):
        return A.dpsas_label_mean(data, self.epsilon, rng)

    def dp_event(self):
        return dp_accounting.LaplaceDpEvent(1.0 / self.epsilon)  # scale (2/(eps m_0)) / sensitivity (2/m_0)


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
        return A.dpsas_sigma(2 * math.sqrt(X.shape[1]), self.epsilon, self.delta, X.shape[0], self.with_L)

    def sample(self, data, rng, size):
        X, y = data
        Xc = A.clip_rows(X, 2 * math.sqrt(X.shape[1]))
        if self.w is None:
            return A.dpsas_initial_direction(Xc, y, self.sigma(X), rng, size)
        return A.dpsas_gradient_release(Xc, y, np.asarray(self.w), self.a, self.b, self.sigma(X), rng, size)

    def __call__(self, data, rng):
        return self.sample(data, rng, 1)[0]

    def dp_event(self):
        # sigma / (2L/m_0) = sqrt(2 ln(2/delta))/eps (times 1/L for the bug at the L of the pair; d = 4 -> L = 4)
        z = math.sqrt(2 * math.log(2 / self.delta)) / self.epsilon
        return dp_accounting.GaussianDpEvent(z if self.with_L else z / 4.0)


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


# ---------------------------------------------------------------- neighbouring pairs


def alg2_pair(d: int = 2, degree: int = 2, half: int = 500, seed: int = 7):
    """S_1 of ``half`` Gaussian rows; row 0 is x = (3, ..., 3) with ||psi_p(x)|| > T; d1 flips its label."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((half, d))
    X[0] = 3.0
    y = np.where(rng.random(half) < 0.5, 1.0, -1.0)
    y1 = y.copy()
    y1[0] = -y[0]
    T = 2 * math.sqrt(n_features(d, degree))
    assert np.linalg.norm(hermite_features(X[:1], degree)) >= T
    return (X, y), (X, y1)


def dpsas_pair(d: int = 4, m0: int = 50, seed: int = 11, orthogonal_to=None):
    """A batch of m_0 rows; row 0 has norm exactly L = 2 sqrt(d) (orthogonal to ``orthogonal_to``); d1 flips its label."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m0, d))
    e = np.zeros(d)
    e[-1] = 1.0
    X[0] = 2 * math.sqrt(d) * e
    y = np.where(rng.random(m0) < 0.5, 1.0, -1.0)
    y1 = y.copy()
    y1[0] = -y[0]
    return (X, y), (X, y1)


def _register() -> None:
    # ------------------------------------------------------------ Algorithm 2 (P1)
    eps2, delta2 = 0.9, 1e-3
    d0, d1 = alg2_pair()
    X0 = d0[0]
    shift_dir = clip_features(hermite_features(X0[:1], 2), 2 * math.sqrt(n_features(2, 2)))[0]
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
            neighbouring="replace-one (label of a point with ||psi_p(x)|| >= T flipped)", planted_bug=bug,
            description=desc, paper=PAPER, score=_projection_score(shift_dir * (-d0[1][0])),
            default_trials=400_000, claim_source="Lemma 3.4 / Thm 3.1 (notes Sec. 10 P1)",
        ))

    # ------------------------------------------------------------ Algorithm 1 selection (P2)
    eps1 = 1.0
    counts0 = np.array([30.0, 31, 33, 36, 30, 32, 35, 40])  # k = 2 blocks x M = 4 thresholds
    moved = np.array([0, 1, 0, 1, 1, 0, 1, 0], dtype=float)  # the changed validation point's errors
    counts1 = counts0 + moved
    register_target(Target(
        "alg1-selection", "polynomial-regression", Alg1Selection(eps1), counts0, counts1, eps1,
        neighbouring="one validation point replaced (every error count moves by <= 1)",
        description="Algorithm 1 step 5: exponential mechanism P ~ exp(-eps m err^/2) over kM = 8 candidates",
        paper=PAPER, score=lambda o: -moved[np.asarray(o, dtype=int)],
        default_trials=200_000, claim_source="Lemma B.5 / Prop. C.1 (notes Sec. 10 P2)",
    ))

    # ------------------------------------------------------------ Algorithm 3 (P4)
    eps3, delta3 = 0.9, 1e-3
    ylab = np.r_[np.ones(30), -np.ones(20)]
    ylab1 = ylab.copy()
    ylab1[0] = -1.0
    register_target(Target(
        "dpsas-label-mean", "semi-agnostic", DpsasLabelMean(1.0), ylab, ylab1, 1.0,
        neighbouring="replace-one (one label of D_tau flipped)",
        description="Algorithm 3 step 4: mean label + Lap(2/(eps m_0)), m_0 = 50",
        paper=PAPER, score=lambda o: -np.asarray(o, dtype=float), default_trials=200_000,
        claim_source="Claim 4.6 / Algorithm 3 (notes Sec. 10 P4)",
    ))
    p0, p1 = dpsas_pair()
    e_last = np.zeros(4)
    e_last[-1] = 1.0
    sgn = -p0[1][0]  # flipping y_0 moves the mean by 2 L y_1(0) e / m_0
    register_target(Target(
        "dpsas-initial-direction", "semi-agnostic", DpsasGaussianStep(eps3, delta3), p0, p1, eps3, delta3,
        neighbouring="replace-one (label of a point with ||x|| = L flipped)",
        description="Algorithm 3 step 6: mean of x y + N(0, sigma^2 I), sigma = 2L sqrt(2 ln(2/delta))/(eps m_0), d = 4",
        paper=PAPER, score=_projection_score(sgn * e_last), default_trials=400_000,
        claim_source="Claim 4.5 / Algorithm 3 line 6 (notes Sec. 10 P4)",
    ))
    w_fixed = (1.0, 0.0, 0.0, 0.0)  # x_0 is orthogonal to w and inside the band |w.x - b| <= a
    register_target(Target(
        "dpsas-gradient-step", "semi-agnostic", DpsasGaussianStep(eps3, delta3, w=w_fixed), p0, p1, eps3, delta3,
        neighbouring="replace-one (label of a point with ||x|| = L, x in w-perp, flipped)",
        description="Algorithm 3 step 9.3: ramp-loss gradient + N(0, sigma^2 (I - w w^T)), d = 4",
        paper=PAPER, score=_projection_score(-sgn * e_last), default_trials=400_000,
        claim_source="Claim 4.3 [corrected sigma] / Algorithm 3 (notes Sec. 10 P4)",
    ))
    register_target(Target(
        "dpsas-printed-sigma", "semi-agnostic", DpsasGaussianStep(eps3, delta3, with_L=False), p0, p1, eps3, delta3,
        planted_bug=True, neighbouring="replace-one (label of a point with ||x|| = L flipped)",
        description="BUG: Claim 4.3's printed sigma = 2 sqrt(2 ln(2/delta))/(eps m_0), no factor L = 4 (d = 4)",
        paper=PAPER, score=_projection_score(sgn * e_last), default_trials=100_000,
        claim_source="Claim 4.3 as printed (notes Sec. 11 item 3)",
    ))


_register()
