"""privbound.bounds: the theorems of the three papers as executable claims with checks.

:func:`claims`, :func:`get`, :func:`evaluate`, :func:`check` and :func:`run_checks`,
and the :class:`CheckResult` they return. Importing the package registers the claims
of every paper (one subpackage per paper; the registry itself imports none of them).
"""

from privbound.bounds.checks import PROFILES, CheckContext, CheckResult, CheckStatus, MutantResult, check, run_checks, run_mutants
from privbound.bounds.registry import Check, Claim, ClaimKind, Condition, Mutant, OutsideProofRegime, claims, evaluate, get, register

from privbound.bounds import agnostic_halfspaces, decision_lists_winnow, robust_halfspaces  # noqa: E402,F401  (register)

__all__ = [
    "PROFILES",
    "Check",
    "CheckContext",
    "CheckResult",
    "CheckStatus",
    "Claim",
    "ClaimKind",
    "Condition",
    "OutsideProofRegime",
    "Mutant",
    "MutantResult",
    "check",
    "claims",
    "evaluate",
    "get",
    "register",
    "run_checks",
    "run_mutants",
]
