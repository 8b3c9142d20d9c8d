"""Features of mechanism outputs of any type, for the attacks of :mod:`privbound.audit.attacks`.

A mechanism may return numbers, arrays, strings and other hashable labels, tuples mixing
them, variable-length sequences or dicts. :func:`flatten_output` turns one output into a
flat tuple of *atoms* (numbers and hashable labels; a dict as its keys in sorted order,
each followed by its value flattened), :func:`output_records` does it for a batch, and
:class:`FeatureMap` turns records into a numeric matrix for a classifier, learned on
training records only:

* a column whose atoms are not all numbers is categorical: one-hot of the labels seen at
  least twice, plus an "other" column;
* a numeric column with few distinct values (at most ``max_onehot``) gets a one-hot
  encoding beside its (standardised) value;
* a numeric column with many values gets an indicator for each value that repeats across
  many outputs (sentinels such as -1000 for "below", clipping bounds, point masses), and
  its continuous part with those values replaced by the median of the others, so that a
  linear model is not dominated by a sentinel's magnitude;
* records of different lengths are padded (missing entries get an indicator) and the
  length is a feature.

The plug-in attack uses the records themselves as patterns (:func:`pattern_keys`).
"""

from __future__ import annotations

import numbers
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "UnsupportedOutputError",
    "as_batch",
    "flatten_output",
    "output_records",
    "is_scalar_numeric",
    "numeric_matrix",
    "pattern_keys",
    "FeatureMap",
]

_ATOM_TYPES = (str, bytes, bool, numbers.Number, np.generic)


class UnsupportedOutputError(TypeError):
    """An output that cannot be turned into features (``None``, an arbitrary object)."""

    def __init__(self, value: Any, where: str = "output"):
        self.value = value
        super().__init__(f"{where} is of type {type(value).__name__} ({value!r:.60}), which has no features; "
                         "return numbers, arrays, strings, tuples, lists or dicts of them")


def flatten_output(output: Any) -> tuple:
    """One output as a flat tuple of atoms: numbers (as float) and hashable labels.

    Arrays and sequences are flattened in order, dicts by sorted key (each key followed by
    its value flattened); ``None`` and other objects raise :class:`UnsupportedOutputError`.
    """
    out: list = []
    _flatten_into(output, out)
    return tuple(out)


def _flatten_into(x: Any, out: list) -> None:
    if isinstance(x, (bool, np.bool_)):
        out.append(float(x))
    elif isinstance(x, (numbers.Number, np.number)):
        out.append(float(x))
    elif isinstance(x, (str, bytes)):
        out.append(x)
    elif isinstance(x, np.ndarray):
        if x.dtype.kind in "biuf":
            out.extend(np.asarray(x, dtype=float).ravel().tolist())
        else:
            for v in x.ravel():
                _flatten_into(v, out)
    elif isinstance(x, dict):
        for k in sorted(x, key=repr):
            _flatten_into(k, out)
            _flatten_into(x[k], out)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _flatten_into(v, out)
    else:
        raise UnsupportedOutputError(x)


def as_batch(outputs: Any) -> np.ndarray:
    """A batch of outputs (stacked on axis 0) as a numeric array, or a 1-d object array of outputs."""
    arr = outputs if isinstance(outputs, np.ndarray) else None
    if arr is None:
        try:
            arr = np.asarray(outputs)
        except (TypeError, ValueError):
            arr = None
    if arr is not None and arr.dtype.kind in "biuf":
        return arr
    if arr is not None and arr.dtype != object and arr.ndim == 1:  # strings, bytes: labels
        return arr.astype(object)
    if arr is not None and arr.dtype == object and arr.ndim == 1:
        return arr
    return _objects(list(outputs))


def _objects(items: list) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def output_records(outputs: Any) -> list[tuple]:
    """Every output of a batch (stacked on axis 0) as a flat tuple of atoms."""
    arr = as_batch(outputs)
    if arr.dtype != object:
        flat = np.asarray(arr, dtype=float).reshape(arr.shape[0], -1) if arr.ndim else arr.reshape(1, 1)
        return [tuple(row) for row in flat.tolist()]
    return [flatten_output(o) for o in arr]


def is_scalar_numeric(outputs: Any) -> bool:
    """True when every output is one real number (the threshold attack applies)."""
    arr = as_batch(outputs)
    if arr.dtype != object:
        return arr.ndim >= 1 and int(np.prod(arr.shape[1:])) == 1
    return all(len(r) == 1 and isinstance(r[0], float) for r in output_records(arr))


def numeric_matrix(outputs: Any) -> np.ndarray | None:
    """The outputs as a float matrix (one row per output) when all are numeric and of one length, else None."""
    arr = as_batch(outputs)
    if arr.dtype != object:
        return np.asarray(arr, dtype=float).reshape(arr.shape[0], -1)
    records = output_records(arr)
    lengths = {len(r) for r in records}
    if len(lengths) != 1 or not all(isinstance(a, float) for r in records for a in r):
        return None
    return np.asarray(records, dtype=float).reshape(len(records), -1)


def pattern_keys(outputs: Any) -> list:
    """A hashable key per output (its record), for pattern counting."""
    arr = as_batch(outputs)
    if arr.dtype != object:
        flat = np.ascontiguousarray(np.asarray(arr, dtype=float).reshape(arr.shape[0], -1))
        return [row.tobytes() for row in flat]
    return output_records(arr)


# ------------------------------------------------------------------ feature map


@dataclass
class _Column:
    """How one record position becomes features (learned on training records)."""

    kind: str  # "numeric" or "categorical"
    categories: tuple = ()  # one-hot values (numeric with few values, or categorical labels)
    atoms: tuple = ()  # repeated numeric values with an indicator each
    fill: float = 0.0  # replaces atoms and missing entries in the continuous part
    mean: float = 0.0
    scale: float = 1.0
    has_missing: bool = False


