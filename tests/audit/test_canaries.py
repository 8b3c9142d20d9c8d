"""Tests of ``audit/canaries.py``: the exact likelihood ratio of the gradient-canary observations, the soundness of
the canary designs by simulation at the true epsilon, and the adapter for a user's ``train(dataset, rng) -> model``.

Error rates. Soundness rule (as in tests/audit/test_one_run.py): 300 independent audits at confidence 0.95, fail
when more than 25 bounds exceed the true epsilon; a sound procedure fails with probability
P(Bin(300, 0.05) > 25) = 0.0068. The true epsilon is taken as the claim: the PLD accountant's epsilon of the
dominating pair (pessimistic discretisation, so at least the true epsilon: the check is conservative by at most the
discretisation, <= 1e-3 in epsilon). Exactness checks of a likelihood ratio L = log p0/p1 use E_{d0}[e^{-L}] = 1 and
E_{d1}[e^{L}] = 1 with a tolerance of 5 estimated standard errors (false failure < 1e-6 each by Chebyshev's
one-sided bound it is < 0.04; with the CLT it is ~6e-7). Every run is seeded, so outcomes are deterministic.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from privbound.audit.canaries import (
    GradientCanaries,
    GradientCanary,
    InputCanaries,
    InputCanary,
    ThreatModel,
    audit_training,
    one_run_training_audit,
    pad_features,
    subsampled_gaussian_log_likelihood_ratio,
)
from privbound.audit.core import audit_outputs
from privbound.audit import Composition, ScoreAttack, WhiteBox
from privbound.audit.targets import get_target
from privbound.audit.targets.dpsgd import (
    AllIteratesRelease,
    base_data,
    gradient_canaries_one_run,
    input_canaries_one_run,
    NoiseMultiplierHalved,
)
from privbound.learners.dpsgd import DPSGD, LogisticRegression, calibrate_noise_multiplier

RUNS, MAX_EXCEED = 300, 25


def test_soundness_rule_error_rate():
    assert stats.binom.sf(MAX_EXCEED, RUNS, 0.05) < 0.0068 + 1e-4


def test_subsampled_gaussian_llr_matches_the_mixture_density():
    # Independent route: scipy's normal densities, product over steps.
    rng = np.random.default_rng(0)
    o = rng.normal(size=(5, 7))
    q, s, a = 0.2, 1.3, 1.7
    p0 = stats.norm.pdf(o, 0, s).prod(axis=1)
    p1 = ((1 - q) * stats.norm.pdf(o, 0, s) + q * stats.norm.pdf(o, a, s)).prod(axis=1)
    got = subsampled_gaussian_log_likelihood_ratio(o, sampling_rate=q, noise_multiplier=s, shift=a)
    np.testing.assert_allclose(got, np.log(p0 / p1), rtol=1e-10)
    full = subsampled_gaussian_log_likelihood_ratio(o, sampling_rate=1.0, noise_multiplier=s, shift=a)
    np.testing.assert_allclose(full, np.log(p0 / stats.norm.pdf(o, a, s).prod(axis=1)), rtol=1e-10)


@pytest.mark.parametrize("norm, clip_norm, clipped, shift", [
    (2.0, 1.0, True, 1.0),   # the targets' setting: norm above C = 1
    (3.0, 2.5, True, 1.0),   # clipped to C: min(3, 2.5) / 2.5
    (1.0, 2.5, True, 0.4),   # below C: 1 / 2.5
    (3.0, 2.5, False, 1.2),  # an implementation that does not clip the canary: 3 / 2.5
], ids=["C=1", "clipped-C=2.5", "under-C=2.5", "unclipped-C=2.5"])
def test_gradient_canary_step_llr_is_the_mixture_at_the_clipped_shift(norm, clip_norm, clipped, shift):
    # In units of the noise multiplier the canary moves an observation by min(norm, C) / C (norm / C unclipped):
    # the per-step log p0/p1 against scipy's densities at that shift. At C = 1 a shift of min(norm, C) without the
    # division, or norm / C for the clipped canary below C, cannot show.
    q, s = 0.3, 1.2
    o = np.random.default_rng(7).normal(size=(4, 6))
    canary = GradientCanary(1, norm=norm, scale=5.0 / clip_norm)
    got = canary.step_log_likelihood_ratio(sampling_rate=q, noise_multiplier=s, clip_norm=clip_norm,
                                           clipped=clipped)(o)
    p0 = stats.norm.pdf(o, 0, s)
    np.testing.assert_allclose(got, np.log(p0 / ((1 - q) * p0 + q * stats.norm.pdf(o, shift, s))), rtol=1e-10)
    total = canary.log_likelihood_ratio(sampling_rate=q, noise_multiplier=s, clip_norm=clip_norm, clipped=clipped)(o)
    np.testing.assert_allclose(total, got.sum(axis=1), rtol=1e-12)


def test_gradient_canary_observations_of_dpsgd_at_a_clip_norm_other_than_one():
    # DP-SGD at C = 2.5, b = 5, sigma = 1.3, q = 0.4, T = 10, with a canary of norm 3 (clipped to C) on the inert
    # coordinate: the observations (b / C) u_t[j] are N(0, sigma^2) on d0 and (1 - q) N(0, sigma^2) + q N(1, sigma^2)
    # on d1 -- the law the canary's likelihood ratio assumes. 2 KS tests on 10 x 1500 observations each, at
    # ALPHA / 2 (false-failure rate <= 1e-3). Noise sigma instead of sigma C, or a canary clipped to 1 instead of
    # C, changes these laws; at C = 1 neither could.
    ALPHA = 1e-3
    X, y = base_data()
    C, b, sigma, q = 2.5, 5.0, 1.3, 0.4
    learner = DPSGD(LogisticRegression(), sampling_rate=q, steps=10, clip_norm=C, learning_rate=0.01,
                    noise_multiplier=sigma, expected_batch_size=b)
    canary = GradientCanary(2, norm=3.0, scale=b / C)
    release = AllIteratesRelease(learner, canary)
    rng = np.random.default_rng(9)
    o0 = np.asarray(release.sample(canary.exclude((X, y), 4), rng, 1500)).ravel()
    o1 = np.asarray(release.sample(canary.insert((X, y), 4), rng, 1500)).ravel()
    assert stats.kstest(o0, stats.norm(0, sigma).cdf).pvalue > ALPHA / 2
    mixture = lambda x: (1 - q) * stats.norm.cdf(x, 0, sigma) + q * stats.norm.cdf(x, 1.0, sigma)  # noqa: E731
    assert stats.kstest(o1, mixture).pvalue > ALPHA / 2


def _mean_and_se(x):
    return float(np.mean(x)), float(np.std(x) / np.sqrt(len(x)))


@pytest.mark.parametrize("name, both_sides", [
    ("dpsgd-gradient-eps4", True), ("dpsgd-gradient-clip-skipped", True),
    ("dpsgd-gradient-one-record-eps4", True), ("dpsgd-gradient-realised-batch", False)])
def test_target_likelihood_ratio_is_exact_on_the_faithful_runs(name, both_sides):
    # E_{d1}[p0/p1] = 1 and E_{d0}[p1/p0] = 1 for the exact density, on outputs of the real DP-SGD runs. p0/p1 is
    # bounded (by (1 - q)^-T), so its sample mean is reliable; p1/p0 is not, and for the realised-batch bug its
    # mass sits on rare runs (a halved-noise step has p1/p0 ~ 2^41), so that side is checked only for the others.
    t = get_target(name)
    rng = np.random.default_rng(1)
    n = 5000
    sides = [np.exp(t.log_likelihood_ratio(t.mechanism.sample(t.d1, rng, n)))]
    if both_sides:
        sides.append(np.exp(-t.log_likelihood_ratio(t.mechanism.sample(t.d0, rng, n))))
    for vals in sides:
        m, se = _mean_and_se(vals)
        assert abs(m - 1.0) < 5 * se + 1e-3, (m, se)


def _small_gradient_target(epsilon=2.0, q=0.5, steps=10):
    X, y = base_data()
    learner = DPSGD(LogisticRegression(), epsilon=epsilon, delta=1e-5, sampling_rate=q, steps=steps,
                    learning_rate=0.01, expected_batch_size=5.0)
    canary = GradientCanary(2, norm=2.0, scale=5.0)
    release = AllIteratesRelease(learner, canary)
    P = learner.parameters()
    llr = canary.log_likelihood_ratio(sampling_rate=q, noise_multiplier=P.noise_multiplier)
    return release, canary.exclude((X, y), 4), canary.insert((X, y), 4), llr


def test_soundness_whitebox_gradient_canary_design_300_audits():
    # DP-SGD, q = 0.5, T = 10, claim (2, 1e-5), 500 trials per side per audit, exact LLR, betting estimator.
    release, d0, d1, llr = _small_gradient_target()
    rng = np.random.default_rng(2)
    bounds = []
    for _ in range(RUNS):
        o0, o1 = release.sample(d0, rng, 500), release.sample(d1, rng, 500)
        bounds.append(audit_outputs(o0, o1, epsilon=2.0, delta=1e-5, estimator=WhiteBox(llr)).epsilon_lower_bound)
    bounds = np.array(bounds)
    assert np.sum(bounds > 2.0) <= MAX_EXCEED
    assert bounds.mean() > 1.0  # measured 1.43 (largest 1.89): the design has power


def test_soundness_blackbox_input_canary_design_300_audits():
    # DP-SGD, q = 0.5, T = 10, claim (2, 1e-5), final parameters only, score minus the canary's loss, 1000 trials.
    X, y = base_data()
    learner = DPSGD(LogisticRegression(), epsilon=2.0, delta=1e-5, sampling_rate=0.5, steps=10,
                    learning_rate=0.01, expected_batch_size=5.0)
    x_c = np.zeros(3)
    x_c[2] = 10.0
    canary = InputCanary(x_c, 1.0)
    d0, d1 = canary.exclude((X, y)), canary.insert((X, y))

    def score(theta):
        return -learner.model.losses(theta, x_c[None], np.ones(1))[:, 0]

    rng = np.random.default_rng(3)
    bounds = np.array([audit_outputs(learner.sample(d0, rng, 1000), learner.sample(d1, rng, 1000), epsilon=2.0,
                                     delta=1e-5, attack=ScoreAttack(score)).epsilon_lower_bound for _ in range(RUNS)])
    assert np.sum(bounds > 2.0) <= MAX_EXCEED
    assert bounds.mean() > 0.1  # measured 0.21 (largest 0.81)


def _one_run_soundness(design, seed_base):
    X, y = base_data()
    learner = DPSGD(LogisticRegression(), epsilon=2.0, delta=1e-5, sampling_rate=0.5, steps=10,
                    learning_rate=0.01, expected_batch_size=5.0)
    bounds = np.array([design(learner, (X, y), 200, seed_base + i, epsilon_claimed=2.0).epsilon_lower_bound
                       for i in range(RUNS)])
    return bounds


def test_soundness_one_run_gradient_canaries_300_runs():
    # 300 independent one-run audits (200 Dirac gradient canaries each, q = 0.5, T = 10, claim (2, 1e-5)).
    bounds = _one_run_soundness(gradient_canaries_one_run, 10_000)
    assert np.sum(bounds > 2.0) <= MAX_EXCEED
    assert bounds.mean() > 0.1  # measured 0.19 (largest 1.25)


def test_soundness_one_run_input_canaries_300_runs():
    bounds = _one_run_soundness(input_canaries_one_run, 20_000)
    assert np.sum(bounds > 2.0) <= MAX_EXCEED
    assert bounds.mean() > 0.05  # measured 0.18 at seeds 10000-10299 (largest 0.97)


def test_one_run_gradient_canaries_flag_a_halved_noise_multiplier():
    # Claim (1, 1e-5) at q = 0.5, T = 10 (sigma ~ 5.6); trained with sigma / 4 (two halvings): per canary the
    # run is ~(9, 1e-5)-DP by PLD; 1000 canaries in one run give an SNJ bound above the claim 1.
    X, y = base_data()

    class Quarter(NoiseMultiplierHalved):
        def run_parameters(self):
            P = super().run_parameters()
            return type(P)(**{**P.__dict__, "noise_multiplier": P.noise_multiplier / 2})

    learner = Quarter(LogisticRegression(), epsilon=1.0, delta=1e-5, sampling_rate=0.5, steps=10,
                      learning_rate=0.01, expected_batch_size=5.0)
    res = gradient_canaries_one_run(learner, (X, y), 1000, 0, epsilon_claimed=1.0)
    assert res.violation and res.details["threat_model"] == "white-box-all-iterates", res.summary()


# --------------------------------------------------------------------------- the adapter


def _user_train(noise_multiplier=None):
    """A user's training function: DP-SGD written elsewhere, called as train(dataset, rng) -> model."""
    def train(dataset, rng):
        X, y = dataset[0], dataset[1]
        G = dataset[2] if len(dataset) == 3 else None
        est = DPSGD(LogisticRegression(), epsilon=2.0, delta=1e-5, sampling_rate=0.5, steps=10, learning_rate=0.01,
                    expected_batch_size=5.0, noise_multiplier=noise_multiplier, random_state=rng)
        return est.fit(X, y, gradient_canaries=G)
    return train


