"""Tests of the DP primitives in ``learners/mechanisms.py``.

Every statistical test fixes its seed and states its false-failure rate (the
probability that it fails although the code is right). Expected values are
derived by hand from the definitions (derivations in comments), or computed by
an independent route (numerical quadrature, scipy distributions,
dp_accounting), never copied from the code's output.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special, stats

import dp_accounting
from dp_accounting.pld import pld_privacy_accountant

from privbound.audit.engine import map_chunks
from privbound.learners.neighbouring import NeighbouringRelation
from privbound.learners.mechanisms import (
    AboveThreshold,
    ExponentialMechanism,
    GaussianMechanism,
    GeometricMechanism,
    InitializeAboveThr,
    LaplaceMechanism,
    PoissonSubsampled,
    PrivacyGuarantee,
    RandomizedResponse,
    ReportNoisyMax,
    SparseVector,
    above_threshold_alpha,
    exponential_mechanism_log_probabilities,
    exponential_mechanism_utility_bound,
    gaussian_delta,
    poisson_subsample,
)

ALPHA = 1e-3  # per-test significance level = false-failure rate of each statistical test


# --------------------------------------------------------------------------- helpers


def draw(mech, data, n, seed, chunk_size=10_000):
    """n batched releases through the project's chunk engine."""
    parts = map_chunks(lambda size, ss: mech.sample(data, np.random.default_rng(ss), size), n,
                       seed=seed, chunk_size=chunk_size)
    return np.concatenate(parts, axis=0)


def draw_calls(mech, data, n, seed, chunk_size=1_000):
    """n single releases (``__call__``), one at a time, through the chunk engine."""
    def fn(size, ss):
        rng = np.random.default_rng(ss)
        return np.asarray([mech(data, rng) for _ in range(size)])
    return np.concatenate(map_chunks(fn, n, seed=seed, chunk_size=chunk_size), axis=0)


def chisq_gof(counts, probs, min_expected=5.0):
    """Chi-square goodness-of-fit p-value, pooling cells with small expectation."""
    counts = np.asarray(counts, float)
    probs = np.asarray(probs, float)
    n = counts.sum()
    exp = probs * n
    keep = exp >= min_expected
    obs_c = np.append(counts[keep], counts[~keep].sum())
    exp_c = np.append(exp[keep], exp[~keep].sum())
    if exp_c[-1] == 0:
        obs_c, exp_c = obs_c[:-1], exp_c[:-1]
    assert obs_c.sum() == pytest.approx(exp_c.sum())
    return stats.chisquare(obs_c, exp_c).pvalue


def two_sample_discrete(a, b):
    """Chi-square test of homogeneity for two samples of discrete labels."""
    a = np.asarray(a)
    b = np.asarray(b)
    labels = np.unique(np.concatenate([a, b]))
    table = np.array([[np.sum(a == v) for v in labels], [np.sum(b == v) for v in labels]])
    if table.shape[1] == 1:
        return 1.0
    return stats.chi2_contingency(table).pvalue


def row_ids(x):
    """Map each row of a 2-d integer array to a label (for contingency tests)."""
    x = np.asarray(x)
    return np.array(["".join(map(str, r)) for r in x.reshape(x.shape[0], -1)])


# --------------------------------------------------------------------------- Laplace


def test_laplace_distribution_and_scale():
    # scale = sensitivity/epsilon = 2/0.5 = 4; query np.sum([1, 0, 1]) = 2, so
    # each release ~ Laplace(loc 2, scale 4).  KS false-failure rate ALPHA.
    m = LaplaceMechanism(epsilon=0.5, sensitivity=2.0, query=np.sum)
    assert m.scale == 4.0
    x = draw(m, np.array([1, 0, 1]), 20_000, seed=1)
    assert x.shape == (20_000,)
    assert stats.kstest(x, stats.laplace(loc=2.0, scale=4.0).cdf).pvalue > ALPHA
    # Power: a mechanism with the scale off by 20% is rejected at this sample size.
    assert stats.kstest(x, stats.laplace(loc=2.0, scale=4.8).cdf).pvalue < ALPHA


def test_laplace_vector_query_each_coordinate():
    # query returns 3 coordinates (1, 2, 3); each gets independent Laplace(1/1).
    # Three KS tests at ALPHA/3 each (Bonferroni): family false-failure rate ALPHA.
    m = LaplaceMechanism(epsilon=1.0, query=lambda d: d * np.array([1.0, 2.0, 3.0]))
    x = draw(m, 1.0, 10_000, seed=2)
    assert x.shape == (10_000, 3)
    for j, loc in enumerate([1.0, 2.0, 3.0]):
        assert stats.kstest(x[:, j], stats.laplace(loc=loc, scale=1.0).cdf).pvalue > ALPHA / 3
    single = m(1.0, np.random.default_rng(0))
    assert isinstance(single, np.ndarray) and single.shape == (3,)
    assert isinstance(LaplaceMechanism(1.0)(0.0, np.random.default_rng(0)), float)


def test_laplace_guarantee_and_event_with_pld():
    m = LaplaceMechanism(epsilon=0.7, sensitivity=3.0)
    g = m.guarantee
    assert (g.epsilon, g.delta) == (0.7, 0.0)
    # noise_multiplier = scale/sensitivity = (3/0.7)/3 = 1/0.7
    assert m.dp_event() == dp_accounting.LaplaceDpEvent(noise_multiplier=1 / 0.7)
    assert g.dp_event() == m.dp_event()
    # Independent accountant: the PLD of Laplace(1/0.7) gives epsilon ~ 0.7 at tiny delta.
    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(m.dp_event())
    assert acc.get_epsilon(1e-9) == pytest.approx(0.7, abs=1e-3)


# --------------------------------------------------------------------------- Gaussian


