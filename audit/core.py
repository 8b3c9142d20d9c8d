"""``audit_mechanism``: trials -> estimator -> verdict.

The trials (:func:`privbound.audit.engine.run_trials`: seeded chunks, joblib or Dask) give outputs on
d0 and d1; an estimator (:mod:`privbound.audit.estimators`, a value with one name and one validity
argument) turns them into a lower confidence bound on epsilon and a verdict on the claim.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

import numpy as np

from privbound._validation import check_confidence, check_delta, check_epsilon, check_int
from privbound.audit.attacks.library import Attack
from privbound.audit.engine import DEFAULT_CHUNK_SIZE, run_trials, sample_mechanism
from privbound.audit.estimators import BlackBox, Estimator, FloatingPoint, resolve_estimator
from privbound.audit.features import as_batch, numeric_matrix
from privbound.audit.result import AuditResult
from privbound.audit.sequential import DEFAULT_MAX_TRIALS, DEFAULT_TOLERANCE, sequential_audit
from privbound.audit.statistics import Split

__all__ = ["audit_mechanism", "audit_outputs", "FLOAT_SHARE"]


def _check_batches(out0, out1):
    """The two output batches as arrays of outputs of the same kind."""
    out0, out1 = as_batch(out0), as_batch(out1)
    if out0.dtype != object and out1.dtype != object and out0.shape[1:] != out1.shape[1:]:
        raise ValueError(
            f"out0 and out1 must hold outputs of the same shape, got {out0.shape[1:]} per trial in out0 "
            f"and {out1.shape[1:]} in out1"
        )
    return out0, out1


def audit_outputs(
    out0: np.ndarray,
    out1: np.ndarray,
    *,
    epsilon: float,
    delta: float = 0.0,
    confidence: float = 0.95,
    estimator: Estimator | str = "auto",
    attack: Attack | str = "auto",
    seed: int = 0,
    wall_seconds: float = 0.0,
    name: str | None = None,
) -> AuditResult:
    """The verdict from outputs already sampled on d0 (``out0``) and d1 (``out1``).

    ``estimator`` is an :class:`~privbound.audit.estimators.Estimator` value, one of the names of
    :data:`~privbound.audit.estimators.ESTIMATORS` (``"black-box"``, ``"output-space"``, ``"white-box"``,
    ``"composition"``, ``"floating-point"``), or ``"auto"``: the black-box estimator with ``attack``
    (an :class:`~privbound.audit.attacks.Attack`, one of its names, or ``"auto"`` for the portfolio).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    confidence = check_confidence(confidence)
    est = resolve_estimator(estimator, attack=attack)
    n = min(len(out0), len(out1))
    if n < 10:
        raise ValueError(f"trials must be at least 10 for an audit, got {n}")
    out0, out1 = _check_batches(out0, out1)
    result = est.estimate(out0, out1, epsilon=epsilon, delta=delta, confidence=confidence, seed=seed)
    return replace(result, name=name, wall_seconds=wall_seconds)


