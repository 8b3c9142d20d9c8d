"""``audit_mechanism``: trials -> attack -> estimator -> verdict.

The trials are split once, in trial order, into a first part (``fraction`` of each
side) and a second part. The first part fits the attack (when it learns anything)
and selects the threshold event; the second part only evaluates that event with
Clopper--Pearson bounds. Because trials are i.i.d., this split is fixed in advance
and the reported bound holds at the stated confidence.

The default strategy is ``Split(0.2)`` (``Split(attack.train_fraction)`` for attacks
that learn). ``Split.for_trials(trials)`` is an opt-in split whose selection part
grows like ``sqrt(trials)`` above 1e4 trials (compared with the default in
benchmarks/README.md).
"""

from __future__ import annotations

import enum
import json
import math
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable

import numpy as np

from privbound.audit import attacks as _attacks
from privbound.audit.engine import DEFAULT_CHUNK_SIZE, run_trials
from privbound.audit.estimators import (
    AllThresholds,
    Estimate,
    Explicit,
    Split,
    auroc,
    clopper_pearson_lower,
    clopper_pearson_upper,
    estimate_epsilon,
    p_value,
)
from privbound.learners.validation import check_confidence, check_delta, check_epsilon, check_int

__all__ = ["AuditResult", "audit_mechanism", "audit_outputs", "json_safe"]


