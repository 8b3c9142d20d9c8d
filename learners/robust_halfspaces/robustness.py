"""Robust risk and certified radii of Ghazi, Kumar, Manurangsi & Nguyen, "Robust and Private Learning of
Halfspaces" (AISTATS 2021, arXiv:2011.14580), paper id ``robust-halfspaces``.

* Margin error and robust risk: App. A.1 (err_gamma on the raw w) and Lemma 7
  (R_gamma(w) = err_gamma(w/||w||)), with the optimal L2 attack and a brute-force search for cross-checking.
* Certified radius of linear one-vs-rest models: Lemma 22 (Hein & Andriushchenko 2017), exact for
  linear scores, and the attack that attains it. Errata in Lemma 22 (App. G.2.1): the classifier
  predicts the class that *maximises* f^y (printed: minimises), and the radius condition is strict
  (printed: <=; at equality a linear classifier can tie).
* Random Fourier features with exactly unit norm and the kernel certified radius: App. G.2 / G.2.1.

The hard instances of the lower bounds are in :mod:`.instances`, the digit data sets in :mod:`.data`.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

import numpy as np

from privbound._validation import Interval, check_finite_array, check_rng, validate_parameters
from privbound.learners.robust_halfspaces.perceptron import _RANDOM_STATE, _rng_of

__all__ = [
    "margin_error",
    "robust_risk",
    "halfspace_attack",
    "brute_force_robust_error",
    "certified_radius_linear",
    "linear_flip_attack",
    "RandomFourierFeatures",
]


# --------------------------------------------------------------------------- risk


def margin_error(w: Any, X: Any, y: Any, gamma: float) -> np.ndarray | float:
    """err_gamma^X(w) = mean(y <w, x> <= gamma) on the raw w (App. A.1); w may be a (k, d) stack."""
    w = np.asarray(w, float)
    X = np.asarray(X, float)
    y = np.asarray(y, float)
    if w.ndim == 2:
        return np.mean(y[:, None] * (X @ w.T) <= gamma, axis=0)
    return float(np.mean(y * (X @ w) <= gamma))


def robust_risk(w: Any, X: Any, y: Any, gamma: float) -> float:
    """Empirical robust risk R_gamma(h_w) = err_gamma(w / ||w||) (Lemma 7), perturbations in R^d (L2 ball)."""
    w = np.asarray(w, float)
    nrm = np.linalg.norm(w)
    if nrm == 0:
        return 1.0  # sgn(0) is never a label: h_0 errs everywhere
    return margin_error(w / nrm, X, y, gamma)


def halfspace_attack(w: Any, X: Any, y: Any, gamma: float) -> np.ndarray:
    """The optimal L2 attack on h_w within radius gamma: z = x - y gamma w/||w|| (proof of Lemma 7)."""
    w = np.asarray(w, float)
    return np.asarray(X, float) - gamma * np.asarray(y, float)[:, None] * (w / np.linalg.norm(w))[None, :]


def brute_force_robust_error(w: Any, X: Any, y: Any, gamma: float, rng: np.random.Generator, n_directions: int = 2000) -> float:
    """Fraction of points some perturbation of norm <= gamma makes misclassified (sgn(0) = error),
    searching ``n_directions`` random directions on the sphere of radius gamma plus the centre.

    A pure search: it never uses w's direction, so it is an independent lower bound on the robust risk.
    """
    rng = check_rng(rng)
    w = np.asarray(w, float)
    X = np.asarray(X, float)
    y = np.asarray(y, float)
    D = rng.standard_normal((n_directions, X.shape[1]))
    D *= gamma / np.linalg.norm(D, axis=1, keepdims=True)
    D = np.vstack([np.zeros(X.shape[1]), D])
    worst = (y * (X @ w))[:, None] + y[:, None] * (D @ w)[None, :]  # y <w, x + Delta>
    return float(np.mean(worst.min(axis=1) <= 0))


def _radius_per_class(W: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(f^y - f^k) / ||w_y - w_k|| for every point and class k (inf for k = y and for w_k = w_y): shape (n, K)."""
    S = X @ W.T
    sy = S[np.arange(len(y)), y]
    diff = np.linalg.norm(W[:, None, :] - W[None, :, :], axis=2)  # (K, K)
    num = sy[:, None] - S  # (n, K)
    den = diff[y]  # (n, K)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.inf)
    r[np.arange(len(y)), y] = np.inf
    return r