def test_gaussian_classic_sigma_by_hand():
    # sigma = D sqrt(2 ln(1.25/delta))/eps, D=2, eps=0.5, delta=1e-5:
    # ln(1.25e5) = 11.736069, x2 = 23.472139, sqrt = 4.844805, x 2/0.5 = 19.37922.
    m = GaussianMechanism(epsilon=0.5, delta=1e-5, sensitivity=2.0, calibration="classic")
    assert m.sigma == pytest.approx(19.37922, rel=1e-6)
    assert m.dp_event() == dp_accounting.GaussianDpEvent(noise_multiplier=m.sigma / 2.0)


def test_gaussian_classic_rejects_epsilon_at_least_one():
    with pytest.raises(ValueError, match=r"epsilon.*\(0, 1\)"):
        GaussianMechanism(epsilon=1.0, delta=1e-5, calibration="classic")


@pytest.mark.parametrize("eps, delta, sens", [(0.5, 1e-5, 1.0), (1.0, 1e-6, 2.0), (4.0, 1e-3, 0.5)])
def test_gaussian_analytic_sigma_meets_delta_exactly(eps, delta, sens):
    m = GaussianMechanism(epsilon=eps, delta=delta, sensitivity=sens)
    # Balle & Wang: the analytic sigma is the one at which the exact curve equals delta.
    assert gaussian_delta(m.sigma, eps, sens) == pytest.approx(delta, abs=1e-6, rel=1e-6)
    # sigma scales linearly with the sensitivity: sigma(D) = D sigma(1).
    assert m.sigma == pytest.approx(sens * GaussianMechanism(eps, delta).sigma, rel=1e-9)
    if eps < 1:
        # The analytic calibration is never worse than the classic one (Balle & Wang Sec. 3).
        assert m.sigma < GaussianMechanism(eps, delta, sens, calibration="classic").sigma


def test_gaussian_delta_hand_value_and_quadrature():
    # eps = 0, sigma = D = 1: delta = Phi(1/2) - Phi(-1/2) = 2 Phi(1/2) - 1 = 0.3829249.
    assert gaussian_delta(1.0, 0.0) == pytest.approx(0.3829249, abs=1e-7)
    # Hockey-stick divergence by quadrature, independent of the closed form:
    # delta(eps) = int max(0, N(0,s^2)(x) - e^eps N(D,s^2)(x)) dx; the integrand is
    # positive exactly for x < D/2 - eps s^2/D.
    for s, eps, d in [(1.0, 0.5, 1.0), (2.0, 1.0, 3.0), (0.7, 2.0, 1.0), (5.0, 0.1, 1.0)]:
        cut = d / 2 - eps * s**2 / d
        f = lambda x: stats.norm.pdf(x, 0, s) - math.exp(eps) * stats.norm.pdf(x, d, s)
        ref, _ = integrate.quad(f, -np.inf, cut, epsabs=1e-14, epsrel=1e-12)
        assert gaussian_delta(s, eps, d) == pytest.approx(ref, rel=1e-7)
        # dp_accounting inverts the same curve.
        assert dp_accounting.get_epsilon_gaussian(s / d, ref) == pytest.approx(eps, rel=1e-6)


def test_gaussian_delta_vectorised_and_tiny():
    eps = np.linspace(0.0, 30.0, 61)
    d = gaussian_delta(0.3, eps)
    assert d.shape == eps.shape and np.all(d > 0) and np.all(np.diff(d) < 0)
    # Element-wise equal to scalar calls, and bounded by the first term of the curve.
    np.testing.assert_array_equal(d, [gaussian_delta(0.3, e) for e in eps])
    assert np.all(d <= stats.norm.cdf(1 / 0.6 - eps * 0.3))


def test_gaussian_delta_tiny_values_against_mpmath():
    # Relative accuracy where delta is ~1e-140..1e-200 (far below double-precision
    # cancellation of the two terms), against 80-digit arithmetic.
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 80
    for s, eps in [(1.0, 30.0), (3.0, 10.0), (5.0, 5.0), (10.0, 3.0), (0.3, 30.0)]:
        S, E = mpmath.mpf(s), mpmath.mpf(eps)
        ref = mpmath.ncdf(1 / (2 * S) - E * S) - mpmath.exp(E) * mpmath.ncdf(-1 / (2 * S) - E * S)
        assert gaussian_delta(s, eps) == pytest.approx(float(ref), rel=1e-9)


def test_gaussian_distribution():
    # Releases ~ N(value, sigma^2); KS false-failure rate ALPHA.
    m = GaussianMechanism(epsilon=1.0, delta=1e-5, query=np.mean)
    x = draw(m, np.array([0.0, 1.0, 1.0, 2.0]), 20_000, seed=3)
    assert stats.kstest(x, stats.norm(loc=1.0, scale=m.sigma).cdf).pvalue > ALPHA


# --------------------------------------------------------------------------- randomized response


def test_randomized_response_law():
    # eps = ln 3, k = 3: keep with e^eps/(e^eps + k - 1) = 3/5, each other value 1/5.
    m = RandomizedResponse(epsilon=math.log(3), k=3)
    np.testing.assert_allclose(m.probabilities(1), [0.2, 0.6, 0.2], rtol=1e-12)
    x = draw(m, 1, 30_000, seed=4)
    assert x.dtype.kind == "i"
    # chi-square GOF, false-failure rate ALPHA
    assert chisq_gof(np.bincount(x, minlength=3), [0.2, 0.6, 0.2]) > ALPHA
    # Exact epsilon-DP: every output's probability ratio between inputs <= e^eps = 3, with equality.
    P = np.array([m.probabilities(v) for v in range(3)])
    ratios = P[:, None, :] / P[None, :, :]
    assert ratios.max() == pytest.approx(3.0, rel=1e-12)


def test_randomized_response_dp_event_matches_definition():
    # dp_accounting: uniform over all k with prob p, so P(keep) = 1 - p + p/k.
    # p = k/(e^eps + k - 1) = 3/5 for eps = ln 3, k = 3: 1 - 3/5 + 1/5 = 3/5. OK.
    m = RandomizedResponse(epsilon=math.log(3), k=3)
    ev = m.dp_event()
    assert ev.num_buckets == 3 and ev.noise_parameter == pytest.approx(0.6, rel=1e-12)
    acc = pld_privacy_accountant.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE)
    acc.compose(ev)
    assert acc.get_epsilon(1e-9) == pytest.approx(math.log(3), abs=1e-3)


