"""Exponential mechanism over the unit sphere: Theorem 5 and App. E of Ghazi, Kumar, Manurangsi & Nguyen,
"Robust and Private Learning of Halfspaces" (AISTATS 2021, arXiv:2011.14580), paper id ``robust-halfspaces``.

Score q(X, w) = -#{i : y_i <w, x_i> <= 0.95 gamma} for unit w (sensitivity 1 under add/remove);
output density mu'(w) prop. to exp(epsilon q(X, w) / 2) with respect to the uniform measure mu on
S^{d-1}, which is epsilon-DP (McSherry & Talwar 2007).

Two exact samplers (MCMC would only be approximate and would void the pure-DP claim):

* ``method="rejection"``: propose w ~ Unif(S^{d-1}) and accept with probability exp(epsilon q / 2)
  (in (0, 1] because q <= 0). Exact, feasible when E_mu[exp(epsilon q/2)] is not tiny (small d, n).
* ``method="angular"`` (d = 2 only): q is piecewise constant in the angle, with at most 2n
  breakpoints; an arc is drawn with probability prop. to length * exp(epsilon q / 2) (Gumbel-max in
  log space) and the angle uniformly inside it. The same arcs give the exact log density
  (:meth:`SphereExponentialMechanism.log_density`), from which the privacy loss is computed exactly.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from scipy import special

from privbound._validation import Interval, StrOptions, check_int, check_rng, validate_parameters
from privbound.learners.accounting import exact_epsilon
from privbound.learners.neighbouring import NeighbouringRelation
from privbound.learners.mechanisms import PrivacyGuarantee
from privbound.learners.robust_halfspaces.perceptron import _RANDOM_STATE, _rng_of, _split_data, halfspace_predict, prepare_inputs

__all__ = ["SphereExponentialMechanism", "circle_arcs", "uniform_sphere"]


def uniform_sphere(rng: np.random.Generator, size: int, d: int) -> np.ndarray:
    """``size`` independent uniform points on S^{d-1} (normalised Gaussians)."""
    g = rng.standard_normal((size, d))
    return g / np.linalg.norm(g, axis=1, keepdims=True)


def circle_arcs(X: np.ndarray, y: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The arcs of the unit circle on which q(X, w) = -#{i: y_i <w, x_i> <= c} is constant.

    Returns (start angles in [0, 2 pi), arc lengths, score on each arc). The breakpoints of point i
    (radius r, angle phi) are phi +- arccos(c / (y r)) when |c / r| <= 1.
    """
    X = np.asarray(X, float).reshape(-1, 2)
    y = np.asarray(y, float).reshape(-1)
    r = np.linalg.norm(X, axis=1)
    phi = np.arctan2(X[:, 1], X[:, 0])
    ok = (r > 0) & (np.abs(c) <= r)
    a = np.arccos(np.clip(c / np.where(ok, y * r, 1.0), -1, 1))
    cuts = np.concatenate([[0.0, 2 * np.pi], np.mod(phi[ok] + a[ok], 2 * np.pi), np.mod(phi[ok] - a[ok], 2 * np.pi)])
    cuts = np.unique(cuts)
    starts, lengths = cuts[:-1], np.diff(cuts)
    keep = lengths > 0
    starts, lengths = starts[keep], lengths[keep]
    mids = starts + lengths / 2
    Wm = np.stack([np.cos(mids), np.sin(mids)], -1)
    q = -np.sum(y[:, None] * (X @ Wm.T) <= c, axis=0).astype(float) if len(y) else np.zeros(len(mids))
    return starts, lengths, q


