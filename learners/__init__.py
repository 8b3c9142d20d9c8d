"""privbound.learners: DP primitives and the learners of the three papers.

* :mod:`~privbound.learners.neighbouring` -- the neighbouring relations a guarantee is about;
* :mod:`~privbound.learners.mechanisms` -- DP primitives, each with its guarantee and ``dp_event()``;
* :mod:`~privbound.learners.robust_halfspaces` -- "Robust and Private Learning of Halfspaces";
* :mod:`~privbound.learners.agnostic_halfspaces` -- DP agnostic halfspaces under Gaussian marginals;
* :mod:`~privbound.learners.decision_lists_winnow` -- DP decision lists and DP Winnow.

This layer imports nothing from the rest of privbound but what every layer shares
(:mod:`privbound._validation`, argument checks and declared parameter constraints).
"""
