"""The membership game and its models: who trains on what, and what each trained model outputs per record.

The data are split once (seeded) into a pool of candidate members and a population no model trains on;
every (model, pool record) keeps the record with probability 1/2, under add/remove (the kept records)
or replace-one (slot i holds pool record i or its filler). Models are trained in seeded chunks through
the trial engine (:func:`train_models`); :func:`model_statistics` gives LiRA's logit-scaled confidence
``phi`` and the log-probability of the true label (Carlini et al., S&P 2022, Sec. IV).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from privbound.audit.cache import ChunkCache, fingerprint, sampling_library_versions, source_digest
from privbound.audit.engine import chunk_sizes, map_chunks
from privbound.learners.neighbouring import NeighbouringRelation
from privbound._validation import check_int

__all__ = ["MembershipGame", "ModelOutputs", "model_statistics", "derived_seed", "train_models"]

_LOGIT_CAP = 50.0  # |phi| <= 50: a probability 1 - 1e-22 or more is as certain as double precision can tell


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
        import privbound.audit
        import privbound.learners

        namespace = fingerprint("membership", role, engine_seed, chunk_size, _estimator_key(estimator), *game.key(),
                                sampling_library_versions(), source_digest(privbound.audit, privbound.learners))
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

