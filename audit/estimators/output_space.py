"""The output-space estimator: every event of a small declared output space, on all trials."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

import numpy as np

from privbound.audit.estimators.base import (CURVE_PILOT_SHARE, Estimator, family_auroc, pilot_curve,
                                             result_from_estimate, roc_of_family)
from privbound.audit.features import output_records
from privbound.audit.result import AuditResult
from privbound.audit.statistics import SMALL_SPACE_MAX, Event, small_space_estimate

__all__ = ["OutputSpace"]


def _labels(outputs) -> list:
    """Outputs as hashable values (a scalar, or the flat tuple of a structured output)."""
    return [r[0] if len(r) == 1 else r for r in output_records(outputs)]


def pilot_ratio_scores(labels1: list, labels0: list, space: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Each output's score for the trade-off curve: the log ratio of its value's frequencies on d1 and on d0 in
    the first :data:`CURVE_PILOT_SHARE` of each side's outputs (half a count added to each value), so that the
    order of the space's values comes from outputs the curve's errors are not measured on (the likelihood-ratio
    order of Neyman--Pearson, estimated)."""
    index = {v: i for i, v in enumerate(space)}
    i1, i0 = np.array([index[v] for v in labels1]), np.array([index[v] for v in labels0])
    k1, k0 = int(CURVE_PILOT_SHARE * i1.size), int(CURVE_PILOT_SHARE * i0.size)
    c1 = np.bincount(i1[:k1], minlength=len(space)) + 0.5
    c0 = np.bincount(i0[:k0], minlength=len(space)) + 0.5
    value_score = np.log(c1 / c1.sum()) - np.log(c0 / c0.sum())
    return value_score[i1], value_score[i0]


@dataclass(frozen=True)
class OutputSpace(Estimator):
    """All trials, every event of a declared output space of 2 to 5 values, with a union bound.

    No selection split is spent: every nonempty proper subset of ``space``, in both orderings of
    the pair, is a candidate event, and two-sided Clopper--Pearson intervals at ``alpha / (4m)`` per
    tail on the ``m = 2^(k-1) - 1`` subsets that exclude the last value hold together with
    probability at least ``confidence`` (:func:`privbound.audit.statistics.small_space_estimate`).
    Validity: the space is declared by the mechanism, never inferred from the outputs; an output
    outside it is an error. The trade-off curve ranks the values by their frequency ratio on a pilot
    share of each side (:func:`pilot_ratio_scores`) and measures its errors on the other outputs.
    """

    name: ClassVar[str] = "output-space"
    space: tuple

    def __init__(self, space: Sequence[Any]) -> None:
        space = tuple(space)
        if not 2 <= len(space) <= SMALL_SPACE_MAX or len(set(space)) != len(space):
            raise ValueError(f"OutputSpace(space) must list 2 to {SMALL_SPACE_MAX} distinct values, got {space!r}")
        object.__setattr__(self, "space", space)

    def estimate(self, out0, out1, *, epsilon, delta, confidence, seed) -> AuditResult:
        labels1, labels0 = _labels(out1), _labels(out0)
        est = small_space_estimate(labels1, labels0, self.space, delta=delta, confidence=confidence)
        s1, s0 = pilot_ratio_scores(labels1, labels0, self.space)
        # the scores rank d1's values high: a test saying d1 is {s >= t}, one saying d0 (an event with d0 on top)
        # {s < t}, so that the ROC, the chosen event and the band are drawn the same way
        top = 1 if est.event is None else est.event.top
        family = Event(0.0, "ge" if top == 1 else "lt", top)
        return result_from_estimate(est, estimator=self.name, epsilon=epsilon, confidence=confidence,
                                    trials=min(len(out0), len(out1)), attack="output-value", seed=seed,
                                    details={"roc": roc_of_family(s1, s0, family)}, auc=family_auroc(s1, s0, family),
                                    tradeoff=pilot_curve(s1, s0, confidence, family.side, family.top))
