"""The nightly run's results as typed values: what ``results.json`` holds, and how to read it back.

A night (:func:`privbound.reports.nightly.run_nightly`) builds one :class:`NightlyResults`; results.json
is its :meth:`NightlyResults.to_json`, and summary.md and report.html are rendered from it. Readers of a
results.json (the history, a report built later) get the same value back with :func:`load_results` or
:meth:`NightlyResults.from_dict`. The payloads of other layers stay their own ``to_dict()`` forms, typed
as mappings: an audit's ``AuditResult.to_dict()``, a check's ``CheckResult.to_dict()``, a mutant run's
``MutantResult.to_dict()``, a membership audit's ``MembershipResult.to_dict()``.

``results.json`` schema ``privbound.nightly/2`` (fields marked + were added within /2; a reader of an
older file gets their empty value: None, an empty list or mapping, 0 for a count)::

    {
      "schema": "privbound.nightly/2",
      "run_id": str,                        # + unique: "<UTC start>-<8 hex digits>"
      "profile": "smoke" | "default" | "full",
      "started_utc": ISO 8601, "finished_utc": ISO 8601,
      "wall_seconds": float,                # the night's one wall time: start to rendered outputs
                                            # (the terminal's total and the report's header say the same)
      "phases": {"audits": s, "learner_mutants": s, "checks": s, "mutants": s, "membership": s,
                 "report": s},          # + wall seconds (+ learner_mutants)
      "code_version": str,                  # privbound version + git commit when available
      "libraries": [str],                   # + "name=version" of the libraries that sample (part of cache keys)
      "seed": int, "audit_family_confidence": float, "audit_confidence": float,
      "paths": {"out", "cache", "history"}, # + where this run read and wrote
      "comparison": {"baseline": {run_id, started_utc, seed, code_version, out_dir} | null,
                     "note": str, "differences": [str], "rule": str, "alpha": float,
                     "threshold": float},   # + what the changes were computed against
      "changes": [{kind, name, change, status, rank, ...}],
      "warnings": [str],                    # +
      "notes": [str],                       # + e.g. targets of an optional library not installed
      "audits": [ {                         # one per target, then one per floating-point implementation
                                            # (+ result.status: holds | violated | inconclusive and
                                            #  result.power: the audit's power, AuditResult.to_dict())
          "target": str,                    # the target's name; + "<name>:floating-point" for its float audit
          "audit": "mathematical" | "floating-point",  # +
          "family": str, "paper": str | null, "planted_bug": bool,
          "status": "holds" | "violated" | "caught" | "missed" | "error",    # the claim verdict
          "tight_status": "holds" | "violated" | "inconclusive" | null,      # + against the tight epsilon
          "tight_reason": str | null,       # + why tight_status is null (e.g. the target's no_tight_epsilon)
          "result": AuditResult.to_dict() | null, "error": str | null } ],
      "checks": [ CheckResult.to_dict() (+ "expected": true for a documented erratum) ],
      "counts": {"holds", "violated", "caught", "missed", "error", "checks_pass", "checks_fail",
                 "checks_inconclusive", "checks_expected_fail", "mutants_detected", "mutants_undetected",
                 "tight_holds", "tight_violated", "tight_inconclusive", "learner_mutants_caught",
                 "learner_mutants_missed", "learner_mutants_error", "learner_mutants_not_run",
                 "mutants_not_run": int},   # + tight_*, learner_mutants_*, mutants_not_run (check mutants
                                            # above the night's profile: counted, not listed)
      "mutants": [ MutantResult.to_dict() ],  # + each check on each of its mutants (default, full)
      "learner_mutants": [ {                # + each mutant (privacy bug) of each audited target's learner
          "target": str, "mutant": str, "description": str,
          "profile": "smoke" | "default" | "full",  # the smallest profile that runs it
          "status": "caught" | "missed" | "error" | "not-run",  # not-run: above the night's mutant profile
          "result": AuditResult.to_dict() of Target.audit_mutant | null, "error": str | null } ],
      "membership": [ {                    # membership-inference audits (privbound.reports.membership)
          "target": str, "family": str, "paper": str | null, "planted_bug": bool,
          "status": "holds" | "violated" | "caught" | "missed" | "non-private" | "error",
          "result": MembershipResult.to_dict() without record_risk | null, "error": str | null } ]
    }

This module imports no other module of :mod:`privbound.reports`.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

__all__ = [
    "SCHEMA",
    "AUDIT_KINDS",
    "AUDIT_STATUSES",
    "MEMBERSHIP_STATUSES",
    "TIGHT_STATUSES",
    "LEARNER_MUTANT_STATUSES",
    "NightlyPaths",
    "BaselineRun",
    "Comparison",
    "AuditRecord",
    "MembershipRecord",
    "LearnerMutantRecord",
    "Counts",
    "HistoryUpdate",
    "NightlyResults",
    "load_results",
    "as_results",
    "WALL_PENDING",
    "wall_text",
]

SCHEMA = "privbound.nightly/2"
AUDIT_KINDS = ("mathematical", "floating-point")
AUDIT_STATUSES = ("holds", "violated", "caught", "missed", "error")
MEMBERSHIP_STATUSES = ("holds", "violated", "caught", "missed", "non-private", "error")
TIGHT_STATUSES = ("holds", "violated", "inconclusive")
LEARNER_MUTANT_STATUSES = ("caught", "missed", "error", "not-run")
WALL_PENDING = "[[privbound: wall time]]"
"""What :func:`wall_text` writes for a night whose wall time is not known yet (``wall_seconds`` NaN): the
nightly renders its outputs, then replaces it with the wall time that includes their rendering."""


# ----------------------------------------------------------------- reading


def _plain(value: Any) -> Any:
    """``value`` as plain JSON containers (dicts and lists), copied: no record shares state with its JSON."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _keys(data: Any, where: str, required: Sequence[str], optional: Mapping[str, Any] = {}) -> dict[str, Any]:
    """The values of ``data`` (a JSON object) for ``required`` and ``optional`` keys (the latter defaulted).

    Raises TypeError when ``data`` is not a mapping, ValueError naming ``where`` and the keys when one is
    missing or unknown.
    """
    if not isinstance(data, Mapping):
        raise TypeError(f"{where} must be a mapping (a JSON object), got {type(data).__name__}")
    known = [*required, *optional]
    unknown = [k for k in data if k not in known]
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown}; the schema {SCHEMA} has {known}")
    missing = [k for k in required if k not in data]
    if missing:
        raise ValueError(f"{where}: missing key(s) {missing}")
    return {k: data[k] if k in data else optional[k] for k in known}


