"""Instances of Ghazi, Kumar, Manurangsi & Nguyen, "Robust and Private Learning of Halfspaces"
(AISTATS 2021, arXiv:2011.14580), paper id ``robust-halfspaces``.

* gamma-margin-realizable data in the unit ball (the upper bounds, Theorems 5 and 6), and two worst cases of the
  perceptrons' bounds: orthogonal sequences, on which the Perceptron makes exactly Novikoff's (R/gamma)^2 mistakes,
  and a tilted instance on which the batch mean is a poor direction, so that the margin perceptron of Algorithm 1
  needs many batched updates (Lemma 18's iterations exercised);
* the Theorem 2 packing (App. B): random sign vectors, greedy or of a given size, and the two-point
  distributions D^(i). Claim 10 needs only pairwise <w_i, w_j> <= (0.9/0.505)^2/2 - 1 ~ 0.588,
  not the 0.01 of Lemma 9, so random signs with |<w_i, w_j>| <= 0.5 suffice;
* the Theorem 4 instance D_s (App. D), with the corrected realiser (see :class:`Theorem4Instance`);
* the Theorem 3 fingerprinting embedding (App. C.2) and the conditioned product distribution P_q
  of Lemma 12 (App. C.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from privbound._validation import check_int, check_real, check_rng

__all__ = [
    "margin_realizable",
    "orthogonal_sequence",
    "tilted_margin_instance",
    "sign_packing",
    "greedy_sign_packing",
    "packing_sample",
    "in_packing_cell",
    "theorem4_dimension",
    "Theorem4Instance",
    "LEMMA12_MARGIN",
    "fingerprinting_blocks",
    "fingerprinting_sample",
    "FingerprintingInstance",
]


def margin_realizable(n: int, d: int, gamma: float, rng: np.random.Generator, w_star: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n labelled points in the unit ball with y <w*, x> >= gamma for a unit w* (gamma-margin realizable).

    x = y s w* + sqrt(1 - s^2) r u with s ~ U[gamma, 1], r ~ U[0, 1], u a uniform unit vector orthogonal
    to w*, y uniform in {-1, +1}; w* defaults to e_1. Returns (X, y, w*).
    """
    rng = check_rng(rng)
    n = check_int(n, "n", low=1)
    d = check_int(d, "d", low=1)
    gamma = check_real(gamma, "gamma", low=0.0, high=1.0)
    if w_star is None:
        w_star = np.zeros(d)
        w_star[0] = 1.0
    w_star = np.asarray(w_star, float) / np.linalg.norm(w_star)
    y = rng.choice([-1.0, 1.0], size=n)
    s = rng.uniform(gamma, 1.0, size=n)
    U = rng.standard_normal((n, d))
    U -= (U @ w_star)[:, None] * w_star[None, :]
    nu = np.linalg.norm(U, axis=1, keepdims=True)
    U = np.divide(U, nu, out=np.zeros_like(U), where=nu > 0)
    r = rng.uniform(size=(n, 1))
    X = (y * s)[:, None] * w_star[None, :] + np.sqrt(1 - s**2)[:, None] * r * U
    return X, y, w_star


