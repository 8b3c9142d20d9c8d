"""Planted bugs: mechanisms that are NOT private at the budget they claim.

Each is a small, deliberate deviation from a correct primitive of
:mod:`learners.mechanisms`, of the kinds found in real code (Lyu, Su & Li 2017 for
the sparse-vector variants; Ding et al. 2018 for report-noisy-max releasing its
value). The auditor must flag every one of them at its target's default trials;
``tests/test_targets.py`` checks that it does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import math

from learners.mechanisms import (
    ExponentialMechanism,
    GeometricMechanism,
    LaplaceMechanism,
    PoissonSubsampled,
    RandomizedResponse,
    ReportNoisyMax,
    SparseVector,
)

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
]


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
