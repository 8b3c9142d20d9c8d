"""Tests of privbound.learners.agnostic_halfspaces.hermite: the Hermite basis of Lemma B.8, Algorithm 2's
gradient matrix and the log-concave basis of App. D.

All tests are deterministic (exact quadrature or fixed seeds with tolerances far above their sampling error)."""

import itertools
import math

import numpy as np
import pytest
from scipy import special, stats

from privbound.learners.agnostic_halfspaces.hermite import (
    MonomialBasis,
    clip_features,
    clipping_radius,
    gradient_matrix,
    hermite_1d,
    hermite_features,
    multi_indices,
    n_features,
    polynomial_gradient_trace,
    standard_moments,
)


def _gh(d, npts):
    x, w = np.polynomial.hermite_e.hermegauss(npts)
    w = w / math.sqrt(2 * math.pi)
    nodes = np.array(list(itertools.product(x, repeat=d)))
    weights = np.prod(np.array(list(itertools.product(w, repeat=d))), axis=1)
    return nodes, weights


def test_hermite_1d_matches_scipy():
    # h_m = He_m / sqrt(m!) (Lemma B.8); scipy's eval_hermitenorm is He_m.
    x = np.linspace(-4, 4, 17)
    H = hermite_1d(x, 7)
    for m in range(8):
        np.testing.assert_allclose(H[:, m], special.eval_hermitenorm(m, x) / math.sqrt(math.factorial(m)), rtol=1e-12,
                                   atol=1e-12)


@pytest.mark.parametrize("d,p", [(1, 4), (2, 3), (3, 2), (5, 4)])
def test_multi_indices(d, p):
    K = multi_indices(d, p)
    assert K.shape == (math.comb(d + p, p), d) == (n_features(d, p), d)
    assert np.all(K.sum(axis=1) <= p) and np.all(K >= 0)
    assert len({tuple(r) for r in K}) == K.shape[0]
    assert np.all(np.diff(K.sum(axis=1)) >= 0)  # graded, constant first
    assert np.all(K[0] == 0)


@pytest.mark.parametrize("d,p", [(1, 5), (2, 3), (3, 2)])
def test_orthonormal_by_exact_quadrature(d, p):
    # E[psi psi^T] = I (Lemma B.8): Gauss-Hermite with p+1 nodes per axis integrates degree <= 2p+1 exactly.
    nodes, w = _gh(d, p + 1)
    F = hermite_features(nodes, p)
    np.testing.assert_allclose((F * w[:, None]).T @ F, np.eye(F.shape[1]), atol=1e-10)
    # E||psi||^2 = D_p
    assert math.isclose(float(w @ (F**2).sum(axis=1)), math.comb(d + p, p), rel_tol=1e-10)


def test_gradient_matrix_matches_quadrature_of_numerical_gradient():
    # M = E[grad q grad q^T] (Algorithm 2 step 5.1). Independent computation: central differences of
    # q = <w, psi_p> (exact for polynomials up to O(h^2) from degree >= 3 terms) integrated by exact quadrature.
    d, p = 3, 3
    rng = np.random.default_rng(0)
    w = rng.standard_normal(n_features(d, p))
    nodes, wt = _gh(d, p + 1)
    h = 1e-5
    G = np.stack([(hermite_features(nodes + h * e, p) - hermite_features(nodes - h * e, p)) @ w / (2 * h)
                  for e in np.eye(d)], axis=1)
    M_num = (G * wt[:, None]).T @ G
    M = gradient_matrix(w, d, p)
    np.testing.assert_allclose(M, M_num, rtol=1e-6, atol=1e-6)
    # tr M = sum |kappa| w_kappa^2 <= p ||w||^2 (the trace bound in the proof of Lemma 3.2)
    assert math.isclose(np.trace(M), polynomial_gradient_trace(w, d, p), rel_tol=1e-12)
    assert np.trace(M) <= p * w @ w


def test_gradient_matrix_of_linear_function():
    # q(x) = <u, x> has coefficients u on the degree-1 indices (h_1(x_i) = x_i), so M = u u^T.
    d, p = 4, 2
    K = multi_indices(d, p)
    u = np.array([0.3, -0.2, 0.5, 0.1])
    w = np.zeros(K.shape[0])
    for i in range(d):
        e = np.zeros(d, dtype=int)
        e[i] = 1
        w[np.flatnonzero((K == e).all(axis=1))[0]] = u[i]
    np.testing.assert_allclose(gradient_matrix(w, d, p), np.outer(u, u), atol=1e-14)


