"""Choose the one-run canary design for a registered target (``privbound audit NAME --one-run``).

Issue 8, item 2 (Steinke, Nasr & Jagielski 2023: m canaries, each included with probability
1/2, ONE run of the learner). Rule of :func:`design_for_target`, first match wins:

1. a target tagged ``"one-run-design:<name>"`` (``Target.tags``;
   :data:`audit.one_run_decision_lists.DESIGN_TAG_PREFIX`) gets the learner's design ``<name>``:
   ``"dp-winnow-canary-rounds"`` (:func:`audit.one_run_decision_lists.dp_winnow_canary_one_run`:
   DP-Winnow, Algorithm 4.2, event-level replace-one) or ``"greedy-cover-canary-features"``
   (:func:`audit.one_run_decision_lists.greedy_cover_canary_one_run`: DP-GreedyCover, Sec. 3.1,
   replace-one). The learner, the planted bug (``release``, ``query_every_round``, the run's
   ``epsilon_step``) and the claim are read from the target (its mechanism wrapper and its own
   claimed (epsilon, delta)); untagged targets listed in :data:`MEASURED_ROUTES` likewise;
2. the ``batch-perceptron`` family (a :class:`learners.perceptron.DPBatchPerceptron`, or a
   wrapper exposing it as ``.learner``, under add/remove neighbours) gets m orthogonal unit
   canaries in one training run (:func:`audit.one_run.perceptron_canary_one_run`);
3. every other target gets the generic design of :func:`audit.one_run.one_run_audit_target`
   (each canary is one independent release on d1 or d0: m releases, not one run).

The tag is opt-in because the canary designs carry evidence only with learners tuned for
them. Measured at m = 1000, seeds 0-2 (bound / claim; canary design vs generic design):

* targets tagged (the one-run targets of :mod:`audit.targets_decision_lists`):
  ``dp-winnow-one-run`` 0.0-0.73 over seeds 0-7 (0.38, 0.38, 0.73, 0.39, 0.33, 0.42, 0.0, 0.02;
  mean 0.33) / 3.06, not flagged; the generic design gives 0.21-0.34 (seeds 0-2);
  ``dp-winnow-one-run-query-on-mistakes``, ``-release-shadow`` 3.68 and
  ``winnow-one-run-release-weights`` 3.68-4.60, all flagged (> 3.06);
  ``greedy-cover-one-run`` 0.0-0.21 (seeds 0-5) / 3.54, not flagged;
  ``greedy-cover-one-run-step-40`` 4.53-5.23 (seeds 0-4), flagged. With the generic design
  ``dp-winnow-one-run-query-on-mistakes`` is missed (1.01-1.29), the rest agree.
* untagged DP-Winnow targets (K = 3 updates): canary rounds are weaker, e.g.
  ``dp-winnow-release-shadow`` 0.0 vs 4.61-5.31 (the generic design flags it, canary rounds do
  not), ``dp-winnow-replay`` 0.0 vs 0.18-0.26, ``winnow-release-weights`` 3.69-4.61 vs
  4.61-5.31: generic design.
* ``greedy-cover-canary`` (delta = 1e-3): 0.0 with both designs (2 m delta = 2 makes every
  SNJ p-value vacuous): generic design (cheaper, 0.01 s vs 1.1 s).
* ``greedy-cover-accumulation`` and ``greedy-cover-one-round-claim`` (eps_step = 4): canary
  features 1.57-1.81 (mean 1.71, seeds 0-9) vs generic 1.18-1.88 (mean 1.47-1.48), canary >=
  generic at 9 of 10 seeds: routed to canary features by name (:data:`MEASURED_ROUTES`;
  the registered targets are unchanged). Neither design flags the one-round-claim bug in one
  run (claim 4; a canary is eps_step/2 = 2 randomised response, so ~1.7 is what one run shows);
  the many-trial auditor does.
"""

from __future__ import annotations

from typing import Any

from audit.one_run import OneRunResult, one_run_audit_target, perceptron_canary_one_run
from audit.one_run_decision_lists import (
    DESIGN_TAG_PREFIX,
    GREEDY_COVER_CANARY_FEATURES,
    WINNOW_CANARY_ROUNDS,
    dp_winnow_canary_one_run,
    greedy_cover_canary_one_run,
)
from audit.targets_decision_lists import DPWinnowMechanism, GreedyCoverMechanism, WinnowReleaseWeights
from learners.decision_lists import DPGreedyCover
from learners.perceptron import DPBatchPerceptron
from learners.winnow import DPWinnow

