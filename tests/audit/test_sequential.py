"""The sequential audit (trials="auto"): the fixed-trials audit at the trials it spends, a bound that keeps its
confidence whatever the stopping rule, and stopping reasons that say what they are."""

from __future__ import annotations

import math
import os
import time
from dataclasses import replace
from types import SimpleNamespace

import joblib
import numpy as np
import pytest
from scipy import stats

from privbound.audit import audit_mechanism, sequential
from privbound.audit.engine import run_trials, start_workers
from privbound.audit.estimators import BlackBox, WhiteBox
from privbound.audit.sequential import (LATER_EVALUATIONS_SHARE, MAX_LOOK_SHARE, MIN_TRIALS, OPTIMISM, Look,
                                        _chunk_rounds, _first_stage_cut, _MemoryChunks, _stop_reason, budget_choice_z,
                                        budget_look_trials, evaluation_confidence, look_at_selection, look_prefix,
                                        look_share, next_stage_seconds, sequential_audit, stage_schedule)
from privbound.audit.statistics import Split, joint_optimism, optimistic_rates_bound
from privbound.learners.mechanisms import (DiscreteLaplaceMechanism, GaussianMechanism, LaplaceMechanism,
                                           RandomizedResponse)

RUNS = 300
# P(Binomial(300, 0.05) > 27) < 1e-3: a sound bound fails this test with probability below 1e-3.
MAX_MISSES = 27


# The confidence of a sequential audit's first evaluation at the default 0.95 (alpha spending over evaluations).
FIRST_EVALUATION = evaluation_confidence(0.95, 1)
FIELDS = ("epsilon_lower_bound", "event", "attack", "tpr", "fpr", "p_value", "violation", "n_evaluation")


def test_auto_is_the_fixed_trials_audit_at_the_trials_it_spent_and_the_share_its_last_look_read():
    auto = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials="auto", seed=3, float_audit=False)
    prefix = auto.details["sequential"]["selection_trials"]
    assert auto.trials < 2_000_000 and auto.stop_reason
    assert prefix == look_prefix(0.2, auto.trials, 2_000_000) > 0.2 * auto.trials
    # (at the confidence of its one evaluation: no prediction went unconfirmed)
    assert auto.details["sequential"]["unconfirmed_evaluations"] == 0
    fixed = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials=auto.trials, seed=3,
                            estimator=BlackBox(strategy=Split.after(prefix, auto.trials)), float_audit=False,
                            confidence=FIRST_EVALUATION)
    for field in FIELDS:
        assert getattr(auto, field) == getattr(fixed, field), field
    # the same curve, stated at the audit's confidence (which evaluation is reported is the rule's choice)
    assert auto.tradeoff == {**fixed.tradeoff, "confidence": 0.95} and fixed.tradeoff["confidence"] == FIRST_EVALUATION


def test_an_audit_run_to_its_budget_is_the_default_fixed_trials_audit_at_the_budget():
    # The looks read at most the budget's own selection part, so the budget's estimate needs no larger one.
    kw = dict(epsilon=0.1, seed=2, float_audit=False)
    # (tolerance 0: its exact epsilon is the claim, so no look can rule out every overspend)
    auto = audit_mechanism(LaplaceMechanism(0.1), 0.0, 1.0, trials="auto", max_trials=80_000, tolerance=0.0, **kw)
    fixed = audit_mechanism(LaplaceMechanism(0.1), 0.0, 1.0, trials=80_000, confidence=FIRST_EVALUATION, **kw)
    looks = auto.details["sequential"]["looks"]
    assert auto.stop_reason.startswith("trial budget reached") and len(looks) >= 4
    assert max(look["selection_trials"] for look in looks) == 16_000 == auto.trials - auto.n_evaluation
    # the share grew to the cap on the way, first reached at the stage added where a look first can read it
    first = next(look["trials"] for look in looks if look["selection_trials"] == 16_000)
    assert looks[0]["selection_trials"] < 16_000 and first == budget_look_trials(0.2, 80_000) == 50_000
    assert first in auto.details["sequential"]["schedule"] and first not in stage_schedule(80_000, growth=2 ** 0.5)
    for field in FIELDS:
        assert getattr(auto, field) == getattr(fixed, field), field


def test_each_evaluation_has_its_own_share_of_the_confidence():
    # At confidence 0.5 a correct mechanism at its exact epsilon (the discrete Laplace, 1-DP on 0 / 1) is often
    # predicted to violate and the prediction not confirmed; each evaluation is a test at its own level, so
    # without alpha spending the false flags add up (70 of these 100 audits flagged, against at most half).
    # P(Binomial(100, 0.5) > 62) = 0.006: a sound audit fails this test with probability below 0.006.
    flagged, evaluations = 0, 0
    for seed in range(100):
        res = audit_mechanism(DiscreteLaplaceMechanism(1.0), 0, 1, epsilon=1.0, trials="auto", max_trials=100_000,
                              confidence=0.5, seed=seed, float_audit=False)
        flagged += res.violation
        evaluations += res.details["sequential"]["unconfirmed_evaluations"]
        assert res.confidence == 0.5
    assert evaluations > 20  # the case this guards: predictions that the evaluation did not confirm
    assert flagged <= 62
    levels = [1.0 - evaluation_confidence(0.5, j) for j in range(1, 40)]
    assert levels[0] == pytest.approx(0.5 * (1.0 - LATER_EVALUATIONS_SHARE)) and sum(levels) == pytest.approx(0.5)


def test_an_audit_that_stopped_by_its_own_rule_has_the_power_of_its_budget():
    # A correct Gaussian stopped for futility at 40000 trials: against twice the claim it would have sampled on to
    # its budget, so the audit could have seen that overspend and holds; it was "inconclusive: try trials=80000".
    r = audit_mechanism(GaussianMechanism(0.3, 1e-5), 0.0, 1.0, epsilon=0.3, delta=1e-5, trials="auto", seed=2,
                        float_audit=False)
    assert r.trials < 100_000 and "out of reach" in r.stop_reason
    assert r.status == "holds" and r.power["at_budget"] and r.power["epsilon_certifiable"] > 0.3
    assert "certifiable at its trial budget (it stopped by its own rule)" in r.summary()
    # stopped by the budget itself: its power is that of the trials spent, and the knob to raise is max_trials
    small = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials="auto", max_trials=50,
                            float_audit=False)
    assert small.status == "inconclusive" and not small.power["at_budget"]
    assert small.summary().splitlines()[0].endswith(f"try max_trials={small.power['trials_needed']} or more")


