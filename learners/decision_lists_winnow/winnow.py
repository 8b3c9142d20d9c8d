"""Winnow, ConfidentWinnow and DP-Winnow (Sec. 4 of "Privately Learning Decision Lists and a
Differentially Private Winnow"; paper id ``decision-lists-winnow``).

* :class:`Winnow` -- normalised Winnow (Littlestone 1988): multiplicative update on mistakes;
* :class:`ConfidentWinnow` -- Algorithm 4.1 (Sec. 4.1): update on mistakes and on unconfident
  rounds |<w,x>| <= c rho when the adversary's bit b is 1 (bits default to all ones);
  Lemma 9 bounds the number of updates;
* :class:`DPWinnow` -- Algorithm 4.2 (Sec. 4.2): AboveThreshold over the mistake count of the
  current window, the first cached mistake of the window, the multiplicative update of the
  hidden (shadow) weights, and the release of the empirical distribution of m samples drawn
  from them. Lemma 11's calibration (with Lemma 13's m and the closed-form K of Lemma 14) is
  :meth:`DPWinnow.from_privacy`; any parametric (eps_hat, eta, m, L, K) is allowed;
* batched runs: :func:`confident_winnow_batch` (many sequences at once, also against the
  greedy adaptive adversary) and :meth:`DPWinnow.run_batch` (many independent DP-Winnow runs
  on one oblivious sequence);
* instance generators with a nonnegative rho-margin target (:func:`generate_instance`);
* the formulas the learners run with: Lemma 9's update bound, Lemma 10's alpha, Lemma 11's
  calibration and privacy accounting, Lemma 13's m, Lemma 14's K and Theorem 12's mistake bound.

Choices where Algorithm 4.2 leaves room (the source text lost its indentation and its proofs):

* AddQuery is called every round, not only on mistake rounds: the presence of a query must not
  depend on a label, or the sparse-vector privacy proof breaks (``query_every_round=False`` is
  that non-private variant, kept as a planted bug);
* a firing with an empty cache (possible off Lemma 10's accuracy event) skips the shadow update
  but still resamples, counts as an update and restarts the window;
* once k = K a firing changes nothing and no further instance is started;
* sgn(0) counts as a mistake (conservative; <w~,x> can be 0 for even m or d).

Conventions: x in {-1,1}^d, y in {-1,1}; natural logarithms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import special

from privbound.learners.decision_lists_winnow.decision_lists import (
    evaluate_monotone_dl,
    monotone_dl_to_halfspace,
    nonnegative_embedding,
    nonnegative_weights,
    random_monotone_dl,
)
from privbound.learners.mechanisms import AboveThreshold, PrivacyGuarantee, above_threshold_firing_logprobs
from privbound.learners.neighbouring import NeighbouringRelation
from privbound._validation import Interval, check_int, check_real, check_rng, validate_parameters

if TYPE_CHECKING:  # annotations only: dp_accounting is imported when an accountant is asked for
    import dp_accounting

__all__ = [
    "OnlineTrace",
    "BatchTrace",
    "Winnow",
    "ConfidentWinnow",
    "DPWinnow",
    "DPWinnowBatch",
    "confident_winnow_batch",
    "multiplicative_update",
    "MarginAdversary",
    "dictator_adversary",
    "disjunction_adversary",
    "winnow_potential_drop",
    "winnow_update_bound",
    "dp_winnow_alpha",
    "theorem12_mistake_bound",
    "lemma11_epsilon_hat",
    "lemma11_eta",
    "lemma13_m",
    "lemma14_k_star",
    "advanced_composition",
    "dp_winnow_epsilon_sharp",
    "dp_winnow_epsilon_two_part",
    "randomized_response_noise",
    "dp_winnow_composition_pld",
    "dp_winnow_composition_delta",
    "above_threshold_fire_probability",
    "dp_winnow_round0_witness",
    "dp_winnow_first_window_queries",
    "dp_winnow_round0_log_likelihood_ratio",
    "dp_winnow_single_update_logprobs",
    "dp_winnow_round0_tight_epsilon",
    "Instance",
    "generate_instance",
    "GENERATORS",
]


# ============================================================================ formulas (the learners' own accounting)


def winnow_potential_drop(rho: float, eta: float, c: float = 0.0) -> float:
    """Lemma 9's proof: each update lowers KL(v || w) by at least (1 - c) eta rho - eta^2/2."""
    return (1.0 - c) * eta * rho - eta * eta / 2.0


def winnow_update_bound(d: float, rho: float, eta: float, c: float = 0.0) -> float:
    """Lemma 9 (and Lemma 14): ln d / ((1 - c) eta rho - eta^2/2) (inf when the denominator is <= 0)."""
    den = winnow_potential_drop(rho, eta, c)
    return math.log(d) / den if den > 0 else math.inf


def dp_winnow_alpha(epsilon_hat: float, T: float, beta: float) -> float:
    """Lemma 10's alpha for the T queries of one instance at failure probability beta/T: 8 ln(2T^2/beta)/eps_hat.

    [RECON] Lemma 10's alpha is reconstructed (8 ln(2T/beta)/epsilon, Dwork--Roth Thm 3.24); with
    the per-instance beta/T of Algorithm 4.2 it is the 8 ln(2T^2/beta)/eps_hat that matches the
    16 ln(2T^2/beta)/eps_hat of Theorem 12's proof.
    """
    return 8.0 * math.log(2.0 * T * T / beta) / epsilon_hat


def theorem12_mistake_bound(L: float, alpha: float, updates: Any) -> Any:
    """Theorem 12, corrected count: (U + 1)(L + alpha + 1) mistakes for U updates (``updates`` may be an array).

    Erratum: the proof counts 2 alpha mistakes per update (16 ln(2T^2/beta) K / eps_hat); each
    window also holds the mistake of its firing round, and the last window never fires.
    """
    return (updates + 1) * (L + alpha + 1.0)


def lemma11_epsilon_hat(epsilon: float, delta: float, K: float) -> float:
    """Lemma 11: epsilon_hat = epsilon / (4 sqrt(2 K ln(2/delta)))."""
    return epsilon / (4.0 * math.sqrt(2.0 * K * math.log(2.0 / delta)))


def lemma11_eta(epsilon: float, delta: float, K: float, m: float) -> float:
    """Lemma 11: eta = epsilon / (8 sqrt(2 m K ln(2/delta)))."""
    return epsilon / (8.0 * math.sqrt(2.0 * m * K * math.log(2.0 / delta)))


def lemma13_m(T: int, beta: float, c: float, rho: float) -> int:
    """Lemma 13 [RECON]: m = ceil(2 ln(T^2/beta) / (c^2 rho^2)).

    Lemma 13's statement is missing from the source text. Its union bound runs over up to T^2
    (sample, round) pairs, hence ln(T^2/beta), not the ln(T/beta) of a union over rounds alone.
    """
    return int(math.ceil(2.0 * math.log(T * T / beta) / (c * c * rho * rho)))


def lemma14_k_star(epsilon: float, delta: float, d: float, rho: float, m: float, c: float) -> int:
    """The smallest integer K with K >= ln d / ((1-c) eta(K) rho - eta(K)^2/2) at Lemma 11's eta(K), in closed form.

    Lemma 14 sets K from eta and Lemma 11 sets eta from K; the paper does not solve the circle.
    With eta(K) = a / sqrt(K), a = eps/(8 sqrt(2 m ln(2/delta))), a sufficient K is
    K* = ceil(((ln d + a^2/2) / ((1-c) a rho))^2) [RECON].
    """
    a = epsilon / (8.0 * math.sqrt(2.0 * m * math.log(2.0 / delta)))
    return int(math.ceil(((math.log(d) + a * a / 2.0) / ((1.0 - c) * a * rho)) ** 2))


def advanced_composition(epsilon_0: float, k: float, delta_prime: float) -> float:
    """Advanced composition (Dwork, Rothblum & Vadhan 2010): eps0 sqrt(2k ln(1/delta')) + k eps0 (e^eps0 - 1)."""
    return epsilon_0 * math.sqrt(2.0 * k * math.log(1.0 / delta_prime)) + k * epsilon_0 * math.expm1(epsilon_0)