def _mapping_or_none(value: Any, where: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(f"{where} must be a mapping or null, got {type(value).__name__}")
    return _plain(value)


def _mappings(values: Any, where: str) -> tuple[dict[str, Any], ...]:
    if not isinstance(values, (list, tuple)):
        raise TypeError(f"{where} must be a list, got {type(values).__name__}")
    out = []
    for i, v in enumerate(values):
        if not isinstance(v, Mapping):
            raise TypeError(f"{where}[{i}] must be a mapping, got {type(v).__name__}")
        out.append(_plain(v))
    return tuple(out)


def _strings(values: Any, where: str) -> tuple[str, ...]:
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, str) for v in values):
        raise TypeError(f"{where} must be a list of strings, got {values!r}")
    return tuple(values)


def _one_of(value: Any, allowed: Sequence[str], where: str) -> None:
    if value not in allowed:
        raise ValueError(f"{where} must be one of {list(allowed)}, got {value!r}")


# ----------------------------------------------------------------- values


@dataclass(frozen=True)
class NightlyPaths:
    """Where a run writes.

    Attributes
    ----------
    out : Path
        The output folder (results.json, summary.md, report.html).
    cache : Path or None
        The chunk / check / model cache a rerun resumes from (None: the run keeps no cache).
    history : Path
        The SQLite run history the run is compared with and appended to.
    """

    out: Path
    cache: Path | None
    history: Path

    def to_dict(self) -> dict[str, str | None]:
        return {"out": str(self.out), "cache": None if self.cache is None else str(self.cache),
                "history": str(self.history)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "paths") -> NightlyPaths:
        d = _keys(data, where, ("out", "cache", "history"))
        return cls(Path(d["out"]), None if d["cache"] is None else Path(d["cache"]), Path(d["history"]))


