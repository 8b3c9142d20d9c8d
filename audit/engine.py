"""Trial engine: seeded, chunked, parallel Monte Carlo.

Every Monte Carlo computation in privbound runs through :func:`map_chunks`:

* the ``n`` trials are cut into fixed-size chunks (``chunk_size``, independent of
  ``n_jobs`` and of the joblib backend);
* chunk ``i`` draws all its randomness from the ``i``-th child of
  ``numpy.random.SeedSequence(seed)`` (``SeedSequence(seed, spawn_key=(i,))``,
  which is what ``SeedSequence(seed).spawn(i + 1)[i]`` returns);
* chunks are dispatched with :class:`joblib.Parallel`, so any backend configured
  with ``joblib.parallel_config`` (loky, threading, dask with a
  ``dask.distributed.Client``) runs them, and the results are concatenated in
  chunk order.

A seed therefore gives bit-identical results on 1 or 16 cores, with any backend, for a
given ``chunk_size`` (another chunk size gives other, equally valid, draws). This holds
only for mechanisms that draw all their randomness from the ``rng`` they are given:
:func:`run_trials` rejects (:class:`MechanismError`) a mechanism that changes the global
``np.random`` state, or whose first 16 trials differ when run twice with the same seed.

:func:`run_trials` specialises this to a mechanism and a neighbouring pair: chunk
``i`` splits its child seed into one generator for ``d0`` and one for ``d1``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import joblib
import numpy as np

from privbound.audit.features import UnsupportedOutputError, flatten_output
from privbound._validation import check_int

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "MechanismError",
    "TrialOutputs",
    "chunk_sizes",
    "chunk_seed",
    "map_chunks",
    "run_trials",
    "sample_mechanism",
    "start_workers",
]

DEFAULT_CHUNK_SIZE = 5_000


class MechanismError(RuntimeError):
    """A mechanism raised, or returned an output that cannot be audited (non-finite, ``None``, ...)."""


def chunk_sizes(n: int, chunk_size: int = DEFAULT_CHUNK_SIZE) -> list[int]:
    """Sizes of the chunks that ``n`` trials are cut into (all ``chunk_size`` but the last)."""
    n = check_int(n, "trials", low=1)
    chunk_size = check_int(chunk_size, "chunk_size", low=1)
    full, rest = divmod(n, chunk_size)
    return [chunk_size] * full + ([rest] if rest else [])


def chunk_seed(seed: int, index: int) -> np.random.SeedSequence:
    """The ``index``-th child of ``SeedSequence(seed)``."""
    return np.random.SeedSequence(seed, spawn_key=(index,))


def _check_seed(seed: Any) -> int:
    return check_int(seed, "seed", low=0)


def map_chunks(
    fn: Callable[[int, np.random.SeedSequence], Any],
    n: int,
    *,
    seed: int = 0,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    n_jobs: int | None = 1,
    first_chunk: int = 0,
    done: Mapping[int, Any] | None = None,
    on_chunk: Callable[[int, Any], None] | None = None,
) -> list[Any]:
    """Run ``fn(size, seed_sequence)`` on every chunk of ``n`` trials, in chunk order.

    ``fn`` must derive all of its randomness from the seed sequence it is given.
    ``first_chunk`` skips chunks already computed elsewhere (resumable runs): the
    chunk indices, hence the seeds, stay those of the full run. ``done`` maps chunk
    indices to results already available (e.g. from a cache); they are not recomputed.
    ``on_chunk(i, result)`` is called for every newly computed chunk as soon as it is
    finished (in chunk order), so a caller can persist progress: an interrupted run
    loses at most the chunks still in flight.
    """
    seed = _check_seed(seed)
    sizes = chunk_sizes(n, chunk_size)
    first_chunk = check_int(first_chunk, "first_chunk", low=0, high=len(sizes))
    done = {} if done is None else dict(done)
    todo = [i for i in range(first_chunk, len(sizes)) if i not in done]
    tasks = [joblib.delayed(fn)(sizes[i], chunk_seed(seed, i)) for i in todo]
    if n_jobs == 1 and _backend_is_default():
        # Fast path: no pool start-up cost for the sequential case.
        stream = (f(*a, **k) for f, a, k in tasks)
    else:
        stream = joblib.Parallel(n_jobs=n_jobs, return_as="generator")(tasks)
    results = dict(done)
    for i, res in zip(todo, stream):
        results[i] = res
        if on_chunk is not None:
            on_chunk(i, res)
    return [results[i] for i in range(first_chunk, len(sizes))]


def _backend_is_default() -> bool:
    """True unless the caller configured a joblib backend (e.g. dask) explicitly."""
    try:
        from joblib.parallel import get_active_backend

        backend, _ = get_active_backend()
        return type(backend).__name__ in {"LokyBackend", "SequentialBackend"}
    except Exception:  # pragma: no cover - very old joblib
        return True


# --------------------------------------------------------------------------- trials


@dataclass(frozen=True)
class TrialOutputs:
    """Mechanism outputs on the two datasets of a neighbouring pair (stacked on axis 0)."""

    out0: np.ndarray
    out1: np.ndarray
    seed: int
    chunk_size: int


def sample_mechanism(mechanism: Any, data: Any, rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` independent outputs of ``mechanism`` on ``data``, stacked on axis 0.

    Uses the vectorised ``mechanism.sample(data, rng, size)`` when present, else
    calls ``mechanism(data, rng)`` ``size`` times.
    """
    if hasattr(mechanism, "sample"):
        out = np.asarray(mechanism.sample(data, rng, size))
        if out.ndim == 0 or out.shape[0] != size:
            raise MechanismError(
                f"mechanism.sample(data, rng, size={size}) must return {size} outputs stacked "
                f"on axis 0, got shape {out.shape}"
            )
        return out
    if not callable(mechanism):
        raise TypeError(
            "mechanism must be callable as mechanism(data, rng) or have a "
            f"sample(data, rng, size) method, got {type(mechanism).__name__}"
        )
    return _stack([mechanism(data, rng) for _ in range(size)])