def test_a_time_stop_right_after_an_unconfirmed_prediction_reports_that_evaluation():
    # max_seconds=1e-9 stops after the first stage (one chunk, so the clock cannot cut it) whatever the clock
    # reads; at confidence 0.5 seed 2 predicts a violation there that its evaluation does not confirm, so every
    # output has been read: the result is that evaluation, and no floating-point verdict is drawn from outputs the
    # rule read
    r = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials="auto", confidence=0.5,
                        max_seconds=1e-9, seed=2, chunk_size=10_000)
    seq = r.details["sequential"]
    assert r.stop_reason.startswith("time budget reached") and seq["unconfirmed_read"] == r.trials == 10_000
    assert r.epsilon_lower_bound == seq["looks"][0]["evaluated_bound"] and r.floating_point is None
    # ... at the first evaluation's level, which the details record (not the next evaluation's)
    assert seq["unconfirmed_evaluations"] == 1
    assert seq["evaluation_confidence"] == evaluation_confidence(r.confidence, 1)


def test_the_next_stage_is_timed_by_its_new_trials_and_its_look():
    # The first stage sampled 10000 new trials per side in 2 s and looked in 0.5 s; the second (to 15000) samples
    # 5000 new ones (the first 10000 are reused): 1 s, and a look on 1.5x the trials: 0.75 s.
    assert next_stage_seconds(2.0, 0.5, 0, 10_000, 15_000) == pytest.approx(1.75)
    assert next_stage_seconds(1.0, 0.0, 10_000, 15_000, 20_000) == pytest.approx(1.0)


def test_a_split_after_a_prefix_selects_exactly_that_prefix():
    rng = np.random.default_rng(0)
    for trials in rng.integers(10, 5_000_000, 2_000):
        prefix = int(rng.integers(1, trials))
        assert int(Split.after(prefix, int(trials)).fraction * trials) == prefix
    with pytest.raises(ValueError, match="prefix"):
        Split.after(10, 10)


def test_a_split_the_caller_chose_is_kept_at_every_stage():
    est = BlackBox(strategy=Split(0.2))
    auto = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials="auto", seed=3, estimator=est,
                           float_audit=False)
    fixed = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials=auto.trials, seed=3,
                            estimator=est, float_audit=False, confidence=FIRST_EVALUATION)
    assert auto.details["sequential"]["selection_share"] == 0.2 and len(auto.details["sequential"]["looks"]) >= 2
    assert all(look["selection_trials"] == int(0.2 * look["trials"]) for look in auto.details["sequential"]["looks"])
    for field in FIELDS:
        assert getattr(auto, field) == getattr(fixed, field), field


def test_the_look_share_starts_at_the_estimators_grows_and_stops_at_its_cap():
    assert look_share(0.2, 10_000, 10_000) == 0.2
    assert look_share(0.2, 80_000, 10_000) == pytest.approx(0.4)  # the cube root of 8
    assert look_share(0.2, 2_000_000, 10_000) == MAX_LOOK_SHARE
    assert look_share(0.7, 2_000_000, 10_000) == 0.7  # never below the estimator's own share
    schedule = stage_schedule(2_000_000, growth=2 ** 0.5)
    shares = [look_share(0.2, t) for t in schedule]
    prefixes = [look_prefix(0.2, t, 2_000_000) for t in schedule]
    assert shares == sorted(shares) and prefixes == sorted(prefixes)  # no look reads less than the last
    assert prefixes[-1] == 400_000 and prefixes.index(400_000) < len(prefixes) - 2  # capped at the budget's part
    with pytest.raises(ValueError, match="base"):
        look_share(1.0, 10_000)


def test_a_leak_is_flagged_early_and_a_correct_mechanism_stops_within_tolerance():
    bug = audit_mechanism(LaplaceMechanism(2.0), 0.0, 1.0, epsilon=1.0, trials="auto", seed=0)
    assert bug.violation and bug.trials == 10_000 and bug.stop_reason == "violation established"
    ok = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials="auto", seed=0)
    assert not ok.violation and ok.trials <= 320_000
    assert "no overspend above 10% visible to this attack" in ok.stop_reason
    assert "not a proof of privacy" in ok.stop_reason
    assert f"after {ok.trials} trials per dataset" in ok.summary()
    looks = ok.details["sequential"]["looks"]
    assert looks and looks[-1]["trials"] == ok.trials


def test_the_budget_and_the_clock_stop_it():
    r = audit_mechanism(LaplaceMechanism(0.1), 0.0, 1.0, epsilon=0.1, trials="auto", max_trials=40_000)
    assert r.trials == 40_000 and r.stop_reason.startswith("trial budget reached")
    r = audit_mechanism(LaplaceMechanism(0.1), 0.0, 1.0, epsilon=0.1, trials="auto", max_seconds=1e-6,
                        chunk_size=10_000)
    assert r.trials == 10_000 and r.stop_reason.startswith("time budget reached")


class _SlowLaplace:
    """Laplace noise of scale 1 whose every call takes at least ``per_call`` seconds plus ``per_output`` per output."""

    def __init__(self, per_output: float = 2e-4, per_call: float = 0.0):
        self.per_output, self.per_call = per_output, per_call

    def sample(self, data, rng, size):
        time.sleep(self.per_call + self.per_output * size)
        return data + rng.laplace(size=size)


