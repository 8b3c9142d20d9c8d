"""The nightly run: audit every registered target and run the bound checks of a profile.

A night writes ``results.json``, ``summary.md`` and ``report.html`` into its output folder, then
appends itself to the history. The rules that keep a night whole:

* every location (the output folder, the cache folder, the history file) is checked before
  any work, and a bad one stops the run with one line naming it (:class:`NightlyError`);
* one run per output folder at a time (a lock naming its holder; ``wait`` to queue), one
  writer per history file; every run has a unique id;
* the three outputs are staged as temporary files and published only when all three are
  written (a full disk leaves the folder as it was), and only then is the history touched;
* a history that cannot be read or written costs the comparison or the record, never the
  night: a warning names the file and :func:`main_status` adds :data:`EXIT_HISTORY_NOT_UPDATED`.

Every audit of a correct target gets two verdicts: ``status`` against the paper's claim and
``tight_status`` against the tight epsilon of what its code runs (:func:`tight_status`).

Exit status (:func:`main_status`): 0 when every claim holds, no audit exceeds its tight epsilon (an
inconclusive tight verdict fails nothing), every check passes (or is
inconclusive or a documented erratum), every planted bug is caught and every floating-point
implementation registered as float-unsafe is caught by the floating-point audit, and (default and
full profiles) every check fails on each of its mutants; 1 otherwise; plus 4
(so 4 or 5) when the history was not updated. The command line returns 2 for bad arguments,
a bad location, a busy folder or an output that could not be written.

The night is one :class:`privbound.reports.schema.NightlyResults`: results.json is its JSON form
(schema ``privbound.nightly/2``, documented in :mod:`privbound.reports.schema`), and summary.md and
report.html are rendered from it.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import sys
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import IO, Any, Callable

from privbound.audit.cache import (atomic_write_bytes, sampling_library_versions, stage_bytes,
                                   sweep_stale_temporaries)
from privbound.audit.result import AuditResult
from privbound.audit.targets import Target, targets
from privbound.bounds.checks import CheckResult, run_checks
from privbound.mutation import MUTANT_PROFILES, Mutant
from privbound.reports.index import code_version
from privbound.reports.locations import (NIGHTLY_PROFILES, NightlyError, NightlyProfile, create_locations,
                                         default_out_dir, human_size, measured_text, resolve_paths,
                                         validate_paths)
from privbound.reports.progress import PhaseProgress
from privbound.reports.schema import (LEARNER_MUTANT_STATUSES, TIGHT_STATUSES, WALL_PENDING, AuditRecord, Counts,
                                      HistoryUpdate, LearnerMutantRecord, MembershipRecord, NightlyPaths,
                                      NightlyResults, as_results, wall_text)

__all__ = [
    "NIGHTLY_PROFILES", "NightlyProfile", "NightlyError", "NightlyPaths", "resolve_paths", "validate_paths",
    "run_nightly", "default_out_dir", "code_version", "write_atomic", "main_status", "EXIT_HISTORY_NOT_UPDATED",
    "OUTPUT_FILES", "audit_status", "tight_status", "TIGHT_POWER_FRACTION",
]

OUTPUT_FILES = ("results.json", "summary.md", "report.html")
EXIT_HISTORY_NOT_UPDATED = 4
HISTORY_LOCK_WAIT = 600.0  # seconds a run waits for another run's history transaction (seconds long)


DEFAULT_CACHE_MAX = 2 * 10**9
"""Bytes the cache is pruned to after a night (``--cache-max``): a cold default night leaves 1.06 GB (measured,
README "Operating the nightly"), so the cache keeps that night and about as much of the one before; never what
the night itself used."""


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file and a rename: never half-written."""
    atomic_write_bytes(path, lambda fh: fh.write(text.encode("utf-8")))


def new_run_id(started: _dt.datetime) -> str:
    """A unique run id: the UTC start to the second, then 8 random hex digits."""
    return f"{started.strftime('%Y%m%dT%H%M%SZ')}-{uuid.uuid4().hex[:8]}"


# ------------------------------------------------------------------- the work


def expects_violation(target: Target, float_audit: bool = False) -> bool:
    """A planted bug, or the floating-point audit of an implementation registered as float-unsafe."""
    return target.planted_bug or (float_audit and target.float_safe is False)


def trials_for(target: Target, profile: NightlyProfile, float_audit: bool = False) -> int:
    """The profile's share of the target's default trials; an audit that must catch a violation
    always runs at the default trials (a smaller profile must not lose the power to catch it)."""
    if expects_violation(target, float_audit):
        return target.default_trials
    return max(profile.min_trials, int(round(target.default_trials * profile.trial_scale)))


def audit_status(target: Target, violation: bool, float_audit: bool = False) -> str:
    """``holds``/``violated`` for a claim, ``caught``/``missed`` for a planted bug.

    A floating-point audit of an implementation registered as float-unsafe (``float_safe=False``)
    is judged like a planted bug: the floating-point attack must catch it.
    """
    if expects_violation(target, float_audit):
        return "caught" if violation else "missed"
    return "violated" if violation else "holds"


TIGHT_POWER_FRACTION = 0.5
"""The fraction of the tight epsilon an audit's bound must reach for its tight verdict to be ``holds``
(below it: ``inconclusive``); :func:`tight_status` says why."""


