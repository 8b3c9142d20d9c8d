"""Formulas of "Privately Learning Decision Lists and a Differentially Private Winnow" that only the claims and
checks use (paper id ``decision-lists-winnow``).

The formulas a learner runs with live with the learner and are imported from there:
Lemma 9's update bound, Lemma 10's alpha, Lemma 11's calibration and privacy accounting,
Lemma 13's m, Lemma 14's K and Theorem 12's corrected count in
:mod:`privbound.learners.decision_lists_winnow.winnow`; Theorem 7's privacy accounting in
:mod:`privbound.learners.decision_lists_winnow.decision_lists`. Here: Lemma 3's slack as a
function of a real |H|, the printed and corrected forms of Theorem 12 at L = alpha, the
calibrated bound of Theorem 2 and its closed form, Theorem 7's sample size, the explicit
margin constant of the Lemma 15 construction, and the printed (erroneous) forms the errata checks
evaluate: Lemma 3's sign, Lemma 11's two-part total, Lemma 13's m with ln(T/beta) and the
decision-list recipe without the final-run deletion. Natural logarithms throughout.
"""

from __future__ import annotations

import math

from privbound.learners.decision_lists_winnow.winnow import (
    DPWinnow,
    dp_winnow_alpha,
    dp_winnow_epsilon_sharp,
    lemma11_epsilon_hat,
    lemma11_eta,
    theorem12_mistake_bound,
    winnow_update_bound,
)

__all__ = [
    "em_slack",
    "lemma11_total_epsilon",
    "lemma14_g",
    "theorem12_paper_bound",
    "theorem12_corrected_bound",
    "dp_winnow_calibration",
    "theorem2_mistakes",
    "theorem2_closed_form",
    "greedy_cover_train_error",
    "greedy_cover_samples",
    "lemma15_margin_lower",
    "em_log_probabilities_printed",
    "lemma11_two_part_total",
    "lemma13_m_printed",
    "monotone_dl_to_halfspace_printed",
]


def em_slack(epsilon: float, H: float, tau: float) -> float:
    """Lemma 3 utility slack (2/epsilon)(ln|H| + tau), for a real |H| >= 1.

    The same formula as :func:`privbound.learners.mechanisms.exponential_mechanism_utility_bound`
    (tested equal), which takes an integer number of candidates; the claim is evaluated at real
    parameters.
    """
    return 2.0 / epsilon * (math.log(H) + tau)


def lemma11_total_epsilon(epsilon: float, delta: float, K: float, m: float) -> float:
    """Lemma 11's calibration plugged into DP-Winnow's own (reconstructed, sharp) accounting."""
    return dp_winnow_epsilon_sharp(lemma11_epsilon_hat(epsilon, delta, K), lemma11_eta(epsilon, delta, K, m), m, K, delta)


def lemma14_g(K: float, epsilon: float, delta: float, d: float, rho: float, m: float, c: float) -> float:
    """g(K) = ln d / ((1-c) eta rho - eta^2/2) at Lemma 11's eta(K): K is large enough iff g(K) <= K."""
    return winnow_update_bound(d, rho, lemma11_eta(epsilon, delta, K, m), c)


def theorem12_paper_bound(T: float, beta: float, epsilon_hat: float, K: float) -> float:
    """Theorem 12 as printed in the proof: 16 ln(2T^2/beta) K / epsilon_hat."""
    return 16.0 * math.log(2.0 * T * T / beta) / epsilon_hat * K


def theorem12_corrected_bound(T: float, beta: float, epsilon_hat: float, K: float) -> float:
    """Theorem 12 corrected: (K+1)(L + alpha + 1) at L = alpha = 8 ln(2T^2/beta)/eps_hat."""
    alpha = dp_winnow_alpha(epsilon_hat, T, beta)
    return theorem12_mistake_bound(alpha, alpha, K)


def dp_winnow_calibration(epsilon: float, delta: float, d: float, rho: float, T: float, beta: float,
                          c: float = 0.25) -> dict[str, float]:
    """DP-Winnow's calibration (:meth:`DPWinnow.from_privacy`) with the printed and the corrected Theorem 12 bounds."""
    w = DPWinnow.from_privacy(epsilon, delta, d, rho, T, beta, c)
    return dict(m=w.m, K=w.K, eta=w.eta, epsilon_hat=w.epsilon_hat, alpha=w.L, L=w.L,
                mistakes_paper=theorem12_paper_bound(T, beta, w.epsilon_hat, w.K),
                mistakes=theorem12_corrected_bound(T, beta, w.epsilon_hat, w.K))