@dataclass(frozen=True)
class BaselineRun:
    """The previous run a night is compared with, as the history names it.

    Attributes
    ----------
    run_id, started_utc : str
        Its unique id and its UTC start (ISO 8601).
    seed : int
        Its run seed.
    code_version : str
        The code it ran (privbound version + git commit).
    out_dir : str
        The folder it wrote its outputs into.
    """

    run_id: str
    started_utc: str
    seed: int
    code_version: str
    out_dir: str

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "started_utc": self.started_utc, "seed": self.seed,
                "code_version": self.code_version, "out_dir": self.out_dir}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "comparison.baseline") -> BaselineRun:
        return cls(**_keys(data, where, ("run_id", "started_utc", "seed", "code_version", "out_dir")))


@dataclass(frozen=True)
class Comparison:
    """How a night was compared with the history (:func:`privbound.reports.history.comparison_summary`).

    Attributes
    ----------
    baseline : BaselineRun or None
        The run compared with; None when there is none (see ``note``).
    rule : str
        The rule that decides which epsilon changes count, in words.
    alpha : float
        The family-wise rate of spurious epsilon changes the rule allows.
    threshold : float
        The |z| above which an epsilon change counts, for this night's number of audits.
    differences : tuple of str
        What makes the comparison special (another seed or code version than the baseline's).
    note : str or None
        Why there is no baseline (no previous run, a history that cannot be read), or None.
    """

    baseline: BaselineRun | None
    rule: str
    alpha: float
    threshold: float
    differences: tuple[str, ...] = ()
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"baseline": None if self.baseline is None else self.baseline.to_dict(), "rule": self.rule,
                "alpha": self.alpha, "threshold": self.threshold, "differences": list(self.differences),
                "note": self.note}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "comparison") -> Comparison:
        d = _keys(data, where, ("baseline", "rule", "alpha", "threshold", "differences", "note"))
        base = None if d["baseline"] is None else BaselineRun.from_dict(d["baseline"], f"{where}.baseline")
        return cls(base, d["rule"], d["alpha"], d["threshold"], _strings(d["differences"], f"{where}.differences"),
                   d["note"])


@dataclass(frozen=True, repr=False)
class AuditRecord:
    """One audit of a night: a target's (mathematical) audit or a floating-point implementation's float audit.

    Attributes
    ----------
    target : str
        The target's name; ``"<name>:floating-point"`` for its floating-point audit.
    family : str
        The target's family.
    paper : str or None
        The paper id, None for the reference mechanisms.
    planted_bug : bool
        The target is a planted bug (the audit must catch it).
    audit : str
        ``"mathematical"`` or ``"floating-point"`` (:data:`AUDIT_KINDS`).
    status : str
        The claim verdict (:data:`AUDIT_STATUSES`): ``holds`` / ``violated`` for a claim, ``caught`` /
        ``missed`` for an audit that must flag a violation, ``error`` when the audit failed.
    result : mapping or None
        ``AuditResult.to_dict()``; None when the audit failed.
    error : str or None
        The failure, ``"<exception type>: <message>"``, or None.
    tight_status : str or None
        The verdict against the tight epsilon of what the code runs (:data:`TIGHT_STATUSES`,
        :func:`privbound.reports.nightly.tight_status`): ``violated`` above it, ``holds`` at most it and at
        least half of it, ``inconclusive`` below half of it; None when there is no tight verdict.
    tight_reason : str or None
        Why ``tight_status`` is None (the target's ``no_tight_epsilon``, a planted bug, a floating-point
        audit, a failed audit); None when there is a tight verdict.
    """

    target: str
    family: str
    paper: str | None
    planted_bug: bool
    audit: str
    status: str
    result: Mapping[str, Any] | None
    error: str | None
    tight_status: str | None = None
    tight_reason: str | None = None

    def __post_init__(self) -> None:
        _one_of(self.audit, AUDIT_KINDS, f"audit record {self.target!r}: audit")
        _one_of(self.status, AUDIT_STATUSES, f"audit record {self.target!r}: status")
        if self.tight_status is not None:
            _one_of(self.tight_status, TIGHT_STATUSES, f"audit record {self.target!r}: tight_status")

    @property
    def epsilon_lower_bound(self) -> float | None:
        """The result's epsilon lower bound (None without a result, or when it was infinite)."""
        return None if self.result is None else self.result.get("epsilon_lower_bound")

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "family": self.family, "paper": self.paper, "planted_bug": self.planted_bug,
                "audit": self.audit, "status": self.status, "tight_status": self.tight_status,
                "tight_reason": self.tight_reason, "result": _plain(self.result), "error": self.error}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "audit record") -> AuditRecord:
        d = _keys(data, where, ("target", "family", "paper", "planted_bug", "status", "result", "error"),
                  {"audit": "mathematical", "tight_status": None, "tight_reason": None})
        return cls(d["target"], d["family"], d["paper"], d["planted_bug"], d["audit"], d["status"],
                   _mapping_or_none(d["result"], f"{where}.result"), d["error"], d["tight_status"], d["tight_reason"])

    def __repr__(self) -> str:
        lb = self.epsilon_lower_bound
        return (f"AuditRecord({self.target!r}, status={self.status!r}, tight_status={self.tight_status!r}"
                + ("" if lb is None else f", epsilon_lower_bound={lb:.4g}") + ")")


