"""Record-level membership inference: LiRA, RMIA and the loss-threshold baseline, with per-record risk.

"Which records of my training set does this trained model expose, and how strong is the best
membership attack?" -- for any scikit-learn classifier and for the papers' learners, trained with or
without differential privacy.

Attacks (each a pure function of per-record model outputs, so thousands of reference models are one
call to the trial engine and every attack reuses them):

* **LiRA** -- the likelihood-ratio attack of Carlini, Chien, Nasr, Song, Terzis & Tramer, "Membership
  inference attacks from first principles" (IEEE S&P 2022, arXiv:2112.03570): the logit-scaled
  confidence ``phi = log p_y - log sum_{y' != y} p_y'`` of a record under reference models trained
  with (IN) and without (OUT) it is fitted by one Gaussian each; the online score is the log
  likelihood ratio ``log N(phi; mu_in, s_in) - log N(phi; mu_out, s_out)`` of the target model's
  ``phi``, the offline score the one-sided test ``log Pr[Z < phi]``, ``Z ~ N(mu_out, s_out)``
  (OUT models only). With few reference models the per-record variances are replaced by one global
  (pooled within-record) variance, as the paper recommends below 64 models.
* **RMIA** -- the robust membership inference attack of Zarifzadeh, Liu, Mireshghallah & Shokri,
  "Low-cost high-power membership inference attacks" (ICML 2024, arXiv:2312.03262): pairwise
  likelihood ratios ``LR(x, z) = (Pr(x|theta)/Pr(x)) / (Pr(z|theta)/Pr(z))`` against population
  records ``z`` that no model trained on, ``Pr(x)`` the average of ``Pr(x|theta')`` over reference
  models, and the score ``Pr_z[LR(x, z) >= gamma]``. Offline (OUT models only)
  ``Pr(x) = ((1 + a) Pr_OUT(x) + (1 - a)) / 2``, with ``a`` chosen on the reference models alone
  (one of them plays the target). Ties of the score are broken by ``Pr(x|theta)/Pr(x)``.
* **Loss threshold** -- Yeom, Giacomelli, Fredrikson & Jha, "Privacy risk in machine learning:
  analyzing the connection to overfitting" (IEEE CSF 2018): the score is minus the cross-entropy loss.

The game (one run of :func:`membership_audit`). The data are split once (seeded) into a *pool* of
candidate members and a *population* that no model trains on. ``n_reference`` reference models
(the attacker's own, membership known) and ``n_targets`` target models (membership secret) are
trained, each on the pool records it keeps: every (model, record) keeps the record independently
with probability 1/2. Under ``add-or-remove-one`` a model's training set is the kept records (the
two worlds of one record differ by adding or removing it); under ``replace-one`` slot ``i`` of a
fixed-size training set holds pool record ``i`` when kept and filler record ``i`` otherwise (the
worlds differ by replacing one record), for learners whose guarantee is stated for replacement.

The epsilon lower bound. Every (target model, pool record) pair is a canary of the one-run game of
Steinke, Nasr & Jagielski (NeurIPS 2023, arXiv:2305.08846): its inclusion bit is an independent fair
coin, changing it changes one target model's training set by one neighbouring step, and the attacker's
guesses (the highest / lowest pooled scores) are a post-processing of the target models and of
reference models independent of the bits. So the number of correct guesses among ``r`` is dominated
as in their Theorem 3.1 (with the delta extension of :mod:`privbound.audit.one_run`), although
records of one model are dependent -- which rules out a Clopper--Pearson bound on pooled TPR and FPR.
The attack and the guess rule (how many guesses, one- or two-sided) are chosen on a quarter of the
target models and evaluated, as one test at level ``1 - confidence``, on the others: those are
trained independently of the first, so the choice is fixed with respect to their coins and the bound
holds with probability at least ``confidence`` (with one target model: Bonferroni over every rule of
every attack). The delta term of the bound grows with the number of canaries ``m`` (it is
``2 m delta`` times a tail ratio), so the bound needs many correct guesses when delta > 0.

Metrics (descriptive): the pooled ROC, TPR at FPR 1e-3 and 1e-2 with two-sided Clopper--Pearson
intervals on the counts at the chosen threshold (treating (model, record) pairs as independent, the
convention of the membership-inference literature; the threshold is chosen on the same scores),
AUC with the Hanley--McNeil (1982) interval, the advantage ``max_t TPR - FPR`` with the interval
from the Clopper--Pearson bounds of its two rates. Per-record risk: the TPR at ``risk_fpr`` of the
per-record Gaussian test of LiRA calibrated on all reference models,
``1 - Phi((mu_out + s_out z_{1 - risk_fpr} - mu_in) / s_in)``.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
from scipy import special, stats

from privbound.audit.cache import ChunkCache, fingerprint, source_digest
from privbound.audit.result import json_safe
from privbound.audit.engine import chunk_sizes, map_chunks
from privbound.audit.statistics import clopper_pearson_lower, clopper_pearson_upper
from privbound.audit.one_run import one_run_audit
from privbound.learners.neighbouring import NeighbouringRelation
from privbound._validation import check_confidence, check_delta, check_int, check_real

__all__ = [
    "ATTACKS",
    "AttackMetrics",
    "FprPoint",
    "MembershipResult",
    "ModelOutputs",
    "MembershipGame",
    "membership_audit",
    "train_models",
    "derived_seed",
    "model_statistics",
    "lira_scores",
    "rmia_scores",
    "loss_scores",
    "record_risk",
    "attack_metrics",
    "membership_epsilon_lower_bound",
    "guess_grid",
]

ATTACKS = ("lira-online", "lira-offline", "rmia-online", "rmia-offline", "loss")
_LOGIT_CAP = 50.0  # |phi| <= 50: a probability 1 - 1e-22 or more is as certain as double precision can tell
_MIN_STD = 1e-6


# ============================================================================ model statistics


def model_statistics(model: Any, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-record ``(log p_y, phi)`` of a fitted classifier: the log-probability of the true label and
    LiRA's logit-scaled confidence ``phi = log p_y - log sum_{y' != y} p_y'`` (Carlini et al. 2022, Sec. IV).

    Uses ``predict_log_proba`` / ``predict_proba`` when the model has them, else ``decision_function``
    (one column: a margin classifier with labels ``classes_`` or (-1, +1), ``p_y = sigmoid(margin)``;
    several columns: their softmax). A label the model never saw has probability 0 (``phi`` capped).
    """
    y = np.asarray(y)
    if hasattr(model, "predict_log_proba") or hasattr(model, "predict_proba"):
        with np.errstate(divide="ignore"):
            if hasattr(model, "predict_log_proba"):
                logP = np.asarray(model.predict_log_proba(X), dtype=float)
            else:
                logP = np.log(np.asarray(model.predict_proba(X), dtype=float))
        return _true_class_stats(logP, list(model.classes_), y)
    if not hasattr(model, "decision_function"):
        raise TypeError(f"{type(model).__name__} has neither predict_proba nor decision_function: "
                        "membership attacks need a confidence per record")
    D = np.asarray(model.decision_function(X), dtype=float)
    classes = list(getattr(model, "classes_", (-1, 1)))
    if D.ndim == 1:
        margin = np.where(y == classes[-1], D, -D)
        margin = np.clip(margin, -_LOGIT_CAP, _LOGIT_CAP)
        return -np.logaddexp(0.0, -margin), margin
    return _true_class_stats(D - special.logsumexp(D, axis=1, keepdims=True), classes, y)


