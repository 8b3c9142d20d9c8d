"""Argument validation shared by every layer of privbound (it imports none of them).

Errors name the offending argument and the allowed range: a ``TypeError`` for the wrong
kind of value, a ``ValueError`` for a value outside its range.

Estimators declare the constraints on their hyper-parameters once, as a class attribute
``_parameter_constraints`` (scikit-learn's convention), and call :func:`validate_parameters`
where they start work (``fit``, ``run``, ``sample``)::

    class DPSomething:
        _parameter_constraints = {
            "epsilon": [Interval(Real, 0, None, closed="neither")],
            "variant": [StrOptions({"theory", "experimental"})],
        }

        def fit(self, X, y):
            validate_parameters(self)
            ...

A constraint is an :class:`Interval`, a :class:`StrOptions`, a class (the value must be an
instance) or ``None`` (the value may be ``None``). A value that meets none of its constraints
raises :class:`InvalidParameterError` (a ``ValueError`` and a ``TypeError``) naming the
parameter, the estimator and what is allowed, worded as scikit-learn words it
("The 'epsilon' parameter of DPSomething must be a float in the range (0.0, inf). Got -1 instead.").
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "Interval",
    "StrOptions",
    "InvalidParameterError",
    "validate_parameters",
    "check_real",
    "check_int",
    "check_probability",
    "check_epsilon",
    "check_delta",
    "check_confidence",
    "check_rng",
    "check_finite_array",
]


def check_real(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
    allow_inf: bool = False,
) -> float:
    """Return ``value`` as a float after checking its type and range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    value = float(value)
    if math.isnan(value) or (math.isinf(value) and not allow_inf):
        raise ValueError(f"{name} must be finite, got {value!r}")
    lo_ok = low is None or (value >= low if low_inclusive else value > low)
    hi_ok = high is None or (value <= high if high_inclusive else value < high)
    if not (lo_ok and hi_ok):
        lo = "-inf" if low is None else repr(low)
        hi = "inf" if high is None else repr(high)
        lb = "[" if (low is not None and low_inclusive) else "("
        hb = "]" if (high is not None and high_inclusive) else ")"
        raise ValueError(f"{name} must be in {lb}{lo}, {hi}{hb}, got {value!r}")
    return value


def check_int(value: Any, name: str, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as an int after checking it is an integer in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        lo = "-inf" if low is None else str(low)
        hi = "inf" if high is None else str(high)
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    return value


def check_probability(value: Any, name: str, *, open_low: bool = False, open_high: bool = False) -> float:
    """A probability in [0, 1], optionally with open ends."""
    return check_real(value, name, low=0.0, high=1.0, low_inclusive=not open_low, high_inclusive=not open_high)


def check_epsilon(value: Any, name: str = "epsilon") -> float:
    """A privacy parameter epsilon: finite and > 0."""
    return check_real(value, name, low=0.0, low_inclusive=False)


def check_delta(value: Any, name: str = "delta") -> float:
    """A privacy parameter delta in [0, 1)."""
    return check_real(value, name, low=0.0, high=1.0, high_inclusive=False)


def check_confidence(value: Any, name: str = "confidence") -> float:
    """A confidence level in the open interval (0, 1)."""
    return check_real(value, name, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)


def check_rng(rng: Any, name: str = "rng") -> np.random.Generator:
    """Require an explicit ``numpy.random.Generator`` (no global seeding)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"{name} must be a numpy.random.Generator (e.g. numpy.random.default_rng(0)), "
            f"got {type(rng).__name__}"
        )
    return rng


def check_finite_array(value: Any, name: str, *, ndim: int | None = None, min_size: int = 1) -> np.ndarray:
    """Return ``value`` as a float array, checking dimension, size and finiteness."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of real numbers ({exc})") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if arr.size < min_size:
        raise ValueError(f"{name} must have at least {min_size} element(s), got {arr.size}")
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr.ravel()))[0])
        raise ValueError(f"{name} must be finite; entry {bad} is {arr.ravel()[bad]!r}")
    return arr


class InvalidParameterError(ValueError, TypeError):
    """A hyper-parameter outside its declared constraints (both a ``ValueError`` and a ``TypeError``)."""


@dataclass(frozen=True)
class Interval:
    """Numbers of ``type`` (``numbers.Real`` or ``numbers.Integral``) between ``left`` and ``right``.

    ``None`` for an end means unbounded; ``closed`` is ``"left"``, ``"right"``, ``"both"`` or
    ``"neither"``. Booleans are not numbers here.
    """

    type: type
    left: float | None
    right: float | None
    closed: str

    def __post_init__(self) -> None:
        if self.type not in (numbers.Real, numbers.Integral):
            raise TypeError(f"Interval.type must be numbers.Real or numbers.Integral, got {self.type!r}")
        if self.closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"Interval.closed must be 'left', 'right', 'both' or 'neither', got {self.closed!r}")

    def is_satisfied_by(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, self.type):
            return False
        if isinstance(value, numbers.Real) and math.isnan(value):
            return False
        left_ok = self.left is None or (value >= self.left if self.closed in ("left", "both") else value > self.left)
        right_ok = self.right is None or (value <= self.right if self.closed in ("right", "both") else value < self.right)
        return left_ok and right_ok

    def __str__(self) -> str:
        kind = "an int" if self.type is numbers.Integral else "a float"
        convert = int if self.type is numbers.Integral else float
        lo = "-inf" if self.left is None else str(convert(self.left))
        hi = "inf" if self.right is None else str(convert(self.right))
        lb = "[" if self.left is not None and self.closed in ("left", "both") else "("
        rb = "]" if self.right is not None and self.closed in ("right", "both") else ")"
        return f"{kind} in the range {lb}{lo}, {hi}{rb}"


@dataclass(frozen=True)
class StrOptions:
    """One of a set of strings."""

    options: frozenset

    def __init__(self, options) -> None:
        object.__setattr__(self, "options", frozenset(options))

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.options

    def __str__(self) -> str:
        return "a str among {" + ", ".join(repr(o) for o in sorted(self.options)) + "}"


def _satisfied(constraint: Any, value: Any) -> bool:
    if constraint is None:
        return value is None
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    return constraint.is_satisfied_by(value)


def _describe(constraint: Any) -> str:
    if isinstance(constraint, type):
        return f"an instance of {constraint.__qualname__!r}"
    return str(constraint)


def validate_parameters(obj: Any, constraints: dict[str, list[Any]] | None = None) -> None:
    """Check ``obj``'s hyper-parameters against ``constraints`` (default: its class's ``_parameter_constraints``).

    Each parameter is read as the attribute of the same name; see the module docstring.
    """
    if constraints is None:
        constraints = type(obj)._parameter_constraints
    caller = type(obj).__name__
    for name, allowed in constraints.items():
        value = getattr(obj, name)
        if any(_satisfied(c, value) for c in allowed):
            continue
        described = [_describe(c) for c in allowed if c is not None]
        if None in allowed:
            described.append("None")
        what = described[0] if len(described) == 1 else ", ".join(described[:-1]) + " or " + described[-1]
        raise InvalidParameterError(f"The {name!r} parameter of {caller} must be {what}. Got {value!r} instead.")