def test_clip_features():
    rng = np.random.default_rng(1)
    F = hermite_features(rng.standard_normal((1000, 2)) * 2, 3)
    T = 5.0
    C = clip_features(F, T)
    nrm = np.linalg.norm(F, axis=1)
    assert np.all(np.linalg.norm(C, axis=1) <= T + 1e-12)
    np.testing.assert_array_equal(C[nrm <= T], F[nrm <= T])
    np.testing.assert_allclose(np.linalg.norm(C[nrm > T], axis=1), T)
    with pytest.raises(ValueError, match="T"):
        clip_features(F, 0.0)


@pytest.mark.filterwarnings("ignore::scipy.integrate.IntegrationWarning")
@pytest.mark.parametrize("marginal,dist", [("gaussian", stats.norm()), ("laplace", stats.laplace(scale=1 / math.sqrt(2))),
                                           ("logistic", stats.logistic(scale=math.sqrt(3) / math.pi)),
                                           ("uniform", stats.uniform(-math.sqrt(3), 2 * math.sqrt(3)))])
def test_standard_moments_match_scipy(marginal, dist):
    mu = standard_moments(marginal, 8)
    assert mu[0] == 1 and mu[1] == 0 and math.isclose(mu[2], 1.0, rel_tol=1e-12)
    for k in range(1, 9):
        assert math.isclose(mu[k], dist.moment(k), rel_tol=1e-7, abs_tol=1e-9), (marginal, k)


def test_monomial_basis_gaussian_is_orthonormal_and_spans_hermite():
    # App. D: psi = G^{-1/2} m_p has E[psi psi^T] = I; for N(0, I) it spans the same space as the Hermite basis.
    d, p = 2, 3
    B = MonomialBasis(d, p, "gaussian")
    nodes, w = _gh(d, p + 1)
    P = B.transform(nodes)
    np.testing.assert_allclose((P * w[:, None]).T @ P, np.eye(P.shape[1]), atol=1e-9)
    H = hermite_features(nodes, p)
    coef, *_ = np.linalg.lstsq(P, H, rcond=None)
    np.testing.assert_allclose(P @ coef, H, atol=1e-8)


def test_monomial_basis_uniform_exact_legendre_quadrature():
    d, p = 2, 3
    B = MonomialBasis(d, p, "uniform")
    x, w = np.polynomial.legendre.leggauss(p + 2)
    a = math.sqrt(3)
    nodes = np.array(list(itertools.product(a * x, repeat=d)))
    wt = np.prod(np.array(list(itertools.product(w / 2, repeat=d))), axis=1)
    P = B.transform(nodes)
    np.testing.assert_allclose((P * wt[:, None]).T @ P, np.eye(P.shape[1]), atol=1e-9)


def test_monomial_basis_rejects_bad_moments():
    with pytest.raises(ValueError, match="moments"):
        MonomialBasis(2, 3, moments=(1.0, 0.0, 1.0))
    with pytest.raises(ValueError, match="marginal"):
        standard_moments("cauchy", 4)


def test_clipping_radius_eq25():
    # Constant norms N = 2: E[(1 - t/2)_+] = 1 - t/2 = c alpha  =>  T = 2 (1 - c alpha).
    assert math.isclose(clipping_radius(np.full(10, 2.0), 0.05), 2 * 0.95, rel_tol=1e-8)
    # On a sample: the defining equation holds at T and T >= 1 - c alpha when every norm >= 1 (Eq. (25)).
    rng = np.random.default_rng(3)
    N = np.linalg.norm(hermite_features(rng.standard_normal((20000, 2)), 3), axis=1)
    T = clipping_radius(N, 0.05)
    assert math.isclose(np.mean(np.maximum(0, 1 - T / N)), 0.05, rel_tol=1e-6)
    assert T >= 1 - 0.05
    assert T <= math.sqrt(n_features(2, 3) / 0.05) * 1.05  # Markov: T <= sqrt(D_p/(c alpha)) (sampling slack)