def tight_status(target: Target, result: AuditResult | None,
                 float_audit: bool = False) -> tuple[str | None, str | None]:
    """The second verdict of an audit: its epsilon lower bound against the tight epsilon of what the code runs.

    Returns ``(status, reason)``. For the mathematical audit of a correct target with a tight value
    (:meth:`Target.tight`, carried by ``result.epsilon_tight``), ``reason`` is None and ``status`` is

    * ``"violated"`` when the bound exceeds the tight epsilon: the implementation leaks more than what
      it runs allows -- a bug of the code or of its accounting -- even when the paper's looser claim
      holds. The bound holds at the audit's confidence, so a correct implementation reads ``violated``
      with probability at most one minus that confidence.
    * ``"holds"`` when the bound is at most the tight epsilon and at least :data:`TIGHT_POWER_FRACTION`
      (one half) of it. An audit's bound scales with the epsilon the code spends, so an audit that reaches
      half of the tight epsilon on the correct code would have gone past the tight epsilon on code that
      spends twice it (a noise scale halved, a sensitivity factor dropped): it had the power to see such
      a bug, and "holds" says the code was looked at closely enough to tell.
    * ``"inconclusive"`` when the bound is below half of the tight epsilon: the audit could not have seen
      even a 2x overspend, so its silence is no evidence; it must never read as "holds".

    ``status`` is None, and ``reason`` says why, when the audit has no tight verdict: the target states
    no tight epsilon (``reason`` is its ``no_tight_epsilon``), the audit failed, or it is judged by its
    claim verdict alone -- a planted bug (caught or missed) and a floating-point audit (whose tight
    epsilon would be the mathematical mechanism's, not the floating-point implementation's).
    """
    if result is None:
        return None, "the audit failed"
    if target.planted_bug:
        return None, "a planted bug: judged by its claim verdict (caught or missed)"
    if float_audit:
        return None, "a floating-point audit: judged against the claim only"
    tight = result.epsilon_tight
    if tight is None:
        return None, target.no_tight_epsilon or "the target states no tight epsilon"
    bound = result.epsilon_lower_bound
    if bound > tight:
        return "violated", None
    return ("holds" if bound >= TIGHT_POWER_FRACTION * tight else "inconclusive"), None


FAMILY_CONFIDENCE = 0.95
FLOAT_SUFFIX = ":floating-point"


def _reused(record_cache, key, from_dict, records: list, progress) -> bool:
    """Append the record the cache holds under ``key`` (and report it) when there is one; whether it did."""
    cached = None if key is None else record_cache.load(key)
    if cached is None:
        return False
    rec = from_dict(cached)
    records.append(rec)
    if progress is not None:
        progress(rec)
    return True


def audit_confidence(n_audits: int, family_confidence: float = FAMILY_CONFIDENCE) -> float:
    """Per-audit confidence so that all ``n_audits`` audits of a run together hold at ``family_confidence``.

    Bonferroni: a run of correct targets reports a false violation with probability
    at most ``1 - family_confidence``, however many targets are registered.
    """
    return 1.0 - (1.0 - family_confidence) / max(1, n_audits)


def audit_jobs(selected: list[Target]) -> list[tuple[Target, bool]]:
    """``(target, float_audit)`` of every audit a run makes: each target's audit, then a floating-point
    audit of each floating-point implementation (``float_safe`` not None), in registry order."""
    return [(t, False) for t in selected] + [(t, True) for t in selected if t.float_safe is not None]


def audit_name(target: Target, float_audit: bool) -> str:
    """The name of an audit in the results and the history: the target's, with a suffix for its floating-point audit."""
    return target.name + (FLOAT_SUFFIX if float_audit else "")




def environment_key() -> str:
    """The code and the libraries a finished audit depends on: the source digest, the Python version and the
    versions of :data:`~privbound.audit.cache.SAMPLING_LIBRARIES` (a cached audit record is reused only under the
    same)."""
    from privbound.audit.cache import sampling_library_versions
    from privbound.reports.index import source_digest

    return f"{source_digest()}|{sys.version_info[:2]}|{','.join(sampling_library_versions())}"


def record_key(kind: str, *parts: Any) -> str:
    """The cache key of a finished audit record: its kind, what determines it, and :func:`environment_key`."""
    from privbound.audit.cache import fingerprint

    return fingerprint("nightly-record", kind, *parts, environment_key())


def run_audits(
    selected: list[Target], profile: NightlyProfile, *, seed: int = 0, n_jobs: int | None = 1,
    progress: Callable[[AuditRecord], None] | None = None, cache_dir: Path | None = None,
    before: Callable[[str], None] | None = None, record_cache: Any = None,
) -> list[AuditRecord]:
    """Audit each target (and each floating-point implementation's floating point, :func:`audit_jobs`) at
    the Bonferroni-corrected confidence; an error in one audit is recorded, not fatal.

    ``before(name)`` is called as each audit starts, ``progress(record)`` as it finishes. ``record_cache``
    (a :class:`privbound.audit.cache.ResultCache`) keeps each finished record, keyed by the audit's name,
    trials, seed, confidence, the target's record and trial-cache key (its mechanism and pair) and
    :func:`environment_key`: a rerun reuses it whole -- trials, attack fits and estimate -- instead of
    recomputing it from the cached trial chunks. Failed audits are not kept.
    """
    records = []
    jobs = audit_jobs(selected)
    confidence = audit_confidence(len(jobs))
    for t, float_audit in jobs:
        name = audit_name(t, float_audit)
        if before is not None:
            before(name)
        trials = trials_for(t, profile, float_audit)
        key = None if record_cache is None else record_key("audit", name, trials, seed, confidence, t.record(),
                                                           t.cache_key(seed))
        if _reused(record_cache, key, AuditRecord.from_dict, records, progress):
            continue
        result = None
        try:
            result = t.audit(trials=trials, seed=seed, n_jobs=n_jobs,
                             confidence=confidence, cache_dir=None if cache_dir is None else str(cache_dir),
                             estimator="floating-point" if float_audit else "auto")
            status, payload, error = audit_status(t, result.any_violation, float_audit), result.to_dict(), None
        except Exception as exc:  # recorded and reported; the run exits 1
            status, payload, error = "error", None, f"{type(exc).__name__}: {exc}"
        tight, reason = tight_status(t, result, float_audit)
        rec = AuditRecord(target=name, family=t.family, paper=t.paper, planted_bug=t.planted_bug,
                          audit="floating-point" if float_audit else "mathematical", status=status, result=payload,
                          error=error, tight_status=tight, tight_reason=reason)
        if key is not None and status != "error":
            record_cache.store(key, rec.to_dict())
        records.append(rec)
        if progress is not None:
            progress(rec)
    return records


def skipped_target_notes() -> list[str]:
    """One line per optional family of targets that is not registered because its library is missing."""
    from privbound.audit.targets import libraries, opacus, opendp

    missing = [("OpenDP", opendp.UNAVAILABLE), *libraries.UNAVAILABLE.items(), ("Opacus", opacus.UNAVAILABLE)]
    return [f"{name} targets skipped: {reason}" for name, reason in missing if reason is not None]


