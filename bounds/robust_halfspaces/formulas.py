"""Formulas of "Robust and Private Learning of Halfspaces" that only the claims and checks use.

Ghazi, Kumar, Manurangsi & Nguyen, AISTATS 2021, arXiv:2011.14580 (paper id ``robust-halfspaces``).
The parameters the learners run with (Lemma 18's T, Lemma 19's p, sigma, b, the stopping threshold, the
instances' dimensions) live in :mod:`privbound.learners.robust_halfspaces` and are imported from there;
the Gaussian mechanism's privacy curve is :func:`privbound.learners.mechanisms.gaussian_delta`.

* App. A.2: Observation 8's number of runs (corrected; the learner's, re-exported) and the printed one;
* App. B: Lemma 9's union bound for random signs, the exponential mechanism's exact success on the Theorem 2
  packing, Claim 10's point and inner-product threshold;
* App. C.1: the explicit form of Lemma 12's o(1/d) and the exact conditional failure of its proof's second fact
  (printed threshold 0.1, corrected 0.2); Lemma 14's reduction to Lemma 13;
* App. D: Lemma 15's delta (corrected and printed) and the error lower bound on D_s from its chain;
* App. E: Theorem 5's Lambda and sample size, Lemma 16's deviation term, Lemma 17's tail bound;
* App. F: Theorem 6's sample size (printed constant 1000 of the opt-noise term and the corrected 4000) and the exact
  tails of the good events E_opt-noise / E_parallel, Theorem 6 at scaled constants, Lemma 19's accounting and its
  classic-Gaussian step (which fails at T = 1, delta >~ 0.65), Lemmas 20 and 21.

Every printed formula that an erratum corrects stays evaluable by name (``*_as_printed`` or a printed constant).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import optimize, special, stats

from privbound.learners.mechanisms import GaussianMechanism, gaussian_delta
from privbound.learners.robust_halfspaces.boosting import obs8_runs
from privbound.learners.robust_halfspaces.instances import LEMMA12_MARGIN
from privbound.learners.robust_halfspaces.perceptron import lemma18_iterations, lemma19_parameters

__all__ = [
    "obs8_runs",
    "obs8_runs_as_printed",
    "lemma9_union_bound",
    "claim10_point",
    "CLAIM10_MAX_INNER_PRODUCT",
    "PACKING_A",
    "PACKING_R",
    "log_cap_measure",
    "em_packing_success",
    "em_packing_needed_n",
    "lemma12_bound",
    "LEMMA12_PROOF_NORM",
    "LEMMA12_PROOF_NORM_AS_PRINTED",
    "lemma12_conditional_failure",
    "lemma14_reduction",
    "lemma14_min_gamma0",
    "lemma15_delta",
    "lemma15_delta_as_printed",
    "ds_error_lower_bound",
    "theorem5_lambda",
    "theorem5_sample_size",
    "lemma16_deviation",
    "lemma17_bound",
    "THEOREM6_OPT_NOISE_CONSTANT",
    "THEOREM6_OPT_NOISE_CONSTANT_CORRECTED",
    "theorem6_sample_size",
    "theorem6_good_event_tails",
    "theorem6_scaled_parameters",
    "subsampled_epsilon",
    "adv_composition_epsilon",
    "lemma19_accounting",
    "lemma19_classic_gaussian_ratio",
    "analytic_gaussian_sigma_independent",
]


# --------------------------------------------------------------------------- App. A.2


def obs8_runs_as_printed(xi: float, xi_prime: float) -> int:
    """Observation 8's number of runs as printed: T = ceil(log(0.5 xi')/log(1 - xi)).

    Erratum (Observation 8): this reads the failure probability xi as a success probability; the corrected count
    is :func:`obs8_runs` (owned by the learner, :mod:`privbound.learners.robust_halfspaces.boosting`).
    """
    return max(1, math.ceil(math.log(0.5 * xi_prime) / math.log(1 - xi) - 1e-12))


# --------------------------------------------------------------------------- App. B

def lemma9_union_bound(K: int, d: int, t: float) -> float:
    """Pr[some pair of K random +-1/sqrt(d) vectors has |<w_i, w_j>| >= t] <= K (K - 1) e^{-d t^2 / 2}
    (Hoeffding, 2 e^{-d t^2/2} per pair, union over the K (K - 1)/2 pairs)."""
    return K * (K - 1) * math.exp(-d * t * t / 2)


def claim10_point(w_i: np.ndarray, w_j: np.ndarray, gamma: float) -> np.ndarray:
    """Claim 10's point z = 0.505 gamma (w_i - w_j), within 0.9 gamma of both 1.01 gamma w_i and -1.01 gamma w_j."""
    return 0.505 * gamma * (np.asarray(w_i) - np.asarray(w_j))


