"""Claims and checks of "Privately Learning Decision Lists and a Differentially Private Winnow" (paper id ``decision-lists-winnow``).

Importing this package registers its claims (:mod:`.claims`); the checks live in one module per
part of the paper (listed in :mod:`.claims`), the formulas only bounds/ uses in :mod:`.formulas`.
"""

from privbound.bounds.decision_lists_winnow import claims  # noqa: F401  (registers the claims)
