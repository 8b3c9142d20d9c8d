"""White-box privacy-loss estimation: epsilon lower bounds from the privacy-loss variable.

A target that knows its output density supplies the privacy-loss
random variable ``L(o) = log p_d0(o) / p_d1(o)``. The hockey-stick divergence of the
pair at ``e^eps`` (Balle & Wang 2018, Thm 5; Balle, Barthe & Gaboardi 2018, Sec. 2),

    delta_0(eps) = sup_E P_d0(E) - e^eps P_d1(E) = E_{o ~ d0}[(1 - e^{eps - L(o)})_+],
    delta_1(eps) = E_{o ~ d1}[(1 - e^{eps + L(o)})_+]           (the reverse direction),

is the smallest delta for which the pair satisfies the (eps, delta)-DP inequalities;
the mechanism is (eps, delta)-DP on this pair iff delta_0(eps) <= delta and
delta_1(eps) <= delta. Each summand ``X_i(eps) = (1 - e^{eps - L_i})_+`` lies in [0, 1].

Test by betting (Waudby-Smith & Ramdas 2023, "Estimating means of bounded random
variables by betting", JRSS-B, arXiv:2010.09686, Sec. 4 and Thm 3 with a discrete mixture of constant
bets; Shafer & Vovk): for a bet ``lambda in [0, 1/delta)`` the capital

    K_lambda(eps) = prod_i (1 + lambda (X_i(eps) - delta))

has expectation <= 1 whenever E[X(eps)] <= delta (a product of independent factors of
mean <= 1), so by Markov P(K >= 1/alpha) <= alpha. We average K over a fixed
logarithmic grid of bets and over three ways of using the two samples (d0 only, d1
only, and the product of both sides with a shared bet -- the d0 and d1 samples are
independent, so the product also has mean <= 1 under the joint null "delta_0 <= delta
and delta_1 <= delta"). The average is again an e-value.

Which test (pilot). Averaging over 40 bets and three combinations costs up to log 120 in
capital, which decides the bound when delta is small beside 1/n and one direction carries all
the evidence (a few outputs with large L; DP-SGD's subsampled Gaussian). So by default the
e-value is the average of two e-values: the full mixture on all outputs, and a test chosen on
a pilot -- the first ``pilot_share`` (10%) of each side's outputs, in trial order -- and run on
the other outputs: the combination and bet whose capital, scaled to the evaluation size, is
predicted to reject the largest eps (the portfolio's rule for black-box attacks; bets fixed before
the outputs they bet on are valid bets, Waudby-Smith & Ramdas Sec. 4), with five bets spanning a factor 2 on either
side of the chosen one (the full mixture when the pilot predicts no rejection). The chosen
test depends on the pilot only and the evaluation outputs are independent of it, so its
e-value has conditional expectation <= 1 under the null, and so has the average. The average
costs log 2 on either branch; ``pilot_share=0`` gives the full mixture alone.

Monotonicity and simultaneous validity. ``X_i(eps)`` is non-increasing in eps and every
factor is increasing in X_i (bets are >= 0), so the combined capital ``K(eps)`` is
non-increasing in eps: the set of rejected eps is an interval ``[0, eps_hat)`` and the
reported bound is ``eps_hat`` (found by bisection, reported at the rejected end). If the
pair truly satisfies (eps*, delta), then ``eps_hat > eps*`` implies ``K(eps*) >= 1/alpha``,
an event of probability <= alpha for the single, data-independent eps*: so the bound is
valid no matter which eps the data single out -- no grid, no union bound. The same
monotone construction gives a lower confidence curve on delta_0(eps)
(:func:`hockey_stick_lower_bound`): LCB(eps) = sup{m : K(eps, m) >= 1/alpha} is
non-increasing in eps, and ``LCB(eps) > delta`` exactly when ``eps`` is rejected.
That curve is pointwise valid at every eps (and monotone); it is not claimed to be a
simultaneous band, which the epsilon bound does not need.

Pure DP (delta = 0): under the null ``X(eps) = 0`` almost surely, so a single output
with ``L > eps`` refutes (eps, 0)-DP with certainty; the bound is then the largest
observed privacy loss (minus a 1e-9 numerical tolerance).

Importance sampling (optional): when a target samples outputs from a proposal ``q``
instead of ``p_d0`` (e.g. an exponentially tilted output distribution concentrated where
L is large), pass the weights ``w = p_d0/q`` and a bound ``weight_bound`` B with
``w(o) <= B`` wherever ``L(o) > 0``. The summands become ``w X / B`` (still in [0, 1],
mean delta_0(eps)/B) and the test is run against ``delta/B``.

Soundness requires the supplied log-likelihood ratio to be exact: it is the target's
own claim about its output density. A wrong density makes this estimator unsound,
whereas the black-box Clopper--Pearson estimators never depend on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

import numpy as np

from privbound._validation import check_confidence, check_delta, check_real
from privbound.audit.estimators.base import Estimator, density_values, result_from_privacy_losses
from privbound.audit.result import AuditResult

__all__ = [
    "WhiteBox",
    "WhiteBoxEstimate",
    "whitebox_epsilon_lower_bound",
    "whitebox_log_capital",
    "hockey_stick_lower_bound",
    "hockey_stick_divergence",
]

# Numerical tolerance on the privacy loss: an output refutes (eps, .) only if L > eps + _TOL.
_TOL = 1e-9
# Largest finite epsilon the bisection explores (an unbounded privacy loss is reported as inf).
_EPS_CAP = 1e3
_BISECTION_STEPS = 60
# Share of each side's outputs (the first, in trial order) that chooses the test the others run.
PILOT_SHARE = 0.1
# Bets of the evaluation part: geometric over a factor 2 on either side of the pilot's choice.
_EVAL_BETS = 5
_EVAL_SPAN = 2.0


@dataclass(frozen=True)
class WhiteBoxEstimate:
    """Result of :func:`whitebox_epsilon_lower_bound` (fields shaped like ``privbound.audit.statistics.Estimate``).

    ``p_value`` is ``min(1, 1/K)`` with K the betting capital at ``epsilon_claimed``
    (a valid p-value of "the pair is (epsilon_claimed, delta)-DP" by Markov's inequality);
    ``nan`` when no claimed epsilon was given. ``details["test"]`` says which outputs formed the
    pilot and what it chose (``{"pilot": None}`` without one); ``details["unbounded"]`` gives the
    reason when the bound is infinite.
    """

    epsilon_lower_bound: float
    confidence: float
    delta: float
    n_in: int  # d1 outputs
    n_out: int  # d0 outputs
    method: str
    p_value: float = float("nan")
    epsilon_claimed: float | None = None
    log_capital_at_bound: float = float("nan")
    event: Any = None  # no threshold event: the white-box test uses the whole privacy-loss sample
    k_in: int = 0
    k_out: int = 0
    n_candidates: int = 1
    details: dict = field(default_factory=dict, compare=False)

    @property
    def tpr(self) -> float:
        return float("nan")

    @property
    def fpr(self) -> float:
        return float("nan")

    def summary(self) -> str:
        return (
            f"white-box epsilon lower bound {self.epsilon_lower_bound:.4f} at {self.confidence:.1%} "
            f"confidence (delta={self.delta:g}, n0={self.n_out}, n1={self.n_in}, method {self.method}"
            + ("" if self.epsilon_claimed is None else f", p-value of the claim {self.p_value:.3g}")
            + ")"
            + ("" if not self.details.get("test", {}).get("chosen") else
               f"; the pilot chose: {self.details['test']['chosen']}")
        )


# ------------------------------------------------------------------ input handling


def _check_llr(values, name: str) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a 1-d array of log-likelihood ratios") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d array, got shape {arr.shape}")
    if np.any(np.isnan(arr)):
        bad = int(np.flatnonzero(np.isnan(arr))[0])
        raise ValueError(f"{name} must not contain NaN; entry {bad} is NaN")
    return arr


def _check_weights(weights, loss: np.ndarray, bound: float | None, name: str, floor: float = 0.0) -> np.ndarray | None:
    if weights is None:
        return None
    if bound is None:
        raise ValueError(f"{name} given without weight_bound: importance weights need a bound B >= w on {{L > 0}}")
    w = np.asarray(weights, dtype=float)
    if w.shape != loss.shape:
        raise ValueError(f"{name} must have one weight per output, shape {loss.shape}; got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"{name} must be finite and >= 0")
    over = (loss > floor) & (w > bound * (1 + 1e-12))
    if np.any(over):
        i = int(np.flatnonzero(over)[0])
        raise ValueError(
            f"{name}[{i}] = {w[i]!r} exceeds weight_bound = {bound!r} at an output with positive privacy "
            f"loss above epsilon_floor={floor!r}; weight_bound must bound p_d0/q wherever L > epsilon_floor"
        )
    return w / bound


class _Side:
    """The summands of one direction, sorted so that the positive ones form a prefix for any eps."""

    def __init__(self, loss: np.ndarray, scaled_weights: np.ndarray | None):
        order = np.argsort(-loss, kind="stable")
        self.loss = loss[order]
        self.w = None if scaled_weights is None else scaled_weights[order]
        self.n = loss.size

    def summands(self, eps: float) -> np.ndarray:
        """The nonzero-able summands ``w (1 - e^{eps - L})_+ / B`` (only those with L > eps + tol).

        At ``eps = inf`` the summands are the limits: 1 for the outputs with L = +inf
        (impossible under the other dataset), none for the others.
        """
        if math.isinf(eps):
            k = int(np.count_nonzero(np.isposinf(self.loss)))
            return np.ones(k) if self.w is None else self.w[:k].copy()
        k = int(np.searchsorted(-self.loss, -(eps + _TOL), side="left"))
        top = self.loss[:k]
        with np.errstate(over="ignore", invalid="ignore"):
            x = np.where(np.isposinf(top), 1.0, -np.expm1(eps - top))
        x = np.clip(x, 0.0, 1.0)
        if self.w is not None:
            x = x * self.w[:k]
        return x

    def max_loss(self) -> float:
        return float(self.loss[0])


def _lse(a) -> float:
    """log(sum(exp(a))) for a small 1-d array (numpy; scipy's logsumexp is slow on tiny inputs)."""
    a = np.asarray(a, dtype=float)
    top = float(np.max(a))
    if not math.isfinite(top):
        return top
    return top + math.log(float(np.sum(np.exp(a - top))))


def _bet_grid(m: float, size: int = 40) -> np.ndarray:
    """Fixed, data-independent bets ``lambda`` in [1/4, 1/(2m)] (geometric), so each factor >= 1/2."""
    hi = 0.5 / m
    lo = min(0.25, hi)
    return np.geomspace(lo, hi, size)


def _side_log_capital(side: _Side, eps: float, m: float, bets: np.ndarray) -> np.ndarray:
    """log K_lambda for every bet: n_zero log(1 - lambda m) + sum log(1 + lambda (X_i - m))."""
    x = side.summands(eps)
    n_zero = side.n - x.size
    out = n_zero * np.log1p(-bets * m)
    if x.size:
        out = out + np.log1p(np.outer(x - m, bets)).sum(axis=0)
    return out


def _combination_log_capitals(sides: list[_Side], eps: float, m: float, bets: np.ndarray,
                               scales=None) -> np.ndarray:
    """log K_lambda for every combination and bet, shape (combinations, bets).

    The combinations are each side alone and, with two sides, their product with a shared
    bet. ``scales`` multiply each side's log capital (the pilot's prediction at another size).
    """
    logs = [_side_log_capital(s, eps, m, bets) for s in sides]
    if scales is not None:
        logs = [lg * c for lg, c in zip(logs, scales)]
    if len(logs) == 2:
        logs.append(logs[0] + logs[1])
    return np.array(logs)


def _combined_log_capital(sides: list[_Side], eps: float, m: float, bets: np.ndarray) -> float:
    """log of the averaged e-value: 1/3 [mean_l K0_l + mean_l K1_l + mean_l K0_l K1_l] (two sides)."""
    logs = _combination_log_capitals(sides, eps, m, bets)
    return float(_lse(logs.ravel()) - math.log(logs.size))


def _pilot_test(pilot: list[_Side], evaluation: list[_Side], m: float, floor: float,
                log_target: float) -> tuple[int, np.ndarray, float] | None:
    """The combination and bets the evaluation part runs, chosen on the pilot; ``None`` if it predicts nothing.

    Each side's pilot log capital is scaled by (evaluation size / pilot size) -- the expected log
    capital of a constant bet grows linearly with the number of outputs -- and the choice is the
    (combination, bet) that rejects the largest eps at the evaluation's level (its five-bet mixture
    included). Returns ``(combination, bets, predicted eps)``.
    """
    if any(s.n == 0 for s in pilot):
        return None
    eps_hi = _largest_finite_loss(pilot)
    bets = _bet_grid(m)
    scales = [e.n / p.n for p, e in zip(pilot, evaluation)]
    need = log_target + math.log(_EVAL_BETS)

    def predicted(e):
        return float(np.max(_combination_log_capitals(pilot, e, m, bets, scales)))

    eps_pred = _largest_rejected_epsilon(predicted, floor, eps_hi, need)
    if not predicted(max(eps_pred, floor)) >= need:
        return None
    c, j = np.unravel_index(int(np.argmax(_combination_log_capitals(pilot, max(eps_pred, floor), m, bets, scales))),
                            (len(pilot) + (len(pilot) == 2), bets.size))
    chosen = np.minimum(bets[j] * np.geomspace(1 / _EVAL_SPAN, _EVAL_SPAN, _EVAL_BETS), 0.5 / m)
    return int(c), chosen, float(eps_pred)


# --------------------------------------------------------------------- public API


def whitebox_log_capital(
    llr_out0,
    llr_out1=None,
    *,
    epsilon: float,
    delta: float,
    weights0=None,
    weights1=None,
    weight_bound: float | None = None,
) -> float:
    """log of the full-mixture betting e-value against "the pair is (epsilon, delta)-DP" on all the outputs
    (``+inf`` for a certain refutation; the test of :func:`whitebox_epsilon_lower_bound` with ``pilot_share=0``).

    ``llr_out0`` are ``L(o) = log p_d0(o)/p_d1(o)`` on outputs drawn from d0 (or the
    importance proposal, with ``weights0``), ``llr_out1`` the same function on outputs
    from d1; either may be ``None`` to use one direction only.
    """
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    delta = check_delta(delta)
    sides, scale = _build_sides(llr_out0, llr_out1, weights0, weights1, weight_bound)
    m = delta / scale
    if m <= 0.0:
        return math.inf if any(s.summands(epsilon).size for s in sides) else 0.0
    if m >= 1.0:
        return 0.0
    return _combined_log_capital(sides, epsilon, m, _bet_grid(m))


def _build_sides(llr_out0, llr_out1, weights0, weights1, weight_bound, floor=0.0):
    if llr_out0 is None and llr_out1 is None:
        raise ValueError("give at least one of llr_out0 and llr_out1")
    scale = 1.0
    if weight_bound is not None:
        scale = check_real(weight_bound, "weight_bound", low=0.0, low_inclusive=False)
    sides = []
    if llr_out0 is not None:
        l0 = _check_llr(llr_out0, "llr_out0")
        sides.append(_Side(l0, _check_weights(weights0, l0, weight_bound, "weights0", floor)))
    if llr_out1 is not None:
        l1 = -_check_llr(llr_out1, "llr_out1")  # privacy loss of the reverse direction
        sides.append(_Side(l1, _check_weights(weights1, l1, weight_bound, "weights1", floor)))
    if weight_bound is not None and weights0 is None and weights1 is None:
        raise ValueError("weight_bound given without weights0/weights1")
    if weight_bound is not None and ((llr_out0 is not None and weights0 is None)
                                     or (llr_out1 is not None and weights1 is None)):
        raise ValueError("with importance sampling give weights for every side used (weights0 / weights1)")
    return sides, scale


def whitebox_epsilon_lower_bound(
    llr_out0,
    llr_out1=None,
    *,
    delta: float = 0.0,
    confidence: float = 0.95,
    epsilon_claimed: float | None = None,
    weights0=None,
    weights1=None,
    weight_bound: float | None = None,
    epsilon_floor: float = 0.0,
    pilot_share: float = PILOT_SHARE,
) -> WhiteBoxEstimate:
    """A ``confidence`` lower confidence bound on epsilon at ``delta`` from the privacy-loss variable.

    ``llr_out0``: ``L(o) = log p_d0(o)/p_d1(o)`` for outputs sampled on d0; ``llr_out1``:
    the same function for outputs sampled on d1 (``None`` to use d0 only). The bound is
    the largest eps at which the betting e-value against "(eps, delta)-DP on this pair"
    reaches ``1/(1 - confidence)`` (module docstring: Waudby-Smith & Ramdas 2023 betting
    test on the hockey-stick divergence, monotone in eps). Valid at level ``confidence``
    whenever the log-likelihood ratio is exact and the outputs of each side are i.i.d.

    ``pilot_share``: the first share of each side's outputs chooses a test that the other
    outputs run, averaged with the full mixture on all outputs (module docstring, "Which
    test"); 0 gives the full mixture alone. ``details["test"]`` says what was chosen.

    Importance sampling: ``weights0``/``weights1`` are ``p_d0/q`` (resp. ``p_d1/q``) for
    outputs drawn from a proposal q, and ``weight_bound`` B must bound them wherever the
    privacy loss exceeds ``epsilon_floor``; the search then runs over
    ``[epsilon_floor, inf)`` and the bound is 0 if ``epsilon_floor`` itself is not rejected.
    """
    delta = check_delta(delta)
    confidence = check_confidence(confidence)
    if epsilon_claimed is not None:
        epsilon_claimed = check_real(epsilon_claimed, "epsilon_claimed", low=0.0)
    floor = check_real(epsilon_floor, "epsilon_floor", low=0.0)
    pilot_share = check_real(pilot_share, "pilot_share", low=0.0, high=0.5)
    sides, scale = _build_sides(llr_out0, llr_out1, weights0, weights1, weight_bound, floor)
    n_out = sides[0].n if llr_out0 is not None else 0
    n_in = sides[-1].n if llr_out1 is not None else 0
    m = delta / scale
    log_target = math.log(1.0 / (1.0 - confidence))
    eps_hi = _largest_finite_loss(sides)
    names = [nm for nm, v in (("d0", llr_out0), ("d1", llr_out1)) if v is not None]
    logk, method = _log_capital_function(sides, m, weighted=weight_bound is not None)
    test: dict[str, Any] = {"pilot": None}
    split = _pilot_split((llr_out0, llr_out1), (weights0, weights1), pilot_share) if 0.0 < m < 1.0 else None
    if split is not None:
        logk, test = _averaged_with_pilot_test(logk, split, weight_bound, floor, m, log_target, names)
        method += "+pilot"
    unbounded = m < 1.0 and any(np.isposinf(s.loss).any() for s in sides) and logk(math.inf) >= log_target
    details = {"test": test}
    if unbounded:
        # Outputs impossible under the other dataset carry mass above delta: no finite epsilon holds.
        bound = math.inf
        details["unbounded"] = ("outputs with infinite privacy loss (impossible under the other dataset) "
                                "have probability above delta: no finite epsilon holds")
    elif m <= 0.0:
        # Pure DP: any output with L > eps refutes (eps, 0) with certainty.
        bound = max(0.0, float(eps_hi) - _TOL) if eps_hi > _TOL else 0.0
    elif m >= 1.0:
        bound = 0.0
    else:
        bound = _largest_rejected_epsilon(logk, floor, float(eps_hi), log_target)
    # Below epsilon_floor the importance weights are not bounded: no valid e-value there (p = 1).
    p = float("nan") if epsilon_claimed is None else 1.0
    if epsilon_claimed is not None and epsilon_claimed >= floor:
        lk = logk(epsilon_claimed)
        p = 1.0 if lk <= 0 else float(math.exp(-lk))
    return WhiteBoxEstimate(
        epsilon_lower_bound=float(bound),
        confidence=confidence,
        delta=delta,
        n_in=n_in,
        n_out=n_out,
        method=method,
        p_value=p,
        epsilon_claimed=epsilon_claimed,
        log_capital_at_bound=float(logk(bound)) if bound > 0 else 0.0,
        details=details,
    )


def _averaged_with_pilot_test(full, split, weight_bound, floor: float, m: float, log_target: float, names):
    """``(log K, details)`` of 1/2 K_full(all outputs) + 1/2 K(the pilot's test on the other outputs).

    The second branch is the full mixture on the other outputs when the pilot predicts no rejection.
    """
    (pilot_args, eval_args), sizes = split
    pilot, _ = _build_sides(*pilot_args, weight_bound, floor)
    evaluation, _ = _build_sides(*eval_args, weight_bound, floor)
    choice = _pilot_test(pilot, evaluation, m, floor, log_target + math.log(2.0))
    if choice is None:
        chosen, _ = _log_capital_function(evaluation, m, weighted=weight_bound is not None)
        test = {"pilot": sizes, "chosen": "nothing predicted: the full mixture on the other outputs"}
    else:
        c, bets, eps_pred = choice

        def chosen(e):
            return float(_lse(_combination_log_capitals(evaluation, e, m, bets)[c]) - math.log(bets.size))

        labels = names + (["both"] if len(names) == 2 else [])
        test = {"pilot": sizes, "chosen": labels[c], "bets": [float(b) for b in bets],
                "pilot_predicted_epsilon": eps_pred}

    def logk(e):
        return float(_lse([full(e), chosen(e)]) - math.log(2.0))

    return logk, test


def _largest_finite_loss(sides: list[_Side]) -> float:
    """The largest finite privacy loss of the sides (capped at the largest epsilon explored), 0 if none."""
    finite = [s.loss[np.isfinite(s.loss)] for s in sides]
    return min(max((float(f.max()) for f in finite if f.size), default=0.0), _EPS_CAP)


def _pilot_split(llrs, weights, share: float):
    """``((pilot arguments, evaluation arguments), description)`` of the first ``share`` of each side; ``None``
    when ``share`` is 0 or leaves a used side without pilot or evaluation outputs."""
    if share <= 0.0:
        return None
    cuts = [None if v is None else int(math.floor(share * len(v))) for v in llrs]
    if any(c is not None and (c < 1 or c >= len(v)) for c, v in zip(cuts, llrs)):
        return None

    def part(v, c, first):
        if v is None:
            return None
        v = np.asarray(v, dtype=float)
        return v[:c] if first else v[c:]

    pilot = tuple(part(v, c, True) for v, c in zip(llrs + weights, cuts + cuts))
    rest = tuple(part(v, c, False) for v, c in zip(llrs + weights, cuts + cuts))
    sizes = ", ".join(f"pilot {c} of {len(v)} on {nm}" for nm, v, c in zip(("d0", "d1"), llrs, cuts) if v is not None)
    return (pilot, rest), sizes


def _log_capital_function(sides: list[_Side], m: float, *, weighted: bool):
    """``(log K(eps), method)``: the log capital of the test against "(eps, m)" as a function of eps."""
    if m <= 0.0:
        def logk(e):
            return math.inf if any(s.summands(e).size for s in sides) else 0.0
        return logk, "white-box/pure-dp-max-loss"
    if m >= 1.0:
        return (lambda e: 0.0), "white-box/betting"
    bets = _bet_grid(m)
    return (lambda e: _combined_log_capital(sides, e, m, bets)), "white-box/betting" + ("-importance" if weighted else "")


def _largest_rejected_epsilon(logk, floor: float, eps_hi: float, log_target: float) -> float:
    """The largest eps in ``[floor, eps_hi]`` with ``logk(eps) >= log_target`` (``logk`` is non-increasing); 0 if none."""
    if not eps_hi > floor or logk(floor) < log_target:
        return 0.0
    if logk(eps_hi) >= log_target:
        return eps_hi
    lo, hi = floor, eps_hi  # invariant: lo rejected, hi not rejected
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if logk(mid) >= log_target:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-6:
            break
    return lo


def hockey_stick_lower_bound(
    llr,
    epsilons,
    *,
    confidence: float = 0.95,
    weights=None,
    weight_bound: float | None = None,
    m_floor: float = 1e-12,
) -> np.ndarray:
    """Lower confidence curve on delta(eps) = E[(1 - e^{eps - L})_+] at each of ``epsilons``.

    ``llr`` is the privacy loss on outputs from the dataset on the left of the DP
    inequality (pass ``-llr_out1`` for the reverse direction). Uses a fixed bet grid on
    [1/4, 1/(2 m_floor)]; a bet ``lambda`` takes part in the test of ``m`` only while
    ``lambda m <= 1/2`` (dropped bets count as capital 0, which keeps an e-value), so the
    capital is non-increasing in both m and eps and the curve is non-increasing in eps.
    Each value is a valid ``confidence`` lower bound for its eps.
    """
    confidence = check_confidence(confidence)
    loss = _check_llr(llr, "llr")
    scale = 1.0 if weight_bound is None else check_real(weight_bound, "weight_bound", low=0.0, low_inclusive=False)
    side = _Side(loss, _check_weights(weights, loss, weight_bound, "weights"))
    eps = np.asarray(epsilons, dtype=float)
    if eps.ndim != 1 or not np.all(np.isfinite(eps)) or np.any(eps < 0):
        raise ValueError("epsilons must be a 1-d array of finite values >= 0")
    bets = _bet_grid(m_floor, size=60)
    log_target = math.log(1.0 / (1.0 - confidence))

    def logk(e, m):
        use = bets * m <= 0.5
        if not np.any(use):
            return -math.inf
        lk = _side_log_capital(side, e, m, bets[use])
        return float(_lse(lk) - math.log(bets.size))

    out = np.zeros(eps.size)
    for j, e in enumerate(eps):
        if side.summands(e).size == 0 or logk(e, m_floor) < log_target:
            out[j] = 0.0
            continue
        lo, hi = math.log(m_floor), 0.0  # bisection on log m: lo rejected, hi (m = 1) never rejected
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if logk(e, math.exp(mid)) >= log_target:
                lo = mid
            else:
                hi = mid
        out[j] = math.exp(lo)
    # Enforce monotonicity exactly (the capital already is; this removes bisection round-off).
    order = np.argsort(eps)
    out[order] = np.minimum.accumulate(out[order])
    return out * scale


def hockey_stick_divergence(llr, epsilons, weights=None) -> np.ndarray:
    """Plug-in estimate of delta(eps) = E[w (1 - e^{eps - L})_+] (no confidence; for reports and tests)."""
    loss = _check_llr(llr, "llr")
    eps = np.atleast_1d(np.asarray(epsilons, dtype=float))
    w = np.ones_like(loss) if weights is None else np.asarray(weights, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        x = np.clip(-np.expm1(eps[:, None] - loss[None, :]), 0.0, 1.0)
    return (x * w[None, :]).mean(axis=1)


@dataclass(frozen=True)
class WhiteBox(Estimator):
    """White-box: the hockey-stick divergence of the pair bounded by betting on the privacy loss.

    ``log_likelihood_ratio(outputs) = log p_d0(o) / p_d1(o)``, the exact log density ratio of each
    output, gives the privacy-loss variable; :func:`whitebox_epsilon_lower_bound` bounds epsilon by a
    betting test of the hockey-stick divergence (Waudby-Smith & Ramdas, JRSS-B 2023; module
    docstring), monotone in epsilon so that no union bound over epsilon is needed. With an exact
    density it dominates every threshold test.

    Validity: the density must be exact (it is the target's claim about its output law) and the
    outputs of each side i.i.d.; a wrong density makes the bound unsound, where the black-box
    estimator never depends on it.
    """

    name: ClassVar[str] = "white-box"
    log_likelihood_ratio: Callable[[np.ndarray], np.ndarray]

    def __post_init__(self) -> None:
        if not callable(self.log_likelihood_ratio):
            raise TypeError("WhiteBox(log_likelihood_ratio) must be callable as f(outputs) -> log p_d0(o)/p_d1(o), "
                            f"got {type(self.log_likelihood_ratio).__name__}")

    def estimate(self, out0, out1, *, epsilon, delta, confidence, seed) -> AuditResult:
        l0, l1 = (density_values(self.log_likelihood_ratio, o, f"log_likelihood_ratio({nm})", 1)
                  for o, nm in ((out0, "out0"), (out1, "out1")))
        wb = whitebox_epsilon_lower_bound(l0, l1, delta=delta, confidence=confidence, epsilon_claimed=epsilon)
        return result_from_privacy_losses(wb, l0, l1, estimator=self.name, attack="likelihood-ratio",
                                          epsilon=epsilon, delta=delta, confidence=confidence, seed=seed,
                                          details={"log_capital_at_bound": wb.log_capital_at_bound})
