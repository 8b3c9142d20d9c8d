"""Formulas that claims and checks of "Differentially private agnostic learning of halfspaces under Gaussian
marginals" share.

Paper id ``agnostic-halfspaces`` (the source text, ``papers/dp-agnostic-halfspaces.txt``, has lost its
title page, so authors, venue and arXiv id are not known here). The learners' own calibrations (noise
scales, grids, clipping radii) live in :mod:`privbound.learners.agnostic_halfspaces`; this module holds
the bounds of the paper's statements that only :mod:`privbound.bounds` evaluates, where a claim and a
check both need them. Natural logarithms throughout.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

__all__ = [
    "D_p",
    "ceil_or_inf",
    "lemma_b_1_bound",
    "lemma_b_5_bound",
    "lemma_b_5_validation_size",
    "lemma_b_9_kernel",
    "mehler_kernel",
    "lemma_c_2_second_moment",
    "lemma_c_2_variance_bound",
    "lemma_c_2_tail",
    "lemma_4_4_m0",
]


def D_p(d: int, p: int) -> float:
    """D_p = C(d+p, p), the number of Hermite functions of degree <= p in d variables (Lemma B.8).

    Returned as a float (``inf`` when it exceeds the float range, e.g. p = 625 at d ~ 2e7).
    """
    try:
        return float(math.comb(int(d) + int(p), int(p)))
    except OverflowError:
        return math.inf


def ceil_or_inf(x: float) -> float:
    """``ceil(x)`` as a float, ``inf`` for an infinite ``x``."""
    return float(math.ceil(x)) if math.isfinite(x) else math.inf


def lemma_b_1_bound(v, B, beta, n):
    """Lemma B.1: ||mean U_i|| <= sqrt(2 v ln(2/beta))/n + 2 B ln(2/beta)/(3n) w.p. >= 1 - beta."""
    return math.sqrt(2 * v * math.log(2 / beta)) / n + 2 * B * math.log(2 / beta) / (3 * n)


def lemma_b_5_bound(K, eta, epsilon, m):
    """Lemma B.5: err(h_j^) - min_j err(h_j) <= 2 sqrt(ln(4K/eta)/(2m)) + 2 ln(2K/eta)/(eps m) w.p. >= 1 - eta."""
    return 2 * math.sqrt(math.log(4 * K / eta) / (2 * m)) + 2 * math.log(2 * K / eta) / (epsilon * m)


def lemma_b_5_validation_size(K_: float, eta: float, epsilon: float, acc: float) -> int:
    """Smallest m with Lemma B.5's bound ``2 sqrt(ln(4K/eta)/(2m)) + 2 ln(2K/eta)/(eps m) <= acc``.

    a/sqrt(m) + b/m <= acc  <=>  sqrt(m) >= (a + sqrt(a^2 + 4 acc b)) / (2 acc). The sample-size
    formulas of Theorems 2.1 and D.1 use it for |S_val| with explicit constants instead of Eq. (17)'s C.
    """
    a = 2 * math.sqrt(math.log(4 * K_ / eta) / 2)
    b = 2 * math.log(2 * K_ / eta) / epsilon
    r = (a + math.sqrt(a * a + 4 * acc * b)) / (2 * acc)
    m = math.ceil(r * r)
    while m > 1 and lemma_b_5_bound(K_, eta, epsilon, m - 1) <= acc:  # guard against rounding
        m -= 1
    return m


def lemma_b_9_kernel(rho, x, y):
    """Lemma B.9 (Mehler) in d = 1: (1 - rho^2)^{-1/2} exp((2 rho x y - rho^2 (x^2 + y^2)) / (2 (1 - rho^2))).

    In d dimensions the kernel is the product of the one-dimensional kernels over coordinates
    (:func:`mehler_kernel` evaluates it for vectors).
    """
    r2 = 1 - rho**2
    return r2**-0.5 * math.exp((2 * rho * x * y - rho**2 * (x * x + y * y)) / (2 * r2))


def mehler_kernel(rho: float, x: np.ndarray, y: np.ndarray) -> float:
    """Right-hand side of Mehler's formula (Lemma B.9) for x, y in R^d (numpy arithmetic)."""
    x, y = np.atleast_1d(x), np.atleast_1d(y)
    d = x.size
    r2 = 1 - rho**2
    return float(r2 ** (-d / 2) * np.exp((2 * rho * x @ y - rho**2 * (x @ x + y @ y)) / (2 * r2)))


def lemma_c_2_second_moment(d: int, p: int) -> float:
    """Lemma C.2's proof: E[K_p(X)^2] = sum_{k<=p} 4^k (d/2)_k / k! C(d+p, p-k)^2, K_p = ||psi_p||^2.

    ``(a)_k`` is the rising factorial.
    """
    return float(sum(4**k * special.poch(d / 2, k) / math.factorial(k) * math.comb(int(d + p), int(p - k)) ** 2
                     for k in range(p + 1)))


def lemma_c_2_variance_bound(d, p):
    """Lemma C.2, Eq. (14): Var(||psi_p(X)||^2 / D_p) <= e^{2p^2/d} - 1."""
    return math.expm1(2 * p**2 / d)


def lemma_c_2_tail(d, p, alpha):
    """Lemma C.2's Chebyshev bound (e^{2p^2/d} - 1)/9 on P[||psi_p(X)|| > 2 sqrt(D_p)] (<= alpha in the regime)."""
    return lemma_c_2_variance_bound(d, p) / 9


def lemma_4_4_m0(d, q, eta, epsilon, delta, beta_0, C=1.0):
    """Lemma 4.4: m_0 >= C (d q ln(1/beta_0)/eta^2 + ln(d/beta_0)/q^2 + d sqrt(ln(1/delta) ln(1/beta_0))/(eta eps))."""
    return C * (d * q * math.log(1 / beta_0) / eta**2 + math.log(d / beta_0) / q**2
                + d * math.sqrt(math.log(1 / delta) * math.log(1 / beta_0)) / (eta * epsilon))
