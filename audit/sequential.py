"""The sequential audit (``trials="auto"``): sample in stages, stop when the bound is decided.

A fixed trial count is the wrong contract: a mechanism that leaks a little needs millions of trials, a
correct one far fewer, and the user knows neither in advance. :func:`sequential_audit` samples the trials of
an ordinary black-box audit in stages of growing size (``T_1 = first_trials``, each stage :data:`STAGE_GROWTH`
times the last, at most ``max_trials``) and, after each stage, *looks* at the selection part of the trials so
far -- the first ``m_k = s_k T_k`` trials of each side, where the share ``s_k`` (:func:`look_share`) grows from
the estimator's selection share ``f`` at the first stage to one half, and ``m_k`` never exceeds ``f max_trials``,
the selection part of the budget's own fixed-trials audit (:func:`look_prefix`; a ``Split`` the caller chose is
kept at every stage; one more stage is placed where the looks first read that whole part,
:func:`budget_look_trials`, since every later look repeats its futility decision) -- to decide whether to go on:

* **violation predicted**: some candidate attack, fitted and judged on that prefix as the portfolio does, is
  predicted (pessimistically, :func:`privbound.audit.attacks.choice.choose_on_selection`) to certify more than
  the claimed epsilon on the ``(1 - s_k) T_k`` evaluation trials: evaluate, and stop if the evaluation
  confirms it; if not, the audit has read every one of the ``T_k`` outputs, so it goes on with all of them in
  the selection part (``m_j >= T_k`` for every later stage: later estimates evaluate on fresh outputs only);
* **out of reach / within tolerance**: the event each candidate attack would choose for the evaluation part
  of ``max_trials`` trials (predicted with the pessimism of the budget's own selection part, the prefix's noise
  on the share of it not yet seen met with at most ``z`` standard errors: :func:`budget_choice_z`) could not
  certify more than ``(1 + tolerance) epsilon`` there, even with its two rates moved jointly by ``z`` =
  :data:`OPTIMISM` standard errors of its log ratio towards a larger bound
  (:func:`privbound.audit.statistics.joint_optimism`): stop. The event of the attack predicted
  (pessimistically) to certify most there -- the attack the budget would choose -- must be resolved by the
  prefix (``z`` standard errors of each rate, both at once, move its log ratio by at most ``max(tolerance,
  0.02)`` times ``max(epsilon, 1)``): the event the budget would choose is often rarer than any a small prefix
  measures, and a wide event the prefix does measure says nothing of it. Once the prefix is the selection part
  the audit at ``max_trials`` would select on (``f max_trials``, or every output an unconfirmed prediction read), no
  resolution is asked: the candidates are then fitted on exactly the outputs the budget's audit would fit them
  on, their events are the budget's own, and only those events' rates on the evaluation part are unknown, which
  the optimism covers. (At ``delta > 0`` the budget's event is a tail event that even its own selection part
  often resolves no finer than the tolerance: without this, a correct Gaussian mechanism's audit would often run
  to the budget.) Every candidate is judged, not only that one:
  an attack whose pessimistic prediction is lower now (a plug-in table of rare patterns) may be the one the
  budget certifies most with. And below the budget's own selection part no such stop is taken while no attack
  predicts a positive bound at the budget: an attack that has found nothing yet (a learned attack fitted on too
  few outputs, a leak in outputs the prefix has not seen) has no reach to judge. On that part it has: the attacks
  are fitted on what the budget's audit would fit them on, and a mechanism whose outputs do not depend on the
  pair stops there instead of running to the budget. Below the claim the stop
  says the claim is out of reach of the budget (on the budget's own selection part) or predicted out of reach
  of it (below that part, where the events judged are a guess at the budget's); between the claim and
  ``(1 + tolerance)`` it says no
  overspend above ``tolerance`` is visible to these attacks -- a limit of their power within the budget, never
  a proof of privacy (a learned attack is judged as fitted on the prefix; fitted on the budget's larger
  selection part it could do better);
* the budget (``max_trials``) or the time (``max_seconds``, read between stages, and within the first stage
  between groups of chunks that double, from :data:`MIN_TRIALS` trials on: :func:`_first_stage_cut`) is spent, or
  predicted to be overrun by the next stage: stop.

When it stops after ``T_k`` trials per side, the result is the ordinary black-box estimate of those trials
split after the prefix ``m_k`` of its last stage: the same chunks and seeds as ``trials=T_k`` with
``strategy=Split.after(m_k, T_k)`` at the confidence of its evaluation (below; bit-identical to it, and to
``trials=T_k`` itself when the caller chose the ``Split``), so its bound is a fixed-N bound at the trials spent
(a stop for the clock within the first stage, where no look has read anything, is the fixed-trials audit of the
trials sampled); at the budget ``m_k = f max_trials``, and a run to the budget is the default fixed-trials audit
there (at that confidence). The growing share trades evaluation trials for decisions: a look that reads
``s_k T_k`` trials judges the budget's events as well as one reading ``f T`` does at ``T = s_k T_k / f``, so a
correct mechanism stops after fewer trials, while the bound, evaluated on
``(1 - s_k) T_k`` instead of ``(1 - f) T_k`` trials, loses little where it is near its limit (measured against the
fixed-N bound at the trials spent in ``benchmarks/adaptive.py``).

Validity whatever the stopping rule. The looks read only prefixes ``X_1 .. X_{m_k}`` (``m_k`` non-decreasing
in k, fixed in advance until an unconfirmed prediction moves it to ``T_k``, a choice that reads only ``X_1 ..
X_{T_k}``: each ``m_k`` is a stopping time of the trial sequence) of each side's i.i.d. trial sequence. An audit
evaluates (estimates the bound on the trials after the prefix) at most once per stage: where a violation is
predicted, and where it stops. Whether the j-th evaluation happens, and at which stage, is decided by the prefixes
and by the earlier evaluations, whose outputs every later prefix contains; so the j-th evaluation's stage is a
stopping time of the filtration of the prefixes, and so are the attack and event it evaluates. Its evaluation
trials are i.i.d. and independent of that prefix (the strong Markov property of an i.i.d. sequence), so its
one-event Clopper--Pearson (or conditional) bound exceeds the true epsilon ``eps*`` with probability at most its
level ``alpha_j``. The reported bound is one of these evaluations, so ``P(bound > eps*) <= sum_j alpha_j``. The
stop on a confirmed violation depends on that stage's evaluation, so each evaluation must have its own level: the
j-th runs at ``alpha_j = alpha (1 - r) r^(j - 1)`` (:func:`evaluation_confidence`, ``r`` =
:data:`LATER_EVALUATIONS_SHARE`), which sum to ``alpha = 1 - confidence``; an audit that never sees an unconfirmed
prediction evaluates once, at ``alpha (1 - r)``. This is the selection/evaluation split of Jagielski, Ullman & Oprea
(NeurIPS 2020) made sequential: the stopping rule is part of the selection, which never reads the evaluation data
it has not yet spent a level on (data-dependent sample sizes chosen on an internal pilot, Wittes & Brittain, Stat.
Med. 1990; optional stopping with respect to a filtration the test statistic is independent of, Williams,
*Probability with Martingales*, 1991, Sec. 10.10; alpha spending over repeated tests, Lan & DeMets, Biometrika
1983). The result states the audit's ``confidence``, and so does its trade-off curve (the curve of the evaluation
reported, whose band is at that evaluation's level: the same union); ``details["sequential"]`` the level of the
evaluation reported.
One caveat: ``max_seconds`` reads the clock, which counts the time spent sampling whole stages (and groups of
chunks within the first); a mechanism whose run time reveals its outputs would let that rule read them (none of
privbound's mechanisms does, and ``max_seconds=None``, the default, reads no clock).

The stopping decisions have error rates of their own -- stopping "within tolerance" when an attack would
have found an overspend -- which are not part of the bound's confidence: ``OPTIMISM = 2`` standard errors
of the log ratio, so the true rates of the event judged would certify more than its optimistic ones about
``Phi(-2)`` = 2.3% of the time per look (for counts large enough for the normal approximation; simulated in
``tests/audit/test_sequential.py``). Moving each rate by ``z`` of its own standard errors (the corner of the two
intervals) errs far less often, about 0.3% where the two move the ratio alike, and so looks on where it could
stop. That rate is for the event judged. Which event the budget would choose is a guess from the prefix's noisy
rates, and it errs more often where the overspend sits in one rare output beside wider events of lower ratio that
the prefix resolves: the look then sometimes predicts a wider event, finds it out of reach, and stops, though the
budget's audit, reading more, would choose the rare output and flag (measured on exact laws, where no attack's fit
is to blame, in benchmarks/README.md, 'Adaptive trials on exact laws').
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any

import joblib
import numpy as np

from privbound._validation import check_int, check_real
from privbound.audit.attacks.choice import fitted_candidates
from privbound.audit.engine import DEFAULT_CHUNK_SIZE, run_trials, start_workers
from privbound.audit.estimators import BlackBox, Estimator
from privbound.audit.result import AuditResult
from privbound.audit.statistics import Split, best_event, event_resolution, optimistic_event_bound, wilson_z

__all__ = ["sequential_audit", "evaluation_confidence", "stage_schedule", "look_share", "look_prefix",
           "budget_selection_part", "budget_look_trials", "budget_choice_z", "next_stage_seconds", "Look",
           "look_at_selection", "DEFAULT_MAX_TRIALS", "DEFAULT_FIRST_TRIALS", "DEFAULT_TOLERANCE", "OPTIMISM",
           "MAX_LOOK_SHARE", "LATER_EVALUATIONS_SHARE", "MIN_TRIALS", "MIN_GROUP_SECONDS"]

DEFAULT_MAX_TRIALS = 2_000_000
# The fewest trials per side an audit may spend (a budget, or a stop for the clock).
MIN_TRIALS = 20
DEFAULT_FIRST_TRIALS = 10_000
DEFAULT_TOLERANCE = 0.1
# Standard errors by which the futility rule moves each event's rates towards a larger bound.
OPTIMISM = 2.0
# Factor by which each stage's cumulative trials grow: a stop overshoots the trials the rule needed by at most
# this factor, and every look costs a fit of the candidate attacks on the prefix.
STAGE_GROWTH = math.sqrt(2.0)
# Smallest resolution (relative to the larger of the claimed epsilon and 1) at which events are judged, for
# tolerance 0.
MIN_RESOLUTION = 0.02
# The largest share of a stage's trials its look reads (and the estimate selects on, if the audit stops there).
MAX_LOOK_SHARE = 0.5
# Share of 1 - confidence left for the evaluations after the first (each unconfirmed prediction adds one).
LATER_EVALUATIONS_SHARE = 0.05


def evaluation_confidence(confidence: float, evaluation: int) -> float:
    """The confidence of the ``evaluation``-th evaluation (1, 2, ...) of one sequential audit: its level is
    ``alpha (1 - r) r^(evaluation - 1)``, ``alpha = 1 - confidence``, ``r =`` :data:`LATER_EVALUATIONS_SHARE`, so the
    levels of all the evaluations an audit can make sum to ``alpha`` (alpha spending over evaluations, Lan & DeMets,
    Biometrika 1983, with a geometric spending sequence)."""
    check_int(evaluation, "evaluation", low=1)
    alpha = 1.0 - confidence
    return 1.0 - alpha * (1.0 - LATER_EVALUATIONS_SHARE) * LATER_EVALUATIONS_SHARE ** (evaluation - 1)


def look_share(base: float, trials: int, first_trials: int = DEFAULT_FIRST_TRIALS) -> float:
    """The share of the first ``trials`` per side that the look after them reads and, if the audit stops there, the
    estimate selects on: the estimator's own selection share ``base`` at ``first_trials``, growing like the cube
    root of the trials up to :data:`MAX_LOOK_SHARE` (never below ``base``).

    A larger share lets the looks decide sooner (the futility rule's optimism shrinks like one over the root of
    the trials a look reads), a smaller one leaves more trials to evaluate on; a bound far from its limit (small
    trial counts) loses more to a smaller evaluation part than one near it, hence the growth."""
    base = check_real(base, "base", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    trials = check_int(trials, "trials", low=1)
    first_trials = check_int(first_trials, "first_trials", low=1)
    return max(base, min(MAX_LOOK_SHARE, base * (trials / first_trials) ** (1.0 / 3.0)))


def budget_selection_part(base: float, max_trials: int) -> int:
    """The selection part of the budget's own fixed-trials audit: the first ``floor(base * max_trials)`` trials."""
    return int(math.floor(base * max_trials))


