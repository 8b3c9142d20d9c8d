"""Where a nightly run reads and writes, and the profiles it can run: what the command line needs to
answer ``--help`` and refuse a bad location in well under a second.

This module imports nothing heavy (no numpy, no target): :mod:`privbound.reports.cli` checks every location
with it before the auditor, the targets and the checks are imported, and a refused run leaves nothing
behind (no folder is created until every location is known to be good).
"""

from __future__ import annotations

import datetime as _dt
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from privbound.reports.schema import NightlyPaths

__all__ = ["NightlyError", "NightlyProfile", "NIGHTLY_PROFILES", "HISTORY_NAME", "default_out_dir", "measured_text",
           "resolve_paths", "validate_paths", "create_locations", "profiles_help", "human_size"]

HISTORY_NAME = "history.sqlite"


class NightlyError(Exception):
    """A problem that stops a nightly run before or instead of its outputs: one line naming the path."""


@dataclass(frozen=True)
class NightlyProfile:
    """Budget of a nightly run.

    ``trial_scale`` multiplies each correct target's default trials (never below
    ``min_trials``); planted bugs always run at their default trials, so that "caught"
    means the same thing in every profile. ``checks`` is the bounds profile. ``mutants``:
    the largest mutant profile whose mutants the night runs (each at its own profile;
    None: the mutants are counted, not run). ``summary`` says what the profile is for; ``measured`` lists
    ``(minutes, load average)`` pairs, idle first: what cold runs took on a 2-core machine at that 1-minute
    load average at their start (README, "Operating the nightly"), empty when not measured.
    """

    name: str
    trial_scale: float
    min_trials: int
    checks: str
    mutants: str | None = None
    summary: str = ""
    measured: tuple[tuple[float, float], ...] = ()


NIGHTLY_PROFILES = {
    "smoke": NightlyProfile("smoke", 0.2, 2_000, "smoke",
                            summary="every target at 1/5 of its trials, at least 2,000 (planted bugs at their own), "
                                    "the checks' smoke profile, no mutants: a quick proof that everything runs",
                            measured=((2.1, 0.4), (8.0, 6.6))),
    "default": NightlyProfile("default", 1.0, 10_000, "default", mutants="default",
                              summary="every target at its own trials, at least 10,000, the checks' default "
                                      "profile, and the check and learner mutants up to the default profile: the "
                                      "nightly",
                              measured=((6.3, 1.0), (52.4, 7.9))),
    "full": NightlyProfile("full", 10.0, 10_000, "full", mutants="full",
                           summary="10x the trials of default, the checks' full profile and every mutant: hours",
                           measured=()),
}


def human_size(n: float) -> str:
    """Bytes in decimal units, as ``--cache-max`` reads them: ``512 B``, ``410.8 KB``, ``1.2 GB``."""
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000.0
    return f"{n:.1f} GB"  # pragma: no cover


def measured_text(p: NightlyProfile) -> str:
    """``"2.1 min cold on a 2-core machine at load average 0.4, 8 min at 6.6"``: the profile's measured times."""
    if not p.measured:
        raise ValueError(f"profile {p.name!r} has no measured time")
    (minutes, load), *others = p.measured
    return (f"{minutes:g} min cold on a 2-core machine at load average {load:g}"
            + "".join(f", {m:g} min at {a:g}" for m, a in others))


def profiles_help() -> str:
    """One paragraph per profile, for ``privbound nightly --help``."""
    import textwrap

    lines = []
    for p in NIGHTLY_PROFILES.values():
        when = f" ({measured_text(p)})" if p.measured else ""
        lines += textwrap.wrap(f"{p.name:8s} {p.summary}{when}", width=98, initial_indent="  ",
                               subsequent_indent=" " * 11)
    return "\n".join(lines)


def default_out_dir() -> Path:
    """``reports/out/<UTC date>/`` relative to the current directory."""
    return Path("reports") / "out" / _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d")


def resolve_paths(out: str | os.PathLike | None = None, cache: str | os.PathLike | None = None,
                  history: str | os.PathLike | None = None, *, resume: bool = True) -> NightlyPaths:
    """The run's locations; cache and history default to ``<parent of out>/.cache`` and ``/history.sqlite``."""
    out_dir = Path(out) if out is not None else default_out_dir()
    cache_dir = (Path(cache) if cache is not None else out_dir.parent / ".cache") if resume else None
    hist = Path(history) if history is not None else out_dir.parent / HISTORY_NAME
    return NightlyPaths(out_dir, cache_dir, hist)


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def _existing_ancestor(path: Path) -> Path:
    """``path`` itself when it exists, else its nearest existing ancestor."""
    ancestor = path
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    return ancestor


def _check_dir(path: Path, option: str) -> None:
    """Whether ``path`` is, or can be created as, a writable directory -- creating nothing.

    Raises :class:`NightlyError` naming ``option`` and the path.
    """
    if path.exists() and not path.is_dir():
        raise NightlyError(f"{option} {path}: exists and is not a directory")
    ancestor = _existing_ancestor(path)
    if not ancestor.is_dir():
        raise NightlyError(f"{option} {path}: cannot create the directory ({ancestor} is not a directory)")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        if ancestor == path:
            raise NightlyError(f"{option} {path}: the directory is not writable (Permission denied)")
        raise NightlyError(f"{option} {path}: cannot create the directory ({ancestor} is not writable)")


def _probe_dir(path: Path, option: str) -> None:
    """Create ``path`` and prove it writable with a probe file, or raise :class:`NightlyError` naming it."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NightlyError(f"{option} {path}: cannot create the directory ({_reason(exc)})") from None
    try:
        fd, probe = tempfile.mkstemp(dir=path, prefix=".write-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise NightlyError(f"{option} {path}: the directory is not writable ({_reason(exc)})") from None


def validate_paths(paths: NightlyPaths) -> None:
    """Check every location before any work, creating nothing; raise :class:`NightlyError` with one line
    naming the bad one.

    The output and cache folders must exist as writable directories or be creatable (their nearest existing
    ancestor a writable directory); the history must be a file path whose folder exists or can be created.
    Whether the history file itself can be read and written is checked by
    :func:`privbound.reports.history.probe` (a problem there is a warning, not an error: the night still runs).
    """
    _check_dir(paths.out, "--out")
    if paths.cache is not None:
        _check_dir(paths.cache, "--cache")
    h = paths.history
    if h.exists() and h.is_dir():
        raise NightlyError(f"--history {h}: is a directory (give the database file, e.g. {h / 'history.sqlite'})")
    ancestor = _existing_ancestor(h.parent)
    if not ancestor.is_dir():
        raise NightlyError(f"--history {h}: {ancestor} is not a directory")


def create_locations(paths: NightlyPaths) -> None:
    """Create the output and cache folders (after :func:`validate_paths` found nothing wrong) and prove them
    writable; :class:`NightlyError` naming the folder when the file system says otherwise, after removing
    the folders this call created (a refused run leaves nothing behind)."""
    created: list[Path] = []
    try:
        for path, option in ((paths.out, "--out"), (paths.cache, "--cache")):
            if path is None:
                continue
            top = path
            while not top.parent.exists() and top.parent != top.parent.parent:
                top = top.parent
            fresh = not top.exists()
            _probe_dir(path, option)
            if fresh:
                created.append(top)
    except NightlyError:
        import shutil

        for top in reversed(created):
            shutil.rmtree(top, ignore_errors=True)
        raise
