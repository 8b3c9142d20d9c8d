"""The floating-point attack: tell the datasets apart by how an output is represented.

A mechanism that computes ``f(d) + noise`` in floating point releases ``fl(f(d) + z)``, and the
set of doubles that sum can produce depends on ``f(d)`` (Mironov, "On significance of the least
significant bits for differential privacy", CCS 2012): e.g. with ``f(d0) = 3`` every double of
[1, 2) is reachable, with ``f(d1) = 4`` only every other one, so an output with an odd last
mantissa bit there proves the dataset was d0. The textbook Laplace and Gaussian mechanisms are
therefore not DP in floating point, at any epsilon.

:class:`FloatingPointAttack` scores an output by a plug-in likelihood ratio of its
representation features relative to each dataset's exact answer ``c_j = f(d_j)``:

* ``reach_j``: whether ``fl(c_j + fl(o - c_j)) == o``, i.e. whether ``c_j`` plus a double can give
  ``o`` (checked per coordinate; the output is reachable when every coordinate is);
* the two lowest mantissa bits of ``o`` (of its first coordinate).

It is part of the portfolio only when the audit asks for it (the floating-point estimator,
:class:`privbound.audit.estimators.FloatingPoint`), so that an
ordinary audit keeps its meaning: a bound about the mechanism's mathematical distribution. The
answers ``c_j`` come from the mechanism (privbound mechanisms expose them) or from the caller;
failing both, each is estimated as the median of that dataset's selection outputs, rounded to
an integer when it is within three standard errors of one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from privbound.audit.attacks.library import Attack, PlugInAttack
from privbound.audit.features import numeric_matrix

__all__ = ["FloatingPointAttack", "representation_features", "reachable", "infer_center"]


def reachable(outputs: np.ndarray, center: np.ndarray) -> np.ndarray:
    """Per output: can ``center + (a double)`` round to it in every coordinate (``fl(c + fl(o - c)) == o``)?"""
    o = np.asarray(outputs, dtype=float)
    c = np.broadcast_to(np.asarray(center, dtype=float), o.shape[1:])
    with np.errstate(over="ignore", invalid="ignore"):
        ok = (c + (o - c)) == o
    return ok.reshape(o.shape[0], -1).all(axis=1)


def representation_features(outputs: np.ndarray, centers: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Integer features per output: reachability from each center and the two low mantissa bits."""
    o = np.ascontiguousarray(np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1))
    low_bits = (o[:, 0].copy().view(np.uint64) & np.uint64(3)).astype(np.int64)
    return np.stack([reachable(o, centers[0]), reachable(o, centers[1]), low_bits], axis=1).astype(np.int64)


def infer_center(outputs: np.ndarray) -> np.ndarray:
    """A dataset's answer from its outputs: the coordinate-wise median, rounded to an integer within 3 standard errors."""
    o = np.asarray(outputs, dtype=float).reshape(len(outputs), -1)
    med = np.median(o, axis=0)
    mad = np.median(np.abs(o - med), axis=0) * 1.4826
    se = 1.2533 * mad / np.sqrt(max(len(o), 1))
    near = np.abs(med - np.round(med)) <= 3 * se
    return np.where(near, np.round(med), med)


@dataclass
class FloatingPointAttack(Attack):
    """Plug-in likelihood ratio of an output's representation features (module docstring).

    ``centers``: the exact answers ``(f(d0), f(d1))`` the mechanism adds its noise to; estimated
    from the training outputs when not given.
    """

    centers: tuple[Any, Any] | None = None
    name: ClassVar[str] = "floating-point"
    refit_on_selection = False  # a plug-in table: judged fold by fold
    centers_: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    table_: PlugInAttack | None = field(default=None, repr=False)

    @property
    def needs_training(self) -> bool:
        return True

    def fit(self, out0, out1):
        for name, out in (("out0", out0), ("out1", out1)):
            if numeric_matrix(out) is None:
                raise ValueError(f"the floating-point attack needs numeric outputs; {name} is not")
        if self.centers is not None:
            self.centers_ = (np.asarray(self.centers[0], float), np.asarray(self.centers[1], float))
        else:
            self.centers_ = (infer_center(out0), infer_center(out1))
        f0 = representation_features(out0, self.centers_)
        f1 = representation_features(out1, self.centers_)
        self.table_ = PlugInAttack().fit(f0, f1)
        return self

    def score(self, outputs):
        if self.table_ is None:
            raise ValueError("FloatingPointAttack is not fitted")
        return self.table_.score(representation_features(outputs, self.centers_))