CLAIM10_MAX_INNER_PRODUCT = (0.9 / 0.505) ** 2 / 2 - 1
"""The largest <w_i, w_j> for which Claim 10's point 0.505 gamma (w_i - w_j) is within 0.9 gamma of both
1.01 gamma w_i and -1.01 gamma w_j (~0.588; Lemma 9's 0.01 is far below it)."""

PACKING_A = 0.95 / 1.01  # EM score threshold on D^(i): y <w, x> = 1.01 gamma <w, w_i> <= 0.95 gamma
PACKING_R = 0.9 / 1.01  # robust success on D^(i): normalised margin 1.01 gamma <w, w_i> > 0.9 gamma


@functools.lru_cache(maxsize=256)
def log_cap_measure(t: float, d: int) -> float:
    """log mu{w in S^{d-1}: <w, v> > t} for a unit v: (1 + <w, v>)/2 ~ Beta((d-1)/2, (d-1)/2) (exact, d >= 2)."""
    a = (d - 1) / 2
    v = float(stats.beta.logsf((1 + t) / 2, a, a))
    if math.isfinite(v) and v > -600:
        return v
    # Far tail (large d): log of int_t^1 (1 - u^2)^{(d-3)/2} du / B(1/2, (d-1)/2), the integrand scaled by its
    # value at u = t (its maximum on [t, 1]) before quadrature, so nothing underflows.
    from scipy import integrate

    k = (d - 3) / 2
    m = k * math.log1p(-t * t)
    val, _ = integrate.quad(lambda u: math.exp(k * math.log1p(-u * u) - m) if u < 1 else 0.0, t, 1.0, epsabs=0, epsrel=1e-12, limit=200)
    return m + math.log(val) - float(special.betaln(0.5, a))


def em_packing_success(n: int, d: int, epsilon: float) -> float:
    """Exact probability that the sphere EM (Theorem 5) on n samples of D^(i) outputs a hypothesis in G^(i).

    On D^(i) = Unif{(1.01 gamma w_i, +1), (-1.01 gamma w_i, -1)} every sample has y x = 1.01 gamma w_i, so the
    score is q(w) = -n 1[<w, w_i> <= 0.95/1.01] for every sample (no data randomness, any gamma): the EM density
    is 1 on the cap C_a = {<w, w_i> > 0.95/1.01} and e^{-eps n/2} off it. G^(i) (robust risk 0 at 0.9 gamma)
    is the cap C_r, r = 0.9/1.01 < a. With S(t) = mu(C_t) (exact Beta tail):
    Pr[G^(i)] = (S(a) + z (S(r) - S(a))) / (S(a) + z (1 - S(a))), z = e^{-eps n/2}; evaluated in log space.
    """
    la, lr = log_cap_measure(PACKING_A, d), log_cap_measure(PACKING_R, d)
    lz = -epsilon * n / 2
    l_diff = lr + math.log1p(-math.exp(la - lr))  # log(S(r) - S(a)), S(r) > S(a)
    num = special.logsumexp([la, lz + l_diff])
    den = special.logsumexp([la, lz + math.log1p(-math.exp(la))])
    return float(math.exp(num - den))