__all__ = ["one_run_for_target", "design_for_target", "canary_design_one_run", "CANARY_DESIGNS",
           "MEASURED_ROUTES"]

CANARY_DESIGNS = (WINNOW_CANARY_ROUNDS, GREEDY_COVER_CANARY_FEATURES)

# Registered targets without a design tag for which the canary design measured at least as
# strong as the generic one (module docstring: m = 1000, seeds 0-9).
MEASURED_ROUTES = {
    "greedy-cover-accumulation": GREEDY_COVER_CANARY_FEATURES,
    "greedy-cover-one-round-claim": GREEDY_COVER_CANARY_FEATURES,
}


def design_for_target(target: Any) -> str:
    """Name of the canary design :func:`one_run_for_target` uses for ``target`` (rule: module docstring)."""
    for tag in getattr(target, "tags", ()) or ():
        if tag.startswith(DESIGN_TAG_PREFIX):
            name = tag[len(DESIGN_TAG_PREFIX):]
            if name not in CANARY_DESIGNS:
                raise ValueError(f"target {target.name!r}: unknown one-run design {name!r}; "
                                 f"known: {CANARY_DESIGNS}")
            return name
    if getattr(target, "name", None) in MEASURED_ROUTES:
        return MEASURED_ROUTES[target.name]
    learner = getattr(target.mechanism, "learner", target.mechanism)
    if target.family == "batch-perceptron" and isinstance(learner, DPBatchPerceptron) \
            and "add/remove" in (target.neighbouring or ""):
        return "perceptron-orthogonal-canaries"
    return "independent-releases"


def canary_design_one_run(target: Any, design: str, m: int, seed: int = 0, *,
                          confidence: float = 0.95) -> OneRunResult:
    """Run the decision-list / Winnow canary ``design`` on ``target``'s learner, against ``target``'s claim.

    DP-Winnow: the mechanism is a :class:`~audit.targets_decision_lists.DPWinnowMechanism` (its
    learner, ``release`` and ``query_every_round``) or a
    :class:`~audit.targets_decision_lists.WinnowReleaseWeights` (``release="winnow"``, its eta).
    DP-GreedyCover: a :class:`~audit.targets_decision_lists.GreedyCoverMechanism`, whose
    ``epsilon_step`` is the per-round parameter the rounds run with. Used by
    :func:`one_run_for_target` for tagged targets; callable on any target of those families
    (this is how the untagged ones were compared with the generic design).
    """
    mech = target.mechanism
    claim = dict(epsilon_claimed=target.epsilon, delta=target.delta)
    if design == WINNOW_CANARY_ROUNDS:
        if isinstance(mech, DPWinnowMechanism):
            return dp_winnow_canary_one_run(mech.learner, m, seed, release=mech.release,
                                            query_every_round=mech.query_every_round, confidence=confidence, **claim)
        if isinstance(mech, WinnowReleaseWeights):
            # only eta is used by release="winnow"; the claim is the target's
            return dp_winnow_canary_one_run(DPWinnow(eta=mech.eta), m, seed, release="winnow",
                                            confidence=confidence, **claim)
    elif design == GREEDY_COVER_CANARY_FEATURES:
        if isinstance(mech, GreedyCoverMechanism):
            learner = DPGreedyCover(epsilon_step=mech.epsilon_step)  # the claim is the target's (below)
            return greedy_cover_canary_one_run(learner, m, seed, confidence=confidence, **claim)
    else:
        raise ValueError(f"unknown canary design {design!r}; known: {CANARY_DESIGNS}")
    raise TypeError(f"target {target.name!r}: design {design!r} does not apply to a "
                    f"{type(mech).__name__} mechanism")


def one_run_for_target(target: Any, m: int, seed: int = 0, *, confidence: float = 0.95,
                       n_jobs: int | None = 1) -> OneRunResult:
    """One-run audit of ``target`` with ``m`` canaries, with the learner's own canary design when it has one."""
    design = design_for_target(target)
    if design == "perceptron-orthogonal-canaries":
        learner = getattr(target.mechanism, "learner", target.mechanism)
        res = perceptron_canary_one_run(learner, target.d0, m, seed, delta=target.delta, confidence=confidence,
                                        epsilon_claimed=target.epsilon)
    elif design in CANARY_DESIGNS:
        res = canary_design_one_run(target, design, m, seed, confidence=confidence)
    else:
        res = one_run_audit_target(target, m, seed, confidence=confidence, n_jobs=n_jobs)
    res.details.update(target=target.name, design_chosen=design)
    return res
