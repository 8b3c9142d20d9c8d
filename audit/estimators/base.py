"""What every estimator shares: the :class:`Estimator` interface and the verdict built from an estimate."""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import numpy as np

from privbound.audit.result import AuditResult
from privbound.audit.tradeoff import MIN_CURVE_OUTPUTS, TradeOffCurve, curve_of_event_family
from privbound.audit.statistics import (
    Estimate,
    auroc,
    clopper_pearson_lower,
    clopper_pearson_upper,
    p_value,
    top_first,
)

__all__ = ["Estimator", "result_from_estimate", "result_from_privacy_losses", "event_rates", "roc_of_family",
           "density_values"]


class Estimator(abc.ABC):
    """Turns outputs sampled on d0 and d1 into a lower confidence bound on epsilon at a claimed delta.

    Each estimator has one ``name`` (the same in ``estimator=``, ``AuditResult.estimator``, results.json
    and the report) and one documented validity argument (its class docstring): the bound it returns
    holds with probability at least ``confidence`` under the assumptions that argument states.
    """

    name: ClassVar[str]

    @abc.abstractmethod
    def estimate(self, out0: np.ndarray, out1: np.ndarray, *, epsilon: float, delta: float, confidence: float,
                 seed: int) -> AuditResult:
        """The verdict on the claim (``epsilon``, ``delta``) from outputs on d0 (``out0``) and d1 (``out1``).

        The outputs are i.i.d. per side, in trial order; ``seed`` seeds any randomisation the
        estimator needs (the coins of a randomised event).
        """

    def for_mechanism(self, mechanism: Any, d0: Any, d1: Any) -> "Estimator":
        """This estimator completed with what ``mechanism`` tells about itself (default: unchanged)."""
        return self


def event_rates(est: Estimate, confidence: float) -> tuple[float, float, float, float]:
    """TPR, FPR of the chosen event and their one-sided Clopper--Pearson bounds (NaN, NaN, 0, 1 without one).

    The test says "top dataset" when the event occurs, so TPR = P_top(E) and FPR = P_bottom(E)
    (top = the dataset on the left of the DP inequality).
    """
    if est.event is None:
        return float("nan"), float("nan"), 0.0, 1.0
    alpha = (1 - confidence) / est.n_candidates
    k_top, n_top, k_bot, n_bot = top_first(est.event.top, est.k_in, est.n_in, est.k_out, est.n_out)
    return (k_top / n_top, k_bot / n_bot, float(clopper_pearson_lower(k_top, n_top, alpha / 2)),
            float(clopper_pearson_upper(k_bot, n_bot, alpha / 2)))


def result_from_estimate(est: Estimate, *, estimator: str, epsilon: float, confidence: float, trials: int,
                         attack: str, seed: int, details: dict, auc: float = float("nan"),
                         float_audit: bool = False, tradeoff: TradeOffCurve | None = None) -> AuditResult:
    """The verdict of an event-based estimate (its event, counts and Clopper--Pearson rates), with the trade-off
    curve of its event family when one was traced."""
    tpr, fpr, tpr_lo, fpr_hi = event_rates(est, confidence)
    return AuditResult(
        epsilon_claimed=epsilon,
        delta=est.delta,
        epsilon_lower_bound=est.epsilon_lower_bound,
        confidence=confidence,
        trials=trials,
        method=est.method,
        estimator=estimator,
        attack=attack,
        threshold=None if est.event is None else est.event.threshold,
        event=None if est.event is None else est.event.describe(),
        tpr=tpr,
        fpr=fpr,
        tpr_lower=tpr_lo,
        fpr_upper=fpr_hi,
        auroc=auc,
        p_value=p_value(est, epsilon),
        violation=bool(est.epsilon_lower_bound > epsilon),
        seed=seed,
        wall_seconds=0.0,
        n_evaluation=est.n_in,
        details=details if tradeoff is not None else {**details, "no_tradeoff_curve": NO_CURVE_REASON},
        float_audit=float_audit,
        tradeoff=None if tradeoff is None else tradeoff.to_dict(),
        mu_lower_bound=None if tradeoff is None else tradeoff.mu_lower_bound,
    )


def roc_of_family(s_in: np.ndarray, s_out: np.ndarray, event, points: int = 101) -> dict[str, list[float]]:
    """ROC of the chosen event family on the evaluation scores: (P_bottom(E_t), P_top(E_t)) over t.

    For the family of the chosen event ({s >= t} or {s < t}, d1 or d0 on top) the
    curve is traced over ``points`` quantile thresholds, so that the chosen test's
    (FPR, TPR) lies on it and the (epsilon, delta) region can be drawn beside it.
    """
    side, top = ("ge", 1) if event is None else (event.side, event.top)
    pooled = np.sort(np.concatenate([s_in, s_out]))
    t = np.unique(pooled[np.linspace(0, pooled.size - 1, points).astype(int)])
    t = np.concatenate([[-np.inf], t, [np.inf]])
    ge_in = s_in.size - np.searchsorted(np.sort(s_in), t, side="left")
    ge_out = s_out.size - np.searchsorted(np.sort(s_out), t, side="left")
    p_in, p_out = ge_in / s_in.size, ge_out / s_out.size
    if side == "lt":
        p_in, p_out = 1 - p_in, 1 - p_out
    tpr, fpr = (p_in, p_out) if top == 1 else (p_out, p_in)
    order = np.lexsort((tpr, fpr))
    return {"fpr": [float(v) for v in fpr[order]], "tpr": [float(v) for v in tpr[order]]}