def test_the_clock_stops_a_slow_first_stage_after_its_first_chunks():
    # The first stage (10000 trials per side in chunks of 500) sleeps at least 4 s; its second group (500 more
    # trials per side, 0.2 s at least; the first is not timed) predicts at least 4 s, more than 0.5: the audit stops
    # there, and its result is the fixed-trials audit of those 1000 trials at the level of its first evaluation
    kw = dict(epsilon=1.0, chunk_size=500, seed=3, float_audit=False)
    r = audit_mechanism(_SlowLaplace(), 0.0, 1.0, trials="auto", max_seconds=0.5, **kw)
    assert r.trials == 1_000 and r.stop_reason.startswith("time budget reached") and "first stage" in r.stop_reason
    assert "which would take about" in r.stop_reason
    seq = r.details["sequential"]
    assert not seq["stopped_by_rule"] and seq["looks"] == []
    assert seq["evaluation_confidence"] == evaluation_confidence(0.95, 1)
    fixed = audit_mechanism(_SlowLaplace(), 0.0, 1.0, trials=1_000, confidence=evaluation_confidence(0.95, 1), **kw)
    assert r.epsilon_lower_bound == fixed.epsilon_lower_bound


def test_the_first_stage_clock_waits_for_min_trials_and_times_no_fixed_costs():
    def cut(mechanism, max_seconds=1e-9, **kw):
        return _first_stage_cut(mechanism, 0.0, 1.0, 10_000, seed=0, memory=_MemoryChunks(),
                                start=time.perf_counter(), max_seconds=max_seconds, **kw)

    # 20 ms per output in chunks of 4: groups of 4, 8, 16 and 32 trials; the time is spent after the first, but
    # the first three are below MIN_TRIALS
    trials, outs, (spent, _) = cut(_SlowLaplace(2e-2), n_jobs=1, chunk_size=4)
    assert MIN_TRIALS == 20 and trials == len(outs.out0) == 32 and spent > 0
    # two workers (threads here): the first group (1000 trials, at least 0.2 s, with the workers' start-up) is not
    # timed, though its rate would predict 2 s; the second, at the same rate, is, and stops the stage
    with joblib.parallel_config(backend="threading"):
        trials, outs, (_, predicted) = cut(_SlowLaplace(), max_seconds=1.0, n_jobs=2, chunk_size=500)
    assert trials == len(outs.out0) == 2_000 and predicted > 1.0
    # the first group is not timed, but a budget it has already spent stops the stage after it: 2500 trials per
    # side take at least 1 s
    trials, _, (spent, predicted) = cut(_SlowLaplace(), max_seconds=0.1, n_jobs=1, chunk_size=2_500)
    assert trials == 2_500 and spent > 0.1 and predicted is None
    # a cost per call: the first group pays the mechanism's seeding check (four more calls); its rate would predict
    # the stage's 40 calls at 3.7 s, against 1.3 s (the later groups' rate, which is right)
    assert cut(_SlowLaplace(per_output=0.0, per_call=0.03), max_seconds=2.0, n_jobs=1, chunk_size=500)[2] is None


def test_the_first_stage_clock_does_not_stop_a_fast_mechanism_for_its_calls_fixed_costs():
    # 10000 trials of the Laplace mechanism in chunks of 5 take about half a second (20000, the whole audit, under
    # a second), but a group of 20 trials costs mostly a call's fixed cost: a rate per trial from it predicted more
    # than 2 s and stopped the audit at 20
    r = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials="auto", max_seconds=1.5, chunk_size=5,
                        max_trials=20_000, float_audit=False)
    assert r.trials >= 10_000 and "first stage" not in r.stop_reason


def test_a_first_stage_cut_short_by_its_groups_times_the_next_stage_from_its_start():
    # The stage's sampling time counts the groups sampled before it (reused chunks cost nothing): a 0.1 ms
    # mechanism in chunks of 500 samples 10000 trials per side in at least 2 s, so the second stage (5000 more)
    # is predicted at 1 s or more and a budget of 2.6 s cannot afford it (a loaded machine may cut the first stage
    # itself); with the first stage's time counted from its last group alone it was predicted at about 0.05 s and
    # the audit overran the budget into the second stage
    r = audit_mechanism(_SlowLaplace(1e-4), 0.0, 1.0, epsilon=1.0, trials="auto", max_seconds=2.6, chunk_size=500,
                        seed=3, float_audit=False)
    assert r.trials <= 10_000 and r.stop_reason.startswith("time budget reached (2.6 s")


class _FakeClock:
    """A clock that advances only while trials are sampled, by ``per_round`` seconds per round of new chunks (one
    per worker), and by ``start_up`` when the workers start (before the first call, or in it); and the sampling it
    times (run in this process). Installed in ``sequential`` by :meth:`install`, it makes the time rules'
    arithmetic exact."""

    def __init__(self, per_round: float, chunk_size: int, workers: int, start_up: float = 0.0):
        self.now, self.sampled, self.started = 0.0, 0, False
        self.per_round, self.chunk_size, self.workers, self.start_up = per_round, chunk_size, workers, start_up

    def perf_counter(self) -> float:
        return self.now

    def start_workers(self, *args, **kw) -> None:
        self.now += 0.0 if self.started else self.start_up
        self.started = True

    def run_trials(self, mechanism, d0, d1, trials, **kw):
        self.start_workers()  # the workers' start-up, paid by the first call unless they were started before it
        new = max(0, trials - self.sampled)
        self.sampled = max(self.sampled, trials)
        self.now += self.per_round * math.ceil(math.ceil(new / self.chunk_size) / self.workers)
        return run_trials(mechanism, d0, d1, trials, **{**kw, "n_jobs": 1})

    def install(self, monkeypatch) -> None:
        monkeypatch.setattr(sequential, "time", SimpleNamespace(perf_counter=self.perf_counter))
        monkeypatch.setattr(sequential, "run_trials", self.run_trials)
        monkeypatch.setattr(sequential, "start_workers", self.start_workers)


