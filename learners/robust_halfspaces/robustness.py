"""Robust risk, certified radii, random Fourier features, hard instances and digit data
for "Robust and Private Learning of Halfspaces" (paper id ``robust-halfspaces``).

* Margin error and robust risk: App. A.1 (err_gamma on the raw w) and Lemma 7
  (R_gamma(w) = err_gamma(w/||w||)), with a brute-force attack for cross-checking (plan U5).
* Certified radius of linear one-vs-rest models: Lemma 22 (Hein & Andriushchenko 2017), exact for
  linear scores, with strict < (erratum E27) and argmax (erratum E9); the flipping attack of plan G6.
* Random Fourier features with exactly unit norm and the kernel certified radius: App. G.2 / G.2.1.
* Instances: gamma-margin-realizable data in the unit ball; the Theorem 2 packing (random sign
  vectors, notes Sec. 4 item 2 / 5.1); the Theorem 4 instance D_s (erratum E4); the Theorem 3
  fingerprinting embedding (notes Sec. 5.2, errata E5, E11, E18).
* Data: scikit-learn's bundled 8x8 digits; MNIST (IDX files) and USPS (LIBSVM .bz2 or the usual
  h5 file) loaders from paths the user gives (no download).
"""

from __future__ import annotations

import bz2
import gzip
import math
import os
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from privbound.learners.validation import check_finite_array, check_int, check_real, check_rng