def family_auroc(s_in: np.ndarray, s_out: np.ndarray, event) -> float:
    """The area under :func:`roc_of_family`'s curve: the AUROC of the scores in the direction of the chosen event's
    family ({s >= t} or {s < t}, d1 or d0 on top), so that it does not depend on which dataset is called d0."""
    area = auroc(s_in, s_out)
    side, top = ("ge", 1) if event is None else (event.side, event.top)
    return area if (side == "ge") == (top == 1) else 1.0 - area


def density_values(fn, outputs, name: str, ndim: int) -> np.ndarray:
    """``fn(outputs)`` checked: one value per output (``ndim`` 1) or one row of per-step values (``ndim`` 2)."""
    k = len(outputs)
    arr = np.asarray(fn(outputs), dtype=float)
    if arr.ndim != ndim or arr.shape[0] != k or (ndim == 2 and arr.shape[1] == 0):
        want = f"({k},)" if ndim == 1 else f"({k}, T) with T >= 1 steps"
        raise ValueError(f"{name} must return {'one value' if ndim == 1 else 'one row of per-step values'} per output, "
                         f"shape {want}; got {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError(f"{name} returned NaN at output {int(np.argwhere(np.isnan(arr))[0][0])}")
    return arr


def result_from_privacy_losses(bound: Any, l0: np.ndarray, l1: np.ndarray, *, estimator: str, attack: str,
                               epsilon: float, delta: float, confidence: float, seed: int,
                               details: dict) -> AuditResult:
    """The verdict of a white-box bound (``bound``: its ``epsilon_lower_bound``, ``p_value``, ``method``,
    ``details``) from the outputs' privacy losses ``l0`` (on d0) and ``l1`` (on d1), which trace the ROC."""
    n = min(len(l0), len(l1))
    s0, s1 = (np.clip(np.nan_to_num(-v, posinf=1e300, neginf=-1e300), -1e300, 1e300) for v in (l0, l1))
    curve = privacy_loss_curve(s1, s0, confidence)
    p = bound.p_value if np.isfinite(bound.p_value) else (0.0 if bound.epsilon_lower_bound > epsilon else 1.0)
    return AuditResult(
        epsilon_claimed=epsilon, delta=delta, epsilon_lower_bound=float(bound.epsilon_lower_bound),
        confidence=confidence, trials=n, method=bound.method, estimator=estimator, attack=attack,
        threshold=None, event=None, tpr=float("nan"), fpr=float("nan"), tpr_lower=0.0, fpr_upper=1.0,
        auroc=auroc(s1, s0), p_value=float(min(1.0, max(p, 0.0))),
        violation=bool(bound.epsilon_lower_bound > epsilon), seed=seed, wall_seconds=0.0, n_evaluation=n,
        details={"roc": roc_of_family(s1, s0, None), **details, **bound.details,
                 **({} if curve is not None else {"no_tradeoff_curve": NO_CURVE_REASON})},
        tradeoff=None if curve is None else curve.to_dict(),
        mu_lower_bound=None if curve is None else curve.mu_lower_bound,
    )


# Share of each side's outputs (the first, in trial order) that places the thresholds of a curve traced on all
# of an audit's trials (a privacy-loss curve, a black-box audit without a selection split).
CURVE_PILOT_SHARE = 0.1
# Why a result that traces a test family carries no trade-off curve (:func:`pilot_curve` returned ``None``).
NO_CURVE_REASON = (f"fewer than {MIN_CURVE_OUTPUTS} outputs per dataset past the share that places the curve's "
                   f"thresholds (the selection part, or the first {CURVE_PILOT_SHARE:.0%} without one)")


def pilot_side(s1: np.ndarray, s0: np.ndarray) -> str:
    """``"ge"`` ({s >= t} says d1) when d1's scores rank higher than d0's on the first :data:`CURVE_PILOT_SHARE`
    of each side (or there is no pilot), else ``"lt"``."""
    k1, k0 = int(CURVE_PILOT_SHARE * len(s1)), int(CURVE_PILOT_SHARE * len(s0))
    return "ge" if min(k1, k0) < 1 or auroc(s1[:k1], s0[:k0]) >= 0.5 else "lt"


def pilot_curve(s1: np.ndarray, s0: np.ndarray, confidence: float, side: str | None = None,
                top: int = 1) -> TradeOffCurve | None:
    """The trade-off curve of the threshold tests on scores ``s1`` (d1) and ``s0`` (d0): thresholds and, unless
    ``side`` is given, the direction ({s >= t} when d1's pilot scores rank higher, else {s < t}) from the first
    :data:`CURVE_PILOT_SHARE` of each side's scores, errors on the others; ``top`` the dataset said on the
    event (the alternative). ``None`` with fewer than :data:`~privbound.audit.tradeoff.MIN_CURVE_OUTPUTS` outputs
    per side to evaluate.

    ``side`` and ``top`` may be those of an event chosen on all the scores: the band's two-sided intervals on
    both rates at each threshold hold together for the four orientations of the same tests at once
    (``{s < t}`` is the complement of ``{s >= t}``, and swapping the datasets swaps the two rates), so only the
    thresholds must come from the pilot share."""
    k1, k0 = int(CURVE_PILOT_SHARE * len(s1)), int(CURVE_PILOT_SHARE * len(s0))
    if min(k1, k0) < 1:
        return None
    side = pilot_side(s1, s0) if side is None else side
    return curve_of_event_family(s1[:k1], s0[:k0], s1[k1:], s0[k0:], side=side, top=top, confidence=confidence)


def privacy_loss_curve(s1: np.ndarray, s0: np.ndarray, confidence: float) -> TradeOffCurve | None:
    """The trade-off curve of the likelihood-ratio tests ``{-L >= t}`` (say "d1" when the privacy loss is low),
    traced by :func:`pilot_curve`."""
    return pilot_curve(s1, s0, confidence, side="ge")