@dataclass(frozen=True, repr=False)
class AuditResult:
    """Verdict of one audit: claimed (epsilon, delta) against the empirical lower bound.

    Attributes
    ----------
    epsilon_claimed, delta : float
        The claim audited.
    epsilon_lower_bound : float
        Lower bound on the mechanism's epsilon at ``delta``, valid with probability at least
        ``confidence`` (``inf`` when the outputs prove that no finite epsilon holds).
    confidence : float
        Confidence of the bound.
    trials : int
        Trials per dataset.
    method : str
        The estimator (e.g. ``"split-clopper-pearson"``).
    attack : str
        The test statistic that scored the outputs.
    threshold : float or None
        Threshold of the chosen event on the attack score.
    event : str or None
        The chosen event, described (``None`` when none distinguishes the datasets).
    tpr, fpr : float
        Empirical probabilities of the event under the top and bottom dataset of the DP inequality.
    tpr_lower, fpr_upper : float
        Their one-sided Clopper--Pearson bounds.
    auroc : float
        Area under the ROC curve of the attack scores on the evaluation trials.
    p_value : float
        p-value of the hypothesis "the claim holds".
    violation : bool
        ``epsilon_lower_bound > epsilon_claimed``.
    seed : int
        Seed of the trials.
    wall_seconds : float
        Wall time of the audit.
    n_evaluation : int
        Trials per dataset that evaluated the event.
    name : str or None
        The audited target.
    accountant_epsilon : dict or None
        The second claim dp_accounting gives for the mechanism's ``DpEvent`` at ``delta``
        (``{"pld": eps, "rdp": eps}``), when the mechanism has one.
    details : dict
        Everything else: the ROC of the chosen event family, timings, what the target records.
    """

    epsilon_claimed: float
    delta: float
    epsilon_lower_bound: float
    confidence: float
    trials: int
    method: str
    attack: str
    threshold: float | None
    event: str | None
    tpr: float
    fpr: float
    tpr_lower: float
    fpr_upper: float
    auroc: float
    p_value: float
    violation: bool
    seed: int
    wall_seconds: float
    n_evaluation: int
    name: str | None = None
    accountant_epsilon: dict[str, float] | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (non-finite floats become None)."""
        return json_safe(asdict(self))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    def __repr__(self) -> str:
        name = f"{self.name!r}, " if self.name else ""
        return (f"AuditResult({name}claimed=({self.epsilon_claimed:g}, {self.delta:g}), "
                f"epsilon_lower_bound={self.epsilon_lower_bound:.4g}, violation={self.violation}, "
                f"trials={self.trials}, attack={self.attack!r})")

    def summary(self) -> str:
        """A readable paragraph, statsmodels-style."""
        verdict = "VIOLATION" if self.violation else "consistent with the claim"
        name = f"{self.name}: " if self.name else ""
        lines = [
            f"{name}privacy audit -- {verdict}",
            f"  claimed             : ({self.epsilon_claimed:g}, {self.delta:g})-DP",
        ]
        if self.accountant_epsilon:
            tighter = ", ".join(f"{k.upper()} {v:.4g}" for k, v in sorted(self.accountant_epsilon.items()))
            lines.append(f"  accountant epsilon  : {tighter} (dp_accounting, same delta)")
        lines += [
            f"  epsilon lower bound : {self.epsilon_lower_bound:.4f} at {self.confidence:.1%} confidence"
            f" ({self.epsilon_lower_bound / self.epsilon_claimed:.1%} of the claim)",
            f"  p-value (claim holds): {self.p_value:.3g}",
            f"  trials              : {self.trials} per dataset ({self.n_evaluation} evaluated), seed {self.seed}",
            f"  attack / method     : {self.attack} / {self.method}",
            f"  event               : {self.event or 'none (no distinguishing event found)'}",
            f"  TPR / FPR           : {self.tpr:.4g} / {self.fpr:.4g}"
            f" (CP bounds {self.tpr_lower:.4g} / {self.fpr_upper:.4g}), AUROC {self.auroc:.3f}",
            f"  wall time           : {self.wall_seconds:.2f} s",
        ]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def json_safe(value: Any) -> Any:
    """``value`` with numpy scalars and arrays as Python numbers and lists, and non-finite floats as None.

    Dict keys become strings and enum members their values, so ``json.dumps`` accepts the result.
    """
    if isinstance(value, dict):
        return {str(k.value if isinstance(k, enum.Enum) else k): json_safe(x) for k, x in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(x) for x in value]
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, enum.Enum):
        return json_safe(value.value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return f if math.isfinite(f) else None
    return value


def _resolve_attack(attack, score, log_likelihood_ratio, out0, out1, max_look=None) -> _attacks.Attack:
    given = [a is not None for a in (attack, score, log_likelihood_ratio)]
    if sum(given) > 1:
        raise ValueError("give at most one of attack, score and log_likelihood_ratio")
    if attack is not None:
        if not isinstance(attack, _attacks.Attack):
            raise TypeError(f"attack must be a privbound.audit.attacks.Attack, got {type(attack).__name__}")
        return attack
    if score is not None:
        return _attacks.ScoreAttack(score)
    if log_likelihood_ratio is not None:
        return _attacks.LikelihoodRatioAttack(log_likelihood_ratio)
    # Decide from the first 10% of the trials, which every attack uses for training/selection.
    n_look = max(1, min(2000, len(out0) // 10))
    if max_look is not None:
        # Never let the choice look at trials that a user-given Split keeps for evaluation.
        n_look = max(1, min(n_look, max_look))
    return _attacks.choose_attack(out0[:n_look], out1[:n_look])


def audit_outputs(
    out0: np.ndarray,
    out1: np.ndarray,
    *,
    epsilon: float,
    delta: float = 0.0,
    confidence: float = 0.95,
    attack: _attacks.Attack | None = None,
    score: Callable | None = None,
    log_likelihood_ratio: Callable | None = None,
    strategy: Split | AllThresholds | Explicit | None = None,
    seed: int = 0,
    wall_seconds: float = 0.0,
    name: str | None = None,
) -> AuditResult:
    """The verdict from outputs already sampled on d0 (``out0``) and d1 (``out1``)."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    confidence = check_confidence(confidence)
    n = min(len(out0), len(out1))
    if n < 10:
        raise ValueError(f"trials must be at least 10 for an audit, got {n}")
    shape0, shape1 = np.shape(out0)[1:], np.shape(out1)[1:]
    if shape0 != shape1:
        raise ValueError(
            f"out0 and out1 must hold outputs of the same shape, got {shape0} per trial in out0 "
            f"and {shape1} in out1"
        )
    if log_likelihood_ratio is not None and attack is None and score is None and strategy is None:
        return _whitebox_result(out0, out1, log_likelihood_ratio, epsilon=epsilon, delta=delta,
                                confidence=confidence, seed=seed, wall_seconds=wall_seconds, name=name)
    max_look = int(math.floor(strategy.fraction * n)) if isinstance(strategy, Split) else None
    atk = _resolve_attack(attack, score, log_likelihood_ratio, out0, out1, max_look)
    if strategy is None:
        strategy = Split(atk.train_fraction if atk.needs_training else 0.2)
    if atk.needs_training:
        if not isinstance(strategy, Split):
            raise ValueError(f"attack {atk.name!r} learns from data and needs a Split strategy, got {strategy!r}")
        n_train = int(math.floor(strategy.fraction * n))
        atk.fit(out0[:n_train], out1[:n_train])
    s0 = atk.score(out0)
    s1 = atk.score(out1)
    est: Estimate = estimate_epsilon(s1, s0, delta=delta, confidence=confidence, strategy=strategy)
    tpr, fpr, tpr_lo, fpr_hi = _event_rates(est, confidence)
    # Only the evaluation part of a Split describes the chosen test without selection bias.
    k_eval = int(math.floor(strategy.fraction * n)) if isinstance(strategy, Split) else 0
    auc = auroc(s1[k_eval:], s0[k_eval:])
    pv = p_value(est, epsilon)
    details = {"roc": _roc_of_family(s1[k_eval:], s0[k_eval:], est.event)}
    return AuditResult(
        epsilon_claimed=epsilon,
        delta=delta,
        epsilon_lower_bound=est.epsilon_lower_bound,
        confidence=confidence,
        trials=n,
        method=est.method,
        attack=atk.name,
        threshold=None if est.event is None else est.event.threshold,
        event=None if est.event is None else est.event.describe(),
        tpr=tpr,
        fpr=fpr,
        tpr_lower=tpr_lo,
        fpr_upper=fpr_hi,
        auroc=auc,
        p_value=pv,
        violation=bool(est.epsilon_lower_bound > epsilon),
        seed=seed,
        wall_seconds=wall_seconds,
        n_evaluation=est.n_in,
        name=name,
        details=details,
    )


