"""The verdict of a membership audit, :class:`MembershipResult`: the game, each attack's metrics, the epsilon
lower bound and the per-record risk, with a readable ``summary()``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privbound.audit.result import json_safe
from privbound.audit.membership.metrics import AttackMetrics
from privbound.learners.neighbouring import NeighbouringRelation

__all__ = ["MembershipResult"]


@dataclass(frozen=True, eq=False, repr=False)
class MembershipResult:
    """Verdict of one membership audit (:func:`membership_audit`).

    Attributes
    ----------
    name : str or None
        The audited target.
    estimator : str
        The model, described.
    relation : NeighbouringRelation
        The neighbouring relation the game corresponds to (add/remove or replace one record).
    game : str
        The game, described.
    n_pool, n_population : int
        Candidate members and population records (the latter never trained on).
    n_reference, n_targets : int
        Reference models (membership known to the attacker) and target models (membership secret).
    attacks : tuple of AttackMetrics
        Each attack's ROC, TPR at the requested FPRs, AUC and advantage, with intervals.
    epsilon_claimed : float or None
        The model's claimed epsilon (None for a non-private model).
    delta : float
        The delta of the epsilon lower bound (the model's claimed delta, 0 for a non-private model).
    epsilon_lower_bound : float
        Lower bound on epsilon implied by the membership counts, valid with probability >= ``confidence``.
    epsilon_attack : str or None
        The attack whose guesses gave that bound.
    confidence : float
        Confidence of the bound.
    violation : bool
        ``epsilon_lower_bound > epsilon_claimed``.
    risk_fpr : float
        FPR at which the per-record risk is stated.
    record_risk : numpy.ndarray
        Per pool record, the TPR at ``risk_fpr`` of its calibrated Gaussian LiRA test (:func:`record_risk`).
    top_records : tuple of dict
        The records ranked by risk (index into the pool, label, risk, LiRA's fitted means).
    scores : dict
        Per attack, the membership scores of the target models, (n_targets, n_pool).
    membership : numpy.ndarray
        The secret membership bits of the target models, (n_targets, n_pool).
    seed : int
        Seed of the run.
    wall_seconds, train_seconds : float
        Wall time of the whole audit and of the model training.
    details : dict
        Parameters of the attacks (``rmia_a``, ``rmia_gamma``, ``fixed_variance``) and the per-attack guess rules.
    """

    name: str | None
    estimator: str
    relation: NeighbouringRelation
    game: str
    n_pool: int
    n_population: int
    n_reference: int
    n_targets: int
    attacks: tuple[AttackMetrics, ...]
    epsilon_claimed: float | None
    delta: float
    epsilon_lower_bound: float
    epsilon_attack: str | None
    confidence: float
    violation: bool
    risk_fpr: float
    record_risk: np.ndarray
    top_records: tuple[dict, ...]
    scores: dict[str, np.ndarray]
    membership: np.ndarray
    seed: int
    wall_seconds: float
    train_seconds: float
    details: dict[str, Any] = field(default_factory=dict)

    def attack(self, name: str) -> AttackMetrics:
        for a in self.attacks:
            if a.attack == name:
                return a
        raise KeyError(f"no attack {name!r}; ran {[a.attack for a in self.attacks]}")

    def to_dict(self, *, include_scores: bool = False) -> dict[str, Any]:
        """A JSON-safe dict; the per-target scores and membership bits only with ``include_scores``."""
        out = {k: getattr(self, k) for k in ("name", "estimator", "game", "n_pool", "n_population", "n_reference",
                                             "n_targets", "epsilon_claimed", "delta", "epsilon_lower_bound",
                                             "epsilon_attack", "confidence", "violation", "risk_fpr", "seed",
                                             "wall_seconds", "train_seconds", "details")}
        out["relation"] = self.relation.value
        out["attacks"] = [a.to_dict() for a in self.attacks]
        out["top_records"] = list(self.top_records)
        out["record_risk"] = self.record_risk
        if include_scores:
            out["scores"] = self.scores
            out["membership"] = self.membership
        return json_safe(out)

    def __repr__(self) -> str:
        name = f"{self.name!r}, " if self.name else ""
        claim = "non-private" if self.epsilon_claimed is None else f"claimed=({self.epsilon_claimed:g}, {self.delta:g})"
        best = max(self.attacks, key=lambda a: a.at_fpr[0].tpr)
        return (f"MembershipResult({name}{claim}, epsilon_lower_bound={self.epsilon_lower_bound:.4g}, "
                f"violation={self.violation}, best={best.attack!r} TPR@{best.at_fpr[0].target_fpr:g}="
                f"{best.at_fpr[0].tpr:.4g}, references={self.n_reference})")

    def summary(self, top: int = 5) -> str:
        """A readable report: the game, one row per attack, the epsilon bound, the riskiest records."""
        name = f"{self.name}: " if self.name else ""
        verdict = "VIOLATION" if self.violation else ("consistent with the claim" if self.epsilon_claimed is not None
                                                      else "non-private model (no claim)")
        fprs = [p.target_fpr for p in self.attacks[0].at_fpr] if self.attacks else []
        head = "  attack        " + "".join(f"  TPR@{f:<7g} [CI]        " for f in fprs) + "  AUC [CI]             advantage"
        lines = [
            f"{name}membership inference -- {verdict}",
            f"  model              : {self.estimator}",
            f"  game               : {self.game}",
            f"  records            : {self.n_pool} candidates, {self.n_population} population; "
            f"{self.n_reference} reference and {self.n_targets} target models",
            head,
        ]
        for a in self.attacks:
            cells = "".join(f"  {p.tpr:<8.4f}[{p.tpr_ci[0]:.4f}, {p.tpr_ci[1]:.4f}]" for p in a.at_fpr)
            lines.append(f"  {a.attack:14s}{cells}  {a.auc:.4f} [{a.auc_ci[0]:.4f}, {a.auc_ci[1]:.4f}]"
                         f"  {a.advantage:.4f} [{a.advantage_ci[0]:.4f}, {a.advantage_ci[1]:.4f}]")
        claim = "" if self.epsilon_claimed is None else f" (claimed epsilon {self.epsilon_claimed:g})"
        lines.append(f"  epsilon lower bound: {self.epsilon_lower_bound:.4f} at delta {self.delta:g}, "
                     f"{self.confidence:.1%} confidence{claim}; attack {self.epsilon_attack or '-'}")
        lines.append(f"  riskiest records (TPR at FPR {self.risk_fpr:g} of the per-record LiRA test):")
        for r in self.top_records[:top]:
            lines.append(f"    record {r['index']:5d}  label {r['label']!s:>4}  risk {r['risk']:.4f}"
                         f"  mu_in {r['mu_in']:.3g}  mu_out {r['mu_out']:.3g}")
        lines.append(f"  wall time          : {self.wall_seconds:.2f} s ({self.train_seconds:.2f} s training), seed {self.seed}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

