"""Hermite and log-concave feature maps of Algorithms 1 and 2.

From "Differentially private agnostic learning of halfspaces under Gaussian marginals" (paper id
``agnostic-halfspaces``; the source text, ``papers/dp-agnostic-halfspaces.txt``, has lost its title page,
so authors, venue and arXiv id are not known here). Implements the feature maps of Sec. 2-3 and App. D:

* :func:`hermite_1d` -- normalised probabilists' Hermite polynomials ``h_m = He_m / sqrt(m!)``
  (Lemma B.8) by the recurrence ``h_{m+1} = (x h_m - sqrt(m) h_{m-1}) / sqrt(m+1)``;
* :func:`multi_indices` -- every ``kappa`` in N_0^d with ``|kappa| <= p`` (graded order, the
  constant first), ``D_p = C(d+p, p)`` of them (Lemma B.8);
* :func:`hermite_features` -- ``psi_p(x) = (h_kappa(x))_{|kappa|<=p}``, vectorised over rows;
* :func:`clip_features` -- radial clipping ``psi_bar = T psi / max(T, ||psi||)`` (Sec. 2);
* :func:`gradient_matrix` -- ``M = E[grad q grad q^T]`` for ``q = <w, psi_p>`` in closed form from
  ``d_i h_kappa = sqrt(kappa_i) h_{kappa - e_i}`` (Algorithm 2 step 5.1);
* :class:`MonomialBasis` -- the log-concave variant of App. D: monomials ``m_p(x) = (x^kappa)``
  orthonormalised by ``G_p^{-1/2}`` with ``G_p = E_mu[m_p m_p^T]`` computed from the moments of a
  known product marginal (:func:`standard_moments` for Gaussian, Laplace, logistic, uniform);
  :func:`clipping_radius` solves Eq. (25) for ``T``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from scipy import special

from privbound._validation import check_finite_array, check_int, check_real

__all__ = [
    "hermite_1d",
    "multi_indices",
    "n_features",
    "hermite_features",
    "feature_norms",
    "clip_features",
    "clip_scale",
    "gradient_matrix",
    "polynomial_gradient_trace",
    "standard_moments",
    "MARGINALS",
    "sample_marginal",
    "MonomialBasis",
    "clipping_radius",
]


def n_features(d: int, p: int) -> int:
    """``D_p = C(d + p, p)``, the number of multi-indices with ``|kappa| <= p`` (Lemma B.8)."""
    d = check_int(d, "d", low=1)
    p = check_int(p, "p", low=0)
    return math.comb(d + p, p)


def hermite_1d(x, p: int) -> np.ndarray:
    """``h_0(x), ..., h_p(x)`` (normalised probabilists' Hermite), shape ``x.shape + (p + 1,)``.

    ``e^{tx - t^2/2} = sum_m h_m(x) t^m / sqrt(m!)``, so ``h_m = He_m / sqrt(m!)`` and the
    ``h_m`` are orthonormal in L^2(N(0, 1)) (Lemma B.8).
    """
    p = check_int(p, "p", low=0)
    x = np.asarray(x, dtype=float)
    out = np.empty(x.shape + (p + 1,))
    out[..., 0] = 1.0
    if p >= 1:
        out[..., 1] = x
    for m in range(1, p):
        out[..., m + 1] = (x * out[..., m] - math.sqrt(m) * out[..., m - 1]) / math.sqrt(m + 1)
    return out


@lru_cache(maxsize=64)
def _multi_indices(d: int, p: int) -> np.ndarray:
    rows = []
    for deg in range(p + 1):
        # compositions of deg into d non-negative parts, lexicographically descending
        for bars in itertools.combinations(range(deg + d - 1), d - 1):
            prev, parts = -1, []
            for b in bars:
                parts.append(b - prev - 1)
                prev = b
            parts.append(deg + d - 1 - prev - 1)
            rows.append(parts)
    out = np.array(rows, dtype=np.int64).reshape(-1, d)
    out.setflags(write=False)
    return out


def multi_indices(d: int, p: int) -> np.ndarray:
    """All ``kappa`` in N_0^d with ``|kappa| <= p``, shape ``(D_p, d)``, graded (degree 0 first)."""
    d = check_int(d, "d", low=1)
    p = check_int(p, "p", low=0)
    return _multi_indices(d, p)


def _index_lookup(K: np.ndarray, p: int):
    """Encode multi-indices in base ``p + 2`` and return (sorted codes, order) for searchsorted."""
    base = p + 2
    weights = base ** np.arange(K.shape[1], dtype=np.int64)
    codes = K @ weights
    order = np.argsort(codes)
    return codes[order], order, weights


def hermite_features(X, p: int) -> np.ndarray:
    """``psi_p(x) = (h_kappa(x))_{|kappa| <= p}`` for every row of ``X``; shape ``(n, D_p)``.

    ``h_kappa(x) = prod_j h_{kappa_j}(x_j)``; ``E[psi psi^T] = I`` under N(0, I_d) (Lemma B.8).
    Vectorised: one recurrence over degrees, one product over the ``d`` coordinates.
    """
    X = check_finite_array(X, "X")
    X = np.atleast_2d(X) if X.ndim < 2 else X
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-d array (n, d), got shape {X.shape}")
    p = check_int(p, "p", low=0)
    H = hermite_1d(X, p)  # (n, d, p+1)
    K = multi_indices(X.shape[1], p)
    out = H[:, 0, K[:, 0]]
    for j in range(1, X.shape[1]):
        out = out * H[:, j, K[:, j]]
    return out


def feature_norms(F: np.ndarray) -> np.ndarray:
    """Row norms ``||psi_p(x)||_2`` of a feature matrix."""
    return np.linalg.norm(np.asarray(F, dtype=float), axis=-1)


def clip_scale(F: np.ndarray, T: float) -> np.ndarray:
    """``s(x) = T / max(T, ||psi_p(x)||)`` in (0, 1] for every row (Sec. 2)."""
    T = check_real(T, "T", low=0.0, low_inclusive=False)
    return T / np.maximum(T, feature_norms(F))


def clip_features(F: np.ndarray, T: float) -> np.ndarray:
    """Radially clipped features ``psi_bar_{p,T} = s(x) psi_p(x)``; every row has norm <= T."""
    F = np.asarray(F, dtype=float)
    return F * clip_scale(F, T)[..., None]


def gradient_matrix(w, d: int, p: int) -> np.ndarray:
    """``M = E_{N(0,I_d)}[grad q grad q^T]`` for ``q = <w, psi_p>`` (Algorithm 2 step 5.1).

    ``M_ij = sum_{|kappa'| <= p-1} w_{kappa'+e_i} sqrt(kappa'_i + 1) w_{kappa'+e_j} sqrt(kappa'_j + 1)``,
    from ``d_i h_kappa = sqrt(kappa_i) h_{kappa - e_i}`` and orthonormality. Cost O(d^2 D_p).
    """
    d = check_int(d, "d", low=1)
    p = check_int(p, "p", low=0)
    K = multi_indices(d, p)
    w = np.asarray(w, dtype=float)
    if w.shape != (K.shape[0],):
        raise ValueError(f"w must have shape ({K.shape[0]},) = (D_p,) for d={d}, p={p}, got {w.shape}")
    if p == 0:
        return np.zeros((d, d))
    Kp = multi_indices(d, p - 1)
    codes, order, weights = _index_lookup(K, p)
    G = np.empty((Kp.shape[0], d))
    for i in range(d):
        target = Kp @ weights + weights[i]  # code of kappa' + e_i
        pos = order[np.searchsorted(codes, target)]
        G[:, i] = w[pos] * np.sqrt(Kp[:, i] + 1.0)
    return G.T @ G


def polynomial_gradient_trace(w, d: int, p: int) -> float:
    """``tr M = sum_kappa |kappa| w_kappa^2`` (the trace bound in the proof of Lemma 3.2)."""
    K = multi_indices(d, p)
    return float(np.sum(K.sum(axis=1) * np.asarray(w, dtype=float) ** 2))


# ----------------------------------------------------------------- log-concave marginals (App. D)

MARGINALS = ("gaussian", "laplace", "logistic", "uniform")


def standard_moments(marginal: str, k_max: int) -> np.ndarray:
    """Moments ``E[Z^k]``, k = 0..k_max, of the standardised (mean 0, variance 1) 1-d marginal.

    gaussian: (k-1)!! for even k; laplace (scale 1/sqrt 2): k! / 2^{k/2}; logistic (scale sqrt3/pi):
    s^k pi^k (2^k - 2) |B_k| (B_k Bernoulli numbers); uniform on [-sqrt3, sqrt3]: 3^{k/2}/(k+1).
    Odd moments are 0 (all four are symmetric).
    """
    k_max = check_int(k_max, "k_max", low=0)
    if marginal not in MARGINALS:
        raise ValueError(f"marginal must be one of {MARGINALS}, got {marginal!r}")
    out = np.zeros(k_max + 1)
    out[0] = 1.0
    B = special.bernoulli(max(k_max, 2)) if marginal == "logistic" else None
    for k in range(2, k_max + 1, 2):
        if marginal == "gaussian":
            out[k] = float(special.factorial2(k - 1, exact=True))
        elif marginal == "laplace":
            out[k] = math.factorial(k) * 0.5 ** (k / 2)
        elif marginal == "logistic":
            s = math.sqrt(3) / math.pi
            out[k] = (s * math.pi) ** k * (2.0**k - 2.0) * abs(B[k])
        else:
            out[k] = 3.0 ** (k / 2) / (k + 1)
    return out


def sample_marginal(marginal: str, n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` draws of the product of ``d`` standardised 1-d ``marginal`` laws (isotropic log-concave)."""
    n = check_int(n, "n", low=1)
    d = check_int(d, "d", low=1)
    if marginal == "gaussian":
        return rng.standard_normal((n, d))
    if marginal == "laplace":
        return rng.laplace(0.0, 1 / math.sqrt(2), (n, d))
    if marginal == "logistic":
        return rng.logistic(0.0, math.sqrt(3) / math.pi, (n, d))
    if marginal == "uniform":
        return rng.uniform(-math.sqrt(3), math.sqrt(3), (n, d))
    raise ValueError(f"marginal must be one of {MARGINALS}, got {marginal!r}")


@dataclass(frozen=True)
class MonomialBasis:
    """App. D basis: ``psi_p = G_p^{-1/2} m_p`` for a known product marginal given by its moments.

    ``G_p[kappa, kappa'] = E[x^{kappa + kappa'}] = prod_j mu_{kappa_j + kappa'_j}`` where ``mu`` are the
    1-d moments up to degree 2p (``moments``, or :func:`standard_moments` of ``marginal``). Then
    ``E_mu[psi psi^T] = I`` and ``||<v, psi>||_{L^2(mu)} = ||v||_2``.
    """

    d: int
    p: int
    marginal: str = "gaussian"
    moments: tuple[float, ...] | None = None
    _W: np.ndarray = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        check_int(self.d, "d", low=1)
        check_int(self.p, "p", low=0)
        mu = np.asarray(self.moments if self.moments is not None else standard_moments(self.marginal, 2 * self.p),
                        dtype=float)
        if mu.ndim != 1 or mu.size < 2 * self.p + 1:
            raise ValueError(f"moments must list E[Z^k] for k = 0..2p = {2 * self.p}, got {mu.size} values")
        K = multi_indices(self.d, self.p)
        S = K[:, None, :] + K[None, :, :]  # (D, D, d)
        G = np.prod(mu[S], axis=-1)
        evals, evecs = np.linalg.eigh(G)
        if evals.min() <= 1e-12 * evals.max():
            raise ValueError("the Gram matrix G_p is singular: the marginal is not full-dimensional at this degree")
        W = (evecs / np.sqrt(evals)) @ evecs.T  # G^{-1/2}
        object.__setattr__(self, "_W", W)

    @property
    def n_features(self) -> int:
        return self._W.shape[0]

    @property
    def whitening(self) -> np.ndarray:
        """``G_p^{-1/2}``."""
        return self._W

    def monomials(self, X) -> np.ndarray:
        """``m_p(x) = (x^kappa)_{|kappa| <= p}``, shape ``(n, D_p)``."""
        X = np.atleast_2d(check_finite_array(X, "X"))
        if X.shape[1] != self.d:
            raise ValueError(f"X must have d = {self.d} columns, got {X.shape[1]}")
        K = multi_indices(self.d, self.p)
        P = X[:, :, None] ** np.arange(self.p + 1)[None, None, :]
        out = P[:, 0, K[:, 0]]
        for j in range(1, self.d):
            out = out * P[:, j, K[:, j]]
        return out

    def transform(self, X) -> np.ndarray:
        """``psi_p(x) = G_p^{-1/2} m_p(x)`` for every row."""
        return self.monomials(X) @ self._W.T


def clipping_radius(norms, c_alpha: float) -> float:
    """Eq. (25): ``T = min{t > 0 : E[(1 - t/||psi||)_+] <= c alpha}`` over an empirical sample of norms.

    The expectation is the empirical mean over ``norms`` (a Monte Carlo sample of ``||psi_p(X)||``
    under the known marginal). ``E[(1 - t/N)_+]`` is continuous and decreasing in t, so the minimum
    is found by bisection to 1e-10 relative accuracy.
    """
    N = np.asarray(norms, dtype=float)
    if N.ndim != 1 or N.size < 1 or np.any(~np.isfinite(N)) or np.any(N <= 0):
        raise ValueError("norms must be a non-empty 1-d array of positive finite numbers")
    ca = check_real(c_alpha, "c_alpha", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)

    def excess(t):
        return float(np.mean(np.maximum(0.0, 1.0 - t / N)))

    lo, hi = 0.0, float(N.max())
    if excess(lo + 1e-300) <= ca:  # pragma: no cover - impossible for c_alpha < 1
        return 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if excess(mid) <= ca:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-10 * hi:
            break
    return hi
