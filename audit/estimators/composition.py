"""White-box epsilon lower bound for a composition of identical steps, from the per-step privacy losses.

Some outputs are T observations that are independent and identically distributed given the dataset: a
T-fold composition of one mechanism, such as DP-SGD's noisy updates read along a Dirac gradient canary
(every step draws fresh noise and samples the canary afresh). The privacy loss of such an output is the sum
of T per-step losses ``l(o_t) = log p_d0(o_t) / p_d1(o_t)``, and every step of every trial is a draw of ONE
per-step privacy-loss law F: n trials give N = n T draws of F, and the composition theorem turns a bound
on F into a bound on the whole. Nasr, Hayes, Steinke, Balle, Tramèr, Jagielski, Carlini & Terzis ("Tight
auditing of differentially private machine learning", USENIX Security 2023, arXiv:2302.07956) audit this
threat model step by step and compose with a Gaussian-DP approximation; here the per-step law is bounded
without a parametric form and composed exactly.

1. **Band.** Sort the draws, x_(1) >= x_(2) >= ... >= x_(N), and let S(x) = P(l >= x). Then S(x_(r)) is
   the r-th smallest of N uniforms, Beta(r, N + 1 - r) (stochastically larger when F has atoms; David &
   Nagaraja, *Order Statistics*, 3rd ed., Sec. 2.2), so with probability >= 1 - alpha,
   ``S(x_(r)) >= b_r = Beta(r, N + 1 - r).ppf(alpha / K)`` at each of a fixed set of K ranks at once
   (Bonferroni). The ranks are every integer up to a geometric grid of ratio ``1 + RANK_STEP`` (a group of
   draws spans at most 0.1% of its rank). The law F_lo with mass ``b_r - b_r'`` at ``x_(r)`` (r' the
   previous rank) and its remaining mass at -inf has survival function <= S everywhere: it is
   stochastically smaller than F.
2. **A monotone functional.** The hockey-stick divergence of the composition (Balle & Wang, ICML 2018,
   Thm 5; the privacy-loss-distribution form of Koskela, Jälkö & Honkela, AISTATS 2020),
   ``delta_T(eps) = E[(1 - e^{eps - (l_1 + ... + l_T)})_+]`` with l_t i.i.d. from F, is non-decreasing in
   every l_t, so coupling the steps by quantiles gives ``delta_T(eps; F_lo) <= delta_T(eps; F)`` for
   every eps on the band's event. A step at -inf makes the sum -inf.
3. **Composition.** F_lo's finite atoms are rounded down to a grid (still stochastically smaller; the
   composed loss is rounded down by at most 1e-3, or by ``details["rounding"]`` when that would take more
   than 2**22 grid points), atoms at either end carrying at most 1% of delta per step are lowered (the top
   ones onto the next atom, the bottom ones to -inf), atoms so low that no sum containing one exceeds 0 are
   sent to -inf (only losses above 0 count at any eps >= 0: exact), and the law is
   composed T times by dp_accounting's FFT self-convolution (``pld.common.self_convolve``, with Chernoff
   bounds on the window when the whole range of the sum does not fit), exponentially tilted towards the
   losses whose tail has mass about delta (the tilt is undone exactly after the convolution, so the FFT's
   absolute round-off sits where the divergence is small; Butler, *Saddlepoint approximations*, 2007,
   Sec. 1.2). Each grid point is lowered by its round-off bound (1e-15 per step composed; measured at most
   1.3e-15 at T = 5000) and by the window's aliased mass before the tilt is undone. Atoms at +inf
   (outputs impossible under the other dataset) make the sum +inf unless a step is at -inf. One high outlier
   with more mass than the trimming lowers would still coarsen the grid (the rounding grows with the law's
   span); where the rounding is coarse (above :data:`_COARSE_SHARE` of the bound, or of 1), the law is also
   composed with its top 1, 2, 4 and 8 atoms lowered onto the next one (while the rounding stays coarse and
   lowering more raises the bound), and the largest of these bounds is reported: every one of these laws is
   stochastically smaller than F_lo, so on the band's event each bound, and so their maximum, is at most eps*
   (``details["outliers_lowered"]`` says when one was chosen).
4. **Bound.** The bound is the smallest eps with ``delta_T(eps; F_lo) <= delta`` (:func:`epsilon_for_delta`,
   dp_accounting's ``get_epsilon_for_delta`` vectorised, in log space so that composed losses far beyond
   709 are exact). If the pair is (eps*, delta)-DP then
   delta_T(eps*; F) <= delta, so on the band's event the bound is <= eps*: valid at level ``confidence``,
   for whatever eps the data single out. With both directions (d0's losses, and d1's reverse losses
   ``-l``), each is bounded at level (1 - confidence)/2 and the larger bound is reported. At delta = 0 one
   step's loss refutes with certainty every eps below T times it.

Validity rests on the per-step log-likelihood ratio being exact and the steps being independent and
identically distributed given the dataset -- the target's claim about its output density, as for the
betting estimator of :mod:`privbound.audit.estimators.whitebox`, which needs only the total loss and no step
structure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, ClassVar

import numpy as np
from scipy import optimize, special, stats

from privbound._validation import check_confidence, check_delta, check_real
from privbound.audit.estimators.base import Estimator, density_values, result_from_privacy_losses
from privbound.audit.estimators.whitebox import WhiteBoxEstimate
from privbound.audit.result import AuditResult

__all__ = ["Composition", "composed_epsilon_lower_bound", "stochastic_lower_band", "composed_loss_law",
           "composed_loss_law_of_groups", "epsilon_for_delta", "band_ranks"]

# Ranks of the band: every integer up to a geometric grid of ratio 1 + RANK_STEP.
RANK_STEP = 1e-3
# The grid of per-step losses: the composed loss is rounded down by at most _ROUNDING, unless that needs more
# than _COMPOSED_POINTS grid points once composed (the FFT length), which then set the step.
_ROUNDING = 1e-3
_COMPOSED_POINTS = 2 ** 22
# FFT round-off allowance per grid point of the composed (tilted) distribution, per step composed: the FFT of a
# probability vector raised to the T-th power errs by about T machine epsilons at most (measured: 1.1e-16 at
# T = 10, 9e-16 at T = 1000, 1.3e-15 at T = 5000, against the allowance's 1e-14, 1e-12 and 5e-12).
_ROUND_OFF = 1e-15
# Tail mass the FFT window may alias into the grid, per group (dp_accounting's Chernoff window bounds).
_TAIL = 1e-30
# Share of delta the trimming of a law's extreme atoms may cost (at most this much mass per step at each end).
_TRIM_SHARE = 0.01
# Largest magnitude of a finite step privacy loss (beyond it, sums and tilts overflow float64's range).
_LARGEST_LOSS = 1e12
# Rounding of the composed loss, relative to the larger of the bound and 1, above which the law is composed again
# with its top atoms lowered (module docstring, step 3), and how many top atoms each such law lowers.
_COARSE_SHARE = 0.01
_OUTLIER_CAPS = (1, 2, 4, 8)
# Largest exponential tilt, and how many times the grid may be coarsened to fit the FFT length.
_THETA_MAX = 50.0
_GRID_ATTEMPTS = 8
# Points of the binned list on which the FFT window is sized.
_SIZING_POINTS = 2 ** 14
# Tolerance on a pure-DP refutation (as the betting estimator's).
_TOL = 1e-9
# The p-value is the smallest level of the grid 10^(-j / _P_GRID_PER_DECADE), j = 0 .. _P_GRID_SIZE - 1, that rejects.
_P_GRID_PER_DECADE = 4
_P_GRID_SIZE = 49


def _check_steps(values, name: str, impossible: float) -> np.ndarray:
    """``values`` as a 2-d float array; NaN, or the infinity ``impossible`` (the sign that says the output was
    drawn from a dataset under which the declared density gives it probability 0), is an error naming the
    trial and step."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a 2-d array of per-step log-likelihood ratios (trials x steps)") from None
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-d array (trials x steps), got shape {arr.shape}")
    if np.isnan(arr).any():
        i, t = (int(v[0]) for v in np.nonzero(np.isnan(arr)))
        raise ValueError(f"{name} must not contain NaN; trial {i}, step {t} is NaN")
    huge = np.isfinite(arr) & (np.abs(arr) > _LARGEST_LOSS)
    if huge.any():
        i, t = (int(v[0]) for v in np.nonzero(huge))
        raise ValueError(f"{name}[{i}, {t}] is {arr[i, t]:g}: a finite step log-likelihood ratio must be at most "
                         f"{_LARGEST_LOSS:g} in magnitude (an output impossible under one dataset has an infinite "
                         f"ratio)")
    if (arr == impossible).any():
        i, t = (int(v[0]) for v in np.nonzero(arr == impossible))
        source = "d0" if impossible < 0 else "d1"
        raise ValueError(f"{name}[{i}, {t}] is {impossible}: the step was drawn from {source}, yet the declared "
                         f"per-step density gives it probability 0 under {source}; the step log-likelihood ratio "
                         f"is not exact there")
    return arr


