"""Descriptive metrics of a membership attack: the pooled ROC, TPR at low FPR, AUC and advantage, with intervals.

TPR at a target FPR with two-sided Clopper--Pearson intervals on the counts at the chosen threshold
(treating (model, record) pairs as independent, the convention of the membership-inference literature;
the threshold is chosen on the same scores), AUC with the Hanley--McNeil (1982) interval, the advantage
``max_t TPR - FPR`` with the interval from the Clopper--Pearson bounds of its two rates.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np
from scipy import special, stats

from privbound.audit.result import json_safe
from privbound.audit.statistics import clopper_pearson_lower, clopper_pearson_upper

__all__ = ["FprPoint", "AttackMetrics", "attack_metrics", "roc_auc"]


@dataclass(frozen=True)
class FprPoint:
    """TPR of an attack at a target FPR: the threshold with the largest TPR among those of FPR <= ``target_fpr``.

    ``tpr_ci`` / ``fpr_ci`` are two-sided Clopper--Pearson intervals on ``k_in / n_in`` and ``k_out / n_out``.
    """

    target_fpr: float
    tpr: float
    fpr: float
    tpr_ci: tuple[float, float]
    fpr_ci: tuple[float, float]
    threshold: float
    k_in: int
    n_in: int
    k_out: int
    n_out: int


@dataclass(frozen=True, eq=False)
class AttackMetrics:
    """One attack's pooled results over the target models.

    Attributes
    ----------
    attack : str
        Attack name (one of :data:`ATTACKS`).
    at_fpr : tuple of FprPoint
        TPR at each requested FPR.
    auc, auc_ci : float, (float, float)
        Area under the ROC curve and its Hanley--McNeil interval.
    advantage, advantage_ci : float, (float, float)
        ``max_t TPR - FPR`` and the interval from the Clopper--Pearson bounds of its two rates.
    roc_fpr, roc_tpr : numpy.ndarray
        The ROC, thinned to points log-spaced in FPR (for log--log plots).
    """

    attack: str
    at_fpr: tuple[FprPoint, ...]
    auc: float
    auc_ci: tuple[float, float]
    advantage: float
    advantage_ci: tuple[float, float]
    roc_fpr: np.ndarray
    roc_tpr: np.ndarray

    def tpr_at(self, fpr: float) -> float:
        for p in self.at_fpr:
            if math.isclose(p.target_fpr, fpr):
                return p.tpr
        raise KeyError(f"no TPR at FPR {fpr:g}; have {[p.target_fpr for p in self.at_fpr]}")

    def to_dict(self) -> dict[str, Any]:
        return json_safe(asdict(self))


def _roc(s_in: np.ndarray, s_out: np.ndarray):
    """Full ROC: for each distinct threshold t (descending), counts of scores >= t."""
    t = np.unique(np.concatenate([s_in, s_out]))[::-1]
    a, b = np.sort(s_in), np.sort(s_out)
    k_in = a.size - np.searchsorted(a, t, side="left")
    k_out = b.size - np.searchsorted(b, t, side="left")
    return t, k_in, k_out


def roc_auc(s_in: np.ndarray, s_out: np.ndarray) -> float:
    """Area under the ROC of member scores ``s_in`` against non-member scores ``s_out`` (ties count one half)."""
    ranks = stats.rankdata(np.concatenate([s_in, s_out]))
    return float((ranks[: s_in.size].sum() - s_in.size * (s_in.size + 1) / 2) / (s_in.size * s_out.size))


def _hanley_mcneil(auc: float, n_in: int, n_out: int, z: float) -> tuple[float, float]:
    q1, q2 = auc / (2 - auc), 2 * auc**2 / (1 + auc)
    var = (auc * (1 - auc) + (n_in - 1) * (q1 - auc**2) + (n_out - 1) * (q2 - auc**2)) / (n_in * n_out)
    half = z * math.sqrt(max(var, 0.0))
    return max(0.0, auc - half), min(1.0, auc + half)


def _cp(k: int, n: int, alpha: float) -> tuple[float, float]:
    return float(clopper_pearson_lower(k, n, alpha / 2)), float(clopper_pearson_upper(k, n, alpha / 2))


def _thin_roc(fpr: np.ndarray, tpr: np.ndarray, points: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """The ROC at ~``points`` FPR values log-spaced from 1/n_out to 1 (the upper envelope at each)."""
    fpr = np.concatenate([[0.0], fpr])
    tpr = np.concatenate([[0.0], tpr])
    pos = fpr[fpr > 0]
    lo = pos.min() if pos.size else 1.0
    grid = np.unique(np.concatenate([[0.0], np.geomspace(lo, 1.0, points)]))
    j = np.searchsorted(fpr, grid, side="right") - 1
    return grid, tpr[np.clip(j, 0, len(tpr) - 1)]


def attack_metrics(attack: str, scores: np.ndarray, membership: np.ndarray, *, fprs: Sequence[float] = (1e-3, 1e-2),
                   confidence: float = 0.95) -> AttackMetrics:
    """ROC, TPR at ``fprs``, AUC and advantage of pooled ``scores`` (higher = member) with their intervals."""
    s = np.asarray(scores, float).ravel()
    b = np.asarray(membership, bool).ravel()
    s_in, s_out = s[b], s[~b]
    if s_in.size == 0 or s_out.size == 0:
        raise ValueError("membership must contain both members and non-members")
    alpha = 1 - confidence
    t, k_in, k_out = _roc(s_in, s_out)
    tpr, fpr = k_in / s_in.size, k_out / s_out.size
    points = []
    for target in fprs:
        ok = np.flatnonzero(fpr <= target)
        j = int(ok[-1]) if ok.size else None
        ki, ko, thr = (int(k_in[j]), int(k_out[j]), float(t[j])) if j is not None else (0, 0, math.inf)
        points.append(FprPoint(float(target), ki / s_in.size, ko / s_out.size, _cp(ki, s_in.size, alpha),
                               _cp(ko, s_out.size, alpha), thr, ki, int(s_in.size), ko, int(s_out.size)))
    adv = tpr - fpr
    j = int(np.argmax(adv))
    ti, to = _cp(int(k_in[j]), s_in.size, alpha / 2), _cp(int(k_out[j]), s_out.size, alpha / 2)
    auc = roc_auc(s_in, s_out)
    roc_f, roc_t = _thin_roc(fpr, tpr)
    return AttackMetrics(
        attack=attack, at_fpr=tuple(points), auc=auc,
        auc_ci=_hanley_mcneil(auc, s_in.size, s_out.size, float(special.ndtri(1 - alpha / 2))),
        advantage=float(max(adv[j], 0.0)), advantage_ci=(max(0.0, ti[0] - to[1]), max(0.0, ti[1] - to[0])),
        roc_fpr=roc_f, roc_tpr=roc_t,
    )

