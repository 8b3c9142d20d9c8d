"""Plots of a nightly run (matplotlib, Agg backend), returned as PNG bytes.

* :func:`roc_plot` -- an audit's ROC curve on log-log axes with the boundary of the (epsilon, delta)
  privacy region: every test against an (epsilon, delta)-DP mechanism satisfies
  TPR <= e^eps FPR + delta and TPR <= 1 - e^-eps (1 - delta - FPR)
  (Kairouz, Oh & Viswanath 2015), and the confidence band the result carries.
* :func:`epsilon_plot` -- each target's empirical epsilon lower bound beside its claim, one
  row per target on a log axis, so that no single large claim squashes the others.
* :func:`bound_ratio_plot` -- observed / bound of the bound checks on a log axis, each
  marked with the direction it must hold in; ratio 0 is drawn at the left edge.
* :func:`scaling_plot` -- a log-log sample-complexity fit next to the theorem's exponent.

Every ``*_plot`` has a ``*_figure`` twin returning the matplotlib figure. Log axes get
:func:`log_ticks` (labelled major ticks only, at most about seven of them);
:func:`overlapping_tick_labels` finds tick labels whose rendered extents overlap, which the
tests require to be none. Text is at least 8 pt at the 100 dpi the PNGs are written at.
"""

from __future__ import annotations

import io
import math
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import (FixedLocator, FuncFormatter, LogFormatterSciNotation, LogLocator,  # noqa: E402
                               MaxNLocator, NullFormatter)

__all__ = ["privacy_region_boundary", "roc_plot", "epsilon_plot", "bound_ratio_plot", "scaling_plot", "roc_figure",
           "epsilon_figure", "bound_ratio_figure", "scaling_figure", "log_ticks", "overlapping_tick_labels", "DPI"]

DPI = 100
FONT = 9  # points: 12.5 px at DPI
SMALL = 8

BLUE, RED, GREY = "#1f4e79", "#cc0000", "#777777"


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _plain(v: float, _pos=None) -> str:
    """A tick label: plain digits for everyday magnitudes, m x 10^e otherwise."""
    if v == 0 or 1e-3 <= abs(v) < 1e5:
        return f"{v:g}"
    e = math.floor(math.log10(abs(v)))
    m = v / 10.0 ** e
    return f"$10^{{{e}}}$" if math.isclose(m, 1.0) else f"${m:g}\\times10^{{{e}}}$"


def log_ticks(axis, lo: float, hi: float) -> None:
    """Readable ticks on a log ``axis`` spanning [lo, hi]: labelled majors only, never crowded.

    Up to 2.5 decades: 1-2-5 steps (1-2-3-5, then finer, when that gives fewer than three
    labels); wider: powers of ten in scientific notation, thinned to at most seven labels.
    Minor ticks are drawn but never labelled.
    """
    lo, hi = float(min(lo, hi)), float(max(lo, hi))
    decades = math.log10(hi / lo) if lo > 0 and hi > 0 else 0.0
    if decades <= 2.5:
        exps = range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
        ticks: list[float] = []
        for subs in ((1, 2, 5), (1, 2, 3, 5), (1, 1.5, 2, 3, 4, 5, 7)):
            ticks = [m * 10.0 ** e for e in exps for m in subs if lo <= m * 10.0 ** e <= hi]
            if len(ticks) >= 3:
                break
        if len(ticks) < 2:
            ticks = [t for t in MaxNLocator(nbins=3).tick_values(lo, hi) if lo <= t <= hi and t > 0]
        axis.set_major_locator(FixedLocator(ticks))
        axis.set_major_formatter(FuncFormatter(_plain))
    else:
        axis.set_major_locator(LogLocator(base=10, numticks=7))
        axis.set_major_formatter(LogFormatterSciNotation(base=10))
    axis.set_minor_locator(LogLocator(base=10, subs=np.arange(2, 10), numticks=12))
    axis.set_minor_formatter(NullFormatter())


