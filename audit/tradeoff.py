"""Empirical trade-off curves: a simultaneous confidence band on an attack's errors, and the Gaussian-DP mu it refutes.

The f-DP view of an audit (Dong, Roth & Su, "Gaussian differential privacy", JRSS-B 2022, arXiv:1905.02383;
Nasr, Hayes, Steinke, Balle, Tramer, Jagielski, Carlini & Terzis, "Tight auditing of differentially private
machine learning", USENIX Security 2023, arXiv:2302.07956): a test that says "d1" when a score is at least t
has type I error ``alpha(t) = P_d0(s >= t)`` and type II error ``beta(t) = P_d1(s < t)``. The mechanism's
trade-off function ``T(alpha) = inf {beta_phi : alpha_phi <= alpha}`` is non-increasing, so every test gives
``T(alpha(t)) <= beta(t)``, and with upper confidence bounds ``alpha_hi(t) >= alpha(t)``, ``beta_hi(t) >=
beta(t)`` also ``T(alpha_hi(t)) <= beta_hi(t)``: the certified points ``(alpha_hi, beta_hi)`` lie on or above
the mechanism's trade-off curve (the mechanism is not f-DP for any f above one of them).

Band. The thresholds are fixed before the evaluation outputs are seen (quantiles of the selection part's
scores, spaced geometrically towards both tails), and two-sided Clopper--Pearson intervals on ``alpha(t)`` and
``beta(t)`` at ``(1 - confidence) / (4 m)`` per tail for the ``m`` thresholds hold together with probability
at least ``confidence`` (Bonferroni): a simultaneous band on the attack's true curve. Its conservative edge
is the certified curve.

Gaussian DP. ``mu``-GDP means ``T >= G_mu`` with ``G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu)``. A certified
point with ``beta_hi < G_mu(alpha_hi)`` refutes ``mu``, i.e. every ``mu < Phi^-1(1 - alpha_hi) -
Phi^-1(beta_hi)``; the largest such value over the points is ``mu_lower_bound``: on the band's event the
mechanism is not mu-GDP for any smaller mu (the mu of the Gaussian curve that touches the certified curve).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from privbound._validation import check_confidence, check_int

__all__ = ["TradeOffCurve", "tradeoff_curve", "curve_thresholds", "curve_of_event_family", "gdp_mu_lower_bound",
           "gaussian_tradeoff", "CURVE_POINTS", "MIN_CURVE_OUTPUTS"]

# Thresholds of a curve (at most): enough to draw it, few enough that the Bonferroni band stays close.
CURVE_POINTS = 32
# Evaluation outputs per side a curve is traced from (at least): with fewer, its band spans nearly the whole square.
MIN_CURVE_OUTPUTS = 10


@dataclass(frozen=True)
class TradeOffCurve:
    """An attack's empirical trade-off curve on the evaluation outputs, its simultaneous band, and what it certifies.

    Attributes
    ----------
    alpha, beta : tuple of float
        Empirical type I error ``P_null(E)`` and type II error ``1 - P_alt(E)`` of each test of the family
        (``null`` is the dataset at the bottom of the chosen event's DP inequality), by increasing alpha.
    alpha_lower, alpha_upper, beta_lower, beta_upper : tuple of float
        The simultaneous band: all of them hold together with probability at least ``confidence``.
    mu_lower_bound : float
        The mechanism is not mu-GDP for any mu below it, at ``confidence`` (0 when nothing is refuted).
    confidence : float
        Confidence of the band (its own: it is not shared with the epsilon bound).
    null, alternative : str
        Which dataset the type I error is measured on (``"d0"`` or ``"d1"``) and which the type II error.
    n_null, n_alternative : int
        Evaluation outputs behind each error.
    """

    alpha: tuple
    beta: tuple
    alpha_lower: tuple
    alpha_upper: tuple
    beta_lower: tuple
    beta_upper: tuple
    mu_lower_bound: float
    confidence: float
    null: str
    alternative: str
    n_null: int
    n_alternative: int

    @property
    def certified(self) -> tuple[tuple, tuple]:
        """``(alpha_upper, beta_upper)``: points on or above the mechanism's trade-off curve, at ``confidence``."""
        return self.alpha_upper, self.beta_upper

    def to_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def gaussian_tradeoff(alpha, mu: float) -> np.ndarray:
    """``G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu)``, the trade-off function of mu-GDP (Dong, Roth & Su, Def. 2.7)."""
    return special.ndtr(special.ndtri(1.0 - np.asarray(alpha, dtype=float)) - mu)


def gdp_mu_lower_bound(alpha_upper, beta_upper) -> float:
    """The largest mu refuted by the certified points: ``max(Phi^-1(1 - alpha_hi) - Phi^-1(beta_hi))``, at least 0."""
    a = np.asarray(alpha_upper, dtype=float)
    b = np.asarray(beta_upper, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"alpha_upper and beta_upper must have one shape, got {a.shape} and {b.shape}")
    if not (np.all((a >= 0.0) & (a <= 1.0)) and np.all((b >= 0.0) & (b <= 1.0))):
        raise ValueError("alpha_upper and beta_upper must be error rates in [0, 1] (no NaN)")
    ok = (a < 1.0) & (b < 1.0)
    if not ok.any():
        return 0.0
    with np.errstate(divide="ignore"):
        mu = special.ndtri(1.0 - a[ok]) - special.ndtri(b[ok])
    best = float(np.max(mu))
    return best if best > 0.0 else 0.0


def curve_thresholds(selection_scores: np.ndarray, points: int = CURVE_POINTS) -> np.ndarray:
    """About ``points`` thresholds from scores that the evaluation never sees: every distinct value but the
    smallest when there are few (``{s >= min}`` is all but the trivial test the curve already ends on, unless
    evaluation scores fall below the selection's smallest, and it would widen the band's Bonferroni share), else
    order statistics spaced geometrically towards both tails."""
    points = check_int(points, "points", low=2)
    s = np.sort(np.asarray(selection_scores, dtype=float))
    u = np.unique(s)
    if u.size <= points:
        return u[1:] if u.size > 1 else u
    half = np.geomspace(1.0 / s.size, 0.5, points // 2)
    pos = np.clip(np.round(np.concatenate([half, 1.0 - half[::-1]]) * (s.size - 1)).astype(int), 0, s.size - 1)
    return np.unique(s[pos])


def _cp_interval(k: np.ndarray, n: int, tail: float) -> tuple[np.ndarray, np.ndarray]:
    k = np.asarray(k, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(k <= 0, 0.0, special.betaincinv(k, n - k + 1.0, tail))
        hi = np.where(k >= n, 1.0, special.betaincinv(k + 1.0, n - k, 1.0 - tail))
    return lo, hi


def tradeoff_curve(eval_alt: np.ndarray, eval_null: np.ndarray, thresholds: np.ndarray, *, side: str = "ge",
                   confidence: float = 0.95, null: str = "d0") -> TradeOffCurve:
    """The trade-off curve of the tests ``{s >= t}`` (``side="ge"``) or ``{s < t}`` (``"lt"``) that say "alternative".

    ``eval_alt`` / ``eval_null`` are the scores of evaluation outputs of the alternative and the null dataset;
    ``thresholds`` must have been fixed without them (:func:`curve_thresholds` on the selection part). The band
    is two-sided Clopper--Pearson at ``(1 - confidence) / (4 m)`` per tail, simultaneous over the m tests and
    the two trivial tests (module docstring).
    """
    confidence = check_confidence(confidence)
    if side not in ("ge", "lt"):
        raise ValueError(f"side must be 'ge' or 'lt', got {side!r}")
    if null not in ("d0", "d1"):
        raise ValueError(f"null must be 'd0' or 'd1', got {null!r}")
    alt = np.sort(np.asarray(eval_alt, dtype=float))
    nul = np.sort(np.asarray(eval_null, dtype=float))
    if alt.size == 0 or nul.size == 0:
        raise ValueError("eval_alt and eval_null must not be empty")
    for name, scores in (("eval_alt", alt), ("eval_null", nul)):
        if np.isnan(scores).any():
            raise ValueError(f"{name} holds {int(np.isnan(scores).sum())} NaN scores; a score must be a number")
    t = np.unique(np.asarray(thresholds, dtype=float))
    t = t[np.isfinite(t)]
    if t.size == 0:
        raise ValueError("thresholds must hold at least one finite value")
    ge_alt = alt.size - np.searchsorted(alt, t, side="left")
    ge_nul = nul.size - np.searchsorted(nul, t, side="left")
    k_alt, k_nul = (ge_alt, ge_nul) if side == "ge" else (alt.size - ge_alt, nul.size - ge_nul)
    tail = (1.0 - confidence) / (4 * t.size)
    a_lo, a_hi = _cp_interval(k_nul, nul.size, tail)  # alpha = P_null(E)
    p_lo, p_hi = _cp_interval(k_alt, alt.size, tail)  # power = P_alt(E); beta = 1 - power
    alpha = k_nul / nul.size
    beta = 1.0 - k_alt / alt.size
    order = np.lexsort((-beta, alpha))
    # the trivial tests (never / always say "alternative") are exact and close the curve
    fmt = lambda body, first, last: (first, *(float(v) for v in body[order]), last)  # noqa: E731
    return TradeOffCurve(
        alpha=fmt(alpha, 0.0, 1.0), beta=fmt(beta, 1.0, 0.0),
        alpha_lower=fmt(a_lo, 0.0, 1.0), alpha_upper=fmt(a_hi, 0.0, 1.0),
        beta_lower=fmt(1.0 - p_hi, 1.0, 0.0), beta_upper=fmt(1.0 - p_lo, 1.0, 0.0),
        mu_lower_bound=gdp_mu_lower_bound(a_hi, 1.0 - p_lo),
        confidence=confidence, null=null, alternative="d1" if null == "d0" else "d0",
        n_null=int(nul.size), n_alternative=int(alt.size),
    )


def curve_of_event_family(sel_in, sel_out, ev_in, ev_out, *, side: str, top: int, confidence: float,
                          points: int = CURVE_POINTS) -> TradeOffCurve | None:
    """The curve of a chosen event family on scores (``in`` = d1, ``out`` = d0): thresholds from the selection
    scores, errors on the evaluation scores; ``None`` with fewer than :data:`MIN_CURVE_OUTPUTS` evaluation scores
    on a side. ``top`` is the dataset whose probability of the event is the larger (the alternative); the other
    is the null."""
    if min(len(ev_in), len(ev_out)) < MIN_CURVE_OUTPUTS:
        return None
    thresholds = curve_thresholds(np.concatenate([np.asarray(sel_in, float), np.asarray(sel_out, float)]), points)
    alt, nul = (ev_in, ev_out) if top == 1 else (ev_out, ev_in)
    return tradeoff_curve(alt, nul, thresholds, side=side, confidence=confidence, null="d0" if top == 1 else "d1")

