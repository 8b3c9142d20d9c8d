"""The sample-size search of the scaling checks of "Robust and Private Learning of Halfspaces" (paper id
``robust-halfspaces``): the lower-bound illustrations of Lemma 13 (App. C.1) and Theorem 4 (App. D) measure how
many samples a learner needs to reach a target error, and fit the growth of that number.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

__all__ = ["doubling_needed_n"]


def doubling_needed_n(errors: Callable[[int], np.ndarray], n0: int, steps: int, target: float, where: str, d: int,
                      extra: Callable[[int], dict] | None = None) -> tuple[float, list[dict]]:
    """Smallest n (doubling from n0, then log-linear interpolation between the last two grid points)
    at which the mean of ``errors(n)`` is <= ``target``. Returns (n, evaluations).

    Each evaluation records n, d, the mean error and its standard error, and ``extra(n)`` if given; ``where``
    names the configuration in the error raised when ``steps`` doublings do not reach the target.
    """
    evals: list[dict] = []
    n = n0
    for _ in range(steps):
        err = errors(n)
        row = dict(n=n, d=d, mean_error=float(err.mean()), std_error=float(err.std(ddof=1) / math.sqrt(err.size)))
        if extra is not None:
            row.update(extra(n))
        evals.append(row)
        if row["mean_error"] <= target:
            if len(evals) == 1:
                return float(n), evals
            a, b = evals[-2], evals[-1]
            t = (a["mean_error"] - target) / (a["mean_error"] - b["mean_error"])
            return float(math.exp(math.log(a["n"]) + t * (math.log(b["n"]) - math.log(a["n"])))), evals
        n *= 2
    raise RuntimeError(f"no n <= {n} reaches mean error {target} at {where}")