def em_packing_needed_n(d: int, epsilon: float, level: float) -> float:
    """The exact (real-valued) n at which :func:`em_packing_success` reaches ``level`` (solved in closed form).

    success >= L iff z <= S(a)(1 - L) / (L (1 - S(a)) - (S(r) - S(a))), so n = (2/eps) ln(1/z*); 0 if n = 0 suffices.
    """
    la, lr = log_cap_measure(PACKING_A, d), log_cap_measure(PACKING_R, d)
    Sa, Sr = math.exp(la), math.exp(lr)
    den = level * (1 - Sa) - (Sr - Sa)
    if den <= 0:
        return 0.0
    return max(0.0, 2 / epsilon * (math.log(den) - la - math.log1p(-level)))


# --------------------------------------------------------------------------- App. C.1


def lemma12_bound(d: float) -> float:
    """Explicit form of Lemma 12's o(1/d), from the corrected proof (threshold c = 0.2; our derivation).

    E_q[d_TV] <= Pr_q[||q'|| < 0.2] + sup_{||q'|| >= 0.2} Pr_x[<q', x> < 0.01]
             <= exp(-2 d (1/3 - 0.04)^2) + exp(-(0.04 - 0.01)^2 d / (2 * 0.04))
    (Hoeffding for the mean of (2 q_j - 1)^2 in [0, 1] with mean 1/3, then Hoeffding for
    <q', x> with ranges 2 |q'_j| / sqrt(d)); both terms are exp(-Omega(d)) = o(1/d).
    Erratum (proof of Lemma 12): its inequalities are flipped, and its threshold ||q'|| >= 0.1 is too
    small (E_x <q', x> = ||q'||^2 equals 0.01 there); any c with c^2 > 0.01 works.
    """
    return math.exp(-2 * d * (1 / 3 - 0.04) ** 2) + math.exp(-((0.04 - 0.01) ** 2) * d / (2 * 0.04))


LEMMA12_PROOF_NORM = 0.2
"""The corrected threshold of the proof of Lemma 12: ||q'|| >= 0.2 (any c with c^2 > 0.01 works)."""

LEMMA12_PROOF_NORM_AS_PRINTED = 0.1
"""The printed threshold ||q'|| >= 0.1: there E_x <q', x> = ||q'||^2 = 0.01 equals the conditioning threshold, so
Pr_x[<q', x> < 0.01] ~ 1/2 and does not decay with d (erratum, proof of Lemma 12)."""


def lemma12_conditional_failure(c: float, d: int, margin: float = LEMMA12_MARGIN) -> float:
    """Exact Pr_{x ~ B_q}[<q', x> < margin] at q = ((1 + c)/2, ..., (1 + c)/2), i.e. ||q'|| = c.

    Then <q', x> = c (2K - d)/d with K ~ Bin(d, (1 + c)/2), so the event is K < d (1 + margin/c)/2 (a relative
    guard of 1e-12 keeps the boundary K = d (1 + margin/c)/2, where <q', x> = margin exactly, out of the event).
    The proof's second fact says this is o(1/d) for every ||q'|| >= the proof's threshold: true at 0.2, false at the
    printed 0.1.
    """
    t = d * (1 + margin / c) / 2
    k = math.ceil(t * (1 - 1e-12)) - 1
    return float(stats.binom.cdf(k, d, (1 + c) / 2))


def lemma14_reduction(gamma_0: float, beta_0: float) -> tuple[float, float]:
    """The proof of Lemma 14 applies Lemma 13 with gamma = gamma_0 sqrt(beta_0 / 2) and beta = 2 beta_0."""
    return gamma_0 * math.sqrt(beta_0 / 2), 2 * beta_0


