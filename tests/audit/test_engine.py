"""Tests of the seeded chunk engine ``privbound.audit.engine``.

What is checked: chunking and seeding follow the documented rule (chunk ``i`` gets
``SeedSequence(seed).spawn(i + 1)[i]``), results come back in chunk order, and a seed
gives bit-identical trial outputs and identical ``AuditResult`` with ``n_jobs`` 1 or 2,
with the loky and threading backends and with dask; a mechanism that raises or
returns NaN gives a ``MechanismError`` naming the trial and the seed.

The only statistical test (batched vs single-call path) fixes its seed and states
its false-failure rate.
"""

from __future__ import annotations

import importlib.util

import joblib
import numpy as np
import pytest
from scipy import stats

from privbound.audit import audit_mechanism
from privbound.audit.engine import (
    MechanismError,
    chunk_seed,
    chunk_sizes,
    map_chunks,
    run_trials,
    sample_mechanism,
)
from privbound.learners.mechanisms import LaplaceMechanism, RandomizedResponse

HAS_DASK = importlib.util.find_spec("dask") is not None and importlib.util.find_spec("distributed") is not None


def _uniform_chunk(size, ss):
    """A chunk function that uses only its seed sequence (module level so loky can pickle it)."""
    return np.random.default_rng(ss).random(size)


def _plain_callable():
    """A plain callable mechanism (no ``sample``): a 2-vector output, exercises the per-call path. Made inside a
    function so that loky pickles it by value: a module-level function of this file is pickled by reference to
    ``tests.audit.test_engine``, which a worker cannot import where an installed distribution ships a top-level
    ``tests`` package (diffprivlib 0.6.6 does)."""

    def mechanism(data, rng):
        return np.array([data + rng.laplace(), rng.normal()])

    return mechanism


def _result_fields(r):
    """Every field of an AuditResult except the wall-clock ones."""
    d = r.to_dict()
    d.pop("wall_seconds")
    d.pop("details")
    return d


# --------------------------------------------------------------------- chunking and seeds


def test_chunk_sizes_cover_n_in_fixed_chunks():
    # 12_345 = 2 * 5_000 + 2_345; chunk size never depends on anything but chunk_size.
    assert chunk_sizes(12_345, 5_000) == [5_000, 5_000, 2_345]
    assert chunk_sizes(10_000, 5_000) == [5_000, 5_000]
    assert chunk_sizes(1, 5_000) == [1]


def test_chunk_seed_is_the_ith_spawned_child():
    # Chunk i uses the i-th child of SeedSequence(seed).
    for seed in (0, 7, 2**40):
        children = np.random.SeedSequence(seed).spawn(5)
        for i, child in enumerate(children):
            assert np.array_equal(chunk_seed(seed, i).generate_state(8), child.generate_state(8))


def test_map_chunks_returns_chunk_results_in_order_with_the_documented_seeds():
    got = map_chunks(_uniform_chunk, 23, seed=11, chunk_size=5)
    assert [len(g) for g in got] == [5, 5, 5, 5, 3]
    children = np.random.SeedSequence(11).spawn(5)
    for g, child, size in zip(got, children, [5, 5, 5, 5, 3]):
        assert np.array_equal(g, np.random.default_rng(child).random(size))


def test_map_chunks_first_chunk_skips_without_changing_seeds():
    full = map_chunks(_uniform_chunk, 23, seed=4, chunk_size=5)
    tail = map_chunks(_uniform_chunk, 23, seed=4, chunk_size=5, first_chunk=2)
    assert len(tail) == 3
    for a, b in zip(full[2:], tail):
        assert np.array_equal(a, b)


def test_different_seeds_give_different_streams():
    a = np.concatenate(map_chunks(_uniform_chunk, 100, seed=0, chunk_size=50))
    b = np.concatenate(map_chunks(_uniform_chunk, 100, seed=1, chunk_size=50))
    assert not np.array_equal(a, b)


# --------------------------------------------------------------------- determinism


@pytest.mark.parametrize("mechanism", [LaplaceMechanism(1.0), _plain_callable()], ids=["batched", "callable"])
def test_run_trials_bit_identical_across_n_jobs_and_backends(mechanism):
    kw = dict(seed=5, chunk_size=300)
    ref = run_trials(mechanism, 0.0, 1.0, 1_000, n_jobs=1, **kw)
    runs = [run_trials(mechanism, 0.0, 1.0, 1_000, n_jobs=2, **kw)]  # loky, the joblib default
    with joblib.parallel_config(backend="threading"):
        runs.append(run_trials(mechanism, 0.0, 1.0, 1_000, n_jobs=2, **kw))
        runs.append(run_trials(mechanism, 0.0, 1.0, 1_000, n_jobs=1, **kw))
    with joblib.parallel_config(backend="loky"):
        runs.append(run_trials(mechanism, 0.0, 1.0, 1_000, n_jobs=2, **kw))
    for r in runs:
        assert r.out0.dtype == ref.out0.dtype and r.out0.shape == ref.out0.shape
        assert np.array_equal(r.out0, ref.out0) and np.array_equal(r.out1, ref.out1)
    # d0 and d1 use different streams (a seeding bug that reused one stream would make out1 - out0 = 1).
    assert not np.allclose(ref.out1 - ref.out0, 1.0)