@dataclass(frozen=True, repr=False)
class MembershipRecord:
    """One membership-inference audit of a night (:func:`privbound.reports.membership.run_membership`).

    Attributes
    ----------
    target, family : str
        The membership target's name and family.
    paper : str or None
        The paper id, None for the reference models.
    planted_bug : bool
        The target is a planted bug (the audit must catch it).
    status : str
        :data:`MEMBERSHIP_STATUSES`: ``holds`` / ``violated`` for a claim, ``caught`` / ``missed`` for a planted
        bug, ``non-private`` for a model that claims nothing, ``error`` when the audit failed.
    result : mapping or None
        ``MembershipResult.to_dict()`` without ``record_risk`` (the ranked top records stay); None on error.
    error : str or None
        The failure, or None.
    """

    target: str
    family: str
    paper: str | None
    planted_bug: bool
    status: str
    result: Mapping[str, Any] | None
    error: str | None

    def __post_init__(self) -> None:
        _one_of(self.status, MEMBERSHIP_STATUSES, f"membership record {self.target!r}: status")

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "family": self.family, "paper": self.paper, "planted_bug": self.planted_bug,
                "status": self.status, "result": _plain(self.result), "error": self.error}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "membership record") -> MembershipRecord:
        d = _keys(data, where, ("target", "family", "paper", "planted_bug", "status", "result", "error"))
        return cls(d["target"], d["family"], d["paper"], d["planted_bug"], d["status"],
                   _mapping_or_none(d["result"], f"{where}.result"), d["error"])

    def __repr__(self) -> str:
        return f"MembershipRecord({self.target!r}, status={self.status!r})"


@dataclass(frozen=True, repr=False)
class LearnerMutantRecord:
    """One mutant of a target's learner (``Target.mutants``) in a night: a privacy bug the target's audit
    must flag (:func:`privbound.reports.nightly.run_learner_mutants`).

    Attributes
    ----------
    target : str
        The target whose learner the mutant breaks.
    mutant : str
        The mutant's name.
    description : str
        What it breaks.
    profile : str
        The smallest nightly profile that runs it (``smoke``, ``default`` or ``full``).
    status : str
        :data:`LEARNER_MUTANT_STATUSES`: ``caught`` when the audit of the broken learner flagged it (its
        bound above the correct code's tight epsilon, or above the claim when the target has no tight
        value), ``missed`` when not, ``error`` when the audit failed, ``not-run`` when the night's profile
        does not run it.
    result : mapping or None
        ``AuditResult.to_dict()`` of ``Target.audit_mutant`` (its ``epsilon_tight`` is the correct code's);
        None when not run or failed.
    error : str or None
        The failure, or None.
    """

    target: str
    mutant: str
    description: str
    profile: str
    status: str
    result: Mapping[str, Any] | None
    error: str | None

    def __post_init__(self) -> None:
        _one_of(self.status, LEARNER_MUTANT_STATUSES, f"learner mutant {self.target}:{self.mutant}: status")

    @property
    def name(self) -> str:
        """``<target>:<mutant>``, the name its audit runs under."""
        return f"{self.target}:{self.mutant}"

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "mutant": self.mutant, "description": self.description,
                "profile": self.profile, "status": self.status, "result": _plain(self.result), "error": self.error}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "learner mutant") -> LearnerMutantRecord:
        d = _keys(data, where, ("target", "mutant", "description", "profile", "status", "result", "error"))
        return cls(d["target"], d["mutant"], d["description"], d["profile"], d["status"],
                   _mapping_or_none(d["result"], f"{where}.result"), d["error"])

    def __repr__(self) -> str:
        return f"LearnerMutantRecord({self.name!r}, status={self.status!r})"