def lemma14_min_gamma0(beta_0: float) -> float:
    """Lemma 14's regime: gamma_0 > 4 sqrt(2 beta_0) (exactly what makes Lemma 13's gamma > 2 beta hold)."""
    return 4 * math.sqrt(2 * beta_0)


# --------------------------------------------------------------------------- App. D


def lemma15_delta(epsilon: float) -> float:
    """Lemma 15's delta, corrected: 0.001 (1 - e^{-epsilon}) = Theta(epsilon), so that delta sum_{k>=0} e^{-k eps} <= 0.001."""
    return 0.001 * -math.expm1(-epsilon)


def lemma15_delta_as_printed(epsilon: float) -> float:
    """Lemma 15's delta as printed in its proof: 0.001/(1 - e^{-epsilon}) (>= 1 for epsilon < 1e-3).

    Erratum (Lemma 15): the statement prints delta = Omega(1/epsilon) and the proof this value; the chain needs
    :func:`lemma15_delta`.
    """
    return 0.001 / -math.expm1(-epsilon)


def ds_error_lower_bound(n: int, d: int, epsilon: float, delta: float) -> float:
    """Lower bound on the expected 0-1 error on D_s (Theorem 4 instance) of any (epsilon, delta)-DP learner (add/remove).

    The proof of Theorem 4 reduces to Lemma 15's bit problem: coordinate i carries k ~ Bin(n, 1/d) copies of s_i.
    Removing them one at a time (add/remove neighbours, the other samples fixed) gives, for both values of s_i
    (the corrected chain of Lemma 15), Pr[err | s] summed over s >= e^{-k eps} - 2 delta sum_{j=1}^k e^{-j eps}; so
    E[err] >= E_k[max(0, e^{-k eps}/2 - delta sum_{j=1}^k e^{-j eps})] (exact binomial expectation).
    """
    k = np.arange(n + 1)
    pk = stats.binom.pmf(k, n, 1.0 / d)
    geo = np.exp(-epsilon) * -np.expm1(-k * epsilon) / -np.expm1(-epsilon)  # sum_{j=1}^k e^{-j eps}
    return float(np.sum(pk * np.maximum(0.0, 0.5 * np.exp(-k * epsilon) - delta * geo)))


# --------------------------------------------------------------------------- App. E


def theorem5_lambda(d: float, gamma: float, alpha: float) -> float:
    """Lambda = 1e6 sqrt(ln(1/alpha)) max{sqrt d, 1/gamma} of Theorem 5 (natural log)."""
    return 1e6 * math.sqrt(math.log(1 / alpha)) * max(math.sqrt(d), 1 / gamma)


def theorem5_sample_size(d: float, gamma: float, alpha: float, epsilon: float) -> float:
    """Theorem 5's n = 1e4 Lambda^2/(eps alpha) + 1e10/(alpha^2 gamma^2)."""
    lam = theorem5_lambda(d, gamma, alpha)
    return 1e4 * lam**2 / (epsilon * alpha) + 1e10 / (alpha**2 * gamma**2)


def lemma16_deviation(n: float, gamma_hat: float, xi_hat: float) -> float:
    """Lemma 16's uniform deviation term 400 sqrt(ln(4/xi_hat)/(n gamma_hat^2)) (Bartlett & Mendelson 2002)."""
    return 400 * math.sqrt(math.log(4 / xi_hat) / (n * gamma_hat**2))


def lemma17_bound(epsilon: float, t: float, mu: float) -> float:
    """Lemma 17 (McSherry & Talwar): Pr[w_hat not in S_{2t}] <= exp(-epsilon t/2)/mu(S_t)."""
    return math.exp(-epsilon * t / 2) / mu


# --------------------------------------------------------------------------- App. F


THEOREM6_OPT_NOISE_CONSTANT = 1000.0
"""The printed constant of the opt-noise term 1000 sigma sqrt(log T)/(p alpha gamma) of Theorem 6's n (App. F.3)."""

