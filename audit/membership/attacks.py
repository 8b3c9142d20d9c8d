"""Membership attacks: LiRA, RMIA and the loss threshold, and the per-record risk.

Each attack is a pure function of per-record model outputs (:class:`~privbound.audit.membership.game.ModelOutputs`),
so the reference models are trained once and every attack reuses them:

* LiRA -- Carlini, Chien, Nasr, Song, Terzis & Tramer, "Membership inference attacks from first principles"
  (IEEE S&P 2022, arXiv:2112.03570);
* RMIA -- Zarifzadeh, Liu, Mireshghallah & Shokri, "Low-cost high-power membership inference attacks"
  (ICML 2024, arXiv:2312.03262);
* loss threshold -- Yeom, Giacomelli, Fredrikson & Jha (IEEE CSF 2018).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy import special, stats

from privbound.audit.membership.game import ModelOutputs
from privbound.audit.membership.metrics import roc_auc
from privbound._validation import check_real

__all__ = ["ATTACKS", "lira_scores", "rmia_scores", "loss_scores", "choose_rmia_a", "attack_scores", "record_risk"]

ATTACKS = ("lira-online", "lira-offline", "rmia-online", "rmia-offline", "loss")
_MIN_STD = 1e-6


def _gaussian_fits(ref_phi: np.ndarray, ref_keep: np.ndarray, fixed_variance: bool):
    """Per-record (mu_in, s_in, mu_out, s_out) from reference models (IN: keep, OUT: not keep).

    A record without IN (OUT) references gets mu_out + shift (mu_in - shift), ``shift`` the average
    IN - OUT difference over the records that have both. ``fixed_variance`` (or fewer than two models
    on a side) uses the pooled within-record standard deviation of that side.
    """
    ref_keep = np.asarray(ref_keep, bool)
    out = ~ref_keep
    n_in, n_out = ref_keep.sum(0), out.sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mu_in = np.where(n_in > 0, (ref_phi * ref_keep).sum(0) / np.maximum(n_in, 1), np.nan)
        mu_out = np.where(n_out > 0, (ref_phi * out).sum(0) / np.maximum(n_out, 1), np.nan)
        ss_in = ((ref_phi - np.nan_to_num(mu_in)) ** 2 * ref_keep).sum(0)
        ss_out = ((ref_phi - np.nan_to_num(mu_out)) ** 2 * out).sum(0)
    both = (n_in > 0) & (n_out > 0)
    shift = float(np.mean(mu_in[both] - mu_out[both])) if both.any() else 0.0
    mu_in = np.where(n_in > 0, mu_in, mu_out + shift)
    mu_out = np.where(n_out > 0, mu_out, mu_in - shift)
    s_in = _std(ss_in, n_in, fixed_variance)
    s_out = _std(ss_out, n_out, fixed_variance)
    return mu_in, s_in, mu_out, s_out


def _std(ss: np.ndarray, n: np.ndarray, fixed: bool) -> np.ndarray:
    dof = np.maximum(n - 1, 0)
    pooled = math.sqrt(ss.sum() / dof.sum()) if dof.sum() > 0 else 1.0
    pooled = max(pooled, _MIN_STD)
    if fixed:
        return np.full(n.shape, pooled)
    with np.errstate(invalid="ignore", divide="ignore"):
        per = np.sqrt(ss / dof)
    return np.where(dof >= 1, np.maximum(np.nan_to_num(per, nan=pooled), _MIN_STD), pooled)


def lira_scores(target_phi: np.ndarray, ref_phi: np.ndarray, ref_keep: np.ndarray, *, online: bool = True,
                fixed_variance: bool | None = None) -> np.ndarray:
    """LiRA scores (Carlini et al., S&P 2022, arXiv:2112.03570) of target models' ``phi`` (targets, pool).

    Online: ``log N(phi; mu_in, s_in^2) - log N(phi; mu_out, s_out^2)`` (their Algorithm 1).
    Offline: ``log Pr[Z < phi]``, ``Z ~ N(mu_out, s_out^2)``, from OUT references only (Sec. VI-C).
    ``fixed_variance`` (default: fewer than 64 reference models) uses one global variance per side.
    """
    ref_phi = np.asarray(ref_phi, float)
    if fixed_variance is None:
        fixed_variance = ref_phi.shape[0] < 64
    mu_in, s_in, mu_out, s_out = _gaussian_fits(ref_phi, ref_keep, fixed_variance)
    t = np.asarray(target_phi, float)
    if online:
        return stats.norm.logpdf(t, mu_in, s_in) - stats.norm.logpdf(t, mu_out, s_out)
    return special.log_ndtr((t - mu_out) / s_out)


def loss_scores(target_log_p: np.ndarray) -> np.ndarray:
    """The loss-threshold attack (Yeom et al., CSF 2018): minus the cross-entropy loss, ``log p_y``."""
    return np.asarray(target_log_p, float)


def _mean_p(ref_p: np.ndarray, keep: np.ndarray | None, online: bool, a: float) -> np.ndarray:
    """RMIA's Pr(x): balanced IN/OUT average (online) or the offline linear approximation from OUT models."""
    if keep is None:  # population records: every reference model is OUT
        out_mean = ref_p.mean(0)
        in_mean = None
    else:
        out = ~keep
        with np.errstate(invalid="ignore", divide="ignore"):
            out_mean = (ref_p * out).sum(0) / out.sum(0)
            in_mean = (ref_p * keep).sum(0) / keep.sum(0)
        fallback = np.nanmean(ref_p, axis=0)
        out_mean = np.where(np.isfinite(out_mean), out_mean, fallback)
        in_mean = np.where(np.isfinite(in_mean), in_mean, fallback)
    if not online:
        return 0.5 * ((1 + a) * out_mean + (1 - a))
    if in_mean is None:
        return out_mean
    return 0.5 * (in_mean + out_mean)