def test_randomized_response_query_and_bad_values():
    m = RandomizedResponse(epsilon=1.0, k=4, query=lambda d: int(d[0]))
    assert m(np.array([3, 0]), np.random.default_rng(0)) in range(4)
    with pytest.raises(ValueError, match=r"query\(data\).*\[0, 3\]"):
        m(np.array([4]), np.random.default_rng(0))
    with pytest.raises(TypeError, match=r"query\(data\)"):
        RandomizedResponse(1.0)(0.5, np.random.default_rng(0))


# --------------------------------------------------------------------------- geometric


def test_geometric_law():
    # P(Z=z) = (1-a)/(1+a) a^|z|, a = exp(-eps/D); with eps = 1, D = 2 the
    # discrete Laplace parameter is eps/D = 0.5, and (1-a)/(1+a) = tanh(0.25), which is
    # scipy.stats.dlaplace(0.5).  Query value 7. Chi-square GOF, false-failure ALPHA.
    m = GeometricMechanism(epsilon=1.0, sensitivity=2)
    assert m.alpha == pytest.approx(math.exp(-0.5))
    x = draw(m, 7, 40_000, seed=5) - 7
    assert x.dtype.kind == "i"
    z = np.arange(-30, 31)
    counts = np.array([np.sum(x == v) for v in z])
    probs = stats.dlaplace(0.5).pmf(z)
    tail = 1 - probs.sum()
    counts = np.append(counts, np.sum(np.abs(x) > 30))
    probs = np.append(probs, tail)
    assert chisq_gof(counts, probs) > ALPHA
    # Power: the continuous-scale bug (parameter eps instead of eps/D) is rejected.
    wrong = stats.dlaplace(1.0).pmf(z)
    assert chisq_gof(counts, np.append(wrong, 1 - wrong.sum())) < ALPHA


def test_geometric_dp_event_and_integer_check():
    m = GeometricMechanism(epsilon=1.0, sensitivity=2)
    ev = m.dp_event()
    assert (ev.noise_parameter, ev.sensitivity) == (0.5, 2)
    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(ev)
    assert acc.get_epsilon(1e-9) == pytest.approx(1.0, abs=1e-3)
    with pytest.raises(ValueError, match="integer"):
        m(1.5, np.random.default_rng(0))


# --------------------------------------------------------------------------- exponential mechanism


def test_exponential_log_probabilities_by_hand():
    # eps = 2 ln 2, D = 1: weight exp(eps s/2) = 2^s; scores (0, 1, 2) -> (1, 2, 4)/7.
    lp = exponential_mechanism_log_probabilities([0.0, 1.0, 2.0], 2 * math.log(2))
    np.testing.assert_allclose(np.exp(lp), np.array([1, 2, 4]) / 7, rtol=1e-12)
    # Sensitivity D = 2 halves the exponent: weights 2^(s/2) -> (1, sqrt2, 2)/(3+sqrt2).
    lp2 = ExponentialMechanism(2 * math.log(2), sensitivity=2.0).log_probabilities([0, 1, 2])
    np.testing.assert_allclose(np.exp(lp2), np.array([1, math.sqrt(2), 2]) / (3 + math.sqrt(2)), rtol=1e-12)
    # -inf excludes a candidate.
    lp3 = exponential_mechanism_log_probabilities([0.0, -np.inf, 2.0], 2 * math.log(2))
    np.testing.assert_allclose(np.exp(lp3), [1 / 5, 0, 4 / 5], rtol=1e-12)


@pytest.mark.parametrize("sens, law, wrong", [
    # D = 1: weights 2^s -> (1, 2, 4)/7; the wrong exponent exp(eps s) (missing the 1/2) has law (1, 4, 16)/21.
    (1.0, np.array([1, 2, 4]) / 7, np.array([1, 4, 16]) / 21),
    # D = 2: weights 2^(s/2) -> (1, sqrt2, 2)/(3 + sqrt2); a sampler that drops D draws 2^s, (1, 2, 4)/7.
    (2.0, np.array([1, math.sqrt(2), 2]) / (3 + math.sqrt(2)), np.array([1, 2, 4]) / 7),
], ids=["sensitivity-1", "sensitivity-2"])
def test_exponential_sampling_frequencies(sens, law, wrong):
    # Same law as above; chi-square GOF of 30,000 Gumbel-max draws, false-failure ALPHA per case.
    m = ExponentialMechanism(epsilon=2 * math.log(2), sensitivity=sens, score=lambda d: np.asarray(d, float))
    x = draw(m, [0, 1, 2], 30_000, seed=6)
    assert chisq_gof(np.bincount(x, minlength=3), law) > ALPHA
    # Power: the wrong law is rejected at this sample size.
    assert chisq_gof(np.bincount(x, minlength=3), wrong) < ALPHA


def test_exponential_mechanism_is_exactly_epsilon_dp():
    # Enumerate base score vectors in {0, 5, 10}^3 and neighbours that move each
    # score by -D, 0 or +D (D = 1.5). The max |log P[h] - log P'[h]| must be <= eps.
    # Lower bound (tightness): base (0, 10, 10), neighbour (+D, -D, -D), h = 0:
    # log ratio = eps/2 + log((1 + 2e^{10 eps/(2D)}) / (e^{eps/2} + 2 e^{(10-D) eps/(2D)}))
    # -> eps as the others dominate; with eps = 2 it is 2 - 1.5e-4 > eps - 1e-3.
    eps, D = 2.0, 1.5
    grid = [0.0, 5.0, 10.0]
    worst = 0.0
    for base in np.array(np.meshgrid(grid, grid, grid)).reshape(3, -1).T:
        lp = exponential_mechanism_log_probabilities(base, eps, D)
        for shift in np.array(np.meshgrid([-D, 0, D], [-D, 0, D], [-D, 0, D])).reshape(3, -1).T:
            lq = exponential_mechanism_log_probabilities(base + shift, eps, D)
            worst = max(worst, np.max(np.abs(lp - lq)))
    assert worst <= eps + 1e-12
    assert worst > eps - 1e-3


