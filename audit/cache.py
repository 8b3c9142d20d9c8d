"""A disk cache of finished trial chunks, so that interrupted runs resume and lose nothing.

Chunk ``i`` of a run is determined by the mechanism, the neighbouring pair, the
seed, the chunk size and the chunk's own size (its seed is the ``i``-th child of
``SeedSequence(seed)``, see :mod:`privbound.audit.engine`); so a chunk computed by an
interrupted run is exactly the chunk an uninterrupted run would compute, and can be
reused. A cache write that fails (a full disk) is counted in ``store_errors`` and
skipped: the run goes on, the entry is recomputed next time. Each entry is one ``.npz`` file written atomically (temporary file, then a
rename) with a SHA-256 digest of its arrays stored beside them; an entry that is
unreadable, partial or whose digest does not match is deleted and recomputed.

:class:`ResultCache` keeps small JSON results (bound checks) the same way.

Every entry read is touched (its modification time set to now), so :func:`prune_cache` can drop the least
recently used entries first and never those a run in progress has used; :func:`cache_size` measures a cache.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

__all__ = ["ChunkCache", "ResultCache", "atomic_write_bytes", "stage_bytes", "sweep_stale_temporaries", "fingerprint",
           "source_digest", "sampling_library_versions", "SAMPLING_LIBRARIES", "cache_size", "prune_cache",
           "Pruned"]

SAMPLING_LIBRARIES = ("numpy", "scipy", "scikit-learn", "dp-accounting", "joblib", "opendp", "diffprivlib",
                      "pipeline-dp", "python-dp", "torch", "opacus")
"""The distributions whose code samples or judges a target's trials: the numerical libraries and the DP libraries
audited. Their versions are part of every cache key (an upgraded library is audited afresh) and of a night's
record."""


def fingerprint(*parts: Any) -> str:
    """A stable hex digest of reprs and array contents (the cache namespace)."""
    h = hashlib.sha256()
    for p in parts:
        if isinstance(p, np.ndarray) or (isinstance(p, (list, tuple)) and p and isinstance(p[0], np.ndarray)):
            for a in (p if isinstance(p, (list, tuple)) else [p]):
                a = np.ascontiguousarray(a)
                h.update(str((a.dtype.str, a.shape)).encode())
                h.update(a.tobytes() if a.dtype != object else repr(a.tolist()).encode())
        else:
            try:
                arr = np.asarray(p)
                if arr.dtype != object and arr.ndim > 0:
                    h.update(str((arr.dtype.str, arr.shape)).encode())
                    h.update(np.ascontiguousarray(arr).tobytes())
                    continue
            except Exception:
                pass
            h.update(repr(p).encode())
        h.update(b"\x00")
    return h.hexdigest()


@functools.cache
def sampling_library_versions() -> tuple[str, ...]:
    """``"name=version"`` of each of :data:`SAMPLING_LIBRARIES` (``"name=-"`` when not installed), read once per
    process."""
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for lib in SAMPLING_LIBRARIES:
        try:
            out.append(f"{lib}={version(lib)}")
        except PackageNotFoundError:
            out.append(f"{lib}=-")
    return tuple(out)


def source_digest(*packages: Any) -> str:
    """A digest of every ``.py`` file of the given packages (module objects), 16 hex digits.

    Part of every cache key: a change to the code that produced a cached result
    invalidates it.
    """
    h = hashlib.sha256()
    for pkg in packages:
        for root in pkg.__path__:
            for f in sorted(Path(root).rglob("*.py")):
                h.update(f.relative_to(root).as_posix().encode())
                h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _digest(arrays: Sequence[np.ndarray]) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str((a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _remove(path: str | os.PathLike) -> bool:
    """Delete ``path`` if possible; whether it was deleted (a file already gone or not ours is left be)."""
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


def stage_bytes(path: str | os.PathLike, writer) -> Path:
    """Write a temporary file beside ``path`` through ``writer(binary file)``, flushed to disk; return its path.

    ``os.replace(returned, path)`` then publishes it atomically. On any failure (a full
    disk, say) the temporary file is removed and the error propagates; ``path`` is untouched.
    The file gets the permissions a plain ``open`` would give (0666 less the umask).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=f".{os.getpid()}.tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            writer(fh)
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
    except BaseException:
        _remove(tmp)
        raise
    return Path(tmp)


def _writer_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. another user's live process
        return True
    return True


def sweep_stale_temporaries(root: str | os.PathLike) -> int:
    """Remove the temporary files under ``root`` whose writer process is gone (killed between
    staging and publishing); return how many. A live writer's files are left alone, so this is
    safe beside a concurrent run sharing the folder."""
    removed = 0
    for tmp in Path(root).rglob(".*.tmp"):
        pid = tmp.name.rsplit(".", 2)[-2]
        if pid.isdigit() and not _writer_alive(int(pid)):
            removed += _remove(tmp)
    return removed


def atomic_write_bytes(path: str | os.PathLike, writer) -> None:
    """Write a file through ``writer(binary file)`` via a temporary file and a rename: never half-written."""
    tmp = stage_bytes(path, writer)
    try:
        os.replace(tmp, path)
    except BaseException:
        _remove(tmp)
        raise


