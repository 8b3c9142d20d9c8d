"""Claims and checks of "Robust and Private Learning of Halfspaces" (paper id ``robust-halfspaces``).

Importing this package registers its claims (:mod:`.claims`). The checks are grouped by the part of the paper
they check: :mod:`.preliminaries` (App. A), :mod:`.pure_dp_lower_bound` (Sec. 2.1, App. B),
:mod:`.approx_dp_lower_bound` (Sec. 2.2, App. C), :mod:`.non_robust_lower_bound` (Sec. 2.3, App. D),
:mod:`.exponential_mechanism` (Sec. 3.1, App. E), :mod:`.batch_perceptron` (Sec. 3.2, App. F.1, F.3),
:mod:`.batch_perceptron_privacy` (App. F.2) and :mod:`.certified_radius` (App. G.2.1); :mod:`.formulas` holds the
formulas only the claims and checks use (and the printed forms the errata correct), :mod:`.sample_size_search` the
search of the scaling checks, :mod:`.mutants` the broken versions of what each check guards.
"""

from privbound.bounds.robust_halfspaces import claims  # noqa: F401  (registers the claims)