THEOREM6_OPT_NOISE_CONSTANT_CORRECTED = 4000.0
"""The constant for which the per-iteration good events E_opt-noise / E_parallel hold for all T iterations by a
union bound (erratum, App. F.3; the reading notes' ~4000)."""


def theorem6_sample_size(d: float, gamma: float, alpha: float, epsilon: float, delta: float,
                         opt_noise_constant: float = THEOREM6_OPT_NOISE_CONSTANT) -> int:
    """Theorem 6's explicit n (App. F.3) with T = ceil(1500/(alpha gamma_gap^2)), p = 1/sqrt T, sigma = 100 ln(T/delta)/eps:
    ceil(100 sqrt(d) sigma log T/(p sqrt alpha) + C sigma sqrt(log T)/(p alpha gamma) + 100 log T/alpha + 1e10/(alpha^2 gamma^2)),
    C = ``opt_noise_constant`` (printed 1000). ``log T`` (base unspecified in the paper) is taken natural."""
    T = lemma18_iterations(alpha, gamma)
    p, sigma, _ = lemma19_parameters(epsilon, delta, T)
    lT = math.log(T)
    return math.ceil(100 * math.sqrt(d) * sigma * lT / (p * math.sqrt(alpha))
                     + opt_noise_constant * sigma * math.sqrt(lT) / (p * alpha * gamma)
                     + 100 * lT / alpha + 1e10 / (alpha**2 * gamma**2))


def theorem6_good_event_tails(d: float, gamma: float, alpha: float, epsilon: float, delta: float,
                              opt_noise_constant: float = THEOREM6_OPT_NOISE_CONSTANT) -> dict[str, float]:
    """Exact failure probabilities of Lemma 18's good events E_opt-noise and E_parallel with Theorem 6's parameters.

    Both compare a N(0, sigma^2) variable with tau = 0.01 alpha gamma_gap B, B = p n, gamma_gap = 0.05 gamma:
    <w*, g_i> for ||w*|| = 1, and <w_{i-1} + u_i, g_i>/||w_{i-1} + u_i|| (g_i is independent of w_{i-1} + u_i). Per
    iteration each fails with probability Phi(-tau/sigma); the g_i are independent, so E_opt-noise fails in some
    iteration with probability 1 - (1 - Phi(-tau/sigma))^T. The summed form that Eq. (12) uses,
    sum_i <w*, g_i> >= -tau T, fails with probability Phi(-tau sqrt(T)/sigma).
    Returns T, p, sigma, n, tau, tau/sigma, per_iteration, expected_violations, union (some iteration violates),
    summed.
    """
    T = lemma18_iterations(alpha, gamma)
    p, sigma, _ = lemma19_parameters(epsilon, delta, T)
    n = theorem6_sample_size(d, gamma, alpha, epsilon, delta, opt_noise_constant)
    tau = 0.01 * alpha * (0.05 * gamma) * p * n
    r = tau / sigma
    per = float(special.ndtr(-r))
    union = float(-math.expm1(T * math.log1p(-per)))
    return dict(T=T, p=p, sigma=sigma, n=n, tau=tau, tau_over_sigma=r, per_iteration=per, expected_violations=T * per,
                union=union, summed=float(special.ndtr(-r * math.sqrt(T))))


def theorem6_scaled_parameters(d, gamma, alpha, epsilon, delta, n, kappa, kappa_T):
    """Theorem 6's parameters with scaled constants: T = ceil(1500 kappa_T/(alpha gamma_gap^2)), p = 1/sqrt(T),
    sigma = 100 kappa ln(T/delta)/epsilon, b = 100 kappa sqrt(ln(T/delta))/epsilon.

    kappa = kappa_T = 1 gives Lemma 18's T and Lemma 19's (p, sigma, b) (up to rounding; a test ties them).
    """
    T = math.ceil(1500 * kappa_T / (alpha * (0.05 * gamma) ** 2))
    L = math.log(T / delta)
    return dict(T=T, p=1 / math.sqrt(T), sigma=100 * kappa * L / epsilon, b=100 * kappa * math.sqrt(L) / epsilon)