def planned_checks(claim_ids: list[str] | None) -> list[str]:
    """``claim:check`` of every check :func:`run_checks` will run for ``claim_ids``, in its order."""
    from privbound.bounds.registry import claims, get

    selected = [get(i) for i in claim_ids] if claim_ids is not None else [c for c in claims() if c.checks]
    return [f"{c.id}:{k.name}" for c in selected for k in c.checks]


def count_results(audits: list[AuditRecord], checks: list[dict], mutants: list[dict] = (),
                  learner_mutants: list[LearnerMutantRecord] = (), mutants_not_run: int = 0) -> Counts:
    """The night's verdicts counted; a check marked ``expected`` (a documented erratum) is counted apart."""
    statuses = ("holds", "violated", "caught", "missed", "error")
    counted = [ch for ch in checks if not ch.get("expected")]
    detected = sum(1 for m in mutants if m["detected"])
    return Counts(**{k: sum(1 for a in audits if a.status == k) for k in statuses},
                  **{f"tight_{k}": sum(1 for a in audits if a.tight_status == k) for k in TIGHT_STATUSES},
                  **{f"checks_{k}": sum(1 for r in counted if r["status"] == k)
                     for k in ("pass", "fail", "inconclusive")},
                  mutants_detected=detected, mutants_undetected=len(mutants) - detected,
                  checks_expected_fail=len(checks) - len(counted),
                  **{f"learner_mutants_{k.replace('-', '_')}": sum(1 for m in learner_mutants if m.status == k)
                     for k in LEARNER_MUTANT_STATUSES}, mutants_not_run=mutants_not_run)


def runs_mutant(prof: NightlyProfile, mutant_profile: str) -> bool:
    """Whether a night of profile ``prof`` runs a mutant of profile ``mutant_profile``: when the night runs
    mutants at all (``prof.mutants``) and the mutant's profile is at most the night's (check and learner
    mutants alike)."""
    return prof.mutants is not None and MUTANT_PROFILES.index(mutant_profile) <= MUTANT_PROFILES.index(prof.mutants)


def learner_mutant_plan(selected: list[Target], prof: NightlyProfile) -> list[tuple[Target, Mutant, bool]]:
    """``(target, mutant, runs tonight)`` of every mutant of every selected target, in registry order."""
    return [(t, m, runs_mutant(prof, m.profile)) for t in selected for m in t.mutants]


def run_learner_mutants(
    selected: list[Target], prof: NightlyProfile, *, seed: int = 0,
    cache_dir: Path | None = None, before: Callable[[str], None] | None = None,
    progress: Callable[[LearnerMutantRecord], None] | None = None, record_cache: Any = None,
) -> list[LearnerMutantRecord]:
    """Audit each learner mutant of the selected targets that the profile runs (:func:`learner_mutant_plan`);
    list the others as ``not-run``. An error in one audit is recorded, not fatal.

    Each runs :meth:`Target.audit_mutant` at :func:`trials_for` the target's trials, seed ``seed``, with
    the chunk cache in ``cache_dir``: it is ``caught`` when the audit flags it -- its bound above the
    correct code's tight epsilon (``tight_violation``), or above the claim (``violation``) when the target
    has no tight value -- and ``missed`` otherwise. Each samples in this process whatever the night's ``n_jobs``
    (a mutant is patched here only: a worker process would sample the correct code).

    Confidence: each audit runs at the per-audit confidence of the night's target audits
    (:func:`audit_confidence` of :func:`audit_jobs`), and the mutants are *not* counted in that Bonferroni
    correction. The correction protects the night's claims about correct code: that no correct target is
    reported violated with probability above 5%. A mutant's verdict says nothing about correct code; it is
    judged for power (did the audit see the bug?), where a wider family would only make misses likelier,
    and a false "caught" of one mutant is bounded by the same per-audit level as any single audit. Leaving
    them out also keeps the target audits' confidence, and so their results, the same whether or not a
    profile runs mutants.

    ``before(name)`` is called as each audit starts (``<target>:<mutant>``), ``progress(record)`` as it
    finishes; ``record_cache`` keeps finished records as :func:`run_audits` does.
    """
    confidence = audit_confidence(len(audit_jobs(selected)))
    records = []
    for target, mutant, runs in learner_mutant_plan(selected, prof):
        fields = dict(target=target.name, mutant=mutant.name, description=mutant.description, profile=mutant.profile)
        if not runs:
            records.append(LearnerMutantRecord(**fields, status="not-run", result=None, error=None))
            continue
        if before is not None:
            before(f"{target.name}:{mutant.name}")
        key = (None if record_cache is None else
               record_key("learner-mutant", target.name, mutant.name, mutant.description, trials_for(target, prof),
                          seed, confidence, target.record(), target.cache_key(seed)))
        if _reused(record_cache, key, LearnerMutantRecord.from_dict, records, progress):
            continue
        try:
            result = target.audit_mutant(mutant, trials=trials_for(target, prof), seed=seed, confidence=confidence,
                                         cache_dir=None if cache_dir is None else str(cache_dir))
            rec = LearnerMutantRecord(**fields, status="caught" if result.flags_tightest else "missed",
                                      result=result.to_dict(),
                                      error=None)
        except Exception as exc:  # recorded and reported; the run exits 1
            rec = LearnerMutantRecord(**fields, status="error", result=None, error=f"{type(exc).__name__}: {exc}")
        if key is not None and rec.status != "error":
            record_cache.store(key, rec.to_dict())
        records.append(rec)
        if progress is not None:
            progress(rec)
    return records