__all__ = [
    "margin_error",
    "robust_risk",
    "halfspace_attack",
    "brute_force_robust_error",
    "certified_radius_linear",
    "linear_flip_attack",
    "RandomFourierFeatures",
    "margin_realizable",
    "sign_packing",
    "packing_sample",
    "in_packing_cell",
    "Theorem4Instance",
    "FingerprintingInstance",
    "load_digits_unit",
    "load_mnist_idx",
    "load_usps",
    "Dataset",
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
    """The optimal L2 attack on h_w within radius gamma: z = x - y gamma w/||w|| (notes Sec. 4 item 1)."""
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


def certified_radius_linear(W: Any, X: Any, y: Any) -> np.ndarray:
    """Lemma 22 for linear scores f^k(x) = <w_k, x>: r(x, y) = min_{y' != y} (f^y - f^y') / ||w_y - w_y'||.

    Exact for linear models: every perturbation of norm < r keeps the argmax (E9: argmax; E27: strict <).
    ``y`` holds class indices into the rows of W. A misclassified point gets a negative radius.
    """
    W = np.asarray(W, float)
    X = np.asarray(X, float)
    y = np.asarray(y, dtype=np.int64)
    S = X @ W.T
    sy = S[np.arange(len(y)), y]
    diff = np.linalg.norm(W[:, None, :] - W[None, :, :], axis=2)  # (K, K)
    num = sy[:, None] - S  # (n, K)
    den = diff[y]  # (n, K)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.inf)
    r[np.arange(len(y)), y] = np.inf
    return r.min(axis=1)


def linear_flip_attack(W: Any, X: Any, y: Any, radius: np.ndarray, scale: float = 1.0 + 1e-6) -> np.ndarray:
    """Plan G6: Delta = -scale r (w_y - w_y*) / ||w_y - w_y*||, y* the minimising class; returns x + Delta."""
    W = np.asarray(W, float)
    X = np.asarray(X, float)
    y = np.asarray(y, dtype=np.int64)
    S = X @ W.T
    sy = S[np.arange(len(y)), y]
    diff = np.linalg.norm(W[:, None, :] - W[None, :, :], axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(diff[y] > 0, (sy[:, None] - S) / np.where(diff[y] > 0, diff[y], 1.0), np.inf)
    r[np.arange(len(y)), y] = np.inf
    k = r.argmin(axis=1)
    u = W[y] - W[k]
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    return X - scale * np.asarray(radius, float)[:, None] * u


class RandomFourierFeatures:
    """Random Fourier features (Rahimi & Recht; App. G.2): phi(x) = (cos <rho_i, x>, sin <rho_i, x>)_i / sqrt(d_hat),
    rho_i ~ N(0, I / bandwidth^2), so ||phi(x)|| = 1 exactly and <phi(x), phi(x')> ~ exp(-||x - x'||^2 / (2 bandwidth^2))."""

    def __init__(self, n_components: int = 500, bandwidth: float = 5.0, random_state: Any = None):
        self.n_components = n_components
        self.bandwidth = bandwidth
        self.random_state = random_state

    def fit(self, X: Any, y: Any = None) -> "RandomFourierFeatures":
        from privbound.learners.robust_halfspaces.perceptron import _rng_of

        k = check_int(self.n_components, "n_components", low=1)
        bw = check_real(self.bandwidth, "bandwidth", low=0.0, low_inclusive=False)
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


# --------------------------------------------------------------------------- instances


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


def sign_packing(K: int, d: int, rng: np.random.Generator, max_inner: float = 0.5) -> np.ndarray:
    """K unit vectors in {+-1/sqrt d}^d with pairwise |<w_i, w_j>| <= max_inner (random signs, greedy rejection).

    Theorem 2 / Claim 10 need only <w_i, w_j> <= (0.9/0.505)^2/2 - 1 ~ 0.588 (notes Sec. 4 item 2), not
    the paper's 0.01 (Lemma 9). Raises if 1000 K draws do not suffice.
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


@dataclass(frozen=True)
class Theorem4Instance:
    """D_s (App. D): d = floor(1/gamma^2), D_s = (1/d) sum_i Unif{(e_i, s_i), (-e_i, -s_i)}; realised by
    z = (1/sqrt d) sum_i s_i e_i with margin 1/sqrt(d) >= gamma (erratum E4: the paper omits s_i)."""

    s: np.ndarray

    @classmethod
    def random(cls, gamma: float, rng: np.random.Generator) -> "Theorem4Instance":
        d = int(math.floor(1 / gamma**2 * (1 + 1e-12)))
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


@dataclass(frozen=True)
class FingerprintingInstance:
    """The Theorem 3 embedding (App. C.2; notes Sec. 5.2): T = floor(0.01/gamma), d' = floor(d/T^2),
    T^2 blocks with q_i ~ U[0,1]^{d'}; a sample picks a block i, draws x in {+-1/sqrt d'}^{d'} with
    P[x_j = +1/sqrt d'] = q_ij conditioned on <q'_i, x> >= 0.01 (q' = (2q - 1)/sqrt d'), label +1
    (appendix version, E11), placed in block i (E18). w* = (1/T) sum_i q'_i (x) e_i has margin >= 0.01/T >= gamma
    on the support (checked by :meth:`margins`)."""

    gamma: float
    d: int
    q: np.ndarray  # (T^2, d')

    @classmethod
    def random(cls, gamma: float, d: int, rng: np.random.Generator) -> "FingerprintingInstance":
        T = int(math.floor(0.01 / gamma * (1 + 1e-12)))
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
            ok = np.einsum("ij,ij->i", x, qp[b]) >= 0.01
            for t, bb, xx in zip(todo[ok], b[ok], x[ok]):
                X[t, bb * dp:(bb + 1) * dp] = xx
            todo = todo[~ok]
        return X, np.ones(n)

    def margins(self, X: np.ndarray) -> np.ndarray:
        return X @ self.w_star


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Dataset:
    """A train/test split with pixels in [0, 1] (rows are flattened images) and integer labels."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    name: str


def unit_normalize(X: Any) -> np.ndarray:
    """Scale every non-zero row to unit L2 norm (training inputs of the paper's experiments, notes Sec. 3.4)."""
    X = np.asarray(X, float)
    n = np.linalg.norm(X, axis=1, keepdims=True)
    return np.divide(X, n, out=np.zeros_like(X), where=n > 0)


def load_digits_unit(test_fraction: float = 0.3, seed: int = 0) -> Dataset:
    """scikit-learn's bundled 8x8 digits (1797 images, no network), pixels scaled to [0, 1] (/16),
    split by a seeded stratified shuffle."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    data = load_digits()
    X = data.data / 16.0
    Xtr, Xte, ytr, yte = train_test_split(X, data.target, test_size=test_fraction, random_state=seed, stratify=data.target)
    return Dataset(Xtr, ytr, Xte, yte, "digits")


def _open(path: str | os.PathLike):
    p = os.fspath(path)
    if p.endswith(".gz"):
        return gzip.open(p, "rb")
    if p.endswith(".bz2"):
        return bz2.open(p, "rb")
    return open(p, "rb")


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read an IDX file (MNIST format; optionally .gz): magic 0x0000 (type code) (ndim), big-endian dims."""
    with _open(path) as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise ValueError(f"{os.fspath(path)!r} is not an IDX file (bad magic number)")
    dtypes = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
    code, ndim = raw[2], raw[3]
    if code not in dtypes:
        raise ValueError(f"{os.fspath(path)!r}: unknown IDX type code {code:#x}")
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    arr = np.frombuffer(raw, dtype=dtypes[code], offset=4 + 4 * ndim)
    if arr.size != int(np.prod(dims)):
        raise ValueError(f"{os.fspath(path)!r}: expected {int(np.prod(dims))} values, found {arr.size}")
    return arr.reshape(dims)


def load_mnist_idx(directory: str | os.PathLike) -> Dataset:
    """MNIST from the four IDX files in ``directory`` (train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz],
    t10k-images-idx3-ubyte[.gz], t10k-labels-idx1-ubyte[.gz]); pixels / 255."""
    def find(stem: str) -> str:
        for suffix in ("", ".gz"):
            for s in (stem, stem.replace("-idx", ".idx")):
                p = os.path.join(os.fspath(directory), s + suffix)
                if os.path.exists(p):
                    return p
        raise FileNotFoundError(f"no {stem}[.gz] in {os.fspath(directory)!r}")

    parts = {}
    for key, stem in (("Xtr", "train-images-idx3-ubyte"), ("ytr", "train-labels-idx1-ubyte"),
                      ("Xte", "t10k-images-idx3-ubyte"), ("yte", "t10k-labels-idx1-ubyte")):
        parts[key] = read_idx(find(stem))
    Xtr = parts["Xtr"].reshape(parts["Xtr"].shape[0], -1) / 255.0
    Xte = parts["Xte"].reshape(parts["Xte"].shape[0], -1) / 255.0
    return Dataset(Xtr, parts["ytr"].astype(np.int64), Xte, parts["yte"].astype(np.int64), "mnist")


def _read_libsvm(path: str, n_features: int = 256) -> tuple[np.ndarray, np.ndarray]:
    rows, labels = [], []
    with _open(path) as f:
        for line in f.read().decode().splitlines():
            parts = line.split()
            if not parts:
                continue
            labels.append(int(float(parts[0])))
            x = np.zeros(n_features)
            for tok in parts[1:]:
                j, v = tok.split(":")
                x[int(j) - 1] = float(v)
            rows.append(x)
    return np.asarray(rows), np.asarray(labels)


def load_usps(path: str | os.PathLike) -> Dataset:
    """USPS from the usual files: a directory or path holding the LIBSVM files ``usps.bz2`` and ``usps.t.bz2``
    (labels 1..10 -> 0..9, features in [-1, 1] -> [0, 1]), or an h5 file with groups ``train``/``test`` holding
    ``data`` and ``target`` (needs h5py)."""
    p = os.fspath(path)
    if p.endswith((".h5", ".hdf5")):
        try:
            import h5py
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("reading USPS from an h5 file needs h5py (pip install h5py); or use the LIBSVM .bz2 files") from None
        with h5py.File(p, "r") as f:
            Xtr, ytr = np.asarray(f["train"]["data"], float), np.asarray(f["train"]["target"], np.int64)
            Xte, yte = np.asarray(f["test"]["data"], float), np.asarray(f["test"]["target"], np.int64)
        return Dataset(np.clip(Xtr, 0, 1), ytr, np.clip(Xte, 0, 1), yte, "usps")
    if os.path.isdir(p):
        train, test = os.path.join(p, "usps.bz2"), os.path.join(p, "usps.t.bz2")
    else:
        train = p
        test = p[:-4] + ".t.bz2" if p.endswith(".bz2") else p + ".t"
    if not (os.path.exists(train) and os.path.exists(test)):
        raise FileNotFoundError(f"USPS files not found: {train!r} and {test!r}")
    Xtr, ytr = _read_libsvm(train)
    Xte, yte = _read_libsvm(test)
    to01 = lambda X: np.clip((X + 1) / 2, 0, 1)
    shift = 1 if min(ytr.min(), yte.min()) == 1 else 0
    return Dataset(to01(Xtr), ytr - shift, to01(Xte), yte - shift, "usps")
