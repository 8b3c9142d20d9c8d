"""Audit targets and their registry (DESIGN.md, "A target").

A :class:`Target` bundles a mechanism with fixed parameters, its neighbouring pair,
its claimed (epsilon, delta) from its own accounting, its best attack, and
``planted_bug`` (true for a variant that is NOT private at its claimed epsilon).
The nightly run and ``privbound audit NAME`` audit targets by name.

This module registers the reference mechanisms of :mod:`learners.mechanisms` and
planted-bug variants of them (:mod:`audit.planted`); learner modules add their own
targets with :func:`register_target`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from audit.core import AuditResult, audit_mechanism
from audit.planted import (
    ExponentialMechanismNoHalf,
    GeometricInvertedScale,
    LaplaceInvertedScale,
    PoissonSubsampledIgnoringRate,
    RandomizedResponseDoubledEpsilon,
    ReportNoisyMaxWithValue,
    SparseVectorCutoffBlindNoise,
    SparseVectorNoCutoff,
    SparseVectorNoThresholdNoise,
)
from learners import mechanisms as M

__all__ = ["Target", "register_target", "targets", "get_target", "accountant_epsilon"]


@dataclass(frozen=True)
class Target:
    """A mechanism with its neighbouring pair, claimed budget and best attack."""

    name: str
    family: str
    mechanism: Any
    d0: Any
    d1: Any
    epsilon: float
    delta: float = 0.0
    neighbouring: str = "replace-one"
    planted_bug: bool = False
    description: str = ""
    paper: str | None = None  # None for the reference mechanisms
    score: Callable[[np.ndarray], np.ndarray] | None = None
    log_likelihood_ratio: Callable[[np.ndarray], np.ndarray] | None = None
    attack: Callable[[], Any] | None = None  # factory of a fresh audit.attacks.Attack
    default_trials: int = 10_000
    claim_source: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)

    def audit(
        self,
        *,
        trials: int | None = None,
        seed: int = 0,
        n_jobs: int | None = 1,
        confidence: float = 0.95,
        cache_dir: str | None = None,
    ) -> AuditResult:
        """Audit this target with its best attack; ``trials`` defaults to ``default_trials``.

        With ``cache_dir``, finished trial chunks are kept there (keyed by the target,
        its mechanism and pair, the seed, the chunk size and ``code_version``) and an
        interrupted audit resumes from them.
        """
        cache = None
        if cache_dir is not None:
            from audit.cache import ChunkCache

            cache = ChunkCache(cache_dir, self.cache_key(seed))
        result = audit_mechanism(
            self.mechanism,
            self.d0,
            self.d1,
            epsilon=self.epsilon,
            delta=self.delta,
            trials=self.default_trials if trials is None else trials,
            confidence=confidence,
            seed=seed,
            n_jobs=n_jobs,
            score=self.score,
            log_likelihood_ratio=self.log_likelihood_ratio,
            attack=None if self.attack is None else self.attack(),
            name=self.name,
            cache=cache,
        )
        result.details.update(
            family=self.family,
            planted_bug=self.planted_bug,
            neighbouring=self.neighbouring,
            claim_source=self.claim_source,
            accountant_epsilon=accountant_epsilon(self.mechanism, self.delta),
        )
        return result

    def cache_key(self, seed: int, chunk_size: int | None = None) -> str:
        """Fingerprint of everything that determines this target's trial chunks."""
        from audit.cache import fingerprint
        from audit.engine import DEFAULT_CHUNK_SIZE

        # Object addresses in reprs (functions, lambdas) change from process to process.
        mech = re.sub(r" at 0x[0-9a-fA-F]+", "", repr(self.mechanism))
        return f"{self.name}-" + fingerprint(
            self.name, mech, self.d0, self.d1, seed, chunk_size or DEFAULT_CHUNK_SIZE, _code_version()
        )[:24]

    def record(self) -> dict[str, Any]:
        """The JSON record of ``privbound list``."""
        return {
            "name": self.name,
            "family": self.family,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "planted_bug": self.planted_bug,
            "neighbouring": self.neighbouring,
            "paper": self.paper,
            "default_trials": self.default_trials,
            "description": self.description,
        }