_COUNTS_REQUIRED = ("holds", "violated", "caught", "missed", "error", "checks_pass", "checks_fail",
                    "checks_inconclusive")
_COUNTS_ADDED = ("mutants_detected", "mutants_undetected", "checks_expected_fail", "tight_holds", "tight_violated",
                 "tight_inconclusive", "learner_mutants_caught", "learner_mutants_missed", "learner_mutants_error",
                 "learner_mutants_not_run", "mutants_not_run")


@dataclass(frozen=True)
class Counts:
    """The night's verdicts, counted.

    Attributes
    ----------
    holds, violated, caught, missed, error : int
        Audits by claim verdict (:attr:`AuditRecord.status`).
    checks_pass, checks_fail, checks_inconclusive : int
        Bound checks by status, documented errata left out.
    mutants_detected, mutants_undetected : int
        Check mutant runs whose check failed (detected the bug) or passed.
    checks_expected_fail : int
        Failing checks that document an erratum of the paper (not counted in ``checks_fail``).
    tight_holds, tight_violated, tight_inconclusive : int
        Audits by tight verdict (:attr:`AuditRecord.tight_status`; audits without one are not counted).
    learner_mutants_caught, learner_mutants_missed, learner_mutants_error, learner_mutants_not_run : int
        Learner mutants by status (:attr:`LearnerMutantRecord.status`).
    mutants_not_run : int
        Check mutants registered but above the night's profile (not run, not listed).
    """

    holds: int = 0
    violated: int = 0
    caught: int = 0
    missed: int = 0
    error: int = 0
    checks_pass: int = 0
    checks_fail: int = 0
    checks_inconclusive: int = 0
    mutants_detected: int = 0
    mutants_undetected: int = 0
    checks_expected_fail: int = 0
    tight_holds: int = 0
    tight_violated: int = 0
    tight_inconclusive: int = 0
    learner_mutants_caught: int = 0
    learner_mutants_missed: int = 0
    learner_mutants_error: int = 0
    learner_mutants_not_run: int = 0
    mutants_not_run: int = 0

    def to_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "counts") -> Counts:
        return cls(**_keys(data, where, _COUNTS_REQUIRED, {k: 0 for k in _COUNTS_ADDED}))


@dataclass(frozen=True)
class HistoryUpdate:
    """What became of the history after a night's outputs were published (never in results.json).

    Attributes
    ----------
    path : str
        The history file.
    updated : bool
        The run was appended.
    problem : str or None
        Why the history could not be read or written, or None.
    seconds : float
        Wall time of the update.
    """

    path: str
    updated: bool
    problem: str | None
    seconds: float