def dp_winnow_epsilon_sharp(epsilon_hat: float, eta: float, m: int, K: int, delta: float) -> float:
    """DP-Winnow's epsilon [RECON]: eps_hat + advanced composition of the m K draws (each 4 eta-DP) at delta.

    Lemma 11's proof is not in the source text. Under event-level neighbours only the
    AboveThreshold instance whose window holds the changed round pays (eps_hat); each of the
    m K released samples is an exponential-mechanism draw with score sensitivity 2, i.e. 4 eta-DP.
    """
    return epsilon_hat + advanced_composition(4.0 * eta, m * K, delta)


def dp_winnow_epsilon_two_part(epsilon_hat: float, eta: float, m: int, K: int, delta: float) -> float:
    """The conservative accounting [RECON]: K+1 instances and m K draws, advanced composition with delta/2 each.

    Erratum: with Lemma 11's eps_hat and eta this total exceeds epsilon from delta ~ 0.47, so
    Lemma 11 needs the sharp accounting (:func:`dp_winnow_epsilon_sharp`).
    """
    return advanced_composition(epsilon_hat, K + 1, delta / 2.0) + advanced_composition(4.0 * eta, m * K, delta / 2.0)


def randomized_response_noise(epsilon: float) -> float:
    """The noise parameter 2/(1 + e^eps) of dp_accounting's binary randomized response that is exactly eps-DP:
    the dominating pair of every pure eps-DP step (Kairouz, Oh & Viswanath 2015)."""
    return 2.0 / (1.0 + math.exp(epsilon))


def dp_winnow_composition_pld(epsilon_hat: float, eta: float, m: int, K: int, *,
                              value_discretization: float = 1e-4) -> Any:
    """dp_accounting's PLD of :meth:`DPWinnow.dp_event`: one AboveThreshold instance (eps_hat) composed with the
    m K draws (4 eta each), each pure step as its dominating binary randomized response (replace-one).

    Built from ``privacy_loss_distribution.from_randomized_response`` and ``self_compose``: dp_accounting 0.6's
    ``PLDAccountant`` composes a ``SelfComposedDpEvent`` of randomized response once, whatever its count.
    """
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import privacy_loss_distribution as pld

    def rr(e: float) -> Any:
        return pld.from_randomized_response(randomized_response_noise(e), 2, value_discretization_interval=value_discretization,
                                            neighboring_relation=NeighboringRelation.REPLACE_ONE)

    out = rr(epsilon_hat)
    return out.compose(rr(4.0 * eta).self_compose(int(m) * int(K))) if m * K > 0 else out


def dp_winnow_composition_delta(epsilon_hat: float, eta: float, m: int, K: int, epsilon: float) -> float:
    """The exact delta(epsilon) of the composition :func:`dp_winnow_composition_pld` describes, by a binomial sum.

    Under the first distribution the privacy loss is eps_hat S + 4 eta (mK - 2J), S = +-1 with P(S = 1) =
    e^eps_hat/(1 + e^eps_hat) and J ~ Binomial(mK, 1/(1 + e^{4 eta})) independent; delta(eps) =
    E[(1 - e^{eps - loss})_+] (the pair is symmetric, so one direction suffices).
    """
    from scipy import stats

    k = int(m) * int(K)
    b = 4.0 * eta
    j = np.arange(k + 1)
    loss_draws = b * (k - 2 * j)
    logp_draws = stats.binom.logpmf(j, k, special.expit(-b))
    loss = np.concatenate([epsilon_hat + loss_draws, -epsilon_hat + loss_draws])
    logp = np.concatenate([logp_draws + math.log(special.expit(epsilon_hat)), logp_draws + math.log(special.expit(-epsilon_hat))])
    keep = loss > epsilon
    return float(np.sum(np.exp(logp[keep]) * -np.expm1(epsilon - loss[keep])))


def above_threshold_fire_probability(query: float, threshold: float, epsilon_hat: float) -> float:
    """P[query + Lap(4/eps_hat) >= threshold + Lap(2/eps_hat)]: the first query of a fresh AboveThreshold
    instance answers TRUE (closed form of the sum of two independent Laplace variables, scales 4/eps_hat and
    2/eps_hat: for z >= 0, P[sum > z] = (b1^2 e^{-z/b1} - b2^2 e^{-z/b2}) / (2 (b1^2 - b2^2)))."""
    b2, b1 = AboveThreshold.noise_scales(epsilon_hat)
    z = float(threshold - query)

    def tail(z: float) -> float:
        return (b1 * b1 * math.exp(-z / b1) - b2 * b2 * math.exp(-z / b2)) / (2.0 * (b1 * b1 - b2 * b2))

    return tail(z) if z >= 0 else 1.0 - tail(-z)


def _first_mistake_of_uniform(X: np.ndarray, y: np.ndarray) -> int:
    """The first round where the uniform initial weights err (sgn 0 a mistake), -1 if none."""
    wrong = np.flatnonzero(np.sign(X.mean(axis=1)) != y)
    return int(wrong[0]) if wrong.size else -1


def dp_winnow_round0_witness(learner: "DPWinnow", d0: tuple, d1: tuple, *, release: str = "sampled",
                             query_every_round: bool = True) -> tuple[float, float]:
    """Probabilities ``(p0, p1)`` on the event-level pair ``(d0, d1)`` (differing at round 0) of an output event
    that a correct DP-Winnow keeps close and a planted bug separates: whatever is released, the first
    AboveThreshold instance fires at round 0; with ``release="shadow"``, the first released shadow vector is
    the one d1's round-0 update makes.

    Round 0 is queried on a dataset iff ``query_every_round`` or the uniform initial weights err there (count
    1); it then fires with :func:`above_threshold_fire_probability`. With the shadow release, d1 must err at
    round 0, so every update of its first window uses round 0 and the event has d1-probability at least that
    of a firing at round 0; on d0 the first shadow vector is uniform (empty cache) or the update by d0's first
    mistake of the uniform weights, and the event is impossible unless one of those equals d1's.
    """
    def fire0(X, y):
        mistake = bool(np.sign(X[0].mean()) != y[0])
        if not (query_every_round or mistake):
            return 0.0
        return above_threshold_fire_probability(float(mistake), learner.L, learner.epsilon_hat)

    (X0, y0), (X1, y1) = (_check_sequence(*d) for d in (d0, d1))
    if release != "shadow":
        return fire0(X0, y0), fire0(X1, y1)
    if _first_mistake_of_uniform(X1, y1) != 0:
        raise ValueError("the shadow-release witness needs the uniform weights to err at round 0 of d1")
    d = X1.shape[1]

    def shadow(x, yy):
        return np.exp(_log_normalise(multiplicative_update(np.full(d, -math.log(d)), learner.eta, yy, x)))

    v1 = shadow(X1[0], y1[0])
    t0 = _first_mistake_of_uniform(X0, y0)
    support0 = [np.full(d, 1.0 / d)] + ([shadow(X0[t0], y0[t0])] if t0 >= 0 else [])
    p0 = 0.0 if all(not np.allclose(v, v1, rtol=0, atol=1e-15) for v in support0) else 1.0
    return p0, fire0(X1, y1)


# ============================================================================ exact output law on pairs that differ at round 0