def look_prefix(base: float, trials: int, max_trials: int, first_trials: int = DEFAULT_FIRST_TRIALS) -> int:
    """How many of the first ``trials`` per side the look after them reads: ``floor(look_share * trials)``, at most
    the selection part of the budget's own fixed-trials audit (``floor(base * max_trials)``), so an audit that
    runs to its budget is the fixed-trials audit at ``max_trials`` and the looks read more than the last only
    while that part lasts. Non-decreasing in ``trials``."""
    max_trials = check_int(max_trials, "max_trials", low=1)
    prefix = int(math.floor(look_share(base, trials, first_trials) * trials))
    return min(prefix, budget_selection_part(base, max_trials))


def budget_look_trials(base: float, max_trials: int, first_trials: int = DEFAULT_FIRST_TRIALS,
                       chunk_size: int = DEFAULT_CHUNK_SIZE) -> int:
    """The fewest whole chunks of trials per side (at most ``max_trials``) whose look reads the budget's whole
    selection part (:func:`look_prefix` reaching :func:`budget_selection_part`). Every later look reads that same
    prefix and so repeats its futility decision: a stage here decides as much as the next growth step past it
    would, sooner."""
    max_trials = check_int(max_trials, "max_trials", low=1)
    chunk_size = check_int(chunk_size, "chunk_size", low=1)
    target = budget_selection_part(base, max_trials)
    lo, hi = 1, math.ceil(max_trials / chunk_size)  # look_prefix is non-decreasing in the trials: bisect
    while lo < hi:
        mid = (lo + hi) // 2
        if look_prefix(base, min(mid * chunk_size, max_trials), max_trials, first_trials) >= target:
            hi = mid
        else:
            lo = mid + 1
    return min(lo * chunk_size, max_trials)


