"""Algorithm 3 (DPSAS): the DP semi-agnostic subroutine for OPT <= eta (Sec. 4, Proposition 4.2).

From "Differentially private agnostic learning of halfspaces under Gaussian marginals" (paper id
``agnostic-halfspaces``; the source text, ``papers/dp-agnostic-halfspaces.txt``, has lost its title page,
so authors, venue and arXiv id are not known here). Claims 4.3-4.6 analyse its steps; it privatises
Algorithms 1-2 of Diakonikolas et al. (the paper's reference [17]).

* :class:`DPSAS` -- the learner;
* its private steps, each a single release or a batch of ``size`` (for the audits; the learner calls
  them with ``size=None``, so a batch is distributionally identical to independent runs, tested):
  :func:`dpsas_label_mean` (step 4), :func:`dpsas_initial_direction` (step 6),
  :func:`dpsas_gradient_release` (step 9.3); their calibration :func:`dpsas_sigma`,
  :func:`dpsas_laplace_scale`, :func:`dpsas_noise_multiplier`; the statistics they privatise
  (:func:`dpsas_initial_mean`, :func:`dpsas_gradient`);
* the steps on the raw rows of their batch (clipping, calibration, release), the one code path of the
  learner, of its batched runs and of their audits, which read the law a step runs with from its ``_law``:
  :func:`dpsas_label_law`, :func:`dpsas_initial_law` / :func:`dpsas_initial_step`,
  :func:`dpsas_gradient_law` / :func:`dpsas_gradient_step`;
* :func:`dpsas_release_batch` -- ``size`` independent end-to-end runs as array operations, with their
  transcript (every noisy release) on request.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from scipy import stats
from sklearn.base import BaseEstimator, ClassifierMixin

from privbound.learners.agnostic_halfspaces.common import HalfspaceClassifierMixin, as_generator, check_xy
from privbound.learners.accounting import replace_one_noise_multiplier
from privbound.learners.mechanisms import PrivacyGuarantee
from privbound.learners.neighbouring import NeighbouringRelation
from privbound._validation import Interval, StrOptions, check_int, check_real, validate_parameters

__all__ = [
    "dpsas_clip_norm",
    "dpsas_sigma",
    "dpsas_noise_multiplier",
    "dpsas_laplace_scale",
    "dpsas_schedule",
    "dpsas_kappa",
    "dpsas_step_size",
    "dpsas_clip_probability",
    "dpsas_threshold",
    "ramp_band",
    "dpsas_label_law",
    "dpsas_label_mean",
    "clip_rows",
    "dpsas_initial_law",
    "dpsas_initial_step",
    "dpsas_gradient_law",
    "dpsas_gradient_step",
    "dpsas_initial_mean",
    "dpsas_initial_direction",
    "dpsas_gradients",
    "dpsas_gradient",
    "dpsas_gradient_release",
    "ramp",
    "DPSAS",
    "dpsas_release_batch",
]


# ====================================================================== parameters


def dpsas_clip_norm(d: int) -> float:
    """Algorithm 3 step 3: rows are clipped to ``L = 2 sqrt(d)`` (Lemma F.4: no clipping w.h.p.)."""
    return 2 * math.sqrt(d)


def dpsas_sigma(L: float, epsilon: float, delta: float, m_0: int, with_L: bool = True) -> float:
    """Algorithm 3 line 6: sigma = 2 L sqrt(2 ln(2/delta)) / (eps m_0) (sensitivity 2L/m_0).

    ``with_L=False`` is Claim 4.3's printed sigma (erratum: the factor L is missing there; Algorithm 3,
    Prop. F.1 and Claim 4.5 have it); it is only used by the planted-bug audit target.
    """
    return 2 * (L if with_L else 1.0) * math.sqrt(2 * math.log(2 / delta)) / (epsilon * m_0)


def dpsas_noise_multiplier(epsilon: float, delta: float) -> float:
    """sigma / sensitivity of Algorithm 3's Gaussian steps: ``sqrt(2 ln(2/delta)) / eps``."""
    return math.sqrt(2 * math.log(2 / delta)) / epsilon


