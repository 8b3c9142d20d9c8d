"""Neighbouring relations: which pairs of inputs a differential-privacy guarantee is about.

Modelled on ``dp_accounting.NeighboringRelation`` (``ADD_OR_REMOVE_ONE``, ``REPLACE_ONE``),
with the relations the mechanisms and learners of privbound are stated for. A guarantee or an
audit target names its relation with a member of :class:`NeighbouringRelation`; what exactly
differs in a target's pair (which record, which label, which canary) is said in a separate
free-text field.
"""

from __future__ import annotations

import enum

__all__ = ["NeighbouringRelation"]


class NeighbouringRelation(str, enum.Enum):
    """The relation between the two inputs of a differential-privacy guarantee.

    * ``ADD_OR_REMOVE_ONE`` -- one dataset is the other with one record added (Dwork & Roth 2014, Def. 2.4,
      unbounded DP);
    * ``REPLACE_ONE`` -- the datasets have the same size and differ in one record (bounded DP); flipping one
      label is a special case;
    * ``REPLACE_ONE_ROUND`` -- event-level DP for an online sequence: the sequences differ in the example of
      one round (Dwork, Naor, Pitassi & Rothblum 2010);
    * ``BOUNDED_QUERY_CHANGE`` -- the input is a vector of query answers or scores and every entry moves by at
      most the mechanism's sensitivity (the setting of the exponential mechanism, report-noisy-max and the
      sparse vector technique, Dwork & Roth 2014, Sec. 3.3-3.6);
    * ``ANY_TWO_INPUTS`` -- local DP: every pair of inputs (randomised response).
    """

    ADD_OR_REMOVE_ONE = "add-or-remove-one"
    REPLACE_ONE = "replace-one"
    REPLACE_ONE_ROUND = "replace-one-round"
    BOUNDED_QUERY_CHANGE = "bounded-query-change"
    ANY_TWO_INPUTS = "any-two-inputs"

    def __str__(self) -> str:
        return self.value
