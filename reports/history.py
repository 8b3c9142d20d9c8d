"""Run history: one SQLite row per audit and per check of every nightly run, and what changed since the last one.

The database (``history.sqlite`` beside the dated report folders by default, ``--history FILE``
otherwise) holds one ``runs`` row per nightly run, keyed by a unique run id
(``<UTC start>-<random hex>``), and one ``rows`` row per audit and per check. Reading never
writes: a history that is corrupt or read-only is reported as a :class:`HistoryError` naming
the file, so the caller can keep the night's outputs and say that the history was not updated.

:func:`compare` lists what changed since the previous run of the same profile (the
*baseline*, named by :func:`previous_run`): status changes first, then epsilon lower bounds
that moved significantly -- up or down -- given both runs' sampling spread (see
:func:`epsilon_change_z`), then audits and checks that appeared or disappeared.

Significance rule. For an audit whose bound came from a threshold event evaluated on
``n`` fresh trials per dataset (the Clopper--Pearson estimators), the bound moves with
``ln(p_top - delta) - ln(p_bottom)``, whose sampling variance the delta method gives from the
event counts (Katz's log risk ratio with 0.5 added to each count, so that empty and full
counts stay finite)::

    v = p_t (1 - p_t) / (n (p_t - delta)^2) + (1 - p_b) / (n p_b),   p = (k + 0.5) / (n + 1)

A change ``D`` of the lower bound between two runs counts when
``|D| / sqrt(v_old + v_new) > z`` with ``z = Phi^-1(1 - alpha / (2 K))``: Bonferroni over the
``K`` audits compared, two-sided, so that a night compared with a night of the same code at
another seed reports a spurious epsilon change with probability at most ``alpha``
(:data:`CHANGE_ALPHA`, 5%; asymptotic, verified by simulation in
``tests/reports/test_history_significance.py``). A run whose selection data found no event
(bound 0, no counts) borrows the other run's variance (both runs of a profile have the same
trials). White-box bounds (betting confidence sequences, maximum privacy loss) carry no
count-based spread: their epsilon changes are not judged, and the report says so; their
status changes are.
"""

from __future__ import annotations

import json
import math
import re
import socket
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from privbound.audit.statistics import TESTS
from privbound.reports.schema import BaselineRun, Comparison, NightlyResults, as_results

__all__ = [
    "HISTORY_NAME", "CHANGE_ALPHA", "HistoryError", "Baseline", "record_run", "previous_run", "recent_wall_seconds",
    "compare",
    "epsilon_change_z", "epsilon_variance", "change_threshold", "load_history", "probe",
]

