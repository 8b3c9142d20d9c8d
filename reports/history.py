"""Run history: one SQLite row per audit and per check of every nightly run.

The database ``history.sqlite`` sits next to the dated report folders (the parent of
the output directory). :func:`compare` lists what changed since the previous run of
the same profile: new violations, checks that changed status, and epsilon lower
bounds that rose significantly (by more than ``max(0.05 * claimed epsilon, 0.02)``).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

__all__ = ["HISTORY_NAME", "record_run", "previous_run", "compare", "load_history"]

HISTORY_NAME = "history.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, started_utc TEXT, profile TEXT, code_version TEXT, seed INTEGER, out_dir TEXT
);
CREATE TABLE IF NOT EXISTS rows (
    run_id TEXT, kind TEXT, name TEXT, status TEXT, value REAL, reference REAL, p_value REAL,
    PRIMARY KEY (run_id, kind, name)
);
"""


def _connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(str(path))
    con.executescript(_SCHEMA)
    return con


def _rows(results: dict[str, Any]) -> list[tuple]:
    rows = []
    for a in results["audits"]:
        r = a.get("result") or {}
        rows.append(("audit", a["target"], a["status"], r.get("epsilon_lower_bound"), r.get("epsilon_claimed"),
                     r.get("p_value")))
    for c in results["checks"]:
        status = "expected-fail" if c.get("expected") else c["status"]
        rows.append(("check", f"{c['claim_id']}:{c['check']}", status, c.get("observed"), c.get("bound"),
                     c.get("p_value")))
    return rows


def record_run(history: Path, results: dict[str, Any], out_dir: Path) -> str:
    """Append the run to the history (idempotent for the same run id); returns the run id."""
    run_id = f"{results['started_utc']}/{results['profile']}/{results['seed']}"
    with closing(_connect(Path(history))) as con, con:
        con.execute("INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?)",
                    (run_id, results["started_utc"], results["profile"], results["code_version"], results["seed"],
                     str(out_dir)))
        con.execute("DELETE FROM rows WHERE run_id = ?", (run_id,))
        con.executemany("INSERT INTO rows VALUES (?, ?, ?, ?, ?, ?, ?)", [(run_id, *r) for r in _rows(results)])
    return run_id


def previous_run(history: Path, profile: str, before: str) -> dict[tuple[str, str], dict] | None:
    """Rows of the latest run of ``profile`` that started before ``before``."""
    history = Path(history)
    if not history.exists():
        return None
    with closing(_connect(history)) as con:
        row = con.execute("SELECT run_id FROM runs WHERE profile = ? AND started_utc < ? "
                          "ORDER BY started_utc DESC LIMIT 1", (profile, before)).fetchone()
        if row is None:
            return None
        cur = con.execute("SELECT kind, name, status, value, reference, p_value FROM rows WHERE run_id = ?", row)
        return {(k, n): {"status": s, "value": v, "reference": ref, "p_value": p} for k, n, s, v, ref, p in cur}


def compare(results: dict[str, Any], previous: dict[tuple[str, str], dict] | None) -> list[dict[str, Any]]:
    """Changes since ``previous``: most serious first (new violations, missed bugs, status changes, rises)."""
    if previous is None:
        return []
    changes = []
    for kind, name, status, value, ref, _ in _rows(results):
        old = previous.get((kind, name))
        if old is None:
            changes.append({"kind": kind, "name": name, "change": "new", "status": status, "rank": 3})
            continue
        if status != old["status"]:
            rank = 0 if status in ("violated", "missed", "fail", "error") else 2
            changes.append({"kind": kind, "name": name, "change": f"{old['status']} -> {status}", "status": status,
                            "rank": rank})
        elif kind == "audit" and value is not None and old["value"] is not None and ref is not None:
            if value - old["value"] > max(0.05 * ref, 0.02):
                changes.append({"kind": kind, "name": name, "status": status, "rank": 1,
                                "change": f"epsilon lower bound rose {old['value']:.3f} -> {value:.3f}"})
    changes.sort(key=lambda c: (c["rank"], c["kind"], c["name"]))
    return changes


def load_history(history: Path):
    """The whole history as a pandas DataFrame (one row per audit/check per run)."""
    import pandas as pd

    with closing(_connect(Path(history))) as con:
        return pd.read_sql_query("SELECT r.*, runs.started_utc, runs.profile, runs.code_version FROM rows r "
                                 "JOIN runs USING (run_id) ORDER BY runs.started_utc", con)
