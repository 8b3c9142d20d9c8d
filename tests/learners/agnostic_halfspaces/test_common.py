"""Tests of privbound.learners.agnostic_halfspaces.common: the halfspace problem and the shared selection step.

Statistical tests use fixed seeds (so each is deterministic); each states its false-failure rate over seeds.
"""

import math

import numpy as np
import pytest
from scipy import stats

from privbound.learners.agnostic_halfspaces.common import (
    HalfspaceProblem,
    error_counts_by_threshold,
    exp_mech_log_probabilities,
    exp_mech_select,
    exp_mech_select_rows,
    gaussian_clip_radius,
    remark3_clip_radius,
    sphere_cover,
)


def test_problem_random_noise_rate_and_exact_errors():
    rng = np.random.default_rng(0)
    prob = HalfspaceProblem(3, (1.0, 2.0, -1.0), t=0.0, rate=0.15)
    X, y = prob.sample(100_000, rng)
    # flips ~ Binomial(1e5, 0.15): 5-sigma band (false-failure rate < 1e-6)
    assert abs(np.mean(prob.clean_labels(X) != y) - 0.15) < 5 * math.sqrt(0.15 * 0.85 / 1e5)
    assert prob.opt_exact == 0.15
    # err(h*) = rate; err(-h*) = rate + (1 - 2 rate) * 1 = 1 - rate (t = 0: always disagree, sign(0) is measure 0)
    assert math.isclose(prob.halfspace_error_exact(prob.normal, 0.0), 0.15, abs_tol=1e-9)
    assert math.isclose(prob.halfspace_error_exact(-prob.normal, 0.0), 0.85, abs_tol=1e-9)
    # an orthogonal normal with t = 0 disagrees w.p. 1/2: err = 0.15 + 0.7 * 0.5 = 0.5
    u = np.cross(prob.normal, [0, 0, 1.0])
    assert math.isclose(prob.halfspace_error_exact(u, 0.0), 0.5, abs_tol=1e-6)
    # the Monte Carlo error agrees with the exact one (sd <= 0.5/sqrt(2e5); 5 sd)
    w = prob.normal + 0.5 * u / np.linalg.norm(u)
    mc = prob.error(lambda Z: np.where(Z @ w + 0.2 >= 0, 1, -1), rng, 200_000)
    assert abs(mc - prob.halfspace_error_exact(w, 0.2)) < 5 * 0.5 / math.sqrt(2e5)


def test_problem_structured_flips_opt_by_search():
    rng = np.random.default_rng(1)
    slab = HalfspaceProblem(2, (1.0, 0.0), t=0.0, noise="slab", width=0.1)
    # Labels are +1 on [-0.1, 0) u (0.1, inf) in z = x_1, so the target errs on the whole slab (2 Phi(0.1) - 1 =
    # 0.0797) but sign(z + 0.1) errs only on [0, 0.1]: OPT = Phi(0.1) - 1/2 = 0.0398 (no other direction helps:
    # any tilt adds disagreement outside the slab). The search's min over ~240k candidates on n = 1e5 points is
    # within 5 sd (5 sqrt(0.04/1e5) = 0.003) plus selection bias; tolerance 0.005.
    opt = slab.opt_by_search(rng, n=100_000, n_directions=400)
    assert abs(opt - (stats.norm.cdf(0.1) - 0.5)) <= 0.005
    far = HalfspaceProblem(2, (1.0, 0.0), noise="far", radius=1.5)
    # flips on {x_2 >= 1.5}: target error Phi(-1.5) = 0.0668
    X, y = far.sample(100_000, rng)
    assert abs(np.mean(far.clean_labels(X) != y) - stats.norm.cdf(-1.5)) < 5 * math.sqrt(0.067 * 0.933 / 1e5)
    with pytest.raises(ValueError, match="noise"):
        HalfspaceProblem(2, (1.0, 0.0), noise="adversarial")


def test_error_counts_by_threshold_brute_force():
    rng = np.random.default_rng(2)
    P = rng.standard_normal((300, 4))
    P[:5] = 0.0  # ties at the threshold: sign(0) = +1
    y = np.where(rng.random(300) < 0.5, 1, -1)
    ts = np.array([-1.0, -0.3, 0.0, 0.4])
    E = error_counts_by_threshold(P, y, ts)
    brute = np.array([[np.sum(np.where(P[:, j] + t >= 0, 1, -1) != y) for t in ts] for j in range(4)])
    np.testing.assert_array_equal(E, brute)


def test_sphere_cover():
    for k, g in ((1, 0.1), (2, 0.1), (3, 0.3)):
        V = sphere_cover(k, g)
        np.testing.assert_allclose(np.linalg.norm(V, axis=1), 1.0)
        # covering radius on random sphere points: within g (k <= 2 exact; k = 3 Fibonacci, see
        # benchmarks/README.md, 'Agnostic halfspaces: measured values')
        Z = np.random.default_rng(k).standard_normal((2000, k))
        Z /= np.linalg.norm(Z, axis=1, keepdims=True)
        assert np.max(np.min(np.linalg.norm(Z[:, None] - V[None], axis=2), axis=1)) <= g