def _true_class_stats(logP: np.ndarray, classes: list, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    logP = np.maximum(np.nan_to_num(logP, nan=-np.inf), -1e300)
    col = {c: j for j, c in enumerate(classes)}
    idx = np.array([col.get(v, -1) for v in y.tolist()])
    seen = idx >= 0
    rows = np.arange(len(y))
    log_true = np.where(seen, logP[rows, np.where(seen, idx, 0)], -np.inf)
    others = logP.copy()
    others[rows[seen], idx[seen]] = -np.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        log_rest = special.logsumexp(others, axis=1)
    phi = np.clip(np.nan_to_num(log_true - log_rest, nan=0.0, posinf=_LOGIT_CAP, neginf=-_LOGIT_CAP),
                  -_LOGIT_CAP, _LOGIT_CAP)
    return np.maximum(log_true, -700.0), phi


# ============================================================================ the game and training


@dataclass(frozen=True, eq=False)
class MembershipGame:
    """The data of one membership game: pool (candidate members), population, fillers, relation.

    ``X_filler`` / ``y_filler`` (one per pool record) only under ``replace-one``.
    """

    X: np.ndarray
    y: np.ndarray
    X_population: np.ndarray
    y_population: np.ndarray
    relation: NeighbouringRelation = NeighbouringRelation.ADD_OR_REMOVE_ONE
    X_filler: np.ndarray | None = None
    y_filler: np.ndarray | None = None

    @property
    def n_pool(self) -> int:
        return len(self.y)

    def training_set(self, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.relation is NeighbouringRelation.REPLACE_ONE:
            return (np.where(keep[:, None], self.X, self.X_filler), np.where(keep, self.y, self.y_filler))
        return self.X[keep], self.y[keep]

    def evaluation_set(self) -> tuple[np.ndarray, np.ndarray]:
        """Pool records first, then the population records."""
        return np.concatenate([self.X, self.X_population]), np.concatenate([self.y, self.y_population])

    def key(self) -> tuple:
        return (self.relation.value, self.X, self.y, self.X_population, self.y_population,
                self.X_filler, self.y_filler)


@dataclass(frozen=True, eq=False)
class ModelOutputs:
    """Per-record outputs of trained models: ``keep`` (models, pool) and ``phi`` / ``log_p`` (models, pool + population)."""

    keep: np.ndarray
    phi: np.ndarray
    log_p: np.ndarray

    def __len__(self) -> int:
        return self.keep.shape[0]

    def head(self, k: int) -> "ModelOutputs":
        """The first ``k`` models (the same models a run with ``k`` models would train)."""
        return ModelOutputs(self.keep[:k], self.phi[:k], self.log_p[:k])


def _new_model(estimator: Any, seed: int) -> Any:
    """A fresh unfitted copy of ``estimator`` with ``random_state = seed`` when it has one."""
    if hasattr(estimator, "get_params") and hasattr(estimator, "set_params"):
        from sklearn.base import clone

        try:
            model = clone(estimator)
        except Exception:  # not a full scikit-learn estimator
            model = copy.deepcopy(estimator)
    else:
        model = copy.deepcopy(estimator)
    if hasattr(model, "random_state"):
        model.random_state = seed
    return model


def _fit_model(estimator: Any, X: np.ndarray, y: np.ndarray, seed: int) -> Any:
    return _new_model(estimator, seed).fit(X, y)


def _train_chunk(estimator: Any, game: MembershipGame, size: int, ss: np.random.SeedSequence) -> list[np.ndarray]:
    """Train ``size`` models; model ``j`` of chunk ``i`` draws everything from ``SeedSequence(seed, (i, j))``."""
    n = game.n_pool
    Xe, ye = game.evaluation_set()
    keep = np.zeros((size, n), dtype=bool)
    phi = np.empty((size, len(ye)))
    log_p = np.empty((size, len(ye)))
    for j, child in enumerate(ss.spawn(size)):
        rng = np.random.default_rng(child)
        keep[j] = rng.random(n) < 0.5
        X_train, y_train = game.training_set(keep[j])
        model = _fit_model(estimator, X_train, y_train, int(rng.integers(2**31 - 1)))
        log_p[j], phi[j] = model_statistics(model, Xe, ye)
    return [keep, phi, log_p]


def _estimator_key(estimator: Any) -> str:
    if hasattr(estimator, "get_params"):
        try:
            return f"{type(estimator).__module__}.{type(estimator).__qualname__}{sorted(estimator.get_params().items())!r}"
        except Exception:
            pass
    state = {k: v for k, v in vars(estimator).items() if not k.endswith("_")} if hasattr(estimator, "__dict__") else {}
    return f"{type(estimator).__module__}.{type(estimator).__qualname__}{sorted(state.items(), key=str)!r}"


def derived_seed(seed: int, role: str) -> int:
    """The engine seed of one role ("reference" or "target") of a run with ``seed``."""
    tag = {"reference": 0, "target": 1}[role]
    return int(np.random.SeedSequence([check_int(seed, "seed", low=0), tag]).generate_state(1, np.uint32)[0])


def train_models(
    estimator: Any,
    game: MembershipGame,
    n_models: int,
    *,
    seed: int = 0,
    role: str = "reference",
    n_jobs: int | None = 1,
    chunk_size: int = 4,
    cache_dir: str | None = None,
) -> ModelOutputs:
    """Train ``n_models`` models of the game through :func:`privbound.audit.engine.map_chunks`.

    Seeded chunks of ``chunk_size`` models (joblib / Dask, bit-identical for any ``n_jobs``); the
    models of ``role`` "reference" and "target" use independent seeds derived from ``seed``. The
    first ``k`` models do not depend on ``n_models``. With ``cache_dir`` every finished chunk is
    stored (:class:`privbound.audit.cache.ChunkCache`), so an interrupted run resumes with
    identical results.
    """
    n_models = check_int(n_models, "n_models", low=1)
    chunk_size = check_int(chunk_size, "chunk_size", low=1)
    engine_seed = derived_seed(seed, role)
    cache = None
    done: dict[int, Any] = {}
    if cache_dir is not None:
        import sklearn

        import privbound.audit
        import privbound.learners

        namespace = fingerprint("membership", role, engine_seed, chunk_size, _estimator_key(estimator), *game.key(),
                                sklearn.__version__, np.__version__,
                                source_digest(privbound.audit, privbound.learners))
        cache = ChunkCache(cache_dir, "membership-" + namespace[:32])
        for i, size in enumerate(chunk_sizes(n_models, chunk_size)):
            got = cache.load(i, size)
            if got is not None:
                done[i] = [got[0].astype(bool), got[1], got[2]]

    def on_chunk(i, res):
        if cache is not None:
            cache.store(i, len(res[0]), res)

    def fn(size, ss):
        return _train_chunk(estimator, game, size, ss)

    n_chunks = len(chunk_sizes(n_models, chunk_size))
    if len(done) == n_chunks:  # everything cached: no pool to start
        parts = [done[i] for i in range(n_chunks)]
    else:
        parts = map_chunks(fn, n_models, seed=engine_seed, chunk_size=chunk_size, n_jobs=n_jobs, done=done,
                           on_chunk=on_chunk)
    return ModelOutputs(*(np.concatenate([p[k] for p in parts], axis=0) for k in range(3)))


# ============================================================================ attacks


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


def _choose_rmia_a(ref: ModelOutputs, n_pool: int, grid: Sequence[float] = tuple(np.linspace(0, 1, 11)),
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
            aucs.append(_auc(s[ref.keep[k]], s[~ref.keep[k]]))
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


# ============================================================================ metrics


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


def _auc(s_in: np.ndarray, s_out: np.ndarray) -> float:
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
    auc = _auc(s_in, s_out)
    roc_f, roc_t = _thin_roc(fpr, tpr)
    return AttackMetrics(
        attack=attack, at_fpr=tuple(points), auc=auc,
        auc_ci=_hanley_mcneil(auc, s_in.size, s_out.size, float(special.ndtri(1 - alpha / 2))),
        advantage=float(max(adv[j], 0.0)), advantage_ci=(max(0.0, ti[0] - to[1]), max(0.0, ti[1] - to[0])),
        roc_fpr=roc_f, roc_tpr=roc_t,
    )


# ============================================================================ epsilon lower bound

_GUESS_FRACTIONS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)


def _rule(frac: float, two_sided: bool, m: int) -> tuple[int, int]:
    r = max(1, int(round(frac * m)))
    return (r - r // 2, r // 2) if two_sided else (r, 0)


def guess_grid(m: int) -> tuple[tuple[int, int], ...]:
    """The fixed guess rules ``(k_plus, k_minus)`` for ``m`` canaries: ``r`` = 0.1% ... 50% of m guesses,
    all "member" (one-sided) and half "member" / half "non-member" (two-sided)."""
    m = check_int(m, "m", low=1)
    out: list[tuple[int, int]] = []
    for frac in _GUESS_FRACTIONS:
        for two_sided in (False, True):
            pair = _rule(frac, two_sided, m)
            if pair not in out and pair[0] >= 1:
                out.append(pair)
    return tuple(out)


def _snj(scores: np.ndarray, bits: np.ndarray, rule: tuple[int, int], delta: float, confidence: float):
    return one_run_audit(np.ravel(scores), np.ravel(bits), delta=delta, confidence=confidence, grid=[rule])


def membership_epsilon_lower_bound(scores: Mapping[str, np.ndarray], membership: np.ndarray, *, delta: float = 0.0,
                                   confidence: float = 0.95, selection: float = 0.25) -> tuple[float, dict[str, Any]]:
    """The epsilon lower bound of the membership game (module docstring) and how it was obtained.

    ``scores[name]`` and ``membership`` are (targets, pool); every (target, record) pair is a canary of
    the one-run game of Steinke, Nasr & Jagielski (2023). With two or more target models, the first
    ``selection`` fraction of them (at least one) chooses the attack and the guess rule (the fraction of
    guesses of :func:`guess_grid`, one- or two-sided) and the other target models -- independent of the
    first, so the choice is fixed with respect to their coins -- evaluate that one rule at level
    ``1 - confidence``. With one target model, every rule of every attack is tested at level
    ``(1 - confidence) / (number of rules)`` (Bonferroni) and the best bound is reported.
    """
    delta = check_delta(delta)
    confidence = check_confidence(confidence)
    bits = np.asarray(membership, bool)
    n_t = bits.shape[0]
    if n_t >= 2 and selection > 0:
        n_sel = min(n_t - 1, max(1, int(round(selection * n_t))))
        m_sel, m_ev = bits[:n_sel].size, bits[n_sel:].size
        cands = []
        for name, s in scores.items():
            for frac in _GUESS_FRACTIONS:
                for two_sided in (False, True):
                    res = _snj(s[:n_sel], bits[:n_sel], _rule(frac, two_sided, m_sel), delta, confidence)
                    cands.append((res.epsilon_lower_bound, res.v / max(res.r, 1), -frac, name, frac, two_sided))
        _, _, _, name, frac, two_sided = max(cands, key=lambda c: c[:3])
        rule = _rule(frac, two_sided, m_ev)
        res = _snj(scores[name][n_sel:], bits[n_sel:], rule, delta, confidence)
        info = {"method": "one-run/steinke-nasr-jagielski-2023, rule chosen on held-out target models",
                "attack": name, "fraction": frac, "two_sided": two_sided, "k_plus": rule[0], "k_minus": rule[1],
                "r": res.r, "v": res.v, "m": m_ev, "selection_targets": n_sel, "evaluation_targets": n_t - n_sel,
                "rules_tested": 1}
        return float(res.epsilon_lower_bound), info
    m = bits.size
    grid = guess_grid(m)
    n_tests = max(1, len(scores)) * len(grid)
    level = 1.0 - (1.0 - confidence) / n_tests
    best = (0.0, None, None)
    for name, s in scores.items():
        res = one_run_audit(np.ravel(s), np.ravel(bits), delta=delta, confidence=level, grid=grid)
        if best[1] is None or res.epsilon_lower_bound > best[0]:
            best = (float(res.epsilon_lower_bound), name, res)
    e, name, res = best
    info = {"method": "one-run/steinke-nasr-jagielski-2023, Bonferroni over attacks and rules", "attack": name,
            "k_plus": res.k_plus, "k_minus": res.k_minus, "r": res.r, "v": res.v, "m": m,
            "selection_targets": 0, "evaluation_targets": n_t, "rules_tested": n_tests}
    return e, info


# ============================================================================ result


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


# ============================================================================ entry point


def _split_population(n: int, population: float | int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices (pool, population) of a seeded split of ``n`` records."""
    k = int(round(population * n)) if isinstance(population, float) else int(population)
    if not 1 <= k < n:
        raise ValueError(f"population must leave at least one record on each side, got {k} of {n}")
    perm = np.random.default_rng(np.random.SeedSequence([seed, 2])).permutation(n)
    return np.sort(perm[k:]), np.sort(perm[:k])


def _claim_of(estimator: Any) -> tuple[float | None, float | None, NeighbouringRelation | None]:
    """The estimator's own claimed (epsilon, delta, relation), from its ``guarantee`` when it has one."""
    try:
        g = getattr(estimator, "guarantee", None)
    except Exception:
        return None, None, None
    if g is None or callable(g):
        return None, None, None
    return float(g.epsilon), float(g.delta), getattr(g, "neighbouring", None)


def _game_text(relation: NeighbouringRelation) -> str:
    if relation is NeighbouringRelation.REPLACE_ONE:
        return ("each (model, pool record) holds the record or its filler in a fixed slot, a fair coin each; "
                "worlds differ by replacing one record (replace-one)")
    return "each (model, pool record) trains on the record or not, a fair coin each; worlds differ by adding or " \
           "removing one record (add-or-remove-one)"


def membership_audit(
    estimator: Any,
    X: Any,
    y: Any,
    *,
    X_population: Any = None,
    y_population: Any = None,
    population: float | int = 0.1,
    X_filler: Any = None,
    y_filler: Any = None,
    relation: NeighbouringRelation | str = NeighbouringRelation.ADD_OR_REMOVE_ONE,
    n_reference: int = 64,
    n_targets: int = 8,
    attacks: Sequence[str] = ATTACKS,
    epsilon: float | None = None,
    delta: float | None = None,
    confidence: float = 0.95,
    fprs: Sequence[float] = (1e-3, 1e-2),
    risk_fpr: float = 1e-3,
    fixed_variance: bool | None = None,
    rmia_gamma: float = 1.0,
    rmia_a: float | str = "auto",
    top: int = 20,
    seed: int = 0,
    n_jobs: int | None = 1,
    chunk_size: int = 4,
    cache_dir: str | None = None,
    name: str | None = None,
) -> MembershipResult:
    """Membership-inference audit of ``estimator`` trained on records of ``(X, y)``.

    ``estimator`` is any classifier with ``fit(X, y)`` and ``predict_proba`` or ``decision_function``
    (a scikit-learn estimator, or one of the papers' learners); a fresh copy is trained per model with
    its ``random_state`` drawn from the run's seed. Without ``X_population`` a seeded ``population``
    fraction (or count) of ``(X, y)`` is held out as RMIA's population; the rest is the pool of
    candidate members. ``relation="replace-one"`` needs fillers (one per pool record). ``epsilon``,
    ``delta``: the claim (default: the estimator's ``guarantee``, else non-private with ``delta = 0``).
    See the module docstring for the game, the attacks and the bound. ``cache_dir`` makes the run
    resumable.

    Example::

        from sklearn.datasets import load_digits
        from sklearn.linear_model import LogisticRegression
        from privbound.audit.membership import membership_audit
        X, y = load_digits(return_X_y=True)
        print(membership_audit(LogisticRegression(C=100, max_iter=300), X / 16, y, n_reference=16).summary())
    """
    start = time.perf_counter()
    relation = NeighbouringRelation(relation)
    if relation not in (NeighbouringRelation.ADD_OR_REMOVE_ONE, NeighbouringRelation.REPLACE_ONE):
        raise ValueError(f"relation must be add-or-remove-one or replace-one, got {relation.value}")
    n_reference = check_int(n_reference, "n_reference", low=2)
    n_targets = check_int(n_targets, "n_targets", low=1)
    confidence = check_confidence(confidence)
    seed = check_int(seed, "seed", low=0)
    unknown = [a for a in attacks if a not in ATTACKS]
    if unknown or not attacks:
        raise ValueError(f"attacks must be a non-empty subset of {ATTACKS}, got {list(attacks)}")
    eps_own, delta_own, rel_own = _claim_of(estimator) if epsilon is None else (None, None, None)
    if rel_own is not None and NeighbouringRelation(rel_own) is not relation:
        raise ValueError(f"the estimator's guarantee is stated for {NeighbouringRelation(rel_own).value}, the game for "
                         f"{relation.value}: pass relation={NeighbouringRelation(rel_own).value!r} (or an explicit epsilon)")
    epsilon = eps_own if epsilon is None else check_real(epsilon, "epsilon", low=0.0, low_inclusive=False)
    delta = (delta_own if delta_own is not None else 0.0) if delta is None else check_delta(delta)

    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"X must be 2-d with one label per row in y, got shapes {X.shape} and {y.shape}")
    if X_population is None:
        pool, pop = _split_population(len(y), population, seed)
        X, y, X_population, y_population = X[pool], y[pool], X[pop], y[pop]
    X_population = np.asarray(X_population, dtype=float)
    y_population = np.asarray(y_population)
    if relation is NeighbouringRelation.REPLACE_ONE:
        if X_filler is None or np.shape(X_filler) != X.shape or np.shape(y_filler) != y.shape:
            raise ValueError("relation replace-one needs X_filler, y_filler of the pool's shape (one filler per record)")
        X_filler, y_filler = np.asarray(X_filler, dtype=float), np.asarray(y_filler)
    game = MembershipGame(X, y, X_population, y_population, relation, X_filler, y_filler)

    t0 = time.perf_counter()
    kw = dict(seed=seed, n_jobs=n_jobs, chunk_size=chunk_size, cache_dir=cache_dir)
    ref = train_models(estimator, game, n_reference, role="reference", **kw)
    tgt = train_models(estimator, game, n_targets, role="target", **kw)
    train_seconds = time.perf_counter() - t0

    n = game.n_pool
    if fixed_variance is None:
        fixed_variance = n_reference < 64
    a = _choose_rmia_a(ref, n) if rmia_a == "auto" else check_real(rmia_a, "rmia_a", low=0.0, high=1.0)
    scores = _attack_scores(attacks, ref, tgt, n, fixed_variance=fixed_variance, rmia_a=a, rmia_gamma=rmia_gamma)
    eps_lb, eps_info = membership_epsilon_lower_bound(scores, tgt.keep, delta=delta, confidence=confidence)
    metrics = tuple(attack_metrics(k, s, tgt.keep, fprs=fprs, confidence=confidence) for k, s in scores.items())
    risk = record_risk(ref.phi[:, :n], ref.keep, risk_fpr, fixed_variance)
    order = np.argsort(-risk["risk"], kind="stable")[: check_int(top, "top", low=0)]
    top_records = tuple({"index": int(i), "label": y[i].item() if hasattr(y[i], "item") else y[i],
                         "risk": float(risk["risk"][i]), "mu_in": float(risk["mu_in"][i]),
                         "mu_out": float(risk["mu_out"][i]), "s_in": float(risk["s_in"][i]),
                         "s_out": float(risk["s_out"][i])} for i in order)
    return MembershipResult(
        name=name, estimator=_describe(estimator), relation=relation, game=_game_text(relation),
        n_pool=n, n_population=len(y_population), n_reference=n_reference, n_targets=n_targets,
        attacks=metrics, epsilon_claimed=epsilon, delta=delta, epsilon_lower_bound=eps_lb,
        epsilon_attack=eps_info["attack"] if eps_lb > 0 else None, confidence=confidence,
        violation=bool(epsilon is not None and eps_lb > epsilon), risk_fpr=risk_fpr,
        record_risk=risk["risk"], top_records=top_records, scores=scores, membership=tgt.keep, seed=seed,
        wall_seconds=time.perf_counter() - start, train_seconds=train_seconds,
        details={"rmia_a": a, "rmia_gamma": rmia_gamma, "fixed_variance": fixed_variance, "epsilon": eps_info,
                 "chunk_size": chunk_size},
    )


def _attack_scores(attacks: Sequence[str], ref: ModelOutputs, tgt: ModelOutputs, n: int, *, fixed_variance: bool,
                   rmia_a: float, rmia_gamma: float) -> dict[str, np.ndarray]:
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


def _describe(estimator: Any) -> str:
    text = repr(estimator)
    if text.startswith("<") and " at 0x" in text:
        state = {k: v for k, v in vars(estimator).items() if not k.endswith("_") and v is not None}
        text = f"{type(estimator).__name__}(" + ", ".join(f"{k}={v!r}" for k, v in state.items()) + ")"
    return text if len(text) <= 200 else text[:197] + "..."
