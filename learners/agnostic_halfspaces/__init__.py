"""Learners of "DP agnostic learning of halfspaces under Gaussian marginals" (paper id ``agnostic-halfspaces``).

* :mod:`.hermite` -- Hermite polynomial features and the log-concave monomial basis;
* :mod:`.algorithms` -- Algorithms 1-4 (polynomial regression, proper halfspace, DPSAS, semi-agnostic).
"""