def _event_rates(est: Estimate, confidence: float) -> tuple[float, float, float, float]:
    """TPR, FPR of the chosen event and their one-sided Clopper--Pearson bounds (NaN, NaN, 0, 1 without one).

    The test says "top dataset" when the event occurs, so TPR = P_top(E) and FPR = P_bottom(E)
    (top = the dataset on the left of the DP inequality).
    """
    if est.event is None:
        return float("nan"), float("nan"), 0.0, 1.0
    alpha = (1 - confidence) / est.n_candidates
    if est.event.top == 1:
        k_top, n_top, k_bot, n_bot = est.k_in, est.n_in, est.k_out, est.n_out
    else:
        k_top, n_top, k_bot, n_bot = est.k_out, est.n_out, est.k_in, est.n_in
    return (k_top / n_top, k_bot / n_bot, float(clopper_pearson_lower(k_top, n_top, alpha / 2)),
            float(clopper_pearson_upper(k_bot, n_bot, alpha / 2)))


def _whitebox_result(out0, out1, log_likelihood_ratio, *, epsilon, delta, confidence, seed, wall_seconds, name):
    """Audit with the target's exact log-likelihood ratio: the betting hockey-stick estimator.

    The white-box bound is used alone, not the better of it and a threshold test
    (that would need a union bound and cost power): with an exact density it dominates
    every threshold test. Pass an explicit ``strategy`` to get the threshold test on
    ``-L`` instead, whose validity does not depend on the density being exact.
    """
    from privbound.audit.whitebox import whitebox_epsilon_lower_bound

    n = min(len(out0), len(out1))
    l0 = np.asarray(log_likelihood_ratio(out0), dtype=float)
    l1 = np.asarray(log_likelihood_ratio(out1), dtype=float)
    for arr, nm, k in ((l0, "out0", len(out0)), (l1, "out1", len(out1))):
        if arr.shape != (k,):
            raise ValueError(f"log_likelihood_ratio({nm}) must return one value per output, shape ({k},); got {arr.shape}")
        if np.isnan(arr).any():
            raise ValueError(f"log_likelihood_ratio({nm}) returned NaN at output {int(np.flatnonzero(np.isnan(arr))[0])}")
    wb = whitebox_epsilon_lower_bound(l0, l1, delta=delta, confidence=confidence, epsilon_claimed=epsilon)
    s0, s1 = (np.clip(np.nan_to_num(-v, posinf=1e300, neginf=-1e300), -1e300, 1e300) for v in (l0, l1))
    p = wb.p_value if math.isfinite(wb.p_value) else (0.0 if wb.epsilon_lower_bound > epsilon else 1.0)
    return AuditResult(
        epsilon_claimed=epsilon, delta=delta, epsilon_lower_bound=float(wb.epsilon_lower_bound),
        confidence=confidence, trials=n, method=wb.method, attack="white-box-likelihood-ratio",
        threshold=None, event=None, tpr=float("nan"), fpr=float("nan"), tpr_lower=0.0, fpr_upper=1.0,
        auroc=auroc(s1, s0), p_value=float(min(1.0, max(p, 0.0))), violation=bool(wb.epsilon_lower_bound > epsilon),
        seed=seed, wall_seconds=wall_seconds, n_evaluation=n, name=name,
        details={"roc": _roc_of_family(s1, s0, None), "log_capital_at_bound": wb.log_capital_at_bound},
    )


