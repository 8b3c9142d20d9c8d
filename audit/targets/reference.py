"""Reference targets: the DP primitives of :mod:`privbound.learners.mechanisms` and planted bugs.

The correct targets cite the theorem each claim rests on. Each planted bug is a small,
deliberate deviation from a correct primitive of the kinds found in real code (Lyu, Su &
Li 2017 for the sparse-vector variants; Ding et al. 2018 for report-noisy-max releasing
its value), registered at the budget the correct primitive claims; the auditor must flag
every one of them at its target's default trials.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privbound.audit.targets.registry import Target, register_target
from privbound.learners import mechanisms as M
from privbound.learners.mechanisms import (
    ExponentialMechanism,
    GeometricMechanism,
    LaplaceMechanism,
    PoissonSubsampled,
    RandomizedResponse,
    ReportNoisyMax,
    SparseVector,
)
from privbound.learners.neighbouring import NeighbouringRelation as NR

__all__ = [
    "LaplaceInvertedScale",
    "GeometricInvertedScale",
    "RandomizedResponseDoubledEpsilon",
    "ExponentialMechanismNoHalf",
    "PoissonSubsampledIgnoringRate",
    "ReportNoisyMaxWithValue",
    "SparseVectorCutoffBlindNoise",
    "SparseVectorNoThresholdNoise",
    "SparseVectorNoCutoff",
    "Float32SumLaplace",
    "UnclampedSum",
    "REFERENCE_TARGETS",
]


# ------------------------------------------------------------------ planted bugs


@dataclass(frozen=True)
class LaplaceInvertedScale(LaplaceMechanism):
    """BUG: Laplace noise of scale sensitivity*epsilon instead of sensitivity/epsilon."""

    @property
    def scale(self) -> float:
        return self.sensitivity * self.epsilon


@dataclass(frozen=True)
class ReportNoisyMaxWithValue(ReportNoisyMax):
    """BUG: report-noisy-max that also releases the noisy maximum value.

    Output is ``(index, noisy max value)``. The value's lower tail leaks about
    k*epsilon/2 for k scores that all move together (Ding et al. 2018).
    """

    def _release_batch(self, values, rng):
        noise = rng.laplace(0.0, self.scale, size=values.shape)
        noisy = values + noise
        idx = np.argmax(noisy, axis=-1)
        return np.stack([idx.astype(float), noisy.max(axis=-1)], axis=-1)


@dataclass(frozen=True)
class SparseVectorCutoffBlindNoise(SparseVector):
    """BUG: query noise Lap(2*sensitivity/eps2) that ignores the cutoff c (should be 2c*sensitivity/eps2)."""

    @property
    def query_scale(self) -> float:
        return (1.0 if self.monotone else 2.0) * self.sensitivity / (self.epsilon / 2.0)


@dataclass(frozen=True)
class SparseVectorNoThresholdNoise(SparseVector):
    """BUG: no noise on the threshold (Lyu, Su & Li 2017, Alg. 5 family)."""

    @property
    def threshold_scale(self) -> float:
        return 0.0


@dataclass(frozen=True)
class SparseVectorNoCutoff(SparseVector):
    """BUG: keeps answering after the cutoff-th positive answer (no halting)."""

    def _release_batch(self, values, rng):
        runs, m = values.shape
        thr = np.broadcast_to(np.asarray(self.threshold, dtype=float), (m,))
        noisy_thr = rng.laplace(0.0, self.threshold_scale, size=runs)
        nu = rng.laplace(0.0, self.query_scale, size=(runs, m))
        return (values + nu >= thr[None, :] + noisy_thr[:, None]).astype(np.int8)


@dataclass(frozen=True)
class GeometricInvertedScale(GeometricMechanism):
    """BUG: geometric noise with ratio exp(-1/(epsilon*sensitivity)) (scale inverted, like the Laplace bug)."""

    def _release_batch(self, values, rng):
        p = -math.expm1(-1.0 / (self.epsilon * self.sensitivity))
        g1 = rng.geometric(p, size=values.shape)
        g2 = rng.geometric(p, size=values.shape)
        return values + (g1 - g2)


@dataclass(frozen=True)
class RandomizedResponseDoubledEpsilon(RandomizedResponse):
    """BUG: keeps the true answer with probability e^(2 eps)/(e^(2 eps) + k - 1) while claiming eps."""

    @property
    def keep_probability(self) -> float:
        return 1.0 / (1.0 + (self.k - 1) * math.exp(-2.0 * self.epsilon))


@dataclass(frozen=True)
class ExponentialMechanismNoHalf(ExponentialMechanism):
    """BUG: P ~ exp(eps q / sensitivity), the factor 1/2 dropped: up to 2 eps for general scores."""

    def _release_batch(self, values, rng):
        logits = (self.epsilon / self.sensitivity) * values
        return np.argmax(logits + rng.gumbel(size=values.shape), axis=-1)


@dataclass(frozen=True)
class PoissonSubsampledIgnoringRate(PoissonSubsampled):
    """BUG: claims amplification by Poisson(rate) subsampling but runs on the full dataset."""

    def __call__(self, data, rng):
        return self.mechanism(data, rng)

    def sample(self, data, rng, size):
        return self.mechanism.sample(data, rng, size)


@dataclass(frozen=True)
class Float32SumLaplace:
    """BUG: the records' sum rounded to float32 before Laplace(1/eps) noise, claimed eps-DP for neighbours that
    move one record by at most 1 (at large magnitudes the rounding moves the sum by a float32 spacing)."""

    epsilon: float

    def sample(self, data, rng, size):
        return float(np.float32(np.sum(np.asarray(data, dtype=float)))) + rng.laplace(0.0, 1.0 / self.epsilon, size)


@dataclass(frozen=True)
class UnclampedSum:
    """BUG: claims to clamp records to [0, 1] (sensitivity 1) but sums them as they are, + Laplace(1/eps)."""

    epsilon: float

    def sample(self, data, rng, size):
        return float(np.sum(data)) + rng.laplace(0.0, 1.0 / self.epsilon, size)


# ------------------------------------------------------------------ targets


def _count_pair(n: int = 8, ones: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Two datasets of 0/1 records differing in one replaced record (sum differs by 1)."""
    d0 = np.array([1] * ones + [0] * (n - ones))
    d1 = d0.copy()
    d1[-1] = 1
    return d0, d1