def _code_version() -> str:
    """The installed privbound version plus a digest of the audit and learners sources.

    Part of every cache key: a change to any mechanism or to the trial engine
    invalidates cached chunks.
    """
    import hashlib
    from pathlib import Path

    global _CODE_VERSION
    if _CODE_VERSION is None:
        h = hashlib.sha256()
        root = Path(__file__).resolve().parent.parent
        for pkg in ("audit", "learners"):
            for f in sorted((root / pkg).glob("*.py")):
                h.update(f.name.encode())
                h.update(f.read_bytes())
        _CODE_VERSION = h.hexdigest()[:16]
    return _CODE_VERSION


_CODE_VERSION: str | None = None
_TARGETS: dict[str, Target] = {}


def register_target(target: Target) -> Target:
    """Add a target; names are unique."""
    if not isinstance(target, Target):
        raise TypeError(f"target must be an audit.targets.Target, got {type(target).__name__}")
    if target.name in _TARGETS:
        raise ValueError(f"a target named {target.name!r} is already registered")
    _TARGETS[target.name] = target
    return target


_TARGET_MODULES = (
    "audit.targets_decision_lists",
    "audit.targets_robust_halfspaces",
    "audit.targets_agnostic_halfspaces",
)


def _load_target_modules() -> None:
    """Import the per-paper target modules (importing one registers its targets)."""
    import importlib

    for name in _TARGET_MODULES:
        importlib.import_module(name)


def targets(family: str | None = None) -> list[Target]:
    """Registered targets in registration order, optionally of one family."""
    _load_target_modules()
    return [t for t in _TARGETS.values() if family is None or t.family == family]


def get_target(name: str) -> Target:
    """The target called ``name``; ``KeyError`` listing close names otherwise."""
    _load_target_modules()
    try:
        return _TARGETS[name]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(name, list(_TARGETS), n=3)
        hint = f"; did you mean {close}?" if close else "; see `privbound list`"
        raise KeyError(f"no target named {name!r}{hint}") from None


def accountant_epsilon(mechanism: Any, delta: float) -> dict[str, float] | None:
    """A second claim from dp_accounting (PLD and RDP) when the mechanism has a DpEvent.

    Returns ``None`` when the mechanism describes no supported event.
    """
    if not hasattr(mechanism, "dp_event"):
        return None
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant
    from dp_accounting.rdp import rdp_privacy_accountant

    import logging

    event = mechanism.dp_event()
    if isinstance(event, dp_accounting.UnsupportedDpEvent):
        return None
    # dp_accounting's RDP accountant logs a warning per fractional order it cannot
    # evaluate at large sampling rates; those orders are skipped, which is what we want.
    logging.getLogger("absl").setLevel(logging.ERROR)
    out: dict[str, float] = {}
    for key, acc in (("pld", pld_privacy_accountant.PLDAccountant()), ("rdp", rdp_privacy_accountant.RdpAccountant())):
        try:
            if not acc.supports(event):
                continue
            acc.compose(event)
            eps = float(acc.get_epsilon(delta if delta > 0 else 0.0))
            if math.isfinite(eps):
                out[key] = eps
        except Exception:  # an accountant that cannot handle delta = 0 etc.
            continue
    return out or None


# ------------------------------------------------------------------ reference targets

_REF = "reference mechanisms"


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


