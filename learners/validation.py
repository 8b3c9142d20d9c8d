"""Argument validation shared by every layer of privbound.

Errors name the offending argument and the allowed range, in the style of
scikit-learn's ``check_scalar``: a ``TypeError`` for the wrong kind of value, a
``ValueError`` for a value outside its range.

Estimators declare the constraints on their hyper-parameters once, as a class
attribute ``_parameter_constraints`` (scikit-learn's mechanism, with its
``Interval`` and ``StrOptions``), and call :func:`validate_parameters` where they
start work (``fit``, ``run``, ``sample``)::

    class DPSomething:
        _parameter_constraints = {
            "epsilon": [Interval(Real, 0, None, closed="neither")],
            "variant": [StrOptions({"theory", "experimental"})],
        }

        def fit(self, X, y):
            validate_parameters(self)
            ...

A value that meets none of its constraints raises scikit-learn's
``InvalidParameterError`` (a ``ValueError`` and a ``TypeError``) naming the
parameter, the estimator and what is allowed.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # re-exported lazily from scikit-learn (see __getattr__)
    from sklearn.utils._param_validation import Interval, StrOptions

__all__ = [
    "Interval",
    "StrOptions",
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


def validate_parameters(obj: Any, constraints: dict[str, list[Any]] | None = None) -> None:
    """Check ``obj``'s hyper-parameters against ``constraints`` (default: its class's ``_parameter_constraints``).

    Each parameter is read as the attribute of the same name; see the module docstring.
    """
    from sklearn.utils._param_validation import validate_parameter_constraints

    if constraints is None:
        constraints = type(obj)._parameter_constraints
    params = {name: getattr(obj, name) for name in constraints}
    validate_parameter_constraints(constraints, params, caller_name=type(obj).__name__)


def __getattr__(name: str) -> Any:
    # scikit-learn's constraint classes, imported only by the modules that declare constraints
    if name in ("Interval", "StrOptions"):
        from sklearn.utils import _param_validation

        return getattr(_param_validation, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