def _count_above(outputs: np.ndarray) -> np.ndarray:
    """Sparse-vector score: the number of "above" answers (more under the larger queries)."""
    return (np.asarray(outputs) == 1).sum(axis=1).astype(float)


def _half_above(outputs: np.ndarray) -> np.ndarray:
    """Aboves among the first half of the queries minus aboves among the second half."""
    o = np.asarray(outputs)
    h = o.shape[1] // 2
    return ((o[:, :h] == 1).sum(axis=1) - (o[:, h:] == 1).sum(axis=1)).astype(float)


def _count_below(outputs: np.ndarray) -> np.ndarray:
    return (np.asarray(outputs) == 0).sum(axis=1).astype(float)


_D0, _D1 = _count_pair()
_RATE = 0.1
_SNAPPING = M.SnappingLaplaceMechanism(1.0, bound=64.0, query=np.sum)
_DISCRETE_GAUSSIAN = M.DiscreteGaussianMechanism(4.0, 1e-5, query=np.sum)
_SUBSAMPLED_LAPLACE = M.PoissonSubsampled(M.LaplaceMechanism(1.0, query=np.sum), _RATE)
# Half the queries go up, half go down, so the threshold noise cannot absorb the change
# (a shift of every query by +1 is a shift of the threshold by -1; Ding et al. 2018).
_HALF_UP = np.r_[np.ones(10), np.zeros(10)]

