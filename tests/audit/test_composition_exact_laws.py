"""The composition estimator's arithmetic on exact per-step laws (no band): composed epsilons far beyond 709,
delta down to 1e-12 and T up to 5000 against closed forms and dp_accounting, and its numeric edges.

Each law is given exactly or lowered onto a grid (every interval's mass at the interval's smallest loss, the
upper tail at the top point, the lower tail dropped), so it is stochastically smaller than the true law: the
composed epsilon must never exceed the true one, and must reach at least 0.95 of it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from privbound.audit.estimators.composition import composed_epsilon_lower_bound, composed_loss_law, epsilon_for_delta


def _composed_epsilon(values, masses, steps, delta):
    losses, probs, inf_mass, _ = composed_loss_law(values, masses, steps, delta=delta)
    return epsilon_for_delta(losses, probs, inf_mass, delta)


def _rr_epsilon(e0, steps, delta):
    """Exact epsilon of ``steps`` randomized-response steps of loss +-e0 (binomial closed form)."""
    p = 1 / (1 + math.exp(-e0))
    k = np.arange(steps + 1)
    log_pmf, loss = stats.binom.logpmf(k, steps, p), e0 * (2 * k - steps)

    def excess(eps):
        with np.errstate(over="ignore"):
            return float(np.sum(np.exp(log_pmf) * np.clip(-np.expm1(eps - loss), 0, None))) - delta

    return optimize.brentq(excess, 0.0, steps * e0)


@pytest.mark.parametrize("e0, steps, delta", [
    (0.05, 1000, 1e-5), (0.05, 1000, 1e-12), (0.02, 5000, 1e-6), (0.3, 100, 1e-12),
    (2.0, 5000, 1e-5),  # composed epsilon about 8000: far beyond where p e^{-l} underflows
])
def test_randomized_response_steps_against_the_binomial_closed_form(e0, steps, delta):
    p = 1 / (1 + math.exp(-e0))
    exact = _rr_epsilon(e0, steps, delta)
    got = _composed_epsilon([e0, -e0], [p, 1 - p], steps, delta)
    assert 0.95 * exact <= got <= exact


def test_the_composed_law_lies_below_the_exact_one_at_every_grid_point():
    # Randomized response at loss +-1, 5000 steps, untilted: the sum of the grid-rounded steps is binomial,
    # so every grid point's exact probability is known. The FFT errs by up to about 1e-15 per point at this T
    # (above one machine epsilon in all), and the allowance for it, scaled by the steps composed, must keep
    # every point at or below its exact probability (none of them above it by even 1e-16).
    e0, steps = 1.0, 5000
    p = 1 / (1 + math.exp(-e0))
    losses, probs, inf_mass, rounding = composed_loss_law([e0, -e0], [p, 1 - p], steps)
    disc = rounding / steps
    k = np.arange(steps + 1)
    index = (k * np.floor(e0 / disc) + (steps - k) * np.floor(-e0 / disc)).astype(np.int64) - round(losses[0] / disc)
    inside = (index >= 0) & (index < probs.size)
    exact = np.zeros(probs.size)
    np.add.at(exact, index[inside], stats.binom.pmf(k, steps, p)[inside])
    assert inf_mass == 0.0 and np.count_nonzero(exact) > 1000
    assert np.all(probs <= exact)


def _lowered_gaussian_loss_law(mu, points=20001, width=12.0):
    """The privacy loss N(mu^2/2, mu^2) of a Gaussian step (sensitivity / sigma = mu), lowered onto a grid."""
    z = np.linspace(-width, width, points)
    masses = np.diff(stats.norm.cdf(np.append(z, np.inf)))
    return mu * mu / 2 + mu * z, masses


def _gdp_epsilon(mu, delta):
    """Exact epsilon of mu-Gaussian DP (Dong, Roth & Su 2022, Cor. 2.13)."""
    return optimize.brentq(lambda e: stats.norm.cdf(-e / mu + mu / 2) - math.exp(e) * stats.norm.cdf(-e / mu - mu / 2)
                           - delta, 0.0, 200.0)


@pytest.mark.parametrize("mu, steps, delta", [(0.05, 1000, 1e-5), (0.05, 1000, 1e-12), (0.02, 5000, 1e-12),
                                              (0.3, 100, 1e-12)])
def test_gaussian_steps_against_gaussian_dp(mu, steps, delta):
    exact = _gdp_epsilon(mu * math.sqrt(steps), delta)
    got = _composed_epsilon(*_lowered_gaussian_loss_law(mu), steps, delta)
    assert 0.95 * exact <= got <= exact


def _lowered_subsampled_gaussian_loss_laws(q, sigma, points=40001, width=14.0):
    """Both directions' privacy-loss laws of a Poisson-subsampled Gaussian step (rate q, noise sigma, shift 1),
    lowered onto a grid: P = (1 - q) N(0, s^2) + q N(1, s^2) against Q = N(0, s^2), and Q against P."""
    o = np.linspace(-width * sigma, 1 + width * sigma, points)
    loss = np.log1p(q * np.expm1((2 * o - 1) / (2 * sigma ** 2)))  # log P/Q, increasing in o
    cdf_p = (1 - q) * stats.norm.cdf(o, 0, sigma) + q * stats.norm.cdf(o, 1, sigma)
    cdf_q = stats.norm.cdf(o, 0, sigma)
    p_forward = np.diff(np.append(cdf_p, 1.0))  # mass of [o_i, o_{i+1}) at loss(o_i), its smallest
    q_reverse = np.diff(np.concatenate([[0.0], cdf_q]))  # mass of (o_{i-1}, o_i] at -loss(o_i), its smallest
    return (loss, p_forward), (-loss, q_reverse)


def test_subsampled_gaussian_steps_against_dp_accounting():
    # DP-SGD's step (q = 0.1, sigma = 1) composed 2000 times at delta = 1e-8; dp_accounting's PLD brackets the
    # true epsilon between its optimistic and pessimistic discretisations.
    from dp_accounting.pld import privacy_loss_distribution as pld

    q, sigma, steps, delta = 0.1, 1.0, 2000, 1e-8
    bracket = [pld.from_gaussian_mechanism(sigma, sampling_prob=q, pessimistic_estimate=pe, use_connect_dots=False,
                                           value_discretization_interval=1e-4).self_compose(steps)
               .get_epsilon_for_delta(delta) for pe in (False, True)]
    got = max(_composed_epsilon(v, m, steps, delta) for v, m in _lowered_subsampled_gaussian_loss_laws(q, sigma))
    assert 0.95 * bracket[0] <= got <= bracket[1]


def test_the_estimator_refuses_impossible_infinite_step_losses_by_name():
    l0, l1 = np.zeros((5, 3)), np.zeros((5, 3))
    l0[2, 1] = -np.inf  # drawn from d0, yet probability 0 under d0
    with pytest.raises(ValueError, match=r"step_llr_out0\[2, 1\] is -inf.*drawn from d0"):
        composed_epsilon_lower_bound(l0, l1, delta=1e-5)
    l0[2, 1], l1[4, 0] = 0.0, np.inf  # drawn from d1, yet probability 0 under d1
    with pytest.raises(ValueError, match=r"step_llr_out1\[4, 0\] is inf.*drawn from d1"):
        composed_epsilon_lower_bound(l0, l1, delta=1e-5)
    l1[4, 0] = -np.inf  # impossible under d0: infinite loss of the reverse direction, a legitimate outcome
    assert composed_epsilon_lower_bound(l0, l1, delta=1e-5).epsilon_lower_bound == math.inf


def test_one_outlier_step_does_not_coarsen_the_grid():
    # 500 x 40 Gaussian step losses; one step of one trial replaced by 1e6. The outlier's band mass (about 1e-12)
    # is far below delta, so it is lowered onto the bulk and the bound and its rounding stay as they were.
    rng = np.random.default_rng(0)
    mu = 0.3
    l0 = rng.normal(mu * mu / 2, mu, (500, 40))
    l1 = -rng.normal(mu * mu / 2, mu, (500, 40))
    plain = composed_epsilon_lower_bound(l0, l1, delta=1e-5)
    l0[0, 0] = 1e6
    spiked = composed_epsilon_lower_bound(l0, l1, delta=1e-5)
    assert plain.epsilon_lower_bound > 1.0
    assert spiked.epsilon_lower_bound >= plain.epsilon_lower_bound
    assert spiked.details["rounding"] <= 1e-3 + 1e-12


@pytest.mark.parametrize("spike", [-1e3, -1e6, 1e4, 1e6])
def test_one_outlier_step_with_more_mass_than_the_trimming_lowers_does_not_collapse_the_bound(spike):
    # 1000 x 100 Gaussian step losses at delta = 1e-8: one step's band mass (about 9e-11) is above the trimming's
    # 1% of delta per step, so a kept outlier set the grid's span and the bound fell to 0 (rounding 72-632). A low
    # outlier can never lift a sum above 0 (it is dropped, exactly); a high one of total mass below delta is
    # lowered onto the next atom in a second composition whose bound is taken, and the details say so.
    rng = np.random.default_rng(0)
    mu, delta = 0.3, 1e-8
    l0 = rng.normal(mu * mu / 2, mu, (1_000, 100))
    plain = composed_epsilon_lower_bound(l0, None, delta=delta)
    l0[0, 0] = spike
    spiked = composed_epsilon_lower_bound(l0, None, delta=delta, epsilon_claimed=19.0)
    assert plain.epsilon_lower_bound > 19.0 and spiked.p_value <= 0.05  # the p-value agrees with the bound
    assert spiked.epsilon_lower_bound >= 0.995 * plain.epsilon_lower_bound, spiked.details
    assert spiked.details["rounding"] <= 0.01 * spiked.epsilon_lower_bound
    assert ("outliers_lowered" in spiked.details) == (spike > 0)


def test_details_are_honest_for_degenerate_losses():
    r = composed_epsilon_lower_bound(np.zeros((100, 20)), np.zeros((100, 20)), delta=1e-5)
    assert r.epsilon_lower_bound == 0.0
    assert r.details["rounding"] <= 1e-3 + 1e-12
    assert "unbounded" not in r.details


def test_epsilon_for_delta_beyond_the_exponential_underflow():
    # Losses 800 and 1000 with mass 1/2 each, delta = 0.1: 0.5 (1 - e^{eps - 1000}) = 0.1 at eps = 1000 + ln 0.8,
    # where e^{-l} underflows to 0 in float64.
    got = epsilon_for_delta(np.array([800.0, 1000.0]), np.array([0.5, 0.5]), 0.0, 0.1)
    assert got == pytest.approx(1000 + math.log(0.8), abs=1e-9)
    # Below the crossing of the first atom: 0.5 (1 - e^{eps - 800}) + 0.5 = 0.9 at eps = 800 + ln 0.2.
    assert epsilon_for_delta(np.array([800.0, 1000.0]), np.array([0.5, 0.5]), 0.0, 0.9) == pytest.approx(
        800 + math.log(0.2), abs=1e-9)
