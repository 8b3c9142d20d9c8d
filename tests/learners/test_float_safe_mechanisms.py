"""Float-safe primitives: exact Bernoulli(exp(-gamma)), discrete Laplace and Gaussian samplers, the snapping mechanism.

Error rates: each distribution test is a chi-square goodness-of-fit test at level 1e-3 on a fixed seed
(false-failure rate <= 1e-3 each); the rest is deterministic.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from privbound.learners import mechanisms as M

LEVEL = 1e-3


def _chi2_pvalue(samples: np.ndarray, support: np.ndarray, probs: np.ndarray) -> float:
    """Chi-square test of integer samples against probabilities on ``support`` (the rest pooled)."""
    counts = np.array([(samples == v).sum() for v in support] + [np.isin(samples, support, invert=True).sum()])
    expected = np.append(probs, max(0.0, 1.0 - probs.sum())) * samples.size
    keep = expected > 5
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    obs, exp = obs[exp > 0], exp[exp > 0]
    return float(stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue)


@pytest.mark.parametrize("n, d", [(0, 1), (1, 3), (2, 3), (5, 2), (7, 7)])
def test_bernoulli_exp_is_exp_minus_gamma(n, d):
    rng = np.random.default_rng(n * 10 + d)
    b = M.bernoulli_exp(np.full(100_000, n), d, rng)
    p = math.exp(-n / d)
    # binomial test at 1e-3
    assert stats.binomtest(int(b.sum()), b.size, p).pvalue > LEVEL


@pytest.mark.parametrize("scale", [Fraction(1), Fraction(10), Fraction(3, 2)])
def test_discrete_laplace_distribution(scale):
    x = M.discrete_laplace(scale, np.random.default_rng(1), 100_000)
    a = math.exp(-1 / float(scale))
    z = np.arange(-60, 61)
    probs = (1 - a) / (1 + a) * a ** np.abs(z)
    assert x.dtype.kind == "i"
    assert _chi2_pvalue(x, z, probs) > LEVEL


@pytest.mark.parametrize("sigma2", [Fraction(1), Fraction(9), Fraction(1, 4)])
def test_discrete_gaussian_distribution(sigma2):
    x = M.discrete_gaussian(sigma2, np.random.default_rng(2), 100_000)
    z = np.arange(-60, 61)
    w = np.exp(-(z.astype(float) ** 2) / (2 * float(sigma2)))
    assert _chi2_pvalue(x, z, w / w.sum()) > LEVEL


def test_discrete_gaussian_delta_against_its_definition():
    # delta(eps) = sup_E P_0(E) - e^eps P_1(E) for N_Z(0, s2) vs N_Z(1, s2), computed directly as the sum of
    # (p0(z) - e^eps p1(z))_+ over the lattice: the closed form of CKS Thm 7 must agree.
    s2 = 4.0
    z = np.arange(-200, 201)
    w0 = np.exp(-(z**2) / (2 * s2))
    w0 /= w0.sum()
    w1 = np.exp(-((z - 1) ** 2) / (2 * s2))
    w1 /= w1.sum()
    for eps in (0.1, 0.5, 1.0, 2.0):
        direct = np.maximum(w0 - math.exp(eps) * w1, 0).sum()
        assert M.discrete_gaussian_delta(s2, eps) == pytest.approx(direct, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("sens", [1, 3])
def test_discrete_mechanisms_state_their_guarantees(sens):
    # Sensitivity D: the discrete Laplace scale is D / eps (10 D at eps = 0.1), its guarantee eps whatever D, its
    # DpEvent parameter eps / D; the discrete Gaussian's zCDP event has rho = D^2 / (2 sigma^2) = D^2 / 32 at
    # sigma = 4 and its epsilon comes from the exact curve at sensitivity D. At D = 1 a D dropped or not squared
    # gives the same numbers; at D = 3 it does not.
    dl = M.DiscreteLaplaceMechanism(0.1, sensitivity=sens, query=np.sum)
    assert dl.scale == 10 * sens and dl.guarantee.epsilon == pytest.approx(0.1)
    assert dl.dp_event().noise_parameter == pytest.approx(0.1 / sens) and dl.dp_event().sensitivity == sens
    out = dl.sample(np.array([1, 1, 0]), np.random.default_rng(0), 1000)
    assert out.dtype.kind == "i"
    dg = M.DiscreteGaussianMechanism(4.0, 1e-5, sensitivity=sens)
    assert (M.discrete_gaussian_delta(16.0, dg.epsilon, sens) <= 1e-5
            < M.discrete_gaussian_delta(16.0, dg.epsilon * 0.99, sens))
    assert dg.dp_event().rho == pytest.approx(sens ** 2 / 32)


@pytest.mark.parametrize("sens", [1, 3])
def test_discrete_laplace_mechanism_noise_law(sens):
    # Noise P(z) ∝ exp(-eps |z| / D) with eps = 0.5: scipy's dlaplace(eps / D). 100,000 draws on a query answer of
    # 2; chi-square at LEVEL (false-failure rate <= 1e-3 per case). Power: the law with D dropped is rejected at D = 3.
    m = M.DiscreteLaplaceMechanism(0.5, sensitivity=sens, query=np.sum)
    z = m.sample(np.array([1, 1, 0]), np.random.default_rng(5), 100_000) - 2
    support = np.arange(-80, 81)
    assert _chi2_pvalue(z, support, stats.dlaplace(0.5 / sens).pmf(support)) > LEVEL
    if sens != 1:
        assert _chi2_pvalue(z, support, stats.dlaplace(0.5).pmf(support)) < LEVEL


def test_uniform_double_reaches_every_binade_with_its_mass():
    u = M.uniform_double(np.random.default_rng(3), 200_000)
    assert np.all((u > 0) & (u < 1))
    # P(u in [2^-k, 2^-k+1)) = 2^-k
    e = -np.floor(np.log2(u)).astype(int)
    for k in (1, 2, 3):
        assert stats.binomtest(int((e == k).sum()), u.size, 2.0**-k).pvalue > LEVEL
    # the low mantissa bits are used (not only multiples of 2^-53 as in rng.random)
    assert np.any((u * 2.0**53) % 1 != 0)


def test_snapping_outputs_lie_on_a_data_independent_lattice():
    m = M.SnappingLaplaceMechanism(1.0, bound=64.0, query=np.sum)
    rng = np.random.default_rng(4)
    for data in (np.array([0, 0, 1]), np.array([1, 1, 1])):
        out = m.sample(data, rng, 50_000)
        assert np.all(out % m.lattice == 0) and np.abs(out).max() <= 64.0
    assert m.lattice == 1.0 and M.SnappingLaplaceMechanism(0.3, bound=64.0).lattice == 4.0
    assert m.guarantee.epsilon == pytest.approx(1.0 + 2.0**-49 * 64)
    with pytest.raises(ValueError, match="bound must be in"):
        M.SnappingLaplaceMechanism(1.0, bound=0.5)


def _snapping_law(x, epsilon, bound):
    """Exact law of the snapping mechanism with real arithmetic, on the lattice k Lambda in [-B, B]: the answer
    clamped to [-B, B], plus Laplace(1/epsilon), rounded to the NEAREST multiple of Lambda (ties have probability
    0) and clamped again, so the two end points carry the tails."""
    lam, grid = 1.0 / epsilon, 2.0 ** math.ceil(math.log2(1.0 / epsilon))
    c = min(max(x, -bound), bound)
    k = np.arange(-int(bound // grid), int(bound // grid) + 1)
    cdf = lambda t: stats.laplace.cdf(t, loc=c, scale=lam)  # noqa: E731
    p = cdf((k + 0.5) * grid) - cdf((k - 0.5) * grid)
    p[0], p[-1] = cdf((k[0] + 0.5) * grid), 1.0 - cdf((k[-1] - 0.5) * grid)
    return k * grid, p


@pytest.mark.parametrize("epsilon, bound, data", [
    (1.0, 8.0, np.array([1, 1, 1])),          # lambda = Lambda = 1, answer 3 inside the bound
    (0.3, 24.0, np.array([5, 4, 3, 2, 1])),   # lambda = 3.33, Lambda = 4, answer 15 inside the bound
    (0.3, 24.0, np.full(10, 4)),              # answer 40 outside [-24, 24]: clamped to 24 before the noise
], ids=["eps1-inside", "eps0.3-inside", "eps0.3-outside-the-bound"])
def test_snapping_law(epsilon, bound, data):
    # 50,000 releases against the exact law (chi-square at LEVEL: false-failure rate <= 1e-3 per case). At eps = 1
    # the noise scale and the lattice are both 1, so a scale of 1 instead of 1/eps, or a lattice of 1/eps, cannot
    # show; nor can a missing clamp of the answer when it lies inside the bound; rounding down or up instead of to
    # the nearest point shifts the whole law by half a lattice step.
    m = M.SnappingLaplaceMechanism(epsilon, bound=bound, query=np.sum)
    out = m.sample(data, np.random.default_rng(6), 50_000)
    support, probs = _snapping_law(float(np.sum(data)), epsilon, bound)
    assert np.all(np.isin(out, support))
    idx = np.searchsorted(support, out)
    counts = np.bincount(idx, minlength=support.size)
    keep = probs * out.size > 5
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(probs[keep], probs[~keep].sum()) * out.size
    obs, exp = obs[exp > 0], exp[exp > 0]
    assert stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > LEVEL
