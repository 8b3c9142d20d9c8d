"""The black-box estimators: an attack's event chosen on a selection part, evaluated on the rest.

:class:`BlackBox` -- the default when a mechanism declares nothing about its output law -- and
:class:`FloatingPoint`, the same estimator with the floating-point attack in its portfolio.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from privbound.audit.attacks.choice import attack_scores, candidate_attacks, choose_on_selection
from privbound.audit.attacks.floating import FloatingPointAttack
from privbound.audit.attacks.library import Attack, ThresholdAttack
from privbound.audit.estimators.base import (Estimator, family_auroc, pilot_curve, pilot_side,
                                             result_from_estimate, roc_of_family)
from privbound.audit.features import is_scalar_numeric
from privbound.audit.result import AuditResult
from privbound.audit.tradeoff import TradeOffCurve, curve_of_event_family
from privbound.audit.statistics import (
    AllThresholds,
    Event,
    Explicit,
    Split,
    estimate_epsilon,
    label_event,
    evaluate_event,
    event_coins,
    null_estimate,
)

__all__ = ["BlackBox", "FloatingPoint", "SCALAR_SELECTION", "GENERAL_SELECTION"]

# Share of the trials that selects attack and event when no Split is given: scalar outputs (the
# threshold attack needs no fitting) and attacks that do not learn take the smaller one; attacks
# that learn on other outputs are fitted there too.
SCALAR_SELECTION = 0.2
GENERAL_SELECTION = 0.3


# Selection outputs per side whose scores place the trade-off curve's thresholds (a subsample of larger parts).
_CURVE_SELECTION = 20_000


def _family_curve(attack: Attack, sel0, sel1, e_in, e_out, event, confidence: float) -> TradeOffCurve | None:
    """The trade-off curve of the chosen event's family: thresholds from the chosen attack's scores on (at most
    :data:`_CURVE_SELECTION` of) the selection outputs, errors on the evaluation scores ``e_in`` (d1), ``e_out`` (d0);
    ``None`` with fewer than :data:`~privbound.audit.tradeoff.MIN_CURVE_OUTPUTS` of them per side."""
    side, top = ("ge", 1) if event is None else (event.side, event.top)
    s_in = attack_scores(attack, sel1[:_CURVE_SELECTION])
    s_out = attack_scores(attack, sel0[:_CURVE_SELECTION])
    return curve_of_event_family(s_in, s_out, e_in, e_out, side=side, top=top, confidence=confidence)


@dataclass(frozen=True)
class BlackBox(Estimator):
    """Black-box: an attack and one threshold event chosen on a selection part, evaluated on the rest.

    The trials are split once, in trial order, into a selection part (the first ``fraction`` of each
    side: ``strategy=Split(fraction)``, else 20% when every output is one real number or no candidate
    attack learns, 30% otherwise) and an evaluation part. Every candidate attack (the portfolio of
    :func:`privbound.audit.attacks.choice.portfolio` for ``attack="auto"``, else the one given) is
    cross-fitted on the two halves of the selection part when it learns; attack, threshold event
    (possibly randomised at a tie, as DP-Sniper does) and the test of its counts are chosen together
    by the bound they are predicted to certify (:func:`~privbound.audit.attacks.choice.choose_on_selection`);
    the chosen attack, refitted on the whole selection part, scores the evaluation part, which gives
    the Clopper--Pearson (or conditional) bound of that one event.

    Validity: attack, fit and event depend on the selection part only, and the evaluation trials
    are i.i.d. and independent of it, so the one-event bound holds at ``confidence`` with no
    multiplicity correction (Jagielski, Ullman & Oprea, NeurIPS 2020; Bichsel et al., S&P 2021). It
    assumes nothing about the output law.

    ``strategy=AllThresholds()`` or ``Explicit(...)`` evaluate on all trials instead (Bonferroni over
    every threshold, or one event fixed in advance): for an attack that does not learn.
    """

    name: ClassVar[str] = "black-box"
    float_audit: ClassVar[bool] = False  # whether a violation says "float-unsafe"
    attack: Attack | str = "auto"
    strategy: Split | AllThresholds | Explicit | None = None

    def __post_init__(self) -> None:
        candidate_attacks(self.attack, np.zeros(1))  # a clear error for an attack that is neither
        if self.strategy is not None and not isinstance(self.strategy, (Split, AllThresholds, Explicit)):
            raise TypeError(f"strategy must be Split, AllThresholds or Explicit, got {type(self.strategy).__name__}")

    def candidates(self, out0: np.ndarray) -> list[Attack]:
        """The attacks this estimator chooses from, for outputs like ``out0``."""
        return candidate_attacks(self.attack, out0[:1])

    def selection_fraction(self, out0: np.ndarray, candidates: list[Attack] | None = None) -> float:
        """The share of each side's trials (the first, in trial order) that selects attack and event: the
        Split's fraction, else 20% for scalar outputs or attacks that do not learn and 30% otherwise."""
        if self.strategy is not None:
            if not isinstance(self.strategy, Split):
                raise ValueError(f"strategy {self.strategy!r} has no selection part")
            return self.strategy.fraction
        cands = self.candidates(out0) if candidates is None else candidates
        learns = any(c.needs_training for c in cands)
        return SCALAR_SELECTION if is_scalar_numeric(out0[:1]) or not learns else GENERAL_SELECTION

    def estimate(self, out0, out1, *, epsilon, delta, confidence, seed) -> AuditResult:
        cands = self.candidates(out0)
        if self.strategy is not None and not isinstance(self.strategy, Split):
            return self._all_trials(out0, out1, cands, epsilon=epsilon, delta=delta, confidence=confidence, seed=seed)
        return self._split(out0, out1, cands, self.selection_fraction(out0, cands), epsilon=epsilon, delta=delta,
                           confidence=confidence, seed=seed)

    def _split(self, out0, out1, candidates, fraction, *, epsilon, delta, confidence, seed) -> AuditResult:
        n_sel0, n_sel1 = int(math.floor(fraction * len(out0))), int(math.floor(fraction * len(out1)))
        if min(n_sel0, n_sel1) < 1 or min(len(out0) - n_sel0, len(out1) - n_sel1) < 1:
            raise ValueError(f"Split(fraction={fraction}) needs at least one selection and one evaluation trial on "
                             f"each side; got {len(out0)} and {len(out1)} trials")
        sel0, sel1, ev0, ev1 = out0[:n_sel0], out1[:n_sel1], out0[n_sel0:], out1[n_sel1:]
        alpha = 1.0 - confidence
        choice = choose_on_selection(sel0, sel1, candidates, len(ev1), len(ev0), delta=delta, alpha=alpha)
        event = label_event(choice.event, choice.attack)  # a labelled output's event names the label
        e_in, e_out = attack_scores(choice.attack, ev1), attack_scores(choice.attack, ev0)
        method = f"{choice.test}/split({fraction:g})"
        if event is None:
            est = null_estimate(e_in.size, e_out.size, delta=delta, confidence=confidence, method=method)
        else:
            coins = event_coins(seed, e_in.size, e_out.size) if event.tie_fraction is not None else (None, None)
            est = evaluate_event(e_in, e_out, event, delta=delta, alpha=alpha, n_candidates=1, method=method,
                                 confidence=confidence, coins_in=coins[0], coins_out=coins[1], test=choice.test)
            if not choice.predicted > 0.0 and not est.epsilon_lower_bound > 0.0:
                est = null_estimate(e_in.size, e_out.size, delta=delta, confidence=confidence, method=method)
        # the chosen event's family, as the trade-off curve's (kept when the estimate falls back to no event)
        details = {"roc": roc_of_family(e_in, e_out, event), "attack_selection": choice.table,
                   "selection_trials": min(n_sel0, n_sel1)}
        curve = _family_curve(choice.attack, sel0, sel1, e_in, e_out, event, confidence)  # chosen on selection
        return result_from_estimate(est, estimator=self.name, epsilon=epsilon, confidence=confidence,
                                    trials=min(len(out0), len(out1)), attack=choice.attack.name, seed=seed,
                                    details=details, auc=family_auroc(e_in, e_out, event),
                                    float_audit=self.float_audit,
                                    tradeoff=curve)

    def _all_trials(self, out0, out1, candidates, *, epsilon, delta, confidence, seed) -> AuditResult:
        """``AllThresholds`` / ``Explicit``: every trial evaluates, so the attack must not learn."""
        atk = candidates[0]
        if len(candidates) > 1:
            if not is_scalar_numeric(out0[:1]):
                raise ValueError(f"strategy {self.strategy!r} evaluates on all trials and needs an attack that does "
                                 "not learn; the outputs are not scalars: give attack=, or use a Split")
            atk = ThresholdAttack()
        if atk.needs_training:
            raise ValueError(f"attack {atk.name!r} learns from data and needs a Split strategy, got {self.strategy!r}")
        s0, s1 = attack_scores(atk, out0), attack_scores(atk, out1)
        est = estimate_epsilon(s1, s0, delta=delta, confidence=confidence, strategy=self.strategy, seed=seed)
        # no selection part to choose a test family on: the curve's thresholds from a pilot share, its orientation
        # the chosen event's (with none, the pilot's), so that the ROC, the chosen test and the band agree
        family = est.event or Event(0.0, pilot_side(s1, s0), 1)
        return result_from_estimate(est, estimator=self.name, epsilon=epsilon, confidence=confidence,
                                    trials=min(len(out0), len(out1)), attack=atk.name, seed=seed,
                                    details={"roc": roc_of_family(s1, s0, family)},
                                    auc=family_auroc(s1, s0, family), float_audit=self.float_audit,
                                    tradeoff=pilot_curve(s1, s0, confidence, family.side, family.top))


