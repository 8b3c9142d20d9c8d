"""Digit data sets for the experiments (Sec. 4, App. G) of Ghazi, Kumar, Manurangsi & Nguyen, "Robust and
Private Learning of Halfspaces" (AISTATS 2021, arXiv:2011.14580), paper id ``robust-halfspaces``.

scikit-learn's bundled 8x8 digits; MNIST (IDX files) and USPS (LIBSVM .bz2 or the usual h5 file) loaders
from paths the user gives (no download).
"""

from __future__ import annotations

import bz2
import gzip
import os
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "Dataset",
    "unit_normalize",
    "load_digits_unit",
    "read_idx",
    "load_mnist_idx",
    "load_usps",
]


@dataclass(frozen=True)
class Dataset:
    """A train/test split with pixels in [0, 1] (rows are flattened images) and integer labels."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    name: str


def unit_normalize(X: Any) -> np.ndarray:
    """Scale every non-zero row to unit L2 norm (the training inputs of the experiments, Sec. 4: sensitivity 1)."""
    X = np.asarray(X, float)
    n = np.linalg.norm(X, axis=1, keepdims=True)
    return np.divide(X, n, out=np.zeros_like(X), where=n > 0)


def load_digits_unit(test_fraction: float = 0.3, seed: int = 0) -> Dataset:
    """scikit-learn's bundled 8x8 digits (1797 images, no network), pixels scaled to [0, 1] (/16),
    split by a seeded stratified shuffle."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    data = load_digits()
    X = data.data / 16.0
    Xtr, Xte, ytr, yte = train_test_split(X, data.target, test_size=test_fraction, random_state=seed, stratify=data.target)
    return Dataset(Xtr, ytr, Xte, yte, "digits")


def _open(path: str | os.PathLike):
    p = os.fspath(path)
    if p.endswith(".gz"):
        return gzip.open(p, "rb")
    if p.endswith(".bz2"):
        return bz2.open(p, "rb")
    return open(p, "rb")


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read an IDX file (MNIST format; optionally .gz): magic 0x0000 (type code) (ndim), big-endian dims."""
    with _open(path) as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise ValueError(f"{os.fspath(path)!r} is not an IDX file (bad magic number)")
    dtypes = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
    code, ndim = raw[2], raw[3]
    if code not in dtypes:
        raise ValueError(f"{os.fspath(path)!r}: unknown IDX type code {code:#x}")
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    arr = np.frombuffer(raw, dtype=dtypes[code], offset=4 + 4 * ndim)
    if arr.size != int(np.prod(dims)):
        raise ValueError(f"{os.fspath(path)!r}: expected {int(np.prod(dims))} values, found {arr.size}")
    return arr.reshape(dims)


def load_mnist_idx(directory: str | os.PathLike) -> Dataset:
    """MNIST from the four IDX files in ``directory`` (train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz],
    t10k-images-idx3-ubyte[.gz], t10k-labels-idx1-ubyte[.gz]); pixels / 255."""
    def find(stem: str) -> str:
        for suffix in ("", ".gz"):
            for s in (stem, stem.replace("-idx", ".idx")):
                p = os.path.join(os.fspath(directory), s + suffix)
                if os.path.exists(p):
                    return p
        raise FileNotFoundError(f"no {stem}[.gz] in {os.fspath(directory)!r}")

    parts = {}
    for key, stem in (("Xtr", "train-images-idx3-ubyte"), ("ytr", "train-labels-idx1-ubyte"),
                      ("Xte", "t10k-images-idx3-ubyte"), ("yte", "t10k-labels-idx1-ubyte")):
        parts[key] = read_idx(find(stem))
    Xtr = parts["Xtr"].reshape(parts["Xtr"].shape[0], -1) / 255.0
    Xte = parts["Xte"].reshape(parts["Xte"].shape[0], -1) / 255.0
    return Dataset(Xtr, parts["ytr"].astype(np.int64), Xte, parts["yte"].astype(np.int64), "mnist")


def _read_libsvm(path: str, n_features: int = 256) -> tuple[np.ndarray, np.ndarray]:
    rows, labels = [], []
    with _open(path) as f:
        for line in f.read().decode().splitlines():
            parts = line.split()
            if not parts:
                continue
            labels.append(int(float(parts[0])))
            x = np.zeros(n_features)
            for tok in parts[1:]:
                j, v = tok.split(":")
                x[int(j) - 1] = float(v)
            rows.append(x)
    return np.asarray(rows), np.asarray(labels)


def load_usps(path: str | os.PathLike) -> Dataset:
    """USPS from the usual files: a directory or path holding the LIBSVM files ``usps.bz2`` and ``usps.t.bz2``
    (labels 1..10 -> 0..9, features in [-1, 1] -> [0, 1]), or an h5 file with groups ``train``/``test`` holding
    ``data`` and ``target`` (needs h5py)."""
    p = os.fspath(path)
    if p.endswith((".h5", ".hdf5")):
        try:
            import h5py
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("reading USPS from an h5 file needs h5py (pip install h5py); or use the LIBSVM .bz2 files") from None
        with h5py.File(p, "r") as f:
            Xtr, ytr = np.asarray(f["train"]["data"], float), np.asarray(f["train"]["target"], np.int64)
            Xte, yte = np.asarray(f["test"]["data"], float), np.asarray(f["test"]["target"], np.int64)
        return Dataset(np.clip(Xtr, 0, 1), ytr, np.clip(Xte, 0, 1), yte, "usps")
    if os.path.isdir(p):
        train, test = os.path.join(p, "usps.bz2"), os.path.join(p, "usps.t.bz2")
    else:
        train = p
        test = p[:-4] + ".t.bz2" if p.endswith(".bz2") else p + ".t"
    if not (os.path.exists(train) and os.path.exists(test)):
        raise FileNotFoundError(f"USPS files not found: {train!r} and {test!r}")
    Xtr, ytr = _read_libsvm(train)
    Xte, yte = _read_libsvm(test)
    to01 = lambda X: np.clip((X + 1) / 2, 0, 1)
    shift = 1 if min(ytr.min(), yte.min()) == 1 else 0
    return Dataset(to01(Xtr), ytr - shift, to01(Xte), yte - shift, "usps")
