"""Tests of privbound.learners.agnostic_halfspaces.dpsas: Algorithm 3 (DPSAS) and its private steps.

Statistical tests use fixed seeds (so each is deterministic); each states its false-failure rate over seeds.
"""

import math

import numpy as np
import pytest
from scipy import stats

from privbound.learners.agnostic_halfspaces.common import HalfspaceProblem
from privbound.learners.agnostic_halfspaces.dpsas import (
    DPSAS,
    dpsas_clip_norm,
    dpsas_clip_probability,
    dpsas_kappa,
    dpsas_label_mean,
    dpsas_laplace_scale,
    dpsas_noise_multiplier,
    dpsas_schedule,
    dpsas_sigma,
    dpsas_threshold,
    ramp,
    ramp_band,
)


def test_dpsas_label_mean_batch_vs_single_and_scale():
    y = np.r_[np.ones(30), -np.ones(20)]
    batch = dpsas_label_mean(y, 0.5, np.random.default_rng(0), 20_000)
    single = np.array([dpsas_label_mean(y, 0.5, np.random.default_rng(50 + i)) for i in range(2000)])
    assert stats.ks_2samp(batch, single).pvalue > 1e-3
    # Lap(2/(eps m0)) = Lap(0.08) around 0.2: KS against the exact law (false-failure 1e-3)
    assert stats.kstest(batch, stats.laplace(loc=0.2, scale=0.08).cdf).pvalue > 1e-3
    assert dpsas_laplace_scale(0.5, 50) == pytest.approx(0.08)
    # sigma with and without L (Claim 4.3 erratum): ratio L
    assert math.isclose(dpsas_sigma(4.0, 0.5, 1e-5, 100) / dpsas_sigma(4.0, 0.5, 1e-5, 100, with_L=False), 4.0)
    # noise multiplier = sigma / (2L/m_0)
    assert dpsas_sigma(4.0, 0.5, 1e-5, 100) / (2 * 4.0 / 100) == pytest.approx(dpsas_noise_multiplier(0.5, 1e-5))


def test_ramp_eq12():
    z = np.array([-2.0, -0.5, 0.0, 0.5, 2.0])
    np.testing.assert_allclose(ramp(z, 1.0, 0.0), [0, 0.5, 1.0, 1.5, 2.0])


def test_dpsas_step_size_choice_measured():
    # Documents the step-size decision (DPSAS docstring): the printed lambda = e^{pi^2/2} s overshoots and
    # degrades the initial direction; lambda = s does not. Seeded (deterministic), d = 5, OPT = 0.1.
    rng = np.random.default_rng(0)
    prob = HalfspaceProblem.random(5, rng, t=0.3, rate=0.1)
    X, y = prob.sample(100_000, rng)
    cos = {}
    for ss in ("adaptive", "paper"):
        m = DPSAS(eta=0.11, epsilon=0.5, step_size=ss, random_state=1).fit(X, y)
        cos[ss] = m.coef_ @ prob.normal
        assert m.trace_.shape == (m.n_iter_ + 1, 5)
    assert cos["adaptive"] > 0.99 and cos["paper"] < cos["adaptive"]


def test_validation_errors_name_the_argument():
    X = np.random.default_rng(0).standard_normal((100, 2))
    with pytest.raises(ValueError, match="y"):
        DPSAS().fit(X, np.zeros(100))
    with pytest.raises(ValueError, match="'step_size' parameter of DPSAS"):
        DPSAS(step_size="fast").fit(X, np.ones(100))
    with pytest.raises(ValueError, match="'eta' parameter of DPSAS must be a float in the range \\(0.0, 1.0\\)"):
        DPSAS(eta=0.5 * 2).fit(X, np.ones(100))


