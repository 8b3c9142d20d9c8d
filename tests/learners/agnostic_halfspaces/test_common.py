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
