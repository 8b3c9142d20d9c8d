"""Audit targets and their registry.

A :class:`Target` bundles a mechanism with fixed parameters, its neighbouring pair,
its claimed (epsilon, delta) from its own accounting, its best attack, and
``planted_bug`` (true for a variant that is NOT private at its claimed epsilon).
The nightly run and ``privbound audit NAME`` audit targets by name.

Registering a target computes nothing: mechanisms calibrate their noise on first
use, so listing the targets is cheap. This module imports none of the modules that
register targets; :mod:`privbound.audit.targets` does.
"""

from __future__ import annotations

import copy
import functools
import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np

from privbound.audit.core import audit_mechanism
from privbound.audit.estimators import Estimator, resolve_estimator
from privbound.audit.result import AuditResult
from privbound.audit.one_run import OneRunResult, one_run_audit_target
from privbound.learners.accounting import check_neighbouring, epsilon_of, make_accountant
from privbound.learners.neighbouring import NeighbouringRelation
from privbound.mutation import Mutant
from privbound.registry import Registry

__all__ = [
    "Target",
    "TightEpsilon",
    "OneRunDesign",
    "INDEPENDENT_RELEASES",
    "NIGHTLY_PROFILE_ORDER",
    "register_target",
    "targets",
    "get_target",
    "accountant_epsilon",
]

# Name of the generic one-run design: each canary is one independent release on d1 or d0.
INDEPENDENT_RELEASES = "independent-releases"
# The nightly profiles from the smallest to the largest (privbound.reports.nightly.NIGHTLY_PROFILES).
NIGHTLY_PROFILE_ORDER = ("smoke", "default", "full")


@dataclass(frozen=True)
class OneRunDesign:
    """A learner's own one-run canary design (all canaries in ONE training run).

    ``run(target, m, seed, confidence) -> OneRunResult`` audits ``target`` against its own
    claim with ``m`` canaries.
    """

    name: str
    run: Callable[[Any, int, int, float], OneRunResult] = field(repr=False)
    description: str = ""


@dataclass(frozen=True)
class TightEpsilon:
    """The tightest epsilon of what a target's code runs, at the target's delta and neighbouring relation.

    Attributes
    ----------
    epsilon : float
        That epsilon (``inf`` when what runs is not DP at the target's delta).
    source : str
        How it was computed, e.g. ``"dp_accounting PLD of 12 Laplace rounds (replace-one)"`` or
        ``"exact hockey-stick divergence of the selection law on this pair"``.
    """

    epsilon: float
    source: str


_TIGHT: dict[str, TightEpsilon | None] = {}