def test_the_first_stage_cut_on_a_fake_clock(monkeypatch):
    # 0.06 s per chunk of 500: groups of 500 (the first: not timed), 1000 (0.06 s, below MIN_GROUP_SECONDS: not
    # timed) and 2000 (0.12 s: 1.2e-4 s per trial), so 0.24 s spent and 0.24 + 8000 * 1.2e-4 = 1.2 s predicted,
    # above the 1 s budget
    _FakeClock(0.06, 500, 1).install(monkeypatch)
    trials, outs, cut = _first_stage_cut(LaplaceMechanism(1.0), 0.0, 1.0, 10_000, seed=0, n_jobs=1, chunk_size=500,
                                         memory=_MemoryChunks(), start=0.0, max_seconds=1.0)
    assert trials == len(outs.out0) == 2_000 and cut == pytest.approx((0.24, 1.2))


def test_the_first_stage_clock_stops_at_min_trials_exactly():
    # chunks of 5: groups of 5, 10 and 20 trials; the budget is spent at once, so the cut comes at MIN_TRIALS
    trials, _, cut = _first_stage_cut(LaplaceMechanism(1.0), 0.0, 1.0, 10_000, seed=0, n_jobs=1, chunk_size=5,
                                      memory=_MemoryChunks(), start=0.0, max_seconds=1e-9)
    assert MIN_TRIALS == 20 and trials == 20 and cut is not None


def test_chunk_rounds_count_rounds_of_one_chunk_per_worker():
    assert _chunk_rounds(2_500, 500, 2) == 3  # 5 chunks on 2 workers
    assert _chunk_rounds(1_001, 500, 1) == 3  # a last chunk of 1 trial
    assert _chunk_rounds(1_000, 500, 1) == 2


def test_the_next_stage_is_predicted_from_rounds_of_chunks(monkeypatch):
    # 1 s per round of chunks of 2000 on two workers; every stage goes on. The first stage (10000) is sampled in
    # groups of 4000 and 8000, then its own call samples one chunk (one round) of the stage's five (three rounds):
    # 3 s. The second stage (to 16000) samples three chunks in two rounds: 2 s, not rescaled. Looks take no time.
    _FakeClock(1.0, 2_000, 2).install(monkeypatch)
    monkeypatch.setattr(sequential, "_stop_reason", lambda *a, **kw: None)
    calls = []
    predict = sequential.next_stage_seconds
    monkeypatch.setattr(sequential, "next_stage_seconds", lambda *a: calls.append(a) or predict(*a))
    sequential_audit(LaplaceMechanism(1.0), 0.0, 1.0, BlackBox(), epsilon=1.0, delta=0.0, confidence=0.95, seed=0,
                     n_jobs=2, max_trials=40_000, max_seconds=1e6, first_trials=10_000, chunk_size=2_000)
    assert calls[:2] == [(3.0, 0.0, 0, 10_000, 16_000), (2.0, 0.0, 10_000, 16_000, 20_000)]


def test_the_first_stage_is_predicted_to_its_end_rounded_to_chunks(monkeypatch):
    # a first stage of 10000 trials in chunks of 3000 ends at 12000: groups of 3000 (not timed) and 6000 (0.3 s),
    # so 0.6 + 6000 * 1e-4 = 1.2 s predicted, above the 1.1 s budget (to 10000 it would be 1.0)
    _FakeClock(0.3, 3_000, 1).install(monkeypatch)
    r, _ = sequential_audit(LaplaceMechanism(1.0), 0.0, 1.0, BlackBox(), epsilon=1.0, delta=0.0, confidence=0.95,
                            seed=0, n_jobs=1, max_trials=40_000, max_seconds=1.1, first_trials=10_000,
                            chunk_size=3_000)
    assert r.trials == 6_000 and "about 1.2 s in all" in r.stop_reason


def _first_call_cost(seconds: float, marks, fails_on_one_output: bool = False) -> object:
    """Laplace noise of scale 1 whose first call in each worker process (not this one) takes ``seconds``, as if its
    workers imported something slow; the directory ``marks`` records the processes that paid it. With
    ``fails_on_one_output`` it raises when asked for one output (as a mechanism squeezing its outputs would). The
    class is made here so that loky's workers receive it by value: they cannot import the tests."""
    parent = os.getpid()

    class FirstCallCost:
        def sample(self, data, rng, size):
            mark = os.path.join(marks, str(os.getpid()))
            if os.getpid() != parent and not os.path.exists(mark):
                open(mark, "w").close()
                time.sleep(seconds)
            if fails_on_one_output and size == 1:
                raise ValueError("one output")
            return data + rng.laplace(size=size)

    return FirstCallCost()


@pytest.mark.parametrize("fails_on_one_output", [False, True])
def test_start_workers_pays_each_workers_first_call(tmp_path, fails_on_one_output):
    # Two loky workers each pay 3 s on their first call: a run after start_workers does not, also when the call
    # that started them raised (a task that fails in joblib shuts the pool down, and a new one pays again)
    mechanism = _first_call_cost(3.0, tmp_path, fails_on_one_output)
    start_workers(mechanism, 0.0, seed=0, n_jobs=2)
    began = time.perf_counter()
    run_trials(mechanism, 0.0, 1.0, 400, seed=0, n_jobs=2, chunk_size=100)
    assert time.perf_counter() - began < 3.0


def test_a_first_stage_of_one_group_starts_the_workers_before_it(monkeypatch):
    started = []
    monkeypatch.setattr(sequential, "start_workers", lambda *a, **kw: started.append(kw["n_jobs"]))
    for chunk_size, n_jobs in [(5_000, 2), (10_000, 1), (500, 2), (5_000, 1)]:
        _first_stage_cut(LaplaceMechanism(1.0), 0.0, 1.0, 10_000, seed=0, n_jobs=n_jobs, chunk_size=chunk_size,
                         memory=_MemoryChunks(), start=time.perf_counter(), max_seconds=60.0)
    assert started == [2, 1]  # one group of one chunk per worker is the stage; smaller chunks leave groups before it


