"""The choice of attack: the portfolio, its fit on the selection part, and the prediction that picks one.

Every black-box estimate chooses its attack here, and so do the callers that need one scorer (the
neighbour search ranking pairs, the one-run audit scoring canaries):

* :func:`portfolio` -- the candidate attacks for a kind of output;
* :func:`candidate_attacks` -- the one attack given (an :class:`~privbound.audit.attacks.library.Attack`
  or a name of :data:`ATTACK_NAMES`), or the portfolio for ``"auto"``;
* :func:`choose_on_selection` -- attack, threshold event and test of its counts, chosen together on
  the selection part only, by the bound they are predicted to certify on the evaluation part, with
  the strongest evidence of a difference as the fallback when nothing is predicted to certify;
* :func:`single_attack` -- one attack by a rule on a few outputs, where one scorer is wanted.

An attack that learns is judged only on outputs it was not fitted on (:func:`fitted_candidates`),
so the choice depends on the selection part alone and the evaluation part keeps its level.
"""

from __future__ import annotations

import copy
from typing import Any, Iterator, Sequence

import numpy as np

from privbound.audit.attacks.floating import FloatingPointAttack
from privbound.audit.attacks.library import (
    Attack,
    BoostingAttack,
    LogisticAttack,
    PlugInAttack,
    SinglePatternAttack,
    ThresholdAttack,
)
from privbound.audit.features import is_scalar_numeric, pattern_keys
from privbound.audit.statistics import Event, best_event, choose_event_test, strongest_difference_event

__all__ = [
    "ATTACK_NAMES",
    "DISCRETE_MAX_PATTERNS",
    "AttackChoice",
    "attack_by_name",
    "portfolio",
    "candidate_attacks",
    "attack_scores",
    "fitted_candidates",
    "choose_on_selection",
    "single_attack",
]

# Every attack that can be asked for by name, by its one name.
ATTACK_NAMES = {cls.name: cls for cls in (ThresholdAttack, PlugInAttack, SinglePatternAttack, LogisticAttack,
                                           BoostingAttack, FloatingPointAttack)}

# At most this many distinct output patterns make the plug-in the single attack of :func:`single_attack`.
DISCRETE_MAX_PATTERNS = 64


def attack_by_name(name: str) -> Attack:
    """A fresh attack for one of :data:`ATTACK_NAMES`."""
    try:
        return ATTACK_NAMES[name]()
    except KeyError:
        raise ValueError(f"attack must be an Attack or one of {sorted(ATTACK_NAMES) + ['auto']}, got {name!r}") from None


def portfolio(outputs: Any) -> list[Attack]:
    """The candidate attacks for outputs of this kind (judged from a few outputs of the selection part).

    One real number per output: the threshold attack, the plug-in likelihood ratio and the single
    most distinguishing pattern (for atoms and ties); anything else: the plug-in likelihood ratio,
    the single pattern, logistic regression and gradient boosting on engineered features.
    """
    if is_scalar_numeric(outputs):
        return [ThresholdAttack(), PlugInAttack(), SinglePatternAttack()]
    return [PlugInAttack(), SinglePatternAttack(), LogisticAttack(), BoostingAttack()]


def candidate_attacks(attack: Attack | str, sample: Any) -> list[Attack]:
    """The attacks to choose from: ``[attack]``, or the portfolio for outputs like ``sample`` when ``"auto"``."""
    if isinstance(attack, Attack):
        return [attack]
    if not isinstance(attack, str):
        raise TypeError(f"attack must be a privbound.audit.attacks.Attack or one of "
                        f"{sorted(ATTACK_NAMES) + ['auto']}, got {type(attack).__name__}")
    if attack == "auto":
        return portfolio(sample)
    return [attack_by_name(attack)]


def attack_scores(attack: Attack, outputs) -> np.ndarray:
    """``attack.score(outputs)`` checked: one finite score per output."""
    s = np.asarray(attack.score(outputs), dtype=float)
    if s.shape != (len(outputs),) or not np.all(np.isfinite(s)):
        raise ValueError(f"attack {attack.name!r} did not return one finite score per output")
    return s


