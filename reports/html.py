"""``report.html``: a self-contained nightly report (inline CSS, PNG plots as data URIs).

Layout: the run (id, seed, code) and anything that makes its comparison special (another
seed or code version than the baseline, warnings), the headline table, the changes since
the baseline run (named), each target's epsilon lower bound against its claim (one log-axis
panel per paper), then one section for the reference mechanisms and one per paper (its
audits with their ROC curves, its bound checks -- each row stating the relation that must
hold and what is compared -- its scaling fits, its claims without checks), then the
experiment figures found beside the output folder. No script, no external resource: it
reads offline in any browser, and every figure fits a 1400 px wide window.

The page is rendered from the night's :class:`~privbound.reports.schema.NightlyResults`. It is a list of
sections (:data:`SECTIONS`, each ``section(results, claims_info, experiment_pngs) -> html``); a new section is
one function and one entry.
"""

from __future__ import annotations

import base64
import html
import math
from pathlib import Path
from typing import Any

from privbound.reports import plots
from privbound.reports.schema import AuditRecord, LearnerMutantRecord, NightlyResults

__all__ = ["render_html", "PAPER_TITLES", "SECTIONS", "check_meaning", "mutants_section", "learner_mutants_section",
           "tight_columns"]

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
"""

_REL = {"<=": "&le;", ">=": "&ge;", "==": "=", "~": "&asymp;"}


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
    tight verdict (why there is none as a tooltip), the claim verdict, then how the audit ran."""
    rows = ["<table><tr><th>target</th><th>family</th><th>claim (&epsilon;, &delta;)</th><th>tight &epsilon;</th>"
            "<th>&epsilon; lower bound</th><th>bound / tight</th><th>tight verdict</th><th>claim verdict</th>"
            "<th>p-value (claim)</th><th>trials</th><th>audit</th><th>attack</th><th>accountant &epsilon;</th></tr>"]
    for a in audits:
        r = a.result or {}
        acc = r.get("accountant_epsilon") or {}
        acc_s = ", ".join(f"{k} {v:.3g}" for k, v in acc.items()) or "-"
        claim = f"({_fmt(r.get('epsilon_claimed'))}, {_fmt(r.get('delta'))})" if r else "-"
        status = a.status + (f": {a.error}" if a.error else "")
        tight_eps, bound, ratio = tight_columns(a)
        source = r.get("tight_source")
        tight_cell = (f"<td class=\"num\" title=\"{html.escape(source)}\">{tight_eps}</td>" if source
                      else f"<td class=\"num\">{tight_eps}</td>")
        verdict = (f"<td class=\"{a.tight_status}\">{a.tight_status}</td>" if a.tight_status else
                   f"<td class=\"small\" title=\"{html.escape(a.tight_reason or '')}\">-</td>")
        rows.append(f"<tr><td>{html.escape(a.target)}</td><td>{html.escape(a.family)}</td><td>{claim}</td>"
                    f"{tight_cell}<td class=\"num\">{bound}</td><td class=\"num\">{ratio}</td>{verdict}"
                    f"<td class=\"{a.status}\">{html.escape(status)}</td>"
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


def _check_table(checks: list[dict], descriptions: dict[str, str]) -> str:
    rows = ["<p class=\"small\">A check passes when <i>observed</i> stands in the row's relation to <i>bound</i> "
            "(&asymp;: the fitted exponent's confidence interval contains the theorem's).</p>",
            "<table><tr><th>claim</th><th>check</th><th>kind</th><th>observed</th><th>relation</th><th>bound</th>"
            "<th>ratio</th><th>trials</th><th>status</th><th>what is compared</th></tr>"]
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
        rows.append(f"<tr><td>{html.escape(c['claim_id'])}</td><td>{html.escape(c['check'])}</td><td>{c['kind']}</td>"
                    f"<td class=\"num\">{_fmt(c.get('observed'))}</td><td class=\"rel\">{_REL[rel]}</td>"
                    f"<td class=\"num\">{_fmt(c.get('bound'))}</td><td class=\"num\">{_fmt(c.get('ratio'), 3)}</td>"
                    f"<td class=\"num\">{_fmt(c.get('trials'))}</td><td class=\"{cls}\">{c['status']}{note}</td>"
                    f"<td class=\"small\">{html.escape(what)}</td></tr>")
    rows.append("</table>")
    return "\n".join(rows)


def _paper_section(paper: str | None, audits: list[AuditRecord], checks: list[dict], claims_info: list[dict]) -> str:
    title = PAPER_TITLES.get(paper, paper)
    parts = [f"<h2>{html.escape(str(title))}</h2>"]
    if audits:
        parts.append("<h3>Privacy audits</h3>")
        parts.append(_audit_table(audits))
        figs = []
        for a in audits:
            r = a.result or {}
            roc = (r.get("details") or {}).get("roc")
            if roc:
                figs.append(_img(plots.roc_plot(a.target, roc, r["epsilon_claimed"], r["delta"],
                                                (r.get("fpr"), r.get("tpr"))), f"ROC {a.target}"))
        if figs:
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
    return "\n".join(parts)


def _by_paper(results: NightlyResults, claims_info: list[dict]):
    present = {a.paper for a in results.audits}
    for paper in [*PAPER_TITLES, *sorted(p for p in present if p not in PAPER_TITLES)]:
        pa = [a for a in results.audits if a.paper == paper]
        pc = [ch for ch in results.checks if paper is not None and ch["claim_id"].startswith(paper + "/")]
        pi = [ci for ci in claims_info if paper is not None and ci["id"].startswith(paper + "/")]
        yield paper, pa, pc, pi


# ----------------------------------------------------------------- sections


def header_section(results: NightlyResults, claims_info: list[dict], experiment_pngs) -> str:
    c = results.counts
    out = [
        f"<h1>privbound nightly report &mdash; profile <code>{html.escape(results.profile)}</code></h1>",
        f"<p class=\"small\">run <code>{html.escape(str(results.run_id or '-'))}</code>, "
        f"code {html.escape(results.code_version)}, <b>seed {results.seed}</b>, started "
        f"{html.escape(results.started_utc)}, {results.wall_seconds:.1f} s</p>",
    ]
    for d in () if results.comparison is None else results.comparison.differences:
        out.append(f"<div class=\"notice\"><b>{html.escape(d[0].upper() + d[1:])}.</b></div>")
    for w in results.warnings:
        out.append(f"<div class=\"warning\"><b>Warning:</b> {html.escape(w)}</div>")
    for n in results.notes:
        out.append(f"<div class=\"notice\">{html.escape(n)}</div>")
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
    if not results.audits:
        return ""
    figs = [_img(plots.epsilon_plot([a.to_dict() for a in pa],
                                    f"{PAPER_TITLES.get(paper, paper)}: epsilon lower bound vs claim"),
                 f"epsilon lower bounds, {PAPER_TITLES.get(paper, paper)}")
            for paper, pa, _, _ in _by_paper(results, claims_info) if any(a.result for a in pa)]
    return "<h2>Empirical &epsilon; against claims</h2><div class=\"figs\">" + "".join(figs) + "</div>"


def papers_section(results: NightlyResults, claims_info: list[dict], experiment_pngs) -> str:
    return "\n".join(_paper_section(paper, pa, pc, pi) for paper, pa, pc, pi in _by_paper(results, claims_info)
                     if pa or pc or pi)


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
                    tonight, cls = f"not run tonight (detected at the {m['profile']} profile)", "inconclusive"
                elif r["detected"]:
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
    head = (f"<p>Every check is run on broken versions of what it guards (its mutants) and must fail on them. "
            f"Tonight: {c.mutants_detected} detected, {c.mutants_undetected} not detected, "
            f"{len(rows) - len(ran)} not run in this profile.</p>")
    parts = ["<h2>Checks with teeth: mutants</h2>", head,
             "<table><tr><th>claim</th><th>check</th><th>mutant</th><th>what it breaks</th><th>detected at</th>"
             "<th>tonight</th><th>observed / bound under the mutant</th></tr>", *rows, "</table>"]
    if bare:
        parts.append("<h3>Checks without a mutant</h3><p class=\"small\">Printed forms of documented errata (they "
                     "fail by design; their corrected twins carry the mutants) and checks that are inconclusive by "
                     "design: " + ", ".join(html.escape(f"{a}:{b}") for a, b in bare) + ".</p>")
    return "\n".join(parts)


def learner_mutants_section(results: NightlyResults, claims_info: list[dict], experiment_pngs) -> str:
    """Audits with teeth: each mutant of each audited target's learner, the bound its audit reached against the
    tight epsilon of the correct code, and whether it was caught (or why it was not run)."""
    if not results.learner_mutants:
        return ""
    c = results.counts
    rows = []
    for m in results.learner_mutants:
        tight, bound, _ = tight_columns(m)
        source = (m.result or {}).get("tight_source")
        tight_cell = (f"<td class=\"num\" title=\"{html.escape(source)}\">{tight}</td>" if source
                      else f"<td class=\"num\">{tight}</td>")
        if m.status == "not-run":
            tonight, cls = f"not run tonight (runs at the {m.profile} profile)", "inconclusive"
        else:
            tonight = m.status + (f": {m.error}" if m.error else "")
            cls = {"caught": "caught", "missed": "missed"}.get(m.status, "error")
        rows.append(f"<tr><td>{html.escape(m.target)}</td><td>{html.escape(m.mutant)}</td>"
                    f"<td class=\"small\">{html.escape(m.description)}</td><td>{m.profile}</td>"
                    f"<td class=\"num\">{bound}</td>{tight_cell}<td class=\"{cls}\">{html.escape(tonight)}</td></tr>")
    head = (f"<p>Each mutant breaks a target's learner the way a privacy bug would (a noise scale halved, a "
            f"sensitivity factor dropped); the target's audit of the broken learner must exceed the tight &epsilon; "
            f"of the correct code. Tonight: {c.learner_mutants_caught} caught, {c.learner_mutants_missed} missed, "
            f"{c.learner_mutants_error} errors, {c.learner_mutants_not_run} not run in this profile.</p>")
    return "\n".join(["<h2>Audits with teeth: learner mutants</h2>", head,
                      "<table><tr><th>target</th><th>mutant</th><th>what it breaks</th><th>profile</th>"
                      "<th>&epsilon; lower bound</th><th>tight &epsilon; (correct code)</th><th>tonight</th></tr>",
                      *rows, "</table>"])


SECTIONS = [header_section, changes_section, epsilon_section, papers_section, learner_mutants_section,
            mutants_section, membership_section, experiments_section]


def render_html(results: NightlyResults, claims_info: list[dict] = (), experiment_pngs: list[Path] = ()) -> str:
    """The report of ``results`` as one HTML string; ``claims_info`` (:func:`privbound.reports.nightly.claims_info`)
    describes the claims and their checks' mutants, ``experiment_pngs`` are figures shown at the end."""
    claims_info = list(claims_info)
    body = [s(results, claims_info, list(experiment_pngs)) for s in SECTIONS]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>privbound nightly {html.escape(results.profile)}</title><style>{_CSS}</style></head>"
            "<body>\n" + "\n".join(b for b in body if b) + "\n</body></html>\n")