def run_mutant_phase(prof: NightlyProfile, claim_ids: list[str] | None, *, seed: int = 0, stream=None,
                     progress: bool = False, cache=None) -> list[dict[str, Any]]:
    """Each check run on each of its mutants up to the profile's ``mutants`` (none when it is None), at the
    seeds the night's checks run with (run seed ``seed``): a check must be seen to fail on the bugs it guards
    against, every night."""
    if prof.mutants is None:
        return []
    from privbound.bounds.checks import run_mutants
    from privbound.bounds.registry import claims, get

    selected = [get(i) for i in claim_ids] if claim_ids is not None else [c for c in claims() if c.checks]
    planned = planned_mutants(prof, claim_ids)
    bar = PhaseProgress("mutants", len(planned), stream=stream, enabled=progress)
    position = {"i": 0}

    def on_row(row):
        bar.done(f"{row.claim_id}:{row.check}/{row.mutant}", "detected" if row.detected else "NOT detected")
        position["i"] += 1
        if position["i"] < len(planned):
            bar.start(planned[position["i"]])

    if planned:
        bar.start(planned[0])
    try:
        rows = run_mutants([c.id for c in selected], up_to=prof.mutants, seed=seed, progress=on_row, cache=cache)
    finally:
        bar.close()
    return [r.to_dict() for r in rows]


def planned_mutants(prof: NightlyProfile, claim_ids: list[str] | None, *, all_profiles: bool = False) -> list[str]:
    """``claim:check/mutant`` of every check mutant the night runs (with ``all_profiles``: every one registered),
    in the order :func:`privbound.bounds.checks.run_mutants` runs them."""
    from privbound.bounds.registry import claims, get

    selected = [get(i) for i in claim_ids] if claim_ids is not None else [c for c in claims() if c.checks]
    return [f"{c.id}:{k.name}/{m.name}" for c in selected for k in c.checks for m in k.mutants
            if all_profiles or runs_mutant(prof, m.profile)]


def main_status(results: NightlyResults | dict[str, Any]) -> int:
    """0 when every claim holds, no audit exceeds the tight epsilon of what the code runs, every planted bug
    is caught, every check mutant run is detected and every learner mutant run is caught, else 1 (an
    inconclusive tight verdict fails nothing); plus 4 when the history was not updated. ``results`` may be
    read back from a results.json."""
    results = as_results(results)
    c = results.counts
    bad = c.violated + c.tight_violated + c.missed + c.error + c.checks_fail + c.mutants_undetected
    bad += c.learner_mutants_missed + c.learner_mutants_error
    from privbound.reports.membership import membership_failures

    bad += membership_failures(results)
    status = 0 if bad == 0 else 1
    if results.history is not None and not results.history.updated:
        status += EXIT_HISTORY_NOT_UPDATED
    return status


def expected_failure(check: dict) -> bool:
    """A failing check that documents an erratum of the paper (the printed statement is wrong)."""
    return check["status"] == "fail" and bool((check.get("details") or {}).get("erratum"))


# -------------------------------------------------------------------- summary


def comparison_lines(results: NightlyResults) -> list[str]:
    """What this run was compared against, in words (the first lines of the changes section)."""
    comp = results.comparison
    base = None if comp is None else comp.baseline
    if base is None:
        return [(comp and comp.note) or "No baseline: no previous run of this profile."]
    return [f"Compared with run {base.run_id} (started {base.started_utc}, seed {base.seed}, "
            f"code {base.code_version})."]