class SphereExponentialMechanism:
    """The epsilon-DP exponential mechanism of Theorem 5 over S^{d-1} (proper, pure DP).

    ``fit(X, y)`` draws one output ``coef_``; ``sample((X, y), rng, size)`` draws ``size`` independent
    outputs (the auditor's batched interface). ``method``: "auto" (angular for d = 2, else rejection),
    "rejection" or "angular". ``max_proposals`` bounds the rejection sampler's work (it raises
    ``RuntimeError`` rather than return an inexact sample). Inputs must lie in the unit ball.
    """

    _parameter_constraints = {
        "gamma": [Interval(Real, 0, 1, closed="both")],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "margin_ratio": [Interval(Real, 0, 1, closed="both")],
        "method": [StrOptions({"auto", "rejection", "angular"})],
        "max_proposals": [Interval(Integral, 1, None, closed="left")],
        "exponent_scale": [Interval(Real, 0, None, closed="neither")],
        "random_state": _RANDOM_STATE,
    }

    def __init__(self, gamma: float, epsilon: float, *, margin_ratio: float = 0.95, method: str = "auto",
                 max_proposals: int = 10_000_000, exponent_scale: float = 0.5, random_state: Any = None):
        self.gamma = gamma
        self.epsilon = epsilon
        self.margin_ratio = margin_ratio
        self.method = method
        self.max_proposals = max_proposals
        # exponent_scale = 1/2 is the mechanism; any other value is a planted bug (audit targets only).
        self.exponent_scale = exponent_scale
        self.random_state = random_state

    def _params(self) -> tuple[float, float, float]:
        """Validate the hyper-parameters; return (the score threshold margin_ratio * gamma, epsilon, exponent_scale)."""
        validate_parameters(self)
        return float(self.margin_ratio) * float(self.gamma), float(self.epsilon), float(self.exponent_scale)

    @property
    def guarantee(self) -> PrivacyGuarantee:
        return PrivacyGuarantee(float(self.epsilon), 0.0, NeighbouringRelation.ADD_OR_REMOVE_ONE,
                                "Theorem 5 (exponential mechanism, score sensitivity 1; McSherry & Talwar 2007)")

    def score(self, X: Any, y: Any, W: Any) -> np.ndarray:
        """q(X, w) = -#{i: y_i <w, x_i> <= 0.95 gamma} for each row w of W."""
        c, _, _ = self._params()
        X = np.asarray(X, float)
        W = np.atleast_2d(np.asarray(W, float))
        if X.shape[0] == 0:
            return np.zeros(W.shape[0])
        return -np.sum((np.asarray(y, float)[:, None] * (X @ W.T)) <= c, axis=0).astype(float)

    def log_density(self, data: Any, W: Any) -> np.ndarray:
        """Exact log density of the output at the rows of W w.r.t. the uniform probability measure on S^1 (d = 2)."""
        X, y = self._data(data)
        if X.shape[1] != 2:
            raise ValueError(f"log_density is exact only for d = 2, got d = {X.shape[1]}")
        c, eps, scale = self._params()
        _, lengths, q = circle_arcs(X, y, c)
        logZ = special.logsumexp(np.log(lengths / (2 * np.pi)) + scale * eps * q)
        return scale * eps * self.score(X, y, W) - logZ

    def pair_log_masses(self, data0: Any, data1: Any) -> tuple[np.ndarray, np.ndarray]:
        """Exact log-probabilities, on both datasets, of the arcs of S^1 on which both scores are constant
        (d = 2): the arcs cut at the breakpoints of both datasets' points. On an arc both densities are
        constant, so these masses carry the pair's whole privacy curve."""
        X0, y0 = self._data(data0)
        X1, y1 = self._data(data1)
        c, _, _ = self._params()
        starts, lengths, _ = circle_arcs(np.vstack([X0, X1]), np.r_[y0, y1], c)
        mids = starts + lengths / 2
        W = np.stack([np.cos(mids), np.sin(mids)], -1)
        base = np.log(lengths / (2 * np.pi))
        return base + self.log_density(data0, W), base + self.log_density(data1, W)

    def tight_epsilon(self, data0: Any, data1: Any, delta: float) -> tuple[float, str]:
        """``(epsilon, source)``: the exact epsilon at ``delta`` of the mechanism on the pair ``(data0, data1)``
        (d = 2, :meth:`pair_log_masses`), with the worst case over add-or-remove-one pairs in the source.

        Adding a record only lowers the score, by 1 on a region R, so log p_X/p_{X+x} = s eps 1_R(w) + log
        E_{p_X}[e^{-s eps 1_R}] lies in [-s eps, s eps] (s = ``exponent_scale``): the worst case is s eps (a
        supremum, approached when p_X(R) -> 0), half the eps of the general exponential-mechanism bound at s = 1/2.
        """
        _, eps, scale = self._params()
        lp0, lp1 = self.pair_log_masses(data0, data1)
        return (exact_epsilon(lp0, lp1, delta),
                f"exact hockey-stick divergence of the arc masses on this pair ({lp0.size} arcs); worst case over "
                f"add-or-remove-one pairs: exponent_scale * eps = {scale * eps:g} (one-sided score change)")

    def _data(self, data: Any) -> tuple[np.ndarray, np.ndarray]:
        X, y = _split_data(data)
        X = np.asarray(X, float)
        if X.ndim == 2 and X.shape[0] == 0:
            return X, np.zeros(0)
        return prepare_inputs(X, y, "check")

    def sample(self, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` independent outputs of the mechanism on ``data = (X, y)``, shape (size, d)."""
        rng = check_rng(rng)
        size = check_int(size, "size", low=1)
        X, y = self._data(data)
        c, eps, scale = self._params()
        d = X.shape[1]
        method = self.method if self.method != "auto" else ("angular" if d == 2 else "rejection")
        if method == "angular":
            if d != 2:
                raise ValueError(f"method='angular' needs d = 2, got d = {d}")
            starts, lengths, q = circle_arcs(X, y, c)
            logits = np.log(lengths) + scale * eps * q
            k = np.argmax(logits[None, :] + rng.gumbel(size=(size, len(logits))), axis=1)
            theta = starts[k] + rng.random(size) * lengths[k]
            return np.stack([np.cos(theta), np.sin(theta)], -1)
        out = np.empty((0, d))
        proposed = 0
        block = max(1024, 4 * size)
        while out.shape[0] < size:
            if proposed >= self.max_proposals:
                raise RuntimeError(
                    f"rejection sampler accepted {out.shape[0]} of {size} outputs in {proposed} proposals "
                    f"(max_proposals={self.max_proposals}); the acceptance rate is too small for exact sampling"
                )
            W = uniform_sphere(rng, block, d)
            proposed += block
            acc = np.log(rng.random(block)) < scale * eps * self.score(X, y, W)
            out = np.vstack([out, W[acc]])
            block = min(4 * block, 1 << 20)
        return out[:size]

    def __call__(self, data: Any, rng: np.random.Generator) -> np.ndarray:
        return self.sample(data, rng, 1)[0]

    def fit(self, X: Any, y: Any) -> "SphereExponentialMechanism":
        self.coef_ = self.sample((X, y), _rng_of(self.random_state), 1)[0]
        return self

    def predict(self, X: Any) -> np.ndarray:
        return halfspace_predict(self.coef_, X)