REFERENCE_TARGETS: tuple[Target, ...] = (
    *(Target(
        f"laplace-eps{eps:g}", "laplace", M.LaplaceMechanism(eps, query=np.sum), _D0, _D1, eps,
        description=f"Laplace mechanism on a counting query, scale 1/{eps:g} (textbook floating-point noise)",
        claim_source="Dwork & Roth 2014, Thm 3.6",
        default_trials=10_000 if eps >= 1 else 100_000, float_safe=False,
    ) for eps in (1.0, 0.1)),
    Target(
        "gaussian-analytic", "gaussian", M.GaussianMechanism(1.0, 1e-5, query=np.sum), _D0, _D1, 1.0, 1e-5,
        description="Gaussian mechanism, analytic calibration (Balle & Wang 2018) via dp_accounting",
        claim_source="Balle & Wang 2018, Thm 8", float_safe=False,
    ),
    Target(
        "gaussian-classic", "gaussian", M.GaussianMechanism(0.5, 1e-5, calibration="classic", query=np.sum),
        _D0, _D1, 0.5, 1e-5,
        description="Gaussian mechanism, classic calibration sigma = sqrt(2 ln(1.25/delta))/epsilon",
        claim_source="Dwork & Roth 2014, Thm A.1",
        float_safe=False,  # sampled in doubles: the floating-point attack refutes its claim, as gaussian-analytic's
    ),
    Target(
        "randomized-response", "randomized-response", M.RandomizedResponse(1.0), 0, 1, 1.0,
        description="binary randomized response on one user's bit",
        claim_source="Warner 1965; Dwork & Roth 2014, Sec. 3.2",
    ),
    Target(
        "geometric", "geometric", M.GeometricMechanism(1.0, query=np.sum), _D0, _D1, 1.0,
        description="two-sided geometric mechanism on a counting query",
        claim_source="Ghosh, Roughgarden & Sundararajan 2012",
    ),
    Target(
        "exponential-mechanism", "exponential", M.ExponentialMechanism(1.0, score=np.asarray),
        np.array([3.0, 1.0, 0.0, 2.0]), np.array([2.0, 2.0, 1.0, 2.0]), 1.0,
        neighbouring=NR.BOUNDED_QUERY_CHANGE, canary="scores change by at most 1",
        description="exponential mechanism over 4 candidates, P ~ exp(eps q / 2)",
        claim_source="McSherry & Talwar 2007; Winnow paper Lemma 3 (sign corrected)",
    ),
    *(Target(
        f"report-noisy-max-{noise}", "report-noisy-max",
        M.ReportNoisyMax(1.0, noise=noise, score=np.asarray),
        np.array([1.0, 0.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0, 0.0]), 1.0,
        neighbouring=NR.BOUNDED_QUERY_CHANGE, canary="scores change by at most 1",
        description=f"report-noisy-max with {noise} noise of scale 2/eps, index released",
        claim_source="Dwork & Roth 2014, Claim 3.9",
    ) for noise in ("laplace", "gumbel")),
    Target(
        "above-threshold", "sparse-vector", M.SparseVector(1.0, threshold=0.0, cutoff=1),
        np.zeros(6), np.ones(6), 1.0,
        neighbouring=NR.BOUNDED_QUERY_CHANGE, canary="sensitivity-1 queries",
        description="AboveThreshold on 6 queries (threshold noise Lap(2/eps), query noise Lap(4/eps))",
        claim_source="Dwork & Roth 2014, Thm 3.23",
    ),
    Target(
        "sparse-vector-c3", "sparse-vector", M.SparseVector(1.0, threshold=0.0, cutoff=3),
        np.zeros(10), np.ones(10), 1.0, neighbouring=NR.BOUNDED_QUERY_CHANGE, canary="sensitivity-1 queries",
        description="sparse vector with cutoff 3 on 10 queries",
        claim_source="Lyu, Su & Li 2017, Alg. 1", score=_count_above,
    ),
    Target(
        "poisson-subsampled-laplace", "subsampling", _SUBSAMPLED_LAPLACE, np.zeros(20), np.append(np.zeros(20), 1.0),
        _SUBSAMPLED_LAPLACE.guarantee.epsilon, neighbouring=NR.ADD_OR_REMOVE_ONE,
        description="Laplace(1) on the sum of a Poisson(0.1) subsample; amplified epsilon",
        claim_source="Balle, Barthe & Gaboardi 2018, Thm 8",
    ),

    Target(
        "snapping-laplace", "laplace", _SNAPPING, _D0, _D1, _SNAPPING.guarantee.epsilon,
        description="Mironov's snapping mechanism (eps = 1, bound 64): Laplace noise that is DP in floating point",
        claim_source="Mironov, CCS 2012, Sec. 5.2", float_safe=True,
    ),
    Target(
        "discrete-laplace", "geometric", M.DiscreteLaplaceMechanism(1.0, query=np.sum), _D0, _D1, 1.0,
        description="discrete Laplace noise of scale 1 on a count, exact sampling",
        claim_source="Canonne, Kamath & Steinke, NeurIPS 2020, Alg. 2", float_safe=True,
    ),
    Target(
        "discrete-gaussian", "gaussian", _DISCRETE_GAUSSIAN, _D0, _D1, _DISCRETE_GAUSSIAN.epsilon, 1e-5,
        description="discrete Gaussian noise, sigma = 4, on a count, exact sampling; epsilon from the exact curve",
        claim_source="Canonne, Kamath & Steinke, NeurIPS 2020, Thm 7", float_safe=True,
    ),
    # planted bugs
    Target(
        "laplace-inverted-scale", "laplace", LaplaceInvertedScale(0.5, query=np.sum), _D0, _D1, 0.5,
        planted_bug=True, description="BUG: Laplace noise of scale eps (0.5) instead of 1/eps (2); true eps = 2",
        claim_source="claims Dwork & Roth Thm 3.6",
    ),
    Target(
        "gaussian-sensitivity-2", "gaussian", M.GaussianMechanism(1.0, 1e-5, sensitivity=1.0, query=np.sum),
        np.zeros(4), np.array([2.0, 0, 0, 0]), 1.0, 1e-5, planted_bug=True,
        description="BUG: Gaussian calibrated for sensitivity 1 fed a sensitivity-2 query",
        claim_source="claims Balle & Wang 2018", default_trials=500_000,
    ),
    Target(
        "report-noisy-max-value", "report-noisy-max", ReportNoisyMaxWithValue(1.0, score=np.asarray),
        np.ones(5), np.zeros(5), 1.0, planted_bug=True,
        neighbouring=NR.BOUNDED_QUERY_CHANGE, canary="scores change by at most 1",
        description="BUG: report-noisy-max releasing the noisy maximum value with the index",
        claim_source="claims Dwork & Roth Claim 3.9", score=lambda o: -np.asarray(o)[:, 1],
    ),
    Target(
        "geometric-inverted-scale", "geometric", GeometricInvertedScale(0.5, query=np.sum), _D0, _D1, 0.5,
        planted_bug=True, description="BUG: geometric noise ratio exp(-1/eps) instead of exp(-eps); true eps = 2",
        claim_source="claims Ghosh, Roughgarden & Sundararajan 2012",
    ),
    Target(
        "randomized-response-doubled-eps", "randomized-response", RandomizedResponseDoubledEpsilon(0.5), 0, 1, 0.5,
        planted_bug=True, description="BUG: keep probability computed at 2 eps; true eps = 1",
        claim_source="claims Warner 1965",
    ),
    Target(
        "exponential-mechanism-no-half", "exponential", ExponentialMechanismNoHalf(1.0, score=np.asarray),
        np.r_[1.0, np.zeros(9)], np.r_[0.0, np.ones(9)], 1.0, planted_bug=True,
        neighbouring=NR.BOUNDED_QUERY_CHANGE, canary="scores change by at most 1",
        description="BUG: exponential mechanism with exp(eps q) instead of exp(eps q / 2); "
                    "on this pair ln(e (1 + 9e)/(e + 9)) = 1.77 > 1",
        claim_source="claims McSherry & Talwar 2007",
    ),
    Target(
        "poisson-subsampling-ignored", "subsampling",
        PoissonSubsampledIgnoringRate(M.LaplaceMechanism(1.0, query=np.sum), _RATE), np.zeros(20), np.append(np.zeros(20), 1.0),
        _SUBSAMPLED_LAPLACE.guarantee.epsilon, neighbouring=NR.ADD_OR_REMOVE_ONE, planted_bug=True,
        description="BUG: claims Poisson(0.1) amplification (eps 0.159) but never subsamples; true eps = 1",
        claim_source="claims Balle, Barthe & Gaboardi 2018, Thm 8",
    ),

    Target(
        "svt-cutoff-blind-noise", "sparse-vector", SparseVectorCutoffBlindNoise(1.0, threshold=0.0, cutoff=5),
        _HALF_UP[::-1].copy(), _HALF_UP, 1.0, planted_bug=True, neighbouring=NR.BOUNDED_QUERY_CHANGE, canary="sensitivity-1 queries",
        description="BUG: sparse vector (cutoff 5) whose query noise Lap(4/eps) ignores the cutoff (should be Lap(20/eps))",
        claim_source="claims Lyu, Su & Li 2017, Alg. 1", score=_half_above, default_trials=100_000,
    ),
    Target(
        "svt-no-threshold-noise", "sparse-vector", SparseVectorNoThresholdNoise(1.0, threshold=1.0, cutoff=1),
        np.ones(12), np.zeros(12), 1.0, planted_bug=True, neighbouring=NR.BOUNDED_QUERY_CHANGE, canary="sensitivity-1 queries",
        description="BUG: AboveThreshold with no threshold noise (each 'below' answer leaks eps/4)",
        claim_source="claims Dwork & Roth Thm 3.23", score=_count_below, default_trials=100_000,
    ),
    Target(
        "svt-no-cutoff", "sparse-vector", SparseVectorNoCutoff(1.0, threshold=0.0, cutoff=1),
        _HALF_UP[::-1].copy(), _HALF_UP, 1.0, planted_bug=True, neighbouring=NR.BOUNDED_QUERY_CHANGE, canary="sensitivity-1 queries",
        description="BUG: AboveThreshold that keeps answering after the first TRUE",
        claim_source="claims Dwork & Roth Thm 3.23", score=_half_above,
    ),
)

for _target in REFERENCE_TARGETS:
    register_target(_target)
