"""report.html reads top-down: contents, headline, changes, then one collapsible section per paper, a footer;
ROC panels on log axes; loose claims apart with their reason; check rows in words (reports/html.py, plots.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from privbound.reports import plots
from privbound.reports.html import loose_claim, relation_words, render_html
from privbound.reports.nightly import claims_info, run_nightly
from privbound.reports.schema import AuditRecord


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    out = tmp_path_factory.mktemp("layout") / "run"
    results, out = run_nightly("smoke", out, target_names=["randomized-response", "laplace-inverted-scale"],
                               claim_ids=["robust-halfspaces/observation-8", "decision-lists-winnow/lemma-3"],
                               progress=False)
    return results, (out / "report.html").read_text()


def test_contents_link_every_section_and_each_anchor_exists(page):
    _, text = page
    nav = re.search(r'<nav class="toc" id="contents">(.*?)</nav>', text, re.S)
    assert nav
    links = re.findall(r'href="#([\w-]+)"', nav.group(1))
    assert links[:3] == ["headline", "changes", "epsilon"]
    assert any(a.startswith("paper-") for a in links) and "check-mutants" in links
    ids = set(re.findall(r'<section id="([\w-]+)"', text))
    assert set(links) <= ids and links == [i for i in re.findall(r'<section id="([\w-]+)"', text)]
    assert text.index('id="contents"') < text.index('id="headline"') < text.index('id="changes"') < text.index(
        'id="paper-')


def test_paper_sections_are_collapsible_and_open_only_when_something_failed(page):
    _, text = page
    sections = re.findall(r'<details class="paper"( open)?><summary><h2>([^<]+)</h2>(.*?)</summary>', text, re.S)
    assert sections
    for is_open, title, counts in sections:
        assert ("problem(s)" in counts) == bool(is_open), (title, counts)
    assert text.count("<details") == text.count("</details>")  # every collapsible part closed


def test_the_footer_names_the_run_and_the_other_outputs(page):
    results, text = page
    footer = re.search(r"<footer.*?</footer>", text, re.S).group(0)
    assert results.run_id in footer and 'href="results.json"' in footer and 'href="summary.md"' in footer


def test_check_rows_state_the_relation_in_words():
    check = {"claim_id": "x/lemma-1", "check": "c", "kind": "deterministic", "observed": -5.268e6, "bound": 0.0,
             "status": "pass", "details": {"sense": "<="}}
    assert relation_words(check) == "observed -5.268e+06 is at most the bound 0: pass"
    erratum = dict(check, status="fail", observed=3.0, expected=True, details={"sense": "<=", "erratum": "e",
                                                                                "erratum_form": "printed"})
    assert relation_words(erratum) == ("observed 3 should be at most the bound 0: fails as expected "
                                       "(documented erratum, printed form)")


def _record(claim, tight, bound, name="loose-target"):
    return AuditRecord(target=name, family="f", paper="robust-halfspaces", planted_bug=False, audit="mathematical",
                       status="holds", result={"epsilon_claimed": claim, "epsilon_tight": tight,
                                               "epsilon_lower_bound": bound, "delta": 1e-5}, error=None)


def test_a_claim_looser_than_ten_times_the_tight_epsilon_is_marked_and_drawn_apart(page):
    results, _ = page
    loose, fine = _record(551.9, 2.2, 1.9), _record(3.0, 2.2, 1.9, name="fine-target")
    assert "251x the tight epsilon 2.2" in loose_claim(loose) and loose_claim(fine) is None
    assert loose_claim(_record(551.9, None, 1.0)).startswith("the claim 551.9 is 552x the audit's lower bound")
    from dataclasses import replace

    text = render_html(replace(results, audits=(*results.audits, loose, fine)), claims_info())
    section = text[text.index('id="epsilon"'):text.index("</section>", text.index('id="epsilon"'))]
    assert "Loose claims" in section and "loose-target</b>: the claim 551.9 is 251x" in section
    assert 'class="loose"' in text  # marked in its paper's audit table


def test_roc_panels_are_log_log_so_a_correct_curve_at_large_epsilon_is_not_on_the_axes():
    eps = 5.0  # randomized response at eps: TPR = e^eps / (1 + e^eps) at FPR = 1 / (1 + e^eps) = 0.0067
    p = 1 / (1 + np.exp(eps))
    roc = {"fpr": [0.0, 1e-3, p, 1.0], "tpr": [0.0, 1e-3 * np.exp(eps) * 0.5, 1 - p, 1.0]}
    fig = plots.roc_figure("rr", roc, eps, 0.0, (p, 1 - p), n=10_000)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    fig.canvas.draw()
    x0, y0 = ax.transAxes.transform((0, 0))
    px, py = ax.transData.transform((p, 1 - p))
    assert px - x0 >= 20  # on a linear axis FPR 0.0067 sits 2 px from the left edge: "on the axis"
    ix, iy = ax.transData.transform((1e-3, 1e-3 * np.exp(eps) * 0.5))
    bx, by = ax.transData.transform((1e-3, float(plots.privacy_region_boundary(eps, 0.0, [1e-3])[0])))
    assert by - iy >= 10  # a test inside the region is drawn visibly below its boundary
    assert plots.overlapping_tick_labels(fig) == []


def test_roc_panels_shade_the_confidence_band_a_result_carries():
    roc = {"fpr": [0.0, 0.1, 1.0], "tpr": [0.0, 0.2, 1.0]}
    band = {"fpr_lower": [0.05, 0.5], "fpr_upper": [0.15, 0.7], "tpr_lower": [0.1, 0.6], "tpr_upper": [0.3, 0.8]}
    with_band = plots.roc_figure("x", roc, 1.0, 0.0, band=band, n=1000)
    without = plots.roc_figure("x", roc, 1.0, 0.0, n=1000)
    labels = [t.get_text() for t in with_band.axes[0].get_legend().get_texts()]
    assert "confidence band" in labels
    assert "confidence band" not in [t.get_text() for t in without.axes[0].get_legend().get_texts()]
