"""Membership inference in the reports: the ``privbound membership`` command and the nightly section.

* :func:`add_parser` / :func:`cmd_membership` -- ``privbound membership NAME`` (and ``privbound membership
  list``): one :func:`privbound.audit.membership.membership_audit` of a registered membership target.
* :func:`run_membership` -- the nightly run's membership audits (the targets and model counts of a
  profile), one :class:`~privbound.reports.schema.MembershipRecord` per target, an error in one
  recorded, not fatal.
* :func:`membership_section_html` / :func:`membership_markdown` -- the report's section: per target the
  attacks' TPR at low FPR, AUC and epsilon lower bound, the log-log ROC, and the records at highest risk.
"""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from privbound.reports import arguments
from privbound.reports.schema import MembershipRecord, NightlyResults

__all__ = [
    "MEMBERSHIP_PROFILES",
    "add_parser",
    "cmd_membership",
    "run_membership",
    "membership_plan",
    "membership_failures",
    "membership_section_html",
    "membership_markdown",
    "roc_loglog_plot",
    "roc_loglog_figure",
]

# profile -> (targets, reference models, target models); None: every target with its own defaults.
MEMBERSHIP_PROFILES: dict[str, tuple[tuple[str, ...] | None, int | None, int | None]] = {
    "smoke": (("digits-logreg", "batch-perceptron", "batch-perceptron-noise-div100", "randomized-response-eps1",
               "randomized-response-eps1-bug"), 8, 4),
    "default": (None, 16, 8),
    "full": (None, None, None),
}


def _status(target, result) -> str:
    if target.planted_bug:
        return "caught" if result.violation else "missed"
    if not target.private:
        return "non-private"
    return "violated" if result.violation else "holds"


def membership_plan(profile: str, names: Sequence[str] | None = None) -> list[str]:
    """The membership targets a nightly profile runs, in order (``names`` overrides; ``[]`` runs none)."""
    from privbound.audit.targets.membership import membership_targets

    if names is not None:
        return list(names)
    default_names = MEMBERSHIP_PROFILES[profile][0]
    return list(default_names) if default_names is not None else [x.name for x in membership_targets()]


def run_membership(profile: str, names: Sequence[str] | None = None, *, seed: int = 0, n_jobs: int | None = 1,
                   cache_dir: str | Path | None = None, before: Callable[[str], None] | None = None,
                   progress: Callable[[MembershipRecord], None] | None = None) -> list[MembershipRecord]:
    """Membership audits of a nightly profile (``names`` overrides its target list; ``[]`` runs none).

    ``before(name)`` is called as each audit starts, ``progress(record)`` as it finishes.
    """
    from privbound.audit.targets.membership import get_membership_target

    _, k, t = MEMBERSHIP_PROFILES[profile]
    records = []
    for name in membership_plan(profile, names):
        if before is not None:
            before(name)
        target = get_membership_target(name)
        try:
            result = target.audit(n_reference=k, n_targets=t, seed=seed, n_jobs=n_jobs,
                                  cache_dir=None if cache_dir is None else str(cache_dir))
            d = result.to_dict()
            d.pop("record_risk")  # the ranked top records stay; the per-record array would bloat results.json
            status, payload, error = _status(target, result), d, None
        except Exception as exc:  # recorded and reported; the run exits 1
            status, payload, error = "error", None, f"{type(exc).__name__}: {exc}"
        rec = MembershipRecord(target=name, family=target.family, paper=target.paper,
                               planted_bug=target.planted_bug, status=status, result=payload, error=error)
        records.append(rec)
        if progress is not None:
            progress(rec)
    return records


def membership_failures(results: NightlyResults) -> int:
    """Membership audits of a nightly run that fail it: a claim violated, a planted bug missed, an error."""
    return sum(1 for r in results.membership if r.status in ("violated", "missed", "error"))


# ============================================================================ plots and sections