def test_adapter_input_canary_black_box():
    X, y = base_data()
    x_c = np.zeros(3)
    x_c[2] = 10.0
    res = audit_training(_user_train(), (X, y), InputCanary(x_c, 1.0), epsilon=2.0, delta=1e-5, trials=300)
    assert not res.violation and res.trials == 300
    assert res.details["threat_model"] == ThreatModel.BLACK_BOX_LAST_ITERATE.value
    assert "black-box" in res.details["threat_model_description"]


def test_adapter_gradient_canary_white_box_flags_a_user_bug():
    # The user's function trains with a quarter of the noise multiplier its claim (2, 1e-5) needs. The correct
    # function, audited with the exact LLR of what it runs, is not flagged (seeded; a sound audit flags it with
    # probability <= 0.05); the bug is.
    X, y = base_data()
    sigma = calibrate_noise_multiplier(2.0, 1e-5, 0.5, 10)
    canary = GradientCanary(2, norm=2.0, scale=5.0)
    ok = audit_training(_user_train(sigma), (X, y), canary, epsilon=2.0, delta=1e-5, trials=300, p=4,
                        estimator=WhiteBox(canary.log_likelihood_ratio(sampling_rate=0.5, noise_multiplier=sigma)))
    assert not ok.violation and ok.details["threat_model"] == "white-box-all-iterates"
    # The default score (sum of the observations, threshold test) needs no density and flags the bug.
    bad = audit_training(_user_train(sigma / 4), (X, y), canary, epsilon=2.0, delta=1e-5, trials=300, p=4)
    assert bad.violation and bad.attack == "score", bad.summary()