HISTORY_NAME = "history.sqlite"
CHANGE_ALPHA = 0.05

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, started_utc TEXT, profile TEXT, code_version TEXT, seed INTEGER, out_dir TEXT,
    wall_seconds REAL, host TEXT, libraries TEXT
);
CREATE TABLE IF NOT EXISTS rows (
    run_id TEXT, kind TEXT, name TEXT, status TEXT, value REAL, reference REAL, p_value REAL, extra TEXT,
    PRIMARY KEY (run_id, kind, name)
);
"""


class HistoryError(Exception):
    """The history file cannot be read or written; the message names the file and the reason."""


# {"run_id", "started_utc", "seed", "code_version", "out_dir", "libraries", "rows": {(kind, name): row}}
Baseline = dict


def _fail(path: Path, action: str, exc: BaseException) -> HistoryError:
    reason = str(exc) or type(exc).__name__
    return HistoryError(f"cannot {action} history {path}: {reason}")


def _open_read(path: Path) -> sqlite3.Connection:
    """A read-only connection (never creates, migrates or writes the file)."""
    con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
    con.execute("SELECT count(*) FROM sqlite_master").fetchone()  # "file is not a database" shows here
    return con


def _open_write(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(str(path), timeout=30)
    con.executescript(_SCHEMA)
    cols = {r[1] for r in con.execute("PRAGMA table_info(rows)")}
    if "extra" not in cols:  # a history written before the significance rule
        con.execute("ALTER TABLE rows ADD COLUMN extra TEXT")
    run_cols = {r[1] for r in con.execute("PRAGMA table_info(runs)")}
    # a history written before the expected time, or before the library versions
    for col, kind in (("wall_seconds", "REAL"), ("host", "TEXT"), ("libraries", "TEXT")):
        if col not in run_cols:
            con.execute(f"ALTER TABLE runs ADD COLUMN {col} {kind}")
    return con


def probe(history: str | Path) -> dict[str, Any]:
    """Whether ``history`` can be read and written: ``{"readable", "writable", "problem"}``.

    ``problem`` is one line naming the file and what is wrong (None when both work). A
    missing file is readable (no previous run) and writable when its folder can be created.
    """
    import os

    path = Path(history)
    if path.exists():
        try:
            with closing(_open_read(path)) as con:
                tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if tables and not {"runs", "rows"} <= tables:
                return {"readable": False, "writable": False,
                        "problem": f"history {path} is an SQLite database but not a privbound history "
                                   f"(tables {sorted(tables)})"}
        except (sqlite3.Error, OSError) as exc:
            return {"readable": False, "writable": False, "problem": str(_fail(path, "read", exc))}
        if not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK):
            return {"readable": True, "writable": False, "problem": f"cannot write history {path}: permission denied"}
        return {"readable": True, "writable": True, "problem": None}
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not os.access(parent, os.W_OK):
        return {"readable": True, "writable": False,
                "problem": f"cannot create history {path}: {parent} is not writable"}
    return {"readable": True, "writable": True, "problem": None}


def _audit_extra(result: dict[str, Any]) -> dict[str, Any] | None:
    """What the significance rule needs of an audit result: its counts, delta and method."""
    if not result:
        return None
    return {"method": result.get("method"), "n": result.get("n_evaluation"), "tpr": result.get("tpr"),
            "fpr": result.get("fpr"), "delta": result.get("delta")}


def _rows(results: NightlyResults) -> list[tuple]:
    rows = []
    for a in results.audits:
        r = a.result or {}
        extra = _audit_extra(r)
        rows.append(("audit", a.target, a.status, r.get("epsilon_lower_bound"), r.get("epsilon_claimed"),
                     r.get("p_value"), None if extra is None else json.dumps(extra, sort_keys=True)))
    for c in results.checks:
        status = "expected-fail" if c.get("expected") else c["status"]
        rows.append(("check", f"{c['claim_id']}:{c['check']}", status, c.get("observed"), c.get("bound"),
                     c.get("p_value"), None))
    return rows


def run_id_of(results: NightlyResults | dict[str, Any]) -> str:
    """The run's id (older results without one get the id the history used to give them)."""
    results = as_results(results)
    return results.run_id or f"{results.started_utc}/{results.profile}/{results.seed}"


