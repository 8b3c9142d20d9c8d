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
    "laplace_tail_threshold",
    "gaussian_norm_tail_radius",
    "fact_b_6_bound",
    "lemma_b_7_bound",
    "fact_b_11_size",
    "fact_b_12_direction_bound",
    "fact_b_12_threshold_bound",
    "fact_b_12_far_threshold",
    "fact_b_13_density",
    "lemma_b_15_modulus_bound",
    "lemma_b_15_tail",
    "lemma_f_3_upper",
    "lemma_f_3_lower",
    "assumption_f2_min_d",
    "remark_1_exponent",
    "remark_2_ratio",
    "theorem_3_1_degree_printed",
    "alg4_grid_size_printed",
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


# ------------------------------------------------------------------ bounds the checks compare with
# (one home each: the claims register them as formulas and the checks evaluate them, so that a broken
# formula is seen by its check -- see bounds/agnostic_halfspaces/mutants.py)


def laplace_tail_threshold(b, beta_0):
    """Proof of Claim 4.6: |Lap(b)| <= b ln(1/beta_0) with probability 1 - beta_0 (exactly: P[|Lap(b)| > x] = e^{-x/b})."""
    return b * np.log(1 / beta_0)


def gaussian_norm_tail_radius(D, ell):
    """Proof of Lemma 3.4: ||Z|| <= sigma (sqrt(D) + sqrt(2 l)) w.p. >= 1 - e^{-l}; returns sqrt(D) + sqrt(2 l)."""
    return math.sqrt(D) + math.sqrt(2 * ell)


def fact_b_6_bound(z, y):
    """Fact B.6: Pr_tau[sign(z - tau) != y] <= |z - y| / 2 for tau ~ U[-1, 1]."""
    return abs(z - y) / 2


def lemma_b_7_bound(R, D, n):
    """Lemma B.7: E sup_{||v|| <= R} (L_P(v) - L^_S(v)) <= 2 R sqrt(D / n)."""
    return 2 * R * math.sqrt(D / n)


def fact_b_11_size(gamma, k, C=1.0):
    """Fact B.11: a gamma-cover of the unit ball of R^k of size (C/gamma)^k (C = 3 works, volumetric)."""
    return (C / gamma) ** k


def fact_b_12_direction_bound(dist):
    """Fact B.12 (i) with its explicit constant: P[sign(u.X+t) != sign(v.X+t)] <= ||u - v|| / 2 at t = 0."""
    return dist / 2


def fact_b_12_threshold_bound(dt):
    """Fact B.12 (ii) with its explicit constant: P[sign(u.X+t1) != sign(u.X+t2)] <= |t1 - t2| / sqrt(2 pi)."""
    return dt / math.sqrt(2 * math.pi)


def fact_b_12_far_threshold(gamma, C=math.sqrt(2)):
    """Fact B.12 (iii): |t| >= C sqrt(ln(1/gamma)) gives P[sign(v.X+t) != sign(t)] <= gamma/2; C = sqrt 2 suffices."""
    return C * np.sqrt(np.log(1 / gamma))


def fact_b_13_density(x):
    """Fact B.13: an isotropic log-concave density on R satisfies g(x) <= e * e^{-|x|/16} (numpy-vectorised)."""
    return math.e * np.exp(-np.abs(x) / 16)


def lemma_b_15_modulus_bound(h):
    """Lemma B.15's proof: ||H_theta(. + h) - H_theta||_1 <= 4|h| for H_theta = sign(. - theta) e^{-|.|}."""
    return 4 * abs(h)


def lemma_b_15_tail(p):
    """Lemma B.15's proof: int_{|z| >= sqrt p} |H_theta| = 2 e^{-sqrt p}."""
    return 2 * math.exp(-math.sqrt(p))


def lemma_f_3_upper(tr_Sigma, tr_Sigma_sq, norm_Sigma, t):
    """Lemma F.3 upper threshold: tr Sigma + 2 sqrt(tr(Sigma^2) t) + 2 t ||Sigma|| (exceeded w.p. <= e^{-t})."""
    return tr_Sigma + 2 * math.sqrt(tr_Sigma_sq * t) + 2 * t * norm_Sigma


def lemma_f_3_lower(tr_Sigma, tr_Sigma_sq, t):
    """Lemma F.3 lower threshold: tr Sigma - 2 sqrt(tr(Sigma^2) t) (undershot w.p. <= e^{-t})."""
    return tr_Sigma - 2 * math.sqrt(tr_Sigma_sq * t)


def assumption_f2_min_d(n, beta):
    """Assumption F.2: the smallest real d with d >= 16 ln(n / beta) (Theorem 4.1, Prop. 4.2, Lemma F.4)."""
    return 16 * math.log(n / beta)


def remark_1_exponent(alpha, c, C=1.0):
    """Remark 1: d^{C/alpha^2} alpha^{-c} <= d^{(C + c)/alpha^2} for d >= 2; returns the exponent (C + c)/alpha^2."""
    return (C + c) / alpha**2


def remark_2_ratio(alpha, epsilon):
    """Remark 2: privacy term / non-private term of Eq. (1) = (D_p/(eps alpha)) / (D_p/alpha^2) = alpha/eps."""
    return alpha / epsilon


# ------------------------------------------------------------------ printed forms of errata (evaluable by name)


def theorem_3_1_degree_printed(alpha, c=0.1, C_0=1.0):
    """Algorithm 2's degree AS PRINTED in its box: p = ceil(C_0 / (c alpha)) (erratum: the square is missing).

    Theorem 3.1 and its proof use p = ceil(C_0 / (c alpha)^2)
    (:func:`privbound.learners.agnostic_halfspaces.proper.alg2_degree`); the check pair
    ``theorem-3.1: degree-printed`` / ``degree-corrected`` shows the printed degree too small for
    Lemma B.10's L^1 accuracy c alpha, the corrected one enough.
    """
    return math.ceil(C_0 / (c * alpha))


def alg4_grid_size_printed(alpha, C_K=1.0):
    """Algorithm 4's grid size AS PRINTED: K = ceil(C_K log(1/alpha)) read with the natural logarithm.

    The paper writes log without a base; its accuracy argument needs eta_K = 2^{K-1} C_eta alpha >= 1/2 >= OPT,
    which holds for base 2 (:func:`privbound.learners.agnostic_halfspaces.semi_agnostic.alg4_grid_size`)
    and fails for the natural log with C_K = 1 (check pair ``theorem-4.1: grid-coverage-printed-log`` /
    ``grid-coverage``).
    """
    return max(1, math.ceil(C_K * math.log(1 / alpha)))