def test_adapter_gradient_canary_composition_estimator():
    # The per-step ratios of the correct function: the composition estimator bounds one step's loss law from all
    # 300 x 10 steps and composes it. Seeded: measured 1.75 (claim 2), where the betting estimator on the same
    # trials' total losses gives 1.28; the bar 1.5 lies between the two.
    X, y = base_data()
    sigma = calibrate_noise_multiplier(2.0, 1e-5, 0.5, 10)
    canary = GradientCanary(2, norm=2.0, scale=5.0)
    res = audit_training(_user_train(sigma), (X, y), canary, epsilon=2.0, delta=1e-5, trials=300, p=4,
                         estimator=Composition(canary.step_log_likelihood_ratio(sampling_rate=0.5,
                                                                                noise_multiplier=sigma)))
    assert not res.violation and res.method == "white-box/composition" and res.epsilon_lower_bound > 1.5
    assert res.details["threat_model"] == "white-box-all-iterates" and res.details["steps"] == 10


def test_adapter_one_run_with_input_and_gradient_canaries():
    X, y = base_data()
    m = 100
    Xp = pad_features(X, m)
    Xc = np.zeros((m, 3 + m))
    Xc[np.arange(m), 3 + np.arange(m)] = 10.0
    res = one_run_training_audit(_user_train(), (Xp, y), InputCanaries(Xc, np.ones(m)), epsilon=2.0, delta=1e-5)
    assert not res.violation and res.m == m and res.details["threat_model"] == "black-box-last-iterate"
    g = GradientCanaries(3 + np.arange(m), norm=2.0, scale=5.0)
    res = one_run_training_audit(_user_train(), (Xp, y), g, epsilon=2.0, delta=1e-5, p=4 + m)
    assert not res.violation and res.details["threat_model"] == "white-box-all-iterates"


