"""privbound.audit: the privacy auditor.

Seeded parallel trials (:mod:`privbound.audit.engine`), attacks and their choice
(:mod:`privbound.audit.attacks`), the estimators (:mod:`privbound.audit.estimators`, each a value with
one name) and their statistics (:mod:`privbound.audit.statistics`), the verdict
(:mod:`privbound.audit.result`, :mod:`privbound.audit.core`), membership inference
(:mod:`privbound.audit.membership`) and the target registry (:mod:`privbound.audit.targets`).

    >>> from privbound.audit import audit_mechanism
    >>> mech = lambda x, rng: x + rng.laplace(scale=1.0)      # epsilon = 1 for |x - x'| <= 1
    >>> result = audit_mechanism(mech, 0.0, 1.0, epsilon=1.0)
"""

from privbound.audit.attacks import (
    BoostingAttack,
    FloatingPointAttack,
    LikelihoodRatioAttack,
    LogisticAttack,
    PlugInAttack,
    ScoreAttack,
    SinglePatternAttack,
    ThresholdAttack,
)
from privbound.audit.core import audit_mechanism, audit_outputs
from privbound.audit.engine import MechanismError, map_chunks, run_trials
from privbound.audit.estimators import (
    ESTIMATORS,
    BlackBox,
    Composition,
    Estimator,
    FloatingPoint,
    OutputSpace,
    WhiteBox,
)
from privbound.audit.membership import MembershipResult, membership_audit
from privbound.audit.result import AuditResult
from privbound.audit.statistics import AllThresholds, Explicit, Split, epsilon_lower_bound, estimate_epsilon

__all__ = [
    "ESTIMATORS",
    "AllThresholds",
    "AuditResult",
    "BlackBox",
    "BoostingAttack",
    "Composition",
    "Estimator",
    "Explicit",
    "FloatingPoint",
    "FloatingPointAttack",
    "LikelihoodRatioAttack",
    "LogisticAttack",
    "MechanismError",
    "MembershipResult",
    "OutputSpace",
    "PlugInAttack",
    "ScoreAttack",
    "SinglePatternAttack",
    "Split",
    "ThresholdAttack",
    "WhiteBox",
    "audit_mechanism",
    "audit_outputs",
    "epsilon_lower_bound",
    "estimate_epsilon",
    "membership_audit",
    "map_chunks",
    "run_trials",
]