def roc_loglog_figure(name: str, attacks: list[dict[str, Any]]):
    """The attacks' ROC curves on log-log axes (Carlini et al. 2022), as a matplotlib figure."""
    from privbound.reports.plots import FONT, SMALL, log_ticks, plt

    fig, ax = plt.subplots(figsize=(4.6, 4.2))
    floor = 1.0
    for a in attacks:
        fpr = [f for f in a["roc_fpr"] if f and f > 0]
        tpr = [t for f, t in zip(a["roc_fpr"], a["roc_tpr"]) if f and f > 0]
        if fpr:
            floor = min(floor, fpr[0])
            ax.loglog(fpr, [max(t, fpr[0] / 10) for t in tpr], lw=1.2, label=a["attack"])
    ax.loglog([floor, 1], [floor, 1], color="grey", lw=0.6, ls=":")
    ax.set_xlim(floor, 1)
    ax.set_ylim(floor, 1)
    log_ticks(ax.xaxis, floor, 1.0)
    log_ticks(ax.yaxis, floor, 1.0)
    ax.set_xlabel("FPR", fontsize=FONT)
    ax.set_ylabel("TPR", fontsize=FONT)
    ax.tick_params(labelsize=SMALL)
    ax.set_title(f"{name}: membership ROC", fontsize=FONT)
    ax.legend(fontsize=SMALL, loc="lower right", framealpha=0.9)
    return fig


def roc_loglog_plot(name: str, attacks: list[dict[str, Any]]) -> bytes:
    """:func:`roc_loglog_figure` as PNG bytes."""
    from privbound.reports.plots import _png

    return _png(roc_loglog_figure(name, attacks))


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return html.escape(str(v))


def _tpr(a: dict, fpr: float) -> float | None:
    for p in a["at_fpr"]:
        if abs(p["target_fpr"] - fpr) <= 1e-12:
            return p["tpr"]
    return None


def membership_section_html(records: Sequence[MembershipRecord]) -> str:
    """The report section: a table of the targets, then per target its log-log ROC and riskiest records."""
    if not records:
        return ""
    import base64

    parts = ["<h2>Membership inference</h2>",
             "<p class=\"small\">LiRA (Carlini et al. 2022), RMIA (Zarifzadeh et al. 2024) and the loss threshold "
             "(Yeom et al. 2018) against reference models; epsilon lower bound from the one-run game of Steinke, "
             "Nasr &amp; Jagielski (2023), every (target model, record) a canary.</p>",
             "<table><tr><th>target</th><th>claim</th><th>relation</th><th>models (ref / target)</th>"
             "<th>best TPR@1e-3</th><th>best AUC</th><th>&epsilon; lower bound</th><th>status</th></tr>"]
    for rec in records:
        r = rec.result or {}
        atk = r.get("attacks") or []
        best = max(atk, key=lambda a: _tpr(a, 1e-3) or 0.0) if atk else None
        claim = ("non-private" if r and r.get("epsilon_claimed") is None
                 else f"({_fmt(r.get('epsilon_claimed'))}, {_fmt(r.get('delta'))})")
        status = rec.status + (f": {rec.error}" if rec.error else "")
        cls = {"non-private": "inconclusive"}.get(rec.status, rec.status)
        parts.append(
            f"<tr><td>{html.escape(rec.target)}</td><td>{claim if r else '-'}</td><td>{_fmt(r.get('relation'))}</td>"
            f"<td>{_fmt(r.get('n_reference'))} / {_fmt(r.get('n_targets'))}</td>"
            f"<td>{_fmt(_tpr(best, 1e-3)) if best else '-'} ({html.escape(best['attack']) if best else '-'})</td>"
            f"<td>{_fmt(max((a['auc'] for a in atk), default=None))}</td><td>{_fmt(r.get('epsilon_lower_bound'))}</td>"
            f"<td class=\"{cls}\">{html.escape(status)}</td></tr>")
    parts.append("</table>")
    for rec in records:
        r = rec.result
        if not r:
            continue
        parts.append(f"<h3>{html.escape(rec.target)}</h3>")
        rows = ["<table><tr><th>attack</th><th>TPR@1e-3</th><th>TPR@1e-2</th><th>AUC</th><th>advantage</th></tr>"]
        for a in r["attacks"]:
            rows.append(f"<tr><td>{html.escape(a['attack'])}</td><td>{_fmt(_tpr(a, 1e-3))}</td><td>{_fmt(_tpr(a, 1e-2))}</td>"
                        f"<td>{_fmt(a['auc'])}</td><td>{_fmt(a['advantage'])}</td></tr>")
        rows.append("</table>")
        top = ["<table><tr><th>record</th><th>label</th><th>risk (TPR at FPR "
               f"{_fmt(r['risk_fpr'])})</th><th>&mu; in</th><th>&mu; out</th></tr>"]
        for t in r["top_records"][:5]:
            top.append(f"<tr><td>{t['index']}</td><td>{_fmt(t['label'])}</td><td>{_fmt(t['risk'])}</td>"
                       f"<td>{_fmt(t['mu_in'])}</td><td>{_fmt(t['mu_out'])}</td></tr>")
        top.append("</table>")
        png = base64.b64encode(roc_loglog_plot(rec.target, r["attacks"])).decode()
        parts.append(f'<div class="figs"><img alt="membership ROC {html.escape(rec.target)}" '
                     f'src="data:image/png;base64,{png}"></div>' + "".join(rows) + "<p>Records at highest risk</p>"
                     + "".join(top))
    return "\n".join(parts)


