"""``audit_mechanism``: trials -> attack -> estimator -> verdict.

The trials are split once, in trial order, into a selection part (``fraction`` of each
side) and an evaluation part. The selection part fits the candidate attacks (cross-fitted
on its two halves) and chooses the attack and the threshold event together; the
evaluation part only evaluates that one event with Clopper--Pearson bounds. Because
trials are i.i.d., the bound holds at the stated confidence. Declared small output spaces
use every trial with a union bound over their events instead (:func:`audit_outputs`).

The default selection share is 20% for scalar outputs and 30% otherwise.
``Split.for_trials(trials)`` is an opt-in split whose selection part grows like
``sqrt(trials)`` above 1e4 trials (compared with the default in benchmarks/README.md, 'N-dependent selection split').
"""

from __future__ import annotations

import copy
import enum
import json
import math
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Sequence, Union

import numpy as np

from privbound.audit import attacks as _attacks
from privbound.audit.engine import DEFAULT_CHUNK_SIZE, run_trials
from privbound.audit.estimators import (
    SMALL_SPACE_MAX,
    AllThresholds,
    Estimate,
    Explicit,
    Split,
    _best_candidate,
    _evaluate_event,
    _top_first,
    choose_event_test,
    _null_estimate,
    auroc,
    clopper_pearson_lower,
    clopper_pearson_upper,
    estimate_epsilon,
    event_coins,
    p_value,
    small_space_estimate,
    strongest_difference_event,
)
from privbound.audit.features import as_batch, is_scalar_numeric, output_records
from privbound.audit.floating import FloatingPointAttack
from privbound._validation import check_confidence, check_delta, check_epsilon, check_int

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
    float_audit : bool
        The audit included the floating-point attack (:mod:`privbound.audit.floating`): a
        violation then says the implementation is float-unsafe at the claimed epsilon.
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
    float_audit: bool = False
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
        if self.float_audit:
            verdict = "float-unsafe at the claimed epsilon" if self.violation else "no floating-point leak found"
        name = f"{self.name}: " if self.name else ""
        lines = [
            f"{name}{'floating-point ' if self.float_audit else ''}privacy audit -- {verdict}",
            f"  claimed             : ({self.epsilon_claimed:g}, {self.delta:g})-DP",
        ]
        if self.accountant_epsilon:
            tighter = ", ".join(f"{k.upper()} {v:.4g}" for k, v in sorted(self.accountant_epsilon.items()))
            lines.append(f"  accountant epsilon  : {tighter} (dp_accounting, same delta)")
        if math.isinf(self.epsilon_lower_bound):
            bound = f"  epsilon lower bound : inf at {self.confidence:.1%} confidence"
            if self.details.get("unbounded"):
                bound += f" ({self.details['unbounded']})"
        else:
            bound = (f"  epsilon lower bound : {self.epsilon_lower_bound:.4f} at {self.confidence:.1%} confidence"
                     f" ({self.epsilon_lower_bound / self.epsilon_claimed:.1%} of the claim)")
        lines += [
            bound,
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


AttackSpec = Union[_attacks.Attack, str, None]

# Share of the trials that selects attack and event when no Split is given: scalar outputs (the
# threshold attack needs no fitting) and attacks that do not learn take the smaller one; attacks
# that learn on other outputs are fitted there too.
_SCALAR_SELECTION = 0.2
_GENERAL_SELECTION = 0.3


def _check_attack_arguments(attack, score, log_likelihood_ratio, step_log_likelihood_ratio=None) -> None:
    given = [a is not None and not (isinstance(a, str) and a == "auto")
             for a in (attack, score, log_likelihood_ratio, step_log_likelihood_ratio)]
    if sum(given) > 1:
        raise ValueError("give at most one of attack, score, log_likelihood_ratio and step_log_likelihood_ratio")
    if attack is not None and not isinstance(attack, (str, _attacks.Attack)):
        raise TypeError(f"attack must be a privbound.audit.attacks.Attack or one of "
                        f"{sorted(_attacks.ATTACK_NAMES) + ['floating-point', 'auto']}, got {type(attack).__name__}")


def _candidates(attack: AttackSpec, score, log_likelihood_ratio, sample, float_audit: bool = False,
                float_centers=None) -> list[_attacks.Attack]:
    """The attacks to choose from: the one given, or the portfolio for outputs like ``sample``.

    ``float_audit`` adds the floating-point attack to the portfolio; it can also be named.
    """
    if score is not None:
        return [_attacks.ScoreAttack(score)]
    if log_likelihood_ratio is not None:
        return [_attacks.LikelihoodRatioAttack(log_likelihood_ratio)]
    if isinstance(attack, _attacks.Attack):
        return [attack]
    if attack == "floating-point":
        return [FloatingPointAttack(centers=float_centers)]
    if attack is None or attack == "auto":
        extra = [FloatingPointAttack(centers=float_centers)] if float_audit else []
        return _attacks.portfolio(sample) + extra
    return [_attacks.attack_by_name(attack)]


def _resolve_attack(attack, score, log_likelihood_ratio, out0, out1, max_look=None) -> _attacks.Attack:
    """One attack for callers that need a single scorer (neighbour search, one-run scores)."""
    _check_attack_arguments(attack, score, log_likelihood_ratio)
    cands = _candidates(attack, score, log_likelihood_ratio, out0[:1])
    if len(cands) == 1:
        return cands[0]
    n_look = max(1, min(2000, len(out0) // 10, len(out1) // 10))
    if max_look is not None:
        n_look = max(1, min(n_look, max_look))
    return _attacks.choose_attack(out0[:n_look], out1[:n_look])


def audit_outputs(
    out0: np.ndarray,
    out1: np.ndarray,
    *,
    epsilon: float,
    delta: float = 0.0,
    confidence: float = 0.95,
    attack: AttackSpec = "auto",
    score: Callable | None = None,
    log_likelihood_ratio: Callable | None = None,
    step_log_likelihood_ratio: Callable | None = None,
    strategy: Split | AllThresholds | Explicit | None = None,
    output_space: Sequence[Any] | None = None,
    float_audit: bool = False,
    float_centers: tuple[Any, Any] | None = None,
    seed: int = 0,
    wall_seconds: float = 0.0,
    name: str | None = None,
) -> AuditResult:
    """The verdict from outputs already sampled on d0 (``out0``) and d1 (``out1``).

    Routes, in order:

    * ``log_likelihood_ratio`` alone: the white-box betting estimator (:mod:`privbound.audit.whitebox`);
    * ``step_log_likelihood_ratio`` alone (outputs of T steps that are independent and identically
      distributed given the dataset; it returns each output's T per-step log-likelihood ratios, shape
      (trials, T)): the white-box composition estimator (:mod:`privbound.audit.composition`);
    * ``output_space`` of at most :data:`~privbound.audit.estimators.SMALL_SPACE_MAX` values
      (declared, never inferred from the outputs): every event of the space on all trials
      (:func:`~privbound.audit.estimators.small_space_estimate`);
    * otherwise a selection part of the trials (the first ``fraction`` of each side:
      ``strategy=Split(fraction)``, else 20% when every output is one real number or no
      candidate attack learns, and 30% otherwise) and an evaluation part (the rest). Every candidate attack (the portfolio of
      :func:`privbound.audit.attacks.portfolio` for ``attack="auto"``, else the one given) is
      cross-fitted on the two halves of the selection part when it learns; attack and
      threshold event (possibly randomised at a tie) are chosen together by the bound they
      are predicted to certify on the evaluation part; the chosen attack, refitted on the
      whole selection part, scores the evaluation part, which gives the Clopper--Pearson
      bound of that one event. Attack, fit and event depend on the selection part only
      (the share is decided from the first output, which lies in the selection part either
      way), so the bound holds at ``confidence`` with no multiplicity correction.
    * ``strategy=AllThresholds()`` or ``Explicit(...)``: all trials, for an attack that does not learn.

    ``float_audit=True`` adds the floating-point attack (:mod:`privbound.audit.floating`; the
    datasets' exact answers ``float_centers``, estimated when not given) to the portfolio and
    skips the routes that cannot see a floating-point leak (the declared output space, the
    white-box density): the result then says whether the implementation is float-unsafe.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    confidence = check_confidence(confidence)
    _check_attack_arguments(attack, score, log_likelihood_ratio, step_log_likelihood_ratio)
    n = min(len(out0), len(out1))
    if n < 10:
        raise ValueError(f"trials must be at least 10 for an audit, got {n}")
    out0, out1 = _check_batches(out0, out1)
    plain = (attack is None or attack == "auto") and score is None and not float_audit
    density = log_likelihood_ratio if step_log_likelihood_ratio is None else step_log_likelihood_ratio
    if density is not None and plain and strategy is None:
        return _whitebox_result(out0, out1, density, epsilon=epsilon, delta=delta, confidence=confidence, seed=seed,
                                wall_seconds=wall_seconds, name=name, per_step=step_log_likelihood_ratio is not None)
    if step_log_likelihood_ratio is not None and not float_audit:
        raise ValueError("step_log_likelihood_ratio is audited by the composition estimator on all trials; "
                         "it takes no strategy")
    if output_space is not None and plain and log_likelihood_ratio is None and strategy is None \
            and len(output_space) <= SMALL_SPACE_MAX:
        est = small_space_estimate(list(_labels(out1)), list(_labels(out0)), output_space, delta=delta,
                                   confidence=confidence)
        return _result(est, epsilon=epsilon, confidence=confidence, trials=n, attack="output-value", seed=seed,
                       wall_seconds=wall_seconds, name=name, details={})
    cands = _candidates(attack, score, None if float_audit else log_likelihood_ratio, out0[:1], float_audit,
                        float_centers)
    if strategy is not None and not isinstance(strategy, Split):
        return _all_trials_result(out0, out1, cands, strategy, epsilon=epsilon, delta=delta, confidence=confidence,
                                  seed=seed, wall_seconds=wall_seconds, name=name)
    if strategy is None:
        learns = any(c.needs_training for c in cands)
        strategy = Split(_SCALAR_SELECTION if is_scalar_numeric(out0[:1]) or not learns else _GENERAL_SELECTION)
    chosen = _select_and_evaluate(out0, out1, cands, strategy.fraction, delta=delta, confidence=confidence, seed=seed)
    details = {"roc": _roc_of_family(chosen.eval_in, chosen.eval_out, chosen.estimate.event),
               "attack_selection": chosen.table, "selection_trials": chosen.n_selection}
    result = _result(chosen.estimate, epsilon=epsilon, confidence=confidence, trials=n, attack=chosen.attack.name,
                     seed=seed, wall_seconds=wall_seconds, name=name, details=details,
                     auc=auroc(chosen.eval_in, chosen.eval_out))
    return replace(result, float_audit=bool(float_audit))


def _check_batches(out0, out1):
    """The two output batches as arrays of outputs of the same kind."""
    out0, out1 = as_batch(out0), as_batch(out1)
    if out0.dtype != object and out1.dtype != object and out0.shape[1:] != out1.shape[1:]:
        raise ValueError(
            f"out0 and out1 must hold outputs of the same shape, got {out0.shape[1:]} per trial in out0 "
            f"and {out1.shape[1:]} in out1"
        )
    return out0, out1


def _labels(outputs: np.ndarray) -> list:
    """Outputs as hashable values (a scalar, or the flat tuple of a structured output)."""
    return [r[0] if len(r) == 1 else r for r in output_records(outputs)]


@dataclass(frozen=True)
class _Selection:
    """The attack and event chosen on the selection part, and the evaluation part's scores."""

    attack: _attacks.Attack
    estimate: Estimate
    eval_in: np.ndarray
    eval_out: np.ndarray
    n_selection: int
    table: list


def _scores(attack: _attacks.Attack, outputs) -> np.ndarray:
    s = np.asarray(attack.score(outputs), dtype=float)
    if s.shape != (len(outputs),) or not np.all(np.isfinite(s)):
        raise ValueError(f"attack {attack.name!r} did not return one finite score per output")
    return s


def choose_on_selection(sel0, sel1, candidates, n_eval_in: int, n_eval_out: int, *, delta: float, alpha: float):
    """``(attack, event, test, predicted, table)``: the attack (fitted on the selection part), event and test
    to evaluate with.

    Every candidate is fitted and judged on the selection outputs only (:func:`_fitted_candidates`);
    attack and event are chosen together by the bound predicted on ``n_eval_in`` / ``n_eval_out``
    evaluation outputs, or, when no candidate is predicted to certify, by the strongest evidence
    of a difference (a valid bound either way, and often positive on small samples); the test of
    the event's counts is the one predicted to certify more from the event's selection rates
    (:func:`~privbound.audit.estimators.choose_event_test`). ``event`` is ``None`` when nothing
    can be chosen; ``predicted`` is the best prediction (<= 0: the evidence chose); ``table``
    lists each candidate's prediction and evidence.
    """
    table, scored = [], []
    for atk, s_in, s_out, scorer in _fitted_candidates(candidates, sel0, sel1, table):
        pred, event = _best_candidate(s_in, s_out, n_eval_in, n_eval_out, delta=delta, alpha=alpha,
                                      families=(0, 1, 2, 3), randomize_ties=True)
        z, z_event = strongest_difference_event(s_in, s_out, delta=delta)
        table.append({"attack": atk.name, "predicted": pred, "evidence": z})
        scored.append((atk, pred, event, z, z_event, scorer, s_in, s_out))
    if not scored:
        raise ValueError("no candidate attack applies to these outputs: " + "; ".join(
            f"{row['attack']}: {row['skipped']}" for row in table))
    best = max(scored, key=lambda c: c[1])  # first maximum: the portfolio's order breaks ties
    if best[1] > 0.0:
        atk, _, event, _, _, scorer, s_in, s_out = best
    else:
        atk, _, _, _, event, scorer, s_in, s_out = max(scored, key=lambda c: c[3])
    test = "clopper-pearson" if event is None else choose_event_test(event, s_in, s_out, n_eval_in, n_eval_out,
                                                                     delta=delta, alpha=alpha)
    final = copy.deepcopy(atk).fit(sel0, sel1) if scorer is None else scorer
    return final, event, test, best[1], table


def _select_and_evaluate(out0, out1, candidates, fraction, *, delta, confidence, seed) -> _Selection:
    n_sel0, n_sel1 = int(math.floor(fraction * len(out0))), int(math.floor(fraction * len(out1)))
    if min(n_sel0, n_sel1) < 1 or min(len(out0) - n_sel0, len(out1) - n_sel1) < 1:
        raise ValueError(f"Split(fraction={fraction}) needs at least one selection and one evaluation trial on "
                         f"each side; got {len(out0)} and {len(out1)} trials")
    sel0, sel1, ev0, ev1 = out0[:n_sel0], out1[:n_sel1], out0[n_sel0:], out1[n_sel1:]
    alpha = 1.0 - confidence
    final, event, test, predicted, table = choose_on_selection(sel0, sel1, candidates, len(ev1), len(ev0),
                                                               delta=delta, alpha=alpha)
    fallback = not predicted > 0.0
    e_in, e_out = _scores(final, ev1), _scores(final, ev0)
    method = f"{test}/split({fraction:g})"
    if event is None:
        est = _null_estimate(e_in.size, e_out.size, delta=delta, confidence=confidence, method=method)
    else:
        coins = event_coins(seed, e_in.size, e_out.size) if event.tie_fraction is not None else (None, None)
        est = _evaluate_event(e_in, e_out, event, delta=delta, alpha=alpha, n_candidates=1, method=method,
                              confidence=confidence, coins_in=coins[0], coins_out=coins[1], test=test)
        if fallback and not est.epsilon_lower_bound > 0.0:
            est = _null_estimate(e_in.size, e_out.size, delta=delta, confidence=confidence, method=method)
    return _Selection(final, est, e_in, e_out, min(n_sel0, n_sel1), table)


def _fitted_candidates(candidates, sel0, sel1, table):
    """``(attack, selection scores on d1, on d0, attack to evaluate with)`` for each candidate that applies.

    An attack that does not learn scores the selection part as it is, and so does one that is
    ``judged_on_fit`` (fitted on the whole selection part: its fit only chooses among a few events).
    Any other attack that learns is judged only on outputs it was not fitted on:

    * ``refit_on_selection`` (smooth classifiers, whose scores keep their scale when refitted on
      more data): cross-fitted on the two halves (each half scored by the model of the other),
      then refitted on the whole selection part to score the evaluation part;
    * otherwise (the plug-in table, whose cells change with the sample size): fitted on one half
      and judged on the other, both ways round -- two candidates, each evaluated with its own fit.
    """
    h0, h1 = len(sel0) // 2, len(sel1) // 2
    for atk in candidates:
        try:
            if not atk.needs_training:
                yield atk, _scores(atk, sel1), _scores(atk, sel0), atk
                continue
            if atk.judged_on_fit:
                fitted = copy.deepcopy(atk).fit(sel0, sel1)
                yield fitted, _scores(fitted, sel1), _scores(fitted, sel0), fitted
                continue
            if min(h0, h1) < 1:
                raise ValueError("too few selection trials to fit the attack on half of them")
            first = copy.deepcopy(atk).fit(sel0[:h0], sel1[:h1])
            second = copy.deepcopy(atk).fit(sel0[h0:], sel1[h1:])
            if atk.refit_on_selection:
                s_in = np.concatenate([_scores(second, sel1[:h1]), _scores(first, sel1[h1:])])
                s_out = np.concatenate([_scores(second, sel0[:h0]), _scores(first, sel0[h0:])])
                yield atk, s_in, s_out, None  # refitted on the whole selection part if chosen
            else:
                yield first, _scores(first, sel1[h1:]), _scores(first, sel0[h0:]), first
                yield second, _scores(second, sel1[:h1]), _scores(second, sel0[:h0]), second
        except (TypeError, ValueError) as exc:
            table.append({"attack": atk.name, "predicted": None, "evidence": None, "skipped": str(exc)})


def _all_trials_result(out0, out1, candidates, strategy, *, epsilon, delta, confidence, seed, wall_seconds, name):
    """``AllThresholds`` / ``Explicit``: every trial evaluates, so the attack must not learn."""
    atk = candidates[0]
    if len(candidates) > 1:
        if not is_scalar_numeric(out0[:1]):
            raise ValueError(f"strategy {strategy!r} evaluates on all trials and needs an attack that does not "
                             "learn; the outputs are not scalars: give attack= or score=, or use a Split")
        atk = _attacks.ScalarAttack()
    if atk.needs_training:
        raise ValueError(f"attack {atk.name!r} learns from data and needs a Split strategy, got {strategy!r}")
    s0, s1 = _scores(atk, out0), _scores(atk, out1)
    est = estimate_epsilon(s1, s0, delta=delta, confidence=confidence, strategy=strategy, seed=seed)
    return _result(est, epsilon=epsilon, confidence=confidence, trials=min(len(out0), len(out1)), attack=atk.name,
                   seed=seed, wall_seconds=wall_seconds, name=name,
                   details={"roc": _roc_of_family(s1, s0, est.event)}, auc=auroc(s1, s0))


def _result(est: Estimate, *, epsilon, confidence, trials, attack, seed, wall_seconds, name, details,
            auc: float = float("nan")) -> AuditResult:
    tpr, fpr, tpr_lo, fpr_hi = _event_rates(est, confidence)
    return AuditResult(
        epsilon_claimed=epsilon,
        delta=est.delta,
        epsilon_lower_bound=est.epsilon_lower_bound,
        confidence=confidence,
        trials=trials,
        method=est.method,
        attack=attack,
        threshold=None if est.event is None else est.event.threshold,
        event=None if est.event is None else est.event.describe(),
        tpr=tpr,
        fpr=fpr,
        tpr_lower=tpr_lo,
        fpr_upper=fpr_hi,
        auroc=auc,
        p_value=p_value(est, epsilon),
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
    k_top, n_top, k_bot, n_bot = _top_first(est.event.top, est.k_in, est.n_in, est.k_out, est.n_out)
    return (k_top / n_top, k_bot / n_bot, float(clopper_pearson_lower(k_top, n_top, alpha / 2)),
            float(clopper_pearson_upper(k_bot, n_bot, alpha / 2)))


def _density_values(fn, outputs, name: str, ndim: int) -> np.ndarray:
    """``fn(outputs)`` checked: one value per output (``ndim`` 1) or one row of per-step values (``ndim`` 2)."""
    k = len(outputs)
    arr = np.asarray(fn(outputs), dtype=float)
    if arr.ndim != ndim or arr.shape[0] != k or (ndim == 2 and arr.shape[1] == 0):
        want = f"({k},)" if ndim == 1 else f"({k}, T) with T >= 1 steps"
        raise ValueError(f"{name} must return {'one value' if ndim == 1 else 'one row of per-step values'} per output, "
                         f"shape {want}; got {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError(f"{name} returned NaN at output {int(np.argwhere(np.isnan(arr))[0][0])}")
    return arr


def _whitebox_result(out0, out1, log_likelihood_ratio, *, epsilon, delta, confidence, seed, wall_seconds, name,
                     per_step: bool = False):
    """Audit with the target's exact log-likelihood ratio: the betting hockey-stick estimator, or with
    ``per_step`` the composition estimator of per-step losses (:mod:`privbound.audit.composition`).

    The white-box bound is used alone, not the better of it and a threshold test
    (that would need a union bound and cost power): with an exact density it dominates
    every threshold test. Pass an explicit ``strategy`` to get the threshold test on
    ``-L`` instead, whose validity does not depend on the density being exact.
    """
    n = min(len(out0), len(out1))
    label = "step_log_likelihood_ratio" if per_step else "log_likelihood_ratio"
    l0, l1 = (_density_values(log_likelihood_ratio, o, f"{label}({nm})", 2 if per_step else 1)
              for o, nm in ((out0, "out0"), (out1, "out1")))
    if per_step:
        from privbound.audit.composition import composed_epsilon_lower_bound

        wb = composed_epsilon_lower_bound(l0, l1, delta=delta, confidence=confidence, epsilon_claimed=epsilon)
        l0, l1 = l0.sum(axis=1), l1.sum(axis=1)  # the outputs' privacy losses, for the ROC
        attack = "white-box-step-likelihood-ratio"
    else:
        from privbound.audit.whitebox import whitebox_epsilon_lower_bound

        wb = whitebox_epsilon_lower_bound(l0, l1, delta=delta, confidence=confidence, epsilon_claimed=epsilon)
        attack = "white-box-likelihood-ratio"
    s0, s1 = (np.clip(np.nan_to_num(-v, posinf=1e300, neginf=-1e300), -1e300, 1e300) for v in (l0, l1))
    p = wb.p_value if math.isfinite(wb.p_value) else (0.0 if wb.epsilon_lower_bound > epsilon else 1.0)
    return AuditResult(
        epsilon_claimed=epsilon, delta=delta, epsilon_lower_bound=float(wb.epsilon_lower_bound),
        confidence=confidence, trials=n, method=wb.method, attack=attack,
        threshold=None, event=None, tpr=float("nan"), fpr=float("nan"), tpr_lower=0.0, fpr_upper=1.0,
        auroc=auroc(s1, s0), p_value=float(min(1.0, max(p, 0.0))), violation=bool(wb.epsilon_lower_bound > epsilon),
        seed=seed, wall_seconds=wall_seconds, n_evaluation=n, name=name,
        details={"roc": _roc_of_family(s1, s0, None),
                 **({} if per_step else {"log_capital_at_bound": wb.log_capital_at_bound}), **wb.details},
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
    step_log_likelihood_ratio: Callable | None = None,
    attack: AttackSpec = "auto",
    strategy: Split | AllThresholds | Explicit | None = None,
    output_space: Sequence[Any] | None = None,
    float_audit: bool = False,
    float_centers: tuple[Any, Any] | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    name: str | None = None,
    cache: Any = None,
) -> AuditResult:
    """Audit ``mechanism`` on the neighbouring pair ``(d0, d1)`` against a claimed (epsilon, delta).

    ``mechanism`` is ``mechanism(data, rng) -> output`` or has ``sample(data, rng, size)``.
    Runs ``trials`` outputs on each dataset (seeded chunks, ``n_jobs`` joblib workers),
    scores them with ``score`` / ``log_likelihood_ratio`` / ``step_log_likelihood_ratio`` / ``attack`` (an
    :class:`~privbound.audit.attacks.Attack`, or ``"threshold"``, ``"plug-in"``, ``"single-pattern"``,
    ``"logistic"``, ``"boosting"``, or ``"auto"``: the portfolio, chosen on held-out trials;
    see :func:`audit_outputs`), and returns an :class:`AuditResult` whose
    ``epsilon_lower_bound`` holds with probability at least ``confidence``. ``violation``
    is true when that bound exceeds the claimed epsilon. ``output_space`` (default: the
    mechanism's own ``output_space`` attribute, if any) declares the values a mechanism
    with few possible outputs can return; up to five are audited on all trials.
    ``float_audit=True`` looks for a floating-point leak instead (:func:`audit_outputs`); the
    exact answers default to the mechanism's ``answer(d0)``, ``answer(d1)`` when it has them.

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
        step_log_likelihood_ratio=step_log_likelihood_ratio,
        strategy=strategy,
        output_space=getattr(mechanism, "output_space", None) if output_space is None else output_space,
        float_audit=float_audit,
        float_centers=_exact_answers(mechanism, d0, d1) if float_audit and float_centers is None else float_centers,
        seed=seed,
        name=name,
    )
    return replace(result, wall_seconds=time.perf_counter() - start,
                   details={**result.details, "sampling_seconds": wall})


def _exact_answers(mechanism: Any, d0: Any, d1: Any) -> tuple[Any, Any] | None:
    """``(f(d0), f(d1))`` when the mechanism tells its exact answers (privbound mechanisms do), else None."""
    answer = getattr(mechanism, "answer", None)
    if not callable(answer):
        return None
    return answer(d0), answer(d1)

