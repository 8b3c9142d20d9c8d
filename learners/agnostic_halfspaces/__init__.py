"""Learners of "Differentially private agnostic learning of halfspaces under Gaussian marginals".

Paper id ``agnostic-halfspaces``; one module per algorithm of the paper:

* :mod:`.hermite` -- Hermite polynomial features and the log-concave monomial basis;
* :mod:`.common` -- the halfspace problem, selection by the exponential mechanism, clipping radii;
* :mod:`.regression` -- Algorithm 1, private polynomial regression (improper; Theorems 2.1 and D.1);
* :mod:`.proper` -- Algorithm 2, the proper halfspace learner (Theorem 3.1);
* :mod:`.dpsas` -- Algorithm 3, DPSAS (Proposition 4.2);
* :mod:`.semi_agnostic` -- Algorithm 4, the semi-agnostic learner (Theorem 4.1).
"""
