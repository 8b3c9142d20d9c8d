"""Learners of "Robust and Private Learning of Halfspaces" (paper id ``robust-halfspaces``).

* :mod:`.perceptron` -- Perceptron, margin Perceptron, DP Batch Perceptron (Algorithm 1) and one-vs-rest;
* :mod:`.sphere` -- the exponential mechanism on the sphere (Theorem 5);
* :mod:`.robustness` -- robust risk, certified radii, hard instances (Theorems 2-4, 11) and data loaders.
"""