def orthogonal_sequence(k: int, rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Novikoff's bound attained: x_j = e_j (j = 1..k) in R^k with labels y_j (random signs, or +1 without ``rng``).

    w* = y / sqrt(k) separates them with margin gamma = 1/sqrt(k) and R = 1, so (R/gamma)^2 = k; the Perceptron
    (started at 0, a zero score counts as a mistake) errs on every x_j exactly once, in any order: <w, e_j> = 0 until
    e_j itself is used, and y_j <w, e_j> = 1 > 0 afterwards. Returns (X, y, w*).
    """
    k = check_int(k, "k", low=1)
    y = np.ones(k) if rng is None else check_rng(rng).choice([-1.0, 1.0], size=k)
    return np.eye(k), y, y / math.sqrt(k)


def tilted_margin_instance(n: int, d: int, gamma: float, minority: float, rng: np.random.Generator, *,
                           majority_tilt: float = 0.9, minority_tilt: float = 0.3, margin_spread: float = 0.05,
                           jitter: float = 0.02) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """gamma-margin data on which the batch margin perceptron needs many updates (a worst case of Lemma 18's count).

    y x = g e_1 + t e_2 + (jitter noise on e_3..e_d), g ~ U[gamma, gamma + margin_spread]: a majority of fraction
    1 - ``minority`` has t = +majority_tilt, the minority t = -minority_tilt (the orthogonal part is shrunk if needed
    so that ||x|| <= 1; the e_1 component is kept, so w* = e_1 has margin >= gamma on every point). The first batched
    update is ~ the mean of y x, which points along e_2 enough to misclassify the whole minority; every later update
    adds only the minority, turning w by ~ minority * minority_tilt per step, so the margin perceptron makes about
    (1 - minority) majority_tilt / (minority minority_tilt) updates (~21 at the defaults with minority 0.11) before
    the minority's margin exceeds gamma' = 0.95 gamma -- against ~1 update on :func:`margin_realizable` data.
    Rows are shuffled; y is uniform in {-1, +1}. Returns (X, y, w*).
    """
    rng = check_rng(rng)
    n = check_int(n, "n", low=2)
    d = check_int(d, "d", low=2)
    gamma = check_real(gamma, "gamma", low=0.0, high=1.0, low_inclusive=False)
    minority = check_real(minority, "minority", low=0.0, high=0.5, low_inclusive=False)
    if gamma + margin_spread >= 1:
        raise ValueError(f"gamma + margin_spread must be < 1, got {gamma + margin_spread}")
    n_min = max(1, int(round(minority * n)))
    g = rng.uniform(gamma, gamma + margin_spread, size=n)
    t = np.r_[np.full(n - n_min, majority_tilt), np.full(n_min, -minority_tilt)]
    O = np.zeros((n, d - 1))
    O[:, 0] = t
    O[:, 1:] = rng.normal(0.0, jitter, size=(n, d - 2))
    room = np.sqrt(1 - g**2)
    O *= np.minimum(1.0, room / np.linalg.norm(O, axis=1))[:, None]
    Z = np.hstack([g[:, None], O])
    y = rng.choice([-1.0, 1.0], size=n)
    perm = rng.permutation(n)
    w_star = np.zeros(d)
    w_star[0] = 1.0
    return (y[:, None] * Z)[perm], y[perm], w_star


def sign_packing(K: int, d: int, rng: np.random.Generator, max_inner: float = 0.5) -> np.ndarray:
    """K unit vectors in {+-1/sqrt d}^d with pairwise |<w_i, w_j>| <= max_inner (random signs, greedy rejection).

    Theorem 2 / Claim 10 need only <w_i, w_j> <= (0.9/0.505)^2/2 - 1 ~ 0.588, not the 0.01 of Lemma 9.
    Raises if 1000 K draws do not suffice.
    """
    rng = check_rng(rng)
    K = check_int(K, "K", low=1)
    d = check_int(d, "d", low=1)
    out: list[np.ndarray] = []
    for _ in range(1000 * K):
        v = rng.choice([-1.0, 1.0], size=d) / math.sqrt(d)
        if all(abs(v @ u) <= max_inner + 1e-12 for u in out):
            out.append(v)
            if len(out) == K:
                return np.stack(out)
    raise RuntimeError(f"could not find {K} sign vectors in d = {d} with |inner| <= {max_inner}")


def greedy_sign_packing(d: int, draws: int, rng: np.random.Generator, max_inner: float = 0.5) -> np.ndarray:
    """The packing kept greedily from ``draws`` random +-1/sqrt(d) vectors: each is kept when
    |<w_i, w_j>| <= max_inner with every vector kept before it (a variant of Lemma 9's packing)."""
    V = rng.choice([-1.0, 1.0], size=(draws, d)) / math.sqrt(d)
    keep: list[int] = []
    for k in range(draws):
        if not keep or np.max(np.abs(V[keep] @ V[k])) <= max_inner + 1e-12:
            keep.append(k)
    return V[keep]


def packing_sample(w_i: Any, gamma: float, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n i.i.d. draws of D^(i) = Unif{(1.01 gamma w_i, +1), (-1.01 gamma w_i, -1)} (App. B)."""
    y = rng.choice([-1.0, 1.0], size=n)
    return (1.01 * gamma) * y[:, None] * np.asarray(w_i, float)[None, :], y


def in_packing_cell(W: Any, w_i: Any, gamma: float) -> np.ndarray:
    """h_w in G^(i) (R_{0.9 gamma}(h_w, D^(i)) = 0 for alpha <= 0.49): both support points have
    normalised margin > 0.9 gamma, i.e. 1.01 gamma <w, w_i>/||w|| > 0.9 gamma. W is (k, d)."""
    W = np.atleast_2d(np.asarray(W, float))
    nrm = np.linalg.norm(W, axis=1)
    m = 1.01 * gamma * (W @ np.asarray(w_i, float)) / np.where(nrm > 0, nrm, 1.0)
    return (m > 0.9 * gamma) & (nrm > 0)


def theorem4_dimension(gamma: float) -> int:
    """d = floor(1/gamma^2) of Theorem 4 (a relative guard of 1e-12: 1/0.01**2 is 9999.99... in floating point)."""
    return int(math.floor(1 / gamma**2 * (1 + 1e-12)))


@dataclass(frozen=True)
class Theorem4Instance:
    """D_s (App. D): d = floor(1/gamma^2), D_s = (1/d) sum_i Unif{(e_i, s_i), (-e_i, -s_i)}; realised by
    z = (1/sqrt d) sum_i s_i e_i with margin 1/sqrt(d) >= gamma.

    Erratum (proof of Theorem 4): the printed realiser z = (1/sqrt d) sum_i e_i omits the signs s_i.
    """

    s: np.ndarray

    @classmethod
    def random(cls, gamma: float, rng: np.random.Generator) -> "Theorem4Instance":
        d = theorem4_dimension(gamma)
        return cls(rng.choice([-1.0, 1.0], size=d))

    @property
    def d(self) -> int:
        return len(self.s)

    @property
    def realiser(self) -> np.ndarray:
        return self.s / math.sqrt(self.d)

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        i = rng.integers(0, self.d, size=n)
        sign = rng.choice([-1.0, 1.0], size=n)
        X = np.zeros((n, self.d))
        X[np.arange(n), i] = sign
        return X, sign * self.s[i]

    def error(self, w: Any) -> float:
        """Exact 0-1 error of h_w on D_s (sgn(0) counts as an error)."""
        w = np.asarray(w, float)
        return float(np.mean(0.5 * ((self.s * w <= 0).astype(float) + (-self.s * -w <= 0).astype(float))))


LEMMA12_MARGIN = 0.01
"""The conditioning threshold of P_q (Lemma 12, App. C.1): x ~ B_q conditioned on <q', x> >= 0.01."""


def fingerprinting_blocks(gamma: float) -> int:
    """T = floor(0.01/gamma) of the Theorem 3 embedding (T^2 blocks; relative guard 1e-12 as in :func:`theorem4_dimension`)."""
    return int(math.floor(0.01 / gamma * (1 + 1e-12)))


def fingerprinting_sample(q: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """n draws from P_q (Lemma 12): x in {+-1/sqrt d}^d with P[x_j = +1/sqrt d] = q_j, conditioned on
    <q', x> >= 0.01, q' = (2q - 1)/sqrt d (rejection sampling)."""
    d = q.size
    qp = (2 * q - 1) / math.sqrt(d)
    X = np.empty((n, d))
    todo = np.arange(n)
    while todo.size:
        x = np.where(rng.random((todo.size, d)) < q, 1.0, -1.0) / math.sqrt(d)
        ok = x @ qp >= LEMMA12_MARGIN
        X[todo[ok]] = x[ok]
        todo = todo[~ok]
    return X


@dataclass(frozen=True)
class FingerprintingInstance:
    """The Theorem 3 embedding (App. C.2): T = floor(0.01/gamma), d' = floor(d/T^2), T^2 blocks with
    q_i ~ U[0,1]^{d'}; a sample picks a block i, draws x in {+-1/sqrt d'}^{d'} with
    P[x_j = +1/sqrt d'] = q_ij conditioned on <q'_i, x> >= 0.01 (q' = (2q - 1)/sqrt d'), label +1,
    placed in block i. w* = (1/T) sum_i q'_i (x) e_i has margin >= 0.01/T >= gamma on the support
    (checked by :meth:`margins`).

    Errata: the overview (Sec. 2.2) has d' = d/T and both (x, +1) and (-x, -1); the appendix's
    d' = floor(d/T^2) and (x, +1) only are used. In the proof e_i is a basis vector of R^{T^2}
    (printed: R^{d'}).
    """

    gamma: float
    d: int
    q: np.ndarray  # (T^2, d')

    @classmethod
    def random(cls, gamma: float, d: int, rng: np.random.Generator) -> "FingerprintingInstance":
        T = fingerprinting_blocks(gamma)
        if T < 1:
            raise ValueError(f"gamma must be <= 0.01 for the Theorem 3 embedding, got {gamma}")
        dp = d // T**2
        if dp < 1:
            raise ValueError(f"d must be >= T^2 = {T**2}, got {d}")
        return cls(gamma, d, rng.uniform(size=(T**2, dp)))

    @property
    def T(self) -> int:
        return int(round(math.sqrt(self.q.shape[0])))

    @property
    def w_star(self) -> np.ndarray:
        dp = self.q.shape[1]
        w = np.zeros(self.d)
        qp = (2 * self.q - 1) / math.sqrt(dp)
        w[: self.q.size] = qp.ravel() / self.T
        return w

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        B, dp = self.q.shape
        blocks = rng.integers(0, B, size=n)
        X = np.zeros((n, self.d))
        todo = np.arange(n)
        qp = (2 * self.q - 1) / math.sqrt(dp)
        while todo.size:
            b = blocks[todo]
            x = np.where(rng.random((todo.size, dp)) < self.q[b], 1.0, -1.0) / math.sqrt(dp)
            ok = np.einsum("ij,ij->i", x, qp[b]) >= LEMMA12_MARGIN
            for t, bb, xx in zip(todo[ok], b[ok], x[ok]):
                X[t, bb * dp:(bb + 1) * dp] = xx
            todo = todo[~ok]
        return X, np.ones(n)

    def margins(self, X: np.ndarray) -> np.ndarray:
        return X @ self.w_star
