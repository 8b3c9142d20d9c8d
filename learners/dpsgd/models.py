"""The models DP-SGD trains: logistic regression and a one-hidden-layer MLP, vectorised over runs.

Both are binary classifiers trained with the logistic (binary cross-entropy) loss on labels
y in {0, 1}: l(theta; x, y) = softplus((1 - 2y) z) with z the logit. Parameters are one flat
vector theta; every batched method takes ``theta`` of shape (R, p) -- one row per independent
training run -- and returns arrays whose axis 0 indexes runs, so that many DP-SGD runs advance
together as array operations.

Per-example gradients are never materialised as an (R, n, p) tensor: DP-SGD needs only their
norms (for clipping) and a weighted sum (the clipped, subsampled sum), and for these two models
both have closed forms of cost R n d (logistic) or R n H d (MLP):

* logistic, theta = (w, b): grad = (sigmoid(z) - y) (x, 1), so ||grad|| = |sigmoid(z) - y| sqrt(||x||^2 + 1);
* MLP, theta = (W1 (H x d, row-major), b1, w2, b2), h = tanh(W1 x + b1), z = w2 . h + b2:
  with e = sigmoid(z) - y and g = e w2 (1 - h^2), grad = (g x^T, g, e h, e), so
  ||grad||^2 = ||g||^2 (||x||^2 + 1) + e^2 (||h||^2 + 1).

:meth:`example_gradient` computes one example's gradient directly (the reference the batched
path is tested against).

Inert coordinates: a parameter that multiplies an input feature which is zero in every record
has gradient exactly zero for every record at every theta (:meth:`feature_coordinates`). A Dirac
gradient canary placed there is observed, step by step, without interference from the data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special

from privbound._validation import check_finite_array, check_int, check_real

__all__ = ["LogisticRegression", "MLP", "PerExampleGradients", "check_model", "check_labels"]


@dataclass(frozen=True)
class PerExampleGradients:
    """The per-example gradients of one forward pass, as DP-SGD uses them.

    ``norms`` (R, n): their L2 norms; ``weighted_sum(weights)`` with ``weights`` (R, n): the (R, p) sums
    sum_i weights[r, i] grad_i of each run.
    """

    norms: np.ndarray
    weighted_sum: Any = field(repr=False)


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


class _Model:
    """Shared plumbing; subclasses define the parameter layout and the gradient formulas."""

    def n_parameters(self, d: int) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def losses(self, theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Per-example logistic losses, shape (R, n)."""
        z = self.logits(theta, X)
        return _softplus((1.0 - 2.0 * np.asarray(y, float))[None, :] * z)

    def predict_proba(self, theta: np.ndarray, X: np.ndarray) -> np.ndarray:
        """P(y = 1 | x) under each run's parameters, shape (R, n)."""
        return special.expit(self.logits(theta, X))

    def gradient_norms(self, theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """||grad l(theta_r; x_i, y_i)||_2 for every run r and example i, shape (R, n)."""
        return self.per_example(theta, X, y).norms

    def weighted_gradient_sum(self, theta: np.ndarray, X: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """sum_i weights[r, i] grad l(theta_r; x_i, y_i), shape (R, p)."""
        return self.per_example(theta, X, y).weighted_sum(weights)

    def _check_theta(self, theta: Any, d: int) -> np.ndarray:
        theta = np.asarray(theta, dtype=float)
        if theta.ndim == 1:
            theta = theta[None, :]
        p = self.n_parameters(d)
        if theta.ndim != 2 or theta.shape[1] != p:
            raise ValueError(f"theta must have shape (runs, {p}) for {self!r} on {d} features, got {theta.shape}")
        return theta


@dataclass(frozen=True)
class LogisticRegression(_Model):
    """Logistic regression z = w . x + b (``fit_intercept=False``: z = w . x); initialised at zero."""

    fit_intercept: bool = True

    def n_parameters(self, d: int) -> int:
        return d + int(self.fit_intercept)

    def init(self, d: int, rng: np.random.Generator, size: int) -> np.ndarray:
        """Initial parameters of ``size`` runs: zeros (draws nothing from ``rng``)."""
        return np.zeros((size, self.n_parameters(d)))

    def logits(self, theta: np.ndarray, X: np.ndarray) -> np.ndarray:
        d = X.shape[1]
        theta = self._check_theta(theta, d)
        z = theta[:, :d] @ X.T
        return z + theta[:, d:d + 1] if self.fit_intercept else z

    def per_example(self, theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> "PerExampleGradients":
        """Norms and weighted sums of the per-example gradients at ``theta`` (one forward pass)."""
        e = special.expit(self.logits(theta, X)) - y[None, :]  # dl/dz, (R, n)
        norms = np.abs(e) * np.sqrt(np.einsum("nd,nd->n", X, X) + float(self.fit_intercept))[None, :]

        def weighted_sum(weights):
            c = weights * e
            out = c @ X
            return np.concatenate([out, c.sum(axis=1, keepdims=True)], axis=1) if self.fit_intercept else out

        return PerExampleGradients(norms, weighted_sum)

    def example_gradient(self, theta: np.ndarray, x: np.ndarray, y: float) -> np.ndarray:
        """The gradient of one example's loss at one parameter vector (reference implementation)."""
        d = x.shape[0]
        z = float(theta[:d] @ x) + (float(theta[d]) if self.fit_intercept else 0.0)
        e = float(special.expit(z)) - y
        return np.append(e * x, e) if self.fit_intercept else e * x

    def feature_coordinates(self, j: int, d: int) -> np.ndarray:
        """Indices of the parameters multiplying input feature ``j``: the weight w_j."""
        check_int(j, "j", low=0, high=d - 1)
        return np.array([j])


@dataclass(frozen=True)
class MLP(_Model):
    """One-hidden-layer network z = w2 . tanh(W1 x + b1) + b2.

    ``init_scale``: runs start at W1 ~ N(0, init_scale^2 / d), w2 ~ N(0, init_scale^2 / hidden),
    biases 0, drawn independently for every run (``DPSGD(init=...)`` fixes a public initialisation
    instead).
    """

    hidden: int = 8
    init_scale: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden", check_int(self.hidden, "hidden", low=1))
        object.__setattr__(self, "init_scale", check_real(self.init_scale, "init_scale", low=0.0))

    def n_parameters(self, d: int) -> int:
        return self.hidden * d + 2 * self.hidden + 1

    def _split(self, theta: np.ndarray, d: int):
        H = self.hidden
        W1 = theta[:, :H * d].reshape(-1, H, d)
        b1 = theta[:, H * d:H * d + H]
        w2 = theta[:, H * d + H:H * d + 2 * H]
        b2 = theta[:, -1]
        return W1, b1, w2, b2

    def init(self, d: int, rng: np.random.Generator, size: int) -> np.ndarray:
        """Initial parameters of ``size`` runs (one normal draw of shape (size, H d + H) from ``rng``)."""
        H = self.hidden
        theta = np.zeros((size, self.n_parameters(d)))
        z = rng.normal(size=(size, H * d + H))
        theta[:, :H * d] = z[:, :H * d] * (self.init_scale / np.sqrt(d))
        theta[:, H * d + H:H * d + 2 * H] = z[:, H * d:] * (self.init_scale / np.sqrt(H))
        return theta

    def _forward(self, theta, X):
        d = X.shape[1]
        theta = self._check_theta(theta, d)
        W1, b1, w2, b2 = self._split(theta, d)
        h = np.tanh(np.matmul(W1, X.T) + b1[:, :, None])  # (R, H, n)
        z = np.matmul(w2[:, None, :], h)[:, 0, :] + b2[:, None]  # (R, n)
        return h, z, w2

    def logits(self, theta: np.ndarray, X: np.ndarray) -> np.ndarray:
        return self._forward(theta, X)[1]

    def per_example(self, theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> "PerExampleGradients":
        """Norms and weighted sums of the per-example gradients at ``theta`` (one forward and backward pass)."""
        h, z, w2 = self._forward(theta, X)
        e = special.expit(z) - y[None, :]  # dl/dz, (R, n)
        g = e[:, None, :] * w2[:, :, None] * (1.0 - h * h)  # dl/d(pre-activation), (R, H, n)
        xx = np.einsum("nd,nd->n", X, X)[None, :]
        norms = np.sqrt(np.einsum("rhn,rhn->rn", g, g) * (xx + 1.0) + e * e * (np.einsum("rhn,rhn->rn", h, h) + 1.0))
        H, d = self.hidden, X.shape[1]

        def weighted_sum(weights):
            gw = g * weights[:, None, :]
            ew = e * weights
            out = np.empty((len(weights), self.n_parameters(d)))
            out[:, :H * d] = np.matmul(gw, X).reshape(len(weights), H * d)
            out[:, H * d:H * d + H] = gw.sum(axis=2)
            out[:, H * d + H:H * d + 2 * H] = np.matmul(h, ew[:, :, None])[:, :, 0]
            out[:, -1] = ew.sum(axis=1)
            return out

        return PerExampleGradients(norms, weighted_sum)

    def example_gradient(self, theta: np.ndarray, x: np.ndarray, y: float) -> np.ndarray:
        """The gradient of one example's loss at one parameter vector (reference implementation, by the chain rule)."""
        d, H = x.shape[0], self.hidden
        W1 = theta[:H * d].reshape(H, d)
        b1, w2, b2 = theta[H * d:H * d + H], theta[H * d + H:H * d + 2 * H], theta[-1]
        h = np.tanh(W1 @ x + b1)
        e = float(special.expit(w2 @ h + b2)) - y
        g = e * w2 * (1.0 - h ** 2)
        return np.concatenate([np.outer(g, x).ravel(), g, e * h, [e]])

    def feature_coordinates(self, j: int, d: int) -> np.ndarray:
        """Indices of the parameters multiplying input feature ``j``: the column W1[:, j]."""
        check_int(j, "j", low=0, high=d - 1)
        return np.arange(self.hidden) * d + j


def check_model(model: Any, name: str = "model") -> Any:
    """``model`` if it provides the batched interface DP-SGD needs, else a ``TypeError`` naming what is missing."""
    needed = ("n_parameters", "init", "logits", "losses", "per_example", "example_gradient")
    missing = [m for m in needed if not callable(getattr(model, m, None))]
    if missing:
        raise TypeError(
            f"{name} must be a DP-SGD model such as privbound.learners.dpsgd.LogisticRegression() or MLP() "
            f"(missing {', '.join(missing)}), got {type(model).__name__}"
        )
    return model


def check_labels(y: Any, n: int, name: str = "y") -> np.ndarray:
    """Labels in {0, 1}, one per row."""
    y = check_finite_array(y, name, ndim=1, min_size=0)
    if y.shape[0] != n:
        raise ValueError(f"{name} must have one label per row of X ({n}), got {y.shape[0]}")
    if not np.all((y == 0.0) | (y == 1.0)):
        raise ValueError(f"{name} must contain only labels 0 and 1")
    return y
