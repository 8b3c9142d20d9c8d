"""The nightly run: audit every registered target and run the bound checks of a profile.

Writes ``results.json`` (schema below, versioned) and ``summary.md`` into the output
directory. Exit status of :func:`main_status`: 0 when every claim holds, every
check passes (or is inconclusive) and every planted bug is caught; 1 otherwise.

``results.json`` schema ``privbound.nightly/2``::

    {
      "schema": "privbound.nightly/2",
      "profile": "smoke" | "default" | "full",
      "started_utc": ISO 8601, "finished_utc": ISO 8601, "wall_seconds": float,
      "code_version": str,                 # privbound version + git commit when available
      "audits": [ {                        # one per target
          "target": str, "family": str, "paper": str | null, "planted_bug": bool,
          "status": "holds" | "violated" | "caught" | "missed" | "error",
          "result": AuditResult.to_dict() | null, "error": str | null } ],
      "checks": [ CheckResult.to_dict() ],  # one per (claim, check)
      "counts": {"holds": int, "violated": int, "caught": int, "missed": int, "error": int,
                 "checks_pass": int, "checks_fail": int, "checks_inconclusive": int},
      "membership": [ {                    # membership-inference audits (privbound.reports.membership)
          "target": str, "family": str, "paper": str | null, "planted_bug": bool,
          "status": "holds" | "violated" | "caught" | "missed" | "non-private" | "error",
          "result": MembershipResult.to_dict() without record_risk | null, "error": str | null } ]
    }
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from privbound.audit.cache import atomic_write_bytes
from privbound.audit.targets import Target, targets
from privbound.bounds.checks import CheckResult, run_checks

__all__ = ["NIGHTLY_PROFILES", "NightlyProfile", "run_nightly", "default_out_dir", "code_version", "write_atomic"]

SCHEMA = "privbound.nightly/2"


@dataclass(frozen=True)
class NightlyProfile:
    """Budget of a nightly run.

    ``trial_scale`` multiplies each correct target's default trials (never below
    ``min_trials``); planted bugs always run at their default trials, so that "caught"
    means the same thing in every profile. ``checks`` is the bounds profile.
    """

    name: str
    trial_scale: float
    min_trials: int
    checks: str


NIGHTLY_PROFILES = {
    "smoke": NightlyProfile("smoke", 0.2, 2_000, "smoke"),
    "default": NightlyProfile("default", 1.0, 10_000, "default"),
    "full": NightlyProfile("full", 10.0, 10_000, "full"),
}


def default_out_dir() -> Path:
    """``reports/out/<UTC date>/`` relative to the current directory."""
    return Path("reports") / "out" / _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d")


def code_version() -> str:
    """privbound's version and, inside a git checkout, the commit."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        v = version("privbound")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        v = "0+unknown"
    try:
        here = Path(__file__).resolve().parent
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"{v}+{commit}" if commit else v


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file and a rename: never half-written."""
    atomic_write_bytes(path, lambda fh: fh.write(text.encode("utf-8")))


def trials_for(target: Target, profile: NightlyProfile) -> int:
    if target.planted_bug:
        return target.default_trials
    return max(profile.min_trials, int(round(target.default_trials * profile.trial_scale)))


def audit_status(target: Target, violation: bool) -> str:
    if target.planted_bug:
        return "caught" if violation else "missed"
    return "violated" if violation else "holds"


FAMILY_CONFIDENCE = 0.95


def audit_confidence(n_audits: int, family_confidence: float = FAMILY_CONFIDENCE) -> float:
    """Per-audit confidence so that all ``n_audits`` audits of a run together hold at ``family_confidence``.

    Bonferroni: a run of correct targets reports a false violation with probability
    at most ``1 - family_confidence``, however many targets are registered.
    """
    return 1.0 - (1.0 - family_confidence) / max(1, n_audits)


def run_audits(
    selected: list[Target], profile: NightlyProfile, *, seed: int = 0, n_jobs: int | None = 1,
    progress: Callable[[dict], None] | None = None, cache_dir: Path | None = None,
) -> list[dict[str, Any]]:
    """Audit each target at the Bonferroni-corrected confidence; an error in one target is recorded, not fatal."""
    records = []
    confidence = audit_confidence(len(selected))
    for t in selected:
        rec: dict[str, Any] = {"target": t.name, "family": t.family, "paper": t.paper, "planted_bug": t.planted_bug}
        try:
            result = t.audit(trials=trials_for(t, profile), seed=seed, n_jobs=n_jobs, confidence=confidence,
                             cache_dir=None if cache_dir is None else str(cache_dir))
            rec.update(status=audit_status(t, result.violation), result=result.to_dict(), error=None)
        except Exception as exc:  # recorded and reported; the run exits 1
            rec.update(status="error", result=None, error=f"{type(exc).__name__}: {exc}")
        records.append(rec)
        if progress is not None:
            progress(rec)
    return records


def _counts(audits: list[dict], checks: list[dict]) -> dict[str, int]:
    c = {k: 0 for k in ("holds", "violated", "caught", "missed", "error")}
    for a in audits:
        c[a["status"]] += 1
    for k in ("pass", "fail", "inconclusive"):
        c[f"checks_{k}"] = sum(1 for r in checks if r["status"] == k)
    return c


def main_status(results: dict[str, Any]) -> int:
    """0 when every claim holds and every planted bug is caught, else 1."""
    c = results["counts"]
    bad = c["violated"] + c["missed"] + c["error"] + c["checks_fail"]
    # --- membership inference (privbound.reports.membership) ---
    from privbound.reports.membership import membership_failures

    bad += membership_failures(results)
    # --- end membership inference ---
    return 0 if bad == 0 else 1


def render_summary(results: dict[str, Any]) -> str:
    """``summary.md``: headline counts, then the audits and the checks as tables."""
    c = results["counts"]
    lines = [
        f"# privbound nightly -- profile `{results['profile']}`",
        "",
        f"Code {results['code_version']}, started {results['started_utc']}, {results['wall_seconds']:.1f} s.",
        "",
        f"- claims held: **{c['holds']}**, violated: **{c['violated']}**; planted bugs caught: **{c['caught']}**, "
        f"missed: **{c['missed']}**; errors: **{c['error']}**",
        f"- bound checks: pass **{c['checks_pass']}**, fail **{c['checks_fail']}**, "
        f"inconclusive **{c['checks_inconclusive']}**",
        "",
    ]
    if results.get("changes"):
        lines += ["## Changes since the previous run", ""]
        lines += [f"- {ch['kind']} `{ch['name']}`: {ch['change']}" for ch in results["changes"]]
        lines += [""]
    lines += [
        "## Privacy audits",
        "",
        "| target | family | claimed (eps, delta) | eps lower bound | trials | attack | status |",
        "|---|---|---|---|---|---|---|",
    ]
    for a in results["audits"]:
        r = a["result"] or {}
        claim = f"({r.get('epsilon_claimed', float('nan')):g}, {r.get('delta', 0):g})" if r else "-"
        lb = f"{r['epsilon_lower_bound']:.3f}" if r else "-"
        status = a["status"] + (f" ({a['error']})" if a["error"] else "")
        lines.append(f"| {a['target']} | {a['family']} | {claim} | {lb} | {r.get('trials', '-')} | "
                     f"{r.get('attack', '-')} | {status} |")
    lines += ["", "## Bound checks", "", "| claim | check | kind | status | observed | bound |", "|---|---|---|---|---|---|"]
    for ch in results["checks"]:
        obs = "-" if ch["observed"] is None else f"{ch['observed']:.4g}"
        bnd = "-" if ch["bound"] is None else f"{ch['bound']:.4g}"
        note = ""
        if ch["status"] == "fail" and (ch.get("details") or {}).get("erratum"):
            note = f" (erratum: {ch['details']['erratum']})"
        lines.append(f"| {ch['claim_id']} | {ch['check']} | {ch['kind']} | {ch['status']}{note} | {obs} | {bnd} |")
    # --- membership inference (privbound.reports.membership) ---
    from privbound.reports.membership import membership_markdown

    lines += membership_markdown(results.get("membership"))
    # --- end membership inference ---
    return "\n".join(lines) + "\n"


def expected_failure(check: dict) -> bool:
    """A failing check that documents an erratum of the paper (the printed statement is wrong)."""
    return check["status"] == "fail" and bool((check.get("details") or {}).get("erratum"))


def run_nightly(
    profile: str = "default",
    out: str | os.PathLike | None = None,
    *,
    seed: int = 0,
    n_jobs: int | None = 1,
    target_names: list[str] | None = None,
    claim_ids: list[str] | None = None,
    progress: bool = True,
    resume: bool = True,
    membership_names: list[str] | None = None,
) -> tuple[dict[str, Any], Path]:
    """Run the audits and checks of ``profile``; write results.json, summary.md and report.html into ``out``.

    ``membership_names`` selects the membership-inference audits (default: the profile's on a full run,
    none when ``target_names`` restricts the audits).

    With ``resume`` (the default), finished trial chunks and finished checks are kept in
    ``<out>/../.cache/`` and reused, so rerunning an interrupted command picks up where
    it stopped and produces the same results; corrupt entries are detected and recomputed.
    """
    if profile not in NIGHTLY_PROFILES:
        raise ValueError(f"profile must be one of {sorted(NIGHTLY_PROFILES)}, got {profile!r}")
    prof = NIGHTLY_PROFILES[profile]
    out_dir = Path(out) if out is not None else default_out_dir()
    started = _dt.datetime.now(_dt.timezone.utc)
    t0 = time.perf_counter()
    selected = targets() if target_names is None else [t for t in targets() if t.name in set(target_names)]

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(selected), desc="audits", unit="target", file=sys.stderr, leave=False)

    def on_audit(rec):
        if bar is not None:
            bar.update(1)
            bar.set_postfix_str(f"{rec['target']}: {rec['status']}")

    cache_root = out_dir.parent / ".cache" if resume else None
    audits = run_audits(selected, prof, seed=seed, n_jobs=n_jobs, progress=on_audit,
                        cache_dir=None if cache_root is None else cache_root / "chunks")
    if bar is not None:
        bar.close()
    check_cache = None
    if cache_root is not None:
        from privbound.audit.cache import ResultCache

        check_cache = ResultCache(cache_root / "checks")
    check_results: list[CheckResult] = run_checks(claim_ids, profile=prof.checks, n_jobs=n_jobs, cache=check_cache)
    checks = [r.to_dict() for r in check_results]
    # A failure that documents an erratum is expected: it is reported, and does not fail the run.
    for ch in checks:
        if expected_failure(ch):
            ch["expected"] = True
    counted = [ch for ch in checks if not ch.get("expected")]
    # --- membership inference (privbound.reports.membership): the profile's targets on a full run, none on a
    # run restricted to some audit targets unless membership_names says which ---
    from privbound.reports.membership import run_membership

    if membership_names is None and target_names is not None:
        membership_names = []
    membership = run_membership(profile, membership_names, seed=seed, n_jobs=n_jobs,
                                cache_dir=None if cache_root is None else cache_root / "membership")
    # --- end membership inference ---
    results = {
        "schema": SCHEMA,
        "profile": profile,
        "started_utc": started.isoformat(timespec="seconds"),
        "finished_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "wall_seconds": time.perf_counter() - t0,
        "code_version": code_version(),
        "seed": seed,
        "audit_family_confidence": FAMILY_CONFIDENCE,
        "audit_confidence": audit_confidence(len(selected)),
        "audits": audits,
        "checks": checks,
        "counts": _counts(audits, counted),
        "membership": membership,  # membership inference (privbound.reports.membership)
    }
    results["counts"]["checks_expected_fail"] = len(checks) - len(counted)
    finish_run(results, out_dir)
    return results, out_dir


def claims_info() -> list[dict[str, Any]]:
    """id, checks, uncheckable reason and pending note of every registered claim."""
    from privbound.bounds import claims

    return [{"id": c.id, "checks": [k.name for k in c.checks], "uncheckable_reason": c.uncheckable_reason,
             "pending": c.pending} for c in claims()]


def finish_run(results: dict[str, Any], out_dir: Path) -> None:
    """Compare with the history, record the run, and write results.json, summary.md, report.html."""
    from privbound.reports.history import HISTORY_NAME, compare, previous_run, record_run
    from privbound.reports.html import render_html

    history = out_dir.parent / HISTORY_NAME
    changes = compare(results, previous_run(history, results["profile"], results["started_utc"]))
    results["changes"] = changes
    experiments = sorted((out_dir.parent / "experiments").glob("**/*.png"))
    write_atomic(out_dir / "results.json", json.dumps(results, indent=1, sort_keys=True, allow_nan=False))
    write_atomic(out_dir / "summary.md", render_summary(results))
    write_atomic(out_dir / "report.html", render_html(results, changes, claims_info(), experiments))
    record_run(history, results, out_dir)