@dataclass(frozen=True)
class FloatingPoint(BlackBox):
    """Floating-point: the black-box estimator with the floating-point attack among its candidates.

    The attack (:mod:`privbound.audit.attacks.floating`; Mironov, CCS 2012) scores an output by how
    it is represented relative to the datasets' exact answers ``centers`` (``(f(d0), f(d1))``: from the
    mechanism's ``answer`` when it has one, otherwise estimated from the selection outputs), so a
    violation says the implementation is float-unsafe at the claimed epsilon. Validity: that of
    :class:`BlackBox` -- the attack is one more candidate chosen on the selection part.
    """

    name: ClassVar[str] = "floating-point"
    float_audit: ClassVar[bool] = True
    centers: tuple[Any, Any] | None = None

    def candidates(self, out0: np.ndarray) -> list[Attack]:
        if isinstance(self.attack, FloatingPointAttack):
            return [self.attack]
        return candidate_attacks(self.attack, out0[:1]) + [FloatingPointAttack(centers=self.centers)]

    @classmethod
    def attack_only(cls, mechanism: Any, d0: Any, d1: Any) -> "FloatingPoint":
        """The floating-point attack alone (the default audit's float verdict), with the mechanism's answers."""
        answer = getattr(mechanism, "answer", None)
        centers = (answer(d0), answer(d1)) if callable(answer) else None
        return cls(attack=FloatingPointAttack(centers=centers), centers=centers)

    def for_mechanism(self, mechanism: Any, d0: Any, d1: Any) -> "FloatingPoint":
        """The exact answers from the mechanism's ``answer(d)`` when it has one and ``centers`` is not given."""
        answer = getattr(mechanism, "answer", None)
        if self.centers is not None or not callable(answer):
            return self
        centers = (answer(d0), answer(d1))
        attack = FloatingPointAttack(centers=centers) if isinstance(self.attack, FloatingPointAttack) else self.attack
        return FloatingPoint(attack=attack, strategy=self.strategy, centers=centers)
