"""Claims and checks of "Robust and Private Learning of Halfspaces" (paper id ``robust-halfspaces``).

Importing this package registers its claims (:mod:`.claims`); the checks live beside them.
"""

from privbound.bounds.robust_halfspaces import claims  # noqa: F401  (registers the claims)