def test_exp_mech_select_matches_exact_law_and_single_runs():
    # chi-square goodness of fit of 40k Gumbel-max draws to exp(-eps c/2)/Z (false-failure rate 1e-3),
    # and batched vs single calls by a two-sample chi-square (same rate).
    c = np.array([3.0, 5, 4, 10, 3])
    eps = 0.8
    p = np.exp(exp_mech_log_probabilities(c, eps))
    np.testing.assert_allclose(p, np.exp(-eps * c / 2) / np.exp(-eps * c / 2).sum())
    batch = exp_mech_select(c, eps, np.random.default_rng(0), size=40_000)
    obs = np.bincount(batch, minlength=5)
    assert stats.chisquare(obs, 40_000 * p).pvalue > 1e-3
    single = np.array([exp_mech_select(c, eps, np.random.default_rng(10_000 + i)) for i in range(4000)])
    table = np.stack([obs, np.bincount(single, minlength=5)])
    assert stats.chi2_contingency(table[:, table.sum(0) > 0])[1] > 1e-3


def test_exp_mech_select_rows_is_the_batched_law_row_by_row():
    # Row-wise selection with identical rows is the law of exp_mech_select: the same draws, bit for bit, as the
    # batched path (both are Gumbel-max with the same logits and the same Gumbel array).
    c = np.array([3.0, 5, 4, 10, 3])
    rows = exp_mech_select_rows(np.tile(c, (500, 1)), 0.8, np.random.default_rng(3))
    np.testing.assert_array_equal(rows, exp_mech_select(c, 0.8, np.random.default_rng(3), size=500))


def test_clip_radii():
    # T = 2 sqrt(D_p) (Lemma C.2); Remark 3 [corrected]: sqrt(D_p/(c alpha)) = sqrt(10/0.1) = 10.
    assert gaussian_clip_radius(6) == 2 * math.sqrt(6)
    assert remark3_clip_radius(10, 0.25, 0.4) == pytest.approx(10.0)


# ====================================================================== exact privacy curves of the private steps


@pytest.mark.parametrize("shift, sigma, count, delta", [(1.0, 3.0, 1, 1e-5), (0.5, 1.0, 4, 1e-3), (0.1, 0.2, 9, 1e-6)])
def test_gaussian_epsilon_matches_dp_accounting_pld(shift, sigma, count, delta):
    # Balle & Wang's curve with Gaussian composition against dp_accounting's PLD of count Gaussian events of noise
    # multiplier sigma / shift (an independent construction, pessimistic by its 1e-4 discretisation).
    import dp_accounting

    from privbound.learners.accounting import epsilon_of
    from privbound.learners.neighbouring import NeighbouringRelation
    from privbound.learners.agnostic_halfspaces.common import gaussian_epsilon

    event = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(sigma / shift), count)
    ref = epsilon_of(event, delta, "pld", neighbouring=NeighbouringRelation.BOUNDED_QUERY_CHANGE)
    assert ref - 2e-3 <= gaussian_epsilon(shift, sigma, delta, count) <= ref + 1e-9


def test_gaussian_and_laplace_epsilon_by_hand():
    # Gaussian composition: 4 releases moving by 1 under sigma = 2 are one release moving by 2. Laplace shift a =
    # 1.5 scales: delta(eps) = 1 - e^{(eps - 1.5)/2}, so eps(0.1) = 1.5 + 2 ln 0.9 = 1.289279; eps(0) = 1.5; a
    # delta above the total variation 1 - e^{-0.75} = 0.527633 gives 0.
    from privbound.learners.agnostic_halfspaces.common import gaussian_epsilon, laplace_epsilon

    assert gaussian_epsilon(1.0, 2.0, 1e-5, 4) == pytest.approx(gaussian_epsilon(2.0, 2.0, 1e-5), rel=1e-10)
    assert gaussian_epsilon(0.0, 1.0, 1e-5) == 0.0 and gaussian_epsilon(1.0, 1.0, 0.0) == math.inf
    assert laplace_epsilon(3.0, 2.0, 0.1) == pytest.approx(1.289279, rel=1e-6)
    assert laplace_epsilon(3.0, 2.0, 0.0) == 1.5
    assert laplace_epsilon(3.0, 2.0, 0.53) == 0.0


def test_laplace_epsilon_matches_dp_accounting_pld():
    # dp_accounting's Laplace PLD (parameter = scale / shift) at delta = 1e-3 and 0.05 (discretisation 1e-4).
    from dp_accounting.pld import privacy_loss_distribution as pld

    from privbound.learners.agnostic_halfspaces.common import laplace_epsilon

    ref = pld.from_laplace_mechanism(0.08889 / 0.08, value_discretization_interval=1e-5)
    for delta in (1e-3, 0.05):
        assert laplace_epsilon(0.08, 0.08889, delta) == pytest.approx(ref.get_epsilon_for_delta(delta), abs=1e-4)


def test_selection_pair_epsilon_by_hand():
    # Two candidates, eps = 2: counts (0, 1) give P = (1, e^-1)/(1 + e^-1); counts (0, 2) give (1, e^-2)/(1 + e^-2).
    # log P0/P1: candidate 0: ln((1 + e^-2)/(1 + e^-1)) = -0.186334; candidate 1: 1 - 0.186334 = 0.813666, the
    # pure epsilon.
    from privbound.learners.agnostic_halfspaces.common import selection_pair_epsilon

    assert selection_pair_epsilon([0, 1], [0, 2], 2.0, 0.0) == pytest.approx(
        1 + math.log((1 + math.exp(-2)) / (1 + math.exp(-1))), rel=1e-9)
    assert selection_pair_epsilon([0, 1], [0, 2], 2.0, 0.0) == pytest.approx(0.813666, rel=1e-6)
