"""Tests of privbound.learners.robust_halfspaces.perceptron (robust-halfspaces: Perceptron, MarginPerceptron, DP Batch
Perceptron, one-vs-rest).

Deterministic except test_batched_runs_match_single_runs_in_distribution (three two-sample tests at level 0.001
each: a correct implementation fails it with probability <= 0.003); every test fixes its seeds.
"""

import math

import numpy as np
import pytest
from scipy import stats

from privbound.learners.accounting import epsilon_of
from privbound.learners.mechanisms import GaussianMechanism
from privbound.learners.neighbouring import NeighbouringRelation
from privbound.learners.robust_halfspaces import perceptron as perceptron_module
from privbound.learners.robust_halfspaces.perceptron import (
    DPBatchPerceptron,
    MarginPerceptron,
    OneVsRestDPPerceptron,
    Perceptron,
    calibrate_gaussian_noise,
    lemma18_iterations,
    lemma19_parameters,
    PLD_STEP,
    prepare_inputs,
    stopping_threshold,
)
from privbound.learners.robust_halfspaces.instances import margin_realizable
from privbound.learners.robust_halfspaces.robustness import RandomFourierFeatures
from privbound.learners.robust_halfspaces.sphere import SphereExponentialMechanism

ADD_REMOVE = NeighbouringRelation.ADD_OR_REMOVE_ONE  # Algorithm 1's guarantee


def _separable(rng, n, d, gamma):
    X, y, w = margin_realizable(n, d, gamma, rng)
    return X, y, w


# ------------------------------------------------------------------ Perceptron / Novikoff


def test_perceptron_novikoff_bound_over_random_sequences():
    # Novikoff: mistakes <= (R/gamma)^2 with R = max ||x||, gamma = min_i y_i <w*, x_i> for a unit w*.
    # Deterministic: checked on every instance, with adversarially sorted orders too (smallest margin first).
    rng = np.random.default_rng(1)
    worst = 0.0
    for trial in range(40):
        d = int(rng.integers(2, 30))
        g = float(rng.uniform(0.05, 0.5))
        X, y, w = _separable(rng, 300, d, g)
        R = np.linalg.norm(X, axis=1).max()
        gam = float(np.min(y * (X @ w)))
        for order in (np.arange(300), np.argsort(y * (X @ w))):
            p = Perceptron(max_epochs=10_000).fit(X[order], y[order])
            assert p.converged_
            assert p.n_mistakes_ <= (R / gam) ** 2
            worst = max(worst, p.n_mistakes_ / (R / gam) ** 2)
    assert worst > 0


def test_perceptron_run_hand_example():
    # x1 = (1, 0), y = +1: score 0 -> mistake, w = (1, 0); x2 = (0, 1), y = -1: score 0 -> mistake,
    # w = (1, -1); x3 = (1, 1), y = +1: score 0 -> mistake, w = (2, 0). Three mistakes, updates 0, 1, 2.
    tr = Perceptron().run(np.array([[1.0, 0], [0, 1], [1, 1]]), np.array([1.0, -1, 1]))
    assert tr.n_mistakes == 3
    np.testing.assert_array_equal(tr.weights, [2.0, 0.0])
    np.testing.assert_array_equal(tr.updates, [0, 1, 2])


# ------------------------------------------------------------------ MarginPerceptron


def test_margin_perceptron_hand_example():
    # X = {(1), (-1)}, y = (+1, -1), gamma = 0.5, gamma' = 0.475, alpha = 0.1: iteration 1 (w_hat = 0: w_0/||w_0|| is undefined)
    # counts both as mistakes, w = 1*1 + (-1)(-1) = 2; iteration 2: margins 1 > 0.475, |M| = 0 < 0.3*0.1*2
    # -> stop after one update with w_hat = (1).
    m = MarginPerceptron(0.5, alpha=0.1).fit(np.array([[1.0], [-1.0]]), np.array([1.0, -1.0]))
    assert m.stopped_ and m.n_iter_ == 1
    np.testing.assert_array_equal(m.coef_, [1.0])
    np.testing.assert_array_equal(m.mistakes_per_iter_, [2, 0])


def test_margin_perceptron_iterations_within_lemma18():
    # Iterations <= Lemma 18's T = ceil(6e5/(alpha gamma^2)); at the stop (p = 1, no noise)
    # |M| < 0.3 alpha n, i.e. err_{gamma'}(w_hat) < 0.3 alpha <= 0.5 alpha (Lemma 18's conclusion).
    rng = np.random.default_rng(2)
    for trial in range(20):
        g = float(rng.uniform(0.05, 0.4))
        alpha = float(rng.uniform(0.02, 0.3))
        X, y, _ = _separable(rng, 400, int(rng.integers(2, 50)), g)
        m = MarginPerceptron(g, alpha=alpha).fit(X, y)
        assert m.stopped_
        assert m.n_iter_ <= lemma18_iterations(alpha, g)
        assert np.mean(y * (X @ m.coef_) <= 0.95 * g) < 0.3 * alpha


def test_lemma18_and_19_parameters_by_hand():
    # T = ceil(1500/(0.1 * 0.005^2)) = ceil(6e8) at alpha = gamma = 0.1.
    assert lemma18_iterations(0.1, 0.1) == 600_000_000
    # The exact ceiling, by hand: 6e5 / (0.007 * 0.0031^2) = 6e5 / 6.727e-8 = 8919280511372.08... (a quotient of
    # 13 digits: rounding it to 12 significant digits first would give ...370, float division ...372.0x).
    assert lemma18_iterations(0.007, 0.0031) == 8_919_280_511_373
    assert lemma18_iterations(0.3, 0.5) == 8_000_000  # exact: 6e5 / (0.3 * 0.25), no rounding up
    # T = 100, eps = 1, delta = 1e-5: p = 0.1, sigma = 100 ln(1e7) = 1611.8096, b = 100 sqrt(ln 1e7) = 401.4735.
    p, s, b = lemma19_parameters(1.0, 1e-5, 100)
    assert p == pytest.approx(0.1)
    assert s == pytest.approx(100 * 16.11809565, rel=1e-8)
    assert b == pytest.approx(100 * math.sqrt(16.11809565), rel=1e-8)


