"""The output-space estimator: every event of a small declared output space, on all trials."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

from privbound.audit.estimators.base import Estimator, result_from_estimate
from privbound.audit.features import output_records
from privbound.audit.result import AuditResult
from privbound.audit.statistics import SMALL_SPACE_MAX, small_space_estimate

__all__ = ["OutputSpace"]


def _labels(outputs) -> list:
    """Outputs as hashable values (a scalar, or the flat tuple of a structured output)."""
    return [r[0] if len(r) == 1 else r for r in output_records(outputs)]


@dataclass(frozen=True)
class OutputSpace(Estimator):
    """All trials, every event of a declared output space of 2 to 5 values, with a union bound.

    No selection split is spent: every nonempty proper subset of ``space``, in both orderings of
    the pair, is a candidate event, and two-sided Clopper--Pearson intervals at ``alpha / (4m)`` per
    tail on the ``m = 2^(k-1) - 1`` subsets that exclude the last value hold together with
    probability at least ``confidence`` (:func:`privbound.audit.statistics.small_space_estimate`).
    Validity: the space is declared by the mechanism, never inferred from the outputs; an output
    outside it is an error.
    """

    name: ClassVar[str] = "output-space"
    space: tuple

    def __init__(self, space: Sequence[Any]) -> None:
        space = tuple(space)
        if not 2 <= len(space) <= SMALL_SPACE_MAX or len(set(space)) != len(space):
            raise ValueError(f"OutputSpace(space) must list 2 to {SMALL_SPACE_MAX} distinct values, got {space!r}")
        object.__setattr__(self, "space", space)

    def estimate(self, out0, out1, *, epsilon, delta, confidence, seed) -> AuditResult:
        est = small_space_estimate(_labels(out1), _labels(out0), self.space, delta=delta, confidence=confidence)
        return result_from_estimate(est, estimator=self.name, epsilon=epsilon, confidence=confidence,
                                    trials=min(len(out0), len(out1)), attack="output-value", seed=seed, details={})