def theorem2_mistakes(epsilon: float, delta: float, d: float, rho: float, T: float, beta: float,
                      c: float = 0.25) -> float:
    """Theorem 2 [RECON constants]: the corrected Theorem 12 count at DP-Winnow's calibration."""
    return dp_winnow_calibration(epsilon, delta, d, rho, T, beta, c)["mistakes"]


def theorem2_closed_form(epsilon: float, delta: float, d: float, rho: float, T: float, beta: float,
                         c: float = 0.25) -> float:
    """Theorem 2's bound in closed form [RECON]: 64 sqrt2 256^{3/2} ln(2T^2/b) ln^{3/2}(T^2/b) ln^3 d ln^2(2/delta)
    / (c^3 (1-c)^3 eps^4 rho^6) (the calibrated count without ceilings and lower-order terms)."""
    return (64.0 * math.sqrt(2.0) * 256.0**1.5 * math.log(2 * T * T / beta) * math.log(T * T / beta) ** 1.5
            * math.log(d) ** 3 * math.log(2.0 / delta) ** 2 / (c**3 * (1 - c) ** 3 * epsilon**4 * rho**6))


def greedy_cover_train_error(F: float, epsilon_step: float, beta: float) -> float:
    """Theorem 7 [RECON]: E = (2M/eps_step)(ln 2M + ln(2M/beta)), M = |F|+1 (probability >= 1 - beta/2)."""
    M = F + 1.0
    return 2.0 * M / epsilon_step * (math.log(2.0 * M) + math.log(2.0 * M / beta))


def greedy_cover_samples(F: float, epsilon_step: float, alpha: float, beta: float) -> float:
    """Theorem 7 [RECON]: n >= max{2E/alpha, (8/alpha)(M ln 2M + ln(2/beta))}."""
    M = F + 1.0
    E = greedy_cover_train_error(F, epsilon_step, beta)
    return max(2.0 * E / alpha, 8.0 / alpha * (M * math.log(2.0 * M) + math.log(2.0 / beta)))


def lemma15_margin_lower(r: float, D: float) -> float:
    """Margin of the Lemma 15 construction (derived here): >= (1/3)(D/(r+D-1))^D >= 1/(3 r^D).

    Every value |<w,(x,1)>| is >= 1/2 before normalisation and ||w||_1 <= (3/2) prod_j (|R_j| + 1).
    """
    return (D / (r + D - 1.0)) ** D / 3.0


# ----------------------------------------------------------------- printed forms (errata), evaluable by name


def em_log_probabilities_printed(scores, epsilon: float):
    """Lemma 3 as printed: P[h] proportional to exp(-epsilon q(S,h)/2) (erratum: the sign is wrong for a
    maximised score; :func:`privbound.learners.mechanisms.exponential_mechanism_log_probabilities` uses +)."""
    import numpy as np
    from scipy import special

    z = -epsilon * np.asarray(scores, dtype=float) / 2.0
    return z - special.logsumexp(z)


def lemma11_two_part_total(epsilon: float, delta: float, K: float, m: float) -> float:
    """Lemma 11's accounting as the paper's constants suggest (erratum): advanced composition of K+1
    AboveThreshold instances (eps_hat each) and of the m K 4 eta-DP draws, with delta/2 each. It exceeds
    epsilon from delta ~ 0.47 (m = K = 1, epsilon -> 1); the sharp total (:func:`lemma11_total_epsilon`)
    does not."""
    from privbound.learners.decision_lists_winnow.winnow import dp_winnow_epsilon_two_part

    return dp_winnow_epsilon_two_part(lemma11_epsilon_hat(epsilon, delta, K), lemma11_eta(epsilon, delta, K, m),
                                      m, K, delta)


def lemma13_m_printed(T: int, beta: float, c: float, rho: float) -> int:
    """Lemma 13's m with a union over the T rounds only (erratum): ceil(2 ln(T/beta)/(c^2 rho^2)). The
    proof's union runs over (sample, round) pairs, up to T^2 of them (:func:`~privbound.learners.
    decision_lists_winnow.winnow.lemma13_m` uses ln(T^2/beta))."""
    return int(math.ceil(2.0 * math.log(T / beta) / (c * c * rho * rho)))


def monotone_dl_to_halfspace_printed(vars_, bits, default: int, d: int):
    """The textbook decision-list -> halfspace recipe without the deletion of the final run of rules
    sharing the default's bit (erratum of the recipe: its margin is only Theta(r^-(D+1)), not the
    Omega(r^-D) of Lemma 15). Same weights as :func:`~privbound.learners.decision_lists_winnow.
    decision_lists.monotone_dl_to_halfspace` otherwise."""
    from privbound.learners.decision_lists_winnow.decision_lists import halfspace_of_rule_runs

    return halfspace_of_rule_runs(vars_, bits, default, d)