# ------------------------------------------------------------------ DPBatchPerceptron


def test_noiseless_dp_batch_perceptron_equals_margin_perceptron():
    # sigma = 0, b = 0, p = 1: Algorithm 1 is deterministic and identical to the margin perceptron.
    rng = np.random.default_rng(3)
    X, y, _ = _separable(rng, 200, 8, 0.2)
    m = MarginPerceptron(0.2, alpha=0.1).fit(X, y)
    dp = DPBatchPerceptron(0.2, alpha=0.1, sampling_rate=1.0, noise_std=0.0, laplace_scale=0.0, random_state=0).fit(X, y)
    assert dp.n_iter_ == m.n_iter_ and dp.stopped_
    np.testing.assert_allclose(dp.coef_, m.coef_)
    with pytest.raises(ValueError, match="no privacy guarantee"):
        dp.guarantee  # no noise, no guarantee
    r = dp.run_batch(X, y, np.random.default_rng(0), 5)
    np.testing.assert_allclose(r["coef"], np.tile(m.coef_, (5, 1)))
    assert np.all(r["n_iter"] == m.n_iter_)


def test_stop_at_first_iteration_returns_fail():
    # The stopping test firing at i = 1 would output w_0/||w_0|| = 0/0 -> FAIL (zeros).
    # 10 points, threshold 0.3 * 0.9 * 1 * 1000 = 270 > 10 + Lap(1e-9) -> stop at i = 1 always.
    X = np.tile([[0.5, 0.0]], (10, 1))
    y = np.ones(10)
    dp = DPBatchPerceptron(0.1, alpha=0.9, sampling_rate=1.0, noise_std=1.0, laplace_scale=1e-9, n_iter=5,
                           n_nominal=1000, random_state=0).fit(X, y)
    assert dp.failed_ and dp.stopped_ and dp.n_iter_ == 0
    np.testing.assert_array_equal(dp.coef_, [0.0, 0.0])


def test_batched_runs_match_single_runs_in_distribution():
    # Theory variant with free parameters chosen so that the stopping time is genuinely random.
    # Two-sample tests between 300 fit() runs and 300 batched runs: chi-square on n_iter (pooled
    # categories) and Kolmogorov-Smirnov on <coef, e_1> and on ||raw||. Each test has level 0.001
    # under the null (false-alarm rate of this test <= 0.003); seeds fixed.
    rng = np.random.default_rng(4)
    X, y, _ = _separable(rng, 60, 3, 0.3)
    kw = dict(alpha=0.3, n_iter=6, sampling_rate=0.5, noise_std=2.0, laplace_scale=2.0, n_nominal=60)
    single = [DPBatchPerceptron(0.3, random_state=s, **kw).fit(X, y) for s in range(300)]
    batch = DPBatchPerceptron(0.3, **kw).run_batch(X, y, np.random.default_rng(99), 300)
    a = np.array([s.n_iter_ for s in single])
    b = batch["n_iter"]
    cats = np.unique(np.r_[a, b])
    table = np.array([[np.sum(a == c) for c in cats], [np.sum(b == c) for c in cats]])
    table = table[:, table.sum(axis=0) >= 10]
    assert table.shape[1] >= 2  # the stopping time really varies
    assert stats.chi2_contingency(table)[1] > 0.001
    assert stats.ks_2samp([s.coef_[0] for s in single], batch["coef"][:, 0]).pvalue > 0.001
    assert stats.ks_2samp([np.linalg.norm(s.raw_coef_) for s in single], np.linalg.norm(batch["raw"], axis=1)).pvalue > 0.001


def test_experimental_variant_calibration_by_independent_accountant():
    # T = 1, p = 1: the step is the plain Gaussian mechanism, so the RDP-calibrated sigma must lie between
    # the analytic (exact, Balle & Wang: 3.7306 at eps = 1, delta = 1e-5) and the classic
    # sqrt(2 ln(1.25/delta))/eps = 4.8448 calibrations (RDP is valid but not tight).
    s = calibrate_gaussian_noise(1.0, 1e-5, 1.0, 1, "rdp")
    assert GaussianMechanism(1.0, 1e-5, query=np.sum).sigma <= s <= math.sqrt(2 * math.log(1.25e5))
    # Subsampled, many steps: the PLD accountant (independent of RDP) confirms (eps, delta) at sigma, and
    # 0.9 sigma violates it by RDP (sigma is minimal up to the calibration tolerance).
    est = DPBatchPerceptron(0.1, epsilon=1.0, delta=1e-5, variant="experimental", sampling_rate=0.05, n_iter=50)
    P = est.parameters()
    assert P.b is None and not P.stopping and P.T == 50
    assert epsilon_of(est.dp_event(), 1e-5, "pld", neighbouring=ADD_REMOVE, pld_discretization=PLD_STEP) <= 1.0 + 1e-3
    bigger = DPBatchPerceptron(0.1, variant="experimental", sampling_rate=0.05, n_iter=50, noise_std=0.9 * P.sigma)
    assert epsilon_of(bigger.dp_event(), 1e-5, "rdp", neighbouring=ADD_REMOVE) > 1.0
    assert est.guarantee.epsilon == 1.0 and est.guarantee.delta == 1e-5


def test_theory_guarantee_is_lemma19_and_accountants_agree_it_is_loose():
    est = DPBatchPerceptron(0.2, epsilon=0.5, delta=1e-5, n_iter=100)
    g = est.guarantee
    assert (g.epsilon, g.delta, g.neighbouring) == (0.5, 1e-5, NeighbouringRelation.ADD_OR_REMOVE_ONE)
    # The dominating-Gaussian event must give a (much) smaller epsilon than the claim (Lemma 19's accounting is ~7x loose).
    assert epsilon_of(g.dp_event(), 1e-5, "rdp", neighbouring=ADD_REMOVE) < 0.5 / 5


