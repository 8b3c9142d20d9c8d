"""Tests of privbound.learners.agnostic_halfspaces.regression: Algorithm 1 (private polynomial regression).

Seeded (deterministic). The accuracy threshold is the paper's guarantee OPT + alpha with alpha = 0.1.
"""

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import pld_privacy_accountant
from sklearn.base import clone

from privbound.learners.agnostic_halfspaces.common import HalfspaceProblem
from privbound.learners.agnostic_halfspaces.hermite import MonomialBasis
from privbound.learners.agnostic_halfspaces.regression import PrivatePolynomialRegression, alg1_grid, alg1_thresholds


def test_alg1_privacy_accounting_is_exact_gdp():
    # K Gaussian steps of noise multiplier z compose to a Gaussian of multiplier z/sqrt(K) (Dong-Roth-Su):
    # the PLD accountant on dp_event() must give eps <= the claim (to discretisation 1e-3).
    prob = HalfspaceProblem(2, (1.0, 0.0), rate=0.1)
    X, y = prob.sample(4000, np.random.default_rng(0))
    m = PrivatePolynomialRegression(degree=2, epsilon=0.5, delta=1e-5, alpha=0.2, max_iter=50, random_state=0).fit(X, y)
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(m.dp_event())
    eps_pld = acc.get_epsilon(1e-5)
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
