"""Tests of privbound.learners.decision_lists_winnow.decision_lists (paper decision-lists-winnow, Sec. 3 and Lemma 15).

Expected values are derived by hand in the comments (natural logs). Statistical tests fix
their seeds and state their false-failure rate.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import special, stats

from privbound.learners.decision_lists_winnow.decision_lists import (
    DecisionList,
    DPGreedyCover,
    RivestDecisionList,
    evaluate_monotone_dl,
    exact_epsilon,
    feature_matrix,
    greedy_cover_epsilon_add_remove,
    greedy_cover_epsilon_replace,
    greedy_cover_exact_logprobs,
    greedy_cover_exchangeable_groups,
    greedy_cover_orbit_logprobs,
    greedy_cover_pair_epsilon,
    greedy_cover_run,
    greedy_cover_sample,
    greedy_cover_step_for_epsilon,
    hockey_stick_delta,
    monotone_dl_to_halfspace,
    nonnegative_embedding,
    nonnegative_weights,
    random_monotone_dl,
)


def _realizable(rng, n=20, d=4):
    X = rng.integers(0, 2, size=(n, d))
    # target list: (x0 -> 1), (x1 -> 0), (T -> 1)
    y = np.where(X[:, 0] == 1, 1, np.where(X[:, 1] == 1, 0, 1))
    return X, y


def test_decision_list_evaluation_by_hand():
    # Features x0, x1 on {0,1}^2 (T = index 2). List [(x1, 0), (x0, 1), (T, 0)]:
    # 00 -> T -> 0; 01 -> x1 -> 0; 10 -> x0 -> 1; 11 -> x1 first -> 0.
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    dl = DecisionList(((1, 0), (0, 1), (2, 0)), 2)
    assert dl.predict(X).tolist() == [0, 0, 1, 0]


def test_rivest_consistent_and_raises_on_unrealizable():
    rng = np.random.default_rng(0)
    X, y = _realizable(rng)
    r = RivestDecisionList().fit(X, y)
    assert np.array_equal(r.predict(X), y)
    # same point with both labels: no decision list is consistent
    with pytest.raises(ValueError, match="not consistent"):
        RivestDecisionList().fit(np.array([[1, 0], [1, 0]]), np.array([0, 1]))


def test_dp_greedy_cover_rejects_unrealizable_and_bad_parameters():
    with pytest.raises(ValueError, match="realizable"):
        DPGreedyCover(random_state=0).fit(np.array([[1, 0], [1, 0]]), np.array([0, 1]))
    X, y = _realizable(np.random.default_rng(1))
    with pytest.raises(ValueError, match="The 'epsilon_step' parameter of DPGreedyCover must be a float in the range \\(0.0, inf\\)"):
        DPGreedyCover(epsilon_step=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="The 'neighbouring' parameter of DPGreedyCover must be a str among"):
        DPGreedyCover(neighbouring="swap").fit(X, y)
    with pytest.raises(ValueError, match="labels"):
        DPGreedyCover().fit(X, y + 2)


def test_guarantee_values_by_hand():
    # eps_step = 1, delta = 1e-3: e^{1/2} = 1.6487213, ln(1000) = 6.9077553;
    # eps_AR = (e^{1/2} - 1)(e^{1/2} ln(1/delta) + 1) = 0.6487213 * (11.38907 + 1) = 8.03698;
    # replace-one adds eps_step/2: 8.53698 (Theorem 7 [RECON]).
    assert greedy_cover_epsilon_add_remove(1.0, 1e-3) == pytest.approx(0.6487212707 * (1.6487212707 * 6.907755279 + 1), rel=1e-9)
    assert greedy_cover_epsilon_replace(1.0, 1e-3) == pytest.approx(8.03698 + 0.5, rel=1e-5)
    g = DPGreedyCover(epsilon_step=1.0, delta=1e-3).guarantee
    assert (g.epsilon, g.delta, g.neighbouring) == (pytest.approx(8.53698, rel=1e-5), 1e-3, "replace-one")
    g = DPGreedyCover(epsilon_step=1.0, delta=1e-3, neighbouring="add/remove").guarantee
    assert g.epsilon == pytest.approx(8.03698, rel=1e-5)
    # from_privacy inverts the map
    e = greedy_cover_step_for_epsilon(2.0, 1e-6)
    assert greedy_cover_epsilon_replace(e, 1e-6) == pytest.approx(2.0, rel=1e-10)
    assert DPGreedyCover.from_privacy(2.0, 1e-6).epsilon_step == pytest.approx(e)


def test_training_error_identity_and_full_length():
    # Training errors of h_fin = sum_j -q(S_j, (f_j, b_j)); the list has M = |F| + 1 rules (no early stop).
    rng = np.random.default_rng(3)
    for seed in range(20):
        X, y = _realizable(rng, n=40, d=5)
        m = DPGreedyCover(epsilon_step=0.3, random_state=seed).fit(X, y)
        assert len(m.rules_) == 6
        assert sorted(j for j, _ in m.rules_) == list(range(6))
        assert int(np.count_nonzero(m.predict(X) != y)) == int(m.round_errors_.sum())


def test_exact_enumeration_by_hand():
    # One feature f and T (M = 2), one record with f(x) = 1, label 1. Round 1 scores:
    # (f,0): -1, (f,1): 0, (T,0): -1, (T,1): 0, so P(f,1) = P(T,1) = 1/(2 + 2e^{-eps/2}),
    # P(f,0) = P(T,0) = e^{-eps/2}/(2 + 2e^{-eps/2}); after f the sample is empty and T's two bits
    # are equally likely (1/2 each).
    eps = 1.3
    Phi = np.array([[True, True]])
    y = np.array([1])
    lp0, lp1, leaves = greedy_cover_exact_logprobs(Phi, y, Phi, y, eps)
    P = dict(zip(leaves, np.exp(lp0)))
    Z = 2 + 2 * math.exp(-eps / 2)
    assert P[((1, 1),)] == pytest.approx(1 / Z)
    assert P[((1, 0),)] == pytest.approx(math.exp(-eps / 2) / Z)
    assert P[((0, 1), (1, 0))] == pytest.approx(0.5 / Z)
    assert P[((0, 0), (1, 1))] == pytest.approx(0.5 * math.exp(-eps / 2) / Z)
    assert sum(P.values()) == pytest.approx(1.0)
    assert hockey_stick_delta(lp0, lp1, 0.0) == pytest.approx(0.0, abs=1e-15)


def _truncated_key(order, bits, M):
    out = []
    for f, b in zip(order, bits):
        out.append((int(f), int(b)))
        if f == M - 1:
            break
    return tuple(out)


def test_batched_and_single_runs_match_exact_distribution():
    # Batched (bitset + inverse CDF) and single (Python loop, rng.choice) runs are each compared
    # with the exact output law by a chi-square goodness-of-fit test (outputs truncated after T,
    # cells with expected count < 5 pooled). Seeds fixed; false-failure rate 2 x 0.001.
    Phi = np.array([[1, 0, 1], [1, 1, 1], [0, 1, 1], [0, 0, 1]], dtype=bool)
    y = np.array([1, 0, 0, 1])
    eps = 1.5
    lp, _, leaves = greedy_cover_exact_logprobs(Phi, y, Phi, y, eps)
    p = np.exp(lp)
    index = {k: i for i, k in enumerate(leaves)}
    N = 6000
    o, b, _ = greedy_cover_sample(Phi, y, eps, np.random.default_rng(11), N)
    batched = np.bincount([index[_truncated_key(o[i], b[i], 3)] for i in range(N)], minlength=len(leaves))
    rng = np.random.default_rng(12)
    single_runs = [greedy_cover_run(Phi, y, eps, rng) for _ in range(N // 4)]
    single = np.bincount([index[_truncated_key([f for f, _ in r], [bb for _, bb in r], 3)] for r in single_runs],
                         minlength=len(leaves))
    for counts in (batched, single):
        n = counts.sum()
        big = n * p >= 5
        obs = np.append(counts[big], counts[~big].sum())
        exp = np.append(n * p[big], n * p[~big].sum())
        keep = exp > 0
        assert stats.chisquare(obs[keep], exp[keep]).pvalue > 0.001


def test_batched_generic_path_matches_bitset_path():
    # More than 63 records uses the matmul path; both paths must give the same law. Two-sample
    # chi-square on the first chosen rule; seeded, false-failure rate 0.001.
    rng = np.random.default_rng(5)
    X, y = _realizable(rng, n=70, d=3)
    Phi = feature_matrix(X)
    o1, b1, _ = greedy_cover_sample(Phi, y, 0.2, np.random.default_rng(1), 4000)
    o2, b2, _ = greedy_cover_sample(Phi[:63], y[:63], 0.2, np.random.default_rng(2), 4000)
    # Different data (70 vs 63 records) -> compare each to its own exact first-round law instead.
    for o, b, P, yy in ((o1, b1, Phi, y), (o2, b2, Phi[:63], y[:63])):
        err = np.array([[np.count_nonzero(P[:, f] & (yy != bb)) for bb in (0, 1)] for f in range(P.shape[1])]).ravel()
        p = np.exp(-0.1 * err)
        p /= p.sum()
        obs = np.bincount(o[:, 0] * 2 + b[:, 0], minlength=p.size)
        assert stats.chisquare(obs, 4000 * p).pvalue > 0.001


def test_exact_privacy_of_small_instances_within_claim():
    # Theorem 7 [RECON]: exact hockey-stick delta at the claimed replace-one epsilon is <= the claimed delta, for
    # random realizable samples and every replacement of one record by any point and label
    # (non-realizable neighbours included). Also exact eps at delta = 0 is far below M * eps_step.
    rng = np.random.default_rng(8)
    eps_step, delta = 0.5, 1e-4
    claim = greedy_cover_epsilon_replace(eps_step, delta)
    worst = 0.0
    for _ in range(3):
        X, y = _realizable(rng, n=6, d=3)
        Phi = feature_matrix(X)
        for xr in itertools.product((0, 1), repeat=3):
            for lab in (0, 1):
                X1 = X.copy()
                X1[0] = xr
                y1 = y.copy()
                y1[0] = lab
                lp0, lp1, _ = greedy_cover_exact_logprobs(Phi, y, feature_matrix(X1), y1, eps_step)
                assert hockey_stick_delta(lp0, lp1, claim) <= delta
                worst = max(worst, exact_epsilon(lp0, lp1, 0.0))
    assert worst <= 4 * eps_step  # M * eps_step = 2.0 (basic composition); pure eps is at most that
    assert worst < claim


def test_literal_sign_negative_control_makes_more_errors():
    # Lemma 3 erratum: the printed exp(-eps q/2) for a maximised q picks the worst rule. With the literal sign
    # the training error is large; with the correct sign it is near 0 (eps_step = 4, realizable).
    rng = np.random.default_rng(4)
    X, y = _realizable(rng, n=60, d=4)
    Phi = feature_matrix(X)
    _, _, e_good = greedy_cover_sample(Phi, y, 4.0, np.random.default_rng(0), 500)
    _, _, e_bad = greedy_cover_sample(Phi, y, 4.0, np.random.default_rng(0), 500, sign=-1.0)
    assert e_good.sum(axis=1).mean() < 2.0
    assert e_bad.sum(axis=1).mean() > 15.0


def test_lemma15_representation_exact_and_embedding():
    # Lemma 15: sign(<v, (x,1)>) equals the list on all 2^d inputs; the 2d embedding keeps the inner
    # product, the l1 norm and nonnegativity.
    rng = np.random.default_rng(9)
    d = 8
    X = np.array(list(itertools.product((-1, 1), repeat=d)), dtype=float)
    X1 = np.hstack([X, np.ones((X.shape[0], 1))])
    for _ in range(30):
        r = int(rng.integers(2, d + 2))
        D = int(rng.integers(0, r))
        vars_, bits, default = random_monotone_dl(rng, d, r, D)
        v = monotone_dl_to_halfspace(vars_, bits, default, d)
        val = X1 @ v
        assert np.array_equal(np.sign(val), evaluate_monotone_dl(X, vars_, bits, default))
        assert np.abs(v).sum() == pytest.approx(1.0)
        vp = nonnegative_weights(v)
        assert vp.min() >= 0 and vp.sum() == pytest.approx(1.0)
        assert np.allclose(nonnegative_embedding(X1) @ vp, val, atol=1e-12)


def test_lemma15_weights_by_hand_final_run_deleted():
    # List (x0 -> +1), (x1 -> -1), (x2 -> -1), default -1: the final run (x1, x2) shares the default's bit and gets
    # weight 0. Remaining run [x0]: W = 3/2 over z = (1+x)/2, i.e. 3/4 on x0 and bias -1/2 + 3/4 = 1/4; ||.||_1 = 1.
    # (Kept, the run would give (9/16, -3/16, -3/16, 1/16): margin 1/8 instead of 1/2.)
    v = monotone_dl_to_halfspace(np.array([0, 1, 2]), np.array([1, -1, -1]), -1, 3)
    assert np.allclose(v, [0.75, 0.0, 0.0, 0.25])
    X = np.array(list(itertools.product((-1, 1), repeat=3)), dtype=float)
    val = np.hstack([X, np.ones((8, 1))]) @ v
    assert np.min(np.abs(val)) == pytest.approx(0.5)  # |0.75 x0 + 0.25| >= 1/2
    assert np.allclose(nonnegative_embedding(X[:1]), [[-1, -1, -1, 1, 1, 1]])


# ============================================================================ exact privacy loss on a pair, by symmetry


def _accumulation_pair(k, h, r=1, P=1):
    """The accumulating pair of the audit target (g_1..g_k on blocks of r records labelled 0, h_1..h_h on one
    record each, P label-1 records fired by T only; d1: the changed record is fired by every g as well)."""
    n, M = 1 + k * r + h + P, k + h + 1
    Phi = np.zeros((n, M), dtype=bool)
    Phi[:, -1] = True
    y = np.zeros(n, dtype=np.int64)
    for i in range(k):
        Phi[1 + i * r:1 + (i + 1) * r, i] = True
    for j in range(h):
        Phi[1 + k * r + j, k + j] = True
    y[1 + k * r + h:] = 1
    y[0] = 1
    Phi1 = Phi.copy()
    Phi1[0, :k] = True
    return (Phi, y), (Phi1, y.copy())


def test_exchangeable_groups_by_hand():
    # g_0, g_1 (blocks of one record labelled 0, both fire on the changed record in d1) are exchangeable, and so
    # are h_0, h_1; T (column 4) stands alone. Giving h_1's record the label 1 breaks the h pair: h_1's rule
    # (h_1, 1) is then error-free while (h_0, 1) errs.
    d0, d1 = _accumulation_pair(2, 2)
    assert greedy_cover_exchangeable_groups(*d0, *d1) == [[0, 1], [2, 3], [4]]
    (P0, y0), (P1, y1) = d0, d1
    y0, y1 = y0.copy(), y1.copy()
    y0[4] = y1[4] = 1  # record 4 is h_1's
    assert greedy_cover_exchangeable_groups(P0, y0, P1, y1) == [[0, 1], [2], [3], [4]]


@pytest.mark.parametrize("k, h, eps_step", [(2, 2, 2.0), (3, 1, 1.0), (2, 2, 0.3)])
def test_orbit_law_matches_enumeration(k, h, eps_step):
    # The symmetry-grouped law and the plain enumeration (independent: every output list, no grouping, no
    # merging) give the same privacy curve: delta(eps) on both orders agrees at every eps of a grid, the total
    # masses are 1, and the exact eps at delta agree. Breaking the multiplicity of a group (the log(#unused)
    # term) or the merge key (state without the privacy loss) makes the curves differ by > 1e-3.
    d0, d1 = _accumulation_pair(k, h)
    e0, e1, _ = greedy_cover_exact_logprobs(*d0, *d1, eps_step)
    o0, o1 = greedy_cover_orbit_logprobs(*d0, *d1, eps_step)
    assert o0.size < e0.size
    assert np.exp(o0).sum() == pytest.approx(1.0, abs=1e-12) and np.exp(o1).sum() == pytest.approx(1.0, abs=1e-12)
    for eps in np.linspace(0.0, 2.5 * eps_step, 11):
        assert hockey_stick_delta(o0, o1, eps) == pytest.approx(hockey_stick_delta(e0, e1, eps), abs=1e-12)
    for delta in (0.0, 1e-5, 1e-2):
        assert exact_epsilon(o0, o1, delta) == pytest.approx(exact_epsilon(e0, e1, delta), abs=1e-9)
    assert greedy_cover_pair_epsilon(*d0, *d1, eps_step, 1e-2) == pytest.approx(exact_epsilon(e0, e1, 1e-2), abs=1e-9)


def _sequence_logprobs(Phi, y, order, bits, eps_step):
    """log P of whole output lists (all M rounds, no truncation) on (Phi, y), for many lists at once: round by
    round, the exponential mechanism's probability of the listed rule given the rules listed before it."""
    N, M = order.shape
    E = np.stack([Phi & (y[:, None] == 1), Phi & (y[:, None] == 0)], axis=2).reshape(Phi.shape[0], 2 * M).astype(float)
    alive = np.ones((N, Phi.shape[0]))
    used = np.zeros((N, M), dtype=bool)
    rows = np.arange(N)
    total = np.zeros(N)
    for j in range(M):
        logits = -(eps_step / 2) * (alive @ E).reshape(N, M, 2)
        logits[used] = -np.inf
        logits = logits.reshape(N, 2 * M)
        total += logits[rows, 2 * order[:, j] + bits[:, j]] - special.logsumexp(logits, axis=1)
        used[rows, order[:, j]] = True
        alive *= ~Phi[:, order[:, j]].T
    return total