def _stack(outputs: Sequence[Any]) -> np.ndarray:
    """Stack single outputs (scalars, vectors, tuples, labels) on axis 0."""
    first = outputs[0]
    if isinstance(first, tuple):
        try:
            return np.asarray([np.concatenate([np.ravel(np.asarray(p, dtype=float)) for p in o]) for o in outputs])
        except (TypeError, ValueError):
            pass
    try:
        arr = np.asarray(outputs)
        # numpy turns a tuple mixing labels and numbers into strings ("4.56"): keep such outputs as
        # objects, so that their numbers stay numbers
        if arr.dtype != object and (arr.dtype.kind not in "US" or _only_strings(outputs)):
            return arr
    except (TypeError, ValueError):
        pass
    arr = np.empty(len(outputs), dtype=object)
    arr[:] = list(outputs)
    return arr


def _only_strings(outputs: Sequence[Any]) -> bool:
    """Every output is a string, or a tuple or list of strings."""
    return all(isinstance(p, str) for o in outputs for p in (o if isinstance(o, (tuple, list)) else (o,)))


def _check_outputs(out: np.ndarray, side: int, chunk: int, seed: int, chunk_size: int) -> None:
    where = f"(seed={seed}, chunk {chunk}, chunk_size={chunk_size})"
    if out.dtype.kind in "fc" and not np.all(np.isfinite(out)):
        flat = np.reshape(~np.isfinite(out), (out.shape[0], -1)).any(axis=1)
        trial = chunk * chunk_size + int(np.flatnonzero(flat)[0])
        raise MechanismError(f"mechanism returned a non-finite output on d{side} at trial {trial} {where}")
    if out.dtype == object:
        for i, o in enumerate(out):
            try:
                flatten_output(o)
            except UnsupportedOutputError as exc:
                raise MechanismError(
                    f"mechanism returned an output holding {type(exc.value).__name__} ({exc.value!r:.40}) on "
                    f"d{side} at trial {chunk * chunk_size + i} {where}; outputs must be numbers, arrays, "
                    "strings, or tuples, lists and dicts of them"
                ) from None


UNSEEDED_MESSAGE = (
    "mechanism draws randomness that its rng argument does not control ({how}): its outputs cannot be "
    "reproduced from the seed; draw every random number from the rng (numpy.random.Generator) it is given. "
    "Code you cannot change: wrap a mechanism that uses the global np.random in "
    "privbound.audit.seeding.GlobalNumpyRandom (seeds it from the trial's rng for each call and restores the "
    "global state), or declare draws_own_randomness = True on one that draws from a secure generator of its own "
    "(valid audits that do not repeat for a seed)"
)


def _global_state() -> tuple:
    st = np.random.get_state(legacy=False)
    return st["state"]["key"].tobytes(), st["state"]["pos"], st.get("has_gauss"), st.get("gauss")


