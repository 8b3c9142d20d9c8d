"""The ROC panels of report.html say what the audit showed: a rate of 0 at the resolution of the evaluation
outputs, the family drawn in the direction it leaks, the certified curve as the statement beside the point
estimates, and the Gaussian-DP mu beside the epsilon bound (reports/plots.py, reports/html.py, summary.md)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from privbound.audit import audit_mechanism  # noqa: E402
from privbound.audit.estimators import WhiteBox  # noqa: E402
from privbound.reports import plots  # noqa: E402
from privbound.reports.html import render_html  # noqa: E402
from privbound.reports.nightly import render_summary  # noqa: E402
from privbound.reports.schema import NightlyResults  # noqa: E402

TARGET = "panel-target"


def _night(result: dict, status: str) -> NightlyResults:
    audit = {"target": TARGET, "family": "f", "paper": None, "planted_bug": False, "status": status, "error": None,
             "result": result}
    return NightlyResults.from_dict({
        "schema": "privbound.nightly/2", "profile": "smoke", "started_utc": "2026-01-01T00:00:00+00:00",
        "finished_utc": "2026-01-01T00:00:00+00:00", "wall_seconds": 1.0, "code_version": "test", "seed": 0,
        "audit_family_confidence": 0.95, "audit_confidence": 0.95, "audits": [audit], "checks": [],
        "counts": {"holds": 0, "violated": 0, "caught": 0, "missed": 0, "error": 0, "checks_pass": 0,
                   "checks_fail": 0, "checks_inconclusive": 0, "checks_expected_fail": 0}})


@pytest.fixture
def panel(monkeypatch):
    """``panel(result, status)``: the axes of the ROC panel report.html draws for an audit with ``result``
    (``AuditResult.to_dict()``, as in results.json)."""

    def draw(result: dict, status: str = "holds"):
        figures = []
        monkeypatch.setattr(plots, "_png", lambda fig: figures.append(fig) or b"")
        render_html(_night(result, status))
        axes = [ax for fig in figures for ax in fig.axes if ax.get_title() == TARGET]
        assert len(axes) == 1, "one ROC panel per audit"
        return axes[0]

    yield draw
    plt.close("all")


def _lines(ax, word: str) -> list:
    return [line for line in ax.get_lines() if word in line.get_label()]


def _points(lines) -> tuple[np.ndarray, np.ndarray]:
    """The points the lines draw (a NaN is a gap, not a point)."""
    xs = np.concatenate([np.asarray(line.get_xdata(), float) for line in lines]) if lines else np.array([])
    ys = np.concatenate([np.asarray(line.get_ydata(), float) for line in lines]) if lines else np.array([])
    drawn = np.isfinite(xs) & np.isfinite(ys)
    return xs[drawn], ys[drawn]


def _laplace_result(seed: int = 0) -> dict:
    """Laplace of scale 1 on the pair 0 / 1 audited at its tight claim epsilon = 1."""
    return audit_mechanism(lambda x, rng: x + rng.laplace(0.0, 1.0), 0, 1, epsilon=1.0, trials=10_000,
                           seed=seed).to_dict()


def test_a_test_without_false_positives_is_drawn_at_the_resolution_of_the_evaluation_outputs(panel):
    r = audit_mechanism(lambda x, rng: float(x == 1 and rng.random() < 0.5), 0, 1, epsilon=4.0, trials=10_000,
                        seed=0, float_audit=False).to_dict()
    assert r["violation"] and r["fpr"] == 0.0 and r["tpr"] > 0.5 and r["n_evaluation"] == 8000
    ax = panel(r, "violated")
    assert ax.get_xlim()[0] <= 1.0 / r["n_evaluation"]  # not at 0.01, where the (4, 0) boundary is at TPR 0.546
    chosen = _lines(ax, "chosen test")
    assert chosen
    for line in chosen:  # the violating test is drawn in the region no (4, 0)-DP mechanism reaches
        x, y = float(line.get_xdata()[0]), float(line.get_ydata()[0])
        assert y > plots.privacy_region_boundary(4.0, 0.0, [x])[0], (line.get_label(), x, y)


def test_a_white_box_leak_of_d0_over_d1_is_drawn_in_the_direction_it_leaks(panel):
    p0, p1 = 0.03, 0.0003  # P(output 1) on d0 and on d1: the tests that say "d0" on a 1 leak ln 100 = 4.6

    def mechanism(x, rng):
        return float(rng.random() < (p0 if x == 0 else p1))

    def llr(o):
        return np.where(np.asarray(o) == 1.0, np.log(p0 / p1), np.log((1 - p0) / (1 - p1)))

    r = audit_mechanism(mechanism, 0, 1, epsilon=1.0, trials=20_000, seed=0, estimator=WhiteBox(llr)).to_dict()
    assert r["violation"] and r["epsilon_lower_bound"] > 4
    ax = panel(r, "violated")
    xs, ys = _points(_lines(ax, "ROC"))
    leaks = ys > np.e * xs  # above TPR = e^eps FPR, the part of the boundary the log axes show
    assert leaks.any(), "the curve is drawn in the direction in which it leaves the (1, 0) region"
    xs, ys = _points(_lines(ax, "certified"))
    assert (ys > np.e * xs).any()  # the violation is certified, not only estimated
    title = ax.get_legend().get_title().get_text()
    assert "reversed" in title and "d0" in title  # the legend says which way the tests are drawn


def test_a_correct_tight_mechanism_draws_its_certified_curve_inside_the_region(panel):
    r = _laplace_result()
    fpr, tpr = (np.asarray(r["details"]["roc"][k], float) for k in ("fpr", "tpr"))
    assert (tpr > plots.privacy_region_boundary(1.0, 0.0, fpr) + 1e-12).sum() >= 30  # estimates cross the boundary
    ax = panel(r)
    certified, estimates = _lines(ax, "certified"), _lines(ax, "estimate")
    assert certified and estimates, "the certified curve and the point estimates are drawn and labelled"
    xs, ys = _points(certified)
    assert (ys <= plots.privacy_region_boundary(1.0, 0.0, xs) + 1e-9).all()  # the statement is inside the region
    lightest_certified = min(line.get_alpha() or 1.0 for line in certified)
    assert all((line.get_alpha() or 1.0) < lightest_certified for line in estimates)  # estimates drawn lighter


def test_the_gaussian_dp_mu_is_shown_beside_the_epsilon_bound(panel):
    r = _laplace_result()
    mu = f"{r['mu_lower_bound']:.3f}"
    night = _night(r, "holds")
    page = render_html(night)
    table = page[page.index("<h3>Privacy audits</h3>"):]
    table = table[:table.index("</table>")]
    assert "&mu;" in table and f">{mu}<" in table
    summary = render_summary(night)
    header = next(line for line in summary.splitlines() if line.startswith("| target |"))
    row = next(line for line in summary.splitlines() if line.startswith(f"| {TARGET} |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[[c.strip() for c in header.strip("|").split("|")].index("GDP mu lower bound")] == mu
    legend = [t.get_text() for t in panel(r).get_legend().get_texts()]
    assert any(f"{r['mu_lower_bound']:.3g}" in t and "mu" in t for t in legend)
