"""privbound.audit: the privacy auditor.

Seeded parallel trials (:mod:`privbound.audit.engine`), attacks (:mod:`privbound.audit.attacks`),
epsilon estimators (:mod:`privbound.audit.estimators`), the verdict (:mod:`privbound.audit.core`) and the
target registry (:mod:`privbound.audit.targets`).

    >>> from privbound.audit import audit_mechanism
    >>> mech = lambda x, rng: x + rng.laplace(scale=1.0)      # epsilon = 1 for |x - x'| <= 1
    >>> result = audit_mechanism(mech, 0.0, 1.0, epsilon=1.0)
"""

from privbound.audit.attacks import (
    ClassifierAttack,
    DiscreteAttack,
    LikelihoodRatioAttack,
    ScalarAttack,
    ScoreAttack,
    SinglePatternAttack,
)
from privbound.audit.core import AuditResult, audit_mechanism, audit_outputs
from privbound.audit.engine import MechanismError, map_chunks, run_trials
from privbound.audit.estimators import AllThresholds, Explicit, Split, epsilon_lower_bound, estimate_epsilon
from privbound.audit.membership import MembershipResult, membership_audit

__all__ = [
    "AllThresholds",
    "AuditResult",
    "ClassifierAttack",
    "DiscreteAttack",
    "Explicit",
    "LikelihoodRatioAttack",
    "MechanismError",
    "MembershipResult",
    "ScalarAttack",
    "ScoreAttack",
    "SinglePatternAttack",
    "Split",
    "audit_mechanism",
    "audit_outputs",
    "epsilon_lower_bound",
    "estimate_epsilon",
    "membership_audit",
    "map_chunks",
    "run_trials",
]
