"""Tests of privbound.learners.agnostic_halfspaces.regression: Algorithm 1 (private polynomial regression).

Seeded (deterministic). The accuracy threshold is the paper's guarantee OPT + alpha with alpha = 0.1.
"""

import math

import dp_accounting
import numpy as np
import pytest
from sklearn.base import clone

from privbound.learners.accounting import epsilon_of
from privbound.learners.agnostic_halfspaces.common import HalfspaceProblem
from privbound.learners.agnostic_halfspaces.hermite import MonomialBasis
from privbound.learners.agnostic_halfspaces.regression import PrivatePolynomialRegression, alg1_grid, alg1_thresholds
from privbound.learners.neighbouring import NeighbouringRelation


def test_alg1_privacy_accounting_is_exact_gdp():
    # K Gaussian steps of noise multiplier z compose to a Gaussian of multiplier z/sqrt(K) (Dong-Roth-Su):
    # the PLD accountant on dp_event(), under the guarantee's replace-one, must give eps <= the claim (to
    # discretisation 1e-3).
    prob = HalfspaceProblem(2, (1.0, 0.0), rate=0.1)
    X, y = prob.sample(4000, np.random.default_rng(0))
    m = PrivatePolynomialRegression(degree=2, epsilon=0.5, delta=1e-5, alpha=0.2, max_iter=50, random_state=0).fit(X, y)
    eps_pld = epsilon_of(m.dp_event(), 1e-5, "pld", neighbouring=m.guarantee_.neighbouring)
    assert m.guarantee_.neighbouring is NeighbouringRelation.REPLACE_ONE
    assert eps_pld <= 0.5 + 1e-3 and eps_pld >= 0.5 - 0.02  # exact calibration: tight too
    assert m.guarantee_.epsilon == 0.5 and m.guarantee_.delta == 1e-5
    assert m.erm_iterations_ == 50
    assert math.isclose(m.excess_risk_bound_, m.clip_radius_ * math.sqrt(
        1 / 50 + 4 * m.n_features_poly_ * dp_accounting.get_sigma_gaussian(0.5, 1e-5) ** 2 / m.block_size_**2))


def test_alg1_accuracy_d5_random_noise():
    # Reach goal: d = 5, 10% random noise (OPT = 0.1 exactly), p = 1: err <= OPT + alpha with alpha = 0.1
    # (n = 20000, eps = 0.5; the error at this seed is in benchmarks/README.md, 'Agnostic halfspaces: measured values').
    rng = np.random.default_rng(0)
    prob = HalfspaceProblem.random(5, rng, t=0.3, rate=0.1)
    X, y = prob.sample(20_000, rng)
    m = PrivatePolynomialRegression(degree=1, epsilon=0.5, delta=1e-5, alpha=0.1, random_state=1).fit(X, y)
    err = prob.error(m.predict, np.random.default_rng(7), 200_000)
    assert err <= prob.opt_exact + 0.1
    assert set(np.unique(m.predict(X[:100]))) <= {-1, 1}


def test_alg1_logconcave_variant_runs_and_validates():
    rng = np.random.default_rng(2)
    prob = HalfspaceProblem.random(2, rng, rate=0.1, marginal="laplace")
    X, y = prob.sample(6000, rng)
    B = MonomialBasis(2, 2, "laplace")
    m = PrivatePolynomialRegression(basis=B, epsilon=0.5, alpha=0.2, radius=2.0, max_iter=100, random_state=0).fit(X, y)
    assert np.linalg.norm(m.coef_, axis=1).max() <= 2.0 + 1e-9
    assert prob.error(m.predict, rng, 50_000) <= 0.5  # sanity: better than chance on a 10%-noise problem
    with pytest.raises(ValueError, match="basis.d"):
        PrivatePolynomialRegression(basis=MonomialBasis(3, 2)).fit(X, y)


def test_grid_and_thresholds():
    # k = ceil(log2(2/0.1)) = ceil(4.32) = 5; M = ceil(max(1, 1/(2*0.25))/0.1) = 20; t_l = -1 + (2l - 1)/M.
    assert alg1_grid(0.1, 0.1, 0.25) == (5, 20)
    np.testing.assert_allclose(alg1_thresholds(4), [-0.75, -0.25, 0.25, 0.75])


def test_validation_errors_name_the_argument():
    X = np.random.default_rng(0).standard_normal((100, 2))
    y = np.ones(100)
    with pytest.raises(ValueError, match="'epsilon' parameter of PrivatePolynomialRegression must be a float in the "
                                         "range \\(0.0, inf\\). Got -1 instead."):
        PrivatePolynomialRegression(epsilon=-1).fit(X, y)
    with pytest.raises(ValueError, match="'basis' parameter of PrivatePolynomialRegression"):
        PrivatePolynomialRegression(basis="legendre").fit(X, y)
    assert clone(PrivatePolynomialRegression(degree=4)).get_params()["degree"] == 4


# ====================================================================== tight epsilon on a pair