def rmia_scores(target_log_p: np.ndarray, ref_log_p: np.ndarray, ref_keep: np.ndarray,
                target_log_p_pop: np.ndarray, ref_log_p_pop: np.ndarray, *, online: bool = False,
                a: float = 0.3, gamma: float = 1.0) -> np.ndarray:
    """RMIA scores (Zarifzadeh et al., ICML 2024, arXiv:2312.03262), shape (targets, pool).

    ``Score(x) = Pr_z[(Pr(x|theta)/Pr(x)) / (Pr(z|theta)/Pr(z)) >= gamma]`` over the population
    records z, for each target model theta; ties broken by ``Pr(x|theta)/Pr(x)`` (a value in (0, 1)
    added to the count). ``Pr(x)`` from the reference models: balanced IN/OUT mean (online) or
    ``((1 + a) Pr_OUT(x) + (1 - a)) / 2`` (offline, their Sec. 4 / App. B.2.2).
    """
    gamma = check_real(gamma, "gamma", low=0.0, low_inclusive=False)
    ref_keep = np.asarray(ref_keep, bool)
    px = _mean_p(np.exp(ref_log_p), ref_keep, online, a)
    pz = _mean_p(np.exp(ref_log_p_pop), None, online, a)
    log_rx = np.asarray(target_log_p, float) - np.log(np.maximum(px, 1e-300))      # (T, n)
    log_rz = np.asarray(target_log_p_pop, float) - np.log(np.maximum(pz, 1e-300))  # (T, nz)
    rz = np.sort(log_rz, axis=1)
    counts = np.stack([np.searchsorted(rz[t], log_rx[t] - math.log(gamma), side="right") for t in range(len(rz))])
    return counts + special.expit(log_rx)


def choose_rmia_a(ref: ModelOutputs, n_pool: int, grid: Sequence[float] = tuple(np.linspace(0, 1, 11)),
                   n_pseudo: int = 4) -> float:
    """Offline RMIA's ``a``: the grid value of best mean AUC when reference models play the target in turn.

    Uses reference models only (their membership is the attacker's own), as in Zarifzadeh et al. App. B.2.2.
    """
    K = len(ref)
    if K < 3:
        return 0.3
    best, best_auc = 0.3, -1.0
    pseudo = range(min(n_pseudo, K))
    for a in grid:
        aucs = []
        for k in pseudo:
            others = np.array([j for j in range(K) if j != k])
            s = rmia_scores(ref.log_p[[k], :n_pool], ref.log_p[others, :n_pool], ref.keep[others],
                            ref.log_p[[k], n_pool:], ref.log_p[others, n_pool:], online=False, a=float(a))[0]
            aucs.append(roc_auc(s[ref.keep[k]], s[~ref.keep[k]]))
        if np.mean(aucs) > best_auc + 1e-12:
            best, best_auc = float(a), float(np.mean(aucs))
    return best


def record_risk(ref_phi: np.ndarray, ref_keep: np.ndarray, fpr: float = 1e-3,
                fixed_variance: bool | None = None) -> dict[str, np.ndarray]:
    """Per-record risk: the TPR at ``fpr`` of the per-record Gaussian LiRA test on all reference models.

    ``risk = 1 - Phi((mu_out + s_out z_{1-fpr} - mu_in) / s_in)``: the power of the one-sided test that
    says "member" when ``phi >= mu_out + s_out z_{1-fpr}``, calibrated so that its FPR under the OUT
    Gaussian is exactly ``fpr``. Returns the risk and the fitted means and deviations.
    """
    ref_phi = np.asarray(ref_phi, float)
    if fixed_variance is None:
        fixed_variance = ref_phi.shape[0] < 64
    mu_in, s_in, mu_out, s_out = _gaussian_fits(ref_phi, ref_keep, fixed_variance)
    thr = mu_out + s_out * special.ndtri(1 - fpr)
    return {"risk": special.ndtr((mu_in - thr) / s_in), "mu_in": mu_in, "s_in": s_in, "mu_out": mu_out,
            "s_out": s_out}


def attack_scores(attacks: Sequence[str], ref: ModelOutputs, tgt: ModelOutputs, n: int, *, fixed_variance: bool,
                  rmia_a: float, rmia_gamma: float) -> dict[str, np.ndarray]:
    """Each named attack's scores of the target models on the ``n`` pool records, (targets, n): LiRA on ``phi``,
    RMIA and the loss threshold on ``log_p`` (RMIA's population: the records after the pool)."""
    out: dict[str, np.ndarray] = {}
    for k in attacks:
        if k.startswith("lira"):
            out[k] = lira_scores(tgt.phi[:, :n], ref.phi[:, :n], ref.keep, online=k == "lira-online",
                                 fixed_variance=fixed_variance)
        elif k.startswith("rmia"):
            out[k] = rmia_scores(tgt.log_p[:, :n], ref.log_p[:, :n], ref.keep, tgt.log_p[:, n:], ref.log_p[:, n:],
                                 online=k == "rmia-online", a=rmia_a, gamma=rmia_gamma)
        else:
            out[k] = loss_scores(tgt.log_p[:, :n])
    return out