def fitted_candidates(candidates: Sequence[Attack], sel0, sel1, table: list) -> Iterator[tuple]:
    """``(attack, selection scores on d1, on d0, attack to evaluate with)`` for each candidate that applies.

    An attack that does not learn scores the selection part as it is, and so does one that is
    ``judged_on_fit`` (fitted on the whole selection part: its fit only chooses among a few events).
    Any other attack that learns is judged only on outputs it was not fitted on:

    * ``refit_on_selection`` (smooth classifiers, whose scores keep their scale when refitted on
      more data): cross-fitted on the two halves (each half scored by the model of the other),
      then refitted on the whole selection part to score the evaluation part (``None`` as the
      attack to evaluate with says so);
    * otherwise (the plug-in table, whose cells change with the sample size): fitted on one half
      and judged on the other, both ways round -- two candidates, each evaluated with its own fit.

    A candidate that does not apply to these outputs is listed in ``table`` with the reason.
    """
    h0, h1 = len(sel0) // 2, len(sel1) // 2
    for atk in candidates:
        try:
            if not atk.needs_training:
                yield atk, attack_scores(atk, sel1), attack_scores(atk, sel0), atk
                continue
            if atk.judged_on_fit:
                fitted = copy.deepcopy(atk).fit(sel0, sel1)
                yield fitted, attack_scores(fitted, sel1), attack_scores(fitted, sel0), fitted
                continue
            if min(h0, h1) < 1:
                raise ValueError("too few selection trials to fit the attack on half of them")
            first = copy.deepcopy(atk).fit(sel0[:h0], sel1[:h1])
            second = copy.deepcopy(atk).fit(sel0[h0:], sel1[h1:])
            if atk.refit_on_selection:
                s_in = np.concatenate([attack_scores(second, sel1[:h1]), attack_scores(first, sel1[h1:])])
                s_out = np.concatenate([attack_scores(second, sel0[:h0]), attack_scores(first, sel0[h0:])])
                yield atk, s_in, s_out, None
            else:
                yield first, attack_scores(first, sel1[h1:]), attack_scores(first, sel0[h0:]), first
                yield second, attack_scores(second, sel1[:h1]), attack_scores(second, sel0[:h0]), second
        except (TypeError, ValueError) as exc:
            table.append({"attack": atk.name, "predicted": None, "evidence": None, "skipped": str(exc)})


class AttackChoice(tuple):
    """``(attack, event, test, predicted, table)`` of :func:`choose_on_selection` (a named tuple)."""

    __slots__ = ()

    def __new__(cls, attack: Attack, event: Event | None, test: str, predicted: float, table: list):
        return super().__new__(cls, (attack, event, test, predicted, table))

    attack = property(lambda self: self[0], doc="The chosen attack, fitted on the selection part.")
    event = property(lambda self: self[1], doc="The chosen event (None when nothing can be chosen).")
    test = property(lambda self: self[2], doc="The test of the event's counts (one of statistics.TESTS).")
    predicted = property(lambda self: self[3], doc="The best predicted bound (<= 0: the evidence chose).")
    table = property(lambda self: self[4], doc="Each candidate's prediction and evidence.")


def choose_on_selection(sel0, sel1, candidates: Sequence[Attack], n_eval_in: int, n_eval_out: int, *,
                        delta: float, alpha: float) -> AttackChoice:
    """The attack (fitted on the selection part), event and test to evaluate with.

    Every candidate is fitted and judged on the selection outputs only (:func:`fitted_candidates`);
    attack and event are chosen together by the bound predicted on ``n_eval_in`` / ``n_eval_out``
    evaluation outputs, or, when no candidate is predicted to certify, by the strongest evidence
    of a difference (a valid bound either way, and often positive on small samples); the test of
    the event's counts is the one predicted to certify more from the event's selection rates
    (:func:`~privbound.audit.statistics.choose_event_test`).
    """
    table, scored = [], []
    for atk, s_in, s_out, scorer in fitted_candidates(candidates, sel0, sel1, table):
        pred, event = best_event(s_in, s_out, n_eval_in, n_eval_out, delta=delta, alpha=alpha,
                                 families=(0, 1, 2, 3), randomize_ties=True)
        z, z_event = strongest_difference_event(s_in, s_out, delta=delta)
        table.append({"attack": atk.name, "predicted": pred, "evidence": z})
        scored.append((atk, pred, event, z, z_event, scorer, s_in, s_out))
    if not scored:
        raise ValueError("no candidate attack applies to these outputs: " + "; ".join(
            f"{row['attack']}: {row['skipped']}" for row in table))
    best = max(scored, key=lambda c: c[1])  # first maximum: the portfolio's order breaks ties
    if best[1] > 0.0:
        atk, _, event, _, _, scorer, s_in, s_out = best
    else:
        atk, _, _, _, event, scorer, s_in, s_out = max(scored, key=lambda c: c[3])
    test = "clopper-pearson" if event is None else choose_event_test(event, s_in, s_out, n_eval_in, n_eval_out,
                                                                     delta=delta, alpha=alpha)
    final = copy.deepcopy(atk).fit(sel0, sel1) if scorer is None else scorer
    return AttackChoice(final, event, test, best[1], table)


def single_attack(out0: np.ndarray, out1: np.ndarray) -> Attack:
    """One attack (unfitted) by a rule on the first 2000 outputs of each side, where one scorer is wanted.

    Few distinct output patterns (at most :data:`DISCRETE_MAX_PATTERNS`, and at most half of the outputs
    looked at, so that patterns repeat): the plug-in likelihood ratio; scalar outputs: the threshold attack;
    otherwise gradient boosting.
    """
    look0, look1 = out0[:2000], out1[:2000]
    distinct = len(set(pattern_keys(look0)) | set(pattern_keys(look1)))
    if distinct <= min(DISCRETE_MAX_PATTERNS, (len(look0) + len(look1)) // 2):
        return PlugInAttack()
    if is_scalar_numeric(look0) and is_scalar_numeric(look1):
        return ThresholdAttack()
    return BoostingAttack()
