"""Tests of privbound.learners.decision_lists_winnow.winnow (paper decision-lists-winnow, Sec. 4).

Expected values are derived by hand in the comments (natural logs). Statistical tests fix
their seeds and state their false-failure rate.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privbound.learners.decision_lists_winnow.winnow import (
    GENERATORS,
    ConfidentWinnow,
    DPWinnow,
    Winnow,
    confident_winnow_batch,
    generate_instance,
    winnow_update_bound,
)


def test_winnow_hand_example():
    # d = 2, eta = ln 2. Round 0: w = (1/2, 1/2), x = (1, -1): <w,x> = 0 -> sgn 0 counts as a mistake
    # (label +1); update w_j ~ w_j e^{eta y x_j} = (1/2 * 2, 1/2 * 1/2) -> normalised (4/5, 1/5).
    # Round 1: x = (-1, 1), y = +1: <w,x> = -3/5 < 0, mistake; w ~ (4/5 * 1/2, 1/5 * 2) = (2/5, 2/5) -> (1/2, 1/2).
    X = np.array([[1.0, -1.0], [-1.0, 1.0]])
    tr = Winnow(eta=math.log(2)).run(X, np.array([1, 1]))
    assert tr.mistakes == 2 and tr.updates == 2
    assert np.allclose(tr.released[0], [0.8, 0.2])
    assert np.allclose(tr.weights, [0.5, 0.5])


def test_update_bound_formula_by_hand():
    # Lemma 9: ln d / ((1-c) eta rho - eta^2/2). d = e^2, rho = 0.5, eta = 0.5, c = 0: 2 / (0.25 - 0.125) = 16.
    assert winnow_update_bound(math.exp(2), 0.5, 0.5, 0.0) == pytest.approx(16.0)
    # c = 0.25: 2 / (0.75 * 0.25 - 0.125) = 2 / 0.0625 = 32; denominator <= 0 -> inf.
    assert winnow_update_bound(math.exp(2), 0.5, 0.5, 0.25) == pytest.approx(32.0)
    assert winnow_update_bound(10, 0.1, 1.0, 0.0) == math.inf


@pytest.mark.parametrize("gen", GENERATORS)
def test_lemma9_bound_and_potential_drop_all_generators(gen):
    # Deterministic: for every sequence, updates <= Lemma 9 bound, and every update lowers
    # KL(v||w) by at least (1-c) eta rho - eta^2/2 (the potential argument of Lemma 9's proof).
    rng = np.random.default_rng(abs(hash(gen)) % 2**32)
    B, T = 40, 300
    insts = [generate_instance(gen, rng, 16, T) for _ in range(B)]
    rho = min(i.rho for i in insts)
    X = np.stack([i.X for i in insts])
    y = np.stack([i.y for i in insts])
    V = np.stack([i.v for i in insts])
    d = X.shape[2]
    for c in (0.0, 0.25, 0.45):
        eta = (1 - c) * rho
        bits = rng.integers(0, 2, size=(B, T))
        for b in (None, bits):
            tr = confident_winnow_batch(X, y, eta, c, rho, b, V)
            den = (1 - c) * eta * rho - eta**2 / 2
            assert tr.updates.max() <= math.log(d) / den + 1e-9
            upd = tr.updates > 0
            assert np.all(tr.min_potential_drop[upd] >= den - 1e-12)
            assert np.all(tr.max_update_margin[upd] <= c * rho + 1e-12)


def test_greedy_adversary_respects_bound_and_is_harder_than_iid():
    # The greedy adaptive adversary (argmin y<w,x> over a pool) stays within Lemma 9 and makes more
    # mistakes than i.i.d. presentation of the same pool.
    rng = np.random.default_rng(3)
    B, P, d, k = 50, 60, 20, 5
    insts = [generate_instance("majority", rng, d, P, k=k) for _ in range(B)]
    X = np.stack([i.X for i in insts])
    y = np.stack([i.y for i in insts])
    rho = 1 / k
    w = Winnow(eta=rho, rho=rho)
    greedy = w.run_greedy(X, y, 400)
    iid = w.run_batch(X, y)
    bound = winnow_update_bound(d, rho, rho)  # = 2 ln d / rho^2 = 149.8
    assert bound == pytest.approx(2 * math.log(d) / rho**2)
    assert greedy.mistakes.max() <= bound
    assert greedy.mistakes.mean() > iid.mistakes.mean()


def test_single_and_batched_confident_winnow_agree_exactly():
    rng = np.random.default_rng(4)
    inst = generate_instance("sparse", rng, 12, 200)
    cw = ConfidentWinnow(eta=0.1, c=0.25, rho=inst.rho)
    tr = cw.run(inst.X, inst.y)
    bt = cw.run_batch(inst.X[None], inst.y[None])
    assert (tr.mistakes, tr.updates) == (int(bt.mistakes[0]), int(bt.updates[0]))
    assert np.allclose(tr.weights, np.exp(bt.log_weights[0]))


def test_generator_margins_by_hand():
    rng = np.random.default_rng(5)
    # majority of k = 3 -> |<v,x>| = |x1+x2+x3|/3 >= 1/3 with equality attained (T large).
    assert generate_instance("majority", rng, 10, 400).rho == pytest.approx(1 / 3)
    # disjunction of k = 3 with bias: margin 1/(2k-1) = 1/5.
    assert generate_instance("disjunction", rng, 10, 400).rho == pytest.approx(1 / 5)
    for gen in GENERATORS:
        inst = generate_instance(gen, rng, 10, 100)
        assert np.all(inst.v >= 0) and inst.v.sum() == pytest.approx(1.0)
        assert np.all(inst.y * (inst.X @ inst.v) >= inst.rho - 1e-12)


def test_dp_winnow_calibration_by_hand():
    # eps=1, delta=1e-6, d=100, rho=0.2, T=1e6, beta=0.05, c=1/4: m = ceil(2 ln(1e12/0.05)/(0.0625 * 0.04))
    # = ceil(24501.4) = 24,502; K* ~ 4.29e10, eta ~ 7.2e-10, eps_hat ~ 2.2e-7.
    w = DPWinnow.from_privacy(1.0, 1e-6, 100, 0.2, 10**6, 0.05, 0.25)
    assert w.m == 24_502
    assert w.K == pytest.approx(4.29e10, rel=0.01)
    assert w.eta == pytest.approx(7.2e-10, rel=0.02)
    assert w.epsilon_hat == pytest.approx(2.2e-7, rel=0.03)
    # Lemma 11: the learner's own sharp accounting is <= epsilon (about 0.5 eps here).
    assert w.guarantee.epsilon <= 1.0


def test_dp_winnow_guarantee_relaxed_by_hand():
    # eps_hat = 1, eta = 0.05, m = 5, K = 3: pure basic composition 1 + 4 * 0.05 * 15 = 4.0 (delta 0);
    # the advanced-composition form is larger here (1 + 0.2 sqrt(30 ln(1e5)) + 15*0.2*(e^0.2-1) = 5.54).
    g = DPWinnow(1.0, 0.05, 5, 1.0, 3, delta=1e-5).guarantee
    assert (g.epsilon, g.delta) == (pytest.approx(4.0), 0.0)
    with pytest.raises(ValueError, match="The 'm' parameter of DPWinnow must be an int in the range \\[1, inf\\)"):
        DPWinnow(m=0).run(np.ones((2, 3)), np.ones(2), np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng"):
        DPWinnow().run(np.ones((2, 3)), np.ones(2), rng=0)


def test_dp_winnow_batched_matches_single_in_distribution():
    # Two-sample chi-square tests (mistakes binned, number of updates, first update round binned)
    # between 400 single runs (AboveThreshold objects, a loop) and 4000 batched runs. Seeds fixed;
    # each test has false-failure rate 0.001 (Bonferroni total 0.003).
    rng = np.random.default_rng(6)
    inst = generate_instance("majority", rng, 9, 120)
    dw = DPWinnow(epsilon_hat=1.0, eta=0.3, m=9, L=2.0, K=6)
    single = [dw.run(inst.X, inst.y, np.random.default_rng(1000 + i)) for i in range(400)]
    batch = dw.run_batch(inst.X, inst.y, np.random.default_rng(7), 4000)
    s_m = np.array([t.mistakes for t in single])
    s_u = np.array([t.updates for t in single])
    s_f = np.array([t.update_rounds[0] if t.updates else 999 for t in single])
    b_f = np.where(batch.updates > 0, batch.update_rounds[:, 0], 999)
    edges_m = np.quantile(batch.mistakes, [0, .2, .4, .6, .8, 1.0])
    edges_f = np.unique(np.quantile(b_f, [0, .25, .5, .75, 1.0]))
    for a, b, edges in ((s_m, batch.mistakes, edges_m), (s_f, b_f, edges_f), (s_u, batch.updates, None)):
        if edges is None:
            cats = np.union1d(a, b)
            ca = np.array([np.sum(a == c) for c in cats])
            cb = np.array([np.sum(b == c) for c in cats])
        else:
            edges = np.unique(edges)
            edges[-1] += 1
            ca = np.histogram(a, edges)[0]
            cb = np.histogram(b, edges)[0]
        table = np.vstack([ca, cb])
        table = table[:, table.sum(axis=0) > 0]
        if table.shape[1] > 1:
            assert stats.chi2_contingency(table).pvalue > 0.001


def test_dp_winnow_coupling_with_confident_winnow():
    # Lemma 14 coupling: replaying ConfidentWinnow (b = 1) on the update subsequence reproduces
    # the shadow weights exactly, whenever Lemma 13's event holds on the update examples (checked).
    rng = np.random.default_rng(8)
    inst = generate_instance("majority", rng, 11, 400)
    c, rho = 0.25, inst.rho
    # m from Lemma 13 [RECON]: ceil(2 ln(T^2/beta)/(c^2 rho^2)) with T = 400, beta = 0.05 -> 4316
    dw = DPWinnow(epsilon_hat=2.0, eta=0.5 * (1 - c) * rho, m=4316, L=2.0, K=50, c=c, rho=rho)
    checked = 0
    for s in range(10):
        tr = dw.run(inst.X, inst.y, np.random.default_rng(s))
        nonempty = tr.update_examples >= 0  # empty-cache firings leave the shadow weights unchanged
        ex = tr.update_examples[nonempty]
        if tr.lemma13_violations or ex.size == 0:
            continue
        rep = ConfidentWinnow(eta=dw.eta, c=c, rho=rho).run(inst.X[ex], inst.y[ex])
        assert rep.updates == ex.size
        assert np.allclose(rep.released, tr.shadow_history[1:][nonempty], atol=1e-12)
        checked += 1
    assert checked >= 5


def _chi2_same_law(a, b):
    cats = np.union1d(a, b)
    table = np.vstack([[np.sum(a == c) for c in cats], [np.sum(b == c) for c in cats]])
    table = table[:, table.sum(axis=0) > 0]
    return 1.0 if table.shape[1] < 2 else stats.chi2_contingency(table).pvalue


def test_dp_winnow_block_path_matches_single_runs_with_cap_and_mistake_only_queries():
    # The block-vectorised run_batch (small block = 7 so that firings inside blocks and the
    # re-processing of the rest of a block are exercised) against the literal single run, in the
    # variants with the cap reached (K = 2, so most runs halt) and with the planted bug
    # query_every_round=False. Statistics: number of mistakes (binned), number of updates, capped
    # flag. Two-sample chi-square tests, seeds fixed, each at false-failure rate 0.001
    # (Bonferroni total 0.006 over 6 tests).
    rng = np.random.default_rng(16)
    inst = generate_instance("majority", rng, 7, 80)
    dw = DPWinnow(epsilon_hat=1.5, eta=0.4, m=5, L=1.5, K=2)
    for qer in (True, False):
        single = [dw.run(inst.X, inst.y, np.random.default_rng(5000 + i), query_every_round=qer) for i in range(400)]
        batch = dw.run_batch(inst.X, inst.y, np.random.default_rng(17), 4000, query_every_round=qer, block=7)
        s_m = np.array([t.mistakes for t in single])
        s_u = np.array([t.updates for t in single])
        edges = np.unique(np.quantile(batch.mistakes, [0, .25, .5, .75, 1.0]))
        edges[-1] += 1
        assert _chi2_same_law(np.digitize(s_m, edges), np.digitize(batch.mistakes, edges)) > 0.001
        assert _chi2_same_law(s_u, batch.updates) > 0.001
        # batched capped flag vs single: a single run is capped iff it reached K updates and fired again;
        # compare the update counts at the cap (K) instead, whose law is tested above, and check the
        # invariant that capped runs made exactly K updates.
        assert np.all(batch.updates[batch.capped] == dw.K)
        assert np.all(batch.updates <= dw.K)


def test_dp_winnow_lemma13_violations_law_matches_single_runs():
    # Lemma 13 bookkeeping (rounds where the released vector errs although the shadow margin > c rho):
    # with a tiny m = 3 such rounds are frequent; the batched count (block = 11) must have the law of
    # the single-run count. Chi-square on binned counts, seeds fixed, false-failure rate 0.001.
    rng = np.random.default_rng(18)
    inst = generate_instance("majority", rng, 9, 100)
    dw = DPWinnow(epsilon_hat=2.0, eta=0.3, m=3, L=1.0, K=8, c=0.25, rho=inst.rho)
    single = np.array([dw.run(inst.X, inst.y, np.random.default_rng(9000 + i)).lemma13_violations for i in range(400)])
    batch = dw.run_batch(inst.X, inst.y, np.random.default_rng(19), 4000, block=11).lemma13_violations
    assert single.max() > 0
    edges = np.unique(np.quantile(batch, [0, .25, .5, .75, 1.0]))
    edges[-1] += 1
    assert _chi2_same_law(np.digitize(single, edges), np.digitize(batch, edges)) > 0.001


def test_dp_winnow_firing_gaps_have_the_above_threshold_law():
    # x = all ones, y = -1: every released vector (w~ >= 0, sums to 1) predicts +1, so every round is a mistake
    # and the window's count at its i-th round is i. The number of rounds from a window's start to its firing
    # is then AboveThreshold's firing index on the queries 1, 2, 3, ... with threshold noise Lap(2/eps_hat) and
    # query noise Lap(4/eps_hat), whose exact law Lemma 10's quadrature computes (it reads the scales of
    # AboveThreshold.noise_scales: 2/eps and 4/eps). Both the first window (threshold drawn when run_batch starts) and
    # the second (threshold redrawn after the update) are tested, eps_hat = 1, L = 10, 16 bins (the last: no
    # firing within 16 rounds). Chi-square goodness of fit, 5000 runs, seed fixed, false-failure rate 0.001
    # each. With the threshold noise Lap(1/eps_hat) instead, the noncentrality is ~160 (p ~ 1e-25).
    from privbound.learners.mechanisms import above_threshold_firing_logprobs

    eps_hat, L, W = 1.0, 10.0, 16
    p = np.exp(above_threshold_firing_logprobs(np.arange(1, W + 1, dtype=float), L, eps_hat))
    assert p.sum() == pytest.approx(1.0, abs=1e-9)
    T, d = 3 * W + 8, 4
    X, y = np.ones((T, d)), -np.ones(T, dtype=np.int64)
    b = DPWinnow(epsilon_hat=eps_hat, eta=0.1, m=5, L=L, K=2).run_batch(X, y, np.random.default_rng(31), 5000)
    assert np.all(b.update_rounds[:, 0] >= 0)
    first = b.update_rounds[:, 0]  # 0-based index of the firing query in the first window
    second = b.update_rounds[:, 1] - b.update_rounds[:, 0] - 1  # the second window starts after the first firing
    for gap in (first, second[b.update_rounds[:, 0] < T - W]):  # windows with >= W rounds left before T
        gap = np.where(gap < 0, W, gap)  # no second firing before T: beyond the W bins
        counts = np.bincount(np.minimum(gap, W), minlength=W + 1)
        assert stats.chisquare(counts, counts.sum() * p).pvalue > 0.001


def test_dp_winnow_formulas_by_hand():
    # The formulas DP-Winnow runs with, at hand-computed points (natural logs).
    from privbound.learners.decision_lists_winnow.winnow import (
        advanced_composition,
        dp_winnow_alpha,
        dp_winnow_epsilon_sharp,
        dp_winnow_epsilon_two_part,
        lemma11_epsilon_hat,
        lemma11_eta,
        lemma13_m,
        lemma14_k_star,
        multiplicative_update,
        theorem12_mistake_bound,
        winnow_potential_drop,
    )

    # Lemma 10 at beta/T: 8 ln(2 * 10^2 / 0.1) / 1 = 8 ln 2000 = 60.8072
    assert dp_winnow_alpha(1.0, 10, 0.1) == pytest.approx(60.80722, rel=1e-6)
    # Lemma 11: eps_hat = 1/(4 sqrt(20 ln 2e6)) = 1/(4 * 17.0343) = 0.0146761; eta = 1/(8 sqrt(2000 ln 2e6)) = 7.33806e-4
    assert lemma11_epsilon_hat(1.0, 1e-6, 10) == pytest.approx(0.01467612, rel=1e-6)
    assert lemma11_eta(1.0, 1e-6, 10, 100) == pytest.approx(7.338062e-4, rel=1e-6)
    # Lemma 13: ceil(2 ln(200^2/0.1)/0.317^2) = ceil(2 * 12.8992/0.100489) = ceil(256.73) = 257
    assert lemma13_m(200, 0.1, 0.317, 1.0) == 257
    # Lemma 14: a = 1/(8 sqrt(200 ln 2e6)) = 2.32049e-3, K* = ceil(((ln 100 + a^2/2)/(0.75 a 0.2))^2) = 175,043,732
    assert lemma14_k_star(1.0, 1e-6, 100, 0.2, 100, 0.25) == 175_043_732
    # advanced composition: 0.1 sqrt(20 ln 1e5) + 10 * 0.1 (e^0.1 - 1) = 1.51743 + 0.10517 = 1.62260
    assert advanced_composition(0.1, 10, 1e-5) == pytest.approx(1.622598, rel=1e-6)
    # sharp: 1 + 0.04 sqrt(100 ln 1e5) + 50 * 0.04 (e^0.04 - 1) = 1 + 0.35890 + 0.08162 = 2.43885
    assert dp_winnow_epsilon_sharp(1.0, 0.01, 10, 5, 1e-5) == pytest.approx(2.438850, rel=1e-6)
    # two-part (eps_hat = 0.5, eta = 0.01, m = 10, K = 5): K + 1 = 6 instances and m K = 50 draws of 4 eta = 0.04,
    # delta/2 = 5e-5 each: 0.5 sqrt(12 ln 2e4) + 6*0.5*(e^0.5 - 1) + 0.04 sqrt(100 ln 2e4) + 50*0.04*(e^0.04 - 1)
    # = 5.45058 + 1.94616 + 1.25879 + 0.08162 = 8.73716
    assert dp_winnow_epsilon_two_part(0.5, 0.01, 10, 5, 1e-4) == pytest.approx(8.737308, rel=1e-6)
    # Theorem 12 corrected: (3 + 1)(10 + 20 + 1) = 124
    assert theorem12_mistake_bound(10.0, 20.0, 3) == 124.0
    # Lemma 9's per-update drop: (1 - 0.25) 0.4 * 0.5 - 0.4^2/2 = 0.15 - 0.08 = 0.07
    assert winnow_potential_drop(0.5, 0.4, 0.25) == pytest.approx(0.07)
    # the multiplicative step: log w + eta y x
    assert np.allclose(multiplicative_update(np.zeros(2), 0.5, -1, np.array([1.0, -1.0])), [-0.5, 0.5])


# ============================================================================ tight epsilon of DP-Winnow's run


def test_composition_delta_by_hand():
    # eps_hat = 1 and m K = 1 draw of 4 eta = 0.2: losses 1.2, 0.8 (S = +1) and -0.8, -1.2 (S = -1) with
    # P(S = 1) = e/(1 + e) = 0.731059 and P(draw +) = e^0.2/(1 + e^0.2) = 0.549834. At eps = 0.5:
    # delta = 0.731059 (0.549834 (1 - e^-0.7) + 0.450166 (1 - e^-0.3)) = 0.731059 (0.276794 + 0.116675) = 0.287649.
    from privbound.learners.decision_lists_winnow.winnow import dp_winnow_composition_delta

    assert dp_winnow_composition_delta(1.0, 0.05, 1, 1, 0.5) == pytest.approx(0.287649, rel=1e-5)
    assert dp_winnow_composition_delta(1.0, 0.05, 1, 1, 1.2) == 0.0


@pytest.mark.parametrize("params, delta", [((1.0, 0.05, 5, 3), 1e-5), ((3.0, 1e-4, 3, 300), 1e-6), ((0.5, 0.02, 10, 4), 1e-3)])
def test_tight_epsilon_pld_matches_binomial_closed_form(params, delta):
    # DPWinnow.tight_epsilon (dp_accounting's PLD, pessimistic) against the exact binomial curve of the same
    # composition (independent route: no discretisation, no FFT): the PLD's epsilon is never below the exact
    # root of delta(eps) = delta and at most 1.1e-3 above it (the discretisation the method chooses adds at most
    # 1e-3). At delta = 0 it is the sum of the pure steps, eps_hat + 4 eta m K.
    from scipy import optimize

    from privbound.learners.decision_lists_winnow.winnow import dp_winnow_composition_delta

    eps_hat, eta, m, K = params
    learner = DPWinnow(epsilon_hat=eps_hat, eta=eta, m=m, K=K)
    root = optimize.brentq(lambda e: dp_winnow_composition_delta(eps_hat, eta, m, K, e) - delta, 0.0,
                           eps_hat + 4 * eta * m * K, xtol=1e-12)
    tight, source = learner.tight_epsilon(delta)
    assert root - 1e-9 <= tight <= root + 1.1e-3, (tight, root)
    assert "PLD" in source
    assert learner.tight_epsilon(0.0)[0] == pytest.approx(eps_hat + 4 * eta * m * K, rel=1e-12)


def test_composition_pld_is_the_pld_of_the_learners_dp_event():
    # dp_winnow_composition_pld builds the PLD of DPWinnow.dp_event by hand (dp_accounting 0.6's PLDAccountant
    # composes a SelfComposedDpEvent of randomized response once, whatever its count). On a small run (m K = 6)
    # the accountant on the event with its self-composition written out as a list of 6 events gives the same
    # epsilon (to the discretisation, 1e-4 per composition).
    import dp_accounting
    from dp_accounting.pld import PLDAccountant

    from privbound.learners.decision_lists_winnow.winnow import dp_winnow_composition_pld

    learner = DPWinnow(epsilon_hat=1.0, eta=0.05, m=3, K=2)
    hat, draws = learner.dp_event().events
    assert isinstance(draws, dp_accounting.SelfComposedDpEvent) and draws.count == 6
    acc = PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE)
    acc.compose(dp_accounting.ComposedDpEvent([hat] + [draws.event] * draws.count))
    for delta in (1e-6, 1e-3):
        assert dp_winnow_composition_pld(1.0, 0.05, 3, 2).get_epsilon_for_delta(delta) == pytest.approx(
            acc.get_epsilon(delta), abs=1e-3)


@pytest.mark.parametrize("query, L, eps_hat", [(1.0, 1.0, 1.0), (1.0, 1.5, 3.0), (0.0, 2.0, 0.5), (3.0, 1.0, 2.0)])
def test_above_threshold_fire_probability_matches_quadrature(query, L, eps_hat):
    # Closed form of the first query firing against the bounds' quadrature of AboveThreshold's firing law (an
    # independent route: scipy.integrate.quad over the threshold noise, the scales read from AboveThreshold.noise_scales).
    from privbound.learners.mechanisms import above_threshold_firing_logprobs
    from privbound.learners.decision_lists_winnow.winnow import above_threshold_fire_probability

    p = math.exp(above_threshold_firing_logprobs(np.array([query]), L, eps_hat)[0])
    assert above_threshold_fire_probability(query, L, eps_hat) == pytest.approx(p, abs=1e-9)


def _round0_pair(d=7, T=30):
    """Event-level pair: round 0 is correctly predicted by the uniform weights under d0 and flipped in d1."""
    rng = np.random.default_rng(4)
    X = rng.choice((-1.0, 1.0), size=(T, d))
    X[0] = [1, 1, 1, 1, -1, -1, 1]
    y0 = np.sign(X[:, :3].sum(axis=1)).astype(np.int64)
    y1 = y0.copy()
    y1[0] = -y0[0]
    return (X, y0), (X, y1)


def test_round0_witness_matches_runs():
    # The witness's probabilities against 20000 runs of each dataset (run_batch, seeds 5-8): with AddQuery on
    # mistakes only, d0 (round 0 not a mistake) never fires at round 0 and d1 fires there with the closed-form
    # probability (binomial test, two-sided, false-failure rate 1e-3); with the shadow released, d0's first shadow
    # vector is never d1's round-0 update and d1's first one always is (when there is an update). A witness that
    # queried round 0 regardless of the bug would give p0 > 0.
    from privbound.learners.decision_lists_winnow.winnow import dp_winnow_round0_witness

    d0, d1 = _round0_pair()
    learner = DPWinnow(epsilon_hat=1.0, eta=0.3, m=5, L=1.0, K=3)
    p0, p1 = dp_winnow_round0_witness(learner, d0, d1, query_every_round=False)
    assert p0 == 0.0 and p1 == pytest.approx(0.5)
    n = 20000
    b0 = learner.run_batch(*d0, np.random.default_rng(5), n, query_every_round=False)
    b1 = learner.run_batch(*d1, np.random.default_rng(6), n, query_every_round=False)
    assert np.count_nonzero(b0.update_rounds[:, 0] == 0) == 0
    assert stats.binomtest(int(np.count_nonzero(b1.update_rounds[:, 0] == 0)), n, p1).pvalue > 1e-3
    s0, s1 = dp_winnow_round0_witness(learner, d0, d1, release="shadow")
    assert s0 == 0.0 and s1 == pytest.approx(p1)
    c0 = learner.run_batch(*d0, np.random.default_rng(7), n, keep_shadow=True)
    c1 = learner.run_batch(*d1, np.random.default_rng(8), n, keep_shadow=True)
    X, y1 = d1
    v1 = np.exp(0.3 * y1[0] * X[0])
    v1 /= v1.sum()
    first0 = c0.shadow_probabilities[c0.update_rounds[:, 0] >= 0, 0]
    first1 = c1.shadow_probabilities[c1.update_rounds[:, 0] >= 0, 0]
    assert first0.shape[0] > 0 and not np.any(np.all(np.isclose(first0, v1, rtol=0, atol=1e-12), axis=1))
    assert np.all(np.isclose(first1, v1, rtol=0, atol=1e-12))
    # the correct learner (AddQuery every round) queries round 0 on both datasets: no witness
    assert dp_winnow_round0_witness(learner, d0, d1)[0] > 0