def render_summary(results: NightlyResults) -> str:
    """``summary.md``: headline counts, comparison and changes, then the audits and the checks as tables."""
    from privbound.reports.html import check_meaning, mu_column, tight_columns

    c = results.counts
    lines = [
        f"# privbound nightly -- profile `{results.profile}`",
        "",
        f"Run `{results.run_id or '-'}`: code {results.code_version}, seed **{results.seed}**, "
        f"started {results.started_utc}, wall time {wall_text(results)}.",
        "",
    ]
    if results.libraries:
        lines += [f"Libraries: {', '.join(v for v in results.libraries if not v.endswith('=-'))}.", ""]
    if unrepeatable := results.unrepeatable():
        lines += [f"Audits that do not repeat for the seed (their library samples from a generator of its own; "
                  f"valid, but another run draws other trials): {', '.join(f'`{a}`' for a in unrepeatable)}.", ""]
    for d in () if results.comparison is None else results.comparison.differences:
        lines += [f"> **{d[0].upper() + d[1:]}.**", ""]
    for w in results.warnings:
        lines += [f"> **Warning:** {w}", ""]
    for n in results.notes:
        lines += [f"> {n}", ""]
    untight = sum(1 for a in results.audits if a.tight_status is None)
    lines += [
        f"- tight verdicts (bound against the tight epsilon of what the code runs): holds **{c.tight_holds}**, "
        f"violated **{c.tight_violated}**, inconclusive **{c.tight_inconclusive}** (bound below "
        f"{TIGHT_POWER_FRACTION:g} x tight: the audit could not have seen a 2x overspend); {untight} audit(s) "
        "without a tight verdict",
        f"- claims held: **{c.holds}**, violated: **{c.violated}**; planted bugs caught: **{c.caught}**, "
        f"missed: **{c.missed}**; errors: **{c.error}**",
        *([f"  - of the claims held, {len(weak)} hold only as far as their audit could see (inconclusive: at their "
           "trials it could not have certified a violation by a mechanism spending twice the claim): "
           + ", ".join(f"`{t}`" for t in weak)] if (weak := results.held_inconclusive()) else []),
        f"- bound checks: pass **{c.checks_pass}**, fail **{c.checks_fail}**, "
        f"inconclusive **{c.checks_inconclusive}**, documented errata **{c.checks_expected_fail}**",
        f"- mutants (checks run on broken versions of what they guard): detected **{c.mutants_detected}**, "
        f"not detected **{c.mutants_undetected}**"
        + (f", not run **{c.mutants_not_run}** ({_not_run_words(results.profile)})" if c.mutants_not_run else ""),
        *[f"  - not detected: `{m['claim_id']}:{m['check']}` under `{m['mutant']}` ({m['description']})"
          for m in results.mutants if not m["detected"]],
        learner_mutants_headline(results),
        *[f"  - {m.status}: `{m.name}` ({m.error or m.description})" for m in results.learner_mutants
          if m.status in ("missed", "error")],
        "",
        "## Changes since the previous run",
        "",
    ]
    lines += comparison_lines(results) + [""]
    changes = results.changes
    if results.comparison is not None and results.comparison.baseline is not None:
        if any(ch["kind"] != "note" for ch in changes):
            lines += [f"- {ch['kind']} `{ch['name']}`: {ch['change']}" if ch["kind"] != "note" else f"- {ch['change']}"
                      for ch in changes]
        else:
            lines += ["No change: same statuses, and no epsilon lower bound moved significantly."]
            lines += [f"- {ch['change']}" for ch in changes]
        lines += [""]
    lines += [
        "## Privacy audits",
        "",
        "Two verdicts per audit: the *tight verdict* judges the epsilon lower bound against the tight epsilon of "
        "what the code runs (violated above it; holds at most it and at least half of it; inconclusive below "
        "half), the *claim verdict* against the paper's claim (or, for a planted bug, whether it was caught).",
        "",
        "The *power* column is the audit's own status (`AuditResult.status`): inconclusive when, at its trials, it "
        "could not have certified a violation by a mechanism spending twice the claim. *GDP mu lower bound*: the "
        "mechanism is not mu-Gaussian-DP for any smaller mu (`mu_lower_bound`, from the certified trade-off curve, "
        "at its own confidence).",
        "",
        "| target | family | claim (eps, delta) | tight eps | eps lower bound | bound / tight | GDP mu lower bound | "
        "tight verdict | claim verdict | power | trials | audit | attack |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for a in results.audits:
        r = a.result or {}
        claim = f"({r.get('epsilon_claimed', float('nan')):g}, {r.get('delta', 0):g})" if r else "-"
        status = a.status + (f" ({a.error})" if a.error else "")
        tight_eps, lb, ratio = tight_columns(a)
        lines.append(f"| {a.target} | {a.family} | {claim} | {tight_eps} | {lb} | {ratio} | {mu_column(a)} | "
                     f"{a.tight_status or '-'} | "
                     f"{status} | {r.get('status') or '-'} | {r.get('trials', '-')} | {a.audit} | "
                     f"{r.get('attack', '-')} |")
    lines += ["", "## Bound checks", "",
              "A check passes when `observed` stands in the stated relation to `bound` (`~`: the fitted exponent's "
              "confidence interval contains the theorem's).", "",
              "| claim | check | kind | status | observed | relation | bound |", "|---|---|---|---|---|---|---|"]
    for ch in results.checks:
        obs = "-" if ch["observed"] is None else f"{ch['observed']:.4g}"
        bnd = "-" if ch["bound"] is None else f"{ch['bound']:.4g}"
        note = ""
        if ch["status"] == "fail" and (ch.get("details") or {}).get("erratum"):
            note = f" (erratum: {ch['details']['erratum']})"
        status = check_outcome(ch) if expected_failure(ch) else ch["status"]
        lines.append(f"| {ch['claim_id']} | {ch['check']} | {ch['kind']} | {status}{note} | {obs} | "
                     f"{check_meaning(ch)[0]} | {bnd} |")
    lines += learner_mutants_markdown(results)
    from privbound.reports.membership import membership_markdown

    lines += membership_markdown(results.membership)
    return "\n".join(lines) + "\n"


def learner_mutants_headline(results: NightlyResults) -> str:
    """The headline line of the learner mutants: how many were caught, missed, failed, not run."""
    c = results.counts
    line = (f"- learner mutants (privacy bugs planted in a target's learner, audited against the correct code's "
            f"tight epsilon): caught **{c.learner_mutants_caught}**, missed **{c.learner_mutants_missed}**")
    if c.learner_mutants_error:
        line += f", errors **{c.learner_mutants_error}**"
    if not results.learner_mutants:
        return line + " (no audited target declares one)"
    if c.learner_mutants_not_run:
        line += f", not run **{c.learner_mutants_not_run}** ({_not_run_words(results.profile)})"
    return line


def _not_run_words(profile: str) -> str:
    return ("the smoke profile runs no mutants; default runs those of profiles smoke and default, full all"
            if profile == "smoke" else f"their profile is above {profile}")


def learner_mutants_markdown(results: NightlyResults) -> list[str]:
    """Lines of ``summary.md``'s learner-mutant table (none when no audited target declares a mutant)."""
    from privbound.reports.html import tight_columns

    if not any(m.status != "not-run" for m in results.learner_mutants):
        return []
    lines = ["", "## Learner mutants", "",
             "Each mutant breaks a target's learner the way a privacy bug would; the target's own audit of the broken "
             "learner must exceed the tight epsilon of the correct code (caught).", "",
             "| target | mutant | what it breaks | profile | eps lower bound | tight eps (correct code) | status |",
             "|---|---|---|---|---|---|---|"]
    for m in results.learner_mutants:
        if m.status == "not-run":
            continue  # counted in the headline, not listed
        tight, bound, _ = tight_columns(m)
        status = m.status + (f" ({m.error})" if m.error else "")
        lines.append(f"| {m.target} | {m.mutant} | {m.description} | {m.profile} | {bound} | {tight} | {status} |")
    return lines


def claims_info() -> list[dict[str, Any]]:
    """id, checks (and their descriptions), quantity, uncheckable reason and pending note of every claim."""
    from privbound.bounds import claims

    return [{"id": c.id, "checks": [k.name for k in c.checks], "uncheckable_reason": c.uncheckable_reason,
             "pending": c.pending, "quantity": c.quantity,
             "descriptions": {k.name: k.description for k in c.checks},
             "mutants": {k.name: [{"name": m.name, "description": m.description, "profile": m.profile,
                                   "power": m.power} for m in k.mutants] for k in c.checks}} for c in claims()]


# ------------------------------------------------------------------------ run


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
    cache: str | os.PathLike | None = None,
    history: str | os.PathLike | None = None,
    wait: float = 0.0,
    stream: IO[str] | None = None,
    cache_max: int | None = None,
) -> tuple[NightlyResults, Path]:
    """Run the audits and checks of ``profile``; write results.json, summary.md and report.html into ``out``.

    Returns the night's :class:`~privbound.reports.schema.NightlyResults` (its :attr:`history` says whether
    the history was updated) and the output folder.

    ``membership_names`` selects the membership-inference audits (default: the profile's on a full run,
    none when ``target_names`` restricts the audits).

    With ``resume`` (the default), finished trial chunks, audit records and checks are kept in
    ``cache`` (default ``<parent of out>/.cache``) and reused, so rerunning an interrupted
    command picks up where it stopped and produces the same results; corrupt entries are
    detected and recomputed. ``cache_max`` (bytes; None: no pruning) prunes the cache's least recently
    used entries after the night, never those the night used. ``history`` defaults to
    ``<parent of out>/history.sqlite``. ``wait`` is how many seconds to wait for another run that holds
    the output folder (0: fail at once). Progress, the opening lines (profile, folders, items, expected
    time) and warnings go to ``stream`` (stderr by default).

    Raises :class:`NightlyError` (before any work, creating nothing) for a bad location or a busy folder,
    and (after the work, with nothing published) when the outputs cannot be written.
    """
    from privbound.reports.history import probe
    from privbound.reports.locking import LockBusy, RunLock, holder_info

    if profile not in NIGHTLY_PROFILES:
        raise ValueError(f"profile must be one of {sorted(NIGHTLY_PROFILES)}, got {profile!r}")
    prof = NIGHTLY_PROFILES[profile]
    stream = sys.stderr if stream is None else stream
    paths = resolve_paths(out, cache, history, resume=resume)
    validate_paths(paths)
    create_locations(paths)
    started = _dt.datetime.now(_dt.timezone.utc)
    run_id = new_run_id(started)
    warnings: list[str] = []

    def warn(message: str) -> None:
        warnings.append(message)
        stream.write(f"warning: {message}\n")
        stream.flush()

    lock = RunLock(paths.out / ".nightly.lock", f"--out {paths.out}")
    try:
        lock.acquire(holder_info(run_id=run_id, profile=profile, seed=seed), wait=wait,
                     on_wait=lambda m: (stream.write(f"{m}; waiting\n"), stream.flush()))
    except LockBusy as exc:
        raise NightlyError(f"{exc}; wait for it or pass --wait") from None
    started = _dt.datetime.now(_dt.timezone.utc)  # the work starts once the folder is this run's (after --wait)
    try:
        state = probe(paths.history)
        if state["problem"]:
            warn(f"{state['problem']}; the night runs and writes its outputs, but the history will not be updated")
        results = _do_run(prof, paths, seed=seed, n_jobs=n_jobs, target_names=target_names, claim_ids=claim_ids,
                          membership_names=membership_names, progress=progress, stream=stream, started=started,
                          run_id=run_id, warnings=warnings, warn=warn, history_state=state, cache_max=cache_max)
    finally:
        lock.release()
    return results, paths.out


