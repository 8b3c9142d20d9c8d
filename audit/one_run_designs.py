"""Choose the one-run canary design for a registered target (``privbound audit NAME --one-run``).

Issue 8, item 2. The ``batch-perceptron`` family (a
:class:`learners.perceptron.DPBatchPerceptron`, or a wrapper exposing it as ``.learner``,
under add/remove neighbours) gets m orthogonal unit canaries in one training run
(:func:`audit.one_run.perceptron_canary_one_run`); every other target gets the generic
design of :func:`audit.one_run.one_run_audit_target` (each canary is one independent
release on d1 or d0). Both are judged against the target's own claimed (epsilon, delta).

The DP-Winnow canary-round and DP-GreedyCover canary-feature designs live in
:mod:`audit.one_run_decision_lists` and are used with learners tuned for them. With the
registered winnow targets' parameters (K = 3 updates) canary rounds carry almost no
evidence: measured at m = 1000, seed 0, ``dp-winnow-release-shadow`` gives 0.0 with canary
rounds against 4.61 (flagged) with the generic design, so the generic design is the one
chosen for those families.
"""

from __future__ import annotations

from typing import Any

from audit.one_run import OneRunResult, one_run_audit_target, perceptron_canary_one_run
from learners.perceptron import DPBatchPerceptron

__all__ = ["one_run_for_target", "design_for_target"]


def design_for_target(target: Any) -> str:
    """Name of the canary design :func:`one_run_for_target` uses for ``target``."""
    learner = getattr(target.mechanism, "learner", target.mechanism)
    if target.family == "batch-perceptron" and isinstance(learner, DPBatchPerceptron) \
            and "add/remove" in (target.neighbouring or ""):
        return "perceptron-orthogonal-canaries"
    return "independent-releases"


def one_run_for_target(target: Any, m: int, seed: int = 0, *, confidence: float = 0.95,
                       n_jobs: int | None = 1) -> OneRunResult:
    """One-run audit of ``target`` with ``m`` canaries, with the learner's own canary design when it has one."""
    design = design_for_target(target)
    if design == "perceptron-orthogonal-canaries":
        learner = getattr(target.mechanism, "learner", target.mechanism)
        res = perceptron_canary_one_run(learner, target.d0, m, seed, delta=target.delta, confidence=confidence,
                                        epsilon_claimed=target.epsilon)
    else:
        res = one_run_audit_target(target, m, seed, confidence=confidence, n_jobs=n_jobs)
    res.details.update(target=target.name, design_chosen=design)
    return res
