"""Checks of App. A (Preliminaries) of "Robust and Private Learning of Halfspaces": Lemma 7 (A.1, the robust
risk of a halfspace is the margin error of its normalised weight vector) and Observation 8 (A.2, boosting the
success probability).

Ghazi, Kumar, Manurangsi & Nguyen, AISTATS 2021, arXiv:2011.14580 (paper id ``robust-halfspaces``).
Every ``check_*`` takes a :class:`privbound.bounds.checks.CheckContext` and returns a
:class:`privbound.bounds.checks.CheckResult`.
"""

from __future__ import annotations

import math

import numpy as np

from privbound.bounds import checks as C
from privbound.bounds.robust_halfspaces.formulas import obs8_runs

__all__ = ["check_lemma7", "check_obs8_corrected", "check_obs8_as_printed"]


def check_lemma7(ctx: C.CheckContext) -> C.CheckResult:
    """Lemma 7 by brute force in R^2: robust risk (search over a grid of the perturbation disc) == err_gamma(w/||w||).

    For each instance: random w (random scale), 200 points in the unit disc with random
    labels, gamma in {0, 0.05, 0.2, 0.5}. A point is fooled iff some z on the grid
    (11 radii x 720 angles, centre included) has sgn(<w, z>) != y. The grid misses the
    true minimum of y<w, z> by at most gamma ||w|| (1 - cos(pi/720)) < 1e-5 gamma ||w||, so
    points with |y<w,x>/||w|| - gamma| < 1e-4 are excluded as undecidable by the grid.
    """
    rng = ctx.rng
    n_inst = ctx.trials(20, minimum=4)
    radii = np.linspace(0.0, 1.0, 11)
    ang = np.linspace(0, 2 * np.pi, 720, endpoint=False)
    offs = (radii[:, None, None] * np.stack([np.cos(ang), np.sin(ang)], -1)[None]).reshape(-1, 2)
    mismatches, compared, raw_differs = 0, 0, 0
    for _ in range(n_inst):
        w = rng.normal(size=2) * rng.uniform(0.2, 5.0)
        r = np.sqrt(rng.uniform(size=200))
        phi = rng.uniform(0, 2 * np.pi, 200)
        X = np.stack([r * np.cos(phi), r * np.sin(phi)], -1)
        y = rng.choice([-1.0, 1.0], size=200)
        for g in (0.0, 0.05, 0.2, 0.5):
            nm = y * (X @ w) / np.linalg.norm(w)
            keep = np.abs(nm - g) >= 1e-4
            Z = X[keep, None, :] + g * offs[None]  # points x grid
            fooled = (np.sign(Z @ w) != y[keep, None]).any(axis=1)
            formula = nm[keep] <= g
            mismatches += int(np.sum(fooled != formula))
            compared += int(keep.sum())
            raw_differs += int(np.sum((y[keep] * (X[keep] @ w) <= g) != formula))
    return C.exact(float(mismatches), 0.0, sense="==", atol=0.0, points_compared=compared, instances=n_inst,
                   raw_w_disagreements=raw_differs,
                   note="raw_w_disagreements counts points where err_gamma on the unnormalised w differs: "
                        "the normalisation in Lemma 7 matters")


def _obs8_grid():
    vals = (0.01, 0.1, 0.5, 0.9, 0.99)
    return [(a, b) for a in vals for b in (1e-6, 1e-3, 0.01, 0.1, 0.5)]


def check_obs8_corrected(ctx: C.CheckContext) -> C.CheckResult:
    """Exact: with the corrected T, all T independent runs fail with probability xi^T <= 0.5 xi'."""
    worst = max(xi ** obs8_runs(xi, xp) / (0.5 * xp) for xi, xp in _obs8_grid())
    return C.exact(worst, 1.0, sense="<=", rtol=1e-12, grid=_obs8_grid(),
                   quantity="max over grid of xi^T / (0.5 xi')")


def check_obs8_as_printed(ctx: C.CheckContext) -> C.CheckResult:
    """Exact: the printed T = ceil(log(0.5 xi')/log(1 - xi)) does not make xi^T <= 0.5 xi' (an erratum; expected to fail)."""
    rows = []
    for xi, xp in _obs8_grid():
        T = max(1, math.ceil(math.log(0.5 * xp) / math.log(1 - xi)))
        rows.append((xi, xp, T, xi**T / (0.5 * xp)))
    worst = max(rows, key=lambda r: r[3])
    out = C.exact(worst[3], 1.0, sense="<=", rtol=1e-12, worst_case={"xi": worst[0], "xi_prime": worst[1], "T_printed": worst[2],
                  "T_corrected": obs8_runs(worst[0], worst[1]), "all_runs_fail_probability": worst[0] ** worst[2]})
    if out.status == "fail":
        out.details["erratum"] = ("Erratum (Observation 8): T = ceil(log(0.5 xi')/log(1 - xi)) treats xi as a "
                                  "success probability; with xi the failure probability T must be ceil(log(0.5 xi')/log xi) "
                                  "(e.g. xi=0.9, xi'=0.01: T=3 vs 51). The corrected T is the registered formula.")
    return out
