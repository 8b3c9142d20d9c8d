"""Advisory locks that name their holder: one nightly per output folder, one writer per history file.

A :class:`RunLock` is an ``fcntl.flock`` on a small lock file (``<out>/.nightly.lock``,
``<history>.lock``) that holds a JSON line describing the holder (pid, host, run id, start
time). The kernel drops the lock when the holder exits, however it exits (SIGKILL
included), so a lock is never left stale; the file is removed on release. A second process
either fails at once with :class:`LockBusy`, whose message names the holder, or waits.
POSIX only (``fcntl``).
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any, Callable

__all__ = ["RunLock", "LockBusy", "holder_info"]


class LockBusy(Exception):
    """The lock is held by another process; ``holder`` describes it (may be empty)."""

    def __init__(self, message: str, holder: dict[str, Any]):
        super().__init__(message)
        self.holder = holder


def holder_info(**extra: Any) -> dict[str, Any]:
    """What a lock file says about its holder: pid, host, start time, plus ``extra``."""
    return {"pid": os.getpid(), "host": socket.gethostname(),
            "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **extra}


def describe(holder: dict[str, Any]) -> str:
    if not holder:
        return "another process (no holder information)"
    parts = [f"pid {holder.get('pid')} on {holder.get('host')}"]
    if holder.get("run_id"):
        parts.append(f"run {holder['run_id']}")
    if holder.get("since"):
        parts.append(f"since {holder['since']}")
    return ", ".join(parts)


class RunLock:
    """An exclusive lock on ``path`` (created if needed), described by ``what`` in messages."""

    def __init__(self, path: str | os.PathLike, what: str):
        self.path = Path(path)
        self.what = what
        self._fd: int | None = None

    def _read_holder(self) -> dict[str, Any]:
        try:
            return json.loads(self.path.read_text() or "{}")
        except (OSError, ValueError):
            return {}

    def acquire(self, info: dict[str, Any], *, wait: float = 0.0,
                on_wait: Callable[[str], None] | None = None, poll: float = 0.2) -> None:
        """Take the lock, writing ``info`` into the lock file.

        ``wait`` = 0 fails at once, ``inf`` waits for ever, otherwise waits that many seconds;
        ``on_wait(message)`` is called once when the lock is found busy and waiting begins.
        Raises :class:`LockBusy` naming the holder.
        """
        import fcntl

        deadline = time.monotonic() + wait
        told = False
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                holder = self._read_holder()
                message = f"{self.what} is in use by {describe(holder)}"
                if wait <= 0 or time.monotonic() >= deadline:
                    raise LockBusy(message, holder) from None
                if not told and on_wait is not None:
                    on_wait(message)
                    told = True
                time.sleep(poll)
                continue
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:  # the previous holder removed the file between our open and our lock
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.write(fd, (json.dumps(info, sort_keys=True) + "\n").encode())
            self._fd = fd
            return

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            self.path.unlink()
        except OSError:
            pass
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> "RunLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()
