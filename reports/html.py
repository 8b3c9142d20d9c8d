"""``report.html``: a self-contained nightly report (inline CSS, PNG plots as data URIs).

Layout: the run (id, seed, code, wall time) and anything that makes its comparison special (another
seed or code version than the baseline, warnings), a table of contents, the headline table, the changes
since the baseline run (named), each target's epsilon lower bound against its claim (one log-axis panel
per paper; claims looser than :data:`LOOSE_FACTOR` times what the audit can see on a panel of their own,
with the reason), then one collapsible section (``<details>``) per paper -- open when something in it
failed -- with its audits and their ROC curves on log axes, its bound checks (each row stating in words
the relation that must hold and what is compared), its scaling fits and its claims without checks; then
the learner and check mutants, membership inference, the experiment figures found beside the output
folder, and a footer. Every section has an anchor the contents link to. No script, no external resource:
it reads offline in any browser, and every figure fits a 1400 px wide window.

The page is rendered from the night's :class:`~privbound.reports.schema.NightlyResults`. It is a list of
parts (:func:`report_parts`: anchor, title, ``render(results, claims_info, experiment_pngs) -> html``),
built from :data:`SECTIONS` and one part per paper; a new section is one function and one entry.
"""

from __future__ import annotations

import base64
import html
import math
from pathlib import Path
from typing import Any

from privbound.reports import plots
from privbound.reports.schema import AuditRecord, LearnerMutantRecord, NightlyResults, wall_text

__all__ = ["render_html", "PAPER_TITLES", "SECTIONS", "check_meaning", "mutants_section", "learner_mutants_section",
           "tight_columns", "mu_column", "roc_arguments", "report_parts", "relation_words", "loose_claim",
           "LOOSE_FACTOR", "ROC_PANEL_NOTE"]

LOOSE_FACTOR = 10.0
"""A claim this many times above the tight epsilon (or, without one, above the audit's bound) is marked loose."""

ROC_PANEL_NOTE = (
    "ROC panels, log-log: the solid curve is the certified ROC, the edge of the confidence band (the mechanism has "
    "tests at least this good); if the mechanism meets its claim, it stays out of the red region with at least the "
    "confidence in its label. The light dots are point estimates: where the true curve runs along the boundary (a "
    "correct, tight claim) about half of them lie above it by sampling noise alone. A rate of 0 is drawn hollow at "
    "the edge, 1/(2n) for n evaluation outputs. The dashed curve is Gaussian DP at the certified &mu;: the Gaussian "
    "curve through the best certified point, a reference for &mu; and not a statement about the mechanism, so where "
    "it crosses into the red region it says nothing of the claim. A white-box "
    "or composition panel drawn with the datasets swapped says so in its legend: its tests leak further that way.")
"""The paragraph above each paper's ROC panels: how to read them."""

PAPER_TITLES = {
    None: "Reference mechanisms",
    "robust-halfspaces": "Robust and private learning of halfspaces",
    "agnostic-halfspaces": "DP agnostic learning of halfspaces under Gaussian marginals",
    "decision-lists-winnow": "Privately learning decision lists and a DP Winnow",
    "dp-sgd": "DP-SGD audited with gradient and input canaries",
}

_CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;max-width:1250px;color:#222;
padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
h3{font-size:1em}table{border-collapse:collapse;margin:.5em 0;font-size:.85em}
td,th{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}th{background:#f3f3f3}
td.num{text-align:right;white-space:nowrap}td.rel{text-align:center;font-weight:bold}
.holds,.pass,.caught{color:#1a7f37}.violated,.missed,.fail,.error{color:#c00;font-weight:bold}
.inconclusive,.expected,.note{color:#8a6d00}.figs img{margin:.3em;border:1px solid #eee;max-width:100%;height:auto}
.small{font-size:.8em;color:#555}code{font-size:.9em}
.notice{background:#fff4d6;border:1px solid #e0c36a;padding:.5em .8em;margin:.6em 0}
.warning{background:#fde2e2;border:1px solid #d88;padding:.5em .8em;margin:.6em 0}
nav.toc{background:#f7f7f7;border:1px solid #ddd;padding:.4em 1em;margin:1em 0;font-size:.9em}
nav.toc ol{margin:.3em 0;padding-left:1.4em}nav.toc li{margin:.1em 0}
details.paper>summary{cursor:pointer;list-style:revert}details.paper>summary h2{display:inline;border:none}
details.paper{border-bottom:1px solid #ccc;margin-top:1.5em;padding-bottom:.3em}
details.rows>summary{cursor:pointer;margin:.4em 0}
.loose{color:#8a6d00;font-size:.8em}footer{margin-top:3em;border-top:1px solid #ccc;padding-top:.5em}
"""

_REL = {"<=": "&le;", ">=": "&ge;", "==": "=", "~": "&asymp;"}
_WORDS = {"<=": "at most", ">=": "at least", "==": "equal to", "~": "consistent with"}


def relation_words(check: dict[str, Any]) -> str:
    """The check's verdict as a sentence: ``observed -5.27e+06 is at most the bound 0: pass``."""
    rel, _ = check_meaning(check)
    obs, bound = _fmt(check.get("observed")), _fmt(check.get("bound"))
    if rel == "~":
        d = check.get("details") or {}
        ci = d.get("slope_ci") or [None, None]
        text = (f"fitted exponent {obs} (interval [{_fmt(ci[0], 3)}, {_fmt(ci[1], 3)}]) against the theorem's "
                f"{bound}")
    else:
        text = f"observed {obs} is {_WORDS[rel]} the bound {bound}" if check["status"] == "pass" else (
            f"observed {obs} should be {_WORDS[rel]} the bound {bound}")
    if check.get("expected"):
        form = (check.get("details") or {}).get("erratum_form")
        return text + ": fails as expected (documented erratum" + (f", {form} form)" if form else ")")
    return f"{text}: {check['status']}"


def loose_claim(record: AuditRecord) -> str | None:
    """Why an audit's claim is loose -- more than :data:`LOOSE_FACTOR` times the tight epsilon of what the code runs,
    or (without one) than the audit's lower bound -- or None."""
    r = record.result or {}
    claim, tight, bound = r.get("epsilon_claimed"), r.get("epsilon_tight"), r.get("epsilon_lower_bound")
    if not claim or record.planted_bug or record.status in ("caught", "missed"):
        return None
    if tight and claim > LOOSE_FACTOR * tight:
        return (f"the claim {claim:.4g} is {claim / tight:.0f}x the tight epsilon {tight:.3g} of what the code runs: "
                "the paper's analysis is loose, not the code")
    if not tight and bound and claim > LOOSE_FACTOR * bound:
        return (f"the claim {claim:.4g} is {claim / bound:.0f}x the audit's lower bound {bound:.3g} and the target "
                "states no tight epsilon: the audit cannot tell a loose analysis from a weak attack")
    return None


def _img(png: bytes, alt: str) -> str:
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def _fmt(v: Any, digits: int = 4) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return html.escape(str(v))


def check_meaning(check: dict[str, Any], description: str = "") -> tuple[str, str]:
    """(relation, meaning): the relation observed must have to bound (``<=``, ``>=``, ``==``, ``~``) and what they are."""
    d = check.get("details") or {}
    kind = check["kind"]
    if kind == "scaling":
        sense = d.get("sense", "two-sided")
        rel = "<=" if sense == "at-most" else "~"
        what = ("observed = fitted log-log slope in " + str(d.get("parameter", "x")) + "; bound = the theorem's exponent; "
                + ("passes unless the slope is significantly larger (an O-bound)" if sense == "at-most"
                   else "passes when the slope's confidence interval contains it"))
    elif kind == "probabilistic" and "failures" in d:
        rel = "<="
        what = "observed = failure rate over the trials; bound = the stated failure probability (exact binomial test)"
    else:
        rel = plots.check_sense(check)
        what = "observed vs the claim's bound"
    if description:
        what = f"{description} ({what})" if kind == "scaling" or "failures" in d else description
    return rel, what


def tight_columns(record: AuditRecord | LearnerMutantRecord) -> tuple[str, str, str]:
    """(tight epsilon, epsilon lower bound, bound / tight) of an audit, formatted (``-`` when absent).

    JSON has no infinity: a null bound of a result that violates its claim is an infinite one (the outputs
    proved that no finite epsilon holds) and reads ``inf``.
    """
    r = record.result
    if not r:
        return "-", "-", "-"
    bound = r.get("epsilon_lower_bound")
    if bound is None and r.get("violation"):
        bound = math.inf
    tight = r.get("epsilon_tight")
    ratio = "-" if bound is None or not tight else f"{bound / tight:.2f}"
    return ("-" if tight is None else f"{tight:.3g}"), ("-" if bound is None else f"{bound:.3f}"), ratio


def _audit_table(audits: list[AuditRecord]) -> str:
    """Per audit: the claim, the tight epsilon (its source as the cell's tooltip), the bound, bound / tight, the
    Gaussian-DP mu lower bound, the tight verdict (why there is none as a tooltip), the claim verdict, then how the
    audit ran."""
    rows = ["<table><tr><th>target</th><th>family</th><th>claim (&epsilon;, &delta;)</th><th>tight &epsilon;</th>"
            "<th>&epsilon; lower bound</th><th>bound / tight</th><th title=\"the mechanism is not &mu;-GDP for any "
            "smaller &mu; (from the certified trade-off curve, at its own confidence)\">GDP &mu; lower bound</th>"
            "<th>tight verdict</th><th>claim verdict</th>"
            "<th>power</th><th>p-value (claim)</th><th>trials</th><th>audit</th><th>attack</th>"
            "<th>accountant &epsilon;</th></tr>"]
    for a in audits:
        r = a.result or {}
        acc = r.get("accountant_epsilon") or {}
        acc_s = ", ".join(f"{k} {v:.3g}" for k, v in acc.items()) or "-"
        claim = f"({_fmt(r.get('epsilon_claimed'))}, {_fmt(r.get('delta'))})" if r else "-"
        loose = loose_claim(a)
        if loose:
            claim += f' <span class="loose" title="{html.escape(loose)}">loose</span>'
        status = a.status + (f": {a.error}" if a.error else "")
        tight_eps, bound, ratio = tight_columns(a)
        source = r.get("tight_source")
        tight_cell = (f"<td class=\"num\" title=\"{html.escape(source)}\">{tight_eps}</td>" if source
                      else f"<td class=\"num\">{tight_eps}</td>")
        verdict = (f"<td class=\"{a.tight_status}\">{a.tight_status}</td>" if a.tight_status else
                   f"<td class=\"small\" title=\"{html.escape(a.tight_reason or '')}\">-</td>")
        rows.append(f"<tr><td>{html.escape(a.target)}</td><td>{html.escape(a.family)}</td><td>{claim}</td>"
                    f"{tight_cell}<td class=\"num\">{bound}</td><td class=\"num\">{ratio}</td>"
                    f"<td class=\"num\">{mu_column(a)}</td>{verdict}"
                    f"<td class=\"{a.status}\">{html.escape(status)}</td>{_power_cell(r)}"
                    f"<td class=\"num\">{_fmt(r.get('p_value'), 3)}</td>"
                    f"<td class=\"num\">{_fmt(r.get('trials'))}</td><td>{html.escape(a.audit)}</td>"
                    f"<td>{_fmt(r.get('attack'))}</td><td>{acc_s}</td></tr>")
    rows.append("</table>")
    sources = [(a.target, a.result["tight_source"]) for a in audits if a.result and a.result.get("tight_source")]
    if sources:
        rows.append("<details><summary class=\"small\">where each tight &epsilon; comes from</summary>"
                    "<ul class=\"small\">"
                    + "".join(f"<li><b>{html.escape(t)}</b>: {html.escape(src)}</li>" for t, src in sources)
                    + "</ul></details>")
    return "\n".join(rows)


def _power_cell(r: dict[str, Any]) -> str:
    """The audit's own status against its power (``AuditResult.status``): inconclusive when it could not have
    seen a mechanism spending twice its claim; the tooltip says what it could certify."""
    power, status = r.get("power"), r.get("status")
    if not power or not status:
        return '<td class="small">-</td>'
    certifiable = power.get("epsilon_certifiable")
    tip = (f"at these trials at most eps_hat = {certifiable:.3g} is certifiable against {power.get('alternative')}"
           + (f"; try trials={power['trials_needed']} or more" if power.get("trials_needed") else ""))
    return f'<td class="{status}" title="{html.escape(tip)}">{status}</td>'


def _check_table(checks: list[dict], descriptions: dict[str, str]) -> str:
    rows = ["<p class=\"small\">A check passes when <i>observed</i> stands in the row's relation to <i>bound</i> "
            "(&asymp;: the fitted exponent's confidence interval contains the theorem's).</p>",
            "<table><tr><th>claim</th><th>check</th><th>kind</th><th>observed</th><th>relation</th><th>bound</th>"
            "<th>ratio</th><th>trials</th><th>status</th><th>in words</th><th>what is compared</th></tr>"]
    for c in checks:
        cls = "expected" if c.get("expected") else c["status"]
        note = ""
        err = (c.get("details") or {}).get("erratum")
        if err:
            note = f" (documented erratum: {html.escape(str(err))})"
        reason = (c.get("details") or {}).get("reason")
        if c["status"] == "inconclusive" and reason:
            note = f" ({html.escape(str(reason))})"
        rel, what = check_meaning(c, descriptions.get(f"{c['claim_id']}:{c['check']}", ""))
        status = "expected fail" if c.get("expected") else c["status"]
        rows.append(f"<tr><td>{html.escape(c['claim_id'])}</td><td>{html.escape(c['check'])}</td><td>{c['kind']}</td>"
                    f"<td class=\"num\">{_fmt(c.get('observed'))}</td><td class=\"rel\">{_REL[rel]}</td>"
                    f"<td class=\"num\">{_fmt(c.get('bound'))}</td><td class=\"num\">{_fmt(c.get('ratio'), 3)}</td>"
                    f"<td class=\"num\">{_fmt(c.get('trials'))}</td><td class=\"{cls}\">{status}{note}</td>"
                    f"<td class=\"small\">{html.escape(relation_words(c))}</td>"
                    f"<td class=\"small\">{html.escape(what)}</td></tr>")
    rows.append("</table>")
    return "\n".join(rows)


def _band(r: dict[str, Any]) -> dict[str, list[float]] | None:
    """The ROC confidence band a result carries (its trade-off curve's simultaneous band), as ROC coordinates."""
    t = r.get("tradeoff") or {}
    keys = ("alpha_lower", "alpha_upper", "beta_lower", "beta_upper")
    if not all(isinstance(t.get(k), list) and t.get(k) for k in keys):
        return None
    return {"fpr_lower": t["alpha_lower"], "fpr_upper": t["alpha_upper"],
            "tpr_lower": [1 - b for b in t["beta_upper"]], "tpr_upper": [1 - b for b in t["beta_lower"]]}


def roc_arguments(r: dict[str, Any]) -> dict[str, Any]:
    """What an audit's ROC panel (:func:`privbound.reports.plots.roc_figure`) draws besides the ROC and the claim,
    read from its result as in results.json: the chosen test's estimate and Clopper--Pearson corner, the trade-off
    curve's band, confidence and datasets, the certified Gaussian-DP mu, and the evaluation outputs per dataset
    (the larger side), which set the resolution of a rate of 0. A result with a chosen event is drawn in that event's
    direction (its estimator weighed both); one without (white-box, composition: tests that say d1 when the privacy
    loss is low) in the direction in which it leaks further."""
    t = r.get("tradeoff") or {}
    sizes = [int(v) for v in (r.get("n_evaluation"), t.get("n_null"), t.get("n_alternative")) if v]
    band = _band(r)
    estimated = r.get("fpr") is not None and r.get("tpr") is not None
    bounded = estimated and r.get("fpr_upper") is not None and r.get("tpr_lower") is not None
    return {"point": (r.get("fpr"), r.get("tpr")) if estimated else None, "band": band,
            "certified_point": (r.get("fpr_upper"), r.get("tpr_lower")) if bounded else None,
            "n": max(sizes) if sizes else int(r.get("trials") or 1), "mu": r.get("mu_lower_bound"),
            "confidence": t.get("confidence") if band else None,
            "datasets": (t["null"], t["alternative"]) if t.get("null") and t.get("alternative") else None,
            "direction": "traced" if r.get("event") else "leakier"}


def mu_column(record: AuditRecord | LearnerMutantRecord) -> str:
    """The Gaussian-DP ``mu_lower_bound`` of an audit, formatted (``-`` when it carries none): the mechanism is not
    mu-GDP for any smaller mu, at its trade-off curve's confidence."""
    mu = (record.result or {}).get("mu_lower_bound")
    return "-" if mu is None else f"{mu:.3f}"


def _paper_problems(audits: list[AuditRecord], checks: list[dict]) -> int:
    return (sum(1 for a in audits if a.status in ("violated", "missed", "error") or a.tight_status == "violated")
            + sum(1 for c in checks if c["status"] == "fail" and not c.get("expected")))


def _paper_section(paper: str | None, audits: list[AuditRecord], checks: list[dict], claims_info: list[dict]) -> str:
    title = PAPER_TITLES.get(paper, paper)
    problems = _paper_problems(audits, checks)
    counts = (f"{len(audits)} audit(s), {len(checks)} check(s)"
              + (f", <span class=\"fail\">{problems} problem(s)</span>" if problems else ", nothing failed"))
    parts = [f"<details class=\"paper\"{' open' if problems else ''}><summary><h2>{html.escape(str(title))}</h2> "
             f"<span class=\"small\">&mdash; {counts}</span></summary>"]
    if audits:
        parts.append("<h3>Privacy audits</h3>")
        parts.append(_audit_table(audits))
        figs = []
        for a in audits:
            r = a.result or {}
            roc = (r.get("details") or {}).get("roc")
            if roc:
                figs.append(_img(plots.roc_plot(a.target, roc, r["epsilon_claimed"], r["delta"], **roc_arguments(r)),
                                 f"ROC {a.target}"))
        if figs:
            parts.append(f"<p class=\"small\">{ROC_PANEL_NOTE}</p>")
            parts.append('<div class="figs">' + "".join(figs) + "</div>")
    if checks:
        descriptions = {f"{ci['id']}:{name}": text for ci in claims_info
                        for name, text in (ci.get("descriptions") or {}).items()}
        parts.append("<h3>Bound checks</h3>")
        parts.append(_check_table(checks, descriptions))
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
    parts.append("</details>")
    return "\n".join(parts)


def _by_paper(results: NightlyResults, claims_info: list[dict]):
    present = {a.paper for a in results.audits}
    for paper in [*PAPER_TITLES, *sorted(p for p in present if p not in PAPER_TITLES)]:
        pa = [a for a in results.audits if a.paper == paper]
        pc = [ch for ch in results.checks if paper is not None and ch["claim_id"].startswith(paper + "/")]
        pi = [ci for ci in claims_info if paper is not None and ci["id"].startswith(paper + "/")]
        yield paper, pa, pc, pi


# ----------------------------------------------------------------- sections


def title_section(results: NightlyResults) -> str:
    """The page's title, the run, and what makes it special (another seed or code than the baseline, warnings)."""
    out = [
        f"<h1>privbound nightly report &mdash; profile <code>{html.escape(results.profile)}</code></h1>",
        f"<p class=\"small\">run <code>{html.escape(str(results.run_id or '-'))}</code>, "
        f"code {html.escape(results.code_version)}, <b>seed {results.seed}</b>, started "
        f"{html.escape(results.started_utc)}, wall time {wall_text(results)}</p>",
    ]
    for d in () if results.comparison is None else results.comparison.differences:
        out.append(f"<div class=\"notice\"><b>{html.escape(d[0].upper() + d[1:])}.</b></div>")
    for w in results.warnings:
        out.append(f"<div class=\"warning\"><b>Warning:</b> {html.escape(w)}</div>")
    for n in results.notes:
        out.append(f"<div class=\"notice\">{html.escape(n)}</div>")
    return "\n".join(out)


def header_section(results: NightlyResults, claims_info: list[dict], experiment_pngs) -> str:
    """The headline: the tight verdicts, the claim verdicts and checks counted, and the audits' power."""
    c = results.counts
    out = ["<h2>Headline</h2>"]
    untight = sum(1 for a in results.audits if a.tight_status is None)
    out.append(
        "<p>Tight verdicts: each audit's &epsilon; lower bound against the tight &epsilon; of what the code runs "
        "(violated above it; holds at most it and at least half of it; inconclusive below half: the audit could "
        f"not have seen a 2x overspend). {untight} audit(s) have none (no tight &epsilon;, planted bugs, "
        "floating-point audits).</p>"
        "<table><tr><th>tight: holds</th><th>tight: violated</th><th>tight: inconclusive</th></tr>"
        f"<tr><td class=\"holds\">{c.tight_holds}</td><td class=\"violated\">{c.tight_violated}</td>"
        f"<td class=\"inconclusive\">{c.tight_inconclusive}</td></tr></table>")
    out.append(
        "<table><tr><th>claims held</th><th>claims violated</th><th>checks pass</th><th>checks fail</th>"
        "<th>inconclusive</th><th>documented errata</th><th>planted bugs caught</th><th>planted bugs missed</th>"
        "<th>errors</th></tr>"
        f"<tr><td class=\"holds\">{c.holds}</td><td class=\"violated\">{c.violated}</td>"
        f"<td class=\"pass\">{c.checks_pass}</td><td class=\"fail\">{c.checks_fail}</td>"
        f"<td class=\"inconclusive\">{c.checks_inconclusive}</td><td class=\"expected\">"
        f"{c.checks_expected_fail}</td><td class=\"caught\">{c.caught}</td>"
        f"<td class=\"missed\">{c.missed}</td><td class=\"error\">{c.error}</td></tr></table>")
    weak = results.held_inconclusive()
    if weak:
        out.append(f"<p class=\"inconclusive\">{len(weak)} claim(s) hold only as far as their audit could see: at "
                   "their trials the audit could not have certified a violation by a mechanism spending twice the "
                   "claim (the power column of each paper's table): " + html.escape(", ".join(weak)) + ".</p>")
    return "\n".join(out)


def changes_section(results: NightlyResults, claims_info: list[dict], experiment_pngs) -> str:
    comp = results.comparison
    changes = results.changes
    base = None if comp is None else comp.baseline
    out = ["<h2>Changes since the previous run</h2>"]
    if base is None:
        note = (comp and comp.note) or "No baseline: no previous run of this profile."
        out.append(f"<p>{html.escape(note)}</p>")
        return "\n".join(out)
    out.append(f"<p>Compared with run <code>{html.escape(str(base.run_id))}</code> (started "
               f"{html.escape(str(base.started_utc))}, seed {base.seed}, code "
               f"{html.escape(str(base.code_version))}).</p>")
    if comp.rule:
        out.append(f"<p class=\"small\">Rule: {html.escape(comp.rule)}.</p>")
    listed = [ch for ch in changes if ch["kind"] != "note"]
    if listed:
        out.append("<table><tr><th>kind</th><th>name</th><th>change</th></tr>")
        for ch in listed:
            out.append(f"<tr><td>{ch['kind']}</td><td>{html.escape(ch['name'])}</td>"
                       f"<td class=\"{ch['status']}\">{html.escape(ch['change'])}</td></tr>")
        out.append("</table>")
    else:
        out.append("<p>No change: same statuses, and no &epsilon; lower bound moved significantly.</p>")
    for ch in changes:
        if ch["kind"] == "note":
            out.append(f"<p class=\"small note\">{html.escape(ch['change'])}: {html.escape(ch['name'])}.</p>")
    return "\n".join(out)


def epsilon_section(results: NightlyResults, claims_info: list[dict], experiment_pngs) -> str:
    """One panel per paper of each audit's bound against its claim; the loose claims (:func:`loose_claim`) on a
    panel of their own, so that one claim of 500 does not squash the others, each with the reason."""
    if not results.audits:
        return ""
    figs, loose = [], []
    for paper, pa, _, _ in _by_paper(results, claims_info):
        rows = [a for a in pa if a.result and loose_claim(a) is None]
        loose += [a for a in pa if a.result and loose_claim(a) is not None]
        if rows:
            figs.append(_img(plots.epsilon_plot([a.to_dict() for a in rows],
                                                f"{PAPER_TITLES.get(paper, paper)}: epsilon lower bound vs claim"),
                             f"epsilon lower bounds, {PAPER_TITLES.get(paper, paper)}"))
    out = ["<h2>Empirical &epsilon; against claims</h2><div class=\"figs\">" + "".join(figs) + "</div>"]
    if loose:
        out.append(f"<h3>Loose claims (more than {LOOSE_FACTOR:g}x what the audit can see)</h3>"
                   "<p class=\"small\">Drawn apart on their own axis, so that they do not stretch the panels above:</p>"
                   "<ul class=\"small\">" + "".join(f"<li><b>{html.escape(a.target)}</b>: "
                                                     f"{html.escape(loose_claim(a))}</li>" for a in loose) + "</ul>")
        out.append("<div class=\"figs\">" + _img(plots.epsilon_plot([a.to_dict() for a in loose],
                                                                     "loose claims: epsilon lower bound vs claim"),
                                                  "epsilon lower bounds, loose claims") + "</div>")
    return "\n".join(out)


def papers_section(results: NightlyResults, claims_info: list[dict], experiment_pngs) -> str:
    """Every paper's section (the report renders them one by one: :func:`report_parts`)."""
    return "\n".join(_paper_section(paper, pa, pc, pi) for paper, pa, pc, pi in _by_paper(results, claims_info)
                     if pa or pc or pi)


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in str(text).lower()).strip("-") or "reference"


def experiments_section(results: NightlyResults, claims_info: list[dict], experiment_pngs) -> str:
    if not experiment_pngs:
        return ""
    return ("<h2>Experiments</h2><div class=\"figs\">" +
            "".join(_img(Path(p).read_bytes(), Path(p).name) for p in experiment_pngs) + "</div>")


def membership_section(results: NightlyResults, claims_info: list[dict], experiment_pngs) -> str:
    from privbound.reports.membership import membership_section_html

    return membership_section_html(results.membership)


def mutants_section(results: NightlyResults, claims_info: list[dict], experiment_pngs) -> str:
    """Checks with teeth: per check, each of its mutants, the profile expected to detect it and
    whether tonight's run did (or why it was not run); then the checks without a mutant."""
    ran = {(m["claim_id"], m["check"], m["mutant"]): m for m in results.mutants}
    checked = {(c["claim_id"], c["check"]) for c in results.checks}
    c = results.counts
    rows, bare = [], []
    for ci in claims_info:
        for check, mutants in (ci.get("mutants") or {}).items():
            if (ci["id"], check) not in checked:
                continue
            if not mutants:
                bare.append((ci["id"], check))
            for m in mutants:
                r = ran.get((ci["id"], check, m["name"]))
                if r is None:
                    continue  # counted in one line, not listed
                if r["detected"]:
                    tonight, cls = f"detected ({r['status']} at {r['profile']})", "pass"
                else:
                    tonight, cls = f"NOT detected ({r.get('error') or r['status']} at {r['profile']})", "fail"
                obs = "-" if r is None else f"{_fmt(r.get('observed'))} / {_fmt(r.get('bound'))}"
                rows.append(f"<tr><td>{html.escape(ci['id'])}</td><td>{html.escape(check)}</td>"
                            f"<td>{html.escape(m['name'])}</td><td class=\"small\">{html.escape(m['description'])}"
                            + (f" <i>(stated power: {html.escape(m['power'])})</i>" if m.get("power") else "")
                            + f"</td><td>{m['profile']}</td><td class=\"{cls}\">{html.escape(tonight)}</td>"
                            f"<td class=\"num\">{obs}</td></tr>")
    if not rows and not bare:
        return ""
    registered = sum(len(ms) for ci in claims_info for ch, ms in (ci.get("mutants") or {}).items()
                     if (ci["id"], ch) in checked)
    not_run = registered - len(ran)
    head = (f"<p>Every check is run on broken versions of what it guards (its mutants) and must fail on them. "
            f"Tonight: {c.mutants_detected} detected, {c.mutants_undetected} not detected"
            + (f"; {not_run} registered mutant(s) not run: {_not_run_reason(results.profile)}" if not_run else "")
            + ".</p>")
    parts = ["<h2>Checks with teeth: mutants</h2>", head]
    if rows:
        parts += [_rows_details(f"the {len(rows)} mutant(s) run tonight", bool(c.mutants_undetected)),
                  "<table><tr><th>claim</th><th>check</th><th>mutant</th><th>what it breaks</th><th>profile</th>"
                  "<th>tonight</th><th>observed / bound under the mutant</th></tr>", *rows, "</table></details>"]
    if bare:
        parts.append("<h3>Checks without a mutant</h3><p class=\"small\">Printed forms of documented errata (they "
                     "fail by design; their corrected twins carry the mutants) and checks that are inconclusive by "
                     "design: " + ", ".join(html.escape(f"{a}:{b}") for a, b in bare) + ".</p>")
    return "\n".join(parts)


def _rows_details(summary: str, open_: bool) -> str:
    """The opening of a collapsible table (open when one of its rows failed)."""
    return f"<details class=\"rows\"{' open' if open_ else ''}><summary>{html.escape(summary)}</summary>"


def _not_run_reason(profile: str) -> str:
    return ("the smoke profile runs no mutants (the default profile runs those of profiles smoke and default, "
            "full runs all)" if profile == "smoke" else f"their profile is above {profile}")


def learner_mutants_section(results: NightlyResults, claims_info: list[dict], experiment_pngs) -> str:
    """Audits with teeth: each mutant of each audited target's learner, the bound its audit reached against the
    tight epsilon of the correct code, and whether it was caught (or why it was not run)."""
    if not results.learner_mutants:
        return ""
    c = results.counts
    rows = []
    for m in results.learner_mutants:
        if m.status == "not-run":
            continue  # counted in one line, not listed
        tight, bound, _ = tight_columns(m)
        source = (m.result or {}).get("tight_source")
        tight_cell = (f"<td class=\"num\" title=\"{html.escape(source)}\">{tight}</td>" if source
                      else f"<td class=\"num\">{tight}</td>")
        tonight = m.status + (f": {m.error}" if m.error else "")
        cls = {"caught": "caught", "missed": "missed"}.get(m.status, "error")
        rows.append(f"<tr><td>{html.escape(m.target)}</td><td>{html.escape(m.mutant)}</td>"
                    f"<td class=\"small\">{html.escape(m.description)}</td><td>{m.profile}</td>"
                    f"<td class=\"num\">{bound}</td>{tight_cell}<td class=\"{cls}\">{html.escape(tonight)}</td></tr>")
    head = (f"<p>Each mutant breaks a target's learner the way a privacy bug would (a noise scale halved, a "
            f"sensitivity factor dropped); the target's audit of the broken learner must exceed the tight &epsilon; "
            f"of the correct code. Tonight: {c.learner_mutants_caught} caught, {c.learner_mutants_missed} missed, "
            f"{c.learner_mutants_error} errors"
            + (f"; {c.learner_mutants_not_run} not run: {_not_run_reason(results.profile)}"
               if c.learner_mutants_not_run else "") + ".</p>")
    table = [_rows_details(f"the {len(rows)} learner mutant(s) audited tonight",
                           bool(c.learner_mutants_missed or c.learner_mutants_error)),
             "<table><tr><th>target</th><th>mutant</th><th>what it breaks</th><th>profile</th>"
             "<th>&epsilon; lower bound</th><th>tight &epsilon; (correct code)</th><th>tonight</th></tr>",
             *rows, "</table></details>"] if rows else []
    return "\n".join(["<h2>Audits with teeth: learner mutants</h2>", head, *table])


SECTIONS = [header_section, changes_section, epsilon_section, papers_section, learner_mutants_section,
            mutants_section, membership_section, experiments_section]
_ANCHORS = {header_section: ("headline", "Headline"), changes_section: ("changes", "Changes since the previous run"),
            epsilon_section: ("epsilon", "Empirical epsilon against claims"),
            learner_mutants_section: ("learner-mutants", "Audits with teeth: learner mutants"),
            mutants_section: ("check-mutants", "Checks with teeth: mutants"),
            membership_section: ("membership", "Membership inference"), experiments_section: ("experiments", "Experiments")}


def report_parts(results: NightlyResults, claims_info: list[dict] = ()) -> list[tuple[str, str, Any]]:
    """``(anchor, title, render)`` of each part of the report in order: :data:`SECTIONS`, with
    :func:`papers_section` expanded into one part per paper present (``paper-<id>``)."""
    claims_info = list(claims_info)
    parts = []
    for section in SECTIONS:
        if section is papers_section:
            for paper, pa, pc, pi in _by_paper(results, claims_info):
                if pa or pc or pi:
                    title = str(PAPER_TITLES.get(paper, paper))
                    parts.append((f"paper-{_slug(paper or 'reference')}", title,
                                  lambda r, ci, e, args=(paper, pa, pc, pi): _paper_section(*args)))
        else:
            anchor, title = _ANCHORS.get(section, (section.__name__.removesuffix("_section"), section.__name__))
            parts.append((anchor, title, section))
    return parts


def _footer(results: NightlyResults) -> str:
    from privbound.reports.schema import SCHEMA

    return (f"<footer class=\"small\">privbound nightly, run <code>{html.escape(str(results.run_id or '-'))}</code>, "
            f"code {html.escape(results.code_version)}, schema {SCHEMA}. The same night in other forms: "
            "<a href=\"results.json\">results.json</a>, <a href=\"summary.md\">summary.md</a>. "
            "<a href=\"#contents\">Back to the contents</a>.</footer>")


def render_html(results: NightlyResults, claims_info: list[dict] = (), experiment_pngs: list[Path] = (),
                progress: Any = None) -> str:
    """The report of ``results`` as one HTML string; ``claims_info`` (:func:`privbound.reports.nightly.claims_info`)
    describes the claims and their checks' mutants, ``experiment_pngs`` are figures shown at the end.
    ``progress`` (a :class:`privbound.reports.progress.PhaseProgress`) is told as each part starts and ends."""
    claims_info = list(claims_info)
    pngs = list(experiment_pngs)
    rendered = []
    for anchor, title, render in report_parts(results, claims_info):
        if progress is not None:
            progress.start(f"report.html: {title}")
        body = render(results, claims_info, pngs)
        if progress is not None:
            progress.done(f"report.html: {title}", "rendered")
        if body:
            rendered.append((anchor, title, body))
    toc = ("<nav class=\"toc\" id=\"contents\"><b>Contents</b><ol>"
           + "".join(f"<li><a href=\"#{a}\">{html.escape(t)}</a></li>" for a, t, _ in rendered) + "</ol></nav>")
    sections = [f"<section id=\"{a}\">\n{b}\n</section>" for a, _, b in rendered]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>privbound nightly {html.escape(results.profile)}</title><style>{_CSS}</style></head>"
            "<body>\n" + title_section(results) + "\n" + toc + "\n" + "\n".join(sections) + "\n"
            + _footer(results) + "\n</body></html>\n")