def overlapping_tick_labels(fig) -> list[tuple[str, str]]:
    """Pairs of visible tick labels of the same axis whose rendered boxes overlap (empty when legible)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    pairs = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            along = 0 if axis is ax.xaxis else 1
            labels = [t for t in axis.get_majorticklabels() + axis.get_minorticklabels()
                      if t.get_visible() and t.get_text().strip()
                      and lo - 1e-12 * abs(lo) <= t.get_position()[along] <= hi + 1e-12 * abs(hi)]
            boxes = [t.get_window_extent(renderer) for t in labels]
            for i in range(len(labels)):
                for j in range(i + 1, len(labels)):
                    a, b = boxes[i], boxes[j]
                    if a.x0 < b.x1 - 0.5 and b.x0 < a.x1 - 0.5 and a.y0 < b.y1 - 0.5 and b.y0 < a.y1 - 0.5:
                        pairs.append((labels[i].get_text(), labels[j].get_text()))
    return pairs


def privacy_region_boundary(epsilon: float, delta: float, fpr: np.ndarray) -> np.ndarray:
    """The largest TPR any test can have at ``fpr`` against an (epsilon, delta)-DP mechanism."""
    fpr = np.asarray(fpr, dtype=float)
    a = math.exp(min(epsilon, 700.0)) * fpr + delta
    b = 1.0 - math.exp(-epsilon) * (1.0 - delta - fpr)
    return np.clip(np.minimum(a, b), 0.0, 1.0)


# ------------------------------------------------------------------------- ROC


def roc_figure(name: str, roc: dict[str, list[float]], epsilon: float, delta: float, point: tuple | None = None,
               band: dict[str, list[float]] | None = None):
    """The attack's ROC on log-log axes beside the (epsilon, delta) region's boundary.

    On log axes the boundary TPR = e^eps FPR + delta is a line above the diagonal by eps (in natural-log
    units), so a correct target's curve sits visibly below it whatever epsilon is -- on linear axes a boundary
    at eps >= 3 hugs the axes and a correct curve looks as if it touched it. FPR and TPR of 0 are drawn at the
    lower edge (hollow markers), the smallest rate the trials can show being about 1/n. ``band`` (``fpr_lower``,
    ``fpr_upper``, ``tpr_lower``, ``tpr_upper``: a simultaneous confidence band the result carries) is shaded.
    """
    fpr = np.asarray(roc["fpr"], dtype=float)
    tpr = np.asarray(roc["tpr"], dtype=float)
    positive = np.concatenate([fpr[fpr > 0], tpr[tpr > 0]])
    floor = max(min(float(positive.min()) / 2 if positive.size else 1e-3, 1e-2), 1e-6)
    fig, ax = plt.subplots(figsize=(4.2, 4.0))
    grid = np.geomspace(floor, 1.0, 400)
    boundary = np.maximum(privacy_region_boundary(epsilon, delta, grid), floor)
    ax.fill_between(grid, boundary, 1, color="#f4cccc", label="impossible if DP")
    ax.plot(grid, boundary, color=RED, lw=1, label=f"({epsilon:.3g}, {delta:g}) boundary")
    if band is not None:
        up = np.clip(np.asarray(band["tpr_upper"], float), floor, 1)
        lo = np.clip(np.asarray(band["tpr_lower"], float), floor, 1)
        fx_lo = np.clip(np.asarray(band["fpr_lower"], float), floor, 1)
        fx_hi = np.clip(np.asarray(band["fpr_upper"], float), floor, 1)
        ax.fill(np.concatenate([fx_lo, fx_hi[::-1]]), np.concatenate([up, lo[::-1]]), color=BLUE, alpha=0.15, lw=0,
                label="confidence band")
    shown_f, shown_t = np.maximum(fpr, floor), np.maximum(tpr, floor)
    ax.plot(shown_f, shown_t, color=BLUE, lw=1.5, label="attack ROC")
    at_edge = (fpr <= 0) | (tpr <= 0)
    if at_edge.any():
        ax.plot(shown_f[at_edge], shown_t[at_edge], "o", mfc="white", mec=BLUE, ms=4)
    if point is not None and all(v is not None and math.isfinite(v) for v in point):
        ax.plot([max(point[0], floor)], [max(point[1], floor)], "o", color="black", ms=5, label="chosen test")
    ax.plot([floor, 1], [floor, 1], color="grey", lw=0.5, ls=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(floor, 1)
    ax.set_ylim(floor, 1.05)
    log_ticks(ax.xaxis, floor, 1)
    log_ticks(ax.yaxis, floor, 1)
    ax.minorticks_off()  # one panel per audit: the decades are enough, and unlabelled minor ticks cost half its time
    ax.set_xlabel("FPR (log scale)", fontsize=FONT)
    ax.set_ylabel("TPR (log scale)", fontsize=FONT)
    ax.tick_params(labelsize=SMALL, which="both")
    ax.set_title(name, fontsize=FONT)
    ax.legend(fontsize=SMALL, loc="lower right", framealpha=0.9)
    return fig


def roc_plot(name: str, roc: dict[str, list[float]], epsilon: float, delta: float, point: tuple | None = None,
             band: dict[str, list[float]] | None = None) -> bytes:
    return _png(roc_figure(name, roc, epsilon, delta, point, band))


# -------------------------------------------------------------- epsilon vs claim


def _row_height(n: int) -> float:
    return 0.24 * max(3, n) + 1.3


def epsilon_figure(audits: list[dict[str, Any]], title: str = "empirical epsilon lower bound against the claim"):
    """One row per audit: its claimed epsilon (bar) and its empirical lower bound (dot), on a log axis.

    A lower bound of 0 (no event told the datasets apart) is drawn hollow at the left edge;
    an infinite one as a triangle at the right edge.
    """
    rows = [a for a in audits if a.get("result")]
    fig, ax = plt.subplots(figsize=(7.5, _row_height(len(rows))))
    vals = [v for a in rows for v in (a["result"].get("epsilon_claimed"), a["result"].get("epsilon_lower_bound"))
            if v is not None and v > 0 and math.isfinite(v)]
    lo = min(vals) / 2 if vals else 0.05
    hi = max(vals) * 2 if vals else 10.0
    lo, hi = min(lo, 0.5), max(hi, 2.0)
    edge_lo, edge_hi = lo / 1.5, hi * 1.5  # the axis; markers for 0 and infinity sit at lo and hi
    for i, a in enumerate(rows):
        r = a["result"]
        claim, lb = r.get("epsilon_claimed"), r.get("epsilon_lower_bound")
        # red: an audit that must catch a violation (a planted bug, a float-unsafe implementation's
        # floating-point audit); its status is "caught" or "missed"
        colour = RED if a["planted_bug"] or a["status"] in ("caught", "missed") else BLUE
        bad = a["status"] in ("violated", "missed", "error")
        if claim is not None and claim > 0:
            ax.plot([claim], [i], "|", color="black", ms=12, mew=2)
        if lb is None:
            ax.plot([hi], [i], ">", color=colour, ms=7)
        elif lb <= 0:
            ax.plot([lo], [i], "o", mfc="white", mec=colour, ms=6)
        else:
            if claim is not None and claim > 0:
                ax.plot([min(lb, claim), max(lb, claim)], [i, i], color=colour, lw=0.8, alpha=0.5)
            ax.plot([lb], [i], "X" if bad else "o", color=colour, ms=7 if bad else 6)
    ax.set_xscale("log")
    ax.set_xlim(edge_lo, edge_hi)
    log_ticks(ax.xaxis, edge_lo, edge_hi)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([a["target"] for a in rows], fontsize=SMALL)
    ax.tick_params(axis="x", labelsize=SMALL)
    ax.grid(axis="x", which="major", alpha=0.3)
    ax.set_xlabel("epsilon (log scale)", fontsize=FONT)
    ax.set_title(title, fontsize=FONT)
    handles = [
        plt.Line2D([], [], ls="", marker="|", color="black", ms=10, mew=2, label="claimed epsilon"),
        plt.Line2D([], [], ls="", marker="o", color=BLUE, label="lower bound, correct target"),
        plt.Line2D([], [], ls="", marker="o", color=RED, label="lower bound, planted bug / float-unsafe"),
        plt.Line2D([], [], ls="", marker="o", mfc="white", mec=GREY, label="lower bound 0 (left edge)"),
        plt.Line2D([], [], ls="", marker="X", color=GREY, label="violated / missed"),
    ]
    ax.legend(handles=handles, fontsize=SMALL, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return fig


def epsilon_plot(audits: list[dict[str, Any]], title: str = "empirical epsilon lower bound against the claim") -> bytes:
    return _png(epsilon_figure(audits, title))


# ------------------------------------------------------------ observed / bound

_SENSE_MARKER = {"<=": ("<", "observed <= bound"), ">=": (">", "observed >= bound"), "==": ("D", "observed = bound")}


def check_sense(check: dict[str, Any]) -> str:
    """``<=``, ``>=`` or ``==``: which way a deterministic, exact or probabilistic check must hold."""
    sense = (check.get("details") or {}).get("sense")
    return sense if sense in _SENSE_MARKER else "<="


def bound_ratio_figure(title: str, checks: list[dict[str, Any]]):
    """observed / bound of each check, on a log axis; the marker points the way the check must hold.

    ``<`` marks "observed <= bound" (passes left of 1), ``>`` "observed >= bound" (passes
    right of 1), a diamond "observed = bound". A ratio of 0 or below is drawn hollow at
    the left edge.
    """
    rows = [c for c in checks if c.get("ratio") is not None and c.get("observed") is not None]
    fig, ax = plt.subplots(figsize=(7.5, _row_height(len(rows))))
    pos = [c["ratio"] for c in rows if c["ratio"] > 0 and math.isfinite(c["ratio"])]
    lo = min(min(pos) / 3, 0.3) if pos else 0.1
    hi = max(max(pos) * 3, 3.0) if pos else 10.0
    for i, c in enumerate(rows):
        colour = RED if c["status"] == "fail" and not c.get("expected") else (
            "#8a6d00" if c.get("expected") else (GREY if c["status"] == "inconclusive" else BLUE))
        marker = _SENSE_MARKER[check_sense(c)][0]
        ratio = c["ratio"]
        if ratio <= 0:
            ax.plot([lo], [i], marker, mfc="white", mec=colour, ms=7)
            ax.annotate("0" if ratio == 0 else "< 0", (lo, i), xytext=(7, 0), textcoords="offset points",
                        va="center", fontsize=SMALL, color=colour)
        else:
            ax.plot([1.0, ratio], [i, i], color=colour, lw=1.5, alpha=0.4)
            ax.plot([ratio], [i], marker, color=colour, ms=7)
    ax.axvline(1.0, color="black", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_xlim(lo / 1.6, hi)
    log_ticks(ax.xaxis, lo / 1.6, hi)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{c['claim_id'].split('/', 1)[-1]}:{c['check']}" for c in rows], fontsize=SMALL)
    ax.tick_params(axis="x", labelsize=SMALL)
    ax.grid(axis="x", which="major", alpha=0.3)
    ax.set_xlabel("observed / bound (log scale; 1 = at the bound)", fontsize=FONT)
    ax.set_title(title, fontsize=FONT)
    handles = [plt.Line2D([], [], ls="", marker=m, color=GREY, ms=7, label=lab) for m, lab in _SENSE_MARKER.values()]
    handles += [plt.Line2D([], [], ls="", marker="s", color=col, label=lab)
                for col, lab in ((BLUE, "pass"), (RED, "fail"), ("#8a6d00", "documented erratum"),
                                 (GREY, "inconclusive"))]
    ax.legend(handles=handles, fontsize=SMALL, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return fig


def bound_ratio_plot(title: str, checks: list[dict[str, Any]]) -> bytes:
    return _png(bound_ratio_figure(title, checks))


# --------------------------------------------------------------------- scaling


def scaling_figure(check: dict[str, Any]):
    d = check["details"]
    x = np.asarray(d["x"], float)
    y = np.asarray(d["y"], float)
    fig, ax = plt.subplots(figsize=(4.6, 3.8))
    ax.loglog(x, y, "o", color=BLUE, label="empirical")
    grid = np.geomspace(x.min(), x.max(), 50)
    lo, hi = d["slope_ci"]
    ci = f"[{lo:.2f}, {hi:.2f}]" if hi is not None and math.isfinite(hi) else f">= {lo:.2f} (one-sided)"
    fit = np.exp(d["intercept"]) * grid ** check["observed"]
    ax.loglog(grid, fit, color=BLUE, lw=1, label=f"fit: slope {check['observed']:.2f} {ci}")
    mid = np.exp(np.mean(np.log(x)))
    anchor = np.exp(d["intercept"]) * mid ** check["observed"]
    theory = anchor * (grid / mid) ** check["bound"]
    ax.loglog(grid, theory, color=RED, ls="--", lw=1, label=f"theorem: slope {check['bound']:g}")
    ys = np.concatenate([y, fit, theory])
    ys = ys[np.isfinite(ys) & (ys > 0)]
    ax.set_xlim(x.min() / 1.15, x.max() * 1.15)
    ax.set_ylim(ys.min() / 1.3, ys.max() * 1.3)
    log_ticks(ax.xaxis, x.min() / 1.15, x.max() * 1.15)
    log_ticks(ax.yaxis, ys.min() / 1.3, ys.max() * 1.3)
    ax.tick_params(labelsize=SMALL, which="both")
    ax.set_xlabel(d.get("parameter", "x"), fontsize=FONT)
    ax.set_ylabel("empirical threshold", fontsize=FONT)
    ax.set_title(f"{check['claim_id']}:{check['check']}", fontsize=FONT)
    ax.legend(fontsize=SMALL)
    return fig


def scaling_plot(check: dict[str, Any]) -> bytes:
    return _png(scaling_figure(check))
