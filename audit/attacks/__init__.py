"""privbound.audit.attacks: test statistics that score outputs, and the choice among them.

* :mod:`.library` -- the attacks (threshold, plug-in, single pattern, logistic, boosting, a user
  score, a white-box likelihood ratio), each with one name;
* :mod:`.floating` -- the floating-point attack (Mironov, CCS 2012);
* :mod:`.choice` -- the portfolio and the one place an attack is chosen.
"""

from privbound.audit.attacks.choice import (
    ATTACK_NAMES,
    AttackChoice,
    attack_by_name,
    candidate_attacks,
    choose_on_selection,
    portfolio,
    single_attack,
)
from privbound.audit.attacks.floating import FloatingPointAttack
from privbound.audit.attacks.library import (
    Attack,
    BoostingAttack,
    LikelihoodRatioAttack,
    LogisticAttack,
    PlugInAttack,
    ScoreAttack,
    SinglePatternAttack,
    ThresholdAttack,
    as_feature_matrix,
)

__all__ = [
    "ATTACK_NAMES",
    "Attack",
    "AttackChoice",
    "BoostingAttack",
    "FloatingPointAttack",
    "LikelihoodRatioAttack",
    "LogisticAttack",
    "PlugInAttack",
    "ScoreAttack",
    "SinglePatternAttack",
    "ThresholdAttack",
    "as_feature_matrix",
    "attack_by_name",
    "candidate_attacks",
    "choose_on_selection",
    "portfolio",
    "single_attack",
]
