"""Legible figures (reports/plots.py and the experiment's figure1.png): no two tick labels overlap,
text is at least 8 pt, log axes are readable whatever the range, ratio 0 is drawn."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from privbound.reports import plots  # noqa: E402
from privbound.reports.membership import roc_loglog_figure  # noqa: E402


def _audits():
    rows = []
    for i, (claim, lb) in enumerate([(1.0, 0.73), (0.1, 0.0), (551.9, 3.44), (4.0, 6.94), (8.54, 0.0), (0.16, 0.84),
                                     (1.0, 13.6), (3.06, None), (2.0, 0.7), (0.9, 0.07)]):
        rows.append({"target": f"target-{i}-with-a-long-name", "planted_bug": i % 3 == 0, "paper": None,
                     "status": "violated" if (lb or 0) > claim and i % 3 else ("caught" if i % 3 == 0 else "holds"),
                     "result": {"epsilon_claimed": claim, "epsilon_lower_bound": lb, "delta": 0.0}})
    return rows


def _checks(ratios):
    out = []
    for i, r in enumerate(ratios):
        sense = ("<=", ">=", "==")[i % 3]
        out.append({"claim_id": f"paper/lemma-{i}", "check": "c", "kind": "deterministic", "status": "pass",
                    "observed": r, "bound": 1.0, "ratio": r, "details": {"sense": sense}})
    return out


def _scaling(x, y, slope=1.0, bound=2.0, ci=(0.5, 1.5)):
    return {"claim_id": "paper/theorem-1", "check": "s", "kind": "scaling", "observed": slope, "bound": bound,
            "details": {"x": list(x), "y": list(y), "intercept": float(np.log(y[0]) - slope * np.log(x[0])),
                        "slope_ci": list(ci), "parameter": "n"}}


def _smallest_text_points(fig) -> float:
    fig.canvas.draw()
    sizes = [t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]
    return min(sizes)


FIGURES = {
    "epsilon, one claim 551.9": lambda: plots.epsilon_figure(_audits()),
    "ratios 0 .. 1e14": lambda: plots.bound_ratio_figure("t", _checks([0.0, 1e-3, 0.5, 1.0, 3.0, 1e5, 1e14, -0.2])),
    "ratios near 1": lambda: plots.bound_ratio_figure("t", _checks([0.9, 0.95, 1.0, 1.02])),
    "scaling, 0.3 decades": lambda: plots.scaling_figure(_scaling([0.14, 0.2, 0.31], [210, 90, 20], -2.5, -2)),
    "scaling, 1 decade": lambda: plots.scaling_figure(_scaling([10, 20, 40, 80], [300, 1200, 3200, 12000], 1.8)),
    "scaling, 5 decades": lambda: plots.scaling_figure(_scaling(np.geomspace(10, 1e6, 6), np.geomspace(1e-3, 1e4, 6))),
    "scaling, narrow y": lambda: plots.scaling_figure(_scaling([256, 512, 1024], [238, 254, 473], 0.5, 0.5)),
    "roc": lambda: plots.roc_figure("x", {"fpr": [0, 0.3, 1], "tpr": [0, 0.7, 1]}, 1.0, 1e-5, (0.3, 0.7), n=1000),
    "roc, 10^6 outputs, band and mu": lambda: plots.roc_figure(
        "x", {"fpr": [0, 1e-6, 0.3, 1], "tpr": [0, 0.01, 0.7, 1]}, 1.0, 1e-5, (0.3, 0.7), n=10 ** 6,
        band={"fpr_lower": [0.2, 0.9], "fpr_upper": [0.4, 1.0], "tpr_lower": [0.6, 0.95], "tpr_upper": [0.8, 1.0]},
        certified_point=(0.4, 0.6), mu=0.8, confidence=0.95, datasets=("d0", "d1")),
    "membership roc, log-log": lambda: roc_loglog_figure("digits-logreg", [
        {"attack": a, "roc_fpr": list(np.geomspace(3e-4, 1, 50)), "roc_tpr": list(np.geomspace(3e-4, 1, 50) ** 0.5)}
        for a in ("lira-online", "lira-offline", "rmia-online", "rmia-offline", "loss")]),
}


@pytest.mark.parametrize("name", list(FIGURES))
def test_no_two_tick_labels_overlap_and_text_is_readable(name):
    fig = FIGURES[name]()
    try:
        assert plots.overlapping_tick_labels(fig) == []
        assert _smallest_text_points(fig) >= 8
        for ax in fig.axes:
            if ax.get_xscale() == "log":
                labels = [t for t in ax.xaxis.get_majorticklabels() if t.get_text()]
                assert len(labels) >= 2  # a log axis always shows at least two values
    finally:
        plt.close(fig)


def test_the_overlap_detector_sees_crowded_labels():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.set_xscale("log")
    ax.set_xlim(0.2, 9)  # matplotlib's default: minor labels 2x10^-1, 3x10^-1, ... collide
    try:
        assert plots.overlapping_tick_labels(fig)
    finally:
        plt.close(fig)


def test_ratio_zero_and_the_direction_of_each_check_are_drawn():
    fig = plots.bound_ratio_figure("t", _checks([0.0, 2.0, 0.5]))
    try:
        texts = [t.get_text() for t in fig.axes[0].texts]
        assert "0" in texts  # the ratio-0 row is labelled at the left edge, not a zero-length bar
        legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
        assert {"observed <= bound", "observed >= bound", "observed = bound"} <= set(legend)
        markers = {line.get_marker() for line in fig.axes[0].lines if len(line.get_xdata()) == 1}
        assert {"<", ">", "D"} <= markers
    finally:
        plt.close(fig)


def test_a_huge_claim_does_not_squash_the_others():
    fig = plots.epsilon_figure(_audits())
    try:
        ax = fig.axes[0]
        assert ax.get_xscale() == "log"
        lo, hi = ax.get_xlim()
        assert hi >= 551.9 and lo <= 0.07  # the 0.07 bound and the 551.9 claim both fit, decades apart
        assert [t.get_text() for t in ax.get_yticklabels()] == [a["target"] for a in _audits()]  # one row each
    finally:
        plt.close(fig)


def test_legends_are_readable_at_1400_px():
    fig = plots.roc_figure("x", {"fpr": [0, 1], "tpr": [0, 1]}, 1.0, 0.0, n=100)
    try:
        fig.canvas.draw()
        legend = fig.axes[0].get_legend()
        heights = [t.get_window_extent().height * plots.DPI / fig.dpi for t in legend.get_texts()]
        assert min(heights) >= 9  # pixels in the PNG, which the page shows at natural size
    finally:
        plt.close(fig)


def test_experiment_figure1_has_no_overlapping_tick_labels(monkeypatch):
    from privbound.reports.experiments import robust_halfspaces as E

    rows_eps = [dict(method=m, epsilon=e, delta=1e-5, mean=0.5 + 0.05 * i, std=0.02, trials=3)
                for m in E.METHODS for i, e in enumerate(E.EPSILONS)]
    rows_delta = [dict(method=m, epsilon=1.0, delta=d, mean=0.6, std=0.02, trials=3) for m in E.METHODS for d in E.DELTAS]
    rows_rob = [dict(method=m, epsilon=e, delta=1e-5, gamma=float(g), mean=max(0.0, 0.8 - g / 2), std=0.01, trials=3)
                for m in E.METHODS for e in E.ROBUST_EPSILONS for g in np.linspace(0, 1.5, 16)]
    kept = []
    monkeypatch.setattr(plt, "close", lambda fig=None: kept.append(fig))
    E._plot(io.BytesIO(), rows_eps, rows_delta, rows_rob, 1e-5, "digits", 3)
    monkeypatch.undo()
    fig = kept[0]
    try:
        assert plots.overlapping_tick_labels(fig) == []
        panel_a = fig.axes[0]
        assert [t.get_text() for t in panel_a.xaxis.get_majorticklabels() if t.get_text()] == \
            ["0.25", "0.5", "1", "2", "4", "8"]
    finally:
        plt.close(fig)


@pytest.mark.parametrize("confidence, text", [(0.95, "95%"), (0.5, "50%"), (0.975, "97.5%"), (0.99959, "99.959%"),
                                              (1.0, "100%")])
def test_a_confidence_label_tells_the_level_from_100_percent(confidence, text):
    assert plots.percent(confidence) == text


def test_reversing_the_tests_keeps_the_privacy_region_and_undoes_itself():
    rng = np.random.default_rng(0)
    fpr = np.sort(rng.uniform(0, 1, 200))
    tpr = np.sort(rng.uniform(0, 1, 200))
    eps, delta = 0.7, 1e-3
    inside = tpr <= plots.privacy_region_boundary(eps, delta, fpr)
    rf, rt = plots.reversed_tests(fpr, tpr)
    assert ((rt <= plots.privacy_region_boundary(eps, delta, rf) + 1e-12) == inside[::-1]).all()
    back = plots.reversed_tests(rf, rt)
    assert np.allclose(back[0], fpr) and np.allclose(back[1], tpr)
