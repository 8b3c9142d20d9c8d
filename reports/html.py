"""``report.html``: a self-contained nightly report (inline CSS, PNG plots as data URIs).

Layout: headline table (claims held / violated / inconclusive, planted bugs caught),
changes since the previous run, then one section for the reference mechanisms and
one per paper (its audits with their ROC curves, its bound checks, its scaling fits,
its claims without checks), then the experiment figures found under the output
directory. No script, no external resource: it reads offline in any browser.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

from privbound.reports import plots

__all__ = ["render_html", "PAPER_TITLES"]

PAPER_TITLES = {
    None: "Reference mechanisms",
    "robust-halfspaces": "Robust and private learning of halfspaces",
    "agnostic-halfspaces": "DP agnostic learning of halfspaces under Gaussian marginals",
    "decision-lists-winnow": "Privately learning decision lists and a DP Winnow",
}

_CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
h3{font-size:1em}table{border-collapse:collapse;margin:.5em 0;font-size:.85em}
td,th{border:1px solid #ddd;padding:.25em .5em;text-align:left}th{background:#f3f3f3}
.holds,.pass,.caught{color:#1a7f37}.violated,.missed,.fail,.error{color:#c00;font-weight:bold}
.inconclusive,.expected{color:#8a6d00}.figs img{margin:.3em;border:1px solid #eee}
.small{font-size:.8em;color:#555}code{font-size:.9em}
"""


def _img(png: bytes, alt: str) -> str:
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def _fmt(v: Any, digits: int = 4) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return html.escape(str(v))


def _audit_table(audits: list[dict]) -> str:
    rows = ["<table><tr><th>target</th><th>family</th><th>claimed (&epsilon;, &delta;)</th><th>&epsilon; lower bound</th>"
            "<th>p-value</th><th>trials</th><th>attack</th><th>accountant &epsilon;</th><th>status</th></tr>"]
    for a in audits:
        r = a.get("result") or {}
        acc = r.get("accountant_epsilon") or {}
        acc_s = ", ".join(f"{k} {v:.3g}" for k, v in acc.items()) or "-"
        claim = f"({_fmt(r.get('epsilon_claimed'))}, {_fmt(r.get('delta'))})" if r else "-"
        status = a["status"] + (f": {a['error']}" if a.get("error") else "")
        rows.append(f"<tr><td>{html.escape(a['target'])}</td><td>{html.escape(a['family'])}</td><td>{claim}</td>"
                    f"<td>{_fmt(r.get('epsilon_lower_bound'))}</td><td>{_fmt(r.get('p_value'), 3)}</td>"
                    f"<td>{_fmt(r.get('trials'))}</td><td>{_fmt(r.get('attack'))}</td><td>{acc_s}</td>"
                    f"<td class=\"{a['status']}\">{html.escape(status)}</td></tr>")
    rows.append("</table>")
    return "\n".join(rows)


def _check_table(checks: list[dict]) -> str:
    rows = ["<table><tr><th>claim</th><th>check</th><th>kind</th><th>observed</th><th>bound</th><th>ratio</th>"
            "<th>trials</th><th>status</th></tr>"]
    for c in checks:
        cls = "expected" if c.get("expected") else c["status"]
        note = ""
        err = (c.get("details") or {}).get("erratum")
        if err:
            note = f" (documented erratum: {html.escape(str(err))})"
        reason = (c.get("details") or {}).get("reason")
        if c["status"] == "inconclusive" and reason:
            note = f" ({html.escape(str(reason))})"
        rows.append(f"<tr><td>{html.escape(c['claim_id'])}</td><td>{html.escape(c['check'])}</td><td>{c['kind']}</td>"
                    f"<td>{_fmt(c.get('observed'))}</td><td>{_fmt(c.get('bound'))}</td><td>{_fmt(c.get('ratio'), 3)}</td>"
                    f"<td>{_fmt(c.get('trials'))}</td><td class=\"{cls}\">{c['status']}{note}</td></tr>")
    rows.append("</table>")
    return "\n".join(rows)