def _canary_pair(flip_row=0, n_zero=20, m=20, seed=3):
    """d = 1, p = 1 (psi = (1, x)): a canary x = 50 at row 0 (label +1), n_zero points at x = 0, m validation points;
    d1 flips the label of ``flip_row``."""
    rng = np.random.default_rng(seed)
    Xb = np.r_[[[50.0]], np.zeros((n_zero, 1))]
    yb = np.r_[1.0, np.tile([1.0, -1.0], n_zero // 2)]
    Xv = rng.standard_normal((m, 1))
    X = np.r_[Xb, Xv]
    y0 = np.r_[yb, np.where(Xv[:, 0] >= 0, 1.0, -1.0)]
    y1 = y0.copy()
    y1[flip_row] = -y1[flip_row]
    return (X, y0), (X, y1)


PARAMS = dict(degree=1, alpha=0.2, n_blocks=1, n_grid=4, n_validation=20, clip_radius=1.0)


def test_alg1_pair_epsilon_reads_the_fitted_schedule():
    # The training-row flip: K steps each moving by 2 ||psi_bar|| / n_0 = 2 T / n_0 (the canary's clipped features
    # have norm T = 1). K and sigma_g fitted by the learner (PrivatePolynomialRegression.fit, its own path) give
    # mu = sqrt(K) (2T/n_0) / sigma_g = 1 / s(eps, delta) exactly, so the pair's epsilon is the claim, 1 (the
    # calibration is exact). Noise for one step (compose=False) multiplies mu by sqrt(K) = 3.
    from privbound.learners.agnostic_halfspaces.common import gaussian_epsilon
    from privbound.learners.agnostic_halfspaces.regression import alg1_pair_epsilon

    d0, d1 = _canary_pair()
    fit = PrivatePolynomialRegression(epsilon=1.0, delta=1e-3, random_state=0, **PARAMS).fit(*d0)
    eps, source = alg1_pair_epsilon(d0, d1, epsilon=1.0, delta=1e-3, **PARAMS)
    shift = 2 * fit.clip_radius_ / fit.block_size_
    assert eps == pytest.approx(gaussian_epsilon(shift, fit.erm_sigma_, 1e-3, fit.erm_iterations_), rel=1e-9)
    assert eps == pytest.approx(1.0, abs=1e-6)
    assert f"K = {fit.erm_iterations_}" in source
    bug, _ = alg1_pair_epsilon(d0, d1, epsilon=1.0, delta=1e-3, compose=False, **PARAMS)
    assert bug == pytest.approx(gaussian_epsilon(shift * 3, fit.erm_sigma_, 1e-3, fit.erm_iterations_), rel=1e-9)
    # without clipping the canary's features (1, 50) move every step by up to 2 sqrt(2501) / n_0
    big, source = alg1_pair_epsilon(d0, d1, epsilon=1.0, delta=1e-3, clip=False, **PARAMS)
    assert big == pytest.approx(gaussian_epsilon(2 * math.hypot(1, 50) / fit.block_size_, fit.erm_sigma_, 1e-3,
                                                 fit.erm_iterations_), rel=1e-9)
    assert "inf" in source  # no finite worst case without clipping


def test_alg1_subgradient_moves_by_the_stated_shift():
    # The DP-ERM's subgradient mean(sign(<v, psi> - y) psi) (re-derived here) at 200 random v of the unit ball
    # (seed 1): flipping the canary's label moves it by exactly 2 ||psi_bar|| / n_0 (|<v, psi_bar>| < 1 = T R).
    d0, d1 = _canary_pair()
    est = PrivatePolynomialRegression(epsilon=1.0, delta=1e-3, **PARAMS)
    plan = est._plan(*d0)
    F, n0 = plan["F"][: plan["n0"]], plan["n0"]
    rng = np.random.default_rng(1)
    V = rng.standard_normal((200, F.shape[1]))
    V *= rng.random((200, 1)) / np.linalg.norm(V, axis=1, keepdims=True)
    g = [np.sign(V @ F.T - y[:n0]) @ F / n0 for y in (d0[1], d1[1])]
    assert np.allclose(np.linalg.norm(g[0] - g[1], axis=1), 2 * np.linalg.norm(F[0]) / n0)


def test_alg1_pair_epsilon_by_position_and_bad_pairs():
    # A validation row enters only the selection (its pure epsilon); a pair differing in two rows is refused.
    from privbound.learners.agnostic_halfspaces.regression import alg1_pair_epsilon

    d0, d1 = _canary_pair(flip_row=25)  # rows 0-20 are the block, 21-40 validation
    eps, source = alg1_pair_epsilon(d0, d1, epsilon=1.0, delta=1e-3, **PARAMS)
    assert eps == 1.0 and "validation" in source
    X, y = d1
    y2 = y.copy()
    y2[0] = -y2[0]
    with pytest.raises(ValueError, match="exactly one row"):
        alg1_pair_epsilon(d0, (X, y2), epsilon=1.0, delta=1e-3, **PARAMS)
