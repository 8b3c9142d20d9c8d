"""privbound.audit.estimators: the estimators, each a value with one name and one validity argument.

An estimator turns outputs sampled on d0 and d1 into a lower confidence bound on epsilon at the
claimed delta, with one call, ``estimate(out0, out1, *, epsilon, delta, confidence, seed)``, that
returns an :class:`~privbound.audit.result.AuditResult`:

=====================  ====================================  ==============================================
name                   class                                 valid when
=====================  ====================================  ==============================================
``"black-box"``        :class:`BlackBox`                     always (attack and event chosen on a selection
                                                             part, one event evaluated on the rest)
``"output-space"``     :class:`OutputSpace`                  the mechanism declares its 2-5 output values
``"white-box"``        :class:`WhiteBox`                     the log-likelihood ratio of an output is exact
``"composition"``      :class:`Composition`                  outputs are T i.i.d. steps with an exact
                                                             per-step log-likelihood ratio
``"floating-point"``   :class:`FloatingPoint`                always (the black-box estimator with the
                                                             floating-point attack among its candidates)
=====================  ====================================  ==============================================

:func:`default_estimator` chooses one from what a mechanism or target declares;
:func:`resolve_estimator` turns an ``estimator=`` argument (a value, a name or ``"auto"``) into one.
The threshold strategies of the black-box estimator (:class:`Split`, :class:`AllThresholds`,
:class:`Explicit`) live in :mod:`privbound.audit.statistics` and are re-exported here.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from privbound.audit.attacks.library import Attack, ScoreAttack
from privbound.audit.estimators.base import Estimator
from privbound.audit.estimators.black_box import BlackBox, FloatingPoint
from privbound.audit.estimators.composition import Composition
from privbound.audit.estimators.output_space import OutputSpace
from privbound.audit.estimators.whitebox import WhiteBox
from privbound.audit.statistics import SMALL_SPACE_MAX, AllThresholds, Explicit, Split

__all__ = [
    "ESTIMATORS",
    "AllThresholds",
    "BlackBox",
    "Composition",
    "Estimator",
    "Explicit",
    "FloatingPoint",
    "OutputSpace",
    "Split",
    "WhiteBox",
    "default_estimator",
    "resolve_estimator",
]

# Every estimator by its one name.
ESTIMATORS = {cls.name: cls for cls in (BlackBox, OutputSpace, WhiteBox, Composition, FloatingPoint)}


def default_estimator(
    *,
    step_log_likelihood_ratio: Callable | None = None,
    log_likelihood_ratio: Callable | None = None,
    score: Callable | None = None,
    attack: Attack | str = "auto",
    output_space: Sequence[Any] | None = None,
) -> Estimator:
    """The estimator for what a mechanism or target declares, the first that applies of:

    1. exact per-step log-likelihood ratios of i.i.d. steps: :class:`Composition`, which reads every
       step of every trial (the most evidence per trial);
    2. an exact log-likelihood ratio: :class:`WhiteBox`, which dominates every threshold test when the
       density is exact;
    3. a test statistic (``score``) or an attack: :class:`BlackBox` with it, the declarer's best test
       (the split keeps the bound valid whatever the statistic);
    4. an output space of at most five values: :class:`OutputSpace`, every event on all trials, no
       trial spent on selection;
    5. nothing: :class:`BlackBox` with the attack portfolio.
    """
    if step_log_likelihood_ratio is not None:
        return Composition(step_log_likelihood_ratio)
    if log_likelihood_ratio is not None:
        return WhiteBox(log_likelihood_ratio)
    if score is not None:
        return BlackBox(attack=ScoreAttack(score))
    if not (isinstance(attack, str) and attack == "auto"):
        return BlackBox(attack=attack)
    if output_space is not None and len(output_space) <= SMALL_SPACE_MAX:
        return OutputSpace(output_space)
    return BlackBox()


def resolve_estimator(estimator: Estimator | str, *, attack: Attack | str = "auto", **declarations: Any) -> Estimator:
    """The estimator an ``estimator=`` argument names.

    An :class:`Estimator` is used as it is (``attack`` must then be ``"auto"``: an attack belongs to
    the black-box estimators, ``BlackBox(attack=...)``). ``"auto"`` is :func:`default_estimator` of the
    ``declarations`` (``step_log_likelihood_ratio``, ``log_likelihood_ratio``, ``score``,
    ``output_space``). A name of :data:`ESTIMATORS` builds that estimator from ``attack`` and the
    declarations it needs.
    """
    attack_given = not (isinstance(attack, str) and attack == "auto")
    if isinstance(estimator, Estimator):
        if attack_given:
            raise TypeError(f"attack={attack!r} is an argument of the black-box estimators; with an estimator "
                            f"value pass it there, e.g. BlackBox(attack=...), not beside {estimator!r}")
        return estimator
    if not isinstance(estimator, str):
        raise TypeError(f"estimator must be an Estimator or one of {sorted(ESTIMATORS) + ['auto']}, "
                        f"got {type(estimator).__name__}")
    score = declarations.get("score")
    black_box_attack = ScoreAttack(score) if score is not None and not attack_given else attack
    if estimator == "auto":
        return default_estimator(attack=attack, **declarations)
    if estimator == BlackBox.name:
        return BlackBox(attack=black_box_attack)
    if estimator == FloatingPoint.name:
        return FloatingPoint(attack=attack)
    needs = {OutputSpace.name: "output_space", WhiteBox.name: "log_likelihood_ratio",
             Composition.name: "step_log_likelihood_ratio"}
    if estimator not in needs:
        raise ValueError(f"estimator must be an Estimator or one of {sorted(ESTIMATORS) + ['auto']}, got {estimator!r}")
    declared = declarations.get(needs[estimator])
    if declared is None:
        raise ValueError(f"estimator={estimator!r} needs the {needs[estimator]} the mechanism or target declares, "
                         f"and there is none: pass {ESTIMATORS[estimator].__name__}(...) with it")
    if attack_given:
        raise TypeError(f"attack={attack!r} is an argument of the black-box estimators, not of {estimator!r}")
    return ESTIMATORS[estimator](declared)
