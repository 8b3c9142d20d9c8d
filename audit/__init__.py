"""privbound.audit: the privacy auditor.

Seeded parallel trials (:mod:`audit.engine`), attacks (:mod:`audit.attacks`),
epsilon estimators (:mod:`audit.estimators`), the verdict (:mod:`audit.core`) and the
target registry (:mod:`audit.targets`).

    >>> from audit import audit_mechanism
    >>> mech = lambda x, rng: x + rng.laplace(scale=1.0)      # epsilon = 1 for |x - x'| <= 1
    >>> result = audit_mechanism(mech, 0.0, 1.0, epsilon=1.0)
"""

from audit.attacks import (
    ClassifierAttack,
    DiscreteAttack,
    LikelihoodRatioAttack,
    ScalarAttack,
    ScoreAttack,
)
from audit.core import AuditResult, audit_mechanism, audit_outputs
from audit.engine import MechanismError, map_chunks, run_trials
from audit.estimators import AllThresholds, Explicit, Split, epsilon_lower_bound, estimate_epsilon

__all__ = [
    "AllThresholds",
    "AuditResult",
    "ClassifierAttack",
    "DiscreteAttack",
    "Explicit",
    "LikelihoodRatioAttack",
    "MechanismError",
    "ScalarAttack",
    "ScoreAttack",
    "Split",
    "audit_mechanism",
    "audit_outputs",
    "epsilon_lower_bound",
    "estimate_epsilon",
    "map_chunks",
    "run_trials",
]
