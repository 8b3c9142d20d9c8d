"""Claims and checks of "Privately Learning Decision Lists and a DP Winnow" (paper id ``decision-lists-winnow``).

Importing this package registers its claims (:mod:`.claims`); the checks live beside them.
"""

from privbound.bounds.decision_lists_winnow import claims  # noqa: F401  (registers the claims)