def audit_mechanism(
    mechanism: Any,
    d0: Any,
    d1: Any,
    *,
    epsilon: float,
    delta: float = 0.0,
    trials: int | str = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    n_jobs: int | None = 1,
    estimator: Estimator | str = "auto",
    attack: Attack | str = "auto",
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    name: str | None = None,
    cache: Any = None,
    max_trials: int | None = None,
    max_seconds: float | None = None,
    tolerance: float | None = None,
    float_audit: bool | str = "auto",
) -> AuditResult:
    """Audit ``mechanism`` on the neighbouring pair ``(d0, d1)`` against a claimed (epsilon, delta).

    ``mechanism`` is ``mechanism(data, rng) -> output`` or has ``sample(data, rng, size)``.
    Runs ``trials`` outputs on each dataset (seeded chunks, ``n_jobs`` joblib workers) and hands
    them to ``estimator``, whose ``epsilon_lower_bound`` holds with probability at least
    ``confidence``; ``violation`` is true when that bound exceeds the claimed epsilon.

    Estimators (:mod:`privbound.audit.estimators`, each a value with one name):

    * ``BlackBox(attack="auto", strategy=None)`` -- ``"black-box"``: attack and event chosen on a
      selection part of the trials, one event evaluated on the rest; valid for any mechanism;
    * ``OutputSpace(space)`` -- ``"output-space"``: a declared output space of 2-5 values, every
      event on all trials with a union bound;
    * ``WhiteBox(log_likelihood_ratio)`` -- ``"white-box"``: a betting bound on the hockey-stick
      divergence from each output's exact log-likelihood ratio;
    * ``Composition(step_log_likelihood_ratio, groups=None)`` -- ``"composition"``: outputs of T i.i.d.
      steps (or independent steps of several kinds, labelled by ``groups``), a band on one step's
      privacy-loss law (per kind) composed exactly;
    * ``FloatingPoint(attack="auto", centers=None)`` -- ``"floating-point"``: the black-box estimator
      with the floating-point attack; the exact answers default to the mechanism's ``answer(d)``.

    ``"auto"`` (the default) chooses from what the mechanism declares
    (:func:`~privbound.audit.estimators.default_estimator`): its ``output_space`` (at most five values)
    gives the output-space estimator, anything else the black-box estimator with ``attack`` (an
    :class:`~privbound.audit.attacks.Attack`, ``"threshold"``, ``"plug-in"``, ``"single-pattern"``,
    ``"logistic"``, ``"boosting"``, ``"floating-point"``, or ``"auto"``: the portfolio).

    ``trials="auto"`` samples in stages and stops when the bound is decided
    (:mod:`privbound.audit.sequential`): a violation predicted by the selection part and evaluated, the claim
    out of reach of ``max_trials`` trials per dataset (predicted so, before the looks read the selection part
    the audit at ``max_trials`` would select on), no overspend above ``tolerance`` (default 10%) visible
    to the attacks within that budget, or ``max_seconds`` spent (read between stages, before a stage predicted
    to end after it, and within the first stage, 1e4 trials per dataset, sampled then in groups of chunks that
    double: from 20 trials on, it stops after a group once ``max_seconds`` is spent or predicted to be overrun by
    the stage, at the rate of a group that took 0.1 s or more and is not the first, which pays the fixed costs of
    the seeding check and the workers' start-up: :mod:`privbound.audit.sequential`). The bound is the fixed-trials bound
    at the trials spent, at the confidence of its evaluation, and keeps its confidence whatever the stopping rule
    (the looks read only the selection part, and each evaluation has its own share of the confidence);
    ``result.trials`` is the trials spent per dataset and ``result.stop_reason`` says why it stopped.
    It needs the black-box (or floating-point) estimator.

    ``float_audit`` (default ``"auto"``): the floating-point attack (:mod:`privbound.audit.attacks.floating`,
    Mironov, CCS 2012) runs beside the default black-box portfolio whenever the outputs are floats that are
    not all integers (judged on 16 outputs of an independent probe run), on the same trials, with its own
    verdict (``result.floating_point``, a summary line) and its own share :data:`FLOAT_SHARE` of
    ``1 - confidence``; the mathematical verdict keeps the rest, so both hold together at ``confidence``.
    ``False``, an explicit ``attack=`` or an ``estimator=`` other than the default black-box portfolio turns
    it off; ``True`` asks for it with any black-box estimator.

    Example::

        from privbound.audit import audit_mechanism
        mech = lambda x, rng: x + rng.laplace(scale=1.0)
        print(audit_mechanism(mech, 0.0, 1.0, epsilon=1.0).summary())
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sequential = _check_trials(trials)
    given = [k for k, v in (("max_trials", max_trials), ("max_seconds", max_seconds), ("tolerance", tolerance))
             if v is not None]
    if given and not sequential:
        raise ValueError(f"{', '.join(given)} only apply to trials='auto', got trials={trials}")
    confidence = check_confidence(confidence)
    check_int(seed, "seed", low=0)
    est = resolve_estimator(estimator, attack=attack, output_space=getattr(mechanism, "output_space", None))
    est = est.for_mechanism(mechanism, d0, d1)
    start = time.perf_counter()
    float_est = float_estimator(float_audit, est, mechanism, d0, d1, seed)
    math_confidence = confidence if float_est is None else 1.0 - (1.0 - confidence) * (1.0 - FLOAT_SHARE)
    if sequential:
        result, outs = sequential_audit(mechanism, d0, d1, est, epsilon=epsilon, delta=delta,
                                        confidence=math_confidence, seed=seed, n_jobs=n_jobs,
                                        max_trials=DEFAULT_MAX_TRIALS if max_trials is None else max_trials,
                                        max_seconds=max_seconds,
                                        tolerance=DEFAULT_TOLERANCE if tolerance is None else tolerance,
                                        chunk_size=chunk_size,
                                        cache=cache)
        wall = None
    else:
        outs = run_trials(mechanism, d0, d1, trials, seed=seed, n_jobs=n_jobs, chunk_size=chunk_size, cache=cache)
        wall = time.perf_counter() - start
        result = audit_outputs(outs.out0, outs.out1, epsilon=epsilon, delta=delta, confidence=math_confidence,
                               estimator=est, seed=seed, name=name)
    if float_est is not None:
        if sequential:  # its evaluation part must lie after every prefix the stopping rule's looks read
            n = len(outs.out0)
            read = result.details["sequential"]
            prefix = max(read["selection_trials"], read["unconfirmed_read"],
                         int(math.floor(float_est.selection_fraction(outs.out0) * n)))
            # (none left when the time ran out right after an unconfirmed prediction read every output)
            float_est = None if prefix >= n else replace(float_est, strategy=Split.after(prefix, n))
    if float_est is not None:
        fp = audit_outputs(outs.out0, outs.out1, epsilon=epsilon, delta=delta,
                           confidence=1.0 - (1.0 - confidence) * FLOAT_SHARE, estimator=float_est, seed=seed,
                           name=name)
        result = replace(result, floating_point=fp)
    details = result.details if wall is None else {**result.details, "sampling_seconds": wall}
    return replace(result, name=name, wall_seconds=time.perf_counter() - start, details=details)


# Share of 1 - confidence that the default audit's floating-point verdict spends (the mathematical one the rest).
FLOAT_SHARE = 0.2


def float_estimator(float_audit: Any, est: Estimator, mechanism: Any, d0: Any, d1: Any,
                     seed: int) -> FloatingPoint | None:
    """The floating-point attack's own estimator when it runs beside ``est`` (``audit_mechanism``'s
    ``float_audit``), else None."""
    if float_audit is False:
        return None
    if float_audit is not True and float_audit != "auto":
        raise ValueError(f"float_audit must be True, False or 'auto', got {float_audit!r}")
    if isinstance(est, FloatingPoint) or not isinstance(est, BlackBox):
        if float_audit is True and not isinstance(est, FloatingPoint):
            raise ValueError(f"float_audit=True needs a black-box estimator, got {est.name!r}")
        return None
    if float_audit == "auto" and not (isinstance(est.attack, str) and est.attack == "auto" and est.strategy is None):
        return None
    if float_audit == "auto" and not _float_outputs(mechanism, d0, seed):
        return None
    return FloatingPoint.attack_only(mechanism, d0, d1)


def _float_outputs(mechanism: Any, d0: Any, seed: int, size: int = 16) -> bool:
    """Whether ``size`` outputs of an independent probe run on ``d0`` are floats and not all integers (the probe
    draws from its own seed stream: it is not one of the audit's trials)."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0xF10A7]))
    try:
        probe = as_batch(sample_mechanism(mechanism, d0, rng, size))
        x = numeric_matrix(probe)
    except Exception:  # the trials report a failing mechanism or an output that cannot be audited, naming the trial
        return False
    if x is None or probe.dtype.kind != "f":
        return False
    return bool(np.any(np.isfinite(x) & (x != np.round(x))))


def _check_trials(trials: Any) -> bool:
    """Whether ``trials`` asks for the sequential audit (``"auto"``); an integer must be at least 10."""
    if isinstance(trials, str):
        if trials != "auto":
            raise ValueError(f"trials must be an integer >= 10 or 'auto', got {trials!r}")
        return True
    if check_int(trials, "trials", low=1) < 10:
        raise ValueError(f"trials must be at least 10 for an audit, got {trials}")
    return False
