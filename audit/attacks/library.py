"""The attacks: test statistics that map mechanism outputs to real scores.

Higher scores mean "came from d1". An attack that learns is fitted on outputs the
evaluation never sees (:mod:`privbound.audit.attacks.choice` cross-fits it on the selection
part of the trials), so learning the attack costs no validity. Each attack has one name, the
same in ``attack=``, its class's ``name`` and ``AuditResult.attack``:

* :class:`ThresholdAttack` (``"threshold"``) -- the raw output of a scalar mechanism (the
  estimator tries thresholds in both directions).
* :class:`PlugInAttack` (``"plug-in"``) -- a plug-in likelihood ratio of the whole
  output pattern, with patterns seen fewer than ``min_count`` times pooled into one
  shared cell (back-off), so rare patterns cannot get extreme scores from a few counts.
* :class:`SinglePatternAttack` (``"single-pattern"``) -- the single output pattern that most
  distinguishes the datasets in each direction (largest two-proportion z statistic): the event
  "the output is that pattern", the best event of k-ary randomized response. Fitted and judged
  on the whole selection part, like a threshold: choosing the pattern is choosing the event.
* :class:`LogisticAttack` (``"logistic"``) -- L2-regularised logistic regression on the
  engineered features of :class:`privbound.audit.features.FeatureMap` (one-hot labels and
  few-valued coordinates, indicators of repeated values such as sentinels, the
  continuous part): the right test when the log-likelihood ratio is (nearly) linear.
* :class:`BoostingAttack` (``"boosting"``) -- a classifier trained to tell d0 from d1
  outputs (DP-Sniper, Bichsel et al., S&P 2021); gradient boosting on the same features
  by default.
* :class:`ScoreAttack` (``"score"``) -- a user-supplied ``score(outputs) -> scores``.
* :class:`LikelihoodRatioAttack` (``"likelihood-ratio"``) -- a white-box ``log p_d0(o) / p_d1(o)``
  supplied by a target that knows its output density (score = minus the log ratio).

The floating-point attack is in :mod:`privbound.audit.attacks.floating`; the portfolio and the
choice among attacks in :mod:`privbound.audit.attacks.choice`.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

import numpy as np
from threadpoolctl import threadpool_limits

from privbound.audit.features import FeatureMap, as_batch, numeric_matrix, pattern_keys

__all__ = [
    "Attack",
    "ThresholdAttack",
    "PlugInAttack",
    "SinglePatternAttack",
    "LogisticAttack",
    "BoostingAttack",
    "ScoreAttack",
    "LikelihoodRatioAttack",
    "as_feature_matrix",
]


def as_feature_matrix(outputs: Any) -> np.ndarray:
    """Numeric outputs of one length stacked on axis 0 as a 2-d float matrix (one row per trial)."""
    X = numeric_matrix(outputs)
    if X is None:
        raise TypeError("outputs of mixed shapes or types cannot be turned into a numeric matrix; "
                        "the plug-in, logistic and boosting attacks accept them")
    return X


class Attack:
    """Base class: ``fit(out0, out1)`` on training outputs, then ``score(outputs)``.

    ``refit_on_selection``: whether a fit on more data keeps the scale of the scores, so that
    a threshold chosen on the scores of cross-fitted models applies to a refitted one
    (:func:`privbound.audit.attacks.choice.choose_on_selection`). ``judged_on_fit``: the attack is fitted on the
    whole selection part and its event chosen on the same outputs -- for an attack whose fit only
    chooses among a few events, as choosing a threshold does.
    """

    name: ClassVar[str] = "attack"
    refit_on_selection = True
    judged_on_fit = False

    def fit(self, out0: np.ndarray, out1: np.ndarray) -> "Attack":
        return self

    def score(self, outputs: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def needs_training(self) -> bool:
        return False


@dataclass
class ThresholdAttack(Attack):
    """Score = the scalar output itself (its events are thresholds on the output)."""

    name: ClassVar[str] = "threshold"

    def score(self, outputs):
        x = as_feature_matrix(outputs)
        if x.shape[1] != 1:
            raise ValueError(f"ThresholdAttack needs scalar outputs, got {x.shape[1]} values per output")
        return x[:, 0]


def _pattern_counts(outputs) -> tuple[Counter, int]:
    """``(count of each output pattern, number of outputs)``."""
    keys = pattern_keys(outputs)
    return Counter(keys), len(keys)


@dataclass
class PlugInAttack(Attack):
    """Plug-in likelihood ratio of the output pattern, learned on training outputs.

    Patterns seen at least ``min_count`` times in the training outputs (both datasets
    together) are cells of their own; all others, and patterns never seen, share one
    pooled cell. score(o) = ln((c1(cell) + 1/2) / (n1 + K/2)) - ln((c0(cell) + 1/2) / (n0 + K/2)),
    with ``c_j`` the training count of the cell on d_j and K the number of cells (Jeffreys
    smoothing).
    """

    name: ClassVar[str] = "plug-in"
    min_count: int = 5
    refit_on_selection = False  # the cells (and their smoothing) change with the sample size
    table_: dict = field(default_factory=dict, repr=False)
    pooled_: float = 0.0

    @property
    def needs_training(self) -> bool:
        return True

    def fit(self, out0, out1):
        (c0, n0), (c1, n1) = _pattern_counts(out0), _pattern_counts(out1)
        common = [p for p in set(c0) | set(c1) if c0.get(p, 0) + c1.get(p, 0) >= self.min_count]
        rare0 = n0 - sum(c0.get(p, 0) for p in common)
        rare1 = n1 - sum(c1.get(p, 0) for p in common)
        K = len(common) + 1

        def log_ratio(a1, a0):
            return float(math.log((a1 + 0.5) / (n1 + K / 2)) - math.log((a0 + 0.5) / (n0 + K / 2)))

        self.table_ = {p: log_ratio(c1.get(p, 0), c0.get(p, 0)) for p in common}
        self.pooled_ = log_ratio(rare1, rare0)
        return self

    def score(self, outputs):
        return np.array([self.table_.get(k, self.pooled_) for k in pattern_keys(outputs)], dtype=float)


@dataclass
class SinglePatternAttack(Attack):
    """The single output pattern that most distinguishes the datasets, in each direction.

    Among the patterns seen at least ``min_count`` times in the training outputs (both datasets
    together), ``top_[1]`` has the largest two-proportion z statistic
    ``(p1 - p0) / sqrt(p (1 - p) (1/n1 + 1/n0))`` (p the pooled rate) and ``top_[0]`` the smallest.
    Score +1 on ``top_[1]``, -1 on ``top_[0]``, 0 elsewhere, so its threshold events are "the output
    is that pattern" (and complements). Ranking by evidence rather than by the estimated ratio keeps
    rare patterns with a few lucky counts from being chosen. Its fit is the choice of the event,
    so it is judged on the outputs it was fitted on (``judged_on_fit``).
    """

    name: ClassVar[str] = "single-pattern"
    min_count: int = 5
    judged_on_fit = True
    top_: tuple = field(default=(None, None), repr=False)

    @property
    def needs_training(self) -> bool:
        return True

    def fit(self, out0, out1):
        (c0, n0), (c1, n1) = _pattern_counts(out0), _pattern_counts(out1)
        z_best = [0.0, 0.0]
        top = [None, None]
        for p in set(c0) | set(c1):
            a0, a1 = c0.get(p, 0), c1.get(p, 0)
            pooled = (a0 + a1) / (n0 + n1)
            if a0 + a1 < self.min_count or pooled >= 1.0:
                continue
            z = (a1 / n1 - a0 / n0) / math.sqrt(pooled * (1 - pooled) * (1 / n0 + 1 / n1))
            if z > z_best[1]:
                z_best[1], top[1] = z, p
            if -z > z_best[0]:
                z_best[0], top[0] = -z, p
        self.top_ = tuple(top)
        return self

    def score(self, outputs):
        return np.array([1.0 if k == self.top_[1] else (-1.0 if k == self.top_[0] else 0.0)
                         for k in pattern_keys(outputs)], dtype=float)


@dataclass
class _FeatureClassifier(Attack):
    """A classifier's log-odds that an output came from d1, on :class:`FeatureMap` features."""

    model: Any = None
    random_state: int = 0
    features_: FeatureMap | None = field(default=None, repr=False)

    @property
    def needs_training(self) -> bool:
        return True

    def _default_model(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def fit(self, out0, out1):
        self.features_ = FeatureMap().fit(np.concatenate([as_batch(out0), as_batch(out1)]))
        x = np.vstack([self.features_.transform(out0), self.features_.transform(out1)])
        y = np.concatenate([np.zeros(len(out0)), np.ones(len(out1))])
        if self.model is None:
            self.model = self._default_model()
        # One thread: audits run many fits, often inside parallel workers, where OpenMP
        # threads of every fit would compete for the same cores.
        with threadpool_limits(limits=1):
            self.model.fit(x, y)
        return self

    def score(self, outputs):
        x = self.features_.transform(outputs)
        if hasattr(self.model, "decision_function"):
            return np.asarray(self.model.decision_function(x), dtype=float)
        p = np.clip(self.model.predict_proba(x)[:, 1], 1e-12, 1 - 1e-12)
        return np.log(p) - np.log1p(-p)


@dataclass
class LogisticAttack(_FeatureClassifier):
    """L2-regularised logistic regression (scikit-learn, ``C`` = 1) on the engineered features."""

    name: ClassVar[str] = "logistic"

    def _default_model(self):
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(C=1.0, max_iter=1000)


@dataclass
class BoostingAttack(_FeatureClassifier):
    """A classifier's log-odds that an output came from d1 (DP-Sniper style).

    The default model is scikit-learn's ``HistGradientBoostingClassifier`` (nonlinear,
    fast on many trials); pass any classifier with ``predict_proba`` as ``model``.
    """

    name: ClassVar[str] = "boosting"

    def _default_model(self):
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(max_iter=100, random_state=self.random_state)


@dataclass
class ScoreAttack(Attack):
    """A user score ``score(outputs) -> 1-d array`` (higher = came from d1)."""

    fn: Callable[[np.ndarray], np.ndarray] = None
    name: ClassVar[str] = "score"

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
    name: ClassVar[str] = "likelihood-ratio"

    def __post_init__(self):
        if not callable(self.log_likelihood_ratio):
            raise TypeError("log_likelihood_ratio must be callable as f(outputs) -> log p_d0(o)/p_d1(o)")

    def score(self, outputs):
        s = -np.asarray(self.log_likelihood_ratio(outputs), dtype=float)
        if s.shape != (len(outputs),):
            raise ValueError(f"log_likelihood_ratio must return one value per output, shape ({len(outputs)},); got {s.shape}")
        # +-inf are legitimate (an output impossible under one dataset); clip to keep order.
        return np.clip(np.nan_to_num(s, nan=0.0, posinf=1e300, neginf=-1e300), -1e300, 1e300)