def dpsas_laplace_scale(epsilon: float, m_0: int, factor: float = 2.0) -> float:
    """Algorithm 3 step 4: the label mean's Laplace scale ``2 / (eps m_0)`` (sensitivity 2/m_0).

    ``factor=1`` (sensitivity 1/m_0) is a planted bug for the audits only.
    """
    return factor / (epsilon * m_0)


def dpsas_schedule(eta: float, C_s: float, C_T: float, n_iter, n0: int) -> tuple[float, int, int]:
    """Algorithm 3 steps 1-2: ``(s, T, m_0)`` with s = C_s / ln(1/eta)^{3/2}, T = ceil(C_T ln(1/eta)^4)
    iterations (``n_iter`` overrides it) and batches of ``m_0 = n_0 // (T + 2)``."""
    lg = math.log(1 / eta)
    s = C_s / lg**1.5
    T = max(1, math.ceil(C_T * lg**4)) if n_iter is None else int(n_iter)
    m0 = n0 // (T + 2)
    if m0 < 1:
        raise ValueError(f"n_0 = {n0} too small for T + 2 = {T + 2} batches")
    return s, T, m0


def dpsas_kappa(C_kappa: float, eta: float) -> float:
    """``kappa = C_kappa eta``, capped below 1/2.

    The paper leaves kappa >= 1/2 undefined (it happens on the top grid point of Algorithm 4); the cap
    at 1/2 - 1e-6 makes the threshold 0 there.
    """
    return min(C_kappa * eta, 0.5 - 1e-6)


def dpsas_step_size(step_size, s: float) -> float:
    """lambda: ``"paper"`` = e^{pi^2/2} s as printed, ``"adaptive"`` = s, or a number (see :class:`DPSAS`)."""
    if step_size == "paper":
        return math.exp(math.pi**2 / 2) * s
    if step_size == "adaptive":
        return s
    return float(step_size)


def dpsas_clip_probability(p, kappa: float):
    """Algorithm 3 step 5's clipping ``clip_[kappa, 1-kappa](p)`` (Claim 4.6: moves p by at most kappa more)."""
    return np.clip(p, kappa, 1 - kappa)


def dpsas_threshold(label_mean, kappa: float):
    """Algorithm 3 step 5: ``tau^ = Phi^{-1}(clip_[kappa, 1-kappa]((1 + y^)/2))`` (Claim 4.6)."""
    return stats.norm.ppf(dpsas_clip_probability((1 + label_mean) / 2, kappa))


def ramp_band(s: float, t: int, tau):
    """The ramp of iteration t: ``(a_t, b_t) = (sin phi_t, -tau cos phi_t)``, ``phi_t = (pi/2)(1 - s^2/64)^t``."""
    phi = (math.pi / 2) * (1 - s**2 / 64) ** t
    return math.sin(phi), -tau * math.cos(phi)


# ====================================================================== private steps


def dpsas_label_law(y, epsilon: float, laplace_factor: float = 2.0) -> tuple[float, float]:
    """``(mean, scale)`` of Algorithm 3 step 4 on the labels of D_tau: the mean label and the Laplace scale
    :func:`dpsas_laplace_scale` (``laplace_factor`` is its ``factor``, a planted bug when not 2)."""
    y = np.asarray(y, dtype=float)
    return float(y.mean()), dpsas_laplace_scale(epsilon, y.size, laplace_factor)


def dpsas_label_mean(y, epsilon: float, rng: np.random.Generator, size: int | None = None,
                     laplace_factor: float = 2.0):
    """Algorithm 3 step 4: ``mean(y) + Lap(2/(eps m_0))`` (sensitivity 2/m_0, eps-DP), the law of
    :func:`dpsas_label_law`; one release or ``size`` of them."""
    mean, scale = dpsas_label_law(y, epsilon, laplace_factor)
    n = 1 if size is None else check_int(size, "size", low=1)
    out = mean + rng.laplace(0.0, scale, size=n)
    return float(out[0]) if size is None else out


def clip_rows(X, L: float) -> np.ndarray:
    """Clip every row to l2-norm <= L (Algorithm 3 step 3)."""
    X = np.asarray(X, dtype=float)
    nrm = np.linalg.norm(X, axis=1, keepdims=True)
    return X * np.minimum(1.0, L / np.maximum(nrm, 1e-300))


