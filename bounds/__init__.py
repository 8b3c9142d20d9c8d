"""privbound.bounds: the theorems of the three papers as executable claims with checks.

Public API (issue "bounds/"): :func:`claims`, :func:`get`, :func:`evaluate`,
:func:`check`, :func:`run_checks` and the :class:`CheckResult` they return.
"""

from bounds.checks import PROFILES, CheckContext, CheckOutcome, CheckResult, check, run_checks
from bounds.registry import Check, Claim, ClaimKind, Condition, claims, evaluate, get, register

__all__ = [
    "PROFILES",
    "Check",
    "CheckContext",
    "CheckOutcome",
    "CheckResult",
    "Claim",
    "ClaimKind",
    "Condition",
    "check",
    "claims",
    "evaluate",
    "get",
    "register",
    "run_checks",
]