def stage_schedule(max_trials: int, first_trials: int = DEFAULT_FIRST_TRIALS,
                   chunk_size: int = DEFAULT_CHUNK_SIZE, growth: float = 2.0) -> list[int]:
    """Cumulative trials per side after each stage: ``first_trials`` growing by the factor ``growth``, rounded up
    to whole chunks, the last one ``max_trials`` (so every stage but the last ends on a chunk boundary and reuses
    the chunks before)."""
    max_trials = check_int(max_trials, "max_trials", low=10)
    first_trials = check_int(first_trials, "first_trials", low=10)
    chunk_size = check_int(chunk_size, "chunk_size", low=1)
    growth = check_real(growth, "growth", low=1.0, low_inclusive=False)
    out, k = [], 0
    while True:
        t = round(first_trials * growth ** k, 6)  # 1e4 * sqrt(2)^2 is 20000, not 20000.000000000004
        t_k = min(max_trials, chunk_size * math.ceil(t / chunk_size))
        if not out or t_k > out[-1]:
            out.append(t_k)
        if t_k >= max_trials:
            return out
        k += 1


@dataclass(frozen=True)
class Look:
    """What one look at a selection prefix found.

    ``predicted``: the largest pessimistic prediction of the bound on the stage's evaluation part (over the
    candidate attacks); ``attack``: the candidate predicted (pessimistically) to certify most on the evaluation
    part of ``max_trials`` trials, and ``budget_predicted`` that prediction; ``budget_event_resolved``: whether
    the prefix resolves the event that attack would choose there; ``reach``: the largest bound (over the
    candidates) the event each would choose at ``max_trials`` would certify there with its rates moved jointly
    towards a larger bound (:func:`privbound.audit.statistics.joint_optimism`); ``budget_prefix``: whether the
    prefix is the selection part the audit at ``max_trials`` would select on (its events are then the budget's
    own, not a guess at them).
    """

    trials: int
    selection_trials: int
    predicted: float
    attack: str
    budget_predicted: float
    budget_event_resolved: bool
    reach: float
    budget_prefix: bool = False

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def budget_choice_z(confidence: float, selection: int, budget_selection: int) -> float:
    """The standard errors of a prefix's rates by which a look moves them to predict the event the budget's audit
    would choose: ``sqrt(z_c**2 r + OPTIMISM**2 (1 - r))`` for the prefix's share ``r`` (at most one) of
    the budget's selection part, ``z_c`` the two-sided normal quantile at ``confidence``.

    The budget selects with ``z_c`` Wilson standard errors of its own outputs, ``z_c sqrt(r)`` of the prefix's;
    on the share of them the prefix has not seen, the prefix's noise is met with the futility rule's own
    :data:`OPTIMISM`. The audit's confidence protects the evaluation's bound, not the rule's guess at the budget's
    event: with ``z_c`` for all of it, a high confidence makes a small prefix choose a wide event it resolves while
    the budget would choose a rarer one, and the rule stops on that wide event. At ``r = 1`` this is ``z_c``, and
    where ``z_c`` is at most ``OPTIMISM`` it is ``z_c`` whatever ``r``: the rule's level only ever lowers the
    pessimism."""
    confidence = check_real(confidence, "confidence", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    selection = check_int(selection, "selection", low=1)
    budget_selection = check_int(budget_selection, "budget_selection", low=1)
    r = min(1.0, selection / budget_selection)
    z_c = wilson_z(1.0 - confidence)
    if z_c <= OPTIMISM:
        return z_c
    return math.sqrt(z_c ** 2 * r + OPTIMISM ** 2 * (1.0 - r))


def look_at_selection(sel0, sel1, candidates, *, n_eval: int, n_eval_budget: int, n_select_budget: int,
                      delta: float, confidence: float, trials: int, resolution: float) -> Look:
    """Judge every candidate attack on a selection prefix, as the portfolio does (cross-fitted where it learns):
    its pessimistic prediction on ``n_eval`` evaluation trials, its prediction on ``n_eval_budget`` with the
    pessimism of :func:`budget_choice_z` (``n_select_budget``: the budget's selection part), and the optimistic
    prediction on ``n_eval_budget`` of the event it would choose there; for the attack predicted to certify most on
    ``n_eval_budget``, whether the prefix resolves that event to within ``resolution``."""
    alpha = 1.0 - confidence
    selection = min(len(sel0), len(sel1))
    z_budget = budget_choice_z(confidence, selection, n_select_budget)
    predicted, reach, budget_pred, budget_attack, resolved = -math.inf, -math.inf, -math.inf, "-", False
    for atk, s_in, s_out, _ in fitted_candidates(candidates, sel0, sel1, []):
        pred, _ = best_event(s_in, s_out, n_eval, n_eval, delta=delta, alpha=alpha, families=(0, 1, 2, 3),
                             randomize_ties=True)
        at_budget, event = best_event(s_in, s_out, n_eval_budget, n_eval_budget, delta=delta, alpha=alpha,
                                      families=(0, 1, 2, 3), randomize_ties=True, selection_z=z_budget)
        predicted = max(predicted, float(pred))
        if event is None:
            continue
        reach = max(reach, optimistic_event_bound(event, s_in, s_out, n_eval_budget, delta=delta,
                                                  confidence=confidence, z=OPTIMISM))
        if at_budget > budget_pred:
            budget_pred, budget_attack = float(at_budget), atk.name
            resolved = event_resolution(event, s_in, s_out, delta=delta, z=OPTIMISM) <= resolution
    return Look(trials, selection, predicted, budget_attack, budget_pred, bool(resolved),
                reach if math.isfinite(budget_pred) else math.inf)


class _MemoryChunks:
    """Finished trial chunks kept in memory (and in ``backing``, a ChunkCache, when given), keyed by index and size."""

    def __init__(self, backing: Any = None):
        self.chunks: dict[tuple[int, int], Any] = {}
        self.backing = backing

    def load(self, i: int, size: int):
        got = self.chunks.get((i, size))
        if got is None and self.backing is not None:
            got = self.backing.load(i, size)
            if got is not None:
                self.chunks[(i, size)] = got
        return got

    def store(self, i: int, size: int, res) -> None:
        self.chunks[(i, size)] = res
        if self.backing is not None:
            self.backing.store(i, size, res)


def _stop_reason(look: Look, epsilon: float, tolerance: float, max_trials: int) -> str | None:
    """Why the audit stops after ``look``, or ``None`` to go on. A futility stop below the prefix the budget's own
    audit selects on judges the look's guess at the budget's events and says so: the guess errs more often than
    the optimism on the events judged (module docstring), so it is stated as a prediction, not as the reach."""
    if look.predicted > epsilon:
        return "violation predicted"
    if not look.budget_prefix and (look.budget_predicted <= 0.0 or not look.budget_event_resolved):
        return None
    moved = (f"with its two rates moved jointly by {OPTIMISM:g} standard errors of their log ratio towards a larger "
             f"bound, to certify at most {max(look.reach, 0.0):.4g} there")
    if look.budget_prefix:
        chosen = (f"the event each candidate attack chooses on the {look.selection_trials} outputs per dataset the "
                  f"audit at {max_trials} trials per dataset would select on is predicted, {moved}")
        headline = "claim out of reach of the budget"
    else:
        chosen = (f"the event each candidate attack is predicted, from the first {look.selection_trials} outputs per "
                  f"dataset, to choose at {max_trials} trials per dataset is predicted, {moved} (a guess at the "
                  f"budget's events: choosing on more outputs, its audit may choose a rarer event)")
        headline = "claim predicted out of reach of the budget"
    if look.reach <= epsilon:
        return f"{headline}: {chosen}"
    if look.reach <= (1.0 + tolerance) * epsilon:
        return (f"no overspend above {100 * tolerance:.3g}% visible to this attack within the budget: {chosen} "
                f"(a limit of the attack's power, not a proof of privacy)")
    return None


def next_stage_seconds(sampling: float, looking: float, previous: int, trials: int, next_trials: int) -> float:
    """The predicted seconds of the stage from ``trials`` to ``next_trials`` per side, from the one that took
    ``sampling`` seconds to sample the trials from ``previous`` to ``trials`` (earlier chunks are reused, so a stage
    samples only its new trials) and ``looking`` seconds to look and estimate (which grow with the trials)."""
    return sampling * (next_trials - trials) / (trials - previous) + looking * next_trials / trials


# Seconds a group of the first stage must take before its rate per trial predicts the stage's end: a shorter
# group's time is mostly the fixed cost of a call (dispatch, the cached chunks reloaded), which a rate would multiply.
MIN_GROUP_SECONDS = 0.1


def _chunk_rounds(trials: int, chunk_size: int, n_jobs: int | None) -> int:
    """How many rounds of one chunk per worker sample ``trials`` trials per side."""
    return math.ceil(math.ceil(trials / chunk_size) / joblib.effective_n_jobs(n_jobs))


def _first_stage_cut(mechanism: Any, d0: Any, d1: Any, first_trials: int, *, seed: int, n_jobs: int | None,
                     chunk_size: int, memory: Any, start: float, max_seconds: float
                     ) -> tuple[int, Any, tuple[float, float | None] | None]:
    """``(trials, outputs, cut)``: the first stage sampled in groups of chunks (kept in ``memory``, which the stage
    then reuses), the first group one chunk per worker, each later one doubling the trials, while ``max_seconds``
    (from ``start``) is neither spent nor predicted to be overrun by the stage; ``cut`` is ``(seconds spent,
    predicted seconds of the stage or None)`` where that stopped it, else ``None``.

    The clock stops nothing before :data:`MIN_TRIALS` trials. The stage's end is predicted from the time spent and
    the last group's seconds per trial, but only from a group that took :data:`MIN_GROUP_SECONDS` or more and is not
    the first (which pays the mechanism's seeding check and the workers' start-up): a rate per trial would multiply
    those fixed costs. A clock read inside a group could not stop it, and the stage itself is the last group. Where
    the stage is one group, the workers are started before it (:func:`~privbound.audit.engine.start_workers`), so
    that its time, from which the next stage's is predicted, does not hold their start-up."""
    workers = joblib.effective_n_jobs(n_jobs)
    trials, outs = 0, None
    nxt = chunk_size * workers
    if nxt >= first_trials:  # the stage is one group, whose time predicts the next stage's
        start_workers(mechanism, d0, seed=seed, n_jobs=n_jobs)
    while nxt < first_trials:
        group_start = time.perf_counter()
        outs = run_trials(mechanism, d0, d1, nxt, seed=seed, n_jobs=n_jobs, chunk_size=chunk_size, cache=memory)
        now = time.perf_counter()
        timed = trials > 0 and now - group_start >= MIN_GROUP_SECONDS
        rate = (now - group_start) / (nxt - trials)
        trials, spent = nxt, now - start
        predicted = spent + rate * (first_trials - trials) if timed else None
        if trials >= MIN_TRIALS and (spent > max_seconds or (predicted is not None and predicted > max_seconds)):
            return trials, outs, (spent, predicted)
        nxt = 2 * trials
    return trials, outs, None


def sequential_audit(mechanism: Any, d0: Any, d1: Any, estimator: Estimator, *, epsilon: float, delta: float,
                     confidence: float, seed: int, n_jobs: int | None = 1, max_trials: int = DEFAULT_MAX_TRIALS,
                     max_seconds: float | None = None, tolerance: float = DEFAULT_TOLERANCE,
                     first_trials: int = DEFAULT_FIRST_TRIALS, chunk_size: int = DEFAULT_CHUNK_SIZE,
                     cache: Any = None) -> tuple[AuditResult, Any]:
    """``(result, outputs)``: the black-box audit of ``mechanism`` on ``(d0, d1)`` at the trial count the stopping
    rule of the module docstring chooses; ``result.stop_reason`` says why it stopped and ``result.trials`` how
    many trials per dataset it spent. ``details["sequential"]`` holds ``looks`` (each :class:`Look` as a dict, with
    ``evaluated_bound`` where a predicted violation was evaluated), ``schedule``, ``max_trials``, ``max_seconds``,
    ``tolerance``, ``optimism``, ``selection_trials`` (the prefix the estimate selected on), ``selection_share``
    (that prefix over the trials), ``unconfirmed_read`` (the trials an unconfirmed prediction read, else 0),
    ``unconfirmed_evaluations``, ``evaluation_confidence`` (the level of the evaluation reported),
    ``stopped_by_rule`` (false when the trial or time budget stopped it) and ``budget_evaluation`` (the evaluation
    part of the budget's own audit)."""
    if not isinstance(estimator, BlackBox):
        raise ValueError(f"trials='auto' needs an estimator with a selection part (black-box or floating-point), "
                         f"got {estimator.name!r}; pass trials=<int>")
    max_trials = check_int(max_trials, "max_trials", low=MIN_TRIALS)
    first_trials = check_int(first_trials, "first_trials", low=MIN_TRIALS)
    tolerance = check_real(tolerance, "tolerance", low=0.0)
    if max_seconds is not None:
        max_seconds = check_real(max_seconds, "max_seconds", low=0.0, low_inclusive=False)
    start = time.perf_counter()
    memory = _MemoryChunks(cache)
    first_trials = min(first_trials, max_trials)
    schedule = stage_schedule(max_trials, first_trials, chunk_size, STAGE_GROWTH)
    # a Split the caller chose is kept at every stage; else the share grows (look_share)
    fixed_share = isinstance(estimator.strategy, Split)
    looks, reason, outs, result, evaluated, n_sel = [], None, None, None, None, 0
    by_rule = True  # stopped by the rule's own decision, not by the trial or time budget
    grouped, cut = 0, None  # the first stage's trials sampled in groups before it, and where the clock cut it
    if max_seconds is not None:
        grouped, outs, cut = _first_stage_cut(mechanism, d0, d1, schedule[0], seed=seed, n_jobs=n_jobs,
                                              chunk_size=chunk_size, memory=memory, start=start,
                                              max_seconds=max_seconds)
    if cut is not None:  # no look has read anything: the estimate is the fixed-trials audit at these trials
        spent, predicted = cut
        base = estimator.selection_fraction(outs.out0)
        n_sel = (int(math.floor(base * grouped)) if fixed_share else
                 look_prefix(base, grouped, max_trials, first_trials))
        by_rule = False
        reason = (f"time budget reached ({max_seconds:g} s; {spent:.2g} s spent on the first stage's first "
                  f"{grouped} of {schedule[0]} trials per dataset"
                  + ("" if predicted is None else f", which would take about {predicted:.2g} s in all") + ")")
    read = 0  # the outputs an unconfirmed prediction's evaluation read: every later look selects on them
    evaluations = 0  # unconfirmed predictions evaluated so far
    level = evaluation_confidence(confidence, 1)  # the confidence of the next evaluation

    def estimate(outs, prefix: int) -> AuditResult:
        at = (estimator if fixed_share and not read else
              replace(estimator, strategy=Split.after(prefix, len(outs.out0))))
        return at.estimate(outs.out0, outs.out1, epsilon=epsilon, delta=delta, confidence=level, seed=seed)

    for k, t_k in enumerate(schedule if cut is None else ()):  # it may gain a later stage after the first
        stage_start = time.perf_counter()
        outs = run_trials(mechanism, d0, d1, t_k, seed=seed, n_jobs=n_jobs, chunk_size=chunk_size, cache=memory)
        sampled = time.perf_counter() - stage_start  # this call's sampling; the stage's looks follow it
        # for the t_k - t_{k-1} trials per side new at this stage: the first stage's groups sampled before this
        # call paid the fixed costs, so this call's time per round of chunks (one per worker) times the stage's
        sampling = sampled
        if k == 0 and grouped:
            sampling *= _chunk_rounds(t_k, chunk_size, n_jobs) / _chunk_rounds(t_k - grouped, chunk_size, n_jobs)
        base = estimator.selection_fraction(outs.out0)
        if k == 0 and not fixed_share:
            # a stage where the looks first read the budget's whole selection part (not past it)
            schedule[:] = sorted(set(schedule) | {budget_look_trials(base, max_trials, first_trials, chunk_size)})
        n_sel = max(read, int(math.floor(base * t_k)) if fixed_share else
                    look_prefix(base, t_k, max_trials, first_trials))
        if t_k == schedule[-1]:
            reason, by_rule = f"trial budget reached ({max_trials} trials per dataset)", False
            break
        # the prefix the estimate at max_trials would select on; once the look reads it, it judges the budget's own
        # candidates and events
        budget_selection = max(read, budget_selection_part(base, max_trials))
        look = look_at_selection(outs.out0[:n_sel], outs.out1[:n_sel], estimator.candidates(outs.out0),
                                 n_eval=t_k - n_sel, n_eval_budget=max_trials - budget_selection,
                                 n_select_budget=budget_selection,
                                 delta=delta, confidence=level, trials=t_k,
                                 resolution=max(tolerance, MIN_RESOLUTION) * max(epsilon, 1.0))
        look = replace(look, budget_prefix=n_sel >= budget_selection)
        looks.append(look.as_dict())
        reason = _stop_reason(look, epsilon, tolerance, max_trials)
        if reason == "violation predicted":
            result = estimate(outs, n_sel)
            looks[-1]["evaluated_bound"] = result.epsilon_lower_bound
            if result.violation:
                break
            # not confirmed: every output so far has been read, so later stages evaluate on fresh ones only, and
            # at the next evaluation's share of the confidence
            read, reason, evaluated, result = t_k, None, result, None
            evaluations += 1
            level = evaluation_confidence(confidence, evaluations + 1)
        elif reason is not None:
            break
        if max_seconds is not None:
            elapsed = time.perf_counter() - start
            next_stage = next_stage_seconds(sampling, time.perf_counter() - stage_start - sampled,
                                            schedule[k - 1] if k else 0, t_k, schedule[k + 1])
            if elapsed + next_stage > max_seconds:
                by_rule = False
                reason = (f"time budget reached ({max_seconds:g} s; {elapsed:.2g} s spent, the next stage would "
                          f"take about {next_stage:.2g} s)")
                if read == t_k:  # this stage's outputs were all read: its evaluation is the result
                    result = evaluated
                break
    if result is None:
        result = estimate(outs, n_sel)
    if reason == "violation predicted":
        reason = "violation established"
    elif result.violation:
        reason = f"violation established (the audit stopped on: {reason})"
    details = {**result.details, "sequential": {"looks": looks, "schedule": schedule, "max_trials": max_trials,
                                                "max_seconds": max_seconds, "tolerance": tolerance,
                                                "optimism": OPTIMISM,
                                                "selection_trials": n_sel, "unconfirmed_read": read,
                                                "unconfirmed_evaluations": evaluations,
                                                "stopped_by_rule": by_rule,
                                                "budget_evaluation": max_trials - budget_selection_part(base,
                                                                                                        max_trials),
                                                "evaluation_confidence": result.confidence,  # the one reported
                                                "selection_share": n_sel / len(outs.out0)}}
    # the trade-off curve of the evaluation reported, like its bound, holds at the audit's confidence: the level
    # of one evaluation, chosen by the stopping rule among several, is not what the reported curve has
    tradeoff = None if result.tradeoff is None else {**result.tradeoff, "confidence": confidence}
    return replace(result, confidence=confidence, tradeoff=tradeoff, stop_reason=reason, details=details), outs