def _same_outputs(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    for x, y in zip(a, b):
        if x.dtype == object or y.dtype == object:
            if repr(x.tolist()) != repr(y.tolist()):
                return False
        elif x.shape != y.shape or not np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"):
            return False
    return True


def check_seeded(mechanism, d0, d1, seed: int, chunk_size: int, size: int = 16) -> None:
    """Raise :class:`MechanismError` when ``mechanism`` draws randomness its ``rng`` does not control.

    Cheap: ``size`` trials of chunk 0 are run twice with the same seed; outputs that differ
    mean another source of randomness (the global ``np.random``, ``random``, an unseeded
    generator), and so does a change of the global ``np.random`` state (checked on every
    chunk too, see :func:`_trial_chunk`).
    """
    try:
        first = _trial_chunk(mechanism, d0, d1, seed, chunk_size, size, chunk_seed(seed, 0))
        second = _trial_chunk(mechanism, d0, d1, seed, chunk_size, size, chunk_seed(seed, 0))
    except MechanismError as exc:
        if "does not control" in str(exc):
            raise
        return  # a mechanism that raises: the run itself reports it, naming the real trials
    if not _same_outputs(first, second):
        raise MechanismError(UNSEEDED_MESSAGE.format(how=f"the same seed gave different outputs, seed={seed}"))


def _trial_chunk(mechanism, d0, d1, seed: int, chunk_size: int, size: int, ss: np.random.SeedSequence):
    chunk = ss.spawn_key[-1]
    outs = []
    state = _global_state()
    for side, (data, child) in enumerate(zip((d0, d1), ss.spawn(2))):
        rng = np.random.default_rng(child)
        try:
            out = sample_mechanism(mechanism, data, rng, size)
        except MechanismError:
            raise
        except Exception as exc:
            raise MechanismError(
                f"mechanism raised {type(exc).__name__}: {exc} on d{side} in trials "
                f"{chunk * chunk_size}..{chunk * chunk_size + size - 1} "
                f"(seed={seed}, chunk {chunk}, chunk_size={chunk_size})"
            ) from exc
        _check_outputs(out, side, chunk, seed, chunk_size)
        outs.append(out)
    if _global_state() != state:
        raise MechanismError(UNSEEDED_MESSAGE.format(how=f"it used the global np.random in chunk {chunk}, seed={seed}"))
    return outs


def run_trials(
    mechanism: Any,
    d0: Any,
    d1: Any,
    trials: int,
    *,
    seed: int = 0,
    n_jobs: int | None = 1,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    cache: Any = None,
) -> TrialOutputs:
    """``trials`` outputs of ``mechanism`` on each of ``d0`` and ``d1``.

    Chunk ``i`` uses the ``i``-th child of ``SeedSequence(seed)``, split in two
    (``d0`` first, then ``d1``). Raises :class:`MechanismError` naming the trial
    and the seed when the mechanism raises or returns non-finite output.

    ``cache`` (an :class:`privbound.audit.cache.ChunkCache` for this mechanism, pair, seed and
    chunk size) supplies finished chunks and stores new ones as they finish, so an
    interrupted run resumes where it stopped with bit-identical results.
    """
    trials = check_int(trials, "trials", low=1)
    seed = _check_seed(seed)
    if not (hasattr(mechanism, "sample") or callable(mechanism)):
        # Checked here, before any trial runs: a wrong argument is a TypeError, not a
        # MechanismError raised from inside the first chunk.
        raise TypeError(
            "mechanism must be callable as mechanism(data, rng) or have a "
            f"sample(data, rng, size) method, got {type(mechanism).__name__}"
        )

    def fn(size, ss):
        return _trial_chunk(mechanism, d0, d1, seed, chunk_size, size, ss)

    done, on_chunk = {}, None
    if cache is not None:
        for i, size in enumerate(chunk_sizes(trials, chunk_size)):
            got = cache.load(i, size)
            if got is not None:
                done[i] = got

        def on_chunk(i, res):
            cache.store(i, len(res[0]), res)

    # A resumed run already proved it when it computed chunk 0; a mechanism that draws from a
    # secure generator of its own on purpose (a DP library) declares it and is exempt.
    if 0 not in done and not getattr(mechanism, "draws_own_randomness", False):
        check_seeded(mechanism, d0, d1, seed, chunk_size, size=min(16, chunk_sizes(trials, chunk_size)[0]))

    parts = map_chunks(fn, trials, seed=seed, chunk_size=chunk_size, n_jobs=n_jobs, done=done, on_chunk=on_chunk)
    out0 = np.concatenate([p[0] for p in parts], axis=0)
    out1 = np.concatenate([p[1] for p in parts], axis=0)
    return TrialOutputs(out0=out0, out1=out1, seed=seed, chunk_size=chunk_size)


def start_workers(mechanism: Any, data: Any, *, seed: int = 0, n_jobs: int | None = 1) -> None:
    """Run ``mechanism`` once on ``data`` in each worker of the pool :func:`run_trials` would use, the output
    discarded, so that a call timed after it does not pay the workers' start-up and first calls (the pool,
    imports, unpickling). Nothing runs where there is no pool to start: one job, or threads (started for each
    call). Loky gives each worker one of the calls in practice, not by contract. The trials do not depend on it:
    each chunk's randomness comes from its own seed. Whatever the call raises is caught in the worker (a failed
    task would shut the pool down) and left for the trials to report, naming the real trials."""
    from joblib.parallel import get_active_backend

    workers = joblib.effective_n_jobs(n_jobs)
    if workers == 1 or getattr(get_active_backend()[0], "uses_threads", False):
        return

    def fn(size, ss):
        try:
            sample_mechanism(mechanism, data, np.random.default_rng(ss), size)
        except Exception:  # the trials report it
            pass

    map_chunks(fn, workers, seed=seed, chunk_size=1, n_jobs=n_jobs)