def _touch(path: Path) -> None:
    """Mark an entry as used now (what :func:`prune_cache` keeps longest)."""
    with contextlib.suppress(OSError):
        os.utime(path, None)


def _entries(root: str | os.PathLike) -> list[tuple[float, int, Path]]:
    out = []
    for path in Path(root).rglob("*"):
        with contextlib.suppress(OSError):
            st = path.stat()
            if path.is_file():
                out.append((st.st_mtime, st.st_size, path))
    return out


def cache_size(root: str | os.PathLike) -> int:
    """Bytes of every file under ``root`` (0 when it does not exist)."""
    return sum(size for _, size, _ in _entries(root)) if Path(root).is_dir() else 0


@dataclass(frozen=True)
class Pruned:
    """What :func:`prune_cache` did: files and bytes removed, bytes kept, and the kept bytes it could not
    remove because they were used at or after ``keep_since`` (the run in progress)."""

    removed_files: int
    removed_bytes: int
    kept_bytes: int
    protected_bytes: int


def prune_cache(root: str | os.PathLike, max_bytes: int, *, keep_since: float | None = None) -> Pruned:
    """Delete the least recently used entries under ``root`` until it holds at most ``max_bytes``.

    Entries used (read or written) at or after ``keep_since`` (a ``time.time()``) are never deleted, so a night
    prunes what older nights left and keeps all it used itself, even when that alone exceeds ``max_bytes``.
    Folders left empty are removed. Deleting is safe beside a reader: a missing entry is recomputed.
    """
    entries = sorted(_entries(root), key=lambda e: e[0])
    total = sum(size for _, size, _ in entries)
    removed_files = removed_bytes = protected = 0
    for mtime, size, path in entries:
        if total - removed_bytes <= max_bytes:
            break
        if keep_since is not None and mtime >= keep_since:
            protected += size
            continue
        if _remove(path):
            removed_files += 1
            removed_bytes += size
    for folder in sorted((p for p in Path(root).rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):
            folder.rmdir()  # only when empty
    return Pruned(removed_files, removed_bytes, total - removed_bytes, protected)


class ChunkCache:
    """Finished chunks of one trial run, under ``root/<namespace>/``."""

    def __init__(self, root: str | os.PathLike, namespace: str):
        self.dir = Path(root) / namespace
        self.hits = 0
        self.misses = 0
        self.corrupt = 0
        self.store_errors = 0

    def _path(self, chunk: int, size: int) -> Path:
        return self.dir / f"chunk-{chunk:06d}-{size}.npz"

    def load(self, chunk: int, size: int) -> list[np.ndarray] | None:
        """The arrays of a finished chunk, or None (missing, or corrupt and then deleted)."""
        path = self._path(chunk, size)
        if not path.exists():
            self.misses += 1
            return None
        try:
            with np.load(path, allow_pickle=False) as z:
                n = int(z["n_arrays"])
                arrays = [z[f"a{i}"] for i in range(n)]
                digest = str(z["sha256"])
            if digest != _digest(arrays) or any(a.shape[:1] != (size,) for a in arrays):
                raise ValueError("digest or shape mismatch")
        except Exception:
            self.corrupt += 1
            _remove(path)
            return None
        self.hits += 1
        _touch(path)
        return arrays

    def store(self, chunk: int, size: int, arrays: Sequence[np.ndarray]) -> bool:
        """Store a finished chunk; returns False (and stores nothing) for object arrays."""
        arrays = [np.asarray(a) for a in arrays]
        if any(a.dtype == object for a in arrays):
            return False
        payload = {f"a{i}": a for i, a in enumerate(arrays)}
        payload["n_arrays"] = np.array(len(arrays))
        payload["sha256"] = np.array(_digest(arrays))
        try:
            atomic_write_bytes(self._path(chunk, size), lambda fh: np.savez(fh, **payload))
        except OSError:  # e.g. a full disk: the chunk is recomputed next time, the run goes on
            self.store_errors += 1
            return False
        return True


class ResultCache:
    """JSON results (e.g. a bound check's ``to_dict()``) keyed by a fingerprint, with a digest."""

    def __init__(self, root: str | os.PathLike):
        self.dir = Path(root)
        self.store_errors = 0

    def _path(self, key: str) -> Path:
        return self.dir / f"{key}.json"

    def has(self, key: str) -> bool:
        """Whether an entry is stored under ``key`` (not read, not checked)."""
        return self._path(key).exists()

    def load(self, key: str) -> Any | None:
        path = self._path(key)
        if not path.exists():
            return None
        try:
            wrapper = json.loads(path.read_text())
            body = json.dumps(wrapper["value"], sort_keys=True)
            if hashlib.sha256(body.encode()).hexdigest() != wrapper["sha256"]:
                raise ValueError("digest mismatch")
            _touch(path)
            return wrapper["value"]
        except Exception:
            _remove(path)
            return None

    def store(self, key: str, value: Any) -> None:
        body = json.dumps(value, sort_keys=True)
        text = json.dumps({"sha256": hashlib.sha256(body.encode()).hexdigest(), "value": value}, sort_keys=True)
        try:
            atomic_write_bytes(self._path(key), lambda fh: fh.write(text.encode()))
        except OSError:  # e.g. a full disk: recomputed next time
            self.store_errors += 1
