"""Claims and checks of "DP agnostic learning of halfspaces" (paper id ``agnostic-halfspaces``).

Importing this package registers its claims (:mod:`.claims`); the checks live beside them.
"""

from privbound.bounds.agnostic_halfspaces import claims  # noqa: F401  (registers the claims)
