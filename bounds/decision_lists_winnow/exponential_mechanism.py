"""Checks of Lemma 3 (Sec. 2, the exponential mechanism of McSherry & Talwar 2007) for
"Privately Learning Decision Lists and a Differentially Private Winnow".

The mechanism checked is :func:`privbound.learners.mechanisms.exponential_mechanism_log_probabilities`,
which samples with weight exp(+eps q/2). Erratum: Lemma 3 prints exp(-eps q/2), which favours the
worst candidate of a maximised score; the tests show that the printed sign fails the utility check.

* exact epsilon-DP by enumerating the vertices of the sensitivity box (:func:`check_lemma3_dp`);
* exact utility tail mass from the log-probabilities (:func:`check_lemma3_utility`);
* the erratum: the same utility check on the printed weight exp(-eps q/2)
  (:func:`check_lemma3_printed_sign`, :func:`~privbound.bounds.decision_lists_winnow.formulas.em_log_probabilities_printed`),
  which fails.
"""

from __future__ import annotations

import itertools
import math
from typing import Callable

import numpy as np
from scipy import special

from privbound.bounds.checks import CheckContext, CheckResult, exact
from privbound.bounds.decision_lists_winnow.formulas import em_log_probabilities_printed, em_slack
from privbound.learners.mechanisms import exponential_mechanism_log_probabilities

__all__ = ["em_exact_dp", "em_utility_outcome", "check_lemma3_dp", "check_lemma3_utility", "check_lemma3_printed_sign"]


def em_exact_dp(logprob: Callable[[np.ndarray, float], np.ndarray], epsilon: float, H: int, max_score: int) -> float:
    """max over score vectors in {0..max_score}^H and neighbours q' = q + s, s in {-1,1}^H, of |log P - log P'|.

    The log-ratio log P_q(h) - log P_{q'}(h) is convex in q' (a linear term plus a
    log-sum-exp), so its maximum over the box |q' - q|_inf <= 1 is at a vertex:
    enumerating the 2^H vertices is exact for this family.
    """
    scores = np.array(list(itertools.product(range(max_score + 1), repeat=H)), dtype=float)
    shifts = np.array(list(itertools.product((-1.0, 1.0), repeat=H)))
    worst = 0.0
    for q in scores:
        lp = logprob(q, epsilon)
        for s in shifts:
            worst = max(worst, float(np.max(np.abs(lp - logprob(q + s, epsilon)))))
    return worst


def _em_score_family(rng: np.random.Generator, epsilon: float, tau: float) -> list[np.ndarray]:
    """Score vectors for the utility check: random integers, and adversarial ones where all
    but one candidate sit just below the bad threshold max q - (2/eps)(ln|H| + tau)."""
    fam = []
    for H in (2, 3, 5, 10, 50, 200):
        slack = em_slack(epsilon, H, tau)
        for _ in range(5):
            fam.append(rng.integers(-30, 1, size=H).astype(float))
        adv = np.full(H, -slack * (1.0 + 1e-9))
        adv[0] = 0.0
        fam.append(adv)
        fam.append(-rng.uniform(0, 3 * slack, size=H))
    return fam


def em_utility_outcome(logprob: Callable[[np.ndarray, float], np.ndarray], rng: np.random.Generator) -> CheckResult:
    """Lemma 3 utility: P[q(h) < max q - (2/eps)(ln|H| + tau)] <= e^-tau, computed exactly in log space.

    ``observed`` is the largest ratio P_bad / e^-tau over the family (fail if > 1).
    """
    worst, arg = -np.inf, None
    for epsilon in (0.1, 0.5, 1.0, 2.0):
        for tau in (0.5, 1.0, 3.0):
            for q in _em_score_family(rng, epsilon, tau):
                lp = logprob(q, epsilon)
                bad = q < q.max() - em_slack(epsilon, q.size, tau)
                if not bad.any():
                    continue
                log_ratio = float(special.logsumexp(lp[bad]) + tau)
                if log_ratio > worst:
                    worst, arg = log_ratio, dict(epsilon=epsilon, tau=tau, H=int(q.size))
    ratio = math.exp(worst) if np.isfinite(worst) else 0.0
    return exact(ratio, 1.0, sense="<=", rtol=1e-9, worst_case=arg,
                 looseness=(1.0 / ratio if ratio > 0 else math.inf),
                 note="ratio = max over score family of P[bad] / e^-tau; computed from exact log-probabilities")


def _em_logprob(q: np.ndarray, epsilon: float) -> np.ndarray:
    return exponential_mechanism_log_probabilities(q, epsilon)


def check_lemma3_dp(ctx: CheckContext) -> CheckResult:
    """Exact epsilon-DP of the exponential mechanism (privbound.learners.mechanisms) by vertex enumeration."""
    worst, where = 0.0, None
    for epsilon in (0.1, 1.0, 3.0):
        for H, max_score in ((2, 4), (3, 3), (4, 2)):
            v = em_exact_dp(_em_logprob, epsilon, H, max_score) / epsilon
            if v > worst:
                worst, where = v, dict(epsilon=epsilon, H=H, max_score=max_score)
    return exact(worst, 1.0, sense="<=", rtol=1e-9, worst_case=where,
                 note="observed = max |log P_q(h) - log P_q'(h)| / epsilon over |q - q'|_inf <= 1 (vertices)")


def check_lemma3_utility(ctx: CheckContext) -> CheckResult:
    """Lemma 3's utility statement on the exponential mechanism, exactly (:func:`em_utility_outcome`)."""
    return em_utility_outcome(_em_logprob, ctx.rng)


def check_lemma3_printed_sign(ctx: CheckContext) -> CheckResult:
    """Lemma 3's utility statement on the printed weight exp(-eps q/2): fails (erratum; the corrected sign
    passes :func:`check_lemma3_utility` on the same score family)."""
    out = em_utility_outcome(em_log_probabilities_printed, ctx.rng)
    if out.status == "fail":
        out.details["erratum"] = ("Lemma 3 prints the sampling weight exp(-eps q/2); for a maximised score it "
                                  "favours the worst candidate and the utility bound fails. The mechanism "
                                  "samples with exp(+eps q/2).")
    return out