def test_the_workers_start_up_does_not_time_the_next_stage(monkeypatch):
    # The workers take 8 s to start and a round of chunks 0.5 s; the first stage (two chunks, two workers) is one
    # round. Started before it, the next stage is predicted from 0.5 s and the audit goes on within 11.5 s; timed
    # with their start-up, it was predicted from 8.5 s and stopped at 8.5 s spent
    _FakeClock(0.5, 5_000, 2, start_up=8.0).install(monkeypatch)
    calls = []
    predict = sequential.next_stage_seconds
    monkeypatch.setattr(sequential, "next_stage_seconds", lambda *a: calls.append(a) or predict(*a))
    r, _ = sequential_audit(LaplaceMechanism(1.0), 0.0, 1.0, BlackBox(), epsilon=1.0, delta=0.0, confidence=0.95,
                            seed=0, n_jobs=2, max_trials=40_000, max_seconds=11.5)
    assert calls[0][:4] == (0.5, 0.0, 0, 10_000) and r.trials > 10_000


def test_tolerance_zero_keeps_looking_longer():
    kw = dict(epsilon=1.0, trials="auto", seed=1, max_trials=160_000)
    loose = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, tolerance=0.5, **kw)
    strict = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, tolerance=0.0, **kw)
    assert loose.trials < strict.trials


def test_schedule_doubles_on_chunk_boundaries_and_ends_at_the_budget():
    assert stage_schedule(2_000_000) == [10_000 * 2 ** k for k in range(8)] + [2_000_000]
    assert stage_schedule(12_345, 10_000, 5_000) == [10_000, 12_345]
    assert stage_schedule(50, 10, 7) == [14, 21, 42, 50]  # 10, 20, 40 rounded up to multiples of 7
    assert stage_schedule(40_000, 10_000, 5_000, growth=2 ** 0.5) == [10_000, 15_000, 20_000, 30_000, 40_000]
    with pytest.raises(ValueError, match="growth"):
        stage_schedule(40_000, growth=1.0)


@pytest.mark.parametrize("base", [0.05, 0.2, 0.3, 0.45])
def test_the_budget_look_is_the_fewest_chunks_whose_look_reads_the_budgets_selection_part(base):
    t = budget_look_trials(base, 2_000_000, chunk_size=5_000)
    target = int(base * 2_000_000)
    assert t % 5_000 == 0 and look_prefix(base, t, 2_000_000) == target > look_prefix(base, t - 5_000, 2_000_000)


def test_auto_audits_grow_their_stages_by_the_module_factor():
    r = audit_mechanism(LaplaceMechanism(1.0), 0.0, 0.0, epsilon=1.0, trials="auto", max_trials=40_000, seed=0)
    from privbound.audit.sequential import STAGE_GROWTH

    assert r.details["sequential"]["schedule"] == stage_schedule(40_000, growth=STAGE_GROWTH)
    assert [look["trials"] for look in r.details["sequential"]["looks"]] == r.details["sequential"]["schedule"][:-1]


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="trials"):
        audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials="many")
    with pytest.raises(ValueError, match="tolerance"):
        audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials="auto", tolerance=-0.1)
    with pytest.raises(ValueError, match="max_seconds"):
        audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials="auto", max_seconds=0)
    with pytest.raises(ValueError, match="max_trials"):
        audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials="auto", max_trials=5)
    # the sequential options with a fixed trial count would be silently ignored: refused, naming them
    with pytest.raises(ValueError, match="max_trials, tolerance only apply to trials='auto', got trials=1000"):
        audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials=1000, max_trials=5000, tolerance=0.2)
    with pytest.raises(ValueError, match="selection part"):
        audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials="auto",
                        estimator=WhiteBox(lambda o: np.abs(o - 1.0) - np.abs(o)))


def _soundness_misses(runs: int, mechanism=LaplaceMechanism(1.0), d0=0.0, d1=1.0) -> int:
    """Audits of ``mechanism`` (epsilon 1 exactly on ``(d0, d1)``) claimed at its true epsilon 1 that stop on the
    rule (small stages, so that the looks and the stops vary); a miss is a bound above the true epsilon."""
    misses = 0
    for seed in range(runs):
        r, _ = sequential_audit(mechanism, d0, d1, BlackBox(), epsilon=1.0, delta=0.0,
                                confidence=0.95, seed=seed, max_trials=32_000, first_trials=2_000,
                                chunk_size=1_000, tolerance=0.0)
        misses += r.epsilon_lower_bound > 1.0
    return misses


def test_sequential_bound_soundness_20_runs():
    # 20 runs: at most 5 misses (P(Binomial(20, 0.05) > 5) < 3e-3)
    assert _soundness_misses(20) <= 5


@pytest.mark.slow
def test_sequential_bound_soundness_300_runs():
    misses = _soundness_misses(RUNS)
    assert misses <= MAX_MISSES, f"the sequential bound exceeded the true epsilon in {misses} of {RUNS} runs"


@pytest.mark.slow
def test_sequential_bound_soundness_300_runs_where_the_bound_is_nearly_exact():
    # On Laplace the one-event bound has slack at the true epsilon (about 1% misses at 5%), so a stopping rule
    # that reads the evaluation part can pass the test above. Randomized response over 100 values on the pair
    # (0, 1) puts epsilon exactly on two outputs of probabilities 0.027 and 0.0098, where the conditional test is
    # nearly exact: the sequential audit misses at about its stated rate here (68 of 1500 runs), so a rule that
    # samples to a foregone conclusion fails this test.
    misses = _soundness_misses(RUNS, RandomizedResponse(1.0, k=100), 0, 1)
    assert misses <= MAX_MISSES, f"the sequential bound exceeded the true epsilon in {misses} of {RUNS} runs"


@pytest.mark.parametrize("p_top, p_bottom, n, delta", [(0.02, 0.02 / np.e, 100_000, 0.0),
                                                     (1e-4, 1e-4 / np.e, 400_000, 0.0),
                                                     (1.1e-4, 1e-4 / np.e ** 0.8, 400_000, 1e-5),
                                                     (0.3, 0.3 / np.e ** 0.1, 50_000, 0.0)])
