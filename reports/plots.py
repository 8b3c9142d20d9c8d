"""Plots of a nightly run (matplotlib, Agg backend), returned as PNG bytes.

* :func:`roc_plot` -- an audit's tests on log-log axes with the boundary of the (epsilon, delta)
  privacy region: every test against an (epsilon, delta)-DP mechanism satisfies
  TPR <= e^eps FPR + delta and TPR <= 1 - e^-eps (1 - delta - FPR)
  (Kairouz, Oh & Viswanath 2015); the certified ROC (the conservative edge of the confidence band
  the result carries) as the statement, the empirical ROC as point estimates, the Gaussian-DP curve
  at the certified mu; a family of tests without a chosen one is drawn in the direction
  (:func:`reversed_tests`) in which it leaks further.
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

__all__ = ["privacy_region_boundary", "reversed_tests", "reversed_band", "leakage", "gdp_roc", "percent", "roc_plot",
           "epsilon_plot", "bound_ratio_plot", "scaling_plot", "roc_figure", "epsilon_figure", "bound_ratio_figure",
           "scaling_figure", "log_ticks", "overlapping_tick_labels", "DPI"]

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

LIGHT_BLUE, GDP_COLOUR = "#4f86cc", "#7b3f9e"


def reversed_tests(fpr, tpr) -> tuple[np.ndarray, np.ndarray]:
    """The tests ``(FPR, TPR)`` with the datasets' roles swapped: ``(1 - TPR, 1 - FPR)``, in reverse order.

    A test E with FPR ``P_a(E)`` and TPR ``P_b(E)`` gives the test "say a when E does not occur", whose FPR is
    ``P_b(not E) = 1 - TPR`` and TPR ``P_a(not E) = 1 - FPR``. The (epsilon, delta) region and every Gaussian-DP
    curve are symmetric under this map; on log axes it moves a leak near (1, 1), where the axes squash it, to
    the lower left, where they show it. A confidence box maps to a confidence box (its corners swap).
    """
    return 1.0 - np.asarray(tpr, dtype=float)[::-1], 1.0 - np.asarray(fpr, dtype=float)[::-1]


def reversed_band(band: dict[str, list[float]]) -> dict[str, np.ndarray]:
    """A simultaneous band (``fpr_lower``, ``fpr_upper``, ``tpr_lower``, ``tpr_upper`` per test) after
    :func:`reversed_tests`: each test's box ``[fl, fu] x [tl, tu]`` becomes ``[1 - tu, 1 - tl] x [1 - fu, 1 - fl]``."""
    fpr_lower, tpr_upper = reversed_tests(band["fpr_lower"], band["tpr_upper"])
    fpr_upper, tpr_lower = reversed_tests(band["fpr_upper"], band["tpr_lower"])
    return {"fpr_lower": fpr_lower, "fpr_upper": fpr_upper, "tpr_lower": tpr_lower, "tpr_upper": tpr_upper}


def leakage(fpr, tpr, delta: float, floor: float) -> float:
    """How far above the diagonal the tests reach on log axes: the largest ``ln((TPR - delta) / FPR)``, an FPR
    below ``floor`` counted at ``floor``; ``-inf`` when no TPR exceeds delta."""
    fpr = np.maximum(np.asarray(fpr, dtype=float), floor)
    excess = np.asarray(tpr, dtype=float) - delta
    ok = excess > 0
    return float(np.max(np.log(excess[ok]) - np.log(fpr[ok]))) if ok.any() else -math.inf


def gdp_roc(fpr, mu: float) -> np.ndarray:
    """The ROC of mu-Gaussian DP: ``TPR = 1 - G_mu(FPR)`` (:func:`privbound.audit.tradeoff.gaussian_tradeoff`)."""
    from privbound.audit.tradeoff import gaussian_tradeoff

    return 1.0 - gaussian_tradeoff(fpr, mu)


def _drawable(point: tuple | None) -> bool:
    """``point`` is an (FPR, TPR) pair of finite rates."""
    return point is not None and all(v is not None and math.isfinite(v) for v in point)


def _reversed_point(point: tuple | None) -> tuple | None:
    """One (FPR, TPR) pair through :func:`reversed_tests`; None when it is not :func:`_drawable`."""
    return (1.0 - point[1], 1.0 - point[0]) if _drawable(point) else None