def _gaussian(mean: np.ndarray, sigma: float, rng: np.random.Generator, size: int | None):
    """``mean + N(0, sigma^2 I)``: one vector (``size=None``) or ``size`` rows."""
    n = 1 if size is None else check_int(size, "size", low=1)
    out = mean[None, :] + rng.normal(0.0, sigma, size=(n, mean.size))
    return out[0] if size is None else out


def dpsas_initial_mean(X, y) -> np.ndarray:
    """The statistic Algorithm 3 step 6 privatises: ``(1/m_0) sum_{D_init} x y`` (rows already clipped to L)."""
    X = np.asarray(X, dtype=float)
    return (np.asarray(y, dtype=float) @ X) / X.shape[0]


def dpsas_initial_direction(X, y, sigma: float, rng: np.random.Generator, size: int | None = None):
    """Algorithm 3 step 6: ``(1/m_0) sum_{D_init} x y + N(0, sigma^2 I_d)`` (rows already clipped to L)."""
    return _gaussian(dpsas_initial_mean(X, y), sigma, rng, size)


def dpsas_initial_law(X, y, epsilon: float, delta: float, with_L: bool = True) -> tuple[np.ndarray, float]:
    """``(mean, sigma)`` of Algorithm 3 step 6 on the raw rows of D_init: rows clipped to L = 2 sqrt(d)
    (:func:`dpsas_clip_norm`), their mean of ``x y``, and :func:`dpsas_sigma` (``with_L=False``: a planted bug)."""
    X = np.asarray(X, dtype=float)
    L = dpsas_clip_norm(X.shape[1])
    return dpsas_initial_mean(clip_rows(X, L), y), dpsas_sigma(L, epsilon, delta, X.shape[0], with_L)


def dpsas_initial_step(X, y, epsilon: float, delta: float, rng: np.random.Generator, size: int | None = None,
                       with_L: bool = True):
    """Algorithm 3 step 6 on the raw rows of D_init: the law of :func:`dpsas_initial_law`, released."""
    mean, sigma = dpsas_initial_law(X, y, epsilon, delta, with_L)
    return _gaussian(mean, sigma, rng, size)


def dpsas_gradients(X, y, W, a: float, b) -> np.ndarray:
    """Algorithm 3 step 9.2 at each row of ``W`` (unit vectors, shape (runs, d)), with ``b`` a scalar or one per
    run: ``-(1/m_0) sum y 1{|w.x - b| <= a} (x - (w.x) w)``, shape (runs, d)."""
    X = np.asarray(X, dtype=float)
    W = np.asarray(W, dtype=float)
    Z = X @ W.T  # (m_0, runs)
    band = (np.abs(Z - np.asarray(b, dtype=float)) <= a) * np.asarray(y, dtype=float)[:, None]
    return -(band.T @ X - np.sum(band * Z, axis=0)[:, None] * W) / X.shape[0]


def dpsas_gradient(X, y, w, a: float, b: float) -> np.ndarray:
    """Algorithm 3 step 9.2: ``-(1/m_0) sum y 1{|w.x - b| <= a} (x - (w.x) w)`` at a unit ``w``."""
    return dpsas_gradients(X, y, np.asarray(w, dtype=float)[None, :], a, b)[0]


def dpsas_gradient_release(X, y, w, a: float, b: float, sigma: float, rng: np.random.Generator,
                           size: int | None = None):
    """Noisy gradient of Algorithm 3 step 9.3: ``grad + sigma (I - w w^T) g``, g ~ N(0, I_d)."""
    w = np.asarray(w, dtype=float)
    g0 = dpsas_gradient(X, y, w, a, b)
    n = 1 if size is None else check_int(size, "size", low=1)
    out = g0[None, :] + _perp_noise(np.broadcast_to(w, (n, w.size)), sigma, rng)
    return out[0] if size is None else out


