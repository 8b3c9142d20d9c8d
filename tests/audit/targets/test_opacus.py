"""Opacus targets and the batched trainings behind them (run only where the torch extra is installed).

Error rates: the laws' tests are exact comparisons or fixed-seed simulations with tolerances of 5+ standard errors
(false failure < 1e-6 each). Soundness (slow): 300 runs of the composition / betting estimator on draws of each new
exact law, at confidence 0.95, against that law's true epsilon (or an upper bound of it); the binomial rule of
tests/audit/test_composition.py (more than 25 of 300 above fails: a sound route fails with probability 0.0068).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

pytest.importorskip("torch")
pytest.importorskip("opacus")

from privbound.audit.opacus_runs import OpacusRun, opacus_epsilon, train_batch, train_one  # noqa: E402
from privbound.audit.canaries import last_iterate_log_likelihood_ratio  # noqa: E402
from privbound.audit.targets import get_target, targets  # noqa: E402
from privbound.audit.targets.opacus import (  # noqa: E402
    gradient_data,
    paired_steps_log_likelihood_ratio,
    poisson_with_others_step_log_likelihood_ratio,
    shuffled_epoch_log_likelihood_ratio,
)

RUNS, MAX_EXCEED = 300, 25


def _records():
    X, y = gradient_data()
    e = np.zeros(X.shape[1])
    e[2] = 1.0
    return (np.vstack([X, e]), np.append(y, 0.0), np.append(np.zeros(len(y), int), 1), np.append(np.zeros(len(y)), 2.0))


@pytest.mark.parametrize("model", ["logistic", "mlp"])
def test_batched_trainings_equal_a_users_single_training(model):
    # Noise 0 and q = 1 remove all randomness: the Embedding-row, ghost-clipped, summed batch must give each model
    # what make_private on nn.Linear layers with loss_reduction="mean" gives (clip factors, sums, normaliser, step).
    X, y, kind, a = _records()
    d = X.shape[1]
    rng = np.random.default_rng(3)
    init = ((("w", rng.normal(size=d)), ("b", [0.3])) if model == "logistic" else
            (("W1", rng.normal(size=4 * d)), ("b1", rng.normal(size=4)), ("w2", rng.normal(size=4)), ("b2", [0.1])))
    run = OpacusRun(model=model, sampling_rate=1.0, steps=5, noise_multiplier=0.0, learning_rate=0.5, normaliser=11.0,
                    init=init)
    obs = ("w", 2) if model == "logistic" else ("W1", 2)
    p1, o1 = train_batch(run, X, y, np.random.default_rng(0), 3, kind=kind, a=a, observe=obs)
    p2, o2 = train_one(run, X, y, 0, kind=kind, a=a, observe=obs)
    for name in run.tensor_names():
        np.testing.assert_allclose(p1[name][1], p2[name][0], atol=1e-12)
    np.testing.assert_allclose(o1[2], o2[0], atol=1e-12)
    assert p2["accountant_history"] == [(0.0, 1.0, 5)]


def test_batched_observations_follow_the_subsampled_gaussian():
    # The gradient canary's observations in units of C: N(0, sigma^2) w.p. 1 - q, N(s, sigma^2) w.p. q (s ~ 1).
    X, y, kind, a = _records()
    run = OpacusRun(sampling_rate=0.1, steps=10, noise_multiplier=0.7, learning_rate=0.01)
    _, o = train_batch(run, X, y, np.random.default_rng(5), 1000, kind=kind, a=a, observe=("w", 2))
    obs = (-o / 0.01).ravel()
    mix = lambda t: 0.9 * stats.norm.cdf(t, 0, 0.7) + 0.1 * stats.norm.cdf(t, 1, 0.7)  # noqa: E731
    assert stats.kstest(obs, mix).pvalue > 1e-6
    assert stats.kstest(obs, lambda t: stats.norm.cdf(t, 0, 0.7)).pvalue < 1e-6  # the canary's shift is there


def test_a_run_repeats_for_a_seed_and_leaves_torch_alone():
    import torch

    X, y, kind, a = _records()
    run = OpacusRun(sampling_rate=0.1, steps=3, noise_multiplier=1.0)
    torch.manual_seed(11)
    before = torch.get_rng_state().clone()
    p1, _ = train_batch(run, X, y, np.random.default_rng(9), 5, kind=kind, a=a)
    p2, _ = train_batch(run, X, y, np.random.default_rng(9), 5, kind=kind, a=a)
    assert np.array_equal(p1["w"], p2["w"]) and torch.equal(torch.get_rng_state(), before)


def test_bad_runs_are_refused_naming_the_argument():
    with pytest.raises(ValueError, match="model"):
        OpacusRun(model="cnn")
    with pytest.raises(ValueError, match="sampling_rate"):
        OpacusRun(sampling_rate=0.3)
    with pytest.raises(ValueError, match="clip_after_build"):
        OpacusRun(clip_after_build=2.0)
    with pytest.raises(TypeError, match="run"):
        train_batch("run", np.zeros((1, 1)), [0], np.random.default_rng(0), 1)


def test_registry_and_claims():
    ts = [t for t in targets() if t.paper == "opacus"]
    assert len(ts) == 10 and sum(t.planted_bug for t in ts) == 4
    t = get_target("opacus-gradient-eps4")
    sigma = t.mechanism.setup.sigma()
    # Opacus' get_noise_multiplier leaves its own accountant at or just below the claim (tolerance 0.01)
    assert 3.98 <= opacus_epsilon(sigma, 0.1, 100, 1e-5) <= 4.0
    assert t.tight().epsilon <= t.epsilon


def test_paired_steps_law_is_the_pair_mixture():
    o = np.random.default_rng(0).normal(size=(5, 4))
    q, s, sh = 0.2, 0.8, 1.0
    got = paired_steps_log_likelihood_ratio(o, sampling_rate=q, noise_multiplier=s, shift=sh)
    f = lambda x, m: stats.norm.pdf(x, m, s)  # noqa: E731
    p0 = f(o[:, 0::2], 0) * f(o[:, 1::2], 0)
    p1 = (1 - q) * p0 + q * f(o[:, 0::2], sh) * f(o[:, 1::2], sh)
    np.testing.assert_allclose(got, np.log(p0 / p1), rtol=1e-10)


def test_shuffled_epoch_law_is_the_position_mixture():
    K, b, s, sh = 4, 2, 0.9, 1.0
    o = np.random.default_rng(1).normal(-b * sh, 1.0, size=(3, 2 * K))
    got = shuffled_epoch_log_likelihood_ratio(o, batches=K, batch_size=b, noise_multiplier=s, shift=sh)
    for i in range(3):
        for e in range(2):
            x = o[i, e * K:(e + 1) * K]
            m0 = np.full(K, -b * sh)
            m0[-1] += sh
            p0 = np.prod(stats.norm.pdf(x, m0, s))
            p1 = np.mean([np.prod(stats.norm.pdf(x, np.where(np.arange(K) == k, -b * sh + 2 * sh, -b * sh), s))
                          for k in range(K)])
            assert got[i, e] == pytest.approx(math.log(p0 / p1), rel=1e-9, abs=1e-9)


def test_poisson_with_others_law_is_the_binomial_mixture():
    n, q, s, sh = 3, 0.3, 0.7, 1.0
    o = np.random.default_rng(2).normal(-1, 1, size=(4, 3))
    got = poisson_with_others_step_log_likelihood_ratio(o, n_others=n, sampling_rate=q, noise_multiplier=s, shift=sh)
    w = stats.binom.pmf(np.arange(n + 1), n, q)
    p0 = sum(w[k] * stats.norm.pdf(o, -sh * k, s) for k in range(n + 1))
    p1 = (1 - q) * p0 + q * sum(w[k] * stats.norm.pdf(o, -sh * k + sh, s) for k in range(n + 1))
    np.testing.assert_allclose(got, np.log(p0 / p1), rtol=1e-9)


@pytest.mark.slow
def test_the_other_eps_noise_and_poisson_sampling_false_are_flagged_cheaply():
    for name in ("opacus-gradient-other-eps-noise", "opacus-gradient-poisson-sampling-false"):
        r = get_target(name).audit(trials=1000)
        assert r.violation, r.summary()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["opacus-gradient-other-eps-noise", "opacus-gradient-per-layer-clip-raised",
                                  "opacus-gradient-two-steps-per-batch", "opacus-gradient-poisson-sampling-false"])
def test_every_planted_bug_flagged_on_five_seeds(name):
    t = get_target(name)
    for seed in range(5):
        r = t.audit(seed=seed, confidence=1 - 0.05 / 200)
        assert r.violation, (seed, r.summary())


@pytest.mark.slow
def test_reach_and_controls_at_default_trials():
    # all iterates: >= 0.9 of the tight epsilon at 1e4 trials; last iterate >= 0.7 of the claim; controls hold
    r = get_target("opacus-gradient-eps4").audit(seed=0)
    assert r.epsilon_lower_bound >= 0.9 * r.epsilon_tight and not r.violation
    r = get_target("opacus-input-worst-init-eps8").audit(seed=0)
    assert r.epsilon_lower_bound >= 0.7 * 8 and not r.violation
    assert not get_target("opacus-shuffle-poisson-control").audit(seed=0).violation


@pytest.mark.slow
def test_soundness_of_the_new_laws_300_runs():
    from privbound.audit.estimators.composition import composed_epsilon_lower_bound
    from privbound.learners.dpsgd import dpsgd_epsilon

    rng = np.random.default_rng(20)
    q, s, T, n = 0.1, 1.0, 20, 300
    # paired steps: the pair's sum is one subsampled Gaussian step at sigma / sqrt(2); exact eps by PLD
    true_pair = dpsgd_epsilon(q, s / math.sqrt(2), T, 1e-5)
    # Poisson with other records: at most the zero-others PLD (other records only hide the canary)
    true_others = dpsgd_epsilon(q, s, T, 1e-5)
    exceed_pair = exceed_others = 0
    for _ in range(RUNS):
        c0 = np.zeros((n, T))
        c1 = np.repeat(rng.random((n, T)) < q, 2, axis=1)[:, :T]
        o0, o1 = rng.normal(0, s, (n, 2 * T)), rng.normal(0, s, (n, 2 * T)) + np.repeat(rng.random((n, T)) < q, 2, 1)
        l0 = paired_steps_log_likelihood_ratio(o0, sampling_rate=q, noise_multiplier=s, shift=1.0)
        l1 = paired_steps_log_likelihood_ratio(o1, sampling_rate=q, noise_multiplier=s, shift=1.0)
        exceed_pair += composed_epsilon_lower_bound(l0, l1, delta=1e-5).epsilon_lower_bound > true_pair
        k0, k1 = rng.binomial(5, q, (n, T)), rng.binomial(5, q, (n, T))
        p0 = -k0 + rng.normal(0, s, (n, T))
        p1 = -k1 + (rng.random((n, T)) < q) + rng.normal(0, s, (n, T))
        kw = dict(n_others=5, sampling_rate=q, noise_multiplier=s, shift=1.0)
        exceed_others += composed_epsilon_lower_bound(
            poisson_with_others_step_log_likelihood_ratio(p0, **kw),
            poisson_with_others_step_log_likelihood_ratio(p1, **kw), delta=1e-5).epsilon_lower_bound > true_others
        del c0, c1
    assert exceed_pair <= MAX_EXCEED and exceed_others <= MAX_EXCEED


@pytest.mark.slow
def test_soundness_of_the_last_iterate_law_300_runs():
    from privbound.audit import WhiteBox, audit_outputs
    from privbound.learners.mechanisms import gaussian_delta  # noqa: F401

    # z_T ~ N(m0, v) vs N(m1, v): the Gaussian mechanism with mu = sqrt(T) shift / sigma; true eps by bisection
    sigma, T = 1.9, 10
    mu = math.sqrt(T) / sigma
    delta = lambda e: stats.norm.cdf(-e / mu + mu / 2) - math.exp(e) * stats.norm.cdf(-e / mu - mu / 2)  # noqa: E731
    from scipy import optimize

    true = optimize.brentq(lambda e: delta(e) - 1e-5, 0.01, 50)
    kw = dict(noise_multiplier=sigma, steps=T, learning_rate=0.1, normaliser=1.0, magnitude=10.0,
              initial_weight=-20.0, shift=1.0)
    sd = 10 * 0.1 * sigma * math.sqrt(T)
    rng = np.random.default_rng(21)
    exceed = 0
    for _ in range(RUNS):
        z0 = rng.normal(-200, sd, 1000)
        z1 = rng.normal(-200 + 10 * T * 0.1, sd, 1000)
        r = audit_outputs(z0, z1, epsilon=true, delta=1e-5,
                          estimator=WhiteBox(lambda z: last_iterate_log_likelihood_ratio(z, **kw)))
        exceed += r.epsilon_lower_bound > true
    assert exceed <= MAX_EXCEED