def certified_radius_linear(W: Any, X: Any, y: Any) -> np.ndarray:
    """Lemma 22 for linear scores f^k(x) = <w_k, x>: r(x, y) = min_{y' != y} (f^y - f^y') / ||w_y - w_y'||.

    Exact for linear models: every perturbation of norm < r keeps the argmax (argmax and strict <: the
    corrected Lemma 22, see the module docstring).
    ``y`` holds class indices into the rows of W. A misclassified point gets a negative radius.
    """
    W = np.asarray(W, float)
    X = np.asarray(X, float)
    y = np.asarray(y, dtype=np.int64)
    return _radius_per_class(W, X, y).min(axis=1)


def linear_flip_attack(W: Any, X: Any, y: Any, radius: np.ndarray, scale: float = 1.0 + 1e-6) -> np.ndarray:
    """The attack attaining Lemma 22's radius for linear scores: Delta = -scale r (w_y - w_y*) / ||w_y - w_y*||,
    y* the minimising class; returns x + Delta (``scale`` > 1 flips the argmax, < 1 does not)."""
    W = np.asarray(W, float)
    X = np.asarray(X, float)
    y = np.asarray(y, dtype=np.int64)
    k = _radius_per_class(W, X, y).argmin(axis=1)
    u = W[y] - W[k]
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    return X - scale * np.asarray(radius, float)[:, None] * u


class RandomFourierFeatures:
    """Random Fourier features (Rahimi & Recht; App. G.2): phi(x) = (cos <rho_i, x>, sin <rho_i, x>)_i / sqrt(d_hat),
    rho_i ~ N(0, I / bandwidth^2), so ||phi(x)|| = 1 exactly and <phi(x), phi(x')> ~ exp(-||x - x'||^2 / (2 bandwidth^2))."""

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "bandwidth": [Interval(Real, 0, None, closed="neither")],
        "random_state": _RANDOM_STATE,
    }

    def __init__(self, n_components: int = 500, bandwidth: float = 5.0, random_state: Any = None):
        self.n_components = n_components
        self.bandwidth = bandwidth
        self.random_state = random_state

    def fit(self, X: Any, y: Any = None) -> "RandomFourierFeatures":
        validate_parameters(self)
        k, bw = int(self.n_components), float(self.bandwidth)
        X = check_finite_array(X, "X", ndim=2)
        self.projection_ = _rng_of(self.random_state).standard_normal((X.shape[1], k)) / bw  # Pi = [rho_1..rho_k]
        self.sigma_max_ = float(np.linalg.norm(self.projection_, 2))
        return self

    def transform(self, X: Any) -> np.ndarray:
        Z = check_finite_array(X, "X", ndim=2) @ self.projection_
        return np.hstack([np.cos(Z), np.sin(Z)]) / math.sqrt(self.projection_.shape[1])

    def fit_transform(self, X: Any, y: Any = None) -> np.ndarray:
        return self.fit(X).transform(X)

    def certified_radius(self, W: Any, X: Any, y: Any) -> np.ndarray:
        """App. G.2.1: sqrt(d_hat)/sigma_max(Pi) * min_{y'} (f^y - f^y') / ||w_y - w_y'|| (not tight)."""
        r = certified_radius_linear(W, self.transform(X), y)
        return math.sqrt(self.projection_.shape[1]) / self.sigma_max_ * r