def _perp_noise(W: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """``sigma (I - w w^T) g`` for each row w of ``W``, g ~ N(0, I_d)."""
    G = rng.normal(0.0, sigma, size=W.shape)
    return G - np.sum(G * W, axis=1, keepdims=True) * W


def dpsas_gradient_law(X, y, W, a: float, b, epsilon: float, delta: float, with_L: bool = True
                       ) -> tuple[np.ndarray, float]:
    """``(gradients, sigma)`` of Algorithm 3 step 9.3 on the raw rows of one batch D_t: rows clipped to L, the
    gradient at each row of ``W`` (shape (runs, d); ``b`` a scalar or one per run, :func:`dpsas_gradients`) and
    :func:`dpsas_sigma` (``with_L=False``: a planted bug). The noise lies in w-perp."""
    X = np.asarray(X, dtype=float)
    L = dpsas_clip_norm(X.shape[1])
    return dpsas_gradients(clip_rows(X, L), y, W, a, b), dpsas_sigma(L, epsilon, delta, X.shape[0], with_L)


def dpsas_gradient_step(X, y, W, a: float, b, epsilon: float, delta: float, rng: np.random.Generator,
                        with_L: bool = True) -> np.ndarray:
    """Algorithm 3 step 9.3 on the raw rows of one batch: one noisy gradient per row of ``W`` (runs, d), the law
    of :func:`dpsas_gradient_law` with noise ``sigma (I - w w^T) g``."""
    W = np.asarray(W, dtype=float)
    grads, sigma = dpsas_gradient_law(X, y, W, a, b, epsilon, delta, with_L)
    return grads + _perp_noise(W, sigma, rng)


def ramp(z, a: float, b: float) -> np.ndarray:
    """Ramp function r_{a,b} of Eq. (12)."""
    return np.clip(np.asarray(z, dtype=float) - b + a, 0.0, 2 * a)


# ====================================================================== the learner


_OPEN_UNIT = Interval(Real, 0, 1, closed="neither")
_POSITIVE = Interval(Real, 0, None, closed="neither")


class DPSAS(HalfspaceClassifierMixin, ClassifierMixin, BaseEstimator):
    """Algorithm 3 (DPSAS): DP semi-agnostic subroutine for OPT <= eta (Sec. 4, Prop. 4.2).

    s = C_s / ln(1/eta)^{3/2}; T = ceil(C_T ln(1/eta)^4) iterations; data split into D_init, D_tau,
    D_0..D_{T-1} of m_0 = n_0/(T+2) each; x clipped to L = 2 sqrt(d); Laplace label mean ->
    tau^ = Phi^{-1}(clip_[kappa, 1-kappa]((1+y^)/2)), kappa = C_kappa eta capped below 1/2 (the paper
    leaves kappa >= 1/2 undefined; we cap at 1/2 - 1e-6, making tau^ = 0);
    Gaussian initial direction; T ramp-loss steps w <- normalise(w - lambda (grad + z)),
    z ~ N(0, sigma^2 (I - w w^T)), sigma = 2 L sqrt(2 ln(2/delta))/(eps m_0) (with the factor L that
    Claim 4.3 omits), phi_t = (pi/2)(1 - s^2/64)^t, a_t = sin phi_t, b_t = -tau^ cos phi_t.

    **Step size.** The algorithm box prints lambda = e^{pi^2/2} s ~ 139 s (unconfirmed against [17]).
    ``step_size="paper"`` uses it. On Gaussian data the printed step makes the angle iteration
    overshoot (lambda * ||grad|| >> 1 while ||grad|| ~ sin(theta) e^{-tau^2/2}, so each step jumps by a
    near-constant angle), whereas the standard Riemannian-gradient scale of the ramp loss needs
    lambda ||grad|| <= theta. The default ``step_size="adaptive"`` therefore uses lambda = s (the
    paper's s without the e^{pi^2/2} factor); a float sets lambda directly. The measured comparison is
    in benchmarks/README.md, 'Agnostic halfspaces: measured values'.
    Privacy: the Laplace step is eps-DP, each Gaussian step (eps, delta)-DP, all on disjoint batches ->
    (eps, delta)-DP by parallel composition (Prop. F.1 states only O(eps), O(delta)).
    """

    _parameter_constraints = {
        "eta": [_OPEN_UNIT],
        "epsilon": [_OPEN_UNIT],
        "delta": [_OPEN_UNIT],
        "C_s": [_POSITIVE],
        "C_T": [_POSITIVE],
        "C_kappa": [Interval(Real, 0, None, closed="left")],
        "step_size": [StrOptions({"paper", "adaptive"}), _POSITIVE],
        "n_iter": [Interval(Integral, 0, None, closed="left"), None],
    }

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
        X, y = check_xy(X, y)
        validate_parameters(self)
        eta, eps, delta = float(self.eta), float(self.epsilon), float(self.delta)
        rng = as_generator(self.random_state)
        n0, d = X.shape
        s, T, m0 = dpsas_schedule(eta, float(self.C_s), float(self.C_T), self.n_iter, n0)
        L = dpsas_clip_norm(d)
        kappa = dpsas_kappa(float(self.C_kappa), eta)
        self.label_mean_ = dpsas_label_mean(y[m0: 2 * m0], eps, rng)
        self.threshold_ = float(dpsas_threshold(self.label_mean_, kappa))
        sigma = dpsas_sigma(L, eps, delta, m0)
        w0 = dpsas_initial_step(X[:m0], y[:m0], eps, delta, rng)
        nw = np.linalg.norm(w0)
        if nw > 0:
            w = w0 / nw
        else:  # pragma: no cover - probability zero
            g = rng.standard_normal(d)
            w = g / np.linalg.norm(g)
        self.initial_direction_ = w.copy()
        lam = dpsas_step_size(self.step_size, s)
        trace = [w.copy()]
        for t in range(T):
            a, b = ramp_band(s, t, self.threshold_)
            batch = slice((t + 2) * m0, (t + 3) * m0)
            g = dpsas_gradient_step(X[batch], y[batch], w[None, :], a, b, eps, delta, rng)[0]
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
        """The worst single part: a Gaussian step under replace-one (sigma / (2L/m_0), per record)."""
        import dp_accounting

        return dp_accounting.GaussianDpEvent(
            replace_one_noise_multiplier(self.sigma_ * self.batch_size_ / (2 * self.clip_norm_)))


# ====================================================================== batched end-to-end releases


def dpsas_release_batch(X, y, *, eta=0.1, epsilon=0.5, delta=1e-5, C_s=1.0, C_T=1.0, C_kappa=1.0,
                        step_size="adaptive", n_iter=None, rng: np.random.Generator, size: int,
                        laplace_factor: float = 2.0, with_L: bool = True, transcript: bool = False):
    """``size`` independent runs of :class:`DPSAS` (Algorithm 3) on one dataset, as array operations.

    Same partition, parameters and steps as ``DPSAS.fit``; returns ``(W, tau)`` with ``W`` (size, d)
    the final unit directions and ``tau`` (size,) the thresholds. ``laplace_factor=1`` (Laplace scale
    for sensitivity 1/m_0 instead of 2/m_0) and ``with_L=False`` (Claim 4.3's printed sigma) are planted
    bugs for the audits only. ``transcript=True`` returns ``(W, tau, releases)`` with every noisy release of
    the runs: ``label_mean`` (size,), ``initial`` (size, d) (step 6, before normalisation), ``iterates``
    (size, T, d) (the unit w_t each gradient is taken at) and ``gradients`` (size, T, d) (step 9.3).
    """
    X, y = check_xy(X, y)
    size = check_int(size, "size", low=1)
    eta = check_real(eta, "eta", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    n0, d = X.shape
    s, T, m0 = dpsas_schedule(eta, C_s, C_T, n_iter, n0)
    kappa = dpsas_kappa(C_kappa, eta)
    yhat = dpsas_label_mean(y[m0: 2 * m0], epsilon, rng, size, laplace_factor)
    tau = dpsas_threshold(yhat, kappa)
    W0 = dpsas_initial_step(X[:m0], y[:m0], epsilon, delta, rng, size, with_L)
    W = W0 / np.linalg.norm(W0, axis=1, keepdims=True)
    lam = dpsas_step_size(step_size, s)
    iterates, gradients = [], []
    for t in range(T):
        a, b = ramp_band(s, t, tau)  # b per run (tau is private, per run)
        batch = slice((t + 2) * m0, (t + 3) * m0)
        G = dpsas_gradient_step(X[batch], y[batch], W, a, b, epsilon, delta, rng, with_L)
        if transcript:
            iterates.append(W)
            gradients.append(G)
        U = W - lam * G
        W = U / np.linalg.norm(U, axis=1, keepdims=True)
    if not transcript:
        return W, tau
    empty = np.zeros((size, 0, d))
    return W, tau, dict(label_mean=yhat, initial=W0,
                        iterates=np.stack(iterates, axis=1) if T else empty,
                        gradients=np.stack(gradients, axis=1) if T else empty)