def _outcome(rec: AuditRecord | MembershipRecord | LearnerMutantRecord) -> str:
    """An audit record's progress line: its status, its epsilon lower bound (and the tight epsilon it was
    judged against, for a learner mutant), its error."""
    r = rec.result or {}
    lb = r.get("epsilon_lower_bound")
    outcome = rec.status + ("" if lb is None else f", eps lower bound {lb:.3f}")
    if isinstance(rec, LearnerMutantRecord) and r.get("epsilon_tight") is not None:
        outcome += f" (tight epsilon of the correct code {r['epsilon_tight']:.3g})"
    return outcome + (f" ({rec.error})" if rec.error else "")


def check_outcome(check: dict[str, Any]) -> str:
    """A check's progress line: its status; a documented erratum's failure reads ``expected fail (documented
    erratum, printed|reconstructed form)``: it is what the check exists to show, not a failure of the night."""
    if expected_failure(check):
        form = (check.get("details") or {}).get("erratum_form")
        return "expected fail (documented erratum" + (f", {form} form)" if form else ")")
    return check["status"]


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def opening_lines(prof: NightlyProfile, paths: NightlyPaths, plan: dict[str, int], expected: str,
                  cached: dict[str, int] | None = None) -> list[str]:
    """The first lines of a night: the profile, the folders, the items of each phase, what the cache already
    holds of them (``cached``: phase -> items) and the expected time."""
    from privbound.audit.cache import cache_size

    cache = "no cache (resume off)" if paths.cache is None else (
        f"cache {paths.cache} ({human_size(cache_size(paths.cache))})")
    items = ", ".join(f"{n} {name.replace('_', ' ')}" for name, n in plan.items())
    lines = [f"privbound nightly, profile {prof.name}: {prof.summary}",
             f"  output folder {paths.out}; {cache}; history {paths.history}",
             f"  items: {items}"]
    if cached is not None:
        held = ", ".join(f"{cached[k]} of {plan[k]} {k.replace('_', ' ')}" for k in cached)
        lines.append(f"  the cache holds {held} (reused whole); checks and check mutants are cached by seed and "
                     "code, membership audits keep their models but refit their attacks")
    return lines + [f"  expected time: {expected}"]


def cached_records(selected: list[Target], prof: NightlyProfile, seed: int, record_cache: Any) -> dict[str, int]:
    """How many of the night's audits and learner mutants the record cache already holds."""
    jobs = audit_jobs(selected)
    confidence = audit_confidence(len(jobs))
    audits = sum(record_cache.has(record_key("audit", audit_name(t, f), trials_for(t, prof, f), seed, confidence,
                                             t.record(), t.cache_key(seed))) for t, f in jobs)
    mutants = sum(record_cache.has(record_key("learner-mutant", t.name, m.name, m.description, trials_for(t, prof),
                                              seed, confidence, t.record(), t.cache_key(seed)))
                  for t, m, runs in learner_mutant_plan(selected, prof) if runs)
    return {"audits": audits, "learner_mutants": mutants}