def test_exponential_mechanism_sign_erratum():
    # Winnow paper Lemma 3 prints exp(-eps q/2) for a maximised q (erratum). With
    # DP-GreedyCover's q = -#errors the correct mechanism favours the fewest errors.
    errors = np.array([0, 3, 7, 1])
    lp = exponential_mechanism_log_probabilities(-errors, 1.0)
    assert np.argmax(lp) == 0 and np.argmin(lp) == 2
    literal = -1.0 * (-errors) / 2  # the paper's literal exponent
    assert np.argmax(literal) == 2  # the literal sign would pick the worst term


@settings(max_examples=100, deadline=None, derandomize=True)
@given(
    scores=st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=12),
    eps=st.floats(0.01, 10.0),
    sens=st.floats(0.1, 5.0),
    shift=st.floats(-1e3, 1e3),
)
def test_exponential_log_probabilities_properties(scores, eps, sens, shift):
    lp = exponential_mechanism_log_probabilities(scores, eps, sens)
    assert special.logsumexp(lp) == pytest.approx(0.0, abs=1e-9)
    lp_shift = exponential_mechanism_log_probabilities(np.asarray(scores) + shift, eps, sens)
    # Shift invariance. Logits are at most (10/0.2) * 2000 = 1e5 in magnitude, whose
    # float spacing is 1.5e-11, so a handful of roundings stays far below 1e-8.
    np.testing.assert_allclose(lp_shift, lp, rtol=0, atol=1e-8)
    # The defining ratio: log P[i] - log P[j] = eps (s_i - s_j) / (2 sens) exactly.
    s = np.asarray(scores)
    i, j = int(np.argmax(s)), int(np.argmin(s))
    assert lp[i] - lp[j] == pytest.approx(eps * (s[i] - s[j]) / (2 * sens), abs=1e-8)
    assert np.all(lp <= 0.0)


def test_exponential_utility_bound_hand_value_and_exact_tail():
    # (2/eps)(ln|H| + tau) with |H| = 100, eps = 1, tau = ln 20: 2 ln 2000 = 15.201805.
    b = exponential_mechanism_utility_bound(100, 1.0, math.log(20))
    assert b == pytest.approx(15.201805, rel=1e-7)
    # Exact tail mass (no sampling): the probability of a score
    # below max - bound is <= e^-tau, also for the worst arrangement where every other
    # candidate sits just below the cut.
    rng = np.random.default_rng(7)
    for n, eps, tau in [(100, 1.0, math.log(20)), (5, 0.3, 1.0), (1000, 2.0, 0.1)]:
        bound = exponential_mechanism_utility_bound(n, eps, tau)
        worst = np.concatenate([[0.0], np.full(n - 1, -bound - 1e-9)])
        for s in [worst, rng.uniform(-3 * bound, 0, n)]:
            lp = exponential_mechanism_log_probabilities(s, eps)
            tail = np.exp(lp[s < s.max() - bound]).sum()
            assert tail <= math.exp(-tau)


# --------------------------------------------------------------------------- report noisy max


def test_report_noisy_max_laplace_probabilities_by_hand():
    # For X0, X1 iid Laplace(b), Z = X0 - X1 has density (1/(4b))(1 + |z|/b) e^{-|z|/b},
    # so P(Z > t) = (1/2) e^{-t/b} (1 + t/(2b)) for t >= 0. Scores (0, 1): index 0 wins
    # iff X0 - X1 > 1.
    # General (b = 2D/eps = 2): P0 = 0.5 e^{-1/2} (1.25) = 0.3790817.
    # Monotone (b = D/eps = 1): P0 = 0.5 e^{-1} (1.5)    = 0.2759096.
    for monotone, p0 in [(False, 0.3790817), (True, 0.2759096)]:
        m = ReportNoisyMax(epsilon=1.0, monotone=monotone)
        assert np.exp(m.log_probabilities([0.0, 1.0])) == pytest.approx([p0, 1 - p0], abs=1e-7)
        x = draw(m, np.array([0.0, 1.0]), 20_000, seed=8 + monotone)
        assert chisq_gof(np.bincount(x, minlength=2), [p0, 1 - p0]) > ALPHA  # false-failure ALPHA


def test_report_noisy_max_laplace_probabilities_match_adaptive_quadrature():
    # Independent route: scipy.integrate.quad of f(x - s_h) prod_{j != h} F(x - s_j).
    for monotone, scores in [(False, [0.0, 1.0, -1.0]), (True, [3.0, 0.0, 1.0, 2.0, 5.0])]:
        m = ReportNoisyMax(epsilon=0.8, sensitivity=1.5, monotone=monotone)
        s, b = np.array(scores), m.scale
        ref = [integrate.quad(lambda x: stats.laplace.pdf(x - s[h], scale=b)
                              * np.prod(stats.laplace.cdf(x - np.delete(s, h), scale=b)),
                              -np.inf, np.inf, limit=500, epsabs=1e-14, epsrel=1e-12)[0]
               for h in range(s.size)]
        np.testing.assert_allclose(np.exp(m.log_probabilities(s)), ref, rtol=1e-8, atol=1e-12)


def test_report_noisy_max_gumbel_is_the_exponential_mechanism():
    scores = np.array([0.0, 1.0, 2.5, -1.0])
    m = ReportNoisyMax(epsilon=1.3, sensitivity=0.5, noise="gumbel")
    np.testing.assert_allclose(m.log_probabilities(scores),
                               exponential_mechanism_log_probabilities(scores, 1.3, 0.5), rtol=1e-12)
    p = np.exp(exponential_mechanism_log_probabilities(scores, 1.3, 0.5))
    x = draw(m, scores, 30_000, seed=10)
    assert chisq_gof(np.bincount(x, minlength=4), p) > ALPHA  # false-failure ALPHA