def band_ranks(n: int) -> np.ndarray:
    """The ranks (1 = largest) at which :func:`stochastic_lower_band` bounds the survival function of n draws."""
    k = int(math.ceil(math.log(n) / math.log1p(RANK_STEP))) + 1 if n > 1 else 1
    return np.unique(np.round(np.geomspace(1, n, k)).astype(np.int64))


def stochastic_lower_band(draws, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """``(values, masses)`` of a law stochastically smaller than the draws' law with probability >= 1 - alpha.

    Atoms at the order statistics ``x_(r)`` of the ranks of :func:`band_ranks` (descending values); the masses
    sum to less than 1, the rest of the law being at -inf (module docstring, step 1).
    """
    return _band_of_sorted(np.sort(np.asarray(draws, dtype=float).ravel())[::-1], alpha)


def _band_of_sorted(x: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`stochastic_lower_band` of draws already sorted in descending order."""
    ranks = band_ranks(x.size)
    b = np.maximum.accumulate(stats.beta.ppf(alpha / ranks.size, ranks, x.size + 1 - ranks))
    return x[ranks - 1], np.diff(np.concatenate([[0.0], b]))


def composed_loss_law(values, masses, steps: int, points: int = _COMPOSED_POINTS, *, delta: float | None = None
                      ) -> tuple[np.ndarray, np.ndarray, float, float]:
    """The law of the sum of ``steps`` draws of ``(values, masses)`` (the rest of the mass at -inf), rounded down.

    Returns ``(losses, probs, inf_mass, rounding)``: a grid of sums and probabilities no larger than theirs
    (sums with a step at -inf left out), the probability of +inf, and how far the grid rounds a sum down
    (module docstring, step 3). ``delta``, when given, is the delta the law will be read at: the
    convolution is then exponentially tilted towards the losses whose tail has mass about delta, where
    the hockey-stick divergence is decided.
    """
    return composed_loss_law_of_groups([(values, masses, steps)], points, delta=delta)


def _trim(v: np.ndarray, m: np.ndarray, mass: float) -> tuple[np.ndarray, np.ndarray]:
    """The law lowered where at most ``mass`` sits at each end: atoms above the top quantile of level ``mass``
    moved down to it, atoms below the bottom one sent to -inf (dropped). Stochastically smaller."""
    if mass <= 0 or v.size < 2:
        return v, m
    order = np.argsort(v)
    v, m = v[order], m[order]
    above = np.cumsum(m[::-1])[::-1] - m  # mass strictly above each atom
    below = np.cumsum(m) - m  # mass strictly below each atom
    top = int(np.flatnonzero(above <= mass)[0])
    bottom = int(np.flatnonzero(below <= mass)[-1])
    v = np.minimum(v, v[top])
    return v[bottom:], m[bottom:]


def _below_zero_dropped(parts: list[tuple[np.ndarray, np.ndarray, int]]) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """The laws with every atom sent to -inf that no sum can lift above 0: an atom v of a law whose largest atom is
    ``top`` is dropped when ``v + (S - top) <= 0``, S the largest sum (every step at its law's largest atom). Only
    sums above 0 count in the divergence at any eps >= 0, so this changes no bound, and a far low outlier no
    longer sets the grid's span."""
    largest = sum(steps * float(v.max()) for v, _, steps in parts)
    out = []
    for v, m, steps in parts:
        keep = v + (largest - float(v.max())) > 0.0
        out.append((v[keep], m[keep], steps))
    return out


def _log_mgf(v: np.ndarray, log_m: np.ndarray, theta: float) -> tuple[float, float]:
    """``(K, K')`` of the (sub-)probability law: K(theta) = log sum m e^{theta v} and its derivative."""
    a = log_m + theta * v
    k = float(special.logsumexp(a))
    return k, float(np.sum(np.exp(a - k) * v))


def tilt_for_delta(parts: list[tuple[np.ndarray, np.ndarray, int]], delta: float) -> float:
    """The exponential tilt theta >= 0 that centres the composed law where its upper tail has mass about delta.

    The saddle point of the Chernoff bound: theta solves ``sum_g T_g (K_g - theta K_g') = log delta`` (K_g the
    log moment generating function of group g's law), the left side decreasing in theta. Any theta gives a
    valid composition (the tilt is undone exactly); this one puts the FFT's resolution where the
    hockey-stick divergence at ``delta`` is decided.
    """
    target = math.log(delta)
    logs = [(v, np.log(m), steps) for v, m, steps in parts]

    def excess(theta: float) -> float:
        return sum(steps * (k - theta * dk) for v, lm, steps in logs for k, dk in [_log_mgf(v, lm, theta)]) - target

    if excess(0.0) <= 0.0:
        return 0.0
    if excess(_THETA_MAX) > 0.0:
        return _THETA_MAX
    return float(optimize.brentq(excess, 0.0, _THETA_MAX, xtol=1e-6))


def _tilted_list(v: np.ndarray, m: np.ndarray, theta: float, disc: float) -> tuple[np.ndarray, int, float]:
    """``(list, low, log_z)``: the law rounded down to the grid ``disc`` and tilted by e^{theta l}, as
    probabilities from grid index ``low`` on, and the log of the tilt's normaliser."""
    idx = np.floor(v / disc).astype(np.int64)
    low = int(idx.min())
    a = np.log(m) + theta * (idx * disc)
    log_z = float(special.logsumexp(a))
    return np.bincount(idx - low, weights=np.exp(a - log_z)), low, log_z


def _window_length(q: np.ndarray, steps: int) -> int:
    """An upper bound on the FFT window dp_accounting's ``self_convolve(q, steps, _TAIL)`` takes: its Chernoff
    bounds computed on ``q`` binned ``c`` points at a time (positions rounded down by less than ``c`` per step,
    so the window of the fine list lies within ``c`` times the coarse one, widened by ``steps``)."""
    from dp_accounting.pld import common

    c = max(1, q.size // _SIZING_POINTS)
    coarse = np.add.reduceat(q, np.arange(0, q.size, c))
    lo, hi = common.compute_self_convolve_bounds(coarse, steps, _TAIL)
    return (hi - lo + steps + 1) * c


def _convolve_all(lists: list[np.ndarray]) -> np.ndarray:
    """The convolution of all ``lists``, taken in pairs, then pairs of pairs (a balanced tree): the same number of
    FFT convolutions as one after the other, so the same round-off, but each list is transformed at about its own
    length instead of the growing product's (hundreds of kinds of steps cost seconds, not minutes)."""
    from scipy import signal

    while len(lists) > 1:
        paired = [a * b if min(a.size, b.size) == 1 else signal.fftconvolve(a, b)
                  for a, b in zip(lists[0::2], lists[1::2])]
        lists = paired + lists[len(paired) * 2:]
    return lists[0]


def composed_loss_law_of_groups(groups, points: int = _COMPOSED_POINTS, *, delta: float | None = None
                                ) -> tuple[np.ndarray, np.ndarray, float, float]:
    """:func:`composed_loss_law` of independent steps of several laws: ``groups`` is a list of
    ``(values, masses, steps)``, ``steps`` draws of each law (the rest of its mass at -inf).

    Each law is rounded down to one common grid, exponentially tilted (:func:`tilt_for_delta`, when
    ``delta`` is given), self-convolved by dp_accounting's FFT with Chernoff tail bounds of aliased mass
    ``_TAIL`` (``pld.common.self_convolve``), the groups convolved together, and the tilt undone, each grid
    point lowered by its bound on FFT round-off and aliasing first; the sum is -inf when any step is, +inf
    when a step is +inf and none is -inf. With ``delta``, atoms of mass at most ``_TRIM_SHARE delta`` per step
    at either end of a law are lowered (:func:`_trim`) so that one outlier does not coarsen the grid.
    """
    from dp_accounting.pld import common

    parts, p_all_finite_or_top, p_all_finite = [], 1.0, 1.0
    total_steps = sum(int(steps) for _, _, steps in groups)
    for values, masses, steps in groups:
        v, m = np.asarray(values, dtype=float), np.asarray(masses, dtype=float)
        keep = m > 0
        v, m = v[keep], m[keep]
        if np.isneginf(v).any() or np.isnan(v).any():
            raise ValueError("composed_loss_law: values must be finite or +inf (put -inf's mass in the missing mass)")
        top = np.isposinf(v)
        p_inf, below = float(m[top].sum()), max(0.0, 1.0 - float(m.sum()))  # masses at +inf and at -inf
        p_all_finite_or_top *= (1.0 - below) ** steps
        p_all_finite *= max(0.0, 1.0 - below - p_inf) ** steps
        fv, fm = v[~top], m[~top]
        if delta is not None and delta > 0:
            fv, fm = _trim(fv, fm, _TRIM_SHARE * delta / total_steps)
        parts.append((fv, fm, int(steps)))
    # P(some step at +inf and none at -inf): the sum is +inf there.
    inf_mass = max(0.0, p_all_finite_or_top - p_all_finite)
    if delta is not None and all(v.size for v, _, _ in parts):
        parts = _below_zero_dropped(parts)
    if any(v.size == 0 for v, _, _ in parts):
        return np.zeros(0), np.zeros(0), inf_mass, 0.0
    theta = tilt_for_delta(parts, delta) if delta is not None and delta > 0 else 0.0
    span = max(float(v.max() - v.min()) for v, _, _ in parts)
    disc, tail = max(_ROUNDING / total_steps, span / (points - 1)), 0.0
    for _ in range(_GRID_ATTEMPTS):
        lists = [_tilted_list(v, m, theta, disc) + (steps,) for v, m, steps in parts]
        if sum((q.size - 1) * steps for q, _, _, steps in lists) + 1 <= points:
            tail = 0.0  # the whole range of the sum fits: no window
            break
        needed = sum(_window_length(q, steps) for q, _, _, steps in lists)
        if needed <= points:
            tail = _TAIL
            break
        disc *= 1.05 * needed / points
    start, convs, log_scale = 0, [], 0.0
    for q, low, log_z, steps in lists:
        offset, conv = common.self_convolve(q, steps, tail)
        start += low * steps + offset
        log_scale += steps * log_z
        convs.append(np.asarray(conv, dtype=float))
    probs = _convolve_all(convs)
    losses = (start + np.arange(probs.size)) * disc
    # Undo the tilt: p_j = q_j e^{log_scale - theta l_j}, each q_j first lowered by its round-off and aliasing.
    with np.errstate(divide="ignore"):
        log_p = (np.log(np.clip(probs - (_ROUND_OFF * total_steps + len(lists) * tail), 0.0, None))
                 + log_scale - theta * losses)
    return losses, np.exp(np.minimum(log_p, 0.0)), inf_mass, total_steps * disc


def epsilon_for_delta(losses, probs, inf_mass: float, delta: float) -> float:
    """The smallest eps >= 0 with ``inf_mass + sum_j probs_j (1 - e^{eps - losses_j})_+ <= delta`` (``inf`` if none).

    On ``[l_k, l_{k+1})`` the divergence is ``inf_mass + U_k - e^eps W_k`` with U_k, W_k the sums of ``p_j`` and
    ``p_j e^{-l_j}`` over ``l_j > l_k``, so the crossing is solved in closed form on its segment; W_k is kept
    as its logarithm, so that losses far beyond 709 (where e^{-l} underflows) are exact.
    """
    delta = check_delta(delta)
    inf_mass = check_real(inf_mass, "inf_mass", low=0.0, high=1.0)
    losses, probs = np.asarray(losses, dtype=float), np.asarray(probs, dtype=float)
    if losses.ndim != 1 or losses.shape != probs.shape:
        raise ValueError(f"losses and probs must be 1-d arrays of one length, got shapes {losses.shape} and "
                         f"{probs.shape}")
    if np.isnan(losses).any() or not np.all((probs >= 0.0) & (probs <= 1.0)):
        raise ValueError("losses must not be NaN, and probs must be probabilities in [0, 1]")
    if inf_mass > delta:
        return math.inf
    if losses.size > 1 and np.any(np.diff(losses) < 0):
        order = np.argsort(losses, kind="stable")
        losses, probs = losses[order], probs[order]
    pos = (losses > 0) & (probs > 0)
    l, p = losses[pos], probs[pos]
    if l.size == 0:
        return 0.0
    upper = np.cumsum(p[::-1])[::-1]  # sum over l_j >= l_k
    log_lower = np.logaddexp.accumulate((np.log(p) - l)[::-1])[::-1]
    upper, log_lower = np.append(upper[1:], 0.0), np.append(log_lower[1:], -np.inf)  # strictly above l_k
    with np.errstate(invalid="ignore"):  # at l = +inf: inf + (-inf), a NaN the comparison below reads as False
        excess = inf_mass + upper - np.exp(l + log_lower)  # divergence at eps = l_k (l + log W <= 0: no overflow)
    above = np.flatnonzero(excess > delta)
    if above.size == 0:
        head = inf_mass + float(p.sum())  # at eps = 0: the divergence over the losses above 0
        log_all = float(special.logsumexp(np.log(p) - l))
        if head - math.exp(log_all) <= delta:
            return 0.0
        return max(0.0, math.log(head - delta) - log_all)
    k = int(above[-1])
    if np.isneginf(log_lower[k]):
        return float(l[k + 1]) if k + 1 < l.size else math.inf
    return float(max(l[k], math.log(inf_mass + upper[k] - delta) - log_lower[k]))


def _side_bound(side: list[tuple[np.ndarray, int]], delta: float, alpha: float,
                points: int = _COMPOSED_POINTS, caps: tuple[int, ...] | None = None
                ) -> tuple[float, float, int, tuple[int, ...]]:
    """``(bound, rounding, lowered, caps)`` of one direction at level alpha (module docstring, steps 1-4):
    ``lowered`` top atoms of each law's band were lowered onto the next for it (0: none), the largest of the bounds
    of the laws with ``caps`` top atoms lowered and of the law itself. ``caps=None`` picks them by the rounding
    at this level (those of :data:`_OUTLIER_CAPS` tried while it is coarse); given, exactly those are tried, so
    that the bound is a maximum of the same monotone functions of the level at every level (:func:`_p_value`).
    ``side`` holds, per group of steps, its draws (sorted, descending) and its number of steps per output; each
    group's band is at level alpha / (number of groups), so that all of them hold at once."""
    if delta <= 0.0:  # pure DP: a step loss l refutes, with certainty, every eps below T l (all steps near l)
        tops = [float(x[0]) for x, _ in side]
        if any(math.isinf(t) and t > 0 for t in tops):
            return math.inf, 0.0, 0, ()
        total = sum(steps * max(t, 0.0) for t, (_, steps) in zip(tops, side))
        return (total - _TOL if total > _TOL else 0.0), 0.0, 0, ()
    level = alpha / len(side)
    groups = [(*_band_of_sorted(x, level), steps) for x, steps in side]
    best, tried = (*_composed_bound(groups, delta, points), 0), []
    for lowered in _OUTLIER_CAPS if caps is None else caps:
        if caps is None and (best[1] <= _COARSE_SHARE * max(1.0, best[0])
                             or not any(v.size > lowered for v, _, _ in groups)):
            break
        capped = [(np.minimum(v, v[min(lowered, v.size - 1)]), m, steps) for v, m, steps in groups]
        bound, rounding = _composed_bound(capped, delta, points)
        tried.append(lowered)
        if bound > best[0]:
            best = (bound, rounding, lowered)
        elif caps is None:  # lowering more atoms did not help: the law is wide, not an outlier
            break
    return (*best, tuple(tried))


def _composed_bound(groups, delta: float, points: int) -> tuple[float, float]:
    """``(bound, rounding)`` of the laws ``groups`` (each ``(values, masses, steps)``) composed and read at delta."""
    losses, probs, inf_mass, rounding = composed_loss_law_of_groups(groups, points, delta=delta)
    return epsilon_for_delta(losses, probs, inf_mass, delta), rounding


def _check_groups(groups, steps: int) -> np.ndarray:
    """``groups`` as integer codes, one per step (all steps one group when ``groups`` is None)."""
    if groups is None:
        return np.zeros(steps, dtype=np.int64)
    labels = list(groups) if not isinstance(groups, (str, bytes)) else None
    shape = None if labels is None else np.shape(np.asarray(labels, dtype=object))
    if shape is not None and len(shape) != 1:
        raise ValueError(f"groups must give one label per step ({steps} steps), got an array of shape {shape}")
    if labels is None or len(labels) != steps:
        raise ValueError(f"groups must give one label per step ({steps} steps), got "
                         f"{len(labels) if labels is not None else type(groups).__name__}")
    try:
        _, codes = np.unique(np.asarray(labels), return_inverse=True)
    except TypeError:
        raise TypeError("groups must be labels that numpy can compare (integers or strings)") from None
    return codes.astype(np.int64).ravel()


def composed_epsilon_lower_bound(
    step_llr_out0,
    step_llr_out1=None,
    *,
    delta: float = 0.0,
    confidence: float = 0.95,
    epsilon_claimed: float | None = None,
    groups=None,
) -> WhiteBoxEstimate:
    """A ``confidence`` lower confidence bound on epsilon at ``delta`` from per-step privacy losses.

    ``step_llr_out0``: array (trials, T) of ``log p_d0(o_t) / p_d1(o_t)`` for the T steps of outputs sampled
    on d0; ``step_llr_out1``: the same function on outputs sampled on d1 (``None`` to use d0 only). Valid when
    these are exact and the steps of an output are independent and identically distributed given the
    dataset (module docstring). ``groups``, one label per step, declares steps of several kinds: the steps
    are independent, those with the same label identically distributed; each kind's law gets its own band
    (at level alpha / number of kinds) and the kinds are composed together. ``details`` holds each
    direction's bound (``"bounds"``), the number of steps, the band's ranks and the grid's rounding of the
    composed loss.
    """
    delta = check_delta(delta)
    confidence = check_confidence(confidence)
    if epsilon_claimed is not None:
        epsilon_claimed = check_real(epsilon_claimed, "epsilon_claimed", low=0.0)
    if step_llr_out0 is None and step_llr_out1 is None:
        raise ValueError("give at least one of step_llr_out0 and step_llr_out1")
    given: dict[str, np.ndarray] = {}
    if step_llr_out0 is not None:
        given["d0"] = _check_steps(step_llr_out0, "step_llr_out0", -math.inf)
    if step_llr_out1 is not None:
        given["d1"] = -_check_steps(step_llr_out1, "step_llr_out1", math.inf)  # privacy loss of the reverse direction
    steps = {s.shape[1] for s in given.values()}
    if len(steps) != 1:
        raise ValueError(f"step_llr_out0 and step_llr_out1 must have the same number of steps, got {sorted(steps)}")
    (T,) = steps
    codes = _check_groups(groups, T)
    trials = {nm: s.shape[0] for nm, s in given.items()}
    # Every step of a kind in every trial is a draw of that kind's law.
    sides = {nm: [(np.sort(s[:, codes == g].ravel())[::-1], int(np.sum(codes == g))) for g in np.unique(codes)]
             for nm, s in given.items()}
    alpha = (1.0 - confidence) / len(sides)
    results = {nm: _side_bound(s, delta, alpha) for nm, s in sides.items()}
    bounds = {nm: r[0] for nm, r in results.items()}
    side = max(bounds, key=bounds.get)
    bound = bounds[side]
    details: dict[str, Any] = {"steps": T, "bounds": bounds, "side": side, "rounding": max(r[1] for r in results.values()),
                               "ranks": int(max(band_ranks(x.size).size for s in sides.values() for x, _ in s))}
    if results[side][2]:
        details["outliers_lowered"] = (f"the top {results[side][2]} atom(s) of each step law's band were lowered onto "
                                       "the next: kept, they would have coarsened the grid (a smaller, still valid "
                                       "law; the larger bound is reported)")
    if groups is not None:
        details["groups"] = int(codes.max()) + 1
    if math.isinf(bound):
        details["unbounded"] = ("steps with infinite privacy loss (impossible under the other dataset) have "
                                "probability above delta: no finite epsilon holds")
    p = float("nan") if epsilon_claimed is None else _p_value(
        sides[side], delta, epsilon_claimed, n_sides=len(sides), level=alpha * len(sides),
        rejected_at_level=bound > epsilon_claimed, caps=results[side][3])
    return WhiteBoxEstimate(
        epsilon_lower_bound=float(bound),
        confidence=confidence,
        delta=delta,
        n_in=trials.get("d1", 0),
        n_out=trials.get("d0", 0),
        method="white-box/composition",
        p_value=p,
        epsilon_claimed=epsilon_claimed,
        details=details,
    )


def _p_value(x: list[tuple[np.ndarray, int]], delta: float, epsilon: float, *, n_sides: int, level: float,
             rejected_at_level: bool, caps: tuple[int, ...] = ()) -> float:
    """The smallest level of a fixed grid at which the test rejects "(epsilon, delta)" (1 if none): a valid p-value.

    Rejection at level a is checked on ``x``, the direction that gave the bound, at a / ``n_sides``: one
    direction rejects less often than the full test, so the p-value is conservative, and it agrees with the
    bound (a bound above ``epsilon`` at ``level`` rejects at every grid level above ``level``). Rejection is
    monotone in a (a larger level narrows the band), so the grid is bisected; when the test at its own
    ``level`` did not reject, no grid level at or below it can. ``caps`` are the outlier caps the bound tried
    (:func:`_side_bound`): every level tries the same, so that rejection stays monotone.
    """
    levels = 10.0 ** (-np.arange(_P_GRID_SIZE) / _P_GRID_PER_DECADE)

    def rejects(j: int) -> bool:
        return _side_bound(x, delta, levels[j] / n_sides, caps=caps)[0] > epsilon

    hi = _P_GRID_SIZE - 1 if rejected_at_level else int(np.sum(levels > level))  # hi: never rejects beyond it
    if hi == 0 or not rejects(0):
        return 1.0
    if hi == _P_GRID_SIZE - 1 and rejects(hi):
        return float(levels[hi])
    lo = 0  # invariant: lo rejects, hi does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if rejects(mid):
            lo = mid
        else:
            hi = mid
    return float(levels[lo])


@dataclass(frozen=True)
class Composition(Estimator):
    """Composition: a band on the law of ONE step's privacy loss from all steps, composed exactly.

    For outputs of T steps that are independent and identically distributed given the dataset (a
    composition of one mechanism: DP-SGD's iterates read along a gradient canary),
    ``step_log_likelihood_ratio(outputs)`` returns each output's T per-step log-likelihood ratios,
    shape (trials, T). All n T steps bound the per-step loss law from below (a simultaneous band of
    Beta order-statistic bounds) and the band is composed T times with dp_accounting's convolution
    (:func:`composed_epsilon_lower_bound`, module docstring).

    ``groups`` (one label per step, e.g. ``("threshold",) + ("draw",) * 15``) declares steps of several
    kinds: independent given the dataset, identically distributed within a kind. Each kind's law is
    bounded by its own band (the bands hold together by a union bound) and the kinds are composed
    together. Each band is at level alpha / (number of kinds), from that kind's draws alone: declaring
    kinds where the steps share one law costs power (100 Gaussian steps as 100 kinds certify 5.8 of
    the exact 16.7, as one kind 15.7: benchmarks/README.md, 'Composition with many kinds of steps').

    Validity: the per-step density must be exact and the steps independent given the dataset, i.i.d.
    within a kind; the hockey-stick divergence is monotone in every step's loss law, so bands below the
    true laws compose to a bound below the true epsilon, whatever epsilon the data single out.
    """

    name: ClassVar[str] = "composition"
    step_log_likelihood_ratio: Callable[[np.ndarray], np.ndarray]
    groups: tuple | None = None

    def __post_init__(self) -> None:
        if not callable(self.step_log_likelihood_ratio):
            raise TypeError("Composition(step_log_likelihood_ratio) must be callable as f(outputs) -> per-step "
                            f"log-likelihood ratios of shape (trials, T), got {type(self.step_log_likelihood_ratio).__name__}")
        if self.groups is not None:
            if isinstance(self.groups, (str, bytes)) or not hasattr(self.groups, "__len__") or len(self.groups) == 0:
                raise TypeError(f"Composition(groups=...) must be a non-empty sequence of one label per step, "
                                f"got {self.groups!r}")
            object.__setattr__(self, "groups", tuple(self.groups))

    def estimate(self, out0, out1, *, epsilon, delta, confidence, seed) -> AuditResult:
        l0, l1 = (density_values(self.step_log_likelihood_ratio, o, f"step_log_likelihood_ratio({nm})", 2)
                  for o, nm in ((out0, "out0"), (out1, "out1")))
        bound = composed_epsilon_lower_bound(l0, l1, delta=delta, confidence=confidence, epsilon_claimed=epsilon,
                                             groups=self.groups)
        return result_from_privacy_losses(bound, l0.sum(axis=1), l1.sum(axis=1), estimator=self.name,
                                          attack="step-likelihood-ratio", epsilon=epsilon, delta=delta,
                                          confidence=confidence, seed=seed, details={})