def membership_markdown(records: Sequence[MembershipRecord]) -> list[str]:
    """Lines of ``summary.md``'s membership table (none without membership audits)."""
    if not records:
        return []
    lines = ["", "## Membership inference", "", "| target | claim | best TPR@1e-3 | eps lower bound | status |",
             "|---|---|---|---|---|"]
    for rec in records:
        r = rec.result or {}
        atk = r.get("attacks") or []
        best = max((_tpr(a, 1e-3) or 0.0 for a in atk), default=None)
        claim = "-" if not r else ("non-private" if r.get("epsilon_claimed") is None else f"{r['epsilon_claimed']:g}")
        lb = "-" if not r else f"{r['epsilon_lower_bound']:.3f}"
        lines.append(f"| {rec.target} | {claim} | {'-' if best is None else f'{best:.4f}'} | {lb} | {rec.status} |")
    return lines


# ============================================================================ command line


def add_parser(sub) -> None:
    """Register ``privbound membership`` on the CLI's subparsers."""
    me = sub.add_parser("membership", help="membership-inference audit of a model (LiRA, RMIA, loss threshold)")
    me.add_argument("name", help="membership target (`privbound membership list` lists them)")
    me.add_argument("--reference-models", type=arguments.int_at_least("reference-models", 2), default=None,
                    metavar="K", help="reference models (default: the target's)")
    me.add_argument("--targets", type=arguments.positive_int("targets"), default=None, metavar="T",
                    help="target models (default: the target's)")
    me.add_argument("--seed", type=arguments.nonneg_int("seed"), default=0)
    me.add_argument("--n-jobs", type=arguments.n_jobs, default=1)
    me.add_argument("--confidence", type=arguments.confidence, default=0.95)
    me.add_argument("--cache", default=None, metavar="DIR", help="keep finished models here; a rerun resumes")
    me.add_argument("--top", type=arguments.nonneg_int("top"), default=10, help="riskiest records to print")
    me.add_argument("--dask-scheduler", default=None, metavar="ADDRESS")
    me.add_argument("--json", action="store_true", help="print MembershipResult.to_dict() as JSON")


def cmd_membership(args) -> int:
    """``privbound membership NAME``: 0 when the verdict is the expected one, 1 otherwise."""
    from privbound.reports.index import membership_index

    recs = membership_index()
    if args.name == "list":
        if args.json:
            print(json.dumps(recs, indent=1))
        else:
            width = max(len(r["name"]) for r in [*recs, {"name": "name"}])
            print(f"{'name':{width}s} {'family':20s} {'epsilon':>8s} {'relation':18s} planted_bug")
            for r in recs:
                eps = "-" if r["epsilon"] is None else f"{r['epsilon']:g}"
                print(f"{r['name']:{width}s} {r['family']:20s} {eps:>8s} {r['relation']:18s} {r['planted_bug']}")
        return 0
    if args.name not in {r["name"] for r in recs} and "privbound.audit.targets.membership" not in sys.modules:
        import difflib

        close = difflib.get_close_matches(args.name, [r["name"] for r in recs], n=3)
        raise arguments.CLIError(f"no membership target {args.name!r}" + (f" (did you mean {', '.join(close)}?)"
                                                                          if close else "")
                                 + "; see `privbound membership list`")
    from privbound.audit.targets.membership import get_membership_target

    try:
        target = get_membership_target(args.name)
    except KeyError as exc:
        raise ValueError(str(exc.args[0])) from None  # the CLI prints it as one line, exit 2
    n_jobs = -1 if (args.dask_scheduler and args.n_jobs == 1) else args.n_jobs
    with arguments.dask_backend(args.dask_scheduler):
        result = target.audit(n_reference=args.reference_models, n_targets=args.targets, seed=args.seed,
                              n_jobs=n_jobs, confidence=args.confidence, cache_dir=args.cache, top=max(args.top, 1))
    if args.json:
        print(json.dumps(result.to_dict(), sort_keys=True))
    else:
        print(result.summary(top=args.top))
        if target.planted_bug:
            print(f"  planted bug        : {'caught' if result.violation else 'MISSED'}")
    status = _status(target, result)
    return 1 if status in ("violated", "missed") else 0

