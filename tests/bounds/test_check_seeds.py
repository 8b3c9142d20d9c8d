"""The seeds of the bound checks and of their mutant runs (privbound.bounds.checks): run seed 0 repeats each
check's stable seed, another run seed gives every check another seed, a mutant runs its check at the check's
seed of the run, and finished checks are cached per run seed. Deterministic: no test here draws at random
except through a fixed seed.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from privbound import bounds
from privbound.audit.cache import ResultCache
from privbound.bounds import checks as C
from privbound.bounds.registry import Check, Claim, ClaimKind, Mutant, register, unregister

# Seeds the checks ran with before a run seed reached them (CRC-32 of "<claim id>/<check>", 31 bits), as recorded
# from that code: a run at seed 0 must use exactly these.
OLD_STABLE_SEEDS = {
    ("agnostic-halfspaces/fact-b.6", "quadrature"): 231344851,
    ("decision-lists-winnow/lemma-3", "exact-dp"): 714562267,
    ("decision-lists-winnow/lemma-3", "exact-utility"): 711303595,
    ("decision-lists-winnow/lemma-3", "printed-sign-utility"): 896296306,
    ("decision-lists-winnow/theorem-2", "exponents"): 1295837607,
    ("robust-halfspaces/lemma-21", "dp-accounting"): 241933766,
    ("robust-halfspaces/theorem-2", "packing-em-exact"): 1750932981,
}

_ALL_CHECKS = [(c.id, k.name) for c in bounds.claims() for k in c.checks]


def test_seed_0_gives_every_check_its_old_stable_seed():
    for (cid, name), seed in OLD_STABLE_SEEDS.items():
        assert C.check_seed(cid, name) == C.check_seed(cid, name, 0) == seed, (cid, name)
    for cid, name in _ALL_CHECKS:
        assert C.check_seed(cid, name, 0) == zlib.crc32(f"{cid}/{name}".encode()) & 0x7FFFFFFF, (cid, name)
    # ... and the runner uses them: run_checks (run seed 0 by default) and bounds.check record them
    results = bounds.run_checks(["decision-lists-winnow/lemma-3"], profile="smoke")
    assert {(r.claim_id, r.check): r.seed for r in results} == {
        k: v for k, v in OLD_STABLE_SEEDS.items() if k[0] == "decision-lists-winnow/lemma-3"}
    assert bounds.check("robust-halfspaces/lemma-21", profile="smoke").seed == 241933766


def test_two_run_seeds_give_every_check_other_seeds():
    seeds = np.array([[C.check_seed(cid, name, s) for s in (0, 1, 2, 99_999)] for cid, name in _ALL_CHECKS])
    assert seeds.min() >= 0 and seeds.max() < 2**31
    for a in range(seeds.shape[1]):
        for b in range(a + 1, seeds.shape[1]):
            assert np.all(seeds[:, a] != seeds[:, b]), (a, b)
    results = {s: bounds.run_checks(["decision-lists-winnow/lemma-3"], profile="smoke", seed=s) for s in (1, 2)}
    for s, rs in results.items():
        assert [r.seed for r in rs] == [C.check_seed(r.claim_id, r.check, s) for r in rs]
    assert all(a.seed != b.seed for a, b in zip(results[1], results[2]))


def test_run_seeds_keep_the_seed_streams_of_a_check_apart():
    # A check seeds its i-th stream with seed + i (i < 300): two run seeds up to 100,000 must move a check's seed
    # by more than that (the documented least distance, 9,056, modulo 2^31).
    s = np.arange(1, 100_001, dtype=np.int64)
    moved = np.array([C.derived_seed(0, int(k)) for k in s])
    assert np.minimum(moved, 2**31 - moved).min() == 9056
    assert C.derived_seed(12345, 0) == 12345 and C.derived_seed(2**31 - 1, 1) == (2**31 - 1 + 1_327_217_885) % 2**31


# ------------------------------------------------------------------ a check that records the seed it sees

_SEEN: list[tuple[int, int, float]] = []
_GUARDED = {"value": 0.5}


def _recording_check(ctx):
    _SEEN.append((ctx.seed, ctx.run_seed, float(ctx.rng.random())))
    return C.inequality(_GUARDED["value"], 1.0)


@pytest.fixture
def recording_claim():
    from unittest import mock

    cid = "decision-lists-winnow/fact-seeds"
    tripled = Mutant("tripled", "the value tripled", lambda: mock.patch.dict(_GUARDED, {"value": 1.5}))
    register(Claim(id=cid, statement="fixture", latex="", kind=ClaimKind.STRUCTURAL_IDENTITY, source="test fixture",
                   checks=(Check("records", "deterministic", _recording_check),)),
             mutants={("fact-seeds", "records"): (tripled,)})
    _SEEN.clear()
    yield cid
    unregister(cid)
    _SEEN.clear()


def test_a_check_sees_its_seed_of_the_run(recording_claim):
    (r,) = bounds.run_checks([recording_claim], profile="smoke", seed=7)
    seed = C.check_seed(recording_claim, "records", 7)
    assert r.seed == seed and _SEEN == [(seed, 7, float(np.random.default_rng(seed).random()))]


def test_a_mutant_runs_its_check_at_the_checks_seed_of_the_run(recording_claim):
    for s in (0, 5):
        _SEEN.clear()
        (row,) = bounds.run_mutants([recording_claim], seed=s)
        seed = C.check_seed(recording_claim, "records", s)
        assert row.detected and row.seed == seed and _SEEN[0][:2] == (seed, s)
        (r,) = bounds.run_checks([recording_claim], profile="smoke", seed=s)
        assert r.seed == seed and _SEEN[1] == _SEEN[0]  # the mutant changed only the value, not the draws


def test_finished_checks_and_mutant_runs_are_cached_per_run_seed(recording_claim, tmp_path):
    cache = ResultCache(tmp_path)
    first = bounds.run_checks([recording_claim], profile="smoke", seed=1, cache=cache)
    other = bounds.run_checks([recording_claim], profile="smoke", seed=2, cache=cache)
    again = bounds.run_checks([recording_claim], profile="smoke", seed=1, cache=cache)
    assert len(_SEEN) == 2  # seed 2 ran afresh; the rerun at seed 1 came from the cache
    assert [r.seed for r in first + other + again] == [C.check_seed(recording_claim, "records", s) for s in (1, 2, 1)]
    rows = [bounds.run_mutants([recording_claim], seed=s, cache=cache)[0] for s in (1, 2, 1)]
    assert len(_SEEN) == 4
    assert [r.seed for r in rows] == [C.check_seed(recording_claim, "records", s) for s in (1, 2, 1)]


def test_shared_simulations_move_with_the_run_seed(check_context):
    assert check_context(11).shared_seed(424242) == 424242
    moved = [check_context(11, run_seed=s).shared_seed(424242) for s in (1, 2)]
    assert moved == [C.derived_seed(424242, s) for s in (1, 2)] and len(set(moved + [424242])) == 3


def test_bad_run_seeds_are_refused_with_the_argument_named():
    with pytest.raises(ValueError, match=r"^seed must be an integer in \[0, inf\], got -1"):
        bounds.run_checks(["robust-halfspaces/lemma-21"], profile="smoke", seed=-1)
    with pytest.raises(ValueError, match=r"^seed must be an integer in \[0, inf\], got -3"):
        bounds.run_mutants(["robust-halfspaces/lemma-21"], seed=-3)
    with pytest.raises(TypeError, match="^run_seed must be an integer"):
        C.check_seed("robust-halfspaces/lemma-21", "dp-accounting", 1.5)