@dataclass(frozen=True)
class Target:
    """A mechanism with its neighbouring pair, claimed budget and best attack.

    Attributes
    ----------
    name, family : str
        Registry name and the family it belongs to (every family has a planted bug).
    mechanism : callable or object with ``sample``
        The mechanism with its parameters fixed.
    d0, d1 : Any
        The neighbouring pair the target is audited on.
    epsilon, delta : float
        The claim, from the mechanism's own accounting.
    neighbouring : NeighbouringRelation
        The relation the claim is about.
    canary : str
        What differs between ``d0`` and ``d1`` (which record, label or query).
    planted_bug : bool
        True for a variant that is not private at its claim; the auditor must flag it.
    description, claim_source : str
        What the target is, and the theorem its claim rests on.
    paper : str or None
        Paper id, ``None`` for the reference mechanisms.
    score, log_likelihood_ratio : callable or None
        The best attack statistic, or the exact white-box log-likelihood ratio.
    step_log_likelihood_ratio : callable or None
        For outputs of T steps that are independent and identically distributed given the dataset: each
        output's exact per-step log-likelihood ratios, shape (trials, T). When set, audits use the
        composition estimator (:mod:`privbound.audit.estimators.composition`) instead of ``log_likelihood_ratio``.
    attack : callable or None
        Factory of a fresh :class:`privbound.audit.attacks.Attack`.
    default_trials : int
        Trials per dataset of a default audit.
    one_run_design : OneRunDesign or None
        The learner's own one-run canary design; ``None`` uses independent releases.
    float_safe : bool or None
        For a floating-point implementation: whether it is DP in floating point too (``False``: the
        floating-point audit must flag it; ``None``: not audited for floating-point leaks).
    tight_epsilon : callable or None
        ``tight_epsilon() -> TightEpsilon``: the tightest epsilon of what the code runs (its accountant under
        the target's relation, or an exact computation), computed on first use (:meth:`tight`). The audit is
        judged against it as well as against the paper's claim ``epsilon``.
    no_tight_epsilon : str
        Why no tight value exists, when ``tight_epsilon`` is None.
    mutants : tuple of privbound.mutation.Mutant
        Privacy bugs of the kinds a developer makes in this target's learner (a noise scale halved, a budget
        split that forgets a factor, clipping skipped, ...), each patching the code the learner runs; the
        target's own audit must flag each (:meth:`audit_mutant`).
    overspend : callable or None
        ``overspend(factor) -> Mutant``: the learner made to spend ``factor`` times its privacy budget (its noise
        scales divided by ``factor``, or its epsilon multiplied by it, in the code the learner runs), for the
        smallest overspend the target's audit flags (``benchmarks/learner_tightness.py --overspend``).
    nightly_profile : str
        The smallest nightly profile that audits this target (:data:`NIGHTLY_PROFILE_ORDER`): ``"smoke"``, every
        night; ``"full"``, only the full night -- for a costly variant of a design that a cheaper target audits every
        night. ``privbound audit`` and a night restricted to named targets audit it whatever the profile.
    """

    name: str
    family: str
    mechanism: Any
    d0: Any
    d1: Any
    epsilon: float
    delta: float = 0.0
    neighbouring: NeighbouringRelation = NeighbouringRelation.REPLACE_ONE
    canary: str = ""
    planted_bug: bool = False
    description: str = ""
    paper: str | None = None
    score: Callable[[np.ndarray], np.ndarray] | None = None
    log_likelihood_ratio: Callable[[np.ndarray], np.ndarray] | None = None
    step_log_likelihood_ratio: Callable[[np.ndarray], np.ndarray] | None = None
    attack: Callable[[], Any] | None = None
    default_trials: int = 10_000
    claim_source: str = ""
    one_run_design: OneRunDesign | None = None
    float_safe: bool | None = None
    tight_epsilon: Callable[[], TightEpsilon] | None = field(default=None, repr=False)
    no_tight_epsilon: str = ""
    mutants: tuple[Mutant, ...] = ()
    overspend: Callable[[float], Mutant] | None = field(default=None, repr=False)
    nightly_profile: str = "smoke"

    def tight(self) -> TightEpsilon | None:
        """The tightest epsilon of what the code runs (computed once per process), or None."""
        if self.tight_epsilon is None:
            return None
        if self.name not in _TIGHT:
            value = self.tight_epsilon()
            if not isinstance(value, TightEpsilon):
                raise TypeError(f"target {self.name!r}: tight_epsilon() must return a TightEpsilon, "
                                f"got {type(value).__name__}")
            _TIGHT[self.name] = value
        return _TIGHT[self.name]

    def __post_init__(self) -> None:
        if not isinstance(self.neighbouring, NeighbouringRelation):
            raise TypeError(
                f"target {self.name!r}: neighbouring must be a NeighbouringRelation "
                f"({', '.join(r.name for r in NeighbouringRelation)}), got {self.neighbouring!r}"
            )
        if self.nightly_profile not in NIGHTLY_PROFILE_ORDER:
            raise ValueError(f"target {self.name!r}: nightly_profile must be one of {', '.join(NIGHTLY_PROFILE_ORDER)}, "
                             f"got {self.nightly_profile!r}")

    def audited_in(self, profile: str) -> bool:
        """Whether the nightly profile named ``profile`` audits this target (``nightly_profile`` or a larger one)."""
        return NIGHTLY_PROFILE_ORDER.index(self.nightly_profile) <= NIGHTLY_PROFILE_ORDER.index(profile)

    def estimator(self, estimator: Estimator | str = "auto") -> Estimator:
        """The estimator of this target's audits: ``"auto"`` chooses from its declarations
        (:func:`privbound.audit.estimators.default_estimator`: per-step density, density, score or attack,
        the mechanism's output space); a name builds that estimator from them; a value is used as it is."""
        return resolve_estimator(
            estimator,
            attack="auto" if self.attack is None or estimator != "auto" else self.attack(),
            step_log_likelihood_ratio=self.step_log_likelihood_ratio,
            log_likelihood_ratio=self.log_likelihood_ratio,
            score=self.score,
            output_space=getattr(self.mechanism, "output_space", None),
        )

    def audit(
        self,
        *,
        trials: int | None = None,
        seed: int = 0,
        n_jobs: int | None = 1,
        confidence: float = 0.95,
        cache_dir: str | None = None,
        estimator: Estimator | str = "auto",
        float_audit: bool | str = "auto",
        **sequential: Any,
    ) -> AuditResult:
        """Audit this target; ``trials`` defaults to ``default_trials``, ``estimator`` to the one its
        declarations choose (:meth:`estimator`; ``"floating-point"`` looks for a floating-point leak,
        :mod:`privbound.audit.attacks.floating`). ``trials="auto"`` is the sequential audit
        (:mod:`privbound.audit.sequential`); ``sequential`` then passes ``max_trials``, ``max_seconds`` and
        ``tolerance`` to it. ``float_audit="auto"`` runs the floating-point attack beside the default
        black-box portfolio on float outputs (:func:`privbound.audit.audit_mechanism`) for a target that does not
        declare ``float_safe``; one that does has its own floating-point audit (``estimator="floating-point"``:
        the nightly's ``<target>:floating-point``, ``privbound audit NAME --float``), so it is not run twice.

        With ``cache_dir``, finished trial chunks are kept there (keyed by the target,
        its mechanism and pair, the seed, the chunk size and the code version) and an
        interrupted audit resumes from them.
        """
        cache = None
        if cache_dir is not None:
            from privbound.audit.cache import ChunkCache

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
            estimator=self.estimator(estimator),
            name=self.name,
            cache=cache,
            float_audit=False if self.float_safe is not None and float_audit == "auto" else float_audit,
            **sequential,
        )
        tight = self.tight()
        return replace(
            result,
            accountant_epsilon=accountant_epsilon(self.mechanism, self.delta, self.neighbouring),
            epsilon_tight=None if tight is None else tight.epsilon,
            tight_source=None if tight is None else tight.source,
            tight_violation=tight is not None and bool(result.epsilon_lower_bound > tight.epsilon),
            details={**result.details, **self.audit_details()},
        )

    def audit_mutant(
        self,
        mutant: Mutant,
        *,
        trials: int | None = None,
        seed: int = 0,
        confidence: float = 0.95,
        cache_dir: str | None = None,
    ) -> AuditResult:
        """This target's audit with ``mutant`` applied: the broken learner judged against what the correct one runs.

        The tight epsilon is the correct code's (computed before the mutant is applied), so
        ``tight_violation`` says the audit flags the bug; without a tight value the claim judges it
        (``violation``). The audit runs on a copy of the mechanism made while the mutant is applied, under
        the name ``<target>:<mutant>`` (its own chunk-cache entries), and ``details["mutant"]`` names it.
        It samples in this process: a mutant is patched here only, and a worker process (joblib's loky, Dask)
        would import the correct code; the trials are the same for any ``n_jobs``, so nothing else changes.
        """
        if not isinstance(mutant, Mutant):
            raise TypeError(f"mutant must be a privbound.mutation.Mutant, got {type(mutant).__name__}")
        tight = self.tight()
        with mutant.apply():
            broken = replace(self, name=f"{self.name}:{mutant.name}", mechanism=copy.deepcopy(self.mechanism),
                             tight_epsilon=None, mutants=(), overspend=None)
            result = broken.audit(trials=trials, seed=seed, n_jobs=1, confidence=confidence, cache_dir=cache_dir)
        return replace(
            result,
            epsilon_tight=None if tight is None else tight.epsilon,
            tight_source=None if tight is None else f"the correct code's: {tight.source}",
            tight_violation=tight is not None and bool(result.epsilon_lower_bound > tight.epsilon),
            details={**result.details, "mutant": mutant.name, "mutant_description": mutant.description},
        )

    def audit_details(self) -> dict[str, Any]:
        """What every audit of this target records about it in ``AuditResult.details``: ``draws_own_randomness``
        says that its mechanism samples from a generator of its own, so that its audits are valid but do not repeat
        for a seed."""
        return {
            "family": self.family,
            "planted_bug": self.planted_bug,
            "neighbouring": self.neighbouring.value,
            "canary": self.canary,
            "claim_source": self.claim_source,
            "draws_own_randomness": bool(getattr(self.mechanism, "draws_own_randomness", False)),
        }

    @property
    def one_run_design_name(self) -> str:
        """The name of the one-run design :meth:`one_run_audit` uses."""
        return INDEPENDENT_RELEASES if self.one_run_design is None else self.one_run_design.name

    def one_run_audit(self, m: int, seed: int = 0, *, confidence: float = 0.95,
                      n_jobs: int | None = 1) -> OneRunResult:
        """One-run audit with ``m`` canaries, with the learner's own canary design when it has one.

        Steinke, Nasr & Jagielski, NeurIPS 2023 (arXiv:2305.08846). Without a design of its
        own each canary is one independent release on ``d1`` (included) or ``d0``.
        """
        if self.one_run_design is None:
            res = one_run_audit_target(self, m, seed, confidence=confidence, n_jobs=n_jobs)
        else:
            res = self.one_run_design.run(self, m, seed, confidence)
        res.details.update(target=self.name, design_chosen=self.one_run_design_name)
        return res

    def cache_key(self, seed: int, chunk_size: int | None = None) -> str:
        """Fingerprint of everything that determines this target's trial chunks: the target, the seed, the chunk
        size, privbound's audit and learner sources and the versions of the libraries that sample (an upgraded
        library's trials are drawn afresh)."""
        from privbound.audit.cache import fingerprint, sampling_library_versions
        from privbound.audit.engine import DEFAULT_CHUNK_SIZE

        # Object addresses in reprs (functions, lambdas) change from process to process.
        mech = re.sub(r" at 0x[0-9a-fA-F]+", "", repr(self.mechanism))
        return f"{self.name}-" + fingerprint(
            self.name, mech, self.d0, self.d1, seed, chunk_size or DEFAULT_CHUNK_SIZE,
            source_digest_of_audit_and_learners(), sampling_library_versions()
        )[:24]

    def record(self) -> dict[str, Any]:
        """The JSON record of ``privbound list``."""
        return {
            "name": self.name,
            "family": self.family,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "planted_bug": self.planted_bug,
            "neighbouring": self.neighbouring.value,
            "canary": self.canary,
            "float_safe": self.float_safe,
            "paper": self.paper,
            "default_trials": self.default_trials,
            "nightly_profile": self.nightly_profile,
            "description": self.description,
        }