def test_the_reachs_optimism_falls_short_of_the_truth_at_one_normal_tails_rate(p_top, p_bottom, n, delta):
    # The futility rule stops wrongly when an event's true rates would certify more at the budget than its rates
    # moved optimistically do. Moved jointly by OPTIMISM standard errors of the log ratio, that happens at the rate
    # Phi(-OPTIMISM) (2.3%) the module states; the rectangle's corner (each rate moved by OPTIMISM standard errors)
    # falls short about 0.3% of the time here, spending trials on looks that could have stopped. 40000 draws: the
    # Monte Carlo standard error is 0.00075, the allowance 0.005 about 6.7 of them.
    rng = np.random.default_rng(0)
    k_top, k_bottom = rng.binomial(n, p_top, 40_000), rng.binomial(n, p_bottom, 40_000)
    kw = dict(delta=delta, confidence=0.95)
    truth = optimistic_rates_bound(p_top * n, n, p_bottom * n, n, 1_600_000, z=0.0, **kw)
    optimistic = optimistic_rates_bound(k_top, n, k_bottom, n, 1_600_000, z=OPTIMISM, **kw)
    assert abs(np.mean(optimistic < truth) - stats.norm.cdf(-OPTIMISM)) < 0.005


def test_joint_optimism_shares_z_by_each_rates_move_and_gives_it_all_to_an_unbounded_one():
    z_top, z_bottom = joint_optimism(np.array([400, 40, 40, 0]), 400_000, np.array([40, 40, 0, 0]), 400_000,
                                     delta=0.0, z=2.0)
    np.testing.assert_allclose(z_top[:2] ** 2 + z_bottom[:2] ** 2, 4.0)
    assert z_top[0] < z_bottom[0]  # the rarer bottom count moves the ratio more: it takes more of z
    assert abs(z_top[1] - z_bottom[1]) < 0.05  # equal counts: about z / sqrt(2) each
    assert (z_top[2], z_bottom[2]) == (0.0, 2.0)  # an empty bottom count takes all of z
    assert (z_top[3], z_bottom[3]) == (2.0, 2.0)  # both unbounded: the corner
    with pytest.raises(ValueError, match="z must be"):
        joint_optimism(1, 10, 1, 10, delta=0.0, z=-1.0)


def test_a_look_reads_only_the_selection_prefix():
    rng = np.random.default_rng(0)
    sel0, sel1 = rng.laplace(0, 1, 2_000), rng.laplace(1, 1, 2_000)
    look = look_at_selection(sel0, sel1, BlackBox().candidates(sel0), n_eval=8_000, n_eval_budget=1_600_000,
                             n_select_budget=400_000, delta=0.0, confidence=0.95, trials=10_000, resolution=0.1)
    assert look.selection_trials == 2_000 and look.budget_predicted > look.predicted
    # 2000 outputs do not resolve the tail event the budget would choose: no stop on them
    assert look.predicted < 1.0 and not look.budget_event_resolved and look.reach > 1.1
    assert _stop_reason(look, 1.0, 0.1, 2_000_000) is None


def test_every_candidates_budget_event_is_judged_not_only_the_top_ones():
    # Two scores of 2-d outputs: a wide Laplace shift of 0.3 (the top prediction at the budget, its event
    # resolved: out of reach alone) and a rare output seen 25 times against 6 on the prefix (a pessimistic
    # prediction below the wide one's, but its event could certify about 2.4 at the budget). Judging only the
    # top attack's event would stop "out of reach" here (as it stopped sparse-vector leaks of 1.5x).
    from privbound.audit.attacks.library import ScoreAttack

    rng = np.random.default_rng(0)
    n = 40_000

    def draw(shift, ones):
        rare = np.zeros(n)
        rare[:ones] = 1.0
        return np.c_[rng.laplace(shift, 1.0, n), rng.permutation(rare)]

    sel0, sel1 = draw(0.0, 6), draw(0.3, 25)
    wide, rare = ScoreAttack(lambda o: o[:, 0]), ScoreAttack(lambda o: o[:, 1])
    kw = dict(n_eval=4 * n, n_eval_budget=1_600_000, n_select_budget=400_000, delta=0.0, confidence=0.95,
              trials=5 * n, resolution=0.1)
    alone = look_at_selection(sel0, sel1, [wide], **kw)
    assert alone.budget_event_resolved and alone.reach < 0.5
    assert _stop_reason(alone, 1.0, 0.1, 2_000_000).startswith("claim predicted out of reach")
    both = look_at_selection(sel0, sel1, [wide, rare], **kw)
    assert both.budget_predicted == alone.budget_predicted and both.reach > 2.0
    assert _stop_reason(both, 1.0, 0.1, 2_000_000) is None


@pytest.mark.parametrize("seed", range(3))
def test_a_high_confidence_does_not_make_a_small_prefix_judge_a_wide_event_for_the_budgets_rare_one(seed):
    # A Laplace shift of 0.2 and a rare output seen 20 times against once in 3000 prefix outputs per side. At 0.95
    # the look predicts the budget would choose the rare output's event, which 3000 outputs do not resolve: no
    # stop. With the Wilson bounds of confidence 0.999 on the prefix, the rare event's pessimistic prediction falls
    # below the wide shift's, whose event the prefix resolves and whose reach is far below the claim: the rule
    # would stop "out of reach" while the budget's own selection part, 200 times the prefix, would choose the rare
    # event.
    from privbound.audit.attacks.library import ScoreAttack

    rng = np.random.default_rng(seed)
    n = 3_000

    def draw(shift, rare):
        x = rng.laplace(shift, 1.0, n)
        x[:rare] = 20.0
        return rng.permutation(x)[:, None]

    sel0, sel1 = draw(0.0, 1), draw(0.2, 20)
    kw = dict(n_eval=7_000, n_eval_budget=1_400_000, n_select_budget=600_000, trials=10_000, resolution=0.1,
              delta=0.0)
    attack = [ScoreAttack(lambda o: o[:, 0])]
    at_95 = look_at_selection(sel0, sel1, attack, confidence=0.95, **kw)
    at_999 = look_at_selection(sel0, sel1, attack, confidence=0.999, **kw)
    for look in (at_95, at_999):
        assert not look.budget_event_resolved and look.reach > 2.0
        assert _stop_reason(look, 1.0, 0.1, 2_000_000) is None