def record_run(history: str | Path, results: NightlyResults | dict[str, Any], out_dir: str | Path) -> str:
    """Append the run (a :class:`NightlyResults`, or a results.json object) to the history (idempotent for
    the same run id); returns the run id.

    Raises :class:`HistoryError` (naming the file) when the history cannot be written.
    """
    path = Path(history)
    results = as_results(results)
    run_id = run_id_of(results)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with closing(_open_write(path)) as con, con:
            con.execute("INSERT OR REPLACE INTO runs (run_id, started_utc, profile, code_version, seed, out_dir, "
                        "wall_seconds, host, libraries) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (run_id, results.started_utc, results.profile, results.code_version, results.seed,
                         str(out_dir), results.wall_seconds, socket.gethostname(),
                         json.dumps(list(results.libraries))))
            con.execute("DELETE FROM rows WHERE run_id = ?", (run_id,))
            con.executemany("INSERT INTO rows VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            [(run_id, *r) for r in _rows(results)])
    except (sqlite3.Error, OSError) as exc:
        raise _fail(path, "write", exc) from None
    return run_id


def recent_wall_seconds(history: str | Path, profile: str, *, last: int = 5) -> list[float]:
    """Wall seconds of this machine's last ``last`` runs of ``profile`` in ``history``, newest first (empty when
    there is none, or the file cannot be read: it only informs the expected time of a night)."""
    path = Path(history)
    if not path.exists():
        return []
    try:
        with closing(_open_read(path)) as con:
            cols = {r[1] for r in con.execute("PRAGMA table_info(runs)")}
            if not {"wall_seconds", "host"} <= cols:
                return []
            rows = con.execute("SELECT wall_seconds FROM runs WHERE profile = ? AND host = ? AND wall_seconds IS NOT "
                               "NULL ORDER BY started_utc DESC LIMIT ?", (profile, socket.gethostname(), last))
            return [float(r[0]) for r in rows]
    except (sqlite3.Error, OSError):
        return []


def previous_run(history: str | Path, profile: str, before: str, *, exclude: str | None = None) -> Baseline | None:
    """The latest run of ``profile`` that started at or before ``before`` (other than ``exclude``), or None.

    Returns a dict naming the run (``run_id``, ``started_utc``, ``seed``, ``code_version``,
    ``out_dir``, ``libraries``: its library versions, None when the history did not record them) with its
    ``rows`` keyed by ``(kind, name)``. Raises :class:`HistoryError`
    when the file exists but cannot be read.
    """
    path = Path(history)
    if not path.exists():
        return None
    try:
        with closing(_open_read(path)) as con:
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not {"runs", "rows"} <= tables:
                if tables:
                    raise sqlite3.DatabaseError(f"not a privbound history (tables {sorted(tables)})")
                return None
            run_cols = {r[1] for r in con.execute("PRAGMA table_info(runs)")}
            libraries = "libraries" if "libraries" in run_cols else "NULL"  # NULL: written before they were kept
            run = con.execute(
                f"SELECT run_id, started_utc, seed, code_version, out_dir, {libraries} FROM runs WHERE profile = ? "
                "AND started_utc <= ? AND run_id != ? ORDER BY started_utc DESC, rowid DESC LIMIT 1",
                (profile, before, exclude or "")).fetchone()
            if run is None:
                return None
            cols = {r[1] for r in con.execute("PRAGMA table_info(rows)")}
            extra = "extra" if "extra" in cols else "NULL"
            cur = con.execute(f"SELECT kind, name, status, value, reference, p_value, {extra} FROM rows "
                              "WHERE run_id = ?", (run[0],))
            rows = {(k, n): {"status": s, "value": v, "reference": ref, "p_value": p,
                             "extra": json.loads(e) if e else None} for k, n, s, v, ref, p, e in cur}
    except (sqlite3.Error, OSError, ValueError) as exc:
        raise _fail(path, "read", exc) from None
    return {"run_id": run[0], "started_utc": run[1], "seed": run[2], "code_version": run[3], "out_dir": run[4],
            "libraries": json.loads(run[5]) if run[5] else None, "rows": rows}


# ------------------------------------------------------------------ significance


def _count_based(method: Any) -> bool:
    """Whether a method's bound is a test of one event's counts (Clopper--Pearson or conditional)."""
    return str(method or "").split("/")[0] in TESTS


def _counts(extra: dict[str, Any] | None):
    """(k_top, k_bottom, n, delta) of an audit's evaluated event, or None (no event, or not a count-based bound)."""
    if not extra or not _count_based(extra.get("method")):
        return None
    n, tpr, fpr, delta = extra.get("n"), extra.get("tpr"), extra.get("fpr"), extra.get("delta") or 0.0
    if not n or tpr is None or fpr is None:
        return None
    return round(tpr * n), round(fpr * n), n, delta


def selection_fraction(method: str | None) -> float:
    """The fraction of the trials that chose the event (``split(f)`` methods); 1 when none did."""
    m = re.search(r"split\(([0-9.]+)\)", str(method or ""))
    return float(m.group(1)) if m else 1.0


def epsilon_variance(extra: dict[str, Any] | None) -> float | None:
    """Variance of an audit's epsilon bound across seeds, from its event counts; None without counts.

    The delta-method variance of ``ln(p_top - delta) - ln(p_bottom)`` on the evaluation
    trials (0.5 added to each count), divided by the selection fraction ``f``: the event
    was chosen on a fraction ``f`` of the trials, whose own estimation noise is ``(1 - f) / f``
    times the evaluation's, and the chosen event's true bound moves with it.
    """
    c = _counts(extra)
    if c is None:
        return None
    k_t, k_b, n, delta = c
    p_t, p_b = (k_t + 0.5) / (n + 1), (k_b + 0.5) / (n + 1)
    if p_t <= delta:
        return math.inf
    v = p_t * (1 - p_t) / (n * (p_t - delta) ** 2) + (1 - p_b) / (n * p_b)
    return v / selection_fraction(extra.get("method"))


def _point_estimate(extra: dict[str, Any]) -> float:
    k_t, k_b, n, delta = _counts(extra)
    p_t, p_b = (k_t + 0.5) / (n + 1), (k_b + 0.5) / (n + 1)
    return math.log(max(p_t - delta, 1e-300)) - math.log(p_b)


def change_threshold(n_compared: int, alpha: float = CHANGE_ALPHA) -> float:
    """The |z| above which a change counts: two-sided, Bonferroni over ``n_compared`` audits at family level ``alpha``."""
    from scipy.stats import norm

    return float(norm.isf(alpha / (2 * max(1, n_compared))))


def epsilon_change_z(old: dict[str, Any], new: dict[str, Any]) -> float | None:
    """z statistic of the change of an audit's epsilon bound between two history rows; None when not judgeable.

    Each row has ``value`` (the bound) and ``extra`` (counts, see :func:`epsilon_variance`).
    Equal bounds give 0. When both runs evaluated an event, ``z = (b - a) / sqrt(v_a + v_b)``.
    When one run's selection found no event (bound 0, censored), the other run's bound ``b``
    is compared with 0 at ``sqrt(2 v_b + (eps_hat_b - b)^2)``: the censored run could have
    held an event as strong as ``b``'s estimate less its confidence margin. Bounds that carry
    no counts on either side (white-box estimators) cannot be judged.
    """
    a, b = old.get("value"), new.get("value")
    if a is None or b is None:
        return None
    if a == b:
        return 0.0
    methods = [str((r.get("extra") or {}).get("method") or "") for r in (old, new)]
    if not all(_count_based(m) for m in methods):
        return None
    va, vb = epsilon_variance(old.get("extra")), epsilon_variance(new.get("extra"))
    if va is None and vb is None:
        return None
    if va is not None and vb is not None:
        var = va + vb
    else:
        counted, value = (old, a) if va is not None else (new, b)
        v = va if va is not None else vb
        margin = max(0.0, _point_estimate(counted["extra"]) - value)
        var = 2 * v + margin ** 2
    if not math.isfinite(var):
        return 0.0
    return (b - a) / math.sqrt(var) if var > 0 else math.copysign(math.inf, b - a)


# ---------------------------------------------------------------------- compare

_BAD = ("violated", "missed", "fail", "error")


def compare(results: NightlyResults | dict[str, Any], previous: Baseline | None, *,
            alpha: float = CHANGE_ALPHA) -> list[dict[str, Any]]:
    """Changes of ``results`` (a :class:`NightlyResults`, or a results.json object) since ``previous`` (a
    :func:`previous_run` baseline), most serious first.

    Order: status changes to a bad status, other status changes, significant epsilon
    changes (rises before drops), audits or checks that are new or gone. Each change is
    ``{kind, name, change, status, rank}`` (+ ``old``, ``new``, ``z`` for epsilon changes).
    The record ``{"kind": "note", ...}`` at the end, when present, counts the audits whose
    epsilon change could not be judged.
    """
    if previous is None:
        return []
    results = as_results(results)
    old_rows = previous["rows"] if "rows" in previous else previous
    new_rows = {(k, n): {"status": s, "value": v, "reference": ref, "p_value": p,
                         "extra": json.loads(e) if e else None}
                for k, n, s, v, ref, p, e in _rows(results)}
    judged: list[tuple[str, dict, dict]] = []
    changes, not_judged = [], []
    for (kind, name), new in new_rows.items():
        old = old_rows.get((kind, name))
        if old is None:
            changes.append({"kind": kind, "name": name, "change": "new", "status": new["status"], "rank": 4})
            continue
        if new["status"] != old["status"]:
            rank = 0 if new["status"] in _BAD else 1
            changes.append({"kind": kind, "name": name, "change": f"{old['status']} -> {new['status']}",
                            "status": new["status"], "rank": rank})
        elif kind == "audit" and new["status"] != "error":
            z = epsilon_change_z(old, new)
            if z is None:
                if old.get("value") != new.get("value"):
                    not_judged.append(name)
            else:
                judged.append((name, old, new, z))
    for (kind, name), old in old_rows.items():
        if (kind, name) not in new_rows:
            changes.append({"kind": kind, "name": name, "change": "gone (not in this run)", "status": old["status"],
                            "rank": 4})
    threshold = change_threshold(len(judged), alpha)
    for name, old, new, z in judged:
        if abs(z) > threshold:
            word = "rose" if z > 0 else "dropped"
            changes.append({"kind": "audit", "name": name, "status": new["status"], "rank": 2 if z > 0 else 3,
                            "old": old["value"], "new": new["value"], "z": z,
                            "change": f"epsilon lower bound {word} {old['value']:.3f} -> {new['value']:.3f} "
                                      f"(z = {z:+.1f}, threshold {threshold:.2f})"})
    changes.sort(key=lambda c: (c["rank"], c["kind"], c["name"]))
    if not_judged:
        changes.append({"kind": "note", "name": ", ".join(sorted(not_judged)), "status": "note", "rank": 5,
                        "change": f"epsilon change of {len(not_judged)} white-box audit(s) not judged "
                                  "(their bounds carry no count-based spread)"})
    return changes


def comparison_summary(results: NightlyResults | dict[str, Any], previous: Baseline | None, *,
                       alpha: float = CHANGE_ALPHA) -> Comparison:
    """How the run was compared: the baseline named, seed / code differences, the rule and its error rate."""
    results = as_results(results)
    n_audits = sum(1 for a in results.audits if a.result)
    differences = []
    if previous is not None:
        if previous.get("seed") != results.seed:
            differences.append(f"seed differs: baseline {previous.get('seed')}, this run {results.seed}"
                               " (epsilon bounds move with the seed; only significant moves are listed)")
        if previous.get("code_version") != results.code_version:
            differences.append(f"code version differs: baseline {previous.get('code_version')}, "
                               f"this run {results.code_version}")
        if previous.get("libraries") and results.libraries and list(previous["libraries"]) != list(results.libraries):
            changed = sorted(set(results.libraries) - set(previous["libraries"]))
            was = dict(v.split("=", 1) for v in previous["libraries"])
            differences.append("library versions differ: " + ", ".join(
                f"{name} {was.get(name, '-')} -> {new}" for name, new in (v.split("=", 1) for v in changed)))
    return Comparison(
        baseline=None if previous is None else BaselineRun(
            **{k: previous[k] for k in ("run_id", "started_utc", "seed", "code_version", "out_dir")}),
        rule=(f"an epsilon change counts when |change| / sqrt(v_old + v_new) exceeds the two-sided Bonferroni "
              f"threshold for the audits compared (family-wise false-change rate {alpha:g}; v from the event "
              "counts); status changes always count"),
        alpha=alpha,
        threshold=change_threshold(n_audits, alpha),
        differences=tuple(differences),
    )


def load_history(history: str | Path):
    """The whole history as a pandas DataFrame (one row per audit/check per run)."""
    import pandas as pd

    path = Path(history)
    try:
        with closing(_open_read(path)) as con:
            return pd.read_sql_query("SELECT r.*, runs.started_utc, runs.profile, runs.code_version FROM rows r "
                                     "JOIN runs USING (run_id) ORDER BY runs.started_utc, runs.rowid", con)
    except (sqlite3.Error, OSError) as exc:
        raise _fail(path, "read", exc) from None
