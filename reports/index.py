"""What the command line answers without importing the auditor: the code's version, and an index of the
registered targets and claims.

Importing the targets and the claims takes seconds (numpy, scipy, scikit-learn, dp_accounting, and the
modules that register them). ``privbound list``, ``privbound bounds list`` and every "no such target / claim"
error read an index instead: the targets' and claims' records, written to ``~/.cache/privbound/`` (or
``$PRIVBOUND_INDEX_DIR``) the first time they are needed and keyed by a digest of the installed source
(:func:`source_digest`), so any change to the code -- or installing OpenDP, which adds targets -- builds
a new one. An index that cannot be written is simply rebuilt next time.

:func:`code_version` names the code a run ran: the package version and the git commit of a checkout
(``0.2.0+g63d5bad``, ``.dirty-<digest>`` appended when its files differ from the commit), or, outside a
checkout, a digest of the installed source (``0.2.0+src.1a2b3c4d5e6f``), so two different installs never
look alike.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

__all__ = ["PACKAGES", "source_roots", "source_digest", "code_version", "target_index", "claim_index",
           "membership_index", "index_dir"]

PACKAGES = ("privbound", "privbound.audit", "privbound.learners", "privbound.bounds", "privbound.reports")


def source_roots() -> list[Path]:
    """The folder of each package of :data:`PACKAGES` (found without importing the subpackages)."""
    roots = []
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            roots.extend(Path(p) for p in spec.submodule_search_locations)
    return roots


def source_digest() -> str:
    """16 hex digits of SHA-256 over every ``.py`` file of the installed packages (path and contents)."""
    h = hashlib.sha256()
    for root in source_roots():
        files = sorted(f for f in root.rglob("*.py") if "__pycache__" not in f.parts
                       and not any(part.startswith(".") for part in f.relative_to(root).parts))
        for f in files:
            if root.name != "privbound" or f.parent == root:  # the privbound folder: its own modules only
                h.update(f"{root.name}/{f.relative_to(root).as_posix()}".encode())
                h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _git(args: list[str], cwd: Path) -> str:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


def code_version() -> str:
    """privbound's version and what identifies its code: ``+g<commit>`` in a git checkout (with
    ``.dirty-<source digest>`` when the package's files differ from the commit), ``+src.<source digest>``
    for an installed copy."""
    from privbound import __version__

    roots = source_roots()
    here = Path(__file__).resolve().parent
    toplevel = _git(["rev-parse", "--show-toplevel"], here)
    tracked = toplevel and all(Path(toplevel) in r.resolve().parents for r in roots) and _git(
        ["ls-files", "--", *(str(r / "__init__.py") for r in roots)], here).count("\n") + 1 == len(roots)
    if tracked:
        commit = _git(["rev-parse", "--short=12", "HEAD"], here)
        if commit:
            dirty = _git(["status", "--porcelain", "--untracked-files=no", "--", *map(str, roots)], here)
            return f"{__version__}+g{commit}" + (f".dirty-{source_digest()}" if dirty else "")
    return f"{__version__}+src.{source_digest()}"


def index_dir() -> Path:
    """Where the indexes are kept: ``$PRIVBOUND_INDEX_DIR``, else ``$XDG_CACHE_HOME/privbound``, else
    ``~/.cache/privbound``."""
    if os.environ.get("PRIVBOUND_INDEX_DIR"):
        return Path(os.environ["PRIVBOUND_INDEX_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "privbound"


def _key() -> str:
    """The index key: the source digest, the Python version and which optional libraries are importable."""
    optional = ",".join(m for m in ("opendp",) if importlib.util.find_spec(m) is not None)
    return hashlib.sha256(f"{source_digest()}|{sys.version_info[:2]}|{optional}".encode()).hexdigest()[:16]


def _cached(kind: str, build: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    path = index_dir() / f"{kind}-{_key()}.json"
    try:
        records = json.loads(path.read_text())
        if isinstance(records, list):
            return records
    except (OSError, ValueError):
        pass
    records = build()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(records))
        os.replace(tmp, path)
    except OSError:  # a read-only home: the index is rebuilt next time
        pass
    return records


def _build_targets() -> list[dict[str, Any]]:
    from privbound.audit.targets import targets

    return [t.record() for t in targets()]


def _build_claims() -> list[dict[str, Any]]:
    from privbound import bounds

    return [{"id": c.id, "kind": c.kind.value, "reconstructed": c.reconstructed, "parameters": list(c.parameters),
             "checks": [k.name for k in c.checks], "uncheckable_reason": c.uncheckable_reason,
             "pending": c.pending, "statement": c.statement, "quantity": c.quantity} for c in bounds.claims()]


def _build_membership() -> list[dict[str, Any]]:
    from privbound.audit.targets.membership import membership_targets

    return [t.record() for t in membership_targets()]


def membership_index() -> list[dict[str, Any]]:
    """The record of every registered membership-inference target, in registry order."""
    return _cached("membership", _build_membership)


def target_index() -> list[dict[str, Any]]:
    """``Target.record()`` of every registered target, in registry order (from the index when it is current)."""
    return _cached("targets", _build_targets)


def claim_index() -> list[dict[str, Any]]:
    """id, kind, parameters, checks, statement and quantity of every registered claim, in registry order."""
    return _cached("claims", _build_claims)
