"""What Algorithms 1-4 share: the halfspace problem, selection by the exponential mechanism, clipping radii.

From "Differentially private agnostic learning of halfspaces under Gaussian marginals" (paper id
``agnostic-halfspaces``; the source text, ``papers/dp-agnostic-halfspaces.txt``, has lost its title page,
so authors, venue and arXiv id are not known here).

* :class:`HalfspaceProblem` -- data: isotropic log-concave marginals with labels from a halfspace
  plus random classification noise (OPT exact) or structured flips (OPT by search, low d);
* :func:`selection_logits` -- the one home of the selection's law (Lemma B.5): log-weights
  ``-eps errors / 2`` (score ``-errors``, sensitivity 1 under replace-one);
  :func:`exp_mech_select` -- the selection steps of Algorithms 1, 2 and 4, a batch of ``size``
  independent draws or one; :func:`exp_mech_select_rows` draws one per row of counts;
* :func:`gaussian_clip_radius` and :func:`remark3_clip_radius` -- the feature clipping radii
  ``T = 2 sqrt(D_p)`` (Lemma C.2) and ``T = sqrt(D_p / (c alpha))`` (Remark 3, Eq. (7));
* the exact privacy curves of the algorithms' private steps on a given pair, for their tight epsilon:
  :func:`gaussian_epsilon` (K Gaussian releases), :func:`laplace_epsilon`, :func:`selection_pair_epsilon`.

Conventions: ``sign(0) = +1`` (the paper leaves it open); labels in {-1, +1}; replace-one neighbours
(Def. B.2); natural logarithms except the base-2 grids (k, K).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from privbound.learners.agnostic_halfspaces.hermite import sample_marginal
from privbound.learners.accounting import exact_epsilon
from privbound.learners.mechanisms import gaussian_delta
from privbound._validation import check_finite_array, check_int, check_real

__all__ = [
    "sign",
    "as_generator",
    "check_xy",
    "halfspace_predict",
    "HalfspaceProblem",
    "error_counts_by_threshold",
    "sphere_cover",
    "SELECTION_SENSITIVITY",
    "selection_logits",
    "exp_mech_select",
    "exp_mech_select_rows",
    "exp_mech_log_probabilities",
    "gaussian_clip_radius",
    "remark3_clip_radius",
    "gaussian_epsilon",
    "laplace_epsilon",
    "selection_pair_epsilon",
    "HalfspaceClassifierMixin",
]


def sign(z) -> np.ndarray:
    """sign with sign(0) = +1, as integers in {-1, +1}."""
    return np.where(np.asarray(z) >= 0, 1, -1)


def as_generator(random_state) -> np.random.Generator:
    """``random_state`` itself if it is a Generator, else ``numpy.random.default_rng(random_state)``."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(random_state)


def check_xy(X, y):
    """``(X, y)`` as float arrays: X 2-d, y 1-d of labels in {-1, +1}, the same number of rows."""
    X = check_finite_array(X, "X", ndim=2)
    y = check_finite_array(y, "y", ndim=1)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X and y must have the same number of rows, got {X.shape[0]} and {y.shape[0]}")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("y must contain labels in {-1, +1} only")
    return X, y


def halfspace_predict(X, w, t) -> np.ndarray:
    """``sign(<w, x> + t)`` with sign(0) = +1."""
    return sign(np.asarray(X, dtype=float) @ np.asarray(w, dtype=float) + t)


def gaussian_clip_radius(D: float) -> float:
    """``T = 2 sqrt(D_p)``: the clipping radius of Algorithms 1 and 2 under the dimension condition (Lemma C.2)."""
    return 2 * math.sqrt(D)


def remark3_clip_radius(D: float, c: float, alpha: float) -> float:
    """``T = sqrt(D_p / (c alpha))`` (Remark 3, Eq. (7)): Markov gives ``Pr[||psi_p|| > T] <= c alpha`` for any d.

    Erratum: Remark 3 prints ``sqrt(D_p)/(c alpha)``; ``D_p / T^2 = c alpha`` needs ``sqrt(D_p/(c alpha))``.
    """
    return math.sqrt(D / (c * alpha))


class HalfspaceClassifierMixin:
    """``decision_function`` and ``predict`` of a fitted halfspace ``sign(<coef_, x> + threshold_)``."""

    def decision_function(self, X):
        return check_finite_array(X, "X", ndim=2) @ self.coef_ + self.threshold_

    def predict(self, X):
        return sign(self.decision_function(X))


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


# ====================================================================== selection (Lemma B.5)


SELECTION_SENSITIVITY = 1.0
"""How far one candidate's error count moves when one validation row is replaced (Lemma B.5)."""


