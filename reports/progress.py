"""Progress of the phases of a run (the audits, the learner mutants, the bound checks, the check mutants,
membership inference, the report).

On a terminal: a tqdm bar per phase whose postfix names the item running now. Anywhere
else (a pipe, a log file, cron, CI): one line per finished item, flushed at once, with the
item's own seconds, e.g.::

    [audits 3/97] laplace-eps1: holds, eps lower bound 0.734 (0.1 s)

so that a log shows how far a run got and what it was doing when it stopped. An item that runs
longer than :data:`HEARTBEAT_SECONDS` gets a heartbeat line, on a terminal (above the bar) and
in a log alike, then one more every :data:`HEARTBEAT_SECONDS`::

    [checks 41/137] robust-halfspaces/theorem-6:scaling-sqrt-d: still running (60 s)

A background thread writes the heartbeats; every line is written under one lock, so a heartbeat
never splits another line.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import IO

__all__ = ["PhaseProgress", "is_terminal", "HEARTBEAT_SECONDS"]

HEARTBEAT_SECONDS = 60.0
"""Seconds an item runs before its first heartbeat line, and between two heartbeats."""


def is_terminal(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class PhaseProgress:
    """Progress of one phase of ``total`` items, written to ``stream`` (stderr by default).

    ``start(name)`` before an item, ``done(name, outcome)`` after it; ``close()`` at the end
    (also as a context manager). Each finished item's line carries its own seconds, from its
    ``start`` (or, without one, from the previous item's end). ``enabled=False`` writes nothing.
    ``terminal`` overrides the terminal detection; ``heartbeat`` the seconds between heartbeats
    (default :data:`HEARTBEAT_SECONDS`; None: no heartbeat).
    """

    def __init__(self, phase: str, total: int, *, stream: IO[str] | None = None, enabled: bool = True,
                 terminal: bool | None = None, heartbeat: float | None = -1.0):
        self.phase, self.total, self.enabled = phase, total, enabled
        self.stream = sys.stderr if stream is None else stream
        self.terminal = is_terminal(self.stream) if terminal is None else terminal
        self.heartbeat = HEARTBEAT_SECONDS if heartbeat is not None and heartbeat < 0 else heartbeat
        self.finished = 0
        self._t_item = time.perf_counter()
        self._current: str | None = None
        self._beats = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._bar = None
        if enabled and self.terminal:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=phase, unit="item", file=self.stream, leave=False,
                             dynamic_ncols=True)
        if enabled and self.heartbeat and total > 0:
            self._thread = threading.Thread(target=self._beat, name=f"heartbeat-{phase}", daemon=True)
            self._thread.start()

    # ----------------------------------------------------------------- writing

    def _write(self, line: str) -> None:
        """One whole line (under the lock); above the bar on a terminal."""
        if self._bar is not None:
            self._bar.write(line, file=self.stream)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def _prefix(self) -> str:
        width = len(str(self.total))
        return f"[{self.phase} {min(self.finished + 1, self.total):{width}d}/{self.total}]"

    def _beat(self) -> None:
        while not self._stop.wait(min(1.0, self.heartbeat / 4)):
            with self._lock:
                if self._current is None:
                    continue
                elapsed = time.perf_counter() - self._t_item
                if elapsed >= self.heartbeat * (self._beats + 1):
                    self._beats += 1
                    self._write(f"{self._prefix()} {self._current}: still running ({elapsed:.0f} s)")

    # ------------------------------------------------------------------ public

    def start(self, name: str) -> None:
        with self._lock:
            self._t_item = time.perf_counter()
            self._current, self._beats = name, 0
            if self._bar is not None:
                self._bar.set_postfix_str(name, refresh=True)

    def done(self, name: str, outcome: str) -> None:
        with self._lock:
            seconds = time.perf_counter() - self._t_item
            self._current = None
            self._t_item = time.perf_counter()  # an item without start() is timed from here
            self.finished += 1
            if not self.enabled:
                return
            if self._bar is not None:
                self._bar.update(1)
                return
            width = len(str(self.total))
            self._write(f"[{self.phase} {self.finished:{width}d}/{self.total}] {name}: {outcome} ({seconds:.1f} s)")

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "PhaseProgress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
