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


def test_discrete_mechanisms_state_their_guarantees():
    dl = M.DiscreteLaplaceMechanism(0.1, query=np.sum)
    assert dl.scale == 10 and dl.guarantee.epsilon == pytest.approx(0.1)
    out = dl.sample(np.array([1, 1, 0]), np.random.default_rng(0), 1000)
    assert out.dtype.kind == "i"
    dg = M.DiscreteGaussianMechanism(4.0, 1e-5)
    assert M.discrete_gaussian_delta(16.0, dg.epsilon) <= 1e-5 < M.discrete_gaussian_delta(16.0, dg.epsilon * 0.99)
    assert dg.dp_event().rho == pytest.approx(1 / 32)


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