def test_the_budgets_event_is_predicted_with_the_audits_pessimism_capped_at_the_rules_on_the_unseen_share():
    z_95, z_999 = stats.norm.ppf(0.975), stats.norm.ppf(0.9995)
    assert budget_choice_z(0.95, 3_000, 600_000) == z_95  # below OPTIMISM: the audit's own, whatever the share
    assert budget_choice_z(0.999, 600_000, 600_000) == pytest.approx(z_999)  # the budget's own selection part
    assert budget_choice_z(0.999, 900_000, 600_000) == pytest.approx(z_999)  # past it: still the budget's
    r = 3_000 / 600_000
    assert budget_choice_z(0.999, 3_000, 600_000) == pytest.approx(np.sqrt(z_999 ** 2 * r + OPTIMISM ** 2 * (1 - r)))
    for kwargs, name in [(dict(confidence=1.0), "confidence"), (dict(selection=0), "selection"),
                         (dict(budget_selection=0), "budget_selection")]:
        with pytest.raises(ValueError, match=f"^{name} "):
            budget_choice_z(**{**dict(confidence=0.95, selection=1, budget_selection=1), **kwargs})


def test_a_look_whose_attacks_have_found_nothing_judges_their_reach_only_on_the_budgets_selection_part():
    # Identical datasets: no attack predicts a positive bound at the budget, and the events a small prefix
    # resolves (near-full ones) say nothing of what the budget's events could certify. A learned attack fitted on
    # too few outputs of a real leak looks the same; stopping there "out of reach" would miss the leak. On the
    # budget's own selection part the attacks are fitted on what the budget's audit would fit them on: the audit
    # stops there, with the bound of the fixed-trials audit at the trials spent, instead of running to the budget.
    rng = np.random.default_rng(1)
    sel0, sel1 = rng.laplace(0, 1, 2_000), rng.laplace(0, 1, 2_000)
    look = look_at_selection(sel0, sel1, BlackBox().candidates(sel0), n_eval=8_000, n_eval_budget=1_600_000,
                             n_select_budget=400_000, delta=0.0, confidence=0.95, trials=10_000, resolution=0.1)
    assert look.budget_predicted <= 0.0 and _stop_reason(look, 1.0, 0.1, 2_000_000) is None
    assert _stop_reason(replace(look, budget_prefix=True), 1.0, 0.1, 2_000_000).startswith("claim out of reach")
    r = audit_mechanism(LaplaceMechanism(1.0), 0.0, 0.0, epsilon=1.0, trials="auto", max_trials=40_000, seed=0)
    last = r.details["sequential"]["looks"][-1]
    assert last["budget_prefix"] and last["budget_predicted"] <= 0.0 and last["selection_trials"] == 8_000
    assert r.trials < 40_000 and r.stop_reason.startswith("claim out of reach of the budget")
    assert all(not lk["budget_prefix"] for lk in r.details["sequential"]["looks"][:-1])


def test_a_stop_before_the_budgets_selection_part_states_its_reach_as_a_prediction():
    # Below the budget's own selection part the event judged is the look's guess at the budget's (which errs where
    # the overspend sits in one rare output): the stop says "predicted" and how many outputs it read; on that part
    # the events are the budget's own and the stop states the reach.
    look = Look(trials=60_000, selection_trials=12_000, predicted=0.4, attack="threshold", budget_predicted=0.6,
                budget_event_resolved=True, reach=0.75)
    guessed = _stop_reason(look, 1.0, 0.1, 2_000_000)
    assert guessed.startswith("claim predicted out of reach of the budget: ")
    assert "from the first 12000 outputs per dataset" in guessed and "may choose a rarer event" in guessed
    own = _stop_reason(replace(look, selection_trials=600_000, budget_prefix=True), 1.0, 0.1, 2_000_000)
    assert own.startswith("claim out of reach of the budget: ") and "rarer" not in own
    assert "on the 600000 outputs per dataset the audit at 2000000 trials per dataset would select on" in own
    within = _stop_reason(replace(look, reach=1.05), 1.0, 0.1, 2_000_000)
    assert within.startswith("no overspend above 10% visible") and "may choose a rarer event" in within
    small = _stop_reason(replace(look, reach=1.003), 1.0, 0.004, 100_000)  # a tolerance below one percent
    assert small.startswith("no overspend above 0.4% visible")


def test_a_look_at_the_budgets_own_selection_part_judges_its_events_resolved_or_not():
    # At delta > 0 the budget's event is a tail event that even the budget's own selection part often resolves no
    # finer than the tolerance; once the look reads that part, the event it judges is the one the budget's audit
    # would evaluate, so the resolution guard has nothing left to guard and the audit may stop there.
    look = Look(trials=60_000, selection_trials=20_000, predicted=0.4, attack="threshold", budget_predicted=0.6,
                budget_event_resolved=False, reach=0.75)
    assert _stop_reason(look, 1.0, 0.1, 100_000) is None
    assert _stop_reason(replace(look, budget_prefix=True), 1.0, 0.1, 100_000).startswith("claim out of reach")
    g = GaussianMechanism(1.0, 1e-5, calibration="analytic")
    r = audit_mechanism(g, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials="auto", max_trials=100_000, seed=0,
                        float_audit=False)
    looks = r.details["sequential"]["looks"]
    assert [lk["budget_prefix"] for lk in looks] == [lk["selection_trials"] >= 20_000 for lk in looks]
    assert r.trials < 100_000 and r.stop_reason.startswith("claim out of reach")
    assert looks[-1]["budget_prefix"] and not looks[-1]["budget_event_resolved"]