def test_audit_result_identical_across_n_jobs_and_backends():
    mech = RandomizedResponse(1.0)
    kw = dict(epsilon=1.0, trials=2_000, seed=9, chunk_size=500)
    ref = _result_fields(audit_mechanism(mech, 0, 1, n_jobs=1, **kw))
    assert _result_fields(audit_mechanism(mech, 0, 1, n_jobs=2, **kw)) == ref
    with joblib.parallel_config(backend="threading"):
        assert _result_fields(audit_mechanism(mech, 0, 1, n_jobs=2, **kw)) == ref


@pytest.mark.skipif(not HAS_DASK, reason="dask.distributed not installed")
def test_dask_backend_bit_identical():
    from dask.distributed import Client, LocalCluster

    mech = LaplaceMechanism(1.0)
    ref = run_trials(mech, 0.0, 1.0, 4_000, seed=3, chunk_size=500)
    ref_audit = _result_fields(audit_mechanism(mech, 0.0, 1.0, epsilon=1.0, trials=4_000, seed=3, chunk_size=500))
    # Threads-only cluster on loopback: starts in a few seconds, no network beyond 127.0.0.1.
    with LocalCluster(n_workers=2, processes=False, dashboard_address=None, host="127.0.0.1",
                      protocol="tcp://") as cluster, Client(cluster):
        with joblib.parallel_config(backend="dask"):
            out = run_trials(mech, 0.0, 1.0, 4_000, seed=3, n_jobs=2, chunk_size=500)
            res = _result_fields(
                audit_mechanism(mech, 0.0, 1.0, epsilon=1.0, trials=4_000, seed=3, n_jobs=2, chunk_size=500)
            )
    assert np.array_equal(out.out0, ref.out0) and np.array_equal(out.out1, ref.out1)
    assert res == ref_audit


def test_batched_and_single_call_paths_agree_in_distribution():
    # sample_mechanism prefers ``sample``; a callable-only wrapper of the same mechanism
    # must give the same output law. Two-sample KS test at level 1e-3 (false-failure
    # rate 1e-3), 4000 draws per path, fixed seeds.
    mech = LaplaceMechanism(1.0)
    batched = sample_mechanism(mech, 0.0, np.random.default_rng(1), 4_000)
    single = sample_mechanism(lambda d, rng: mech(d, rng), 0.0, np.random.default_rng(2), 4_000)
    assert batched.shape == single.shape == (4_000,)
    assert stats.ks_2samp(batched, single).pvalue > 1e-3


# --------------------------------------------------------------------- errors


def test_mechanism_that_raises_names_trials_and_seed():
    def bad(data, rng):
        raise ZeroDivisionError("boom")

    with pytest.raises(MechanismError, match=r"ZeroDivisionError: boom on d0 in trials 0\.\.99 \(seed=17"):
        run_trials(bad, 0.0, 1.0, 100, seed=17)


def test_mechanism_that_raises_in_a_worker_keeps_the_error_type():
    def bad(data, rng):
        raise ValueError("nope")

    with pytest.raises(MechanismError, match=r"seed=2"):
        run_trials(bad, 0.0, 1.0, 100, seed=2, n_jobs=2, chunk_size=50)


def test_mechanism_returning_nan_names_side_trial_and_seed():
    class NanOnD1:
        def sample(self, data, rng, size):
            out = rng.normal(size=size)
            if data == 1:
                out[37] = np.nan
            return out

    with pytest.raises(MechanismError, match=r"non-finite output on d1 at trial 37 \(seed=8"):
        run_trials(NanOnD1(), 0, 1, 100, seed=8)
    # Second chunk: trial index counts from the start of the run (chunk 1 * 40 + 37 = 77
    # would need chunk 0 clean, so put the NaN only where the batch is the last one, size 20).

    class NanInShortChunk:
        def sample(self, data, rng, size):
            out = rng.normal(size=(size, 2))
            if size == 20:
                out[3, 1] = np.inf
            return out

    with pytest.raises(MechanismError, match=r"on d0 at trial 83 \(seed=8, chunk 2"):
        run_trials(NanInShortChunk(), 0, 1, 100, seed=8, chunk_size=40)  # chunks 40, 40, 20: 80 + 3


def test_callable_returning_nan_is_caught():
    with pytest.raises(MechanismError, match=r"trial 0 \(seed=0"):
        run_trials(lambda d, rng: float("nan"), 0, 1, 10)


def test_sample_with_wrong_batch_shape():
    class Short:
        def sample(self, data, rng, size):
            return np.zeros(size - 1)

    with pytest.raises(MechanismError, match="stacked on axis 0"):
        run_trials(Short(), 0, 1, 10)


def test_not_a_mechanism():
    with pytest.raises(TypeError, match="mechanism must be callable"):
        run_trials(42, 0, 1, 10)


@pytest.mark.parametrize(
    "kwargs, exc, pattern",
    [
        (dict(trials=0), ValueError, r"trials must be an integer in \[1, inf\]"),
        (dict(trials=-3), ValueError, "trials"),
        (dict(trials=2.5), TypeError, "trials must be an integer"),
        (dict(trials=10, seed=-1), ValueError, r"seed must be an integer in \[0, inf\]"),
        (dict(trials=10, chunk_size=0), ValueError, "chunk_size"),
    ],
)
def test_run_trials_bad_arguments(kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        run_trials(LaplaceMechanism(1.0), 0.0, 1.0, **kwargs)


def test_map_chunks_bad_first_chunk():
    with pytest.raises(ValueError, match="first_chunk"):
        map_chunks(_uniform_chunk, 10, chunk_size=5, first_chunk=3)