def _max_log_ratio(mech, bases, shifts):
    cache = {}

    def lp(v):
        key = tuple(np.round(v, 12))
        if key not in cache:
            cache[key] = mech.log_probabilities(np.asarray(v, float))
        return cache[key]

    worst = 0.0
    for base in bases:
        for sh in shifts:
            worst = max(worst, np.max(np.abs(lp(base) - lp(base + sh))))
    return worst


def test_report_noisy_max_laplace_is_epsilon_dp_by_quadrature():
    eps = 1.0
    bases = np.array(np.meshgrid([0, 1], [0, 1], [0, 1])).reshape(3, -1).T.astype(float)
    general = np.array(np.meshgrid([-1, 0, 1], [-1, 0, 1], [-1, 0, 1])).reshape(3, -1).T.astype(float)
    up = np.array(np.meshgrid([0, 1], [0, 1], [0, 1])).reshape(3, -1).T.astype(float)
    monotone = np.concatenate([up, -up])
    # quad tolerance 1e-11 relative, so 1e-6 slack on log ratios is ample.
    assert _max_log_ratio(ReportNoisyMax(eps), bases, general) <= eps + 1e-6
    assert _max_log_ratio(ReportNoisyMax(eps, monotone=True), bases, monotone) <= eps + 1e-6
    # Negative control: the monotone scale D/eps on general neighbours breaks eps-DP.
    # Scores (0,0) -> (1,-1) with b = 1: P1 goes from 1/2 to 0.5 e^{-2}(1 + 1) = e^{-2},
    # a log ratio of ln(e^2/2) = 1.307 > 1.
    assert _max_log_ratio(ReportNoisyMax(eps, monotone=True), bases, general) > eps + 0.2


# --------------------------------------------------------------------------- sparse vector


def _svt_firing_probabilities(q, L, eps, thr_scale=None, q_scale=None):
    """P(first TRUE at query k), k = 1..T, and P(never), by 1-D quadrature over L_hat.

    P(k) = int p(L_hat) prod_{i<k} F_i(L_hat) (1 - F_k(L_hat)) dL_hat with
    F_i(l) = P(q_i + nu < l) (notes, check S2).
    """
    thr_scale = 2 / eps if thr_scale is None else thr_scale
    q_scale = 4 / eps if q_scale is None else q_scale
    q = np.asarray(q, float)

    def lap_cdf(z):  # standard Laplace CDF
        return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0.0)), 1 - 0.5 * np.exp(-np.maximum(z, 0.0)))

    def f(l):  # l: (n,) points -> (n, T+1)
        F = lap_cdf((l[:, None] - q[None, :]) / q_scale)     # P(q_i + nu_i < l)
        ones = np.ones((l.size, 1))
        below = np.concatenate([ones, np.cumprod(F, axis=1)], axis=1)  # prod_{i<k} F_i
        fire = np.concatenate([1 - F, ones], axis=1)                   # 1 - F_k (never: 1)
        dens = np.exp(-np.abs(l - L) / thr_scale) / (2 * thr_scale)
        return dens[:, None] * below * fire

    # Gauss-Legendre (64 nodes) between the kinks (L and the q_i) and on tail pieces
    # growing geometrically to 80 scales, where the remaining mass is < e^-80.
    kinks = np.concatenate([[L], q])
    tails = max(thr_scale, q_scale) * np.array([0.25, 0.5, 1, 2, 4, 8, 16, 32, 80])
    edges = np.unique(np.concatenate([kinks, (kinks[:, None] + tails).ravel(), (kinks[:, None] - tails).ravel()]))
    nodes, weights = np.polynomial.legendre.leggauss(64)
    half = np.diff(edges) / 2
    mid = (edges[:-1] + edges[1:]) / 2
    x = (mid[:, None] + half[:, None] * nodes).ravel()
    w = (half[:, None] * weights).ravel()
    return (w[:, None] * f(x)).sum(axis=0)


def _run_above_threshold(q, L, eps, beta, rng):
    a = InitializeAboveThr(eps, L, beta, rng)
    for k, v in enumerate(q):
        a.AddQuery(v)
        if a.TestAboveThr():
            assert a.halted
            return k
    assert not a.halted
    return len(q)


def test_above_threshold_firing_distribution():
    # Firing time (0-based query index, len(q) = never) vs the exact law by
    # quadrature; chi-square GOF, false-failure ALPHA for each of the two checks.
    q, L, eps = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], 3.0, 1.0
    p = _svt_firing_probabilities(q, L, eps)
    assert p.sum() == pytest.approx(1.0, abs=1e-8)
    rng = np.random.default_rng(11)
    k = np.array([_run_above_threshold(q, L, eps, 0.1, rng) for _ in range(6_000)])
    assert chisq_gof(np.bincount(k, minlength=len(q) + 1), p) > ALPHA
    # The batch SparseVector with cutoff=1 has the same law (Lap(2/eps), Lap(4/eps)).
    sv = SparseVector(epsilon=eps, threshold=L, cutoff=1)
    out = draw(sv, np.array(q), 30_000, seed=12)
    first = np.where((out == 1).any(axis=1), np.argmax(out == 1, axis=1), len(q))
    assert chisq_gof(np.bincount(first, minlength=len(q) + 1), p) > ALPHA


def test_above_threshold_is_epsilon_dp_exactly():
    # Exact firing-time law (quadrature, notes check S2) on q and on every neighbour
    # q + d, d in {-1,0,1}^T: the max |log P(k) - log P'(k)| over outcomes must be <= eps.
    eps = 1.0

    def worst(q, L, **kw):
        q = np.asarray(q, float)
        p = _svt_firing_probabilities(q, L, eps, **kw)
        assert p.sum() == pytest.approx(1.0, abs=1e-10)
        shifts = np.array(list(itertools.product([-1, 0, 1], repeat=len(q))), float)
        return max(np.max(np.abs(np.log(p) - np.log(_svt_firing_probabilities(q + d, L, eps, **kw))))
                   for d in shifts)

    assert worst([0.0, 1.0, 2.0], 1.0) <= eps + 1e-9
    assert worst([0.0, 0.0, 0.0, 0.0], 0.0) <= eps + 1e-9
    # Negative control (power of this check): query noise Lap(2/eps) instead of
    # Lap(4/eps), the classic bug for non-monotone queries, exceeds eps on the
    # constant sequence (log ratio 1.33 by the same quadrature).
    assert worst([0.0, 0.0, 0.0, 0.0], 0.0, q_scale=2 / eps) > eps + 0.2


