"""Argument types and helpers shared by the ``privbound`` subcommands (:mod:`privbound.reports.cli` and the
subcommands defined beside their work, such as ``privbound membership`` in :mod:`privbound.reports.membership`).

Each type is an ``argparse`` ``type=`` callable that returns the parsed value or raises
:class:`argparse.ArgumentTypeError` with a message naming the option and the allowed range; the parser
turns it into one line on stderr and exit status 2. This module imports no other module of
:mod:`privbound.reports`, so every subcommand can use it without an import cycle.
"""

from __future__ import annotations

import argparse
import contextlib
import math
from typing import Callable, Iterator

__all__ = [
    "CLIError",
    "int_at_least",
    "positive_int",
    "nonneg_int",
    "confidence",
    "n_jobs",
    "wait_seconds",
    "size_bytes",
    "require_dask",
    "dask_backend",
]


class CLIError(Exception):
    """An error reported as one line with exit status 2."""


def int_at_least(name: str, low: int) -> Callable[[str], int]:
    """argparse type: an integer >= ``low``, with an error naming the option ``name``."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}") from None
        if v < low:
            raise argparse.ArgumentTypeError(f"{name} must be >= {low}, got {v}")
        return v

    return parse


def positive_int(name: str) -> Callable[[str], int]:
    """argparse type: an integer >= 1, with an error naming the option ``name``."""
    return int_at_least(name, 1)


def nonneg_int(name: str) -> Callable[[str], int]:
    """argparse type: an integer >= 0, with an error naming the option ``name``."""
    return int_at_least(name, 0)


def confidence(text: str) -> float:
    """argparse type: a confidence level in the open interval (0, 1)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"confidence must be a number in (0, 1), got {text!r}") from None
    if not 0.0 < v < 1.0:
        raise argparse.ArgumentTypeError(f"confidence must be in (0, 1), got {v}")
    return v


def n_jobs(text: str) -> int:
    """argparse type: a number of parallel jobs, >= 1 or -1 for all cores."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"n-jobs must be an integer (-1 for all cores), got {text!r}") from None
    if v == 0 or v < -1:
        raise argparse.ArgumentTypeError(f"n-jobs must be >= 1 or -1 (all cores), got {v}")
    return v


def positive_seconds(option: str):
    """argparse type of the option ``option`` (named in its errors): a finite number of seconds > 0."""
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{option} takes seconds, got {text!r}") from None
        if not (v > 0 and math.isfinite(v)):
            raise argparse.ArgumentTypeError(f"{option} must be a finite number of seconds > 0, got {v:g}")
        return v
    return parse


wait_seconds = positive_seconds("--wait")


_UNITS = {"": 1, "B": 1, "K": 10**3, "KB": 10**3, "M": 10**6, "MB": 10**6, "G": 10**9, "GB": 10**9,
          "T": 10**12, "TB": 10**12}


def size_bytes(name: str) -> Callable[[str], int]:
    """argparse type: a size such as ``2G``, ``500M``, ``750MB`` or ``0`` (decimal units), in bytes; the error
    names the option ``name``."""

    def parse(text: str) -> int:
        t = text.strip().upper()
        number = t.rstrip("KMGTB")
        unit = t[len(number):]
        try:
            value = float(number)
        except ValueError:
            value = float("nan")
        if unit not in _UNITS or not value >= 0 or value == float("inf"):
            raise argparse.ArgumentTypeError(f"{name} must be a size such as 2G, 500M or 0, got {text!r}")
        return int(value * _UNITS[unit])

    return parse


def require_dask() -> None:
    """:class:`CLIError` when the dask extra is not installed (found without importing it)."""
    import importlib.util

    if importlib.util.find_spec("dask") is None or importlib.util.find_spec("distributed") is None:
        raise CLIError("--dask-scheduler needs the dask extra: pip install 'privbound[dask]'")


@contextlib.contextmanager
def dask_backend(address: str | None) -> Iterator[None]:
    """Run joblib work on the Dask cluster at ``address`` (nothing when None); :class:`CLIError` when the
    dask extra is missing or the scheduler cannot be reached."""
    if address is None:
        yield
        return
    try:
        from dask.distributed import Client
    except ImportError:
        raise CLIError("--dask-scheduler needs the dask extra: pip install 'privbound[dask]'") from None
    import joblib

    try:
        client = Client(address, timeout="10s")
    except Exception as exc:
        raise CLIError(f"cannot connect to the Dask scheduler at {address!r}: {exc}") from None
    try:
        with joblib.parallel_config(backend="dask"):
            yield
    finally:
        client.close()
