"""DP agnostic learners of halfspaces (paper id ``agnostic-halfspaces``).

Implements, from ``papers/dp-agnostic-halfspaces.txt`` and its reading notes
(``dp-agnostic-halfspaces.notes.md``; [revised] items override the paper):

* :class:`PrivatePolynomialRegression` -- Algorithm 1 (Sec. 2, Thm 2.1; App. C; log-concave
  variant of App. D / Thm D.1 through :class:`privbound.learners.agnostic_halfspaces.hermite.MonomialBasis`);
* :class:`PrivateProperHalfspace` -- Algorithm 2 (Sec. 3, Thm 3.1, Lemmas 3.2-3.5; App. E);
* :class:`DPSAS` -- Algorithm 3 (Sec. 4, Prop. 4.2, Claims 4.3-4.6);
* :class:`SemiAgnosticHalfspace` -- Algorithm 4 (Sec. 4, Thm 4.1; App. F);
* :class:`HalfspaceProblem` -- data: isotropic log-concave marginals with labels from a halfspace
  plus random classification noise (OPT exact) or structured flips (OPT by search, low d);
* batched releases for the audits: :func:`coefficient_release` (Algorithm 2 step 4),
  :func:`exp_mech_select` (the selection steps of Algorithms 1, 2, 4), :func:`dpsas_label_mean`
  and :func:`dpsas_initial_direction` (Algorithm 3 steps 4 and 6), :func:`dpsas_gradient_release`
  (Algorithm 3 step 9.3). The learners call exactly these functions with ``size=1``, so a batch
  is distributionally identical to independent single runs (tested).

Conventions: ``sign(0) = +1`` (the paper leaves it open; notes Sec. 1); labels in {-1, +1};
replace-one neighbours (Def. B.2); natural logarithms except the base-2 grids (k, K).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import special, stats
from sklearn.base import BaseEstimator, ClassifierMixin

from privbound.learners.validation import (
    check_delta,
    check_epsilon,
    check_finite_array,
    check_int,
    check_real,
)
from privbound.learners.agnostic_halfspaces.hermite import (
    MonomialBasis,
    clip_features,
    gradient_matrix,
    hermite_features,
    n_features,
    sample_marginal,
)
from privbound.learners.neighbouring import NeighbouringRelation
from privbound.learners.mechanisms import PrivacyGuarantee

__all__ = [
    "HalfspaceProblem",
    "halfspace_predict",
    "error_counts_by_threshold",
    "exp_mech_select",
    "coefficient_release",
    "alg2_sigma",
    "dpsas_sigma",
    "dpsas_label_mean",
    "dpsas_initial_direction",
    "dpsas_gradient_release",
    "sphere_cover",
    "PrivatePolynomialRegression",
    "PrivateProperHalfspace",
    "DPSAS",
    "SemiAgnosticHalfspace",
]


def _sign(z: np.ndarray) -> np.ndarray:
    """sign with sign(0) = +1, as integers in {-1, +1}."""
    return np.where(np.asarray(z) >= 0, 1, -1)


def _rng(random_state) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(random_state)


def _check_xy(X, y):
    X = check_finite_array(X, "X", ndim=2)
    y = check_finite_array(y, "y", ndim=1)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X and y must have the same number of rows, got {X.shape[0]} and {y.shape[0]}")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("y must contain labels in {-1, +1} only")
    return X, y


def halfspace_predict(X, w, t) -> np.ndarray:
    """``sign(<w, x> + t)`` with sign(0) = +1."""
    return _sign(np.asarray(X, dtype=float) @ np.asarray(w, dtype=float) + t)


# ====================================================================== data


@dataclass(frozen=True)
class HalfspaceProblem:
    """A distribution on R^d x {+-1}: labels ``sign(<w, x> + t)`` corrupted by ``noise``.

    * ``noise="random"``: random classification noise at ``rate``; OPT = rate exactly (the target is
      Bayes-optimal when rate < 1/2, and every classifier errs at least ``rate``);
    * ``noise="slab"``: every label in the slab ``|<w, x> + t| <= width`` flipped (deterministic);
    * ``noise="far"``: every label in the far region ``<u, x> >= radius`` flipped, ``u`` a unit
      vector orthogonal to ``w`` (deterministic);
    * ``noise="none"``: OPT = 0.
    For the deterministic flips OPT is found by :meth:`opt_by_search` (low d).
    ``marginal`` is one of ``privbound.learners.agnostic_halfspaces.hermite.MARGINALS`` (standardised product laws).
    """

    d: int
    w: tuple[float, ...]
    t: float = 0.0
    noise: str = "random"
    rate: float = 0.1
    width: float = 0.1
    radius: float = 1.5
    marginal: str = "gaussian"

    def __post_init__(self) -> None:
        check_int(self.d, "d", low=1)
        w = np.asarray(self.w, dtype=float)
        if w.shape != (self.d,) or not np.all(np.isfinite(w)) or np.linalg.norm(w) == 0:
            raise ValueError(f"w must be a nonzero finite vector of length d = {self.d}")
        object.__setattr__(self, "w", tuple(float(v) for v in w / np.linalg.norm(w)))
        if self.noise not in ("random", "slab", "far", "none"):
            raise ValueError(f"noise must be 'random', 'slab', 'far' or 'none', got {self.noise!r}")
        check_real(self.rate, "rate", low=0.0, high=0.5, high_inclusive=False)
        check_real(self.width, "width", low=0.0)
        if self.noise == "far" and self.d < 2:
            raise ValueError("noise='far' needs d >= 2 (the far region lies along a direction orthogonal to w)")

    @classmethod
    def random(cls, d: int, rng: np.random.Generator, **kw) -> "HalfspaceProblem":
        """A problem with a uniformly random unit normal ``w``."""
        w = rng.standard_normal(d)
        return cls(d, tuple(w / np.linalg.norm(w)), **kw)

    @property
    def normal(self) -> np.ndarray:
        return np.asarray(self.w)

    @property
    def far_direction(self) -> np.ndarray:
        """A fixed unit vector orthogonal to ``w`` (Gram-Schmidt on the first suitable basis vector)."""
        w = self.normal
        for i in np.argsort(np.abs(w)):
            e = np.zeros(self.d)
            e[i] = 1.0
            u = e - (e @ w) * w
            if np.linalg.norm(u) > 1e-6:
                return u / np.linalg.norm(u)
        raise ValueError("no orthogonal direction in d = 1")  # pragma: no cover

    def clean_labels(self, X) -> np.ndarray:
        return halfspace_predict(X, self.normal, self.t)

    def flip_region(self, X) -> np.ndarray:
        """Boolean mask of the deterministically flipped points (all False for random/none noise)."""
        X = np.asarray(X, dtype=float)
        if self.noise == "slab":
            return np.abs(X @ self.normal + self.t) <= self.width
        if self.noise == "far":
            return X @ self.far_direction >= self.radius
        return np.zeros(X.shape[0], dtype=bool)

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``n`` i.i.d. examples ``(X, y)``."""
        X = sample_marginal(self.marginal, n, self.d, rng)
        y = self.clean_labels(X)
        flip = self.flip_region(X)
        if self.noise == "random":
            flip = rng.random(n) < self.rate
        return X, np.where(flip, -y, y).astype(float)

    def error(self, predict, rng: np.random.Generator, n_test: int = 200_000) -> float:
        """``err_P(h)`` of a predictor ``predict(X) -> {-1,+1}``, by a fresh sample of the marginal.

        Random noise is integrated exactly given x: ``err = rate + (1 - 2 rate) P[h != h*]``; the
        structured flips are deterministic given x. Standard error <= 0.5/sqrt(n_test).
        """
        X = sample_marginal(self.marginal, n_test, self.d, rng)
        h = np.asarray(predict(X))
        clean = self.clean_labels(X)
        if self.noise == "random":
            return float(self.rate + (1 - 2 * self.rate) * np.mean(h != clean))
        y = np.where(self.flip_region(X), -clean, clean)
        return float(np.mean(h != y))

    def halfspace_error_exact(self, w, t) -> float:
        """Exact ``err_P(sign(<w,x>+t))`` for Gaussian marginals and random (or no) noise.

        ``P[h != h*] = Phi(t1) + Phi(t2) - 2 Phi_2(t1, t2; rho)`` for unit normals with correlation rho
        (bivariate normal CDF, scipy.stats.multivariate_normal).
        """
        if self.marginal != "gaussian" or self.noise not in ("random", "none"):
            raise ValueError("exact errors need a Gaussian marginal and random/no noise; use error()")
        w = np.asarray(w, dtype=float)
        nw = np.linalg.norm(w)
        if nw == 0:
            dis = float(stats.norm.cdf(-self.t)) if t >= 0 else float(stats.norm.cdf(self.t))
        else:
            u, t1 = w / nw, t / nw
            rho = float(np.clip(u @ self.normal, -1.0, 1.0))
            if rho > 1 - 1e-12:
                dis = abs(stats.norm.cdf(t1) - stats.norm.cdf(self.t))
            elif rho < -1 + 1e-12:
                dis = 1 - abs(stats.norm.cdf(t1) - stats.norm.cdf(-self.t))
            else:
                both = stats.multivariate_normal(mean=[0, 0], cov=[[1, rho], [rho, 1]]).cdf([t1, self.t])
                dis = float(stats.norm.cdf(t1) + stats.norm.cdf(self.t) - 2 * both)
        rate = self.rate if self.noise == "random" else 0.0
        return float(rate + (1 - 2 * rate) * max(dis, 0.0))

    @property
    def opt_exact(self) -> float | None:
        """OPT when it is known exactly (random noise: ``rate``; none: 0), else ``None``."""
        if self.noise == "random":
            return float(self.rate)
        if self.noise == "none":
            return 0.0
        return None

    def opt_by_search(self, rng: np.random.Generator, *, n: int = 200_000, n_directions: int = 4000,
                      thresholds=None) -> float:
        """OPT estimated by search over halfspaces (for d <= 3): min empirical error on a fresh sample.

        Directions: ``w`` itself, the far direction, and a sphere cover; thresholds: a grid of step
        0.01 on [-3, 3]. Returns ``min(search, exact error of the target)``; the standard error of
        each empirical error is <= 0.5/sqrt(n).
        """
        if self.opt_exact is not None:
            return self.opt_exact
        if thresholds is None:
            thresholds = np.round(np.arange(-3.0, 3.0 + 1e-9, 0.01), 10)
        X, y = self.sample(n, rng)
        dirs = [self.normal[None, :]]
        if self.d >= 2:
            dirs.append(self.far_direction[None, :])
            dirs.append(sphere_cover(self.d, math.sqrt(4 * math.pi / n_directions) if self.d >= 3 else
                                     2 * math.pi / n_directions))
        else:
            dirs.append(np.array([[-1.0]]))
        Dirs = np.concatenate(dirs, axis=0)
        best = 1.0
        for chunk in np.array_split(np.arange(Dirs.shape[0]), max(1, Dirs.shape[0] // 256)):
            errs = error_counts_by_threshold(X @ Dirs[chunk].T, y, thresholds)
            best = min(best, float(errs.min()) / n)
        target = float(np.mean(self.clean_labels(X) != y))
        return min(best, target)


def error_counts_by_threshold(P: np.ndarray, y: np.ndarray, thresholds) -> np.ndarray:
    """Error counts of ``sign(P[:, j] + t)`` against ``y`` for every column j and threshold t.

    ``P`` is ``(n, J)`` (projections ``<v_j, x_i>``); returns ``(J, len(thresholds))``. Uses sorting:
    errors(t) = #{y = +1, p < -t} + #{y = -1, p >= -t} (sign(0) = +1).
    """
    P = np.asarray(P, dtype=float)
    if P.ndim == 1:
        P = P[:, None]
    y = np.asarray(y)
    t = np.asarray(thresholds, dtype=float)
    pos = np.sort(P[y > 0], axis=0)
    neg = np.sort(P[y <= 0], axis=0)
    n_neg = neg.shape[0]
    out = np.empty((P.shape[1], t.size), dtype=np.int64)
    for j in range(P.shape[1]):
        out[j] = np.searchsorted(pos[:, j], -t, side="left") + n_neg - np.searchsorted(neg[:, j], -t, side="left")
    return out


def sphere_cover(k: int, gamma: float) -> np.ndarray:
    """Unit vectors of R^k forming (approximately, for k >= 3) a gamma-cover of the sphere S^{k-1}.

    k = 1: {+1, -1}; k = 2: angles on a grid of step gamma (exact gamma/2 cover in angle); k >= 3:
    a Fibonacci lattice of ceil(4 pi / gamma^2) points (k = 3) or normalised Gaussian points (k > 3).
    """
    k = check_int(k, "k", low=1)
    gamma = check_real(gamma, "gamma", low=0.0, low_inclusive=False)
    if k == 1:
        return np.array([[1.0], [-1.0]])
    if k == 2:
        n = max(4, math.ceil(2 * math.pi / gamma))
        a = 2 * math.pi * np.arange(n) / n
        return np.stack([np.cos(a), np.sin(a)], axis=1)
    N = max(8, math.ceil(4 * math.pi / gamma**2))
    if k == 3:
        i = np.arange(N) + 0.5
        phi = np.arccos(1 - 2 * i / N)
        theta = math.pi * (1 + 5**0.5) * i
        return np.stack([np.cos(theta) * np.sin(phi), np.sin(theta) * np.sin(phi), np.cos(phi)], axis=1)
    G = np.random.default_rng(k).standard_normal((N, k))  # deterministic (data-independent) cover
    return G / np.linalg.norm(G, axis=1, keepdims=True)


# ====================================================================== shared private steps


def exp_mech_select(error_counts, epsilon: float, rng: np.random.Generator, size: int | None = None):
    """Exponential mechanism over candidates scored by ``-#errors`` (sensitivity 1; Lemma B.5).

    P[j] proportional to exp(-epsilon * errors_j / 2) (Algorithm 1 step 5, Algorithm 2 step 6,
    Algorithm 4 step 7 with Score = accuracy and Delta = 1/|D_val|: the same law). Gumbel-max in
    log space. Returns one flat index (``size=None``) or ``size`` of them.
    """
    c = np.asarray(error_counts, dtype=float).ravel()
    eps = check_epsilon(epsilon)
    logits = -0.5 * eps * c
    n = 1 if size is None else check_int(size, "size", low=1)
    idx = np.argmax(logits[None, :] + rng.gumbel(size=(n, c.size)), axis=1)
    return int(idx[0]) if size is None else idx


def exp_mech_log_probabilities(error_counts, epsilon: float) -> np.ndarray:
    """Exact log P[j] of :func:`exp_mech_select` (logsumexp)."""
    c = np.asarray(error_counts, dtype=float).ravel()
    logits = -0.5 * check_epsilon(epsilon) * c
    return logits - special.logsumexp(logits)


def alg2_sigma(T: float, epsilon: float, delta: float, n: int, sensitivity_factor: float = 4.0) -> float:
    """Algorithm 2 step 3: sigma = 4 T sqrt(2 ln(1.25/delta)) / (eps n) (l2-sensitivity 4T/n; eps < 1).

    ``sensitivity_factor`` exists for the planted bug (2 instead of 4); the learner always uses 4.
    """
    return sensitivity_factor * T * math.sqrt(2 * math.log(1.25 / delta)) / (epsilon * n)


def coefficient_release(features, y, sigma: float, rng: np.random.Generator, size: int | None = None):
    """Algorithm 2 step 4: ``Proj_{B_2}( (2/n) sum_{S_1} Y psi_bar + Z )``, Z ~ N(0, sigma^2 I).

    ``features`` are the (already clipped) features of S_1 (|S_1| = n/2, so (2/n) sum = mean).
    Returns one vector (``size=None``) or ``size`` independent releases, shape (size, D_p).
    """
    F = np.asarray(features, dtype=float)
    mean = (np.asarray(y, dtype=float) @ F) / F.shape[0]
    n = 1 if size is None else check_int(size, "size", low=1)
    raw = mean[None, :] + rng.normal(0.0, sigma, size=(n, mean.size))
    out = raw / np.maximum(1.0, np.linalg.norm(raw, axis=1, keepdims=True))
    return out[0] if size is None else out


def dpsas_sigma(L: float, epsilon: float, delta: float, m_0: int, with_L: bool = True) -> float:
    """Algorithm 3 line 6: sigma = 2 L sqrt(2 ln(2/delta)) / (eps m_0) (sensitivity 2L/m_0).

    ``with_L=False`` is Claim 4.3's printed sigma (notes Sec. 11 item 3: the factor L is missing
    there); it is only used by the planted-bug audit target.
    """
    return 2 * (L if with_L else 1.0) * math.sqrt(2 * math.log(2 / delta)) / (epsilon * m_0)


def dpsas_label_mean(y, epsilon: float, rng: np.random.Generator, size: int | None = None):
    """Algorithm 3 step 4: ``mean(y) + Lap(2/(eps m_0))`` (sensitivity 2/m_0, eps-DP)."""
    y = np.asarray(y, dtype=float)
    n = 1 if size is None else check_int(size, "size", low=1)
    out = y.mean() + rng.laplace(0.0, 2 / (epsilon * y.size), size=n)
    return float(out[0]) if size is None else out


def clip_rows(X, L: float) -> np.ndarray:
    """Clip every row to l2-norm <= L (Algorithm 3 step 3)."""
    X = np.asarray(X, dtype=float)
    nrm = np.linalg.norm(X, axis=1, keepdims=True)
    return X * np.minimum(1.0, L / np.maximum(nrm, 1e-300))


def dpsas_initial_direction(X, y, sigma: float, rng: np.random.Generator, size: int | None = None):
    """Algorithm 3 step 6: ``(1/m_0) sum_{D_init} x y + N(0, sigma^2 I_d)`` (rows already clipped to L)."""
    X = np.asarray(X, dtype=float)
    mean = (np.asarray(y, dtype=float) @ X) / X.shape[0]
    n = 1 if size is None else check_int(size, "size", low=1)
    out = mean[None, :] + rng.normal(0.0, sigma, size=(n, mean.size))
    return out[0] if size is None else out


def dpsas_gradient(X, y, w, a: float, b: float) -> np.ndarray:
    """Algorithm 3 step 9.2: ``-(1/m_0) sum y 1{|w.x - b| <= a} (x - (w.x) w)`` at a unit ``w``."""
    X = np.asarray(X, dtype=float)
    z = X @ w
    band = (np.abs(z - b) <= a) * np.asarray(y, dtype=float)
    return -(band @ X - (band @ z) * w) / X.shape[0]


def dpsas_gradient_release(X, y, w, a: float, b: float, sigma: float, rng: np.random.Generator,
                           size: int | None = None):
    """Noisy gradient of Algorithm 3 step 9.3: ``grad + sigma (I - w w^T) g``, g ~ N(0, I_d)."""
    w = np.asarray(w, dtype=float)
    g0 = dpsas_gradient(X, y, w, a, b)
    n = 1 if size is None else check_int(size, "size", low=1)
    G = rng.normal(0.0, sigma, size=(n, w.size))
    G = G - np.outer(G @ w, w)
    out = g0[None, :] + G
    return out[0] if size is None else out


# ====================================================================== Algorithm 1


def alg1_erm_schedule(n0: int, D: int, T: float, R: float, epsilon: float, delta: float, max_iter: int,
                      compose: bool = True):
    """Algorithm 1's DP-ERM schedule (Lemma B.4 stand-in, notes Sec. 4.1): ``(K, sigma_g, step, s)``.

    ``s = get_sigma_gaussian(eps, delta)`` (one exactly calibrated Gaussian of sensitivity 1), ``K =
    min(max_iter, ceil(n0^2 / (4 D s^2)))`` steps, ``sigma_g = (2T/n0) sqrt(K) s`` (K adaptive Gaussian
    steps are exactly (sqrt(K) z^-1)-GDP), step ``R / sqrt(K (T^2 + D sigma_g^2))``. ``compose=False`` is a
    planted bug for the audits only (noise for ONE step: the composition over K iterations forgotten).
    """
    import dp_accounting

    s_unit = float(dp_accounting.get_sigma_gaussian(epsilon, delta))
    K = int(min(max_iter, max(1, math.ceil(n0**2 / (4 * D * s_unit**2)))))
    sigma_g = (2 * T / n0) * (math.sqrt(K) if compose else 1.0) * s_unit
    step = R / math.sqrt(K * (T**2 + D * sigma_g**2))
    return K, sigma_g, step, s_unit


def dp_erm_l1(Fb, yb, K: int, sigma_g: float, step: float, R: float, rng: np.random.Generator,
              size: int | None = None) -> np.ndarray:
    """Noisy projected subgradient descent on the clipped L1 loss (4), averaged iterate (Algorithm 1 step 3).

    ``Fb`` (k, n0, D) clipped block features, ``yb`` (k, n0). Returns (k, D) (``size=None``, the learner's
    path) or (size, k, D): ``size`` independent runs on the same blocks, as array operations (each step's
    noise has the same shape as the iterate, so a batch is ``size`` independent single runs).
    """
    Fb = np.asarray(Fb, dtype=float)
    yb = np.asarray(yb, dtype=float)
    k, n0, D = Fb.shape
    shape = (k, D) if size is None else (check_int(size, "size", low=1), k, D)
    V = np.zeros(shape)
    Vsum = np.zeros(shape)
    for _ in range(K):
        r = np.einsum("knd,...kd->...kn", Fb, V) - yb
        g = np.einsum("...kn,knd->...kd", np.sign(r), Fb) / n0
        V = V - step * (g + rng.normal(0.0, sigma_g, size=V.shape))
        V /= np.maximum(1.0, np.linalg.norm(V, axis=-1, keepdims=True) / R)
        Vsum += V
    return Vsum / K


def alg1_validation_errors(Fv, yv, coefs, thresholds) -> np.ndarray:
    """Error counts of ``h_{j,l}(x) = sign(<v_j, psi_bar(x)> - t_l)`` on the validation set.

    ``coefs`` (..., k, D) -> counts (..., k, M) (sign(0) = +1), vectorised over any leading batch axes.
    """
    S = np.einsum("md,...kd->...km", np.asarray(Fv, dtype=float), np.asarray(coefs, dtype=float))
    pred = S[..., None] - np.asarray(thresholds, dtype=float) >= 0  # (..., k, m, M)
    return np.sum(pred != (np.asarray(yv) > 0)[:, None], axis=-2)


def alg1_release_batch(X, y, *, degree, epsilon, delta, alpha=0.1, beta=0.1, c=0.25, n_blocks=None, n_grid=None,
                       n_validation=None, clip_radius=None, basis="hermite", radius=1.0, max_iter=300,
                       rng: np.random.Generator, size: int, compose: bool = True, clip: bool = True) -> np.ndarray:
    """``size`` independent end-to-end runs of Algorithm 1 on one dataset, as array operations (notes P3).

    Same parameters, partition and steps as :class:`PrivatePolynomialRegression` (the released output is
    the selected hypothesis): returns (size, D_p + 1) rows ``[v_j^, t_l^]``. ``compose=False`` (noise
    for one ERM step) and ``clip=False`` (features not clipped) are planted bugs for the audits only.
    """
    est = PrivatePolynomialRegression(degree=degree, epsilon=epsilon, delta=delta, alpha=alpha, beta=beta, c=c,
                                      n_blocks=n_blocks, n_grid=n_grid, n_validation=n_validation,
                                      clip_radius=clip_radius, basis=basis, radius=radius, max_iter=max_iter)
    plan = est._plan(*_check_xy(X, y))
    F = plan["F"] if clip else plan["F_unclipped"]
    k, n0, M, m, D = plan["k"], plan["n0"], plan["M"], plan["m"], plan["D"]
    y = np.asarray(y, dtype=float)
    Fb, yb = F[: k * n0].reshape(k, n0, D), y[: k * n0].reshape(k, n0)
    Fv, yv = F[k * n0: k * n0 + m], y[k * n0: k * n0 + m]
    K, sigma_g, step, _ = alg1_erm_schedule(n0, D, plan["T"], plan["R"], epsilon, delta, max_iter, compose)
    V = dp_erm_l1(Fb, yb, K, sigma_g, step, plan["R"], rng, size)  # (size, k, D)
    ts = -1 + (2 * np.arange(1, M + 1) - 1) / M
    errs = alg1_validation_errors(Fv, yv, V, ts).reshape(size, k * M)
    flat = np.argmax(-0.5 * epsilon * errs + rng.gumbel(size=errs.shape), axis=1)
    j, l = np.divmod(flat, M)
    return np.concatenate([V[np.arange(size), j], ts[l][:, None]], axis=1)




class PrivatePolynomialRegression(ClassifierMixin, BaseEstimator):
    """Algorithm 1: private polynomial L^1 regression with thresholds (Sec. 2, Thm 2.1; App. C, D).

    1. Split S into ``k`` disjoint blocks of ``n_0`` and a validation set of ``m`` (data-independent).
    2. Per block: a DP convex ERM of the clipped L1 loss ``|<v, psi_bar(x)> - y|`` over the ball
       B_2^{D_p}(R) (Lemma B.4). Implemented as noisy projected full-batch subgradient descent
       (notes Sec. 4.1 implementation note): ``K_it`` steps, subgradients of norm <= T so the mean
       has replace-one sensitivity ``Delta = 2T/n_0``, Gaussian noise ``sigma_g``; the averaged
       iterate is returned. Accounting: K adaptive Gaussian steps of noise multiplier z are exactly
       (sqrt(K)/z)-GDP (Dong, Roth & Su 2019, Cor. 3.3), so ``sigma_g = Delta sqrt(K) s(eps, delta)``
       with ``s`` = ``dp_accounting.get_sigma_gaussian`` is exactly (eps, delta)-DP; ``dp_event()``
       describes it as ``SelfComposed(Gaussian(z), K)`` for the PLD/RDP accountants.
       **Achieved rate** (standard projected-subgradient analysis, step ``R/sqrt(K (T^2 + D sigma_g^2))``):
       ``E[L^(v_bar)] - min L^ <= R T sqrt(1/K + 4 D s^2 / n_0^2)`` (``excess_risk_bound_``), i.e.
       ``O(T R sqrt(D log(1/delta))/(n_0 eps))`` once ``K >= n_0^2/(4 D s^2)`` -- Lemma B.4's rate with
       R the radius (the diameter is 2R, notes Sec. 3.2 [revised]; constants only). ``K`` is capped
       at ``max_iter``; the bound above is then reported with the capped K.
    3. Candidates ``h_{j,l}(x) = sign(<v_j, psi_bar(x)> - t_l)``, ``t_l = -1 + (2l - 1)/M``.
    4. Exponential mechanism on the validation set: P ~ exp(-eps m err^/2) (Lemma B.5).

    Parallel composition over the disjoint parts gives (eps, delta)-DP (Prop. C.1 / D.2).

    Parameters (stored unchanged): ``degree`` p; ``epsilon``, ``delta`` (Thm 2.1: <= 1/2);
    ``alpha`` and ``c`` (grid M and Remark 3's T); ``beta`` (k = ceil(log2(2/beta)));
    ``n_blocks`` / ``n_grid`` override k / M; ``n_validation`` (default: n // 5);
    ``clip_radius``: ``None`` = Remark 3's ``sqrt(D_p/(c alpha))`` (notes Sec. 11 item 2, corrected),
    ``"gaussian"`` = ``2 sqrt(D_p)`` (needs d >= 2p^2/(c alpha)), or a number (e.g. Eq. (25)'s T);
    ``basis``: ``"hermite"`` or a :class:`privbound.learners.agnostic_halfspaces.hermite.MonomialBasis` (App. D);
    ``radius`` R of the coefficient ball (1 for Hermite; R_0 for App. D);
    ``max_iter`` caps K; ``random_state``.
    """

    def __init__(self, degree=3, epsilon=0.5, delta=1e-5, alpha=0.1, beta=0.1, c=0.25, n_blocks=None,
                 n_grid=None, n_validation=None, clip_radius=None, basis="hermite", radius=1.0, max_iter=300,
                 random_state=None):
        self.degree = degree
        self.epsilon = epsilon
        self.delta = delta
        self.alpha = alpha
        self.beta = beta
        self.c = c
        self.n_blocks = n_blocks
        self.n_grid = n_grid
        self.n_validation = n_validation
        self.clip_radius = clip_radius
        self.basis = basis
        self.radius = radius
        self.max_iter = max_iter
        self.random_state = random_state

    # -------------------------------------------------------------- helpers
    def _features(self, X) -> np.ndarray:
        if isinstance(self.basis, MonomialBasis):
            return self.basis.transform(X)
        if self.basis != "hermite":
            raise ValueError(f"basis must be 'hermite' or a privbound.learners.agnostic_halfspaces.hermite.MonomialBasis, got {self.basis!r}")
        return hermite_features(X, self.degree_)

    def _resolve_T(self, D: int) -> float:
        if self.clip_radius is None:
            return math.sqrt(D / (self.c * self.alpha))
        if isinstance(self.clip_radius, str):
            if self.clip_radius != "gaussian":
                raise ValueError(f"clip_radius must be None, 'gaussian' or a positive number, got {self.clip_radius!r}")
            return 2 * math.sqrt(D)
        return check_real(self.clip_radius, "clip_radius", low=0.0, low_inclusive=False)

    def _plan(self, X, y) -> dict:
        """Validated parameters, the data-independent partition sizes and the (clipped) features."""
        eps = check_real(self.epsilon, "epsilon", low=0.0, low_inclusive=False)
        delta = check_real(self.delta, "delta", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        alpha = check_real(self.alpha, "alpha", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        beta = check_real(self.beta, "beta", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        c = check_real(self.c, "c", low=0.0, high=0.25, low_inclusive=False)
        R = check_real(self.radius, "radius", low=0.0, low_inclusive=False)
        if isinstance(self.basis, MonomialBasis):
            if self.basis.d != X.shape[1]:
                raise ValueError(f"basis.d = {self.basis.d} but X has {X.shape[1]} columns")
            self.degree_ = self.basis.p
        else:
            self.degree_ = check_int(self.degree, "degree", low=1)
        n, d = X.shape
        D = isinstance(self.basis, MonomialBasis) and self.basis.n_features or n_features(d, self.degree_)
        k = math.ceil(math.log2(2 / beta)) if self.n_blocks is None else check_int(self.n_blocks, "n_blocks", low=1)
        M = math.ceil(max(1.0, 1 / (2 * c)) / alpha) if self.n_grid is None else check_int(self.n_grid, "n_grid", low=1)
        m = n // 5 if self.n_validation is None else check_int(self.n_validation, "n_validation", low=1)
        n0 = (n - m) // k
        if n0 < 2 or m < 1:
            raise ValueError(f"n = {n} too small for k = {k} blocks of n_0 >= 2 and a validation set of m = {m}")
        T = self._resolve_T(D)
        F0 = self._features(X)
        return dict(eps=eps, delta=delta, R=R, n=n, d=d, D=D, k=k, M=M, m=m, n0=n0, T=T, F=clip_features(F0, T),
                    F_unclipped=F0)

    def fit(self, X, y):
        X, y = _check_xy(X, y)
        plan = self._plan(X, y)
        eps, delta, R, d, D, k, M, m, n0, T, F = (plan[key] for key in
                                                   ("eps", "delta", "R", "d", "D", "k", "M", "m", "n0", "T", "F"))
        rng = _rng(self.random_state)
        self.n_features_in_ = d
        self.n_features_poly_ = D
        self.clip_radius_ = T
        self.n_blocks_, self.n_grid_, self.block_size_, self.n_validation_ = k, M, n0, m

        Fb = F[: k * n0].reshape(k, n0, D)
        yb = y[: k * n0].reshape(k, n0)
        Fv, yv = F[k * n0: k * n0 + m], y[k * n0: k * n0 + m]

        # DP convex ERM, all k blocks at once (independent noise per block).
        K, sigma_g, step, s_unit = alg1_erm_schedule(n0, D, T, R, eps, delta, check_int(self.max_iter, "max_iter", low=1))
        sens = 2 * T / n0
        Vsum = dp_erm_l1(Fb, yb, K, sigma_g, step, R, rng) * K
        self.coef_ = Vsum / K
        self.erm_iterations_ = K
        self.erm_sigma_ = sigma_g
        self.erm_noise_multiplier_ = sigma_g / sens
        self.erm_step_ = step
        self.excess_risk_bound_ = R * T * math.sqrt(1 / K + 4 * D * s_unit**2 / n0**2)

        # thresholds and private selection
        self.thresholds_ = -1 + (2 * np.arange(1, M + 1) - 1) / M
        S = Fv @ self.coef_.T  # (m, k)
        self.validation_errors_ = np.stack(
            [error_counts_by_threshold(S[:, j], yv, -self.thresholds_)[0] for j in range(k)])  # (k, M)
        flat = exp_mech_select(self.validation_errors_, eps, rng)
        j, l = divmod(flat, M)
        self.selected_ = (int(j), int(l))
        self.threshold_ = float(self.thresholds_[l])
        self.selected_coef_ = self.coef_[j]
        self.guarantee_ = PrivacyGuarantee(
            eps, delta, NeighbouringRelation.REPLACE_ONE,
            "Algorithm 1 / Prop. C.1: parallel composition of per-block DP-ERM (Gaussian, exact GDP "
            "composition) and the eps-DP exponential mechanism on the validation set",
            self.dp_event())
        return self

    def dp_event(self):
        """The per-block ERM as ``SelfComposed(Gaussian(z), K)`` (the neighbour lies in one part only)."""
        import dp_accounting

        return dp_accounting.SelfComposedDpEvent(
            dp_accounting.GaussianDpEvent(self.erm_noise_multiplier_), self.erm_iterations_)

    def decision_function(self, X):
        X = check_finite_array(X, "X", ndim=2)
        return clip_features(self._features(X), self.clip_radius_) @ self.selected_coef_ - self.threshold_

    def predict(self, X):
        return _sign(self.decision_function(X))


# ====================================================================== Algorithm 2


class PrivateProperHalfspace(ClassifierMixin, BaseEstimator):
    """Algorithm 2: private proper agnostic learner under Gaussian marginals (Sec. 3, Thm 3.1).

    1. Split S into S_1, S_2 (n/2 each). 2. Release ``m~ = Proj_{B_2}(mean_{S_1} Y psi_bar + Z)`` with
    ``sigma = 4T sqrt(2 ln(1.25/delta))/(eps n)`` (:func:`coefficient_release`; Lemma 3.4).
    3. ``q = <m~, psi_p>`` (unclipped basis), ``M = E[grad q grad q^T]`` (closed form), V = span of the
    eigenvectors with eigenvalue >= alpha'^2/C_0, alpha' = c alpha (Lemma 3.2). 4. A cover of the
    unit sphere of V (:func:`sphere_cover` at resolution alpha') times thresholds j alpha', |j alpha'| <= R,
    R = alpha' ceil(K_0 sqrt(ln(1/alpha'))/alpha'), plus sign(x_1 +- R). 5. Exponential mechanism on S_2.

    Practical only for dim V <= 3: ``max_subspace_dim`` keeps the top eigenvectors (the uncapped
    dimension is reported in ``subspace_dim_uncapped_``). Degree: the theorem's p = ceil(C_0/(c alpha)^2)
    (notes Sec. 11 item 1: the box's ceil(C_0/(c alpha)) is a typo) is impractical; ``degree`` is a
    knob. ``clip_radius``: ``None`` = 2 sqrt(D_p) (the only T analysed, Lemma 3.5), ``"remark3"`` =
    sqrt(D_p/(c alpha)) (an extrapolation, notes Sec. 7), or a number. eps must be < 1 (classical
    Gaussian mechanism; notes Sec. 11 item 15).
    """

    def __init__(self, degree=2, epsilon=0.5, delta=1e-5, alpha=0.2, c=0.5, C0=1.0, K0=1.0, clip_radius=None,
                 max_subspace_dim=2, random_state=None):
        self.degree = degree
        self.epsilon = epsilon
        self.delta = delta
        self.alpha = alpha
        self.c = c
        self.C0 = C0
        self.K0 = K0
        self.clip_radius = clip_radius
        self.max_subspace_dim = max_subspace_dim
        self.random_state = random_state

    def fit(self, X, y):
        X, y = _check_xy(X, y)
        eps = check_real(self.epsilon, "epsilon", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        delta = check_real(self.delta, "delta", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        alpha = check_real(self.alpha, "alpha", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        c = check_real(self.c, "c", low=0.0, high=1.0, low_inclusive=False)
        C0 = check_real(self.C0, "C0", low=0.0, low_inclusive=False)
        K0 = check_real(self.K0, "K0", low=0.0, low_inclusive=False)
        p = check_int(self.degree, "degree", low=1)
        kmax = check_int(self.max_subspace_dim, "max_subspace_dim", low=1, high=3)
        rng = _rng(self.random_state)
        n, d = X.shape
        half = n // 2
        if half < 2:
            raise ValueError(f"n = {n} too small: Algorithm 2 needs two halves of >= 2 examples")
        D = n_features(d, p)
        if self.clip_radius is None:
            T = 2 * math.sqrt(D)
        elif isinstance(self.clip_radius, str):
            if self.clip_radius != "remark3":
                raise ValueError(f"clip_radius must be None, 'remark3' or a number, got {self.clip_radius!r}")
            T = math.sqrt(D / (c * alpha))
        else:
            T = check_real(self.clip_radius, "clip_radius", low=0.0, low_inclusive=False)
        self.n_features_in_, self.n_features_poly_, self.clip_radius_ = d, D, T
        X1, y1, X2, y2 = X[:half], y[:half], X[half: 2 * half], y[half: 2 * half]
        self.sigma_ = alg2_sigma(T, eps, delta, 2 * half)
        self.sensitivity_ = 4 * T / (2 * half)
        self.coef_ = coefficient_release(clip_features(hermite_features(X1, p), T), y1, self.sigma_, rng)
        # subspace (Lemma 3.2)
        ap = c * alpha
        self.gradient_matrix_ = gradient_matrix(self.coef_, d, p)
        evals, evecs = np.linalg.eigh(self.gradient_matrix_)
        order = np.argsort(evals)[::-1]
        evals, evecs = evals[order], evecs[:, order]
        keep = evals >= ap**2 / C0
        self.eigenvalues_ = evals
        self.subspace_dim_uncapped_ = int(keep.sum())
        kV = min(self.subspace_dim_uncapped_, kmax)
        self.subspace_ = evecs[:, :kV]
        # cover H(q)
        R = ap * math.ceil(K0 * math.sqrt(math.log(1 / ap)) / ap)
        jmax = int(round(R / ap))
        ts = ap * np.arange(-jmax, jmax + 1)
        if kV > 0:
            dirs = sphere_cover(kV, ap) @ self.subspace_.T  # (N, d), unit vectors in V
            errs = error_counts_by_threshold(X2 @ dirs.T, y2, ts)  # (N, J)
        else:
            dirs = np.zeros((0, d))
            errs = np.zeros((0, ts.size), dtype=np.int64)
        e1 = np.zeros(d)
        e1[0] = 1.0
        const = np.array([np.sum(halfspace_predict(X2, e1, s) != y2) for s in (R, -R)])
        all_errs = np.concatenate([errs.ravel(), const])
        self.n_hypotheses_ = int(all_errs.size)
        flat = exp_mech_select(all_errs, eps, rng)
        if flat < errs.size:
            i, j = divmod(flat, ts.size)
            self.w_, self.b_ = dirs[i], float(ts[j])
        else:
            self.w_, self.b_ = e1, float(R if flat == errs.size else -R)
        self.selection_errors_ = all_errs
        self.cover_radius_ = R
        self.guarantee_ = PrivacyGuarantee(
            eps, delta, NeighbouringRelation.REPLACE_ONE,
            "Algorithm 2 / Thm 3.1: Gaussian mechanism on S_1 (sensitivity 4T/n, classical calibration) "
            "and the eps-DP exponential mechanism on S_2; parallel composition", self.dp_event())
        return self

    def dp_event(self):
        """The coefficient release as a Gaussian event (noise multiplier sigma / (4T/n))."""
        import dp_accounting

        return dp_accounting.GaussianDpEvent(self.sigma_ / self.sensitivity_)

    def decision_function(self, X):
        return check_finite_array(X, "X", ndim=2) @ self.w_ + self.b_

    def predict(self, X):
        return _sign(self.decision_function(X))


# ====================================================================== Algorithm 3


def ramp(z, a: float, b: float) -> np.ndarray:
    """Ramp function r_{a,b} of Eq. (12)."""
    return np.clip(np.asarray(z, dtype=float) - b + a, 0.0, 2 * a)


class DPSAS(ClassifierMixin, BaseEstimator):
    """Algorithm 3 (DPSAS): DP semi-agnostic subroutine for OPT <= eta (Sec. 4, Prop. 4.2).

    s = C_s / ln(1/eta)^{3/2}; T = ceil(C_T ln(1/eta)^4) iterations; data split into D_init, D_tau,
    D_0..D_{T-1} of m_0 = n_0/(T+2) each; x clipped to L = 2 sqrt(d); Laplace label mean ->
    tau^ = Phi^{-1}(clip_[kappa, 1-kappa]((1+y^)/2)), kappa = C_kappa eta capped below 1/2 (notes
    Sec. 4.4 [revised]: the paper leaves kappa >= 1/2 undefined; we cap at 1/2 - 1e-6, making tau^ = 0);
    Gaussian initial direction; T ramp-loss steps w <- normalise(w - lambda (grad + z)),
    z ~ N(0, sigma^2 (I - w w^T)), sigma = 2 L sqrt(2 ln(2/delta))/(eps m_0) (with the factor L,
    notes Sec. 11 item 3), phi_t = (pi/2)(1 - s^2/64)^t, a_t = sin phi_t, b_t = -tau^ cos phi_t.

    **Step size.** The box prints lambda = e^{pi^2/2} s ~ 139 s (notes Sec. 11 item 5; [17] could not be
    consulted offline). ``step_size="paper"`` uses it. Measured on Gaussian data (d = 5) the printed
    step makes the angle iteration overshoot (lambda * ||grad|| >> 1 while ||grad|| ~ sin(theta) e^{-tau^2/2},
    so each step jumps by a near-constant angle), whereas the standard Riemannian-gradient scale of the
    ramp loss needs lambda ||grad|| <= theta. The default ``step_size="adaptive"`` therefore uses
    lambda = s (the paper's s without the e^{pi^2/2} factor, i.e. the e^{pi^2/2} read as a typo for
    e^{-pi^2/2}-order constants absorbed into s); a float sets lambda directly. The measured comparison
    is in the issue report (tests/test_agnostic.py records it).
    Privacy: the Laplace step is eps-DP, each Gaussian step (eps, delta)-DP, all on disjoint batches ->
    (eps, delta)-DP by parallel composition (Prop. F.1 states O(eps), O(delta): notes Sec. 11 item 9).
    """

    def __init__(self, eta=0.1, epsilon=0.5, delta=1e-5, C_s=1.0, C_T=1.0, C_kappa=1.0, step_size="adaptive",
                 n_iter=None, random_state=None):
        self.eta = eta
        self.epsilon = epsilon
        self.delta = delta
        self.C_s = C_s
        self.C_T = C_T
        self.C_kappa = C_kappa
        self.step_size = step_size
        self.n_iter = n_iter
        self.random_state = random_state

    def fit(self, X, y):
        X, y = _check_xy(X, y)
        eta = check_real(self.eta, "eta", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        eps = check_real(self.epsilon, "epsilon", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        delta = check_real(self.delta, "delta", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        rng = _rng(self.random_state)
        n0, d = X.shape
        lg = math.log(1 / eta)
        s = check_real(self.C_s, "C_s", low=0.0, low_inclusive=False) / lg**1.5
        T = (max(1, math.ceil(check_real(self.C_T, "C_T", low=0.0, low_inclusive=False) * lg**4))
             if self.n_iter is None else check_int(self.n_iter, "n_iter", low=0))
        m0 = n0 // (T + 2)
        if m0 < 1:
            raise ValueError(f"n_0 = {n0} too small for T + 2 = {T + 2} batches")
        L = 2 * math.sqrt(d)
        Xc = clip_rows(X[: (T + 2) * m0], L)
        yc = y[: (T + 2) * m0]
        Xi, yi = Xc[:m0], yc[:m0]
        Xt, yt = Xc[m0: 2 * m0], yc[m0: 2 * m0]
        kappa = min(check_real(self.C_kappa, "C_kappa", low=0.0) * eta, 0.5 - 1e-6)
        self.label_mean_ = dpsas_label_mean(yt, eps, rng)
        self.threshold_ = float(stats.norm.ppf(np.clip((1 + self.label_mean_) / 2, kappa, 1 - kappa)))
        sigma = dpsas_sigma(L, eps, delta, m0)
        w0 = dpsas_initial_direction(Xi, yi, sigma, rng)
        nw = np.linalg.norm(w0)
        if nw > 0:
            w = w0 / nw
        else:  # pragma: no cover - probability zero
            g = rng.standard_normal(d)
            w = g / np.linalg.norm(g)
        self.initial_direction_ = w.copy()
        if self.step_size == "paper":
            lam = math.exp(math.pi**2 / 2) * s
        elif self.step_size == "adaptive":
            lam = s
        else:
            lam = check_real(self.step_size, "step_size", low=0.0, low_inclusive=False)
        trace = [w.copy()]
        for t in range(T):
            phi = (math.pi / 2) * (1 - s**2 / 64) ** t
            a, b = math.sin(phi), -self.threshold_ * math.cos(phi)
            Xb, yb = Xc[(t + 2) * m0: (t + 3) * m0], yc[(t + 2) * m0: (t + 3) * m0]
            g = dpsas_gradient_release(Xb, yb, w, a, b, sigma, rng)
            u = w - lam * g
            w = u / np.linalg.norm(u)
            trace.append(w.copy())
        self.coef_ = w
        self.trace_ = np.array(trace)
        self.s_, self.n_iter_, self.batch_size_, self.sigma_, self.step_size_ = s, T, m0, sigma, lam
        self.kappa_, self.clip_norm_ = kappa, L
        self.guarantee_ = PrivacyGuarantee(
            eps, delta, NeighbouringRelation.REPLACE_ONE,
            "Algorithm 3: Laplace (eps-DP) and Gaussian (sensitivity 2L/m_0, classical calibration) steps on "
            "disjoint batches; parallel composition", self.dp_event())
        return self

    def dp_event(self):
        """The worst single part: a Gaussian step (noise multiplier sigma m_0/(2L))."""
        import dp_accounting

        return dp_accounting.GaussianDpEvent(self.sigma_ * self.batch_size_ / (2 * self.clip_norm_))

    def decision_function(self, X):
        return check_finite_array(X, "X", ndim=2) @ self.coef_ + self.threshold_

    def predict(self, X):
        return _sign(self.decision_function(X))


# ====================================================================== Algorithm 4


class SemiAgnosticHalfspace(ClassifierMixin, BaseEstimator):
    """Algorithm 4: DP semi-agnostic proper learner, err <= C OPT + alpha (Sec. 4, Thm 4.1).

    K = ceil(C_K log2(1/alpha)) (base 2, notes Sec. 4.4 [revised]); eta_k = 2^{k-1} C_eta alpha;
    |D_val| = ``n_validation`` (default n // 5; the paper's O(log(K/beta)/alpha^2 + log(K/beta)/(alpha eps))
    with its constant is ``validation_size(...)``); the rest split into K equal parts, DPSAS(eta_k) on part k;
    exponential mechanism with Score = accuracy on D_val, sensitivity 1/|D_val|, i.e.
    P[h_k] ~ exp(-eps errors_k / 2). Runs with eta_k >= 1/2 are kept with kappa capped (see DPSAS).
    """

    def __init__(self, alpha=0.05, epsilon=0.5, delta=1e-5, beta=0.1, C_K=1.0, C_eta=1.1, n_validation=None,
                 dpsas_params=None, random_state=None):
        self.alpha = alpha
        self.epsilon = epsilon
        self.delta = delta
        self.beta = beta
        self.C_K = C_K
        self.C_eta = C_eta
        self.n_validation = n_validation
        self.dpsas_params = dpsas_params
        self.random_state = random_state

    @staticmethod
    def validation_size(alpha, epsilon, beta, K, C_v=1.0) -> int:
        """|D_val| = C_v (ln(K/beta)/alpha^2 + ln(K/beta)/(alpha eps)) (Algorithm 4 step 2)."""
        lk = math.log(K / beta)
        return math.ceil(C_v * (lk / alpha**2 + lk / (alpha * epsilon)))

    def fit(self, X, y):
        X, y = _check_xy(X, y)
        alpha = check_real(self.alpha, "alpha", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        eps = check_real(self.epsilon, "epsilon", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        check_real(self.C_eta, "C_eta", low=1.0, low_inclusive=False)
        rng = _rng(self.random_state)
        n = X.shape[0]
        K = max(1, math.ceil(check_real(self.C_K, "C_K", low=1.0) * math.log2(1 / alpha)))
        m = n // 5 if self.n_validation is None else check_int(self.n_validation, "n_validation", low=1)
        part = (n - m) // K
        if part < 4:
            raise ValueError(f"n = {n} too small for K = {K} parts")
        self.etas_ = self.C_eta * alpha * 2.0 ** np.arange(K)
        Xv, yv = X[n - m:], y[n - m:]
        params = dict(self.dpsas_params or {})
        self.candidates_ = []
        errs = []
        for k in range(K):
            sub = DPSAS(eta=min(float(self.etas_[k]), 0.999), epsilon=eps, delta=self.delta,
                        random_state=rng, **params)
            sub.fit(X[k * part: (k + 1) * part], y[k * part: (k + 1) * part])
            self.candidates_.append((sub.coef_.copy(), sub.threshold_))
            errs.append(int(np.sum(sub.predict(Xv) != yv)))
        self.validation_errors_ = np.array(errs)
        self.selected_ = exp_mech_select(self.validation_errors_, eps, rng)
        self.coef_, self.threshold_ = self.candidates_[self.selected_]
        self.n_grid_, self.n_validation_, self.part_size_ = K, m, part
        self.guarantee_ = PrivacyGuarantee(
            eps, self.delta, NeighbouringRelation.REPLACE_ONE,
            "Algorithm 4 / Prop. F.1 (stated (O(eps), O(delta))): DPSAS runs on disjoint parts and the "
            "eps-DP exponential mechanism on D_val; parallel composition gives (eps, delta)", None)
        return self

    def decision_function(self, X):
        return check_finite_array(X, "X", ndim=2) @ self.coef_ + self.threshold_

    def predict(self, X):
        return _sign(self.decision_function(X))


# ====================================================================== batched end-to-end releases (audits)


def dpsas_release_batch(X, y, *, eta=0.1, epsilon=0.5, delta=1e-5, C_s=1.0, C_T=1.0, C_kappa=1.0,
                        step_size="adaptive", n_iter=None, rng: np.random.Generator, size: int,
                        laplace_factor: float = 2.0, with_L: bool = True):
    """``size`` independent runs of :class:`DPSAS` (Algorithm 3) on one dataset, as array operations.

    Same partition, parameters and steps as ``DPSAS.fit``; returns ``(W, tau)`` with ``W`` (size, d)
    the final unit directions and ``tau`` (size,) the thresholds. ``laplace_factor=1`` (Laplace scale
    for sensitivity 1/m_0 instead of 2/m_0) and ``with_L=False`` (Claim 4.3's printed sigma) are planted
    bugs for the audits only.
    """
    X, y = _check_xy(X, y)
    size = check_int(size, "size", low=1)
    eta = check_real(eta, "eta", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    n0, d = X.shape
    lg = math.log(1 / eta)
    s = C_s / lg**1.5
    T = max(1, math.ceil(C_T * lg**4)) if n_iter is None else int(n_iter)
    m0 = n0 // (T + 2)
    if m0 < 1:
        raise ValueError(f"n_0 = {n0} too small for T + 2 = {T + 2} batches")
    L = 2 * math.sqrt(d)
    Xc, yc = clip_rows(X[: (T + 2) * m0], L), y[: (T + 2) * m0]
    kappa = min(C_kappa * eta, 0.5 - 1e-6)
    yhat = yc[m0: 2 * m0].mean() + rng.laplace(0.0, laplace_factor / (epsilon * m0), size=size)
    tau = stats.norm.ppf(np.clip((1 + yhat) / 2, kappa, 1 - kappa))
    sigma = dpsas_sigma(L, epsilon, delta, m0, with_L)
    W = dpsas_initial_direction(Xc[:m0], yc[:m0], sigma, rng, size)
    W = W / np.linalg.norm(W, axis=1, keepdims=True)
    lam = math.exp(math.pi**2 / 2) * s if step_size == "paper" else (s if step_size == "adaptive" else float(step_size))
    for t in range(T):
        phi = (math.pi / 2) * (1 - s**2 / 64) ** t
        a, b = math.sin(phi), -tau * math.cos(phi)  # b per run (tau is private, per run)
        Xb, yb = Xc[(t + 2) * m0: (t + 3) * m0], yc[(t + 2) * m0: (t + 3) * m0]
        Z = Xb @ W.T  # (m0, size)
        band = (np.abs(Z - b[None, :]) <= a) * yb[:, None]
        G = -(band.T @ Xb - np.sum(band * Z, axis=0)[:, None] * W) / m0
        noise = rng.normal(0.0, sigma, size=W.shape)
        noise -= np.sum(noise * W, axis=1, keepdims=True) * W
        U = W - lam * (G + noise)
        W = U / np.linalg.norm(U, axis=1, keepdims=True)
    return W, tau


def alg4_release_batch(X, y, *, alpha=0.05, epsilon=0.5, delta=1e-5, C_K=1.0, C_eta=1.1, n_validation=None,
                       dpsas_params=None, rng: np.random.Generator, size: int, **bugs) -> np.ndarray:
    """``size`` independent runs of :class:`SemiAgnosticHalfspace` (Algorithm 4) on one dataset (notes P5).

    Same grid, partition and selection as ``SemiAgnosticHalfspace.fit``; returns (size, d + 1) rows
    ``[w_k^, tau_k^]`` of the selected candidate. ``bugs`` are passed to :func:`dpsas_release_batch`.
    """
    X, y = _check_xy(X, y)
    n, d = X.shape
    K = max(1, math.ceil(C_K * math.log2(1 / alpha)))
    m = n // 5 if n_validation is None else int(n_validation)
    part = (n - m) // K
    if part < 4:
        raise ValueError(f"n = {n} too small for K = {K} parts")
    etas = C_eta * alpha * 2.0 ** np.arange(K)
    Xv, yv = X[n - m:], y[n - m:]
    Ws, taus, errs = [], [], []
    for k in range(K):
        W, tau = dpsas_release_batch(X[k * part: (k + 1) * part], y[k * part: (k + 1) * part],
                                     eta=min(float(etas[k]), 0.999), epsilon=epsilon, delta=delta, rng=rng, size=size,
                                     **dict(dpsas_params or {}), **bugs)
        pred = (Xv @ W.T + tau[None, :]) >= 0  # (m, size)
        errs.append(np.sum(pred != (yv > 0)[:, None], axis=0))
        Ws.append(W)
        taus.append(tau)
    E = np.stack(errs, axis=1)  # (size, K)
    sel = np.argmax(-0.5 * epsilon * E + rng.gumbel(size=E.shape), axis=1)
    Wsel = np.stack(Ws, axis=1)[np.arange(size), sel]
    tsel = np.stack(taus, axis=1)[np.arange(size), sel]
    return np.concatenate([Wsel, tsel[:, None]], axis=1)