def test_calibrations_pinned_to_hand_values():
    # Algorithm 3 line 6: sigma = 2 L sqrt(2 ln(2/delta)) / (eps m_0). delta = 2 e^-8 gives ln(2/delta) = 8, so
    # sqrt(2 * 8) = 4 and sigma = 2 * 3 * 4 / (0.5 * 12) = 4 exactly (ln(1.25/delta) = 7.53 would give 3.88).
    delta = 2 * math.exp(-8)
    assert dpsas_sigma(3.0, 0.5, delta, 12) == pytest.approx(4.0, rel=1e-12)
    assert dpsas_sigma(3.0, 0.5, delta, 12, with_L=False) == pytest.approx(4.0 / 3.0, rel=1e-12)
    # the noise multiplier sigma/(2L/m_0) = sqrt(16)/0.5 = 8 (the audit target's calibration)
    assert dpsas_noise_multiplier(0.5, delta) == pytest.approx(8.0, rel=1e-12)
    # delta = 1e-5: ln(2e5) = 12.206073, sqrt(24.412145) = 4.940865; L = 2 sqrt(5) = 4.472136, m_0 = 2000:
    # sigma = 2 * 4.472136 * 4.940865 / 1000 = 0.0441925
    assert dpsas_sigma(dpsas_clip_norm(5), 0.5, 1e-5, 2000) == pytest.approx(0.0441925, rel=1e-5)
    # step 3: L = 2 sqrt(d); step 4: Lap(2/(eps m_0)) = 2/(0.5 * 100) = 0.04
    assert dpsas_clip_norm(4) == 4.0 and dpsas_clip_norm(9) == 6.0
    assert dpsas_laplace_scale(0.5, 100) == pytest.approx(0.04)


def test_schedule_threshold_and_band_pinned():
    # s = C_s / ln(1/eta)^{3/2}; eta = e^-1: s = 1, T = ceil(1) = 1 iteration, m_0 = 30 // 3 = 10.
    assert dpsas_schedule(math.exp(-1), 1.0, 1.0, None, 30) == (1.0, 1, 10)
    # phi_t = (pi/2)(1 - s^2/64)^t; s = 4, t = 1: (pi/2)(3/4) = 3 pi/8: a = sin(3 pi/8) = 0.9238795,
    # b = -tau cos(3 pi/8) = -0.5 * 0.3826834 = -0.1913417.
    a, b = ramp_band(4.0, 1, 0.5)
    assert a == pytest.approx(0.9238795, abs=1e-7) and b == pytest.approx(-0.1913417, abs=1e-7)
    # tau^ = Phi^-1(clip((1 + y^)/2)): y^ = 0.2 -> Phi^-1(0.6) = 0.2533471; y^ = 0.96 -> clip at 1 - kappa = 0.9
    # (kappa = 0.1) -> Phi^-1(0.9) = 1.2815516; y^ = -0.2 -> Phi^-1(0.4) = -0.2533471.
    np.testing.assert_allclose(dpsas_threshold(np.array([0.2, 0.96, -0.2]), 0.1), [0.2533471, 1.2815516, -0.2533471],
                               atol=1e-7)
    np.testing.assert_allclose(dpsas_clip_probability(np.array([0.05, 0.5, 0.97]), 0.1), [0.1, 0.5, 0.9])
    # kappa = C_kappa eta, capped below 1/2
    assert dpsas_kappa(1.0, 0.2) == 0.2 and dpsas_kappa(1.0, 0.7) == pytest.approx(0.5 - 1e-6)


def test_dp_event_is_the_gaussian_step_with_sensitivity_2L():
    # DPSAS's dp_event: one Gaussian step of noise multiplier sigma / (2L/m_0) = sqrt(2 ln(2/delta))/eps;
    # with delta = 2 e^-8 and eps = 0.5 that is 8 (hand value above), whatever d and m_0; stated per record under
    # replace-one (dp_accounting's multiplier: noise over one record's bound L/m_0, twice that).
    X = np.random.default_rng(0).standard_normal((400, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    m = DPSAS(eta=0.2, epsilon=0.5, delta=2 * math.exp(-8), random_state=0).fit(X, y)
    assert m.dp_event().noise_multiplier == pytest.approx(2 * 8.0, rel=1e-12)