@dataclass
class FeatureMap:
    """Numeric features of mechanism outputs, learned on training outputs (module docstring).

    ``max_onehot``: a numeric column with at most this many distinct values is one-hot
    encoded beside its value. ``atom_share``: a value repeated in at least this share of the
    training outputs (and at least 5 of them) gets an indicator of its own. ``max_atoms``
    and ``max_categories`` cap the number of indicator columns per position.
    """

    max_onehot: int = 16
    atom_share: float = 0.01
    max_atoms: int = 8
    max_categories: int = 64
    columns_: list[_Column] = field(default_factory=list, repr=False)
    ragged_: bool = False
    length_scale_: float = 1.0

    def fit(self, outputs: Any) -> "FeatureMap":
        cols, lengths = _columns(outputs)
        if lengths.size == 0:
            raise ValueError("FeatureMap.fit needs at least one output")
        self.ragged_ = bool(lengths.min() != lengths.max())
        self.length_scale_ = float(max(lengths.std(), 1.0))
        self.columns_ = [self._fit_column(c, lengths.size) for c in cols]
        return self

    def _fit_column(self, column: np.ndarray, n_outputs: int) -> _Column:
        present = _present(column)
        values = column[present]
        has_missing = bool(values.size < n_outputs)
        if column.dtype == object and not all(isinstance(v, float) for v in values):
            counts = Counter(values.tolist())
            cats = tuple(v for v, c in counts.most_common(self.max_categories) if c >= 2)
            return _Column("categorical", categories=cats, has_missing=has_missing)
        x = np.asarray(values, dtype=float)
        distinct, counts = np.unique(x, return_counts=True)
        if distinct.size <= self.max_onehot:
            cats, atoms, rest = tuple(distinct.tolist()), (), x
        else:
            min_count = max(5, int(np.ceil(self.atom_share * n_outputs)))
            big = np.argsort(-counts, kind="stable")[: self.max_atoms]
            atoms = tuple(float(distinct[i]) for i in big if counts[i] >= min_count)
            cats = ()
            rest = x[~np.isin(x, atoms)] if atoms else x
        fill = float(np.median(rest)) if rest.size else 0.0
        cont = np.where(np.isin(x, atoms), fill, x) if atoms else x
        scale = float(cont.std()) if cont.size else 1.0
        return _Column("numeric", categories=cats, atoms=atoms, fill=fill, mean=float(cont.mean()) if cont.size else 0.0,
                       scale=scale if scale > 0 else 1.0, has_missing=has_missing)

    def transform(self, outputs: Any) -> np.ndarray:
        if not self.columns_:
            raise ValueError("FeatureMap is not fitted")
        cols, lengths = _columns(outputs, width=len(self.columns_))
        n = lengths.size
        blocks = []
        for column, col in zip(cols, self.columns_):
            present = _present(column)
            if col.kind == "categorical":
                blocks.append(_one_hot(column, present, col.categories, other=True))
            else:
                x = _as_float(column, present)
                missing = np.isnan(x)
                is_atom = np.isin(x, col.atoms) if col.atoms else np.zeros(n, bool)
                cont = np.where(is_atom | missing, col.fill, x)
                blocks.append(((cont - col.mean) / col.scale)[:, None])
                if col.categories:
                    blocks.append((x[:, None] == np.asarray(col.categories, dtype=float)[None, :]).astype(float))
                if col.atoms:
                    blocks.append((x[:, None] == np.asarray(col.atoms, dtype=float)[None, :]).astype(float))
            if col.has_missing or self.ragged_:
                blocks.append((~present).astype(float)[:, None])
        if self.ragged_:
            blocks.append((lengths / self.length_scale_)[:, None])
        return np.hstack(blocks) if blocks else np.zeros((n, 0))


_MISSING = object()


def _columns(outputs: Any, width: int | None = None) -> tuple[list[np.ndarray], np.ndarray]:
    """Per-position columns of a batch (float arrays when numeric, object arrays padded with a marker) and lengths."""
    X = numeric_matrix(outputs)
    if X is not None:
        if width is not None and X.shape[1] != width:
            X = X[:, :width] if X.shape[1] > width else np.hstack([X, np.full((X.shape[0], width - X.shape[1]), np.nan)])
        return [X[:, j] for j in range(X.shape[1])], np.full(X.shape[0], X.shape[1], dtype=float)
    records = output_records(outputs)
    lengths = np.array([len(r) for r in records], dtype=float)
    w = int(lengths.max()) if width is None else width
    cols = []
    for j in range(w):
        col = np.empty(len(records), dtype=object)
        col[:] = [r[j] if len(r) > j else _MISSING for r in records]
        cols.append(col)
    return cols, lengths


def _present(column: np.ndarray) -> np.ndarray:
    if column.dtype == object:
        return np.array([v is not _MISSING for v in column], dtype=bool)
    return ~np.isnan(column)


def _as_float(column: np.ndarray, present: np.ndarray) -> np.ndarray:
    if column.dtype != object:
        return column.astype(float)
    return np.array([v if (p and isinstance(v, float)) else np.nan for v, p in zip(column, present)], dtype=float)


def _one_hot(column: np.ndarray, present: np.ndarray, categories: tuple, other: bool = False) -> np.ndarray:
    index = {c: i for i, c in enumerate(categories)}
    out = np.zeros((column.size, len(categories) + (1 if other else 0)))
    for row, (v, p) in enumerate(zip(column, present)):
        if not p:
            continue
        i = index.get(v)
        if i is not None:
            out[row, i] = 1.0
        elif other:
            out[row, -1] = 1.0
    return out
