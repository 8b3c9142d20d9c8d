"""Learners of "Robust and Private Learning of Halfspaces" (paper id ``robust-halfspaces``).

* :mod:`.perceptron` -- Perceptron, margin Perceptron, DP Batch Perceptron (Algorithm 1) and one-vs-rest;
* :mod:`.sphere` -- the exponential mechanism on the sphere (Theorem 5);
* :mod:`.boosting` -- Observation 8's boosting of the success probability (corrected number of runs);
* :mod:`.robustness` -- margin error, robust risk, certified radii and random Fourier features (Lemmas 7, 22);
* :mod:`.instances` -- margin data and the hard instances of the lower bounds (Theorems 2-4);
* :mod:`.data` -- the digit data sets of the experiments (digits, MNIST, USPS).
"""