def test_input_checks_and_errors():
    X = np.array([[2.0, 0.0], [0.0, 0.5]])
    y = np.array([1.0, -1.0])
    Xc, _ = prepare_inputs(X, y, "clip")
    np.testing.assert_allclose(Xc, [[1.0, 0.0], [0.0, 0.5]])
    Xn, _ = prepare_inputs(X, y, "normalize")
    np.testing.assert_allclose(Xn, [[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="unit ball"):
        prepare_inputs(X, y, "check")
    Xu, _ = prepare_inputs(X, y, "none")
    np.testing.assert_array_equal(Xu, X)
    with pytest.raises(ValueError, match="-1 and \\+1"):
        prepare_inputs(X, np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="The 'variant' parameter of DPBatchPerceptron must be a str among"):
        DPBatchPerceptron(0.1, variant="fast").parameters()
    with pytest.raises(ValueError, match=r"The 'gamma' parameter of DPBatchPerceptron must be a float in the range \(0.0, 1.0\]"):
        DPBatchPerceptron(1.5).parameters()
    with pytest.raises(ValueError, match="laplace_scale"):
        DPBatchPerceptron(0.1, variant="experimental", laplace_scale=1.0).parameters()
    with pytest.raises(TypeError, match="pair"):
        DPBatchPerceptron(0.1, n_iter=2).sample(X, np.random.default_rng(0), 2)


def test_dp_batch_perceptron_learns_at_generous_scaled_parameters():
    # Utility sanity (not a bound): large n, moderate noise -> low 0.95-gamma margin error on the sample.
    rng = np.random.default_rng(5)
    X, y, _ = _separable(rng, 20_000, 10, 0.2)
    est = DPBatchPerceptron(0.2, alpha=0.2, n_iter=300, sampling_rate=0.05, noise_std=2.0, laplace_scale=2.0,
                            random_state=1).fit(X, y)
    assert not est.failed_
    assert np.mean(y * (X @ est.coef_) <= 0.95 * 0.2) <= 0.5 * 0.2


def test_one_vs_rest_total_budget_and_prediction():
    rng = np.random.default_rng(6)
    centers = np.eye(3) * 0.8
    lab = rng.integers(0, 3, 3000)
    X = centers[lab] + 0.05 * rng.standard_normal((3000, 3))
    ovr = OneVsRestDPPerceptron(0.1, epsilon=2.0, delta=1e-5, sampling_rate=0.1, n_iter=10, random_state=0).fit(X, lab)
    # Total budget: 3 classes x 10 steps calibrated jointly; the stated total must be <= the target.
    assert ovr.guarantee_.epsilon <= 2.0 + 1e-3 and ovr.guarantee_.delta == 1e-5
    assert ovr.coef_.shape == (3, 3)
    assert np.mean(ovr.predict(X) == lab) > 0.9
    th = OneVsRestDPPerceptron(0.1, epsilon=1.0, delta=1e-5, variant="theory", n_iter=4, random_state=0).fit(X, lab)
    assert th.per_class_guarantee_.epsilon == pytest.approx(1.0 / 3)
    assert th.guarantee_.epsilon == 1.0


def test_stopping_threshold_is_shared_by_both_batch_perceptrons():
    # Line 9's threshold 0.3 alpha p n: 0.3 * 0.1 * 0.5 * 200 = 3.0. MarginPerceptron and DPBatchPerceptron use the
    # same function; with n_nominal the DP learner's n is the public sample size, not len(X).
    assert stopping_threshold(0.1, 0.5, 200) == pytest.approx(3.0, rel=1e-12)
    dp = DPBatchPerceptron(0.2, alpha=0.1, sampling_rate=0.5, n_iter=3, noise_std=1.0, laplace_scale=1.0, n_nominal=200)
    assert dp._threshold(dp.parameters(), 50) == stopping_threshold(0.1, 0.5, 200)


@pytest.mark.parametrize(
    "make, name, owner",
    [
        (lambda: Perceptron(max_epochs=0).fit(np.eye(2), np.ones(2)), "max_epochs", "Perceptron"),
        (lambda: MarginPerceptron(0.2, alpha=1.0).fit(np.eye(2), np.ones(2)), "alpha", "MarginPerceptron"),
        (lambda: MarginPerceptron(0.2, max_iter=2.5).fit(np.eye(2), np.ones(2)), "max_iter", "MarginPerceptron"),
        (lambda: DPBatchPerceptron(0.2, epsilon=-1.0).parameters(), "epsilon", "DPBatchPerceptron"),
        (lambda: DPBatchPerceptron(0.2, delta=1.0).parameters(), "delta", "DPBatchPerceptron"),
        (lambda: DPBatchPerceptron(0.2, accountant="gdp").parameters(), "accountant", "DPBatchPerceptron"),
        (lambda: DPBatchPerceptron(0.2, input_check="trust").parameters(), "input_check", "DPBatchPerceptron"),
        (lambda: DPBatchPerceptron(0.2, n_nominal=0).parameters(), "n_nominal", "DPBatchPerceptron"),
        (lambda: DPBatchPerceptron(0.2, sampling_rate=0.0).parameters(), "sampling_rate", "DPBatchPerceptron"),
        (lambda: DPBatchPerceptron(0.2, random_state="seed").parameters(), "random_state", "DPBatchPerceptron"),
        (lambda: OneVsRestDPPerceptron(0.2, variant="fast").fit(np.eye(2), [0, 1]), "variant", "OneVsRestDPPerceptron"),
        (lambda: SphereExponentialMechanism(0.2, 1.0, method="mcmc").score(np.eye(2), np.ones(2), np.eye(2)),
         "method", "SphereExponentialMechanism"),
        (lambda: SphereExponentialMechanism(0.2, 1.0, exponent_scale=0.0).score(np.eye(2), np.ones(2), np.eye(2)),
         "exponent_scale", "SphereExponentialMechanism"),
        (lambda: RandomFourierFeatures(10, bandwidth=0.0).fit(np.eye(2)), "bandwidth", "RandomFourierFeatures"),
    ],
)
def test_declared_parameter_constraints_name_the_parameter(make, name, owner):
    # scikit-learn's message names the parameter and the estimator, e.g. "The 'alpha' parameter of MarginPerceptron
    # must be a float in the range (0, 1). Got 1.0 instead."
    with pytest.raises(ValueError, match=f"The '{name}' parameter of {owner} must be"):
        make()


# ------------------------------------------------------------------ pinned quantities (kill the surviving mutants)


def _first_iteration_instance(n_nominal):
    # 10 points, p = 1: at i = 1 every point is a margin mistake (w_hat = 0), so |M_1| = 10 exactly and the stopping
    # test fires iff 10 + nu < 0.3 alpha p n_nominal, nu ~ Lap(b).
    X = np.tile([[0.6, 0.0]], (10, 1))
    return X, np.ones(10), dict(alpha=0.5, sampling_rate=1.0, noise_std=1.0, laplace_scale=5.0, n_iter=1, n_nominal=n_nominal)


@pytest.mark.parametrize("n_nominal, expected", [
    # threshold 0.3 * 0.5 * 1 * 100 = 15 > 10: P[Lap(5) < 5] = 1 - e^{-5/5}/2 = 1 - 0.1839397 = 0.8160603
    (100, 1 - 0.5 * math.exp(-1.0)),
    # threshold 0.3 * 0.5 * 1 * 20 = 3 < 10: P[Lap(5) < -7] = e^{-7/5}/2 = 0.1232985
    (20, 0.5 * math.exp(-1.4)),
])
def test_stopping_test_probability_is_pinned(n_nominal, expected):
    # The Laplace scale of the stopping test is b, in the batched runs and in fit(): the stopping frequency at i = 1
    # matches the exact Laplace probability (halving b moves it to 0.932 / 0.030). Binomial standard error at
    # 20000 batched runs 0.0027 and at 2000 fits 0.0087; a correct implementation leaves 5 standard errors with
    # probability 6e-7 (seeds fixed).
    X, y, kw = _first_iteration_instance(n_nominal)
    r = DPBatchPerceptron(0.3, **kw).run_batch(X, y, np.random.default_rng(11), 20_000)
    rate = np.mean(r["stopped"] & (r["n_iter"] == 0))
    assert abs(rate - expected) < 5 * math.sqrt(expected * (1 - expected) / 20_000)
    assert np.all(r["failed"])  # a stop at i = 1 is FAIL (w_0/||w_0|| = 0/0), and so is no stop within T = 1 (Line 14)
    fits = [DPBatchPerceptron(0.3, random_state=s, **kw).fit(X, y).stopped_ for s in range(2000)]
    assert abs(np.mean(fits) - expected) < 5 * math.sqrt(expected * (1 - expected) / 2000)


def test_gdp_mu_of_pure_dp_is_pinned():
    # mu(eps) = -2 Phi^{-1}(1/(1 + e^eps)) (Dong, Roth & Su 2019): 1/(1 + e^eps) = 1/4, 1/20, 1/40 at
    # eps = ln 3, ln 19, ln 39, where Phi^{-1} = -0.6744897501960817, -1.6448536269514722, -1.959963984540054 (tables).
    from privbound.learners.robust_halfspaces.perceptron import gdp_mu_of_pure_dp

    assert gdp_mu_of_pure_dp(math.log(3)) == pytest.approx(2 * 0.6744897501960817, rel=1e-12)
    assert gdp_mu_of_pure_dp(math.log(19)) == pytest.approx(2 * 1.6448536269514722, rel=1e-12)
    assert gdp_mu_of_pure_dp(math.log(39)) == pytest.approx(2 * 1.959963984540054, rel=1e-12)
    assert gdp_mu_of_pure_dp(0.0) == 0.0


def test_theory_accounting_includes_the_laplace_stopping_test():
    # A step releases Lap(b) on |M_i| and N(0, sigma^2 I) on u_i: with sigma = 1 and b = 1/ln 3 (a (ln 3)-DP Laplace,
    # mu_L = 2 * 0.6744897501960817 = 1.3489795), the pair is sqrt(1 + mu_L^2) = sqrt(2.8197457) = 1.6792099-GDP, so the
    # dominating Gaussian has noise multiplier 1/1.6792099 = 0.5955181 (without the stopping test it would be 1).
    import dp_accounting

    from privbound.learners.robust_halfspaces.perceptron import algorithm1_dp_event

    mu_L = 2 * 0.6744897501960817
    expected = 1 / math.sqrt(1 + mu_L**2)
    assert expected == pytest.approx(0.5955181, rel=1e-6)
    for event in (algorithm1_dp_event(0.1, 1.0, 1 / math.log(3), 7),
                  DPBatchPerceptron(0.3, sampling_rate=0.1, noise_std=1.0, laplace_scale=1 / math.log(3), n_iter=7).dp_event()):
        assert isinstance(event, dp_accounting.SelfComposedDpEvent) and event.count == 7
        step = event.event
        assert isinstance(step, dp_accounting.PoissonSampledDpEvent) and step.sampling_probability == 0.1
        assert step.event.noise_multiplier == pytest.approx(expected, rel=1e-12)
    # The accounted epsilon of the theory variant with free parameters is that event's, above the Gaussian-only one.
    est = DPBatchPerceptron(0.3, sampling_rate=0.1, noise_std=1.0, laplace_scale=1 / math.log(3), n_iter=7)
    gauss_only = epsilon_of(algorithm1_dp_event(0.1, 1.0, None, 7), 1e-5, "rdp", neighbouring=ADD_REMOVE)
    assert est.guarantee.epsilon == pytest.approx(epsilon_of(algorithm1_dp_event(0.1, 1.0, 1 / math.log(3), 7), 1e-5, "rdp", neighbouring=ADD_REMOVE))
    assert est.guarantee.epsilon > 1.2 * gauss_only
    # With Lemma 19's parameters the released event also carries the Laplace step (eps = 0.5, delta = 1e-5, T = 100:
    # sigma = 3223.62, b = 802.95).
    th = DPBatchPerceptron(0.3, epsilon=0.5, delta=1e-5, n_iter=100)
    p, s, b = lemma19_parameters(0.5, 1e-5, 100)
    assert th.guarantee.dp_event().event.event.noise_multiplier == pytest.approx(1 / math.hypot(1 / s, 2 * -stats.norm.ppf(1 / (1 + math.exp(1 / b)))), rel=1e-9)


# ------------------------------------------------------------------ worst-case instances and Observation 8's boosting


@pytest.mark.parametrize("k", [1, 2, 9, 100])
def test_orthogonal_sequence_attains_novikoff_exactly(k):
    # x_j = e_j, gamma = 1/sqrt(k), R = 1: (R/gamma)^2 = k, and the Perceptron errs on every e_j exactly once, in any order.
    from privbound.learners.robust_halfspaces.instances import orthogonal_sequence

    X, y, w = orthogonal_sequence(k, np.random.default_rng(k))
    assert np.min(y * (X @ w)) == pytest.approx(1 / math.sqrt(k)) and np.linalg.norm(w) == pytest.approx(1.0)
    for order in (np.arange(k), np.arange(k)[::-1], np.random.default_rng(0).permutation(k)):
        p = Perceptron().fit(X[order], y[order])
        assert p.converged_ and p.n_mistakes_ == k


def test_tilted_instance_needs_many_margin_perceptron_updates():
    # gamma-margin realisable by e_1 in the unit ball; the margin perceptron makes ~(1 - f) 0.9/(0.3 f) - 2 ~ 22 updates
    # at f = 0.11 (by hand, the overview's rotation argument), against 1 on margin_realizable data.
    from privbound.learners.robust_halfspaces.instances import tilted_margin_instance
    from privbound.learners.robust_halfspaces.robustness import margin_error

    X, y, w = tilted_margin_instance(4000, 16, 0.3, 0.11, np.random.default_rng(0))
    assert np.all(y * (X @ w) >= 0.3) and np.all(np.linalg.norm(X, axis=1) <= 1 + 1e-12)
    assert np.isclose(np.mean(y * X[:, 1] < 0), 0.11)  # the minority, tilted along -e_2
    m = MarginPerceptron(0.3, alpha=0.2).fit(X, y)
    assert m.stopped_ and 15 <= m.n_iter_ <= 30 and margin_error(m.coef_, X, y, 0.285) <= 0.1
    X0, y0, _ = margin_realizable(4000, 16, 0.3, np.random.default_rng(0))
    assert MarginPerceptron(0.3, alpha=0.2).fit(X0, y0).n_iter_ <= 2


def test_boosting_counts_by_hand():
    from privbound.learners.robust_halfspaces.boosting import BoostedLearner, obs8_runs, obs8_selection_size

    # T = ceil(ln(0.005)/ln(0.9)) = ceil(50.29) = 51; M = ceil(1e6 ln(51)/0.2) = ceil(1e6 * 3.93182563/0.2) = ceil(19659128.2).
    assert obs8_runs(0.9, 0.01) == 51 and obs8_runs(0.5, 0.5) == 2  # ln(0.25)/ln(0.5) = 2 exactly
    assert obs8_selection_size(0.2, 51) == math.ceil(1e6 * math.log(51) / 0.2) == 19_659_129
    b = BoostedLearner(lambda: None, xi=0.9, xi_prime=0.01, alpha=0.2, gamma_prime=0.27, selection_constant=50.0)
    assert b.runs() == 51 and b.selection_size() == math.ceil(50 * math.log(51) / 0.2) == 983
    with pytest.raises(ValueError, match="xi"):
        BoostedLearner(lambda: None, xi=1.0, xi_prime=0.01, alpha=0.2, gamma_prime=0.27).runs()


def test_boosting_selects_the_smallest_gamma_prime_error():
    # Candidates: -e_1 (error 1), e_2 (error ~0.85: y <e_2, x> <= 0.27 unless the orthogonal part is large), e_1 (error 0 at gamma' = 0.27 on margin_realizable data): e_1 is chosen,
    # and the number of samples used is T m + M.
    from privbound.learners.robust_halfspaces.boosting import BoostedLearner

    cands = iter([np.array([-1.0, 0, 0]), np.array([0, 1.0, 0]), np.array([1.0, 0, 0])])

    class Fixed:
        def fit(self, X, y):
            self.coef_ = next(cands)
            return self

    sample = lambda k, rng: margin_realizable(k, 3, 0.3, rng)[:2]
    b = BoostedLearner(Fixed, xi=0.5, xi_prime=0.2, alpha=0.1, gamma_prime=0.27, n_runs=3, n_select=500)
    b.fit_oracle(sample, 10, np.random.default_rng(0))
    np.testing.assert_array_equal(b.coef_, [1.0, 0, 0])
    assert b.selection_errors_[0] == 1.0 and b.selection_errors_[2] == 0.0 and 0.5 < b.selection_errors_[1] < 1
    assert b.samples_used_ == 3 * 10 + 500


def test_noiseless_dp_batch_perceptron_on_the_tilted_instance():
    # sigma = 0, b = 0, p = 1 on data that needs ~20 updates: fit() and run_batch() are the margin perceptron, stop with
    # err_{gamma'} <= 0.5 alpha, after as many updates (a Line 6 that tests margin 0 instead of gamma' stops after ~7,
    # with the whole minority, 0.11 > 0.1, misclassified).
    from privbound.learners.robust_halfspaces.instances import tilted_margin_instance
    from privbound.learners.robust_halfspaces.robustness import margin_error

    X, y, _ = tilted_margin_instance(2000, 8, 0.3, 0.11, np.random.default_rng(1))
    m = MarginPerceptron(0.3, alpha=0.2).fit(X, y)
    assert m.n_iter_ >= 15
    kw = dict(alpha=0.2, sampling_rate=1.0, noise_std=0.0, laplace_scale=0.0, n_iter=200)
    dp = DPBatchPerceptron(0.3, random_state=0, **kw).fit(X, y)
    assert dp.stopped_ and dp.n_iter_ == m.n_iter_ and margin_error(dp.coef_, X, y, 0.285) <= 0.1
    r = DPBatchPerceptron(0.3, **kw).run_batch(X, y, np.random.default_rng(0), 3)
    assert np.all(r["n_iter"] == m.n_iter_) and np.all(margin_error(r["coef"], X, y, 0.285) <= 0.1)


# ------------------------------------------------------------------ tight epsilon of Algorithm 1's run


@pytest.mark.parametrize("p, sigma, b", [(0.5, 1.0, 1e7), (1.0, 2.0, 1e7), (0.5, 1e7, 1.0), (1.0, 1e7, 0.5)])
def test_laplace_gaussian_step_pld_reduces_to_dp_accountings_mechanisms(p, sigma, b):
    # With one noise negligible (scale 1e7: its loss is below 1e-7) the step is dp_accounting's subsampled
    # Gaussian or subsampled Laplace (independent constructions, connect-the-dots): the epsilons of 3 steps at
    # delta = 1e-5 and 1e-3 agree to 1%, and ours is not below theirs by more than their own discretisation.
    from dp_accounting.pld import privacy_loss_distribution as pld

    from privbound.learners.robust_halfspaces.perceptron import subsampled_laplace_gaussian_pld

    ours = subsampled_laplace_gaussian_pld(p, sigma, b, 3)
    ref = (pld.from_gaussian_mechanism(sigma, sampling_prob=p, value_discretization_interval=1e-4) if b > 1e6 else
           pld.from_laplace_mechanism(b, sampling_prob=p, value_discretization_interval=1e-4)).self_compose(3)
    for delta in (1e-5, 1e-3):
        e, r = ours.get_epsilon_for_delta(delta), ref.get_epsilon_for_delta(delta)
        assert r - 1e-3 <= e <= r * 1.01, (delta, e, r)


def test_laplace_gaussian_step_pld_matches_monte_carlo_privacy_loss():
    # One step, p = 0.4, sigma = 1.5, b = 1.2. Monte Carlo of both directions' privacy loss (independent of the
    # grids: outputs drawn from the upper distribution, the loss log(1 - p + p e^S) or its negative from S's
    # closed form S = (|l| - |l - 1|)/b + (z - 1/2)/sigma^2): 400000 draws each (seed 7), delta(eps) = E[(1 -
    # e^{eps - loss})_+] (values in [0, 1]). Each direction of the PLD (dp_accounting keeps them as _pmf_remove
    # and _pmf_add) must be within 4.5 standard errors + 5e-4 (its pessimistic rounding) above its estimate and
    # not below it by more than 4.5 s.e. (normal approximation; false-failure rate < 1e-4 per check), at
    # eps = 0, 0.3, 0.6.
    from privbound.learners.robust_halfspaces.perceptron import subsampled_laplace_gaussian_pld

    p, sigma, b, n = 0.4, 1.5, 1.2, 400_000
    rng = np.random.default_rng(7)
    sampled = rng.random(n) < p
    l_mix, z_mix = rng.laplace(sampled * 1.0, b), rng.normal(sampled * 1.0, sigma)
    l_p, z_p = rng.laplace(0.0, b, n), rng.normal(0.0, sigma, n)

    def S(l, z):
        return (np.abs(l) - np.abs(l - 1)) / b + (z - 0.5) / sigma**2

    remove = np.log1p(-p + p * np.exp(S(l_mix, z_mix)))
    add = -np.log1p(-p + p * np.exp(S(l_p, z_p)))
    out = subsampled_laplace_gaussian_pld(p, sigma, b)
    for eps in (0.0, 0.3, 0.6):
        for loss, pmf in ((remove, out._pmf_remove), (add, out._pmf_add)):
            v = np.maximum(0.0, -np.expm1(eps - loss))
            se = v.std() / math.sqrt(n)
            assert v.mean() - 4.5 * se <= pmf.get_delta_for_epsilon(eps) <= v.mean() + 4.5 * se + 5e-4, eps


def test_tight_epsilon_experimental_matches_the_accountant_on_the_dp_event():
    # Without the stopping test the learner's DpEvent is exact (T subsampled Gaussians), so dp_accounting's
    # PLDAccountant on it and the learner's own PLD construction agree (the two routes compute the same
    # composition); at T = 1, p = 1 both equal the analytic Gaussian curve (Balle & Wang's closed form,
    # gaussian_delta) to 1e-4.
    from scipy import optimize

    from privbound.learners.mechanisms import gaussian_delta

    for est in (DPBatchPerceptron(0.3, epsilon=1.0, delta=1e-5, variant="experimental", sampling_rate=0.5, n_iter=4),
                DPBatchPerceptron(0.3, variant="experimental", sampling_rate=1.0, n_iter=1, noise_std=2.5)):
        tight, source = est.tight_epsilon(1e-5)
        assert tight == pytest.approx(epsilon_of(est.dp_event(), 1e-5, "pld", neighbouring=NeighbouringRelation.ADD_OR_REMOVE_ONE, pld_discretization=1e-4), abs=2e-3)
        assert "worst case over pairs" in source
    exact = optimize.brentq(lambda e: gaussian_delta(2.5, e) - 1e-5, 0.01, 10.0, xtol=1e-12)
    assert tight == pytest.approx(exact, abs=1e-4)


def test_tight_epsilon_theory_is_between_its_parts_and_the_dominating_gaussian():
    # With the stopping test, the step releases a Laplace count and a Gaussian sum on one subsample: its
    # composition is at least each part's alone (dp_accounting's subsampled Gaussian / Laplace over T steps) and
    # at most the learner's DpEvent, which dominates the pair by one Gaussian (Lemma 19's parameters, T = 16).
    from dp_accounting.pld import privacy_loss_distribution as pld

    est = DPBatchPerceptron(0.3, epsilon=1.0, delta=1e-5, alpha=0.1, n_iter=16)
    P = est.parameters()
    tight, _ = est.tight_epsilon(1e-5)
    g = pld.from_gaussian_mechanism(P.sigma, sampling_prob=P.p, value_discretization_interval=1e-6).self_compose(P.T)
    lap = pld.from_laplace_mechanism(P.b, sampling_prob=P.p, value_discretization_interval=1e-6).self_compose(P.T)
    parts = max(g.get_epsilon_for_delta(1e-5), lap.get_epsilon_for_delta(1e-5))
    dominating = epsilon_of(est.dp_event(), 1e-5, "pld", neighbouring=NeighbouringRelation.ADD_OR_REMOVE_ONE, pld_discretization=1e-6)
    assert parts < tight < dominating
    assert tight == pytest.approx(0.00616, abs=5e-5)  # measured; far below the claim 1 (Lemma 19 is conservative)


def test_tight_epsilon_without_clipping_reads_the_pairs_largest_norm():
    # input_check="none": no finite worst case; on a pair whose largest record has norm 2, one full-batch step is
    # the Gaussian mechanism of sensitivity 2: exactly gaussian_delta(sigma, eps, 2) (closed form).
    from scipy import optimize

    from privbound.learners.mechanisms import gaussian_delta

    est = DPBatchPerceptron(0.3, variant="experimental", sampling_rate=1.0, n_iter=1, noise_std=3.0, input_check="none")
    assert est.tight_epsilon(1e-5)[0] == math.inf
    X = np.array([[0.6, 0.0, 0.0], [0.0, 0.0, 2.0]])
    # with the stopping test (b = 1e7: its loss is below 1e-7), two subsampled steps are the subsampled Gaussian of
    # sensitivity 2 (dp_accounting's construction)
    from dp_accounting.pld import privacy_loss_distribution as pld

    stop = DPBatchPerceptron(0.3, n_iter=2, sampling_rate=0.5, noise_std=3.0, laplace_scale=1e7, input_check="none")
    ref = pld.from_gaussian_mechanism(3.0, sensitivity=2.0, sampling_prob=0.5, value_discretization_interval=1e-4)
    assert stop.tight_epsilon(1e-5, (X, np.ones(2)))[0] == pytest.approx(ref.self_compose(2).get_epsilon_for_delta(1e-5),
                                                                         rel=0.01)
    tight, source = est.tight_epsilon(1e-5, (X, np.ones(2)))
    assert "largest record norm 2" in source
    assert tight == pytest.approx(optimize.brentq(lambda e: gaussian_delta(3.0, e, 2.0) - 1e-5, 0.01, 10.0), abs=1e-4)


def test_first_step_stop_probability_by_hand_and_by_runs():
    # p = 1/2, threshold 0.3 * 0.5 * 0.5 * 24 = 1.8. b = 0: n = 1 always stops (|M_1| <= 1); n = 2 stops unless
    # both records are sampled: 3/4. b = 1, n = 1: 1/2 P[Lap < 1.8] + 1/2 P[Lap < 0.8] = 1/2 (1 - e^-1.8/2) +
    # 1/2 (1 - e^-0.8/2) = 0.849354. Runs (20000, seed 3): the fraction stopped at i = 1 (no update made) matches
    # by a two-sided binomial test at level 1e-3.
    nostop = DPBatchPerceptron(0.3, alpha=0.5, n_iter=4, laplace_scale=0.0, noise_std=1.0, sampling_rate=0.5,
                               n_nominal=24)
    assert nostop.first_step_stop_probability(1) == 1.0
    assert nostop.first_step_stop_probability(2) == pytest.approx(0.75)
    noisy = DPBatchPerceptron(0.3, alpha=0.5, n_iter=4, laplace_scale=1.0, noise_std=1.0, sampling_rate=0.5,
                              n_nominal=24)
    q = noisy.first_step_stop_probability(1)
    assert q == pytest.approx(0.5 * (1 - math.exp(-1.8) / 2) + 0.5 * (1 - math.exp(-0.8) / 2), rel=1e-12)
    X = np.array([[0.5, 0.1, 0.0]])
    r = noisy.run_batch(X, np.ones(1), np.random.default_rng(3), 20_000)
    stopped_first = int(np.count_nonzero(r["stopped"] & (r["n_iter"] == 0)))
    assert stats.binomtest(stopped_first, 20_000, q).pvalue > 1e-3


# ------------------------------------------------------------------ clip norm, grouped subsampling, noisy counts


def test_batched_runs_match_single_runs_with_clip_norm_duplicates_and_records_outside_the_ball():
    # clip_norm 2, records of norm up to 5 (clipped), 40 copies of one record (grouped Binomial subsampling in
    # run_batch, one Bernoulli per copy in fit) and the stopping test with a random stopping time. Two-sample tests
    # between 300 fit() runs and 300 batched runs, each at level 0.001 (false alarm <= 0.005): chi-square on n_iter,
    # KS on <coef, e_1>, on ||raw||, on the noise-only coordinate of raw and on the first noisy count. If run_batch forgot the clip norm in the noise, the
    # margin or the clipping, or mis-weighted the copies, ||raw|| or the count would differ.
    rng = np.random.default_rng(7)
    X = np.vstack([rng.normal(size=(20, 3)) * 2.5, np.tile([[4.0, 3.0, 0.0]], (40, 1))])
    X = np.c_[X, np.zeros(60)]  # a coordinate no record touches: there raw holds the noise alone
    y = np.r_[np.sign(X[:20, 0]) + (X[:20, 0] == 0), -np.ones(40)]
    kw = dict(alpha=0.3, n_iter=6, sampling_rate=0.5, noise_std=1.5, laplace_scale=3.0, n_nominal=60, clip_norm=2.0)
    single = [DPBatchPerceptron(0.3, random_state=s, **kw).fit(X, y) for s in range(300)]
    batch = DPBatchPerceptron(0.3, **kw).run_batch(X, y, np.random.default_rng(99), 300, transcript=True,
                                                   group_identical=True)
    a, b = np.array([s.n_iter_ for s in single]), batch["n_iter"]
    cats = np.unique(np.r_[a, b])
    table = np.array([[np.sum(a == c) for c in cats], [np.sum(b == c) for c in cats]])
    table = table[:, table.sum(axis=0) >= 10]
    assert table.shape[1] >= 2
    assert stats.chi2_contingency(table)[1] > 0.001
    assert stats.ks_2samp([s.coef_[0] for s in single], batch["coef"][:, 0]).pvalue > 0.001
    assert stats.ks_2samp([np.linalg.norm(s.raw_coef_) for s in single], np.linalg.norm(batch["raw"], axis=1)).pvalue > 0.001
    assert stats.ks_2samp([s.raw_coef_[3] for s in single], batch["raw"][:, 3]).pvalue > 0.001
    # the first step's count: every sampled record is a mistake (w_hat = 0), 60 records at p = 1/2, plus Lap(3)
    first = batch["noisy_counts"][:, 0]
    assert stats.kstest(first, lambda x: perceptron_module.noisy_count_cdf(x, 60, 0.5, 3.0)).pvalue > 0.001
    assert np.isnan(batch["noisy_counts"][batch["stopped"] & (batch["n_iter"] == 0), 1:]).all()


@pytest.mark.parametrize("group_identical", [False, True])
def test_grouped_subsampling_keeps_the_stream_of_distinct_records(group_identical):
    # Data without repeated records draw one uniform per record, grouped or not: the same seed gives the same runs.
    rng = np.random.default_rng(4)
    X, y, _ = _separable(rng, 30, 3, 0.3)
    est = DPBatchPerceptron(0.3, variant="experimental", sampling_rate=0.5, n_iter=3, noise_std=1.0)
    r = est.run_batch(X, y, np.random.default_rng(5), 4, group_identical=group_identical)
    g = np.random.default_rng(5)
    W = np.zeros((4, 3))
    for _ in range(3):
        nrm = np.linalg.norm(W, axis=1, keepdims=True)
        what = np.divide(W, nrm, out=np.zeros_like(W), where=nrm > 0)
        mist = (g.random((4, 30)) < 0.5) & (what @ (y[:, None] * X).T <= 0.95 * 0.3)
        W = W + mist.astype(float) @ (y[:, None] * X) + g.normal(0.0, 1.0, (4, 3))
    np.testing.assert_allclose(r["raw"], W)


def test_clip_norm_scales_inputs_margin_and_noise_but_not_the_privacy():
    X = np.array([[6.0, 8.0], [0.3, 0.4]])
    y = np.array([1.0, -1.0])
    Xc, _ = prepare_inputs(X, y, "clip", radius=2.0)
    np.testing.assert_allclose(Xc, [[1.2, 1.6], [0.3, 0.4]])
    Xn, _ = prepare_inputs(X, y, "normalize", radius=2.0)
    np.testing.assert_allclose(np.linalg.norm(Xn, axis=1), [2.0, 2.0])
    with pytest.raises(ValueError, match="ball of radius 2"):
        prepare_inputs(X, y, "check", radius=2.0)
    with pytest.raises(ValueError, match="radius"):
        prepare_inputs(X, y, "clip", radius=0.0)
    kw = dict(epsilon=1.0, delta=1e-5, variant="experimental", sampling_rate=0.5, n_iter=4)
    one, two = DPBatchPerceptron(0.3, **kw), DPBatchPerceptron(0.3, clip_norm=2.0, **kw)
    P1, P2 = one.parameters(), two.parameters()
    assert P2.sigma == P1.sigma and perceptron_module.gaussian_noise_std(P2) == 2 * P1.sigma
    assert perceptron_module.margin_threshold(P2) == 2 * perceptron_module.margin_threshold(P1)
    assert two.tight_epsilon(1e-5)[0] == pytest.approx(one.tight_epsilon(1e-5)[0], rel=1e-9)
    theory = dict(epsilon=1.0, delta=1e-5, n_iter=16)
    assert DPBatchPerceptron(0.3, clip_norm=3.0, **theory).tight_epsilon(1e-5)[0] == pytest.approx(
        DPBatchPerceptron(0.3, **theory).tight_epsilon(1e-5)[0], rel=1e-9)


def test_diluted_count_pld_lies_between_no_count_and_the_laplace_count():
    # The count of n always-mistake records dilutes the Laplace: the step's epsilon decreases in n, stays above the
    # Gaussian part alone, and n = 0 is the undiluted PLD.
    from privbound.learners.robust_halfspaces.perceptron import subsampled_laplace_gaussian_pld as pld

    p, sigma, b, T = 0.25, 1428.55, 377.96, 16
    eps = [pld(p, sigma, b, T, count_copies=n).get_epsilon_for_delta(1e-5) for n in (0, 1000, 12000)]
    assert eps[0] == pld(p, sigma, b, T).get_epsilon_for_delta(1e-5)
    assert eps[0] > eps[1] > eps[2] > DPBatchPerceptron(0.3, variant="experimental", sampling_rate=p, n_iter=T,
                                                         noise_std=sigma).tight_epsilon(1e-5)[0]
    assert eps[2] == pytest.approx(0.005736, abs=5e-6)