def _roc_of_family(s_in: np.ndarray, s_out: np.ndarray, event, points: int = 101) -> dict[str, list[float]]:
    """ROC of the chosen event family on the evaluation scores: (P_bottom(E_t), P_top(E_t)) over t.

    For the family of the chosen event ({s >= t} or {s < t}, d1 or d0 on top) the
    curve is traced over ``points`` quantile thresholds, so that the chosen test's
    (FPR, TPR) lies on it and the (epsilon, delta) region can be drawn beside it.
    """
    side, top = ("ge", 1) if event is None else (event.side, event.top)
    pooled = np.sort(np.concatenate([s_in, s_out]))
    t = np.unique(pooled[np.linspace(0, pooled.size - 1, points).astype(int)])
    t = np.concatenate([[-np.inf], t, [np.inf]])
    ge_in = s_in.size - np.searchsorted(np.sort(s_in), t, side="left")
    ge_out = s_out.size - np.searchsorted(np.sort(s_out), t, side="left")
    p_in, p_out = ge_in / s_in.size, ge_out / s_out.size
    if side == "lt":
        p_in, p_out = 1 - p_in, 1 - p_out
    tpr, fpr = (p_in, p_out) if top == 1 else (p_out, p_in)
    order = np.lexsort((tpr, fpr))
    return {"fpr": [float(v) for v in fpr[order]], "tpr": [float(v) for v in tpr[order]]}


def audit_mechanism(
    mechanism: Any,
    d0: Any,
    d1: Any,
    *,
    epsilon: float,
    delta: float = 0.0,
    trials: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    n_jobs: int | None = 1,
    score: Callable | None = None,
    log_likelihood_ratio: Callable | None = None,
    attack: _attacks.Attack | None = None,
    strategy: Split | AllThresholds | Explicit | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    name: str | None = None,
    cache: Any = None,
) -> AuditResult:
    """Audit ``mechanism`` on the neighbouring pair ``(d0, d1)`` against a claimed (epsilon, delta).

    ``mechanism`` is ``mechanism(data, rng) -> output`` or has ``sample(data, rng, size)``.
    Runs ``trials`` outputs on each dataset (seeded chunks, ``n_jobs`` joblib workers),
    scores them with ``score`` / ``log_likelihood_ratio`` / ``attack`` or an attack chosen
    from the outputs, and returns an :class:`AuditResult` whose ``epsilon_lower_bound``
    holds with probability at least ``confidence``. ``violation`` is true when that
    bound exceeds the claimed epsilon.

    Example::

        from privbound.audit import audit_mechanism
        mech = lambda x, rng: x + rng.laplace(scale=1.0)
        print(audit_mechanism(mech, 0.0, 1.0, epsilon=1.0).summary())
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    trials = check_int(trials, "trials", low=1)
    confidence = check_confidence(confidence)
    check_int(seed, "seed", low=0)
    if trials < 10:
        raise ValueError(f"trials must be at least 10 for an audit, got {trials}")
    start = time.perf_counter()
    outs = run_trials(mechanism, d0, d1, trials, seed=seed, n_jobs=n_jobs, chunk_size=chunk_size, cache=cache)
    wall = time.perf_counter() - start
    result = audit_outputs(
        outs.out0,
        outs.out1,
        epsilon=epsilon,
        delta=delta,
        confidence=confidence,
        attack=attack,
        score=score,
        log_likelihood_ratio=log_likelihood_ratio,
        strategy=strategy,
        seed=seed,
        name=name,
    )
    return replace(result, wall_seconds=time.perf_counter() - start,
                   details={**result.details, "sampling_seconds": wall})