def expected_time(prof: NightlyProfile, history: Path, readable: bool) -> str:
    """The expected wall time of a night, in words: the median of this machine's last runs of the profile in
    the history, else the measured time of the profile (README, "Operating the nightly")."""
    from privbound.reports.history import recent_wall_seconds

    past = recent_wall_seconds(history, prof.name) if readable else []
    if past:
        past = sorted(past)
        median = past[len(past) // 2]
        return (f"about {_minutes(median)} (median of the last {len(past)} {prof.name} run(s) on this machine in the "
                f"history; range {_minutes(past[0])}-{_minutes(past[-1])})")
    if prof.measured:
        return f"{measured_text(prof)} (no {prof.name} run on this machine in the history yet)"
    return f"unknown (no {prof.name} run on this machine in the history yet)"


def _do_run(prof: NightlyProfile, paths: NightlyPaths, *, seed, n_jobs, target_names, claim_ids, membership_names,
            progress, stream, started, run_id, warnings, warn, history_state, cache_max=None) -> NightlyResults:
    t0 = time.perf_counter()
    t_wall0 = time.time()
    selected = targets() if target_names is None else [t for t in targets() if t.name in set(target_names)]
    later = [t.name for t in selected if target_names is None and not t.audited_in(prof.name)]
    selected = [t for t in selected if t.name not in set(later)]
    from privbound.audit.cache import ResultCache, cache_size
    from privbound.reports.membership import membership_plan, run_membership

    cache_root = paths.cache
    cache_before = 0 if cache_root is None else cache_size(cache_root)
    record_cache = None if cache_root is None else ResultCache(cache_root / "records")
    check_cache = None if cache_root is None else ResultCache(cache_root / "checks")
    for folder in (cache_root, paths.out):
        if folder is not None and folder.exists():
            sweep_stale_temporaries(folder)  # files a killed run staged but never published

    if membership_names is None and target_names is not None:
        membership_names = []
    planned_membership = membership_plan(prof.name, membership_names)
    planned = planned_checks(claim_ids)
    n_mutants = len(planned_mutants(prof, claim_ids)) if prof.mutants is not None else 0
    learner_plan = learner_mutant_plan(selected, prof)
    plan = {"audits": len(audit_jobs(selected)), "learner_mutants": sum(runs for *_, runs in learner_plan),
            "checks": len(planned), "check_mutants": n_mutants, "membership_audits": len(planned_membership)}
    if progress:
        cached = None if record_cache is None else cached_records(selected, prof, seed, record_cache)
        for line in opening_lines(prof, paths, plan, expected_time(prof, paths.history, history_state["readable"]),
                                  cached):
            stream.write(line + "\n")
        stream.flush()

    with PhaseProgress("audits", plan["audits"], stream=stream, enabled=progress) as bar:
        audits = run_audits(selected, prof, seed=seed, n_jobs=n_jobs, before=bar.start,
                            progress=lambda rec: bar.done(rec.target, _outcome(rec)),
                            cache_dir=None if cache_root is None else cache_root / "chunks", record_cache=record_cache)
    t_audits = time.perf_counter() - t0

    with PhaseProgress("learner mutants", plan["learner_mutants"], stream=stream, enabled=progress) as lbar:
        learner_mutants = run_learner_mutants(selected, prof, seed=seed, before=lbar.start,
                                              progress=lambda rec: lbar.done(rec.name, _outcome(rec)),
                                              cache_dir=None if cache_root is None else cache_root / "chunks",
                                              record_cache=record_cache)
    t_learner_mutants = time.perf_counter() - t0 - t_audits

    position = {"i": 0}
    with PhaseProgress("checks", len(planned), stream=stream, enabled=progress) as cbar:
        def on_check(r: CheckResult):
            cbar.done(f"{r.claim_id}:{r.check}", check_outcome(r.to_dict()))
            position["i"] += 1
            if position["i"] < len(planned):
                cbar.start(planned[position["i"]])

        if planned:
            cbar.start(planned[0])
        check_results: list[CheckResult] = run_checks(claim_ids, profile=prof.checks, seed=seed, n_jobs=n_jobs,
                                                      cache=check_cache, progress=on_check)
    t_checks = time.perf_counter() - t0 - t_audits - t_learner_mutants
    mutants = run_mutant_phase(prof, claim_ids, seed=seed, stream=stream, progress=progress,
                               cache=check_cache)
    t_mutants = time.perf_counter() - t0 - t_audits - t_learner_mutants - t_checks
    checks = [r.to_dict() for r in check_results]
    # A failure that documents an erratum is expected: it is reported, and does not fail the run.
    for ch in checks:
        if expected_failure(ch):
            ch["expected"] = True
    # Membership inference: the profile's targets on a full run, none on a run restricted to some
    # audit targets unless membership_names says which.
    with PhaseProgress("membership", len(planned_membership), stream=stream, enabled=progress) as mbar:
        membership = run_membership(prof.name, planned_membership, seed=seed, n_jobs=n_jobs,
                                    cache_dir=None if cache_root is None else cache_root / "membership",
                                    before=mbar.start, progress=lambda rec: mbar.done(rec.target, _outcome(rec)))
    t_membership = time.perf_counter() - t0 - t_audits - t_learner_mutants - t_checks - t_mutants
    n_mutants_all = len(planned_mutants(prof, claim_ids, all_profiles=True))
    results = NightlyResults(
        run_id=run_id,
        profile=prof.name,
        started_utc=started.isoformat(timespec="seconds"),
        finished_utc=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        wall_seconds=time.perf_counter() - t0,
        phases={"audits": t_audits, "learner_mutants": t_learner_mutants, "checks": t_checks, "mutants": t_mutants,
                "membership": t_membership},
        code_version=code_version(),
        libraries=sampling_library_versions(),
        seed=seed,
        audit_family_confidence=FAMILY_CONFIDENCE,
        audit_confidence=audit_confidence(len(audit_jobs(selected))),
        paths=paths,
        warnings=tuple(warnings),
        notes=tuple(skipped_target_notes() if target_names is None else ()) + (
            (f"Audited only by the full profile: {', '.join(later)}",) if later else ()),
        audits=tuple(audits),
        checks=tuple(checks),
        counts=count_results(audits, checks, mutants, learner_mutants, mutants_not_run=n_mutants_all - len(mutants)),
        membership=tuple(membership),
        mutants=tuple(mutants),
        learner_mutants=tuple(learner_mutants),
    )
    results = finish_run(results, paths, warn=warn, history_state=history_state, t0=t0, stream=stream,
                         progress=progress)
    if cache_root is not None:
        results = replace(results, cache=_cache_after(cache_root, cache_before, cache_max, t_wall0))
    return results


def _cache_after(root: Path, before: int, cache_max: int | None, since: float) -> dict[str, Any]:
    """The cache after a night (never in results.json, which is written before): its size, what the night added,
    and what pruning to ``cache_max`` removed (entries the night used are kept)."""
    from privbound.audit.cache import cache_size, prune_cache

    size = cache_size(root)
    info = {"bytes": size, "added_bytes": max(0, size - before), "max_bytes": cache_max, "pruned_bytes": 0}
    if cache_max is not None and size > cache_max:
        pruned = prune_cache(root, cache_max, keep_since=since - 1.0)
        info.update(bytes=pruned.kept_bytes, pruned_bytes=pruned.removed_bytes)
    return info


def _render_outputs(results: NightlyResults, paths: NightlyPaths, bar: PhaseProgress | None = None,
                    claims: list[dict[str, Any]] | None = None) -> dict[str, str]:
    """summary.md and report.html of ``results`` (``bar`` shows each part as it is rendered)."""
    from privbound.reports.html import render_html

    experiments = sorted((paths.out.parent / "experiments").glob("**/*.png"))
    if bar is not None:
        bar.start("summary.md")
    summary = render_summary(results)
    if bar is not None:
        bar.done("summary.md", "rendered")
    claims = claims_info() if claims is None else claims
    return {"summary.md": summary, "report.html": render_html(results, claims, experiments, progress=bar)}


def report_items(results: NightlyResults, claims: list[dict[str, Any]]) -> int:
    """How many parts the report phase renders (summary.md, then each part of report.html)."""
    from privbound.reports.html import report_parts

    return 1 + len(report_parts(results, claims))


def publish(out_dir: Path, texts: dict[str, str]) -> list[Path]:
    """Write every file of ``texts`` into ``out_dir``, all or none: stage each, then rename each.

    A write that fails (a full disk, say) removes what was staged and raises
    :class:`NightlyError` naming the file; the folder keeps what it had.
    """
    staged: list[tuple[Path, Path]] = []
    try:
        for name, text in texts.items():
            data = text.encode("utf-8")
            staged.append((stage_bytes(out_dir / name, lambda fh, d=data: fh.write(d)), out_dir / name))
    except OSError as exc:
        for tmp, _ in staged:
            try:
                tmp.unlink()
            except OSError:
                pass
        raise NightlyError(f"cannot write {out_dir / name}: {_reason(exc)}; no output of this run was published "
                           "and the history was not touched (rerun: finished work is in the cache)") from None
    for tmp, dst in staged:
        os.replace(tmp, dst)
    return [dst for _, dst in staged]


def finish_run(results: NightlyResults, paths: NightlyPaths, *, warn: Callable[[str], None] = lambda m: None,
               history_state: dict[str, Any] | None = None, t0: float | None = None, stream: IO[str] | None = None,
               progress: bool = False) -> NightlyResults:
    """Compare with the history, write results.json, summary.md, report.html, then record the run.

    Returns ``results`` with its ``changes``, ``comparison``, the ``report`` phase, the night's one wall
    time and the warnings raised here, and (set after the outputs are published, so not in results.json)
    its ``history``. ``history_state`` is :func:`privbound.reports.history.probe`'s verdict on the file
    (probed here when not given). ``t0`` (a ``time.perf_counter()``) is when the night began: its
    ``wall_seconds`` -- the same number in results.json, summary.md, report.html and on the terminal -- runs
    from there to the rendered outputs (without ``t0``: the work's wall time plus the report's). ``progress``
    shows the report phase on ``stream``.
    """
    from privbound.reports.history import HistoryError, compare, comparison_summary, previous_run, probe, record_run
    from privbound.reports.locking import LockBusy, RunLock, holder_info

    t_report = time.perf_counter()
    emitted: list[str] = []

    def warn_here(message: str) -> None:
        emitted.append(message)
        warn(message)

    hist = paths.history
    state = dict(probe(hist) if history_state is None else history_state)
    problem = state["problem"]
    hlock = None
    if state["writable"]:
        hlock = RunLock(Path(f"{hist}.lock"), f"history {hist}")
        try:
            hist.parent.mkdir(parents=True, exist_ok=True)
            hlock.acquire(holder_info(run_id=results.run_id), wait=HISTORY_LOCK_WAIT)
        except (LockBusy, OSError) as exc:
            hlock = None
            state["writable"] = False
            problem = (f"{exc} for more than {HISTORY_LOCK_WAIT:.0f} s" if isinstance(exc, LockBusy)
                       else f"cannot lock history {hist}: {_reason(exc)}")
            warn_here(f"{problem}; the history will not be updated")
    try:
        previous = None
        if state["readable"]:
            try:
                previous = previous_run(hist, results.profile, results.started_utc, exclude=results.run_id)
            except HistoryError as exc:
                state.update(readable=False, writable=False)
                problem = str(exc)
                warn_here(f"{exc}; the outputs are written, the history is not updated")
        if not state["readable"]:
            note = f"No baseline: {problem}."
        elif previous is None:
            note = f"No baseline: no previous run of profile {results.profile} in {hist}."
        else:
            note = None
        results = replace(results, warnings=(*results.warnings, *emitted), changes=tuple(compare(results, previous)),
                          comparison=replace(comparison_summary(results, previous), note=note))
        published_warnings = len(emitted)
        work = results.wall_seconds
        claims = claims_info()
        with PhaseProgress("report", report_items(results, claims), stream=stream, enabled=progress) as bar:
            texts = _render_outputs(replace(results, wall_seconds=math.nan), paths, bar, claims)
        report = time.perf_counter() - t_report
        wall = (time.perf_counter() - t0) if t0 is not None else work + report
        results = replace(results, phases={**results.phases, "report": report}, wall_seconds=wall)
        texts = {name: text.replace(WALL_PENDING, f"{wall:.1f} s") for name, text in texts.items()}
        texts["results.json"] = results.to_json()
        publish(paths.out, texts)
        t1 = time.perf_counter()
        updated = False
        if state["writable"]:
            try:
                record_run(hist, results, paths.out)
                updated = True
            except HistoryError as exc:
                problem = str(exc)
                warn_here(f"{exc}; the night's outputs stand, the history was not updated")
        return replace(results, warnings=(*results.warnings, *emitted[published_warnings:]),
                       history=HistoryUpdate(path=str(hist), updated=updated, problem=problem,
                                             seconds=time.perf_counter() - t1))
    finally:
        if hlock is not None:
            hlock.release()