def subsampled_epsilon(p: float, epsilon_0: float) -> float:
    """Lemma 20 (Balle et al. 2018): an (epsilon_0, delta_0)-DP mechanism on a Poisson(p) subsample is
    (2 p epsilon_0, p delta_0)-DP; returns 2 p epsilon_0."""
    return 2 * p * epsilon_0


def adv_composition_epsilon(T: float, epsilon_0: float, delta_0: float) -> float:
    """Lemma 21 (advanced composition): sqrt(2 T ln(1/delta_0)) epsilon_0 + 2 T epsilon_0^2."""
    return math.sqrt(2 * T * math.log(1 / delta_0)) * epsilon_0 + 2 * T * epsilon_0**2


def lemma19_accounting(epsilon: float, delta: float, T: float) -> dict[str, float]:
    """Lemma 19 and its proof (App. F.2): the learner's p, sigma, b (:func:`lemma19_parameters`), the per-step
    epsilon_0 = epsilon/(20 sqrt(ln(T/delta))) and delta_0 = delta/(2 sqrt(T)), and the accounted
    (epsilon', delta') of Lemma 21 applied to Lemma 20's (2 p epsilon_0, p delta_0).

    ``epsilon_acc`` uses ln(1/(p delta_0)); ``epsilon_acc_as_printed`` the printed ln(1/(p delta)).
    Erratum (proof of Lemma 19): the composition needs ln(1/(p delta_0)); the paper prints ln(1/(p delta)).
    """
    p, sigma, b = lemma19_parameters(epsilon, delta, T)
    L = math.log(T / delta)
    eps0 = epsilon / (20 * math.sqrt(L))
    delta0 = delta / (2 * math.sqrt(T))
    step = subsampled_epsilon(p, eps0)
    eps_acc = adv_composition_epsilon(T, step, p * delta0)
    eps_printed = adv_composition_epsilon(T, step, p * delta)
    return dict(p=p, sigma=sigma, b=b, epsilon_0=eps0, delta_0=delta0, epsilon_acc=eps_acc,
                epsilon_acc_as_printed=eps_printed, delta_acc=(T + 1) * p * delta0)


def lemma19_classic_gaussian_ratio(epsilon: float, delta: float, T: int) -> float:
    """sigma / (the classic calibration sqrt(2 ln(1.25/delta_0))/(0.5 epsilon_0)) in Lemma 19's proof (>= 1 needed).

    The proof makes each Gaussian step (0.5 epsilon_0, delta_0)-DP by the classic Gaussian mechanism (Dwork & Roth
    2014, Thm A.1) it cites. Erratum (Lemma 19, "for any T in N"): at T = 1 the ratio drops below 1 for
    delta >~ 0.65 (0.57 at delta = 0.9); it is >= 1.16 for T = 1, delta <= 0.5 and >= 1.31 for T >= 2.
    """
    P = lemma19_accounting(epsilon, delta, T)
    return P["sigma"] / GaussianMechanism(0.5 * P["epsilon_0"], P["delta_0"], calibration="classic").sigma


def analytic_gaussian_sigma_independent(epsilon: float, delta: float) -> float:
    """The smallest std sigma for which the Gaussian mechanism (sensitivity 1) is exactly (epsilon, delta)-DP.

    Solved by Brent's method on :func:`gaussian_delta`, independently of dp_accounting's calibration, which
    :class:`privbound.learners.mechanisms.GaussianMechanism` uses (a test ties the two).
    """
    f = lambda s: gaussian_delta(s, epsilon) - delta  # decreasing in s
    lo, hi = 1e-3, 1.0
    while f(hi) > 0:
        hi *= 2
    return float(optimize.brentq(f, lo, hi, xtol=1e-12, rtol=1e-12))