def _register_reference_targets() -> None:
    d0, d1 = _count_pair()
    for eps in (1.0, 0.1):
        register_target(Target(
            f"laplace-eps{eps:g}", "laplace", M.LaplaceMechanism(eps, query=np.sum), d0, d1, eps,
            description=f"Laplace mechanism on a counting query, scale 1/{eps:g}",
            claim_source="Dwork & Roth 2014, Thm 3.6",
            default_trials=10_000 if eps >= 1 else 100_000,
        ))
    register_target(Target(
        "gaussian-analytic", "gaussian", M.GaussianMechanism(1.0, 1e-5, query=np.sum), d0, d1, 1.0, 1e-5,
        description="Gaussian mechanism, analytic calibration (Balle & Wang 2018) via dp_accounting",
        claim_source="Balle & Wang 2018, Thm 8",
    ))
    register_target(Target(
        "gaussian-classic", "gaussian", M.GaussianMechanism(0.5, 1e-5, calibration="classic", query=np.sum),
        d0, d1, 0.5, 1e-5,
        description="Gaussian mechanism, classic calibration sigma = sqrt(2 ln(1.25/delta))/epsilon",
        claim_source="Dwork & Roth 2014, Thm A.1",
    ))
    register_target(Target(
        "randomized-response", "randomized-response", M.RandomizedResponse(1.0), 0, 1, 1.0,
        description="binary randomized response on one user's bit",
        claim_source="Warner 1965; Dwork & Roth 2014, Sec. 3.2",
    ))
    register_target(Target(
        "geometric", "geometric", M.GeometricMechanism(1.0, query=np.sum), d0, d1, 1.0,
        description="two-sided geometric mechanism on a counting query",
        claim_source="Ghosh, Roughgarden & Sundararajan 2012",
    ))
    register_target(Target(
        "exponential-mechanism", "exponential", M.ExponentialMechanism(1.0, score=np.asarray),
        np.array([3.0, 1.0, 0.0, 2.0]), np.array([2.0, 2.0, 1.0, 2.0]), 1.0,
        neighbouring="scores change by at most 1",
        description="exponential mechanism over 4 candidates, P ~ exp(eps q / 2)",
        claim_source="McSherry & Talwar 2007; Winnow paper Lemma 3 (sign corrected)",
    ))
    for noise in ("laplace", "gumbel"):
        register_target(Target(
            f"report-noisy-max-{noise}", "report-noisy-max",
            M.ReportNoisyMax(1.0, noise=noise, score=np.asarray),
            np.array([1.0, 0.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0, 0.0]), 1.0,
            neighbouring="scores change by at most 1",
            description=f"report-noisy-max with {noise} noise of scale 2/eps, index released",
            claim_source="Dwork & Roth 2014, Claim 3.9",
        ))
    register_target(Target(
        "above-threshold", "sparse-vector", M.SparseVector(1.0, threshold=0.0, cutoff=1),
        np.zeros(6), np.ones(6), 1.0,
        neighbouring="sensitivity-1 queries",
        description="AboveThreshold on 6 queries (threshold noise Lap(2/eps), query noise Lap(4/eps))",
        claim_source="Dwork & Roth 2014, Thm 3.23",
    ))
    register_target(Target(
        "sparse-vector-c3", "sparse-vector", M.SparseVector(1.0, threshold=0.0, cutoff=3),
        np.zeros(10), np.ones(10), 1.0, neighbouring="sensitivity-1 queries",
        description="sparse vector with cutoff 3 on 10 queries",
        claim_source="Lyu, Su & Li 2017, Alg. 1", score=_count_above,
    ))
    rate = 0.1
    sub = M.PoissonSubsampled(M.LaplaceMechanism(1.0, query=np.sum), rate)
    register_target(Target(
        "poisson-subsampled-laplace", "subsampling", sub, np.zeros(20), np.append(np.zeros(20), 1.0),
        sub.guarantee.epsilon, neighbouring="add/remove one record",
        description="Laplace(1) on the sum of a Poisson(0.1) subsample; amplified epsilon",
        claim_source="Balle, Barthe & Gaboardi 2018, Thm 8",
    ))

    # ------------------------------------------------------------ planted bugs
    register_target(Target(
        "laplace-inverted-scale", "laplace", LaplaceInvertedScale(0.5, query=np.sum), d0, d1, 0.5,
        planted_bug=True, description="BUG: Laplace noise of scale eps (0.5) instead of 1/eps (2); true eps = 2",
        claim_source="claims Dwork & Roth Thm 3.6",
    ))
    register_target(Target(
        "gaussian-sensitivity-2", "gaussian", M.GaussianMechanism(1.0, 1e-5, sensitivity=1.0, query=np.sum),
        np.zeros(4), np.array([2.0, 0, 0, 0]), 1.0, 1e-5, planted_bug=True,
        description="BUG: Gaussian calibrated for sensitivity 1 fed a sensitivity-2 query",
        claim_source="claims Balle & Wang 2018", default_trials=500_000,
    ))
    register_target(Target(
        "report-noisy-max-value", "report-noisy-max", ReportNoisyMaxWithValue(1.0, score=np.asarray),
        np.ones(5), np.zeros(5), 1.0, planted_bug=True,
        neighbouring="scores change by at most 1",
        description="BUG: report-noisy-max releasing the noisy maximum value with the index",
        claim_source="claims Dwork & Roth Claim 3.9", score=lambda o: -np.asarray(o)[:, 1],
    ))
    register_target(Target(
        "geometric-inverted-scale", "geometric", GeometricInvertedScale(0.5, query=np.sum), d0, d1, 0.5,
        planted_bug=True, description="BUG: geometric noise ratio exp(-1/eps) instead of exp(-eps); true eps = 2",
        claim_source="claims Ghosh, Roughgarden & Sundararajan 2012",
    ))
    register_target(Target(
        "randomized-response-doubled-eps", "randomized-response", RandomizedResponseDoubledEpsilon(0.5), 0, 1, 0.5,
        planted_bug=True, description="BUG: keep probability computed at 2 eps; true eps = 1",
        claim_source="claims Warner 1965",
    ))
    k = 10
    register_target(Target(
        "exponential-mechanism-no-half", "exponential", ExponentialMechanismNoHalf(1.0, score=np.asarray),
        np.r_[1.0, np.zeros(k - 1)], np.r_[0.0, np.ones(k - 1)], 1.0, planted_bug=True,
        neighbouring="scores change by at most 1",
        description="BUG: exponential mechanism with exp(eps q) instead of exp(eps q / 2); "
                    "on this pair ln(e (1 + 9e)/(e + 9)) = 1.77 > 1",
        claim_source="claims McSherry & Talwar 2007",
    ))
    bad_sub = PoissonSubsampledIgnoringRate(M.LaplaceMechanism(1.0, query=np.sum), rate)
    register_target(Target(
        "poisson-subsampling-ignored", "subsampling", bad_sub, np.zeros(20), np.append(np.zeros(20), 1.0),
        sub.guarantee.epsilon, neighbouring="add/remove one record", planted_bug=True,
        description="BUG: claims Poisson(0.1) amplification (eps 0.159) but never subsamples; true eps = 1",
        claim_source="claims Balle, Barthe & Gaboardi 2018, Thm 8",
    ))

    # Half the queries go up, half go down, so the threshold noise cannot absorb the change
    # (a shift of every query by +1 is a shift of the threshold by -1; Ding et al. 2018).
    half_up = np.r_[np.ones(10), np.zeros(10)]
    register_target(Target(
        "svt-cutoff-blind-noise", "sparse-vector", SparseVectorCutoffBlindNoise(1.0, threshold=0.0, cutoff=5),
        half_up[::-1].copy(), half_up, 1.0, planted_bug=True, neighbouring="sensitivity-1 queries",
        description="BUG: sparse vector (cutoff 5) whose query noise Lap(4/eps) ignores the cutoff (should be Lap(20/eps))",
        claim_source="claims Lyu, Su & Li 2017, Alg. 1", score=_half_above, default_trials=100_000,
    ))
    register_target(Target(
        "svt-no-threshold-noise", "sparse-vector", SparseVectorNoThresholdNoise(1.0, threshold=1.0, cutoff=1),
        np.ones(12), np.zeros(12), 1.0, planted_bug=True, neighbouring="sensitivity-1 queries",
        description="BUG: AboveThreshold with no threshold noise (each 'below' answer leaks eps/4)",
        claim_source="claims Dwork & Roth Thm 3.23", score=_count_below, default_trials=100_000,
    ))
    register_target(Target(
        "svt-no-cutoff", "sparse-vector", SparseVectorNoCutoff(1.0, threshold=0.0, cutoff=1),
        half_up[::-1].copy(), half_up, 1.0, planted_bug=True, neighbouring="sensitivity-1 queries",
        description="BUG: AboveThreshold that keeps answering after the first TRUE",
        claim_source="claims Dwork & Roth Thm 3.23", score=_half_above,
    ))


_register_reference_targets()