@dataclass(frozen=True, repr=False)
class NightlyResults:
    """Everything a nightly run found: the source of results.json, summary.md and report.html.

    Attributes
    ----------
    run_id : str or None
        The run's unique id, ``"<UTC launch>-<8 hex digits>"`` (None in results written before run ids); a run
        that waited for another (``--wait``) was launched before it started.
    profile : str
        ``"smoke"``, ``"default"`` or ``"full"``.
    started_utc, finished_utc : str
        UTC start (once the output folder is this run's, after any wait for another run) and end of the work
        (before the outputs are rendered), ISO 8601.
    wall_seconds : float
        The night's wall time, from its start to its rendered outputs (the history's update excluded): the
        one total that results.json, summary.md, report.html and the terminal show.
    phases : mapping of str to float
        Wall seconds per phase (``audits``, ``learner_mutants``, ``checks``, ``mutants``, ``membership``,
        ``report``), in order.
    code_version : str
        privbound's version and, inside a git checkout, the commit.
    libraries : tuple of str
        ``"name=version"`` of each library that samples or judges the trials
        (:data:`~privbound.audit.cache.SAMPLING_LIBRARIES`; ``"name=-"`` when not installed); part of every
        cache key, so a night after an upgrade audits the upgraded library afresh.
    seed : int
        The run seed.
    audit_family_confidence : float
        The confidence at which all audits of the run hold together.
    audit_confidence : float
        The confidence of each audit (Bonferroni over the run's audits).
    paths : NightlyPaths or None
        Where the run read and wrote.
    warnings : tuple of str
        Problems that cost part of the night but not the night (a history that cannot be written).
    notes : tuple of str
        What the reader should know, e.g. targets of an optional library that is not installed.
    audits : tuple of AuditRecord
        One per target, then one per floating-point implementation.
    checks : tuple of mapping
        ``CheckResult.to_dict()`` of each bound check, with ``"expected": True`` for a documented erratum.
    counts : Counts
        The verdicts counted.
    membership : tuple of MembershipRecord
        The membership-inference audits.
    mutants : tuple of mapping
        ``MutantResult.to_dict()`` of each check run on each of its mutants (default and full profiles).
    learner_mutants : tuple of LearnerMutantRecord
        Each mutant of each audited target's learner, audited (default and full profiles) or listed.
    changes : tuple of mapping
        What changed since the baseline run (:func:`privbound.reports.history.compare`): ``kind``,
        ``name``, ``change``, ``status``, ``rank`` (+ ``old``, ``new``, ``z`` for an epsilon change).
    comparison : Comparison or None
        What the changes were computed against (None until the night is compared).
    history : HistoryUpdate or None
        What became of the history; set after results.json is published, so never part of it.
    cache : mapping or None
        The cache after the night (``bytes``, ``added_bytes``, ``pruned_bytes``, ``max_bytes``); set after
        results.json is published, so never part of it.
    """

    run_id: str | None
    profile: str
    started_utc: str
    finished_utc: str
    wall_seconds: float
    phases: Mapping[str, float]
    code_version: str
    seed: int
    audit_family_confidence: float
    audit_confidence: float
    paths: NightlyPaths | None
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
    audits: tuple[AuditRecord, ...]
    checks: tuple[Mapping[str, Any], ...]
    counts: Counts
    membership: tuple[MembershipRecord, ...] = ()
    mutants: tuple[Mapping[str, Any], ...] = ()
    learner_mutants: tuple[LearnerMutantRecord, ...] = ()
    changes: tuple[Mapping[str, Any], ...] = ()
    comparison: Comparison | None = None
    libraries: tuple[str, ...] = ()
    history: HistoryUpdate | None = field(default=None, compare=False)
    cache: Mapping[str, Any] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        for name, kind in (("audits", AuditRecord), ("membership", MembershipRecord),
                           ("learner_mutants", LearnerMutantRecord)):
            for i, rec in enumerate(getattr(self, name)):
                if not isinstance(rec, kind):
                    raise TypeError(f"NightlyResults.{name}[{i}] must be an instance of {kind.__name__}, "
                                    f"got {type(rec).__name__}")
        if not isinstance(self.counts, Counts):
            raise TypeError(f"NightlyResults.counts must be a Counts, got {type(self.counts).__name__}")

    def held_inconclusive(self) -> list[str]:
        """The targets whose claim holds only as far as their audit could see: verdict "holds", but at their
        trials the audit could not have certified a violation by a mechanism spending twice the claim."""
        return [a.target for a in self.audits
                if a.status == "holds" and (a.result or {}).get("status") == "inconclusive"]

    def unrepeatable(self) -> list[str]:
        """The audits (their records' ``target``) whose mechanism samples from a generator of its own
        (``details["draws_own_randomness"]``): valid, but the night's seed does not fix their trials."""
        return [a.target for a in self.audits if ((a.result or {}).get("details") or {}).get("draws_own_randomness")]

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of results.json (everything but :attr:`history`)."""
        return {
            "schema": SCHEMA,
            "run_id": self.run_id,
            "profile": self.profile,
            "started_utc": self.started_utc,
            "finished_utc": self.finished_utc,
            "wall_seconds": self.wall_seconds,
            "phases": dict(self.phases),
            "code_version": self.code_version,
            "libraries": list(self.libraries),
            "seed": self.seed,
            "audit_family_confidence": self.audit_family_confidence,
            "audit_confidence": self.audit_confidence,
            "paths": None if self.paths is None else self.paths.to_dict(),
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "audits": [a.to_dict() for a in self.audits],
            "checks": _plain(self.checks),
            "counts": self.counts.to_dict(),
            "membership": [m.to_dict() for m in self.membership],
            "mutants": _plain(self.mutants),
            "learner_mutants": [m.to_dict() for m in self.learner_mutants],
            "changes": _plain(self.changes),
            "comparison": None if self.comparison is None else self.comparison.to_dict(),
        }

    def to_json(self) -> str:
        """results.json's text: :meth:`to_dict` with sorted keys, one space of indentation, no NaN."""
        return json.dumps(self.to_dict(), indent=1, sort_keys=True, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NightlyResults:
        """Read a results.json object back; ValueError / TypeError naming the key that does not fit the schema."""
        d = _keys(data, "results", ("schema", "profile", "started_utc", "finished_utc", "wall_seconds", "code_version",
                                    "seed", "audit_family_confidence", "audit_confidence", "audits", "checks",
                                    "counts"),
                  {"run_id": None, "phases": {}, "paths": None, "warnings": [], "notes": [], "membership": [],
                   "mutants": [], "learner_mutants": [], "changes": [], "comparison": None, "libraries": []})
        if d["schema"] != SCHEMA:
            raise ValueError(f"results: schema must be {SCHEMA!r}, got {d['schema']!r}")
        if not isinstance(d["audits"], (list, tuple)):
            raise TypeError(f"results.audits must be a list, got {type(d['audits']).__name__}")
        for key in ("membership", "learner_mutants"):
            if not isinstance(d[key], (list, tuple)):
                raise TypeError(f"results.{key} must be a list, got {type(d[key]).__name__}")
        if not isinstance(d["phases"], Mapping):
            raise TypeError(f"results.phases must be a mapping, got {type(d['phases']).__name__}")
        return cls(
            run_id=d["run_id"],
            profile=d["profile"],
            started_utc=d["started_utc"],
            finished_utc=d["finished_utc"],
            wall_seconds=d["wall_seconds"],
            phases=dict(d["phases"]),
            code_version=d["code_version"],
            seed=d["seed"],
            audit_family_confidence=d["audit_family_confidence"],
            audit_confidence=d["audit_confidence"],
            paths=None if d["paths"] is None else NightlyPaths.from_dict(d["paths"], "results.paths"),
            warnings=_strings(d["warnings"], "results.warnings"),
            notes=_strings(d["notes"], "results.notes"),
            audits=tuple(AuditRecord.from_dict(a, f"results.audits[{i}]") for i, a in enumerate(d["audits"])),
            checks=_mappings(d["checks"], "results.checks"),
            counts=Counts.from_dict(d["counts"], "results.counts"),
            membership=tuple(MembershipRecord.from_dict(m, f"results.membership[{i}]")
                             for i, m in enumerate(d["membership"])),
            mutants=_mappings(d["mutants"], "results.mutants"),
            learner_mutants=tuple(LearnerMutantRecord.from_dict(m, f"results.learner_mutants[{i}]")
                                  for i, m in enumerate(d["learner_mutants"])),
            changes=_mappings(d["changes"], "results.changes"),
            libraries=_strings(d["libraries"], "results.libraries"),
            comparison=None if d["comparison"] is None else Comparison.from_dict(d["comparison"], "results.comparison"),
        )

    def __repr__(self) -> str:
        c = self.counts
        return (f"NightlyResults(run_id={self.run_id!r}, profile={self.profile!r}, seed={self.seed}, "
                f"audits={len(self.audits)} (tight: holds {c.tight_holds}, violated {c.tight_violated}, inconclusive "
                f"{c.tight_inconclusive}; claims: holds {c.holds}, violated {c.violated}; caught {c.caught}, "
                f"missed {c.missed}, error {c.error}), checks={len(self.checks)}, mutants={len(self.mutants)}, "
                f"learner_mutants={len(self.learner_mutants)}, membership={len(self.membership)})")


def wall_text(results: NightlyResults) -> str:
    """The night's wall time as the outputs print it (``"551.1 s"``; :data:`WALL_PENDING` while unknown)."""
    w = results.wall_seconds
    return WALL_PENDING if w != w else f"{w:.1f} s"


def as_results(results: NightlyResults | Mapping[str, Any], argument: str = "results") -> NightlyResults:
    """``results`` as a :class:`NightlyResults`: itself, or read from a results.json object."""
    if isinstance(results, NightlyResults):
        return results
    if isinstance(results, Mapping):
        return NightlyResults.from_dict(results)
    raise TypeError(f"{argument} must be a NightlyResults or a results.json mapping, got {type(results).__name__}")


def load_results(path: str | Path) -> NightlyResults:
    """Read a night's results.json."""
    return NightlyResults.from_dict(json.loads(Path(path).read_text()))