@pytest.mark.parametrize("fraction", [0.1, 0.5])
def test_the_float_verdict_of_an_auto_audit_evaluates_only_outputs_no_look_read(fraction):
    # The looks read the first `fraction` of each stage's trials; the floating-point verdict beside the
    # mathematical one must evaluate on outputs after that prefix (else the stopping rule saw its evidence).
    from privbound.audit.statistics import Split

    r = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials="auto", max_trials=20_000, seed=1,
                        estimator=BlackBox(strategy=Split(fraction)), float_audit=True)
    looked = max(look["selection_trials"] for look in r.details["sequential"]["looks"])
    assert r.floating_point is not None and r.trials - r.floating_point.n_evaluation >= looked
    assert r.floating_point.n_evaluation <= r.n_evaluation


def test_every_look_reads_only_its_stages_selection_prefix(monkeypatch):
    # The validity argument of the sequential bound: the stopping rule reads only the first
    # floor(look_share(fraction, t_k) * t_k) outputs of each side at stage k, and the final bound evaluates
    # only on outputs after every prefix a look read.
    # (The soundness simulations above cannot see this kind of peeking: on Laplace and on randomized response over
    # 100 values the bound exceeds the true epsilon as often with it as without.)
    import privbound.audit.sequential as sequential

    seen = []
    real = sequential.look_at_selection

    def spy(sel0, sel1, candidates, **kw):
        seen.append((np.array(sel0), np.array(sel1), kw["trials"]))
        return real(sel0, sel1, candidates, **kw)

    monkeypatch.setattr(sequential, "look_at_selection", spy)
    est = BlackBox()
    r, outs = sequential_audit(LaplaceMechanism(1.0), 0.0, 1.0, est, epsilon=1.0, delta=0.0, confidence=0.95, seed=0,
                               max_trials=32_000, first_trials=2_000, chunk_size=1_000, tolerance=0.0)
    fraction = est.selection_fraction(outs.out0)
    assert len(seen) >= 2
    for sel0, sel1, t in seen:  # each stage's outputs are a prefix of the last stage's (seeded chunks)
        n = look_prefix(fraction, t, 32_000, 2_000)
        assert np.array_equal(sel0, outs.out0[:n]) and np.array_equal(sel1, outs.out1[:n]), (t, len(sel0), n)
    assert r.trials - r.n_evaluation >= max(len(sel0) for sel0, _, _ in seen)


def test_an_unconfirmed_violation_goes_on_and_evaluates_only_fresh_outputs_after_it(monkeypatch):
    # A prediction on the selection outputs that the evaluation outputs do not confirm is no decision: the audit
    # goes on, and since it has now read every output of that stage, later estimates select on all of them and
    # evaluate on fresh ones only (stopping there would miss a leak whose prediction fell unlucky).
    import privbound.audit.sequential as sequential

    real, calls = sequential.look_at_selection, []

    def first_look_predicts_a_violation(sel0, sel1, candidates, **kw):
        look = real(sel0, sel1, candidates, **kw)
        calls.append(kw["trials"])
        return replace(look, predicted=10.0) if len(calls) == 1 else look

    monkeypatch.setattr(sequential, "look_at_selection", first_look_predicts_a_violation)
    r, outs = sequential_audit(LaplaceMechanism(1.0), 0.0, 1.0, BlackBox(), epsilon=1.0, delta=0.0, confidence=0.95,
                               seed=0, max_trials=64_000, first_trials=4_000, chunk_size=1_000)
    looks = r.details["sequential"]["looks"]
    assert len(calls) >= 2 and r.trials > 4_000 and not r.violation
    assert looks[0]["evaluated_bound"] <= 1.0 and r.details["sequential"]["unconfirmed_read"] == 4_000
    assert r.trials - r.n_evaluation == r.details["sequential"]["selection_trials"] >= 4_000
    assert all(look["selection_trials"] >= 4_000 for look in looks[1:])


@pytest.mark.parametrize("claim", [1.0, 0.9])
def test_every_stop_is_the_rules_decision_on_its_looks(claim):
    # What makes the bound valid whatever the stopping rule: the audit stops only where the rule, reading its
    # looks alone, says so -- never on what an estimate evaluated, except to confirm a violation predicted on the
    # prefix. (An audit evaluated at every stage and stopped at its first bound above the claim samples to a
    # foregone conclusion; Laplace at its true epsilon 1 and claimed at 0.9 stops so on several of these seeds.)
    for seed in range(6):
        r, _ = sequential_audit(LaplaceMechanism(1.0), 0.0, 1.0, BlackBox(), epsilon=claim, delta=0.0,
                                confidence=0.95, seed=seed, max_trials=64_000, first_trials=2_000, chunk_size=1_000,
                                tolerance=0.0)
        seq = r.details["sequential"]
        decisions = [_stop_reason(Look(**{k: v for k, v in look.items() if k != "evaluated_bound"}), claim, 0.0,
                                  64_000) for look in seq["looks"]]
        for look, decision in zip(seq["looks"][:-1], decisions[:-1]):  # each look before the last went on
            assert decision is None or (decision == "violation predicted" and look["evaluated_bound"] <= claim)
        if r.trials < 64_000:  # stopped before the budget: by the last look's decision
            assert decisions[-1] is not None and seq["looks"][-1]["trials"] == r.trials, (seed, decisions[-1])
            assert r.violation or decisions[-1] != "violation predicted"  # a prediction stops only if confirmed


def test_the_curve_of_an_auto_audit_states_the_audits_confidence_not_its_last_evaluations():
    # Seed 3 evaluates twice (an unconfirmed prediction, then the stop): the curve reported is the second
    # evaluation's, whose band is at that evaluation's level (0.97625 here), but which evaluation is reported is
    # the stopping rule's choice, so the curve, like the bound, holds at the union's level: the audit's.
    r = audit_mechanism(lambda x, rng: x + rng.laplace(scale=1.0), 0.0, 1.0, epsilon=1.0, trials="auto",
                        max_trials=80_000, confidence=0.5, seed=3, float_audit=False)
    assert r.details["sequential"]["unconfirmed_evaluations"] == 1
    assert r.details["sequential"]["evaluation_confidence"] > 0.9
    assert r.tradeoff["confidence"] == r.confidence == 0.5
    assert "Gaussian-DP mu      : >= " in r.summary() and " at 50.0% confidence (from the certified" in r.summary()