def test_above_threshold_lemma10_accuracy():
    # Lemma 10 [RECON]: with alpha = 8 ln(2T/beta)/eps, w.p. >= 1 - beta
    # (1) every query before the firing one is <= L + alpha, (2) the firing query is
    # >= L - alpha (or it never fires). Adversarial sequences: plateaus just outside
    # [L - alpha, L + alpha] and a ramp through it. One-sided binomial test of
    # H0: violation rate <= beta, false-failure rate ALPHA per sequence.
    eps, L, beta, T = 1.0, 0.0, 0.2, 30
    alpha = above_threshold_alpha(eps, T, beta)
    assert alpha == pytest.approx(8 * math.log(300), rel=1e-12)  # 8 ln(2*30/0.2) = 45.6304
    assert AboveThreshold(eps, L, beta, np.random.default_rng(0)).accuracy_alpha(T) == alpha
    seqs = {
        "below": np.full(T, L - alpha - 1e-6),
        "above": np.full(T, L + alpha + 1e-6),
        "ramp": np.linspace(L - 2 * alpha, L + 2 * alpha, T),
    }
    rng = np.random.default_rng(13)
    for name, q in seqs.items():
        n, bad = 1_500, 0
        for _ in range(n):
            k = _run_above_threshold(q, L, eps, beta, rng)
            viol1 = np.any(q[:k] > L + alpha)
            viol2 = k < T and q[k] < L - alpha
            bad += bool(viol1 or viol2)
        assert stats.binomtest(bad, n, beta, alternative="greater").pvalue > ALPHA, name


def test_above_threshold_interface_and_halting():
    rng = np.random.default_rng(14)
    a = AboveThreshold(epsilon=1.0, threshold=0.0, beta=0.1, rng=rng)
    with pytest.raises(RuntimeError, match="before any add_query"):
        a.test_above_threshold()
    a.add_query(1e9)  # fires with probability 1 - (negligible)
    assert a.test_above_threshold() is True and a.halted and a.n_queries == 1
    assert a.test_above_threshold() is True  # asking again is free and consistent
    with pytest.raises(RuntimeError, match="halted"):
        a.add_query(0.0)
    b = AboveThreshold(1.0, 0.0, 0.1, np.random.default_rng(15))
    b.AddQuery(-1e9)
    assert b.TestAboveThr() is False and not b.halted
    g = a.guarantee
    assert (g.epsilon, g.delta) == (1.0, 0.0)
    assert isinstance(a.dp_event(), dp_accounting.UnsupportedDpEvent)


def test_sparse_vector_cutoff_structure_and_scales():
    sv = SparseVector(epsilon=2.0, threshold=0.0, cutoff=3, sensitivity=0.5)
    # eps1 = eps2 = 1: threshold scale D/eps1 = 0.5, query scale 2 c D/eps2 = 3.
    assert sv.threshold_scale == 0.5 and sv.query_scale == 3.0
    assert SparseVector(2.0, 0.0, cutoff=3, sensitivity=0.5, monotone=True).query_scale == 1.5
    q = np.array([0.0, 5.0, -5.0, 10.0, 0.0, 2.0, 8.0, 1.0])
    out = draw(sv, q, 5_000, seed=16)
    assert out.dtype == np.int8 and out.shape == (5_000, 8)
    ones = (out == 1).sum(axis=1)
    assert ones.max() <= 3
    for row in out:
        stopped = np.flatnonzero(row == -1)
        if stopped.size:  # -1 only after the cutoff-th 1, and then everywhere after
            assert (row[: stopped[0]] == 1).sum() == 3 and np.all(row[stopped[0]:] == -1)
        else:
            assert (row == 1).sum() <= 3


def test_sparse_vector_single_query_probability():
    # cutoff=2, one query q = 1 vs threshold 0, eps = 1: rho ~ Lap(2), nu ~ Lap(2*2*1/0.5 = 8).
    # P(1) = P(nu - rho >= -1) = int p_rho(r) P(nu >= r - 1) dr (quadrature).
    sv = SparseVector(epsilon=1.0, threshold=0.0, cutoff=2)
    p1, _ = integrate.quad(lambda r: stats.laplace.pdf(r, scale=2) * stats.laplace.sf(r - 1, scale=8),
                           -200, 200, points=[0, 1], limit=200)
    out = draw(sv, np.array([1.0]), 20_000, seed=17)[:, 0]
    assert set(np.unique(out)) <= {0, 1}
    assert chisq_gof([np.sum(out == 0), np.sum(out == 1)], [1 - p1, p1]) > ALPHA  # false-failure ALPHA


# --------------------------------------------------------------------------- Poisson subsampling


