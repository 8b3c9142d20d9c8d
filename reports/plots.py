"""Plots of a nightly run (matplotlib, Agg backend), returned as PNG bytes.

* :func:`roc_plot` -- an audit's ROC curve with the boundary of the (epsilon, delta)
  privacy region: every test against an (epsilon, delta)-DP mechanism satisfies
  TPR <= e^eps FPR + delta and TPR <= 1 - e^-eps (1 - delta - FPR)
  (Kairouz, Oh & Viswanath 2015).
* :func:`epsilon_plot` -- empirical epsilon lower bound against the claimed epsilon.
* :func:`bound_ratio_plot` -- observed / bound of the mistake, update and other
  bound checks.
* :func:`scaling_plot` -- a log-log sample-complexity fit next to the theorem's exponent.
"""

from __future__ import annotations

import io
import math
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

__all__ = ["privacy_region_boundary", "roc_plot", "epsilon_plot", "bound_ratio_plot", "scaling_plot"]


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def privacy_region_boundary(epsilon: float, delta: float, fpr: np.ndarray) -> np.ndarray:
    """The largest TPR any test can have at ``fpr`` against an (epsilon, delta)-DP mechanism."""
    fpr = np.asarray(fpr, dtype=float)
    a = math.exp(epsilon) * fpr + delta
    b = 1.0 - math.exp(-epsilon) * (1.0 - delta - fpr)
    return np.clip(np.minimum(a, b), 0.0, 1.0)


def roc_plot(name: str, roc: dict[str, list[float]], epsilon: float, delta: float, point: tuple | None = None) -> bytes:
    fig, ax = plt.subplots(figsize=(3.6, 3.4))
    grid = np.linspace(0, 1, 401)
    ax.fill_between(grid, privacy_region_boundary(epsilon, delta, grid), 1, color="#f4cccc", label="impossible if DP")
    ax.plot(grid, privacy_region_boundary(epsilon, delta, grid), color="#cc0000", lw=1,
            label=f"({epsilon:g}, {delta:g}) boundary")
    ax.plot(roc["fpr"], roc["tpr"], color="#1f4e79", lw=1.5, label="attack ROC")
    if point is not None and all(v is not None for v in point):
        ax.plot([point[0]], [point[1]], "o", color="black", ms=4, label="chosen test")
    ax.plot([0, 1], [0, 1], color="grey", lw=0.5, ls=":")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("FPR")
    ax.set_ylabel("TPR")
    ax.set_title(name, fontsize=9)
    ax.legend(fontsize=6, loc="lower right")
    return _png(fig)


def epsilon_plot(audits: list[dict[str, Any]]) -> bytes:
    fig, ax = plt.subplots(figsize=(6, 4))
    top = 0.0
    for a in audits:
        r = a.get("result")
        if not r:
            continue
        x, y = r["epsilon_claimed"], r["epsilon_lower_bound"]
        top = max(top, x, y)
        colour = "#cc0000" if a["planted_bug"] else "#1f4e79"
        marker = "x" if a["status"] in ("violated", "missed", "error") else "o"
        ax.plot([x], [y], marker, color=colour, ms=5)
        ax.annotate(a["target"], (x, y), fontsize=5, xytext=(2, 2), textcoords="offset points")
    top = max(top, 1.0) * 1.1
    ax.plot([0, top], [0, top], color="grey", lw=0.8, ls="--", label="lower bound = claim")
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.set_xlabel("claimed epsilon")
    ax.set_ylabel("empirical epsilon lower bound")
    ax.plot([], [], "o", color="#1f4e79", label="correct target")
    ax.plot([], [], "o", color="#cc0000", label="planted bug")
    ax.legend(fontsize=7)
    return _png(fig)


def bound_ratio_plot(title: str, checks: list[dict[str, Any]]) -> bytes:
    """observed / bound for each check (<= 1 means the bound held)."""
    rows = [c for c in checks if c.get("ratio") is not None and c.get("observed") is not None]
    fig, ax = plt.subplots(figsize=(6, 0.25 * max(4, len(rows)) + 0.8))
    labels = [f"{c['claim_id'].split('/', 1)[1]}:{c['check']}" for c in rows]
    ratios = [c["ratio"] for c in rows]
    colours = ["#cc0000" if c["status"] == "fail" else ("#999999" if c["status"] == "inconclusive" else "#1f4e79")
               for c in rows]
    ax.barh(range(len(rows)), ratios, color=colours)
    ax.axvline(1.0, color="black", lw=0.8, ls="--")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=6)
    ax.set_xscale("symlog", linthresh=1e-3)
    ax.set_xlabel("observed / bound")
    ax.set_title(title, fontsize=9)
    ax.invert_yaxis()
    return _png(fig)


def scaling_plot(check: dict[str, Any]) -> bytes:
    d = check["details"]
    x = np.asarray(d["x"], float)
    y = np.asarray(d["y"], float)
    fig, ax = plt.subplots(figsize=(3.8, 3.2))
    ax.loglog(x, y, "o", color="#1f4e79", label="empirical")
    grid = np.geomspace(x.min(), x.max(), 50)
    lo, hi = d["slope_ci"]
    ci = f"[{lo:.2f}, {hi:.2f}]" if hi is not None and math.isfinite(hi) else f">= {lo:.2f} (one-sided)"
    ax.loglog(grid, np.exp(d["intercept"]) * grid ** check["observed"], color="#1f4e79", lw=1,
              label=f"fit: slope {check['observed']:.2f} {ci}")
    mid = np.exp(np.mean(np.log(x)))
    anchor = np.exp(d["intercept"]) * mid ** check["observed"]
    ax.loglog(grid, anchor * (grid / mid) ** check["bound"], color="#cc0000", ls="--", lw=1,
              label=f"theorem: slope {check['bound']:g}")
    ax.set_xlabel(d.get("parameter", "x"))
    ax.set_ylabel("empirical threshold")
    ax.set_title(f"{check['claim_id']}:{check['check']}", fontsize=8)
    ax.legend(fontsize=6)
    return _png(fig)