def test_canary_construction():
    c = GradientCanary(1, norm=3.0)
    X, y = np.zeros((2, 2)), np.array([0.0, 1.0])
    d0, d1 = c.exclude((X, y), 3), c.insert((X, y), 3)
    assert d0[2].shape == (0, 3) and np.array_equal(d1[2], [[0.0, 3.0, 0.0]])
    ic = InputCanary([0.0, 5.0], 1.0)
    X1, y1 = ic.insert((X, y))
    assert X1.shape == (3, 2) and y1[-1] == 1.0 and ic.exclude((X, y))[0] is not None
    g = GradientCanaries(np.array([2, 3]), norm=1.5)
    _, _, G = g.build((X, y), np.array([False, True]), 4)
    assert np.array_equal(G, [[0.0, 0.0, 0.0, 1.5]])


def test_adapter_errors_name_the_argument():
    X, y = base_data()
    with pytest.raises(TypeError, match="train must be callable"):
        audit_training("fit", (X, y), InputCanary(np.zeros(3), 1.0), epsilon=1.0)
    with pytest.raises(TypeError, match="canary must be a privbound.audit.canaries"):
        audit_training(_user_train(), (X, y), "canary", epsilon=1.0)
    with pytest.raises(ValueError, match="give p"):
        audit_training(_user_train(), (X, y), GradientCanary(2), epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon must be in"):
        audit_training(_user_train(), (X, y), InputCanary(np.zeros(3), 1.0), epsilon=0.0)
    with pytest.raises(ValueError, match="coordinate must be an integer in"):
        GradientCanary(-1)
    with pytest.raises(ValueError, match="norm must be in"):
        GradientCanary(0, norm=0.0)
    with pytest.raises(ValueError, match="distinct"):
        GradientCanaries(np.array([1, 1]))
    with pytest.raises(TypeError, match="updates_"):
        GradientCanary(0).observe(object())
    with pytest.raises(TypeError, match="loss"):
        InputCanary(np.zeros(2), 1.0).observe(object())
    with pytest.raises(ValueError, match="sampling_rate must be in"):
        subsampled_gaussian_log_likelihood_ratio(np.zeros((2, 2)), sampling_rate=0.0, noise_multiplier=1.0)


def test_readme_example_runs(repo_root, capsys):
    # The README section's code block, run as a user would (seeded: deterministic; the correct function is
    # flagged with probability <= 0.05 over seeds, the sigma = 0.5 one is far above its claim).
    text = (repo_root / "README.md").read_text()
    section = text[text.index("## Audit a private training function"):text.index("## Privacy tests in your own CI")]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "README.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[0] for ln in lines] == ["white-box-all-iterates"] * 2 + ["black-box-last-iterate"]
    assert [ln.split()[-1] for ln in lines] == ["ok", "VIOLATION", "ok"]