@functools.cache
def source_digest_of_audit_and_learners() -> str:
    """A digest of the sources of :mod:`privbound.audit` and :mod:`privbound.learners` (computed once per
    process), part of every chunk-cache key: a change to any mechanism, learner or the trial engine
    invalidates cached chunks.
    """
    from privbound import audit, learners
    from privbound.audit.cache import source_digest

    return source_digest(audit, learners)


def _target_hint(close: list[str], names: list[str]) -> str:
    return f"; did you mean {close}?" if close else "; see `privbound list`"


_TARGETS: Registry[Target] = Registry(
    Target, name_of=lambda t: t.name, type_error="target must be a privbound.audit.targets.Target",
    duplicate_error="a target named {name!r} is already registered", missing_error="no target named {name!r}{hint}",
    hint=_target_hint)


def register_target(target: Target) -> Target:
    """Add a target; names are unique."""
    return _TARGETS.register(target)


def targets(family: str | None = None) -> list[Target]:
    """Registered targets in registration order, optionally of one family."""
    return _TARGETS.entries(None if family is None else lambda t: t.family == family)


def get_target(name: str) -> Target:
    """The target called ``name``; ``KeyError`` listing close names otherwise."""
    return _TARGETS.get(name)


def _dp_event_relation(mechanism: Any, neighbouring: NeighbouringRelation) -> NeighbouringRelation:
    """The relation ``mechanism.dp_event()`` is stated under: the relation of the mechanism's own guarantee when
    it states one (a primitive's event is per unit of its query's sensitivity, ``BOUNDED_QUERY_CHANGE``, whichever
    records the target's pair changes), the target's ``neighbouring`` otherwise."""
    try:
        guarantee = getattr(mechanism, "guarantee", None)
    except ValueError:  # a learner whose parameters give no guarantee
        return neighbouring
    relation = getattr(guarantee, "neighbouring", None)
    return relation if isinstance(relation, NeighbouringRelation) else neighbouring


def accountant_epsilon(mechanism: Any, delta: float, neighbouring: NeighbouringRelation) -> dict[str, float] | None:
    """A second claim from dp_accounting (PLD and RDP) when the mechanism has a DpEvent.

    ``neighbouring`` is the target's relation; the event is accounted under the relation it is stated
    under (:func:`privbound.learners.accounting.accountant_relation`): the mechanism's own guarantee's
    when it has one, else ``neighbouring``. Returns ``None`` when the mechanism describes no event an
    accountant supports under that relation.
    """
    check_neighbouring(neighbouring)
    if not hasattr(mechanism, "dp_event"):
        return None
    import dp_accounting

    event = mechanism.dp_event()
    if isinstance(event, dp_accounting.UnsupportedDpEvent):
        return None
    relation = _dp_event_relation(mechanism, neighbouring)
    out: dict[str, float] = {}
    for key in ("pld", "rdp"):
        try:
            if not make_accountant(key, neighbouring=relation).supports(event):
                continue
            eps = epsilon_of(event, delta if delta > 0 else 0.0, key, neighbouring=relation)
            if math.isfinite(eps):
                out[key] = eps
        except Exception:  # an accountant that cannot handle delta = 0 etc.
            continue
    return out or None