def _shown(floor: float, v) -> np.ndarray:
    """Rates as drawn: a rate below ``floor`` (a 0) at the axis' edge."""
    return np.clip(np.asarray(v, dtype=float), floor, 1.0)


def percent(confidence: float) -> str:
    """A confidence as a percentage with the digits that tell it from 100%: ``95%``, ``99.959%``."""
    miss = 100.0 * (1.0 - confidence)
    digits = max(0, 1 - math.floor(math.log10(miss))) if miss > 0 else 0
    text = f"{100.0 * confidence:.{digits}f}"
    return (text.rstrip("0").rstrip(".") if "." in text else text) + "%"


def _chords(x, y, per: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """The polyline through ``(x, y)`` with about ``2 per`` points on each segment, spaced geometrically towards
    both of its ends, so that log axes draw its straight (linear-scale) segments down to rates near 0: the
    randomised mixtures of neighbouring tests."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 2:
        return x, y
    ends = np.geomspace(1e-6, 0.5, per)
    s = np.unique(np.concatenate([[0.0], ends, 1.0 - ends]))
    xs = np.concatenate([x[:-1, None] + s * np.diff(x)[:, None], x[-1:, None]], axis=None)
    ys = np.concatenate([y[:-1, None] + s * np.diff(y)[:, None], y[-1:, None]], axis=None)
    return xs, ys


def roc_figure(name: str, roc: dict[str, list[float]], epsilon: float, delta: float, point: tuple | None = None,
               band: dict[str, list[float]] | None = None, *, n: int, certified_point: tuple | None = None,
               mu: float | None = None, confidence: float | None = None, datasets: tuple[str, str] | None = None,
               direction: str = "leakier"):
    """An audit's tests on log-log axes beside the (epsilon, delta) region's boundary.

    On log axes the boundary TPR = e^eps FPR + delta is a line above the diagonal by eps (in natural-log units),
    so a test inside the region sits visibly below it whatever epsilon is. What is drawn:

    * ``band`` (``fpr_lower``, ``fpr_upper``, ``tpr_lower``, ``tpr_upper`` per test: a simultaneous band at
      ``confidence``) shaded, and its conservative edge ``(fpr_upper, tpr_lower)`` as the certified ROC -- the
      statement: the mechanism has tests (randomised mixtures between the points) at least this good. If the
      mechanism is (epsilon, delta)-DP, it stays out of the "impossible if DP" region with probability at
      least ``confidence`` (the region is convex, so the segments between the points do too).
    * ``roc`` (``fpr``, ``tpr``: the family's empirical rates) lighter, as point estimates: where the true curve
      runs along the boundary (a correct, tight claim) about half of them lie above it by sampling noise alone.
    * ``point``, the chosen test's empirical (FPR, TPR), and ``certified_point``, its Clopper--Pearson
      corner (upper FPR, lower TPR).
    * ``mu`` > 0: the ROC of mu-Gaussian DP, which the certified curve touches (no smaller mu holds).

    ``n`` is the number of evaluation outputs per dataset (the larger side): rates of 0 are drawn hollow at
    the left or lower edge ``1 / (2 n)``, below the smallest positive rate ``1 / n`` the outputs can show.
    ``datasets`` (FPR's, TPR's) names the datasets the rates are measured on. ``direction="leakier"``: when the
    tests with the datasets' roles swapped (:func:`reversed_tests`) reach further above the diagonal -- the
    certified ones when there is a band, else the estimates -- everything is drawn swapped, and the legend's
    title says so; ``"traced"``: as given (the direction of a chosen test, which its estimator picked).
    """
    if direction not in ("leakier", "traced"):
        raise ValueError(f"direction must be 'leakier' or 'traced', got {direction!r}")
    fpr, tpr = np.asarray(roc["fpr"], dtype=float), np.asarray(roc["tpr"], dtype=float)
    positive = np.concatenate([fpr[fpr > 0], tpr[tpr > 0]])
    floor = min(0.5 / max(int(n), 1), float(positive.min()) / 2 if positive.size else 1.0)
    cert_f = cert_t = None
    if band is not None:
        cert_f, cert_t = np.asarray(band["fpr_upper"], float), np.asarray(band["tpr_lower"], float)
    judged = (cert_f, cert_t) if band is not None else (fpr, tpr)
    swap = direction == "leakier" and leakage(*reversed_tests(*judged), delta, floor) > leakage(*judged, delta, floor)
    if swap:
        fpr, tpr = reversed_tests(fpr, tpr)
        if band is not None:
            band = reversed_band(band)
            cert_f, cert_t = band["fpr_upper"], band["tpr_lower"]
        point, certified_point = _reversed_point(point), _reversed_point(certified_point)
        datasets = None if datasets is None else datasets[::-1]
    level = "" if confidence is None else f" ({percent(confidence)})"

    fig, ax = plt.subplots(figsize=(4.0, 3.8))  # three panels to a row of report.html
    grid = np.geomspace(floor, 1.0, 400)
    boundary = np.maximum(privacy_region_boundary(epsilon, delta, grid), floor)
    ax.fill_between(grid, boundary, 1, color="#f4cccc", label="impossible if DP")
    ax.plot(grid, boundary, color=RED, lw=1, label=f"({epsilon:.3g}, {delta:g}) boundary")
    if mu is not None and mu > 0 and math.isfinite(mu):
        ax.plot(grid, _shown(floor, gdp_roc(grid, mu)), color=GDP_COLOUR, lw=1, ls="--",
                label=f"Gaussian DP at the mu lower bound {mu:.3g} (a reference curve)")
    if band is not None:
        ax.fill(np.concatenate([_shown(floor, band["fpr_lower"]), _shown(floor, band["fpr_upper"])[::-1]]),
                np.concatenate([_shown(floor, band["tpr_upper"]), _shown(floor, band["tpr_lower"])[::-1]]),
                color=BLUE, alpha=0.12, lw=0, label="confidence band")
    ax.plot(_shown(floor, fpr), _shown(floor, tpr), color=LIGHT_BLUE, lw=0.6, marker=".", ms=4, alpha=0.6,
            label="ROC point estimates (not a bound)")
    at_edge = (fpr < floor) | (tpr < floor)
    if at_edge.any():
        ax.plot(_shown(floor, fpr[at_edge]), _shown(floor, tpr[at_edge]), "o", mfc="white", mec=LIGHT_BLUE, ms=4,
                alpha=0.6)
    if band is not None:
        xs, ys = _chords(cert_f, cert_t)  # a segment to a rate below the floor leaves the axes where it crosses them
        ax.plot(np.where(xs > 0, xs, np.nan), np.where(ys > 0, ys, np.nan), color=BLUE, lw=1.8, alpha=1.0,
                label=f"certified ROC{level}")
    if _drawable(point):
        hollow = point[0] < floor or point[1] < floor
        ax.plot(_shown(floor, [point[0]]), _shown(floor, [point[1]]), "o", mfc="white" if hollow else GREY,
                mec=GREY, ms=5, alpha=0.6, label="chosen test, estimate")
    if _drawable(certified_point):
        ax.plot(_shown(floor, [certified_point[0]]), _shown(floor, [certified_point[1]]), "o", color="black", ms=5,
                alpha=1.0, label="chosen test, certified")
    ax.plot([floor, 1], [floor, 1], color="grey", lw=0.5, ls=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(floor, 1)
    ax.set_ylim(floor, 1.05)
    log_ticks(ax.xaxis, floor, 1)
    log_ticks(ax.yaxis, floor, 1)
    ax.minorticks_off()  # one panel per audit: the decades are enough, and unlabelled minor ticks cost half its time
    neg, pos = datasets if datasets is not None else ("", "")
    ax.set_xlabel(f"FPR{f' on {neg}' if neg else ''} (log scale)", fontsize=FONT)
    ax.set_ylabel(f"TPR{f' on {pos}' if pos else ''} (log scale)", fontsize=FONT)
    ax.tick_params(labelsize=SMALL, which="both")
    ax.set_title(name, fontsize=FONT)
    title = None
    if swap:
        title = (f"drawn reversed: tests saying {pos}" if pos else "drawn reversed: the datasets swapped") + \
            ", the leakier way"
    ax.legend(fontsize=SMALL, loc="upper center", bbox_to_anchor=(0.5, -0.14), framealpha=0.9, title=title,
              title_fontsize=SMALL)  # below the axes, where it hides no test
    return fig


def roc_plot(name: str, roc: dict[str, list[float]], epsilon: float, delta: float, point: tuple | None = None,
             band: dict[str, list[float]] | None = None, **kw) -> bytes:
    """:func:`roc_figure` as PNG bytes."""
    return _png(roc_figure(name, roc, epsilon, delta, point, band, **kw))


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