def _section(paper: str | None, audits: list[dict], checks: list[dict], claims_info: list[dict]) -> str:
    title = PAPER_TITLES.get(paper, paper)
    parts = [f"<h2>{html.escape(title)}</h2>"]
    if audits:
        parts.append("<h3>Privacy audits</h3>")
        parts.append(_audit_table(audits))
        figs = []
        for a in audits:
            r = a.get("result") or {}
            roc = (r.get("details") or {}).get("roc")
            if roc:
                figs.append(_img(plots.roc_plot(a["target"], roc, r["epsilon_claimed"], r["delta"],
                                                (r.get("fpr"), r.get("tpr"))), f"ROC {a['target']}"))
        if figs:
            parts.append('<div class="figs">' + "".join(figs) + "</div>")
    if checks:
        parts.append("<h3>Bound checks</h3>")
        parts.append(_check_table(checks))
        bound_checks = [c for c in checks if c["kind"] in ("deterministic", "probabilistic", "exact")]
        if bound_checks:
            parts.append('<div class="figs">' + _img(plots.bound_ratio_plot(f"{title}: observed / bound", bound_checks),
                                                     "bound ratios") + "</div>")
        scaling = [c for c in checks if c["kind"] == "scaling" and (c.get("details") or {}).get("x")]
        if scaling:
            parts.append("<h3>Scaling fits</h3><div class=\"figs\">" +
                         "".join(_img(plots.scaling_plot(c), c["claim_id"]) for c in scaling) + "</div>")
    unchecked = [c for c in claims_info if not c["checks"]]
    if unchecked:
        parts.append("<h3>Claims without a check</h3><table><tr><th>claim</th><th>why</th></tr>")
        for c in unchecked:
            why = c["uncheckable_reason"] or f"pending: {c['pending']}"
            parts.append(f"<tr><td>{html.escape(c['id'])}</td><td class=\"small\">{html.escape(why)}</td></tr>")
        parts.append("</table>")
    return "\n".join(parts)


def render_html(results: dict[str, Any], changes: list[dict], claims_info: list[dict],
                experiment_pngs: list[Path] = ()) -> str:
    """The report as one HTML string."""
    c = results["counts"]
    head = (
        "<table><tr><th>claims held</th><th>claims violated</th><th>checks pass</th><th>checks fail</th>"
        "<th>inconclusive</th><th>documented errata</th><th>planted bugs caught</th><th>planted bugs missed</th>"
        "<th>errors</th></tr>"
        f"<tr><td class=\"holds\">{c['holds']}</td><td class=\"violated\">{c['violated']}</td>"
        f"<td class=\"pass\">{c['checks_pass']}</td><td class=\"fail\">{c['checks_fail']}</td>"
        f"<td class=\"inconclusive\">{c['checks_inconclusive']}</td><td class=\"expected\">"
        f"{c.get('checks_expected_fail', 0)}</td><td class=\"caught\">{c['caught']}</td>"
        f"<td class=\"missed\">{c['missed']}</td><td class=\"error\">{c['error']}</td></tr></table>"
    )
    body = [
        f"<h1>privbound nightly report &mdash; profile <code>{html.escape(results['profile'])}</code></h1>",
        f"<p class=\"small\">code {html.escape(results['code_version'])}, started {results['started_utc']}, "
        f"{results['wall_seconds']:.1f} s, seed {results['seed']}</p>",
        head,
        "<h2>Changes since the previous run</h2>",
    ]
    if changes:
        body.append("<table><tr><th>kind</th><th>name</th><th>change</th></tr>")
        for ch in changes:
            body.append(f"<tr><td>{ch['kind']}</td><td>{html.escape(ch['name'])}</td>"
                        f"<td class=\"{ch['status']}\">{html.escape(ch['change'])}</td></tr>")
        body.append("</table>")
    else:
        body.append("<p>None (or no previous run of this profile).</p>")
    audits = results["audits"]
    if audits:
        body.append("<h2>Empirical &epsilon; against claims</h2><div class=\"figs\">" +
                    _img(plots.epsilon_plot(audits), "epsilon lower bounds") + "</div>")
    for paper in PAPER_TITLES:
        pa = [a for a in audits if a.get("paper") == paper]
        pc = [ch for ch in results["checks"] if paper is not None and ch["claim_id"].startswith(paper + "/")]
        pi = [ci for ci in claims_info if paper is not None and ci["id"].startswith(paper + "/")]
        if pa or pc or pi:
            body.append(_section(paper, pa, pc, pi))
    # --- membership inference (privbound.reports.membership) ---
    from privbound.reports.membership import membership_section_html

    body.append(membership_section_html(results.get("membership")))
    # --- end membership inference ---
    if experiment_pngs:
        body.append("<h2>Experiments</h2><div class=\"figs\">")
        body += [_img(Path(p).read_bytes(), Path(p).name) for p in experiment_pngs]
        body.append("</div>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>privbound nightly {html.escape(results['profile'])}</title><style>{_CSS}</style></head>"
            "<body>\n" + "\n".join(body) + "\n</body></html>\n")
