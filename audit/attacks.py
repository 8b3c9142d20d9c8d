"""Attacks: test statistics that map mechanism outputs to real scores.

Higher scores mean "came from d1". An attack is fitted on a *training* part of the
trials (outputs on d0 and d1) and then scores the held-out outputs; the estimator
never sees the training part, so learning the attack costs no validity.

* :class:`ScalarAttack` -- the raw output of a scalar mechanism (the estimator tries
  thresholds in both directions).
* :class:`DiscreteAttack` -- a plug-in likelihood ratio of the whole output pattern
  (vectors and tuples taking few distinct values, labels, sparse-vector patterns).
* :class:`ClassifierAttack` -- a classifier trained to tell d0 from d1 outputs
  (DP-Sniper, Bichsel et al. 2021), for continuous vector outputs.
* :class:`ScoreAttack` -- a user-supplied ``score(outputs) -> scores``.
* :class:`LikelihoodRatioAttack` -- a white-box ``log p_d0(o) / p_d1(o)`` supplied by a
  target that knows its output density (score = minus the log ratio).

:func:`choose_attack` picks one from the training outputs when none is given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

__all__ = [
    "Attack",
    "ScalarAttack",
    "DiscreteAttack",
    "ClassifierAttack",
    "ScoreAttack",
    "LikelihoodRatioAttack",
    "choose_attack",
    "as_feature_matrix",
    "DISCRETE_MAX_PATTERNS",
]

DISCRETE_MAX_PATTERNS = 64


def as_feature_matrix(outputs: Any) -> np.ndarray:
    """Outputs stacked on axis 0 as a 2-d float matrix (one row per trial)."""
    arr = np.asarray(outputs)
    if arr.dtype == object:
        try:
            arr = np.asarray([np.concatenate([np.ravel(np.asarray(p, dtype=float)) for p in np.atleast_1d(o)])
                              for o in arr])
        except (TypeError, ValueError) as exc:
            raise TypeError(f"outputs of mixed shapes cannot be turned into features ({exc})") from None
    arr = np.asarray(arr, dtype=float)
    return arr.reshape(arr.shape[0], -1)


class Attack:
    """Base class: ``fit(out0, out1)`` on training outputs, then ``score(outputs)``."""

    name = "attack"
    train_fraction = 0.5  # fraction of the trials used to fit the attack when it needs training

    def fit(self, out0: np.ndarray, out1: np.ndarray) -> "Attack":
        return self

    def score(self, outputs: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def needs_training(self) -> bool:
        return False


@dataclass
class ScalarAttack(Attack):
    """Score = the scalar output itself."""

    name: str = "scalar-threshold"

    def score(self, outputs):
        x = as_feature_matrix(outputs)
        if x.shape[1] != 1:
            raise ValueError(f"ScalarAttack needs scalar outputs, got {x.shape[1]} values per output")
        return x[:, 0]


@dataclass
class DiscreteAttack(Attack):
    """Plug-in likelihood ratio of the output pattern, learned on training outputs.

    score(o) = ln((c1(o) + 1/2) / (n1 + K/2)) - ln((c0(o) + 1/2) / (n0 + K/2)), with
    ``c_j(o)`` the count of pattern ``o`` among training outputs of d_j and K the number
    of distinct training patterns (Jeffreys smoothing); unseen patterns score 0.
    """

    name: str = "plug-in-likelihood-ratio"
    train_fraction: float = 0.3
    table_: dict = field(default_factory=dict, repr=False)

    @property
    def needs_training(self) -> bool:
        return True

    @staticmethod
    def _keys(outputs) -> list[bytes]:
        x = np.ascontiguousarray(as_feature_matrix(outputs))
        return [row.tobytes() for row in x]

    def fit(self, out0, out1):
        k0, k1 = self._keys(out0), self._keys(out1)
        patterns = set(k0) | set(k1)
        K = len(patterns)
        c0: dict[bytes, int] = {}
        c1: dict[bytes, int] = {}
        for k in k0:
            c0[k] = c0.get(k, 0) + 1
        for k in k1:
            c1[k] = c1.get(k, 0) + 1
        n0, n1 = len(k0), len(k1)
        self.table_ = {
            p: float(np.log((c1.get(p, 0) + 0.5) / (n1 + K / 2)) - np.log((c0.get(p, 0) + 0.5) / (n0 + K / 2)))
            for p in patterns
        }
        return self

    def score(self, outputs):
        return np.array([self.table_.get(k, 0.0) for k in self._keys(outputs)], dtype=float)


@dataclass
class ClassifierAttack(Attack):
    """A classifier's log-odds that an output came from d1 (DP-Sniper style).

    The default model is scikit-learn's ``HistGradientBoostingClassifier`` (nonlinear,
    fast on many trials); pass any classifier with ``predict_proba`` as ``model``.
    """

    name: str = "classifier"
    model: Any = None
    train_fraction: float = 0.5
    random_state: int = 0

    @property
    def needs_training(self) -> bool:
        return True

    def fit(self, out0, out1):
        from sklearn.ensemble import HistGradientBoostingClassifier

        x = np.vstack([as_feature_matrix(out0), as_feature_matrix(out1)])
        y = np.concatenate([np.zeros(len(out0)), np.ones(len(out1))])
        if self.model is None:
            self.model = HistGradientBoostingClassifier(max_iter=100, random_state=self.random_state)
        self.model.fit(x, y)
        return self

    def score(self, outputs):
        p = self.model.predict_proba(as_feature_matrix(outputs))[:, 1]
        p = np.clip(p, 1e-12, 1 - 1e-12)
        return np.log(p) - np.log1p(-p)


@dataclass
class ScoreAttack(Attack):
    """A user score ``score(outputs) -> 1-d array`` (higher = came from d1)."""

    fn: Callable[[np.ndarray], np.ndarray] = None
    name: str = "user-score"

    def __post_init__(self):
        if not callable(self.fn):
            raise TypeError(f"score must be callable as score(outputs) -> scores, got {type(self.fn).__name__}")

    def score(self, outputs):
        s = np.asarray(self.fn(outputs), dtype=float)
        if s.shape != (len(outputs),):
            raise ValueError(f"score(outputs) must return one score per output, shape ({len(outputs)},); got {s.shape}")
        return s


@dataclass
class LikelihoodRatioAttack(Attack):
    """White-box: ``log_likelihood_ratio(outputs) = log p_d0(o) / p_d1(o)``; score is its negative."""

    log_likelihood_ratio: Callable[[np.ndarray], np.ndarray] = None
    name: str = "white-box-likelihood-ratio"

    def __post_init__(self):
        if not callable(self.log_likelihood_ratio):
            raise TypeError("log_likelihood_ratio must be callable as f(outputs) -> log p_d0(o)/p_d1(o)")

    def score(self, outputs):
        s = -np.asarray(self.log_likelihood_ratio(outputs), dtype=float)
        if s.shape != (len(outputs),):
            raise ValueError(f"log_likelihood_ratio must return one value per output, shape ({len(outputs)},); got {s.shape}")
        # +-inf are legitimate (an output impossible under one dataset); clip to keep order.
        return np.clip(np.nan_to_num(s, nan=0.0, posinf=1e300, neginf=-1e300), -1e300, 1e300)


def choose_attack(out0: np.ndarray, out1: np.ndarray) -> Attack:
    """Pick an attack from (a sample of) the outputs.

    Few distinct output patterns (at most ``DISCRETE_MAX_PATTERNS``): the plug-in
    likelihood ratio; scalar outputs: the threshold attack; otherwise a classifier.
    """
    x = np.vstack([as_feature_matrix(out0[:2000]), as_feature_matrix(out1[:2000])])
    n_patterns = np.unique(x, axis=0).shape[0]
    if n_patterns <= DISCRETE_MAX_PATTERNS:
        return DiscreteAttack()
    if x.shape[1] == 1:
        return ScalarAttack()
    return ClassifierAttack()