def _check_round0_pair(d0: tuple, d1: tuple) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Two sequences of the same shape that agree on every round except round 0 (event-level neighbours)."""
    (X0, y0), (X1, y1) = (_check_sequence(*d) for d in (d0, d1))
    if X0.shape != X1.shape:
        raise ValueError(f"d0 and d1 must have the same shape, got {X0.shape} and {X1.shape}")
    if not (np.array_equal(X0[1:], X1[1:]) and np.array_equal(y0[1:], y1[1:])):
        raise ValueError("d0 and d1 must agree on every round but round 0 (the exact law here is for the changed "
                         "round at the start of the first window)")
    return (X0, y0), (X1, y1)


def dp_winnow_first_window_queries(X: Any, y: Any) -> np.ndarray:
    """The queries of DP-Winnow's first AboveThreshold instance: the mistake count of rounds 0..t of the uniform
    initial released vector (sgn 0 a mistake), for every t. Until the first firing nothing but the uniform vector
    is released, so these are fixed by the data."""
    X, y = _check_sequence(X, y)
    return np.cumsum(X.mean(axis=1) * y <= 0.0).astype(float)


def _replay_shadow_logweights(learner: "DPWinnow", X: np.ndarray, y: np.ndarray, rounds: np.ndarray,
                              counts: np.ndarray) -> np.ndarray:
    """The shadow log-weights (B, U, d) each released sample of a DP-Winnow transcript was drawn from, on the
    dataset (X, y): window u runs from the round after the previous firing to ``rounds[:, u]`` under the vector
    released before it, its first mistake is the cached example (none: no shadow update)."""
    B, U = rounds.shape
    T, d = X.shape
    logw = np.full((B, d), -math.log(d))
    tw = np.full((B, d), 1.0 / d)
    start = np.zeros(B, dtype=np.int64)
    out = np.zeros((B, U, d))
    t_idx = np.arange(T)
    for u in range(U):
        has = rounds[:, u] >= 0
        win = (t_idx[None, :] >= start[:, None]) & (t_idx[None, :] <= rounds[:, u][:, None])
        mist = ((tw @ X.T) * y[None, :] <= 0.0) & win
        upd = mist.any(axis=1) & has
        if upd.any():
            i = np.flatnonzero(upd)
            first = mist[i].argmax(axis=1)
            logw[i] = _log_normalise(multiplicative_update(logw[i], learner.eta, y[first, None], X[first]))
        out[:, u] = logw
        tw = np.where(has[:, None], counts[:, u] / learner.m, tw)
        start = np.where(has, rounds[:, u] + 1, start)
    return out


def dp_winnow_round0_log_likelihood_ratio(learner: "DPWinnow", d0: tuple, d1: tuple):
    """The exact privacy loss ``L(o) = log P_d0(o) / P_d1(o)`` of DP-Winnow's released transcript on an event-level
    pair differing at round 0: a function of the outputs ``(update_rounds (B, U), counts (B, U, d))``.

    The changed round lies in the first window, whose queries are fixed by the data
    (:func:`dp_winnow_first_window_queries`): its firing round has the exact law
    :func:`~privbound.learners.mechanisms.above_threshold_firing_logprobs` on each dataset. The later windows see
    the same rounds and the same released vectors on both datasets, so their firing laws cancel. Every released
    sample is a draw from the shadow weights, which the transcript fixes on each dataset
    (the replay of the windows' first mistakes), so the draws contribute sum_u sum_j n_uj (ln w^0_uj - ln w^1_uj)
    (the multinomial coefficients cancel). Queries are asked every round (Algorithm 4.2 as implemented); only the
    first ``U`` updates need be observed (later draws are simply not in the output).
    """
    (X0, y0), (X1, y1) = _check_round0_pair(d0, d1)
    validate_parameters(learner)
    T, d = X0.shape
    first = [above_threshold_firing_logprobs(dp_winnow_first_window_queries(X, y), learner.L, learner.epsilon_hat)
             for X, y in ((X0, y0), (X1, y1))]

    def llr(update_rounds: Any, counts: Any) -> np.ndarray:
        rounds = np.asarray(update_rounds, dtype=np.int64)
        if rounds.ndim != 2:
            raise ValueError(f"update_rounds must be 2-d (trials, updates), got shape {rounds.shape}")
        n = np.asarray(counts, dtype=float).reshape(rounds.shape[0], rounds.shape[1], d)
        if learner.K == 0 or rounds.shape[1] == 0:
            return np.zeros(rounds.shape[0])  # nothing is released
        tau = np.where(rounds[:, 0] >= 0, rounds[:, 0], T)  # first firing (T: none)
        out = first[0][tau] - first[1][tau]
        lw0 = _replay_shadow_logweights(learner, X0, y0, rounds, n)
        lw1 = _replay_shadow_logweights(learner, X1, y1, rounds, n)
        has = (rounds >= 0)[:, :, None]
        return out + np.where(has, n * (lw0 - lw1), 0.0).sum(axis=(1, 2))

    return llr


def dp_winnow_single_update_logprobs(learner: "DPWinnow", d0: tuple, d1: tuple, *,
                                     max_classes: int = 2_000_000) -> tuple[np.ndarray, np.ndarray]:
    """The exact output law of DP-Winnow with K = 1 on an event-level pair differing at round 0: log-probabilities
    on d0 and d1 of a partition of the outputs into classes of equal privacy loss.

    With K = 1 the output is the first firing round tau (or none) and, after it, the m-sample counts of ONE
    draw from the shadow weights w^D(tau) (the uniform weights updated by dataset D's first mistake in rounds
    0..tau). tau has the exact AboveThreshold law of the first window; given tau, the coordinates fall into
    groups of equal (w^0_j, w^1_j), and the loss depends only on the counts per group, which are multinomial.
    Returns ``(logp0, logp1)`` over (tau, group counts) and the no-firing class.
    """
    from scipy import stats

    (X0, y0), (X1, y1) = _check_round0_pair(d0, d1)
    validate_parameters(learner)
    if learner.K != 1:
        raise ValueError(f"the exact law here is for K = 1 (one update), got K = {learner.K}")
    T, d = X0.shape
    first = [above_threshold_firing_logprobs(dp_winnow_first_window_queries(X, y), learner.L, learner.epsilon_hat)
             for X, y in ((X0, y0), (X1, y1))]
    lp0, lp1 = [np.array([first[0][T]])], [np.array([first[1][T]])]
    for tau in range(T):
        rounds = np.array([[tau]])
        lw = [_replay_shadow_logweights(learner, X, y, rounds, np.zeros((1, 1, d)))[0, 0] for X, y in ((X0, y0), (X1, y1))]
        keys, group = np.unique(np.round(np.stack(lw, axis=1), 12), axis=0, return_inverse=True)
        G = keys.shape[0]
        logmass = [np.log(np.bincount(group.ravel(), weights=np.exp(w), minlength=G)) for w in lw]
        n_classes = math.comb(learner.m + G - 1, G - 1)
        if n_classes > max_classes:
            raise ValueError(f"{n_classes} count classes at tau = {tau} exceed max_classes = {max_classes}")
        comp = _compositions(learner.m, G)
        base = special.gammaln(learner.m + 1) - special.gammaln(comp + 1).sum(axis=1)
        for s, (acc, lm) in enumerate(zip((lp0, lp1), logmass)):
            with np.errstate(invalid="ignore"):
                term = np.where(comp > 0, comp * lm[None, :], 0.0).sum(axis=1)
            acc.append(first[s][tau] + base + term)
    return np.concatenate(lp0), np.concatenate(lp1)


def dp_winnow_round0_tight_epsilon(learner: "DPWinnow", d0: tuple, d1: tuple, delta: float) -> tuple[float, str]:
    """``(epsilon, source)``: DP-Winnow's epsilon at ``delta`` on an event-level pair differing at round 0.

    K = 1: exact (the hockey-stick divergence of :func:`dp_winnow_single_update_logprobs`). K > 1: the exact law of
    the first window's firing round (the only AboveThreshold instance whose law differs,
    :func:`dp_winnow_round0_log_likelihood_ratio`) composed, by dp_accounting's PLD, with the m K draws each
    dominated by binary randomized response at 4 eta (their pure bound): exact in its AboveThreshold part, an
    upper bound in its draws.
    """
    from privbound.learners.accounting import exact_epsilon

    delta = check_real(delta, "delta", low=0.0, high=1.0, high_inclusive=False)
    if learner.K == 1:
        lp0, lp1 = dp_winnow_single_update_logprobs(learner, d0, d1)
        return (exact_epsilon(lp0, lp1, delta),
                f"exact hockey-stick divergence of the output law on this pair ({lp0.size} classes: the first "
                "window's firing round by quadrature over AboveThreshold's threshold noise, the m-sample counts "
                "of the single update per group of coordinates)")
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import privacy_loss_distribution as pld

    (X0, y0), (X1, y1) = _check_round0_pair(d0, d1)
    a = [above_threshold_firing_logprobs(dp_winnow_first_window_queries(X, y), learner.L, learner.epsilon_hat)
         for X, y in ((X0, y0), (X1, y1))]
    k = int(learner.m) * int(learner.K)
    step = min(1e-4, 1e-3 / (k + 1))
    draws = pld.from_randomized_response(randomized_response_noise(4.0 * learner.eta), 2, value_discretization_interval=step,
                                         neighboring_relation=NeighboringRelation.REPLACE_ONE).self_compose(k)
    eps = 0.0
    for upper, lower in ((a[0], a[1]), (a[1], a[0])):
        first = pld.from_two_probability_mass_functions(dict(enumerate(lower)), dict(enumerate(upper)),
                                                        value_discretization_interval=step)
        eps = max(eps, float(first.compose(draws).get_epsilon_for_delta(delta)))
    return (eps, f"dp_accounting PLD of the first window's exact AboveThreshold law on this pair (quadrature) composed "
                 f"with {k} draws each dominated by binary randomized response at 4 eta = {4 * learner.eta:g} "
                 "(exact in its AboveThreshold part, an upper bound in its draws)")


def _compositions(m: int, G: int) -> np.ndarray:
    """Every vector of G non-negative integers summing to m, shape (C(m+G-1, G-1), G)."""
    if G == 1:
        return np.array([[m]])
    rows = [np.concatenate([np.full((r.shape[0], 1), k), r], axis=1)
            for k in range(m + 1) for r in (_compositions(m - k, G - 1),)]
    return np.concatenate(rows, axis=0)


# ============================================================================ traces


@dataclass(frozen=True)
class OnlineTrace:
    """One run of an online learner on a sequence of T rounds.

    ``update_rounds`` are the (0-based) rounds where an update happened; ``released``
    holds the released hypotheses' sufficient statistics: for (Confident)Winnow the
    weight vector after each update (U, d); for DP-Winnow the sample counts n_u
    (U, d) whose empirical distribution n_u/m is the released vector from round
    update_rounds[u] + 1 on. ``update_examples`` is the round whose example was
    used for each update (-1 for an empty-cache firing).
    """

    predictions: np.ndarray
    mistakes: int
    updates: int
    update_rounds: np.ndarray
    released: np.ndarray
    weights: np.ndarray
    update_examples: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    shadow_history: np.ndarray | None = None
    lemma13_violations: int = 0


@dataclass(frozen=True)
class BatchTrace:
    """Many runs at once: per-run ``mistakes`` and ``updates`` (B,) and the final log-weights (B, d)."""

    mistakes: np.ndarray
    updates: np.ndarray
    predictions: np.ndarray | None
    log_weights: np.ndarray
    min_potential_drop: np.ndarray | None = None
    max_update_margin: np.ndarray | None = None


def multiplicative_update(logw: Any, eta: float, y: Any, x: Any) -> Any:
    """The multiplicative-weights step of every Winnow here, in log space and unnormalised: log w + eta y x.

    w_j <- w_j e^{eta y x_j} (Sec. 4.1); the callers normalise. Winnow, ConfidentWinnow (single,
    batched, greedy and adaptive runs) and DP-Winnow's shadow weights all update through it.
    """
    return logw + eta * y * x


def _log_normalise(a: np.ndarray) -> np.ndarray:
    """Rows of log-weights minus their log-sum-exp (a plain numpy logsumexp: scipy's per-call overhead
    dominates the many small calls of the per-round loops)."""
    mx = a.max(axis=-1, keepdims=True)
    return a - (mx + np.log(np.exp(a - mx).sum(axis=-1, keepdims=True)))


def _sgn(v: np.ndarray) -> np.ndarray:
    return np.sign(v).astype(np.int64)


def _check_sequence(X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-d array (T, d), got shape {X.shape}")
    if not np.all(np.abs(X) == 1):
        raise ValueError("X must have entries in {-1, 1} (Sec. 4 domain)")
    y = np.asarray(y)
    if y.shape != (X.shape[0],) or not np.all(np.abs(y) == 1):
        raise ValueError(f"y must have shape ({X.shape[0]},) and labels in {{-1, 1}}")
    return X, y.astype(np.int64)


# ============================================================================ (Confident)Winnow


def confident_winnow_batch(X: np.ndarray, y: np.ndarray, eta: float, c: float = 0.0, rho: float = 0.0,
                           b: np.ndarray | None = None, v: np.ndarray | None = None,
                           keep_predictions: bool = False) -> BatchTrace:
    """ConfidentWinnow on B sequences at once: X (B, T, d), y (B, T), bits b (B, T) (default all ones).

    Update iff sgn<w,x> != y (sgn(0) is a mistake) or (|<w,x>| <= c rho and b = 1).
    With ``v`` (B, d) given (a nonnegative, l1-normalised target), also records the
    smallest drop of the potential KL(v || w) over the updates of each run (the quantity
    Lemma 9's proof bounds below) and the largest y<w,x> at an update.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    B, T, d = X.shape
    logw = np.full((B, d), -math.log(d))
    mistakes = np.zeros(B, dtype=np.int64)
    updates = np.zeros(B, dtype=np.int64)
    preds = np.empty((B, T), dtype=np.int64) if keep_predictions else None
    min_drop = np.full(B, np.inf) if v is not None else None
    max_marg = np.full(B, -np.inf)
    if v is not None:
        v = np.asarray(v, dtype=float)
        with np.errstate(divide="ignore"):
            vlogv = np.where(v > 0, v * np.log(np.where(v > 0, v, 1.0)), 0.0).sum(axis=1)
    for t in range(T):
        w = np.exp(logw)
        x = X[:, t, :]
        val = np.einsum("bd,bd->b", w, x)
        pred = _sgn(val)
        if preds is not None:
            preds[:, t] = pred
        mist = pred != y[:, t]
        mistakes += mist
        upd = mist
        if c > 0:
            bt = np.ones(B, dtype=bool) if b is None else np.asarray(b[:, t], dtype=bool)
            upd = upd | ((np.abs(val) <= c * rho) & bt)
        if not upd.any():
            continue
        yt = y[:, t]
        max_marg = np.where(upd, np.maximum(max_marg, yt * val), max_marg)
        new = _log_normalise(multiplicative_update(logw[upd], eta, yt[upd, None], x[upd]))
        if v is not None:
            vv = v[upd]
            old_phi = vlogv[upd] - (vv * logw[upd]).sum(axis=1)
            new_phi = vlogv[upd] - (vv * new).sum(axis=1)
            min_drop[upd] = np.minimum(min_drop[upd], old_phi - new_phi)
        logw[upd] = new
        updates += upd
    return BatchTrace(mistakes, updates, preds, logw, min_drop, max_marg)


class ConfidentWinnow:
    """ConfidentWinnow (Algorithm 4.1, Sec. 4.1) with learning rate ``eta``, ratio ``c`` and margin ``rho``.

    Lemma 9: for any sequence with a nonnegative rho-margin target and any bits,
    the number of updates is <= ln d / ((1-c) eta rho - eta^2/2). The pseudocode's
    -c rho < <w,x> < c rho leaves the boundary open; |<w,x>| = c rho is treated as
    unconfident, which Lemma 14's coupling with DP-Winnow needs.
    """

    _parameter_constraints: dict = {
        "eta": [Interval(Real, 0, None, closed="neither")],
        "c": [Interval(Real, 0, 0.5, closed="left")],
        "rho": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, eta: float = 0.1, c: float = 0.25, rho: float = 0.1):
        self.eta = eta
        self.c = c
        self.rho = rho

    def update_bound(self, d: int) -> float:
        return winnow_update_bound(d, self.rho, self.eta, self.c)

    def run(self, X: Any, y: Any, b: Any = None) -> OnlineTrace:
        """Run on one sequence; ``b`` are the adversary's update bits (default all ones)."""
        validate_parameters(self)
        X, y = _check_sequence(X, y)
        T, d = X.shape
        bb = np.ones(T, dtype=bool) if b is None else np.asarray(b, dtype=bool)
        if bb.shape != (T,):
            raise ValueError(f"b must have shape ({T},), got {bb.shape}")
        logw = np.full(d, -math.log(d))
        preds = np.empty(T, dtype=np.int64)
        rounds, released = [], []
        mistakes = 0
        for t in range(T):
            w = np.exp(logw)
            val = float(w @ X[t])
            preds[t] = int(np.sign(val))
            mist = preds[t] != y[t]
            mistakes += int(mist)
            if mist or (self.c > 0 and abs(val) <= self.c * self.rho and bb[t]):
                logw = multiplicative_update(logw, self.eta, y[t], X[t])
                logw -= special.logsumexp(logw)
                rounds.append(t)
                released.append(np.exp(logw))
        return OnlineTrace(preds, mistakes, len(rounds), np.array(rounds, dtype=np.int64),
                           np.array(released).reshape(len(rounds), d), np.exp(logw),
                           np.array(rounds, dtype=np.int64))

    def run_batch(self, X: np.ndarray, y: np.ndarray, b: np.ndarray | None = None, v: np.ndarray | None = None) -> BatchTrace:
        validate_parameters(self)
        return confident_winnow_batch(X, y, self.eta, self.c, self.rho, b, v)

    def run_greedy(self, pool_X: np.ndarray, pool_y: np.ndarray, T: int) -> BatchTrace:
        """Against the greedy adaptive adversary: B independent games at once.

        Each round the adversary presents, from its pool (B, P, d) with labels (B, P),
        the point minimising y<w,x> against the current weights (bits all ones).
        """
        validate_parameters(self)
        pool_X = np.asarray(pool_X, dtype=float)
        pool_y = np.asarray(pool_y)
        B, P, d = pool_X.shape
        logw = np.full((B, d), -math.log(d))
        mistakes = np.zeros(B, dtype=np.int64)
        updates = np.zeros(B, dtype=np.int64)
        rows = np.arange(B)
        for _ in range(T):
            w = np.exp(logw)
            marg = pool_y * np.einsum("bpd,bd->bp", pool_X, w)
            k = marg.argmin(axis=1)
            x, yt, val = pool_X[rows, k], pool_y[rows, k], marg[rows, k] * pool_y[rows, k]
            mist = _sgn(val) != yt
            upd = mist | ((np.abs(val) <= self.c * self.rho) if self.c > 0 else False)
            mistakes += mist
            updates += upd
            if upd.any():
                logw[upd] = _log_normalise(multiplicative_update(logw[upd], self.eta, yt[upd, None], x[upd]))
        return BatchTrace(mistakes, updates, None, logw)

    def run_adaptive(self, adversary: "MarginAdversary", T: int) -> OnlineTrace:
        """Against an adaptive adversary: each round ``adversary.next(w)`` presents (x, y) (bits all ones),
        or ``None`` when it can no longer force an update (the game then ends: no further update can happen
        on the points it would present). Same update rule as :meth:`run`."""
        validate_parameters(self)
        T = check_int(T, "T", low=1)
        d = adversary.d
        logw = np.full(d, -math.log(d))
        preds, rounds, released, examples = [], [], [], []
        mistakes = 0
        for t in range(T):
            w = np.exp(logw)
            nxt = adversary.next(w)
            if nxt is None:
                break
            x, y = nxt
            val = float(w @ x)
            preds.append(int(np.sign(val)))
            mist = preds[-1] != y
            mistakes += int(mist)
            if mist or (self.c > 0 and abs(val) <= self.c * self.rho):
                logw = multiplicative_update(logw, self.eta, y, x)
                logw -= special.logsumexp(logw)
                rounds.append(t)
                released.append(np.exp(logw))
                examples.append(x * y)
        return OnlineTrace(np.array(preds, dtype=np.int64), mistakes, len(rounds), np.array(rounds, dtype=np.int64),
                           np.array(released).reshape(len(rounds), d), np.exp(logw),
                           np.array(rounds, dtype=np.int64))


class Winnow(ConfidentWinnow):
    """Normalised Winnow (Littlestone 1988): ConfidentWinnow with c = 0.

    Mistake bound (Lemma 9 with c = 0): ln d / (eta rho - eta^2/2); 2 ln d / rho^2 at eta = rho.
    """

    _parameter_constraints: dict = {"eta": [Interval(Real, 0, None, closed="neither")]}

    def __init__(self, eta: float = 0.1, rho: float = 0.0):
        super().__init__(eta=eta, c=0.0, rho=rho)


# ============================================================================ DP-Winnow


@dataclass(frozen=True)
class DPWinnowBatch:
    """Independent DP-Winnow runs on one sequence (arrays over trials).

    ``update_rounds`` (B, K) padded with -1; ``counts`` (B, K, d) the m-sample counts of
    each update; ``update_examples`` (B, K) the cached round used (-1: empty cache or no
    update); ``mistakes``/``updates`` (B,); ``lemma13_violations`` (B,) = rounds where the
    released vector erred although the shadow margin y<w,x> > c rho (needs c, rho);
    ``capped`` (B,) = runs that fired with k = K (and stopped updating);
    ``shadow_probabilities`` (B, K, d) with ``keep_shadow``: the hidden weight vector after
    each update, normalised to a probability vector (the distribution the m samples are drawn from).
    """

    update_rounds: np.ndarray
    counts: np.ndarray
    update_examples: np.ndarray
    mistakes: np.ndarray
    updates: np.ndarray
    lemma13_violations: np.ndarray
    capped: np.ndarray
    shadow_probabilities: np.ndarray | None = None


@dataclass
class _BatchState:
    """The state of :meth:`DPWinnow.run_batch`, arrays over the runs (mutated in place)."""

    logw: np.ndarray  # shadow log-weights (size, d)
    tw: np.ndarray  # released vectors (size, d)
    k: np.ndarray  # updates made
    cache: np.ndarray  # round of the window's first cached mistake (-1: none)
    count: np.ndarray  # mistakes in the current window
    halted: np.ndarray  # fired with k = K: no further instance
    Lhat: np.ndarray  # noisy threshold of the current AboveThreshold instance
    mistakes: np.ndarray
    viol: np.ndarray  # Lemma 13 events
    rounds: np.ndarray  # (size, max(K, 1)) firing round of each update, -1 padded
    examples: np.ndarray  # (size, max(K, 1)) cached round used by each update
    counts: np.ndarray  # (size, max(K, 1), d) m-sample counts of each update
    shadow: np.ndarray | None  # (size, max(K, 1), d) sampling distribution of each update

    @classmethod
    def start(cls, learner: "DPWinnow", size: int, d: int, rng: np.random.Generator, keep_shadow: bool) -> "_BatchState":
        slots = max(learner.K, 1)
        return cls(
            logw=np.full((size, d), -math.log(d)),
            tw=np.full((size, d), 1.0 / d),
            k=np.zeros(size, dtype=np.int64),
            cache=np.full(size, -1, dtype=np.int64),
            count=np.zeros(size, dtype=np.int64),
            halted=np.zeros(size, dtype=bool),
            Lhat=learner.L + rng.laplace(0.0, AboveThreshold.noise_scales(learner.epsilon_hat)[0], size),
            mistakes=np.zeros(size, dtype=np.int64),
            viol=np.zeros(size, dtype=np.int64),
            rounds=np.full((size, slots), -1, dtype=np.int64),
            examples=np.full((size, slots), -1, dtype=np.int64),
            counts=np.zeros((size, slots, d), dtype=np.int64),
            shadow=np.zeros((size, slots, d)) if keep_shadow else None,
        )

    def result(self, K: int) -> DPWinnowBatch:
        return DPWinnowBatch(self.rounds[:, :K], self.counts[:, :K], self.examples[:, :K], self.mistakes, self.k,
                             self.viol, self.halted, None if self.shadow is None else self.shadow[:, :K])


class DPWinnow:
    """DP-Winnow (Algorithm 4.2, Sec. 4.2), parametric form.

    Parameters: ``epsilon_hat`` (AboveThreshold), ``eta`` (learning rate), ``m``
    (samples per released vector), ``L`` (threshold), ``K`` (switching bound),
    ``beta`` (the AboveThreshold instances use beta/T; only for reporting alpha), ``delta``
    (for the accounting), and ``c``, ``rho`` (used only to record the Lemma 13 event).

    Privacy (event-level, replace-one round): the released sequence is (epsilon, delta)-DP
    with epsilon = min(eps_hat + advanced composition of the mK 4 eta-DP draws at delta,
    eps_hat + 4 eta m K by basic composition, with delta = 0); the accounting is
    reconstructed, Lemma 11's proof being missing from the source text [RECON].
    Lemma 11's calibration: :meth:`from_privacy`.
    """

    _parameter_constraints: dict = {
        "epsilon_hat": [Interval(Real, 0, None, closed="neither")],
        "eta": [Interval(Real, 0, None, closed="neither")],
        "m": [Interval(Integral, 1, None, closed="left")],
        "L": [Interval(Real, None, None, closed="neither")],
        "K": [Interval(Integral, 0, None, closed="left")],
        "beta": [Interval(Real, 0, 1, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "c": [Interval(Real, 0, 0.5, closed="left")],
        "rho": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, epsilon_hat: float = 1.0, eta: float = 0.1, m: int = 100, L: float = 10.0, K: int = 10,
                 *, beta: float = 0.05, delta: float = 1e-6, c: float = 0.25, rho: float = 0.0):
        self.epsilon_hat = epsilon_hat
        self.eta = eta
        self.m = m
        self.L = L
        self.K = K
        self.beta = beta
        self.delta = delta
        self.c = c
        self.rho = rho

    # ------------------------------------------------------------ calibration
    @classmethod
    def from_privacy(cls, epsilon: float, delta: float, d: int, rho: float, T: int, beta: float,
                     c: float = 0.25) -> "DPWinnow":
        """Lemma 11's calibration with Lemma 13's m, the closed-form K of Lemma 14 and L = alpha (Lemma 10)."""
        # Lemma 11 states epsilon in (0, 1); epsilon = 1 is allowed here (the bound is continuous there).
        epsilon = check_real(epsilon, "epsilon", low=0.0, high=1.0, low_inclusive=False)
        delta = check_real(delta, "delta", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        m = lemma13_m(T, beta, c, rho)
        K = lemma14_k_star(epsilon, delta, d, rho, m, c)
        eta = lemma11_eta(epsilon, delta, K, m)
        eps_hat = lemma11_epsilon_hat(epsilon, delta, K)
        alpha = dp_winnow_alpha(eps_hat, T, beta)
        return cls(eps_hat, eta, m, alpha, K, beta=beta, delta=delta, c=c, rho=rho)

    def alpha(self, T: int) -> float:
        """Lemma 10 [RECON] with beta/T per instance: 8 ln(2T^2/beta)/eps_hat."""
        return dp_winnow_alpha(self.epsilon_hat, T, self.beta)

    def mistake_bound(self, T: int, updates: Any = None) -> Any:
        """Theorem 12, corrected count: (U+1)(L + alpha + 1), U = realised updates (default K)."""
        U = self.K if updates is None else updates
        return theorem12_mistake_bound(self.L, self.alpha(T), U)

    @property
    def guarantee(self) -> PrivacyGuarantee:
        validate_parameters(self)
        mK = self.m * self.K
        pure = self.epsilon_hat + 4.0 * self.eta * mK
        if self.delta > 0 and mK > 0:
            sharp = dp_winnow_epsilon_sharp(self.epsilon_hat, self.eta, self.m, self.K, self.delta)
        else:
            sharp = math.inf
        if pure <= sharp:
            return PrivacyGuarantee(pure, 0.0, NeighbouringRelation.REPLACE_ONE_ROUND,
                                    "Lemma 11 [RECON accounting]: eps_hat (one AboveThreshold instance) + basic "
                                    "composition of the mK 4 eta-DP draws", self.dp_event)
        return PrivacyGuarantee(sharp, self.delta, NeighbouringRelation.REPLACE_ONE_ROUND,
                                "Lemma 11 [RECON accounting]: eps_hat + advanced composition of the mK 4 eta-DP draws",
                                self.dp_event)

    def dp_event(self) -> dp_accounting.DpEvent:
        """A dominating description: pure eps0-DP steps are dominated by binary randomized response(eps0).

        One AboveThreshold instance (eps_hat; only the window containing the changed round
        pays) composed with mK draws of 4 eta each.
        """
        import dp_accounting

        def rr(e):
            return dp_accounting.RandomizedResponseDpEvent(noise_parameter=randomized_response_noise(e), num_buckets=2)

        return dp_accounting.ComposedDpEvent([rr(self.epsilon_hat),
                                              dp_accounting.SelfComposedDpEvent(rr(4.0 * self.eta), self.m * self.K)])

    def tight_epsilon(self, delta: float) -> tuple[float, str]:
        """``(epsilon, source)``: the tightest epsilon at ``delta`` of the composition :meth:`dp_event` describes
        (worst case over event-level neighbours): at ``delta = 0`` the sum of the pure steps (basic composition
        is tight there), otherwise dp_accounting's PLD (:func:`dp_winnow_composition_pld`), discretised finely
        enough that its pessimistic rounding adds at most 1e-3 over the m K + 1 compositions."""
        validate_parameters(self)
        steps = f"1 AboveThreshold (eps_hat = {self.epsilon_hat:g}) + {self.m * self.K} draws (4 eta = {4 * self.eta:g})"
        if delta == 0:
            return (self.epsilon_hat + 4.0 * self.eta * self.m * self.K,
                    f"sum of the pure steps ({steps}; tight at delta = 0, worst case over event-level pairs)")
        step = min(1e-4, 1e-3 / (self.m * self.K + 1))
        pld = dp_winnow_composition_pld(self.epsilon_hat, self.eta, self.m, self.K, value_discretization=step)
        return (float(pld.get_epsilon_for_delta(delta)),
                f"dp_accounting PLD of {steps}, each pure step as binary randomized response "
                "(replace-one round; worst case over pairs)")

    # ------------------------------------------------------------ single run
    def run(self, X: Any, y: Any, rng: np.random.Generator, *, query_every_round: bool = True) -> OnlineTrace:
        """One run of Algorithm 4.2, literally (a loop over rounds with ``AboveThreshold`` instances).

        ``query_every_round=False`` is the non-private variant that calls AddQuery only on
        mistake rounds (a planted bug of the audit targets).
        """
        validate_parameters(self)
        rng = check_rng(rng)
        X, y = _check_sequence(X, y)
        T, d = X.shape
        beta_inst = self.beta / T
        logw = np.full(d, -math.log(d))
        tw = np.full(d, 1.0 / d)
        k, cache, count = 0, -1, 0
        Q = AboveThreshold(self.epsilon_hat, self.L, beta_inst, rng)
        halted = False
        preds = np.empty(T, dtype=np.int64)
        rounds, counts, examples, history = [], [], [], [np.exp(logw)]
        mistakes = viol = 0
        for t in range(T):
            preds[t] = int(np.sign(tw @ X[t]))
            mist = preds[t] != y[t]
            mistakes += int(mist)
            if mist and self.rho > 0 and y[t] * float(np.exp(logw) @ X[t]) > self.c * self.rho:
                viol += 1
            if halted:
                continue
            if mist:
                count += 1
                if cache < 0:
                    cache = t
            if not query_every_round and not mist:
                continue
            Q.add_query(float(count))
            if Q.test_above_threshold():
                if k >= self.K:
                    halted = True
                    continue
                if cache >= 0:
                    logw = multiplicative_update(logw, self.eta, y[cache], X[cache])
                    logw -= special.logsumexp(logw)
                n_u = rng.multinomial(self.m, np.exp(logw))
                tw = n_u / self.m
                rounds.append(t)
                counts.append(n_u)
                examples.append(cache)
                history.append(np.exp(logw))
                k += 1
                cache, count = -1, 0
                Q = AboveThreshold(self.epsilon_hat, self.L, beta_inst, rng)
        return OnlineTrace(preds, mistakes, k, np.array(rounds, dtype=np.int64),
                           np.array(counts, dtype=np.int64).reshape(len(rounds), d), tw,
                           np.array(examples, dtype=np.int64), np.array(history), viol)

    # ------------------------------------------------------------ batched runs
    def run_batch(self, X: Any, y: Any, rng: np.random.Generator, size: int, *, query_every_round: bool = True,
                  keep_shadow: bool = False, block: int | None = None) -> DPWinnowBatch:
        """``size`` independent runs on one (oblivious) sequence, vectorised over runs and over rounds.

        Same law as ``size`` calls of :meth:`run` (tested); the random numbers are drawn in
        a different order. Rounds are processed in blocks of ``block`` columns: between two
        firings of AboveThreshold a run's released vector is fixed, so its predictions on a
        whole block are one matrix product; the window's mistake count is a cumulative sum
        and the first round where ``count + Lap(4/eps_hat) >= L_hat`` is the firing round.
        Runs that fire inside a block are updated and re-processed from the next round of
        the block (fresh query noise for those rounds: the discarded noises were never
        used, so the law is unchanged).
        """
        validate_parameters(self)
        rng = check_rng(rng)
        size = check_int(size, "size", low=1)
        X, y = _check_sequence(X, y)
        T, d = X.shape
        if block is None:
            block = int(max(8, min(256, 4_000_000 // max(1, size * d))))
        block = check_int(block, "block", low=1)
        st = _BatchState.start(self, size, d, rng, keep_shadow)
        for t0 in range(0, T, block):
            self._run_block(st, X, y, t0, min(t0 + block, T), rng, query_every_round)
        return st.result(self.K)

    def _run_block(self, st: _BatchState, X: np.ndarray, y: np.ndarray, t0: int, t1: int,
                   rng: np.random.Generator, query_every_round: bool) -> None:
        """Rounds t0..t1-1 of every run: scan, update the runs that fired, re-scan them from the next round."""
        nb = t1 - t0
        XbT = X[t0:t1].T
        yb = y[t0:t1][None, :]
        col = np.arange(nb)[None, :]
        off = np.zeros(st.k.size, dtype=np.int64)  # first column of the block still to process, per run
        pend = np.arange(st.k.size)
        while pend.size:
            p, anyf = self._scan_block(st, pend, XbT, yb, col, off, t0, rng, query_every_round)
            fi = anyf.nonzero()[0]
            if fi.size:
                self._update_fired(st, pend[fi], t0 + p[fi], X, y, rng)
            off[pend] = p + 1
            pend = pend[anyf & (p + 1 < nb)]

    def _scan_block(self, st: _BatchState, pend: np.ndarray, XbT: np.ndarray, yb: np.ndarray, col: np.ndarray,
                    off: np.ndarray, t0: int, rng: np.random.Generator,
                    query_every_round: bool) -> tuple[np.ndarray, np.ndarray]:
        """Predictions, window counts and query noise of the runs ``pend`` on the rest of the block.

        Returns the last processed column ``p`` of each run (its firing column, or the block's
        last) and whether it fired; mistakes, Lemma 13 events, cache and count are booked up to ``p``.
        """
        nb = XbT.shape[1]
        rows = np.arange(pend.size)
        valid = col >= off[pend][:, None]
        mist = ((st.tw[pend] @ XbT) * yb <= 0.0) & valid  # sgn(<w~,x>) != y, sgn(0) a mistake
        h = st.halted[pend][:, None]
        am = mist & ~h
        cnt = st.count[pend][:, None] + np.cumsum(am, axis=1)
        asked = (valid if query_every_round else am) & ~h
        # Lap(4/eps_hat) by inverse CDF of a uniform (same law as rng.laplace, several times faster)
        v = rng.random((pend.size, nb)) - 0.5
        nu = np.copysign(np.log1p(-2.0 * np.abs(v)), -v) * AboveThreshold.noise_scales(self.epsilon_hat)[1]
        fire = asked & (cnt + nu >= st.Lhat[pend][:, None])
        anyf = fire.any(axis=1)
        p = np.where(anyf, fire.argmax(axis=1), nb - 1)
        upto = col <= p[:, None]
        mu = mist & upto
        st.mistakes[pend] += mu.sum(axis=1)
        if self.rho > 0:
            sm = yb * (np.exp(st.logw[pend]) @ XbT)
            st.viol[pend] += (mu & (sm > self.c * self.rho)).sum(axis=1)
        amp = am & upto
        first = amp.argmax(axis=1)
        newc = (st.cache[pend] < 0) & amp.any(axis=1)
        st.cache[pend] = np.where(newc, t0 + first, st.cache[pend])
        st.count[pend] = cnt[rows, p]
        return p, anyf

    def _update_fired(self, st: _BatchState, runs: np.ndarray, t_fire: np.ndarray, X: np.ndarray, y: np.ndarray,
                      rng: np.random.Generator) -> None:
        """The runs that fired: halt at the cap; otherwise shadow update, m samples, a new instance."""
        K, m = self.K, self.m
        st.halted[runs[st.k[runs] >= K]] = True
        ok = st.k[runs] < K
        idx, t_f = runs[ok], t_fire[ok]
        if not idx.size:
            return
        ce = st.cache[idx]
        has = ce >= 0
        if has.any():
            i2 = idx[has]
            new = multiplicative_update(st.logw[i2], self.eta, y[ce[has], None], X[ce[has]])
            st.logw[i2] = new - special.logsumexp(new, axis=1, keepdims=True)
        pr = np.exp(st.logw[idx])
        pr /= pr.sum(axis=1, keepdims=True)
        n_u = rng.multinomial(m, pr)
        st.tw[idx] = n_u / m
        ku = st.k[idx]
        st.rounds[idx, ku] = t_f
        st.examples[idx, ku] = ce
        st.counts[idx, ku] = n_u
        if st.shadow is not None:
            st.shadow[idx, ku] = pr
        st.k[idx] += 1
        st.cache[idx] = -1
        st.count[idx] = 0
        st.Lhat[idx] = self.L + rng.laplace(0.0, AboveThreshold.noise_scales(self.epsilon_hat)[0], idx.size)


# ============================================================================ a constructed adaptive adversary


class MarginAdversary:
    """The adversary that comes closest to Lemma 9's bound: every update it forces lowers the potential
    KL(v || w) as little as possible.

    Lemma 9's proof: an update on (x, y) changes the potential by -eta y<v,x> + ln sum_j w_j e^{eta y x_j},
    and for x in {-1,1}^d the log-partition is exactly ln(cosh eta + mu sinh eta) with mu = y<w,x>. So the
    drop is smallest when y<v,x> = rho (the margin is tight) and mu is as large as an update allows:
    mu = 0 for a mistake (sgn 0 counts as one), mu = c rho for an unconfident round of ConfidentWinnow.
    Each round the adversary takes, over the ``patterns`` of the target's support R (values x_R with
    y<v_R,x_R> = rho), the free coordinates' signs that put mu as close to ``tau`` from below as a greedy
    subset sum allows (largest weights first), and presents the best (x, y). It returns ``None`` once
    no pattern can reach mu <= tau: from then on no update can be forced.

    What keeps the count below the bound (benchmarks/README.md, 'Decision lists and DP-Winnow worst-case instances'):
    Hoeffding's ln(cosh eta + mu sinh eta) <=
    eta mu + eta^2/2 is tight only as eta -> 0; the potential cannot be driven to 0 (the game ends
    with KL(v||w) = ln(2/(1+tau)) for a dictator target); mu cannot always be hit exactly (integrality).
    """

    def __init__(self, d: int, support: Any, patterns: Any, labels: Any, tau: float = 0.0):
        self.d = check_int(d, "d", low=2)
        self.support = np.asarray(support, dtype=np.int64)
        self.patterns = np.asarray(patterns, dtype=float).reshape(-1, self.support.size)
        self.labels = np.asarray(labels, dtype=np.int64).reshape(-1)
        if self.labels.size != self.patterns.shape[0]:
            raise ValueError("one label per pattern")
        self.tau = float(tau)
        self.free = np.setdiff1d(np.arange(self.d), self.support)

    @staticmethod
    def _fill(a: np.ndarray, cap: float) -> np.ndarray:
        """Greedy subset sum (largest first) of the descending weights ``a`` up to ``cap``: a mask."""
        take = np.zeros(a.size, dtype=bool)
        pos = 0
        while pos < a.size and cap > 0:
            j = pos + int(np.searchsorted(-a[pos:], -cap, side="left"))  # first item <= cap
            if j >= a.size:
                break
            cs = np.cumsum(a[j:])
            k = int(np.searchsorted(cs, cap, side="right"))
            take[j:j + k] = True
            cap -= float(cs[k - 1])
            pos = j + k
        return take

    def next(self, w: np.ndarray) -> tuple[np.ndarray, int] | None:
        wf = w[self.free]
        order = np.argsort(-wf, kind="stable")
        a = wf[order]
        A = float(a.sum())
        best = None
        for pat, y in zip(self.patterns, self.labels):
            base = float(y * (w[self.support] @ pat))
            cap = (self.tau - base + A) / 2.0  # weight of the free coordinates set to agree with y
            if cap < 0:
                continue
            take = self._fill(a, cap * (1.0 - 1e-12))
            s = np.where(take, 1.0, -1.0)
            x = np.empty(self.d)
            x[self.support] = pat
            x[self.free[order]] = y * s
            mu = float(y * (w @ x))
            if mu <= self.tau and (best is None or mu > best[0]):
                best = (mu, x, int(y))
        return None if best is None else (best[1], best[2])


def dictator_adversary(d: int, tau: float = 0.0) -> tuple[MarginAdversary, np.ndarray, float]:
    """The constructed adversary for the dictator target v = e_1 (margin rho = 1 on the whole cube, the
    largest KL(v || uniform) = ln d): ``(adversary, v, rho)``."""
    v = np.zeros(d)
    v[0] = 1.0
    return MarginAdversary(d, [0], [[1.0], [-1.0]], [1, -1], tau), v, 1.0


def disjunction_adversary(d: int, k: int, tau: float = 0.0) -> tuple[MarginAdversary, np.ndarray, float]:
    """The constructed adversary for the k-disjunction OR(x_0..x_{k-1}) with the constant coordinate d-1:
    v = (1_S, k-1)/(2k-1), margin 1/(2k-1), attained by the points with 0 or 1 true literal."""
    v = np.zeros(d)
    v[:k] = 1.0
    v[-1] = k - 1.0
    v /= 2 * k - 1.0
    support = list(range(k)) + [d - 1]
    pats, labs = [np.r_[-np.ones(k), 1.0]], [-1]
    for i in range(k):
        p = -np.ones(k + 1)
        p[i] = p[-1] = 1.0
        pats.append(p)
        labs.append(1)
    return MarginAdversary(d, support, pats, labs, tau), v, 1.0 / (2 * k - 1)


# ============================================================================ instance generators


@dataclass(frozen=True)
class Instance:
    """An online sequence with a nonnegative, l1-normalised target ``v`` and its realised margin ``rho``."""

    X: np.ndarray
    y: np.ndarray
    v: np.ndarray
    rho: float
    name: str


def _realised(X: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, float]:
    val = X @ v
    return np.sign(val).astype(np.int64), float(np.min(np.abs(val)))


def _rejection(rng, d, T, v, rho):
    """Uniform points of {-1,1}^d with |<v,x>| >= rho (rejection)."""
    out = []
    n = 0
    while n < T:
        Xc = rng.choice((-1.0, 1.0), size=(4 * T + 16, d))
        keep = np.abs(Xc @ v) >= rho - 1e-12
        out.append(Xc[keep])
        n += int(keep.sum())
    return np.concatenate(out)[:T]


def generate_instance(name: str, rng: np.random.Generator, d: int, T: int, **kw: Any) -> Instance:
    """I.i.d. points labelled by a nonnegative rho-margin target (the families the checks run on).

    * ``"majority"``: v = 1_S / k over k odd variables (k=3 default), margin 1/k on the cube.
    * ``"disjunction"``: k-disjunction with a constant bias coordinate (the last one);
      v = (1_S, k-1)/(2k-1), margin 1/(2k-1); relevant coordinates are +1 w.p. 1/k.
    * ``"sparse"``: random nonnegative v on s coordinates (Dirichlet), points kept if
      |<v,x>| >= rho (default 0.1).
    * ``"signed"``: random signed sparse v through the 2d embedding of Sec. 4.3 (dimension 2d).
    * ``"decision-list"``: a random monotone 1-decision list (length r, D alternations) through
      Lemma 15 and the 2d embedding (dimension 2(d+1)); margin = realised margin on the sequence.
    """
    rng = check_rng(rng)
    d = check_int(d, "d", low=2)
    T = check_int(T, "T", low=1)
    if name == "majority":
        k = kw.get("k", 3)
        S = rng.choice(d, size=k, replace=False)
        v = np.zeros(d)
        v[S] = 1.0 / k
        X = rng.choice((-1.0, 1.0), size=(T, d))
    elif name == "disjunction":
        k = kw.get("k", 3)
        S = rng.choice(d - 1, size=k, replace=False)
        v = np.zeros(d)
        v[S] = 1.0
        v[-1] = k - 1.0
        v /= 2 * k - 1.0
        X = rng.choice((-1.0, 1.0), size=(T, d))
        p = 1.0 / k
        X[:, S] = np.where(rng.random((T, k)) < p, 1.0, -1.0)
        X[:, -1] = 1.0
    elif name == "sparse":
        s = kw.get("s", 4)
        rho = kw.get("rho", 0.1)
        v = np.zeros(d)
        v[rng.choice(d, size=s, replace=False)] = rng.dirichlet(np.ones(s))
        X = _rejection(rng, d, T, v, rho)
    elif name == "signed":
        s = kw.get("s", 3)
        rho = kw.get("rho", 0.1)
        u = np.zeros(d)
        S = rng.choice(d, size=s, replace=False)
        u[S] = rng.dirichlet(np.ones(s)) * rng.choice((-1.0, 1.0), size=s)
        X0 = _rejection(rng, d, T, u, rho)
        X, v = nonnegative_embedding(X0), nonnegative_weights(u)
    elif name == "decision-list":
        r = kw.get("r", 4)
        D = kw.get("D", 1)
        vars_, bits, default = random_monotone_dl(rng, d, r, D)
        u = monotone_dl_to_halfspace(vars_, bits, default, d)
        X0 = rng.choice((-1.0, 1.0), size=(T, d))
        X1 = np.hstack([X0, np.ones((T, 1))])
        y_dl = evaluate_monotone_dl(X0, vars_, bits, default)
        X, v = nonnegative_embedding(X1), nonnegative_weights(u)
        y, rho = _realised(X, v)
        if not np.array_equal(y, y_dl):  # Lemma 15 is exact; this would be a bug of the construction
            raise AssertionError("decision list -> halfspace representation is not exact")
        return Instance(X, y, v, rho, name)
    else:
        raise ValueError(f"unknown generator {name!r}; choose one of {GENERATORS}")
    y, rho = _realised(X, v)
    return Instance(X, y, v, rho, name)


GENERATORS = ("majority", "disjunction", "sparse", "signed", "decision-list")
