"""Interrupted runs resume from their cache and lose nothing (audit/cache.py, reports/nightly.py)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from privbound.audit.cache import ChunkCache, ResultCache
from privbound.audit.engine import run_trials


class _Interruptible:
    """Laplace noise; raises KeyboardInterrupt on the ``stop_at``-th batch (like Ctrl-C)."""

    def __init__(self, stop_at=None):
        self.stop_at = stop_at
        self.calls = 0

    def sample(self, data, rng, size):
        self.calls += 1
        if self.stop_at is not None and self.calls == self.stop_at:
            raise KeyboardInterrupt
        return data + rng.laplace(size=size)


def test_interrupted_trials_resume_bit_identically(tmp_path):
    full = run_trials(_Interruptible(), 0.0, 1.0, 23, seed=3, chunk_size=5)
    cache = ChunkCache(tmp_path, "ns")
    with pytest.raises(KeyboardInterrupt):
        # 4 calls of the seeding probe (16 trials of chunk 0, twice, both sides), then 2 chunks done
        run_trials(_Interruptible(stop_at=10), 0.0, 1.0, 23, seed=3, chunk_size=5, cache=cache)
    again = ChunkCache(tmp_path, "ns")
    mech = _Interruptible()
    resumed = run_trials(mech, 0.0, 1.0, 23, seed=3, chunk_size=5, cache=again)
    assert again.hits == 2 and mech.calls == 2 * 3  # only the 3 missing chunks were sampled (no probe: chunk 0 cached)
    np.testing.assert_array_equal(full.out0, resumed.out0)
    np.testing.assert_array_equal(full.out1, resumed.out1)


def test_corrupt_and_partial_chunks_are_recomputed(tmp_path):
    cache = ChunkCache(tmp_path, "ns")
    ref = run_trials(_Interruptible(), 0.0, 1.0, 15, seed=1, chunk_size=5, cache=cache)
    files = sorted(cache.dir.glob("chunk-*.npz"))
    assert len(files) == 3
    with np.load(files[0]) as z:  # a valid file whose data no longer match the stored digest
        payload = {k: z[k] for k in z.files}
    payload["a0"] = payload["a0"] + 1e-12
    np.savez(files[0], **payload)
    files[1].write_bytes(files[1].read_bytes()[:40])  # truncated, as by a crash mid-write
    again = ChunkCache(tmp_path, "ns")
    mech = _Interruptible()
    out = run_trials(mech, 0.0, 1.0, 15, seed=1, chunk_size=5, cache=again)
    assert again.corrupt == 2 and again.hits == 1 and mech.calls == 4 + 4  # the seeding probe, then 2 chunks
    np.testing.assert_array_equal(ref.out0, out.out0)
    np.testing.assert_array_equal(ref.out1, out.out1)


def test_result_cache_detects_tampering(tmp_path):
    rc = ResultCache(tmp_path)
    rc.store("k", {"a": 1.5})
    assert rc.load("k") == {"a": 1.5}
    path = tmp_path / "k.json"
    path.write_text(path.read_text().replace("1.5", "2.5"))
    assert rc.load("k") is None and not path.exists()


_RUN = textwrap.dedent("""
    import sys
    from privbound.reports.nightly import run_nightly
    run_nightly("smoke", sys.argv[1], target_names=["laplace-eps1", "svt-no-cutoff", "greedy-cover-canary",
                "dp-winnow-replay", "batch-perceptron-rdp"],
                claim_ids=["decision-lists-winnow/lemma-3", "robust-halfspaces/lemma-21", "decision-lists-winnow/lemma-10"],
                progress=False)
""")


def _stable(results):
    def strip(d):
        return {k: v for k, v in d.items() if k not in ("wall_seconds", "details")}

    return json.dumps({
        "audits": [{**a, "result": strip(a["result"]) if a["result"] else None} for a in results["audits"]],
        "checks": [strip(c) for c in results["checks"]],
        "counts": results["counts"],
    }, sort_keys=True)


def test_nightly_killed_at_a_random_point_and_rerun_gives_the_same_results(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(_RUN)
    # Uninterrupted reference, in its own folder (its own cache).
    ref_out = tmp_path / "ref" / "day"
    t0 = time.perf_counter()
    subprocess.run([sys.executable, str(script), str(ref_out)], check=True, timeout=600)
    elapsed = time.perf_counter() - t0
    # Killed (SIGKILL: no cleanup at all) at a random point of a run, then rerun.
    out = tmp_path / "killed" / "day"
    delay = random.Random(20261130).uniform(0.3, 0.9) * elapsed
    proc = subprocess.Popen([sys.executable, str(script), str(out)])
    time.sleep(delay)
    proc.kill()
    proc.wait()
    subprocess.run([sys.executable, str(script), str(out)], check=True, timeout=600)
    ref = json.loads((ref_out / "results.json").read_text())
    got = json.loads((out / "results.json").read_text())
    assert _stable(got) == _stable(ref)
    assert not list(out.parent.glob("**/*.tmp"))  # no half-written file survives


def test_sweep_removes_only_the_temporaries_of_dead_writers(tmp_path):
    from privbound.audit.cache import stage_bytes, sweep_stale_temporaries

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    stale = tmp_path / "sub" / f".chunk.json.abc123.{int(dead.stdout)}.tmp"
    stale.parent.mkdir()
    stale.write_text("half")
    live = stage_bytes(tmp_path / "sub" / "result.json", lambda fh: fh.write(b"{}"))  # this process: alive
    assert live.name.endswith(f".{os.getpid()}.tmp")
    assert sweep_stale_temporaries(tmp_path) == 1
    assert not stale.exists() and live.exists()
