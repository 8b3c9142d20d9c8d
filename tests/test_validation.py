"""privbound._validation: declared parameter constraints and their messages.

Deterministic: no error rate to state.
"""

from __future__ import annotations

from numbers import Integral, Real

import pytest

from privbound._validation import Interval, InvalidParameterError, StrOptions, validate_parameters


class _Owner:
    _parameter_constraints = {
        "rate": [Interval(Real, 0, 1, closed="right")],
        "steps": [Interval(Integral, 1, None, closed="left"), None],
        "mode": [StrOptions({"fast", "exact"})],
        "table": [dict, None],
    }

    def __init__(self, rate=0.5, steps=3, mode="fast", table=None):
        self.rate, self.steps, self.mode, self.table = rate, steps, mode, table


def test_values_inside_their_constraints_pass():
    validate_parameters(_Owner())
    validate_parameters(_Owner(rate=1, steps=None, mode="exact", table={}))


@pytest.mark.parametrize("kwargs, message", [
    ({"rate": 0.0}, "The 'rate' parameter of _Owner must be a float in the range (0.0, 1.0]. Got 0.0 instead."),
    ({"rate": float("nan")}, "The 'rate' parameter of _Owner must be a float in the range (0.0, 1.0]. Got nan instead."),
    ({"rate": True}, "The 'rate' parameter of _Owner must be a float in the range (0.0, 1.0]. Got True instead."),
    ({"steps": 1.5}, "The 'steps' parameter of _Owner must be an int in the range [1, inf) or None. Got 1.5 instead."),
    ({"steps": 0}, "The 'steps' parameter of _Owner must be an int in the range [1, inf) or None. Got 0 instead."),
    ({"mode": "slow"}, "The 'mode' parameter of _Owner must be a str among {'exact', 'fast'}. Got 'slow' instead."),
    ({"table": []}, "The 'table' parameter of _Owner must be an instance of 'dict' or None. Got [] instead."),
])
def test_a_value_outside_its_constraints_names_the_parameter_and_what_is_allowed(kwargs, message):
    with pytest.raises(InvalidParameterError) as info:
        validate_parameters(_Owner(**kwargs))
    assert str(info.value) == message
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)


def test_interval_ends_follow_closed():
    assert Interval(Real, 0, 1, closed="both").is_satisfied_by(0) and Interval(Real, 0, 1, closed="both").is_satisfied_by(1)
    assert not Interval(Real, 0, 1, closed="neither").is_satisfied_by(0)
    assert not Interval(Real, 0, 1, closed="neither").is_satisfied_by(1)
    assert Interval(Real, 0, 1, closed="left").is_satisfied_by(0) and not Interval(Real, 0, 1, closed="left").is_satisfied_by(1)
    with pytest.raises(ValueError, match="Interval.closed must be"):
        Interval(Real, 0, 1, closed="open")
