"""Progress of the long phases of a run (the audits, the bound checks, the mutants, membership inference).

On a terminal: a tqdm bar per phase whose postfix names the item running now. Anywhere
else (a pipe, a log file, cron, CI): one line per finished item, flushed at once, e.g.::

    [audits 3/59] laplace-eps1: holds, eps lower bound 0.734 (0.1 s)

so that a log shows how far a run got and what it was doing when it stopped.
"""

from __future__ import annotations

import sys
import time
from typing import IO

__all__ = ["PhaseProgress", "is_terminal"]


def is_terminal(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class PhaseProgress:
    """Progress of one phase of ``total`` items, written to ``stream`` (stderr by default).

    ``start(name)`` before an item, ``done(name, outcome)`` after it; ``close()`` at the end.
    ``enabled=False`` writes nothing. ``terminal`` overrides the terminal detection.
    """

    def __init__(self, phase: str, total: int, *, stream: IO[str] | None = None, enabled: bool = True,
                 terminal: bool | None = None):
        self.phase, self.total, self.enabled = phase, total, enabled
        self.stream = sys.stderr if stream is None else stream
        self.terminal = is_terminal(self.stream) if terminal is None else terminal
        self.finished = 0
        self._t_item = time.perf_counter()
        self._bar = None
        if enabled and self.terminal:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=phase, unit="item", file=self.stream, leave=False,
                             dynamic_ncols=True)

    def start(self, name: str) -> None:
        self._t_item = time.perf_counter()
        if self._bar is not None:
            self._bar.set_postfix_str(name, refresh=True)

    def done(self, name: str, outcome: str) -> None:
        self.finished += 1
        seconds = time.perf_counter() - self._t_item
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(1)
            return
        width = len(str(self.total))
        self.stream.write(f"[{self.phase} {self.finished:{width}d}/{self.total}] {name}: {outcome} ({seconds:.1f} s)\n")
        self.stream.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