def test_orbit_law_matches_monte_carlo_privacy_loss_on_a_pair_too_large_to_enumerate():
    # The registered accumulating pair's size (k = 9, h = 5, r = 2, P = 3: 15 features) cannot be enumerated.
    # Monte Carlo of its privacy-loss law instead: 20000 runs on d0 (greedy_cover_sample, seed 3), the exact
    # loss L = log p0 - log p1 of each sampled list computed round by round (_sequence_logprobs, no grouping),
    # compared with the grouped law: the sample mean of (1 - e^{eps - L})_+ (values in [0, 1]) must lie within
    # 4.5 standard errors of delta(eps) from the grouped law, at eps = 0, 1, 2, 4 (normal approximation, false-
    # failure rate < 4 x 1e-5). Also E_d0[e^{-L}] = 1 (the grouped law's masses of d1) within 4.5 s.e.
    from privbound.learners.decision_lists_winnow.decision_lists import greedy_cover_sample

    eps_step = 4.0
    d0, d1 = _accumulation_pair(9, 5, r=2, P=3)
    o0, o1 = greedy_cover_orbit_logprobs(*d0, *d1, eps_step)
    order, bits, _ = greedy_cover_sample(*d0, eps_step, np.random.default_rng(3), 20000)
    L = _sequence_logprobs(*d0, order, bits, eps_step) - _sequence_logprobs(*d1, order, bits, eps_step)
    for eps in (0.0, 1.0, 2.0, 4.0):
        v = np.maximum(0.0, -np.expm1(eps - L))
        exact = float(np.maximum(0.0, np.exp(o0) - np.exp(eps) * np.exp(o1)).sum())
        assert abs(v.mean() - exact) <= 4.5 * v.std() / math.sqrt(v.size) + 1e-12, eps
    w = np.exp(-L)
    assert abs(w.mean() - 1.0) <= 4.5 * w.std() / math.sqrt(w.size)
