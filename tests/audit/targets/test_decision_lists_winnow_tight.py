"""The white-box designs of the decision-lists-winnow targets (privbound.audit.targets.decision_lists_winnow):
their log-likelihood ratios are the learners' exact laws (each tied to an independent computation of the law,
at parameters where a wrong term would show), and their audits are sound (300 audits of the correct learners).

Soundness: each audit is a 95%-confidence lower bound, so on a correct learner its bound exceeds the tight
epsilon with probability <= 0.05; of 300 independent audits (fixed seeds) at most ``MAX_EXCEED`` may, the
smallest count with P(Binomial(300, 0.05) > count) <= 0.001 (the test's false-failure rate).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privbound.audit.targets import get_target
from privbound.audit.targets.decision_lists_winnow import (
    GreedyCoverMechanism,
    greedy_cover_log_likelihood_ratio,
    winnow_round0_canary_pair,
)
from privbound.learners.decision_lists_winnow.decision_lists import (
    greedy_cover_exact_logprobs,
    greedy_cover_log_likelihood,
    greedy_cover_sample,
)
from privbound.learners.decision_lists_winnow.winnow import (
    DPWinnow,
    dp_winnow_round0_log_likelihood_ratio,
    dp_winnow_single_update_logprobs,
)

RUNS = 300
MAX_EXCEED = int(stats.binom.isf(1e-3, RUNS, 0.05))  # 27: P(Bin(300, 0.05) > 27) <= 1e-3


def _small_pair():
    """A replace-one pair over 3 coordinate features plus T (|F| = 3, n = 5): record 0 relabelled."""
    X = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1]])
    y0 = np.array([1, 1, 0, 1, 1])
    Phi = np.hstack([X == 1, np.ones((5, 1), bool)])
    y1 = y0.copy()
    y1[0] = 0
    return (Phi, y0), (Phi, y1)


def test_greedy_cover_likelihood_is_the_enumerated_law():
    # greedy_cover_log_likelihood (the sampler's own round law) against greedy_cover_exact_logprobs (an
    # independent enumeration of the output lists truncated after T): for every sampled output, the full-list
    # log-probability = the truncated prefix's + the uniform tail after T (1/(2 r) per round with r features
    # left). eps_step = 1.7 and labels that make rules err, so each round's normaliser matters.
    (P0, y0), (P1, y1) = _small_pair()
    eps = 1.7
    lp0, lp1, leaves = greedy_cover_exact_logprobs(P0, y0, P1, y1, eps)
    index = {leaf: i for i, leaf in enumerate(leaves)}
    order, bits, _ = greedy_cover_sample(P0, y0, eps, np.random.default_rng(3), 400)
    M = P0.shape[1]
    for P, y, lp in ((P0, y0, lp0), (P1, y1, lp1)):
        full = greedy_cover_log_likelihood(P, y, order, bits, eps)
        for i in range(order.shape[0]):
            j = int(np.flatnonzero(order[i] == M - 1)[0])
            prefix = tuple((int(f), int(b)) for f, b in zip(order[i, :j + 1], bits[i, :j + 1]))
            tail = -sum(math.log(2 * r) for r in range(1, M - j))
            assert full[i] == pytest.approx(lp[index[prefix]] + tail, abs=1e-9)


def test_greedy_cover_sampler_frequencies_follow_the_likelihood():
    # The sampler's output frequencies against exp(greedy_cover_log_likelihood) over the truncated prefixes of
    # the small pair (chi-square, 20000 runs, seed fixed, false-failure rate 1e-3). A sampler that draws from
    # another law than the likelihood (e.g. a doubled parameter in one round only) fails it.
    (P0, y0), _ = _small_pair()
    eps, n = 1.7, 20_000
    order, bits, _ = greedy_cover_sample(P0, y0, eps, np.random.default_rng(4), n)
    M = P0.shape[1]
    pos_T = (order == M - 1).argmax(axis=1)
    keys = [tuple(order[i, :pos_T[i] + 1]) + tuple(bits[i, :pos_T[i] + 1]) for i in range(n)]
    uniq, first, counts = np.unique(np.array(keys, dtype=object), return_index=True, return_counts=True)
    lp = greedy_cover_log_likelihood(P0, y0, order[first], bits[first], eps)
    tails = np.array([-sum(math.log(2 * r) for r in range(1, M - pos_T[i])) for i in first])
    p = np.exp(lp - tails)  # probability of each observed prefix
    lp_all, _, _ = greedy_cover_exact_logprobs(P0, y0, P0, y0, eps)
    big = p * n >= 5
    expected = np.r_[p[big] * n, n * (1.0 - p[big].sum())]
    observed = np.r_[counts[big], n - counts[big].sum()]
    assert np.exp(lp_all).sum() == pytest.approx(1.0, abs=1e-9)
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_greedy_cover_target_llr_runs_from_privacy_calibration(monkeypatch):
    # The target's mechanism and its log-likelihood ratio both read eps_step from DPGreedyCover.from_privacy at
    # call time: with from_privacy patched to a doubled step, the likelihood follows.
    from privbound.learners.decision_lists_winnow.decision_lists import DPGreedyCover

    (P0, y0), (P1, y1) = _small_pair()
    mech = GreedyCoverMechanism.at_step(0.8, 1e-3)
    assert mech.epsilon_step == pytest.approx(0.8, rel=1e-10)
    out = mech.sample((P0, y0), np.random.default_rng(5), 50)
    llr = greedy_cover_log_likelihood_ratio(mech, (P0, y0), (P1, y1))
    M = P0.shape[1]
    order, bits = out[:, :M].astype(int), out[:, M:].astype(int)
    want = greedy_cover_log_likelihood(P0, y0, order, bits, 0.8) - greedy_cover_log_likelihood(P1, y1, order, bits, 0.8)
    assert np.allclose(llr(out), want, atol=1e-9)
    original = DPGreedyCover.from_privacy.__func__
    monkeypatch.setattr(DPGreedyCover, "from_privacy",
                        classmethod(lambda cls, e, d, **k: cls(epsilon_step=2 * original(cls, e, d, **k).epsilon_step,
                                                               delta=d)))
    want2 = greedy_cover_log_likelihood(P0, y0, order, bits, 1.6) - greedy_cover_log_likelihood(P1, y1, order, bits, 1.6)
    assert np.allclose(llr(out), want2, atol=1e-9) and not np.allclose(want, want2)


def test_dp_winnow_llr_matches_the_exact_single_update_law():
    # K = 1: the replayed log-likelihood ratio of sampled transcripts (first window's quadrature + the draws of
    # the replayed shadow weights) equals the class's ln P0 - ln P1 in the independent enumeration by coordinate
    # groups (dp_winnow_single_update_logprobs), and the sampler's class frequencies follow that law (chi-square
    # over the firing round, seed fixed, false-failure rate 1e-3). eps_hat = 1.3, eta = 0.2: both terms matter.
    d0, d1 = winnow_round0_canary_pair(12)
    lr = DPWinnow(epsilon_hat=1.3, eta=0.2, m=4, L=2.0, K=1, delta=0.0)
    lp0, lp1 = dp_winnow_single_update_logprobs(lr, d0, d1)
    assert np.exp(lp0).sum() == pytest.approx(1.0, abs=1e-9) and np.exp(lp1).sum() == pytest.approx(1.0, abs=1e-9)
    llr = dp_winnow_round0_log_likelihood_ratio(lr, d0, d1)
    b = lr.run_batch(*d0, np.random.default_rng(8), 20_000)
    L = llr(b.update_rounds, b.counts)
    # the class of an output: (tau, counts on the coordinates where c = +1); loss = a(tau) + draws
    T = d0[0].shape[0]
    assert set(np.round(L, 9)) <= set(np.round(lp0 - lp1, 9))
    tau = np.where(b.update_rounds[:, 0] >= 0, b.update_rounds[:, 0], T)
    from privbound.learners.mechanisms import above_threshold_firing_logprobs
    from privbound.learners.decision_lists_winnow.winnow import dp_winnow_first_window_queries

    p_tau = np.exp(above_threshold_firing_logprobs(dp_winnow_first_window_queries(*d0), lr.L, lr.epsilon_hat))
    counts = np.bincount(tau, minlength=T + 1)
    keep = p_tau * tau.size >= 5  # bins expecting >= 5 runs; the rest pooled (here: no firing within T)
    obs, exp = counts[keep], tau.size * p_tau[keep]
    if (~keep).any():
        obs, exp = np.r_[obs, counts[~keep].sum()], np.r_[exp, tau.size * p_tau[~keep].sum()]
    assert stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > 1e-3


def test_dp_winnow_one_run_llr_reweights_d0_into_d1():
    # K = 300 (20 slots observed): for the exact L = ln P0/P1, E_{d0}[exp(-L) g] = E_{d1}[g] for every g of the
    # output; g = "the first firing is at round <= 2" (d1's shifted counts fire earlier: 0.30 vs 0.17) and g = 1.
    # Two-sample z-test with a 5-standard-error band (false-failure rate ~ 1e-6 each), 6000 runs per side, seeds
    # fixed. Without the first window's AboveThreshold term the reweighted d0 frequency stays at d0's 0.17.
    t = get_target("dp-winnow-one-run")
    o0 = t.mechanism.sample(t.d0, np.random.default_rng(9), 6000)
    o1 = t.mechanism.sample(t.d1, np.random.default_rng(10), 6000)
    w = np.exp(-t.log_likelihood_ratio(o0))
    for g0, g1 in (((o0[:, 0] >= 0) & (o0[:, 0] <= 2), (o1[:, 0] >= 0) & (o1[:, 0] <= 2)),
                   (np.ones(len(o0)), np.ones(len(o1)))):
        a, b = w * g0, g1.astype(float)
        se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size) or 1e-12
        assert abs(a.mean() - b.mean()) <= 5 * se, (a.mean(), b.mean(), se)


@pytest.mark.parametrize("name", ["greedy-cover-canary", "dp-winnow-replay"])
def test_soundness_fast(name):
    # 30 audits of 300 trials per side: bounds above the tight epsilon are at most 6 (P(Bin(30, .05) > 6) < 1e-3).
    t = get_target(name)
    tight = t.tight().epsilon
    vals = np.array([t.audit(trials=300, seed=1000 + s).epsilon_lower_bound for s in range(30)])
    assert np.sum(vals > tight) <= int(stats.binom.isf(1e-3, 30, 0.05))
    assert vals.mean() > 0.3 * tight  # the audits have power


@pytest.mark.slow
@pytest.mark.parametrize("name", ["greedy-cover-canary", "greedy-cover-one-run", "dp-winnow-replay",
                                  "dp-winnow-one-run"])
def test_soundness_300_runs(name):
    # 300 audits (300 trials per side, seeds 0..299) of the correct learner against its tight epsilon.
    t = get_target(name)
    tight = t.tight().epsilon
    vals = np.array([t.audit(trials=300, seed=s).epsilon_lower_bound for s in range(RUNS)])
    assert np.sum(vals > tight) <= MAX_EXCEED
    assert vals.mean() > 0.3 * tight