def selection_logits(error_counts, epsilon: float) -> np.ndarray:
    """Log-weights of the selection steps: ``-epsilon * errors / (2 * SELECTION_SENSITIVITY)`` (Lemma B.5).

    The exponential mechanism (McSherry & Talwar 2007) with score ``-#errors`` of sensitivity 1: P[j] is
    proportional to ``exp(-epsilon errors_j / 2)`` (Algorithm 1 step 5, Algorithm 2 step 6, Algorithm 4 step 7
    with Score = accuracy and Delta = 1/|D_val|: the same law). Every draw and every exact probability of the
    selection is computed from these; any shape.
    """
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_inclusive=False)
    return -(epsilon / (2.0 * SELECTION_SENSITIVITY)) * np.asarray(error_counts, dtype=float)


def exp_mech_select(error_counts, epsilon: float, rng: np.random.Generator, size: int | None = None):
    """The selection of Lemma B.5 over the flattened ``error_counts``, by Gumbel-max on :func:`selection_logits`.

    Returns one flat index (``size=None``) or ``size`` independent ones.
    """
    logits = selection_logits(np.asarray(error_counts, dtype=float).ravel(), epsilon)
    n = 1 if size is None else check_int(size, "size", low=1)
    draws = np.argmax(logits[None, :] + rng.gumbel(size=(n, logits.size)), axis=1)
    return int(draws[0]) if size is None else draws


def exp_mech_select_rows(error_counts, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """One draw of :func:`exp_mech_select` per row of ``error_counts`` (shape (runs, candidates)), at once.

    The batched releases select for many independent runs, each with its own counts (Gumbel-max).
    """
    E = np.asarray(error_counts)
    return np.argmax(selection_logits(E, epsilon) + rng.gumbel(size=E.shape), axis=1)


def exp_mech_log_probabilities(error_counts, epsilon: float) -> np.ndarray:
    """Exact log P[j] of :func:`exp_mech_select` (a log-softmax of :func:`selection_logits`)."""
    logits = selection_logits(np.asarray(error_counts, dtype=float).ravel(), epsilon)
    return logits - special.logsumexp(logits)


# ====================================================================== exact privacy curves of the private steps


def gaussian_epsilon(shift: float, sigma: float, delta: float, count: int = 1) -> float:
    """The exact epsilon at ``delta`` of ``count`` (adaptive) releases, each ``f + N(0, sigma^2 I)`` with ``f`` moving
    by at most ``shift`` in L2 between the two datasets: the Gaussian mechanism of sensitivity ``shift sqrt(count)``
    (Gaussian composition is exact, Dong, Roth & Su 2019, Cor. 3.3), by Balle & Wang's curve
    (:func:`privbound.learners.mechanisms.gaussian_delta`); exact when every release moves by ``shift``.
    """
    from scipy import optimize

    shift = check_real(shift, "shift", low=0.0)
    sigma = check_real(sigma, "sigma", low=0.0, low_inclusive=False)
    delta = check_real(delta, "delta", low=0.0, high=1.0)
    if shift == 0 or delta >= 1:
        return 0.0
    if delta == 0:
        return math.inf
    sens = shift * math.sqrt(check_int(count, "count", low=1))
    f = lambda e: gaussian_delta(sigma, e, sens) - delta  # noqa: E731
    if f(0.0) <= 0:
        return 0.0
    hi = 1.0
    while f(hi) > 0:
        hi *= 2.0
    return float(optimize.brentq(f, 0.0, hi, xtol=1e-12, rtol=1e-12))


def laplace_epsilon(shift: float, scale: float, delta: float) -> float:
    """The exact epsilon at ``delta`` of ``f + Lap(scale)`` with ``f`` (one-dimensional) moving by ``shift``: with
    a = shift/scale, delta(eps) = 1 - e^{(eps - a)/2} on [0, a], so eps = max(0, a + 2 ln(1 - delta))."""
    shift = check_real(shift, "shift", low=0.0)
    scale = check_real(scale, "scale", low=0.0, low_inclusive=False)
    delta = check_real(delta, "delta", low=0.0, high=1.0)
    return max(0.0, shift / scale + 2.0 * math.log1p(-delta)) if delta < 1 else 0.0


def selection_pair_epsilon(error_counts0, error_counts1, epsilon: float, delta: float) -> float:
    """The exact epsilon at ``delta`` of :func:`exp_mech_select` on two vectors of error counts (the selection's
    output law on the pair is the two softmaxes, :func:`exp_mech_log_probabilities`)."""
    return exact_epsilon(exp_mech_log_probabilities(error_counts0, epsilon),
                         exp_mech_log_probabilities(error_counts1, epsilon), delta)