def test_poisson_subsample_keeps_rows_with_rate():
    data = np.arange(100).reshape(50, 2)
    rng = np.random.default_rng(18)
    kept = [poisson_subsample(data, 0.3, rng) for _ in range(2_000)]
    assert all(k.ndim == 2 and k.shape[1] == 2 and np.all(k[:, 1] == k[:, 0] + 1) for k in kept)
    total = sum(k.shape[0] for k in kept)
    # total ~ Binomial(2000*50, 0.3); two-sided binomial test, false-failure ALPHA.
    assert stats.binomtest(total, 100_000, 0.3).pvalue > ALPHA
    # Each row kept independently: per-row counts ~ Binomial(2000, 0.3); chi-square of
    # the 50 row counts (rows 0..49 as cells) against equal probabilities.
    counts = np.bincount(np.concatenate([k[:, 0] // 2 for k in kept]), minlength=50)
    assert chisq_gof(counts, np.full(50, 1 / 50)) > ALPHA
    assert poisson_subsample(data, 1.0, rng).shape == data.shape


def _binom_laplace_cdf(x, n, rate, scale):
    j = np.arange(n + 1)
    w = stats.binom.pmf(j, n, rate)
    return np.sum(w[None, :] * stats.laplace.cdf(np.asarray(x)[:, None] - j[None, :], scale=scale), axis=1)


def _poisson_sum_laplace_cdf(x, values, rate, scale):
    """CDF of (sum of the kept values) + Laplace(scale), each value kept with probability ``rate``: the law of
    the subsampled sum by exact enumeration of the 2^n subsets (small n)."""
    values = np.asarray(values, float)
    n = values.size
    keep = ((np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1).astype(bool)
    sums = keep @ values
    w = rate ** keep.sum(axis=1) * (1 - rate) ** (n - keep.sum(axis=1))
    return np.sum(w[None, :] * stats.laplace.cdf(np.asarray(x)[:, None] - sums[None, :], scale=scale), axis=1)


@pytest.mark.parametrize("query", [np.sum, lambda d: float(np.sum(d))], ids=["fast-sum", "generic"])
@pytest.mark.parametrize("data, sens", [(np.ones(20), 1.0), (np.array([0.0, 3.0, 0.5, 2.0, 5.0, 1.5, 4.0, 0.0]), 5.0)],
                         ids=["ones", "values-sensitivity-5"])
def test_poisson_subsampled_laplace_law(query, data, sens):
    # Output = (sum of a Poisson(0.5) subsample) + Laplace(sens / 1). Ones: Binomial(20, 0.5) + Laplace(1), a
    # 21-term mixture. Values other than 1 and sensitivity 5: the mixture over the 2^8 subsets (enumerated), where
    # a count of kept rows or a noise scale without the sensitivity has another law.
    # KS (batched path and __call__ path), false-failure ALPHA each.
    m = PoissonSubsampled(LaplaceMechanism(1.0, sensitivity=sens, query=query), rate=0.5)
    if sens == 1.0:
        cdf = lambda x: _binom_laplace_cdf(x, data.size, 0.5, 1.0)  # noqa: E731
    else:
        cdf = lambda x: _poisson_sum_laplace_cdf(x, data, 0.5, sens)  # noqa: E731
    assert stats.kstest(draw(m, data, 8_000, seed=19), cdf).pvalue > ALPHA
    assert stats.kstest(draw_calls(m, data, 2_000, seed=20), cdf).pvalue > ALPHA


def test_poisson_subsampled_guarantee_and_event():
    # eps' = ln(1 + 0.1 (e - 1)) = ln(1.1718282) = 0.1585651; delta' = 0.1 * 1e-5.
    m = PoissonSubsampled(LaplaceMechanism(1.0, query=np.sum), rate=0.1)
    g = m.guarantee
    assert g.epsilon == pytest.approx(0.1585651, rel=1e-6) and g.delta == 0.0
    assert g.neighbouring is NeighbouringRelation.ADD_OR_REMOVE_ONE
    ev = m.dp_event()
    assert ev == dp_accounting.PoissonSampledDpEvent(0.1, dp_accounting.LaplaceDpEvent(1.0))
    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(ev)
    assert acc.get_epsilon(1e-9) <= g.epsilon + 1e-3  # the PLD claim is at least as tight
    gm = PoissonSubsampled(GaussianMechanism(0.5, 1e-5), rate=0.1).guarantee
    assert gm.delta == pytest.approx(1e-6, rel=1e-12)
    assert gm.epsilon == pytest.approx(math.log(1 + 0.1 * (math.exp(0.5) - 1)), rel=1e-12)


# --------------------------------------------------------------------------- batched == single


BATCH_CASES = [
    ("laplace", LaplaceMechanism(1.0, query=np.sum), np.array([1, 0, 1]), "cont"),
    ("gaussian", GaussianMechanism(1.0, 1e-5, calibration="analytic"), 2.0, "cont"),
    ("rr", RandomizedResponse(1.0, k=4), 2, "disc"),
    ("geometric", GeometricMechanism(0.7, 1), 3, "disc"),
    ("exponential", ExponentialMechanism(1.0), np.array([0.0, 1.0, 3.0, 2.0]), "disc"),
    ("rnm-laplace", ReportNoisyMax(1.0), np.array([0.0, 1.0, 3.0, 2.0]), "disc"),
    ("rnm-gumbel", ReportNoisyMax(1.0, noise="gumbel", monotone=True), np.array([0.0, 1.0, 2.0]), "disc"),
    ("svt", SparseVector(1.0, threshold=2.0, cutoff=2), np.array([0.0, 3.0, 1.0, 4.0]), "rows"),
    ("poisson", PoissonSubsampled(GeometricMechanism(1.0, query=np.sum), 0.3), np.ones(10, int), "disc"),
    # Rows of several values, none of them 1, and sensitivity 2: the fast path's sum over each subsample
    # (a matrix product) differs from a count of the kept rows or a sum of their first column.
    ("poisson-rows", PoissonSubsampled(GeometricMechanism(1.0, sensitivity=2, query=np.sum), 0.3),
     np.array([[2, 0], [0, 3], [1, 1], [4, 2], [0, 0], [3, 5]]), "disc"),
]


@pytest.mark.parametrize("name, mech, data, kind", BATCH_CASES, ids=[c[0] for c in BATCH_CASES])
def test_sample_matches_call_in_distribution(name, mech, data, kind):
    # Two-sample test (KS for continuous, chi-square homogeneity for discrete), 3,000
    # single calls vs 6,000 batched draws on independent seeds; false-failure ALPHA each.
    single = draw_calls(mech, data, 3_000, seed=21)
    batch = draw(mech, data, 6_000, seed=22)
    assert single.shape[1:] == batch.shape[1:]
    if kind == "cont":
        p = stats.ks_2samp(single, batch).pvalue
    elif kind == "rows":
        p = two_sample_discrete(row_ids(single), row_ids(batch))
    else:
        p = two_sample_discrete(single, batch)
    assert p > ALPHA


def test_same_seed_same_output():
    m = LaplaceMechanism(1.0)
    a = m.sample(0.0, np.random.default_rng(5), 10)
    b = m.sample(0.0, np.random.default_rng(5), 10)
    np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------- validation


RNG = np.random.default_rng(0)

BAD_INPUTS = [
    (lambda: LaplaceMechanism(0.0), ValueError, "epsilon"),
    (lambda: LaplaceMechanism(-1.0), ValueError, "epsilon"),
    (lambda: LaplaceMechanism(float("nan")), ValueError, "epsilon"),
    (lambda: LaplaceMechanism(float("inf")), ValueError, "epsilon"),
    (lambda: LaplaceMechanism("1"), TypeError, "epsilon"),
    (lambda: LaplaceMechanism(1.0, sensitivity=0.0), ValueError, "sensitivity"),
    (lambda: LaplaceMechanism(1.0, query=3), TypeError, "query"),
    (lambda: GaussianMechanism(0.0, 1e-5), ValueError, "epsilon"),
    (lambda: GaussianMechanism(0.5, -0.1), ValueError, "delta"),
    (lambda: GaussianMechanism(0.5, 1.0), ValueError, "delta"),
    (lambda: GaussianMechanism(0.5, 0.0), ValueError, "delta"),
    (lambda: GaussianMechanism(0.5, 1e-5, calibration="exact"), ValueError, "calibration"),
    (lambda: GaussianMechanism(2.0, 1e-5, calibration="classic"), ValueError, "epsilon"),
    (lambda: RandomizedResponse(0.0), ValueError, "epsilon"),
    (lambda: RandomizedResponse(1.0, k=1), ValueError, "k"),
    (lambda: RandomizedResponse(1.0, k=2.5), TypeError, "k"),
    (lambda: GeometricMechanism(float("inf")), ValueError, "epsilon"),
    (lambda: GeometricMechanism(1.0, sensitivity=1.5), TypeError, "sensitivity"),
    (lambda: GeometricMechanism(1.0, sensitivity=0), ValueError, "sensitivity"),
    (lambda: ExponentialMechanism(-0.5), ValueError, "epsilon"),
    (lambda: ExponentialMechanism(1.0, sensitivity=-1.0), ValueError, "sensitivity"),
    (lambda: ExponentialMechanism(1.0, score="x"), TypeError, "score"),
    (lambda: ReportNoisyMax(0.0), ValueError, "epsilon"),
    (lambda: ReportNoisyMax(1.0, noise="gaussian"), ValueError, "noise"),
    (lambda: ReportNoisyMax(1.0, monotone="yes"), TypeError, "monotone"),
    (lambda: AboveThreshold(0.0, 1.0, 0.1, RNG), ValueError, "epsilon"),
    (lambda: AboveThreshold(1.0, float("nan"), 0.1, RNG), ValueError, "threshold"),
    (lambda: AboveThreshold(1.0, 1.0, 0.0, RNG), ValueError, "beta"),
    (lambda: AboveThreshold(1.0, 1.0, 1.0, RNG), ValueError, "beta"),
    (lambda: AboveThreshold(1.0, 1.0, 0.1, np.random.RandomState(0)), TypeError, "rng"),
    (lambda: InitializeAboveThr(1.0, 1.0, 0.1, 42), TypeError, "rng"),
    (lambda: SparseVector(0.0, 1.0), ValueError, "epsilon"),
    (lambda: SparseVector(1.0, 1.0, cutoff=0), ValueError, "cutoff"),
    (lambda: SparseVector(1.0, float("inf")), ValueError, "threshold"),
    (lambda: PoissonSubsampled(LaplaceMechanism(1.0), 0.0), ValueError, "rate"),
    (lambda: PoissonSubsampled(LaplaceMechanism(1.0), 1.5), ValueError, "rate"),
    (lambda: PoissonSubsampled(lambda d, r: 0.0, 0.5), TypeError, "mechanism"),
    (lambda: poisson_subsample(np.ones(3), -0.1, RNG), ValueError, "rate"),
    (lambda: poisson_subsample(np.ones(3), 0.5, None), TypeError, "rng"),
    (lambda: LaplaceMechanism(1.0)(0.0, None), TypeError, "rng"),
    (lambda: LaplaceMechanism(1.0).sample(0.0, np.random.RandomState(0), 3), TypeError, "rng"),
    (lambda: LaplaceMechanism(1.0).sample(0.0, RNG, 0), ValueError, "size"),
    (lambda: LaplaceMechanism(1.0)(float("nan"), RNG), ValueError, "query"),
    (lambda: ExponentialMechanism(1.0)(np.ones((2, 2)), RNG), ValueError, "score"),
    (lambda: gaussian_delta(0.0, 1.0), ValueError, "sigma"),
    (lambda: gaussian_delta(1.0, -1.0), ValueError, "epsilon"),
    (lambda: exponential_mechanism_log_probabilities([1.0, np.nan], 1.0), ValueError, "scores"),
    (lambda: exponential_mechanism_utility_bound(0, 1.0, 1.0), ValueError, "n_candidates"),
    (lambda: exponential_mechanism_utility_bound(3, 1.0, 0.0), ValueError, "tau"),
    (lambda: above_threshold_alpha(1.0, 0, 0.1), ValueError, "k"),
    (lambda: PrivacyGuarantee(1.0, 1.0, "x", "y"), ValueError, "delta"),
]


@pytest.mark.parametrize("make, exc, name", BAD_INPUTS, ids=[f"{i}-{b[2]}" for i, b in enumerate(BAD_INPUTS)])
def test_bad_input_names_the_argument(make, exc, name):
    with pytest.raises(exc, match=name):
        make()


def test_mechanisms_are_frozen():
    m = LaplaceMechanism(1.0)
    with pytest.raises(Exception):
        m.epsilon = 2.0
