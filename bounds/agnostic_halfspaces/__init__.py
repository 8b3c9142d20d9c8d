"""Claims and checks of "Differentially private agnostic learning of halfspaces under Gaussian marginals".

Paper id ``agnostic-halfspaces``. Importing this package registers its claims (:mod:`.claims`). The
checks are grouped by the part of the paper they check: :mod:`.auxiliary` (App. B),
:mod:`.improper_learner` and :mod:`.improper_scaling` (Sec. 2, App. C), :mod:`.log_concave` (App. D),
:mod:`.proper_learner` (Sec. 3, App. E), :mod:`.semi_agnostic` (Sec. 4, App. F) and :mod:`.remarks`
(Sec. 1); :mod:`.common` holds their shared tools and :mod:`.formulas` the formulas claims and checks share.
"""

from privbound.bounds.agnostic_halfspaces import claims  # noqa: F401  (registers the claims)
