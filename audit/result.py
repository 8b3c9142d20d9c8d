"""The verdict of an audit: :class:`AuditResult`, and :func:`json_safe` for its JSON form.

:func:`certifiable_epsilon` states an audit's power: the largest epsilon lower bound that the best possible
test could certify, in expectation, from ``n`` evaluation trials per dataset at the audit's confidence,
against a mechanism spending ``OVERSPEND`` times the claim -- a Gaussian mechanism for a claim with
delta > 0, a Laplace mechanism for pure DP (one-sided Clopper--Pearson bounds at the expected counts of
each threshold test on the likelihood ratio, the best threshold taken). When that is at most the claim,
the audit could not have seen such a violation and its verdict is ``inconclusive``, not ``holds``.
"""

from __future__ import annotations

import enum
import json
import math
from dataclasses import asdict, dataclass, field
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

__all__ = ["AuditResult", "json_safe", "certifiable_epsilon", "joint_confidence", "AUDIT_STATUSES", "OVERSPEND",
           "COUNT_BASED", "PRIVACY_LOSS_BASED"]

AUDIT_STATUSES = ("holds", "violated", "inconclusive")
OVERSPEND = 2.0
"""The overspend an audit must have been able to see for "holds": a mechanism spending twice its claim (a noise
scale halved, a sensitivity factor of 2 forgotten), as the nightly's tight verdict asks of the tight epsilon."""
COUNT_BASED = ("black-box", "output-space", "floating-point")
"""The estimators whose bound comes from event counts, so that the trials cap what they can certify."""
PRIVACY_LOSS_BASED = ("white-box", "composition")
"""The estimators whose bound tests the law of the privacy loss, with no event of their own."""


@lru_cache(maxsize=64)
def _gaussian_tests(epsilon: float, delta: float):
    """(FPR, TPR) of the threshold tests of the Gaussian mechanism whose (epsilon, delta) curve passes through
    the given point (Gaussian-DP mu solved from delta(epsilon; mu) = delta)."""
    from scipy import optimize, stats

    def excess(mu: float) -> float:
        return (stats.norm.cdf(-epsilon / mu + mu / 2)
                - math.exp(epsilon + stats.norm.logcdf(-epsilon / mu - mu / 2)) - delta)

    mu = optimize.brentq(excess, 1e-6, 2.0 * math.sqrt(2.0 * epsilon) + 40.0)
    t = np.linspace(-3.0, mu + 12.0, 300)
    return stats.norm.sf(t), stats.norm.sf(t - mu)


def joint_confidence(*confidences: float) -> float:
    """The confidence at which statements each valid at one of ``confidences`` hold together: ``1 - sum(1 - c)``,
    at least 0 (Bonferroni's inequality; no independence assumed, since they are read off the same outputs)."""
    return max(0.0, 1.0 - sum(1.0 - float(c) for c in confidences))


def certifiable_epsilon(n: int, confidence: float, epsilon: float, delta: float,
                        overspend: float = OVERSPEND) -> float:
    """The largest epsilon lower bound any attack can certify, in expectation, from ``n`` evaluation trials per
    dataset at ``confidence``, against a mechanism spending ``overspend`` x ``epsilon`` at ``delta`` (Gaussian
    for delta > 0, Laplace for delta = 0): an upper bound on the power of a count-based audit."""
    from scipy import stats

    if n < 1:
        return 0.0
    spent = overspend * epsilon
    if delta > 0:
        fpr, tpr = _gaussian_tests(spent, delta)
    else:  # Laplace: P_1(X > t) = e^spent P_0(X > t) for every t past the sensitivity
        fpr = np.geomspace(1e-3 / n, 0.5 * math.exp(-spent), 300)
        tpr = math.exp(spent) * fpr
    alpha = 1.0 - confidence
    k1, k0 = n * tpr, n * fpr
    tpr_lower = stats.beta.ppf(alpha, np.maximum(k1, 1e-12), n - k1 + 1)
    fpr_upper = stats.beta.ppf(1.0 - alpha, k0 + 1, np.maximum(n - k0, 1e-12))
    with np.errstate(divide="ignore", invalid="ignore"):
        bounds = np.log(np.maximum(tpr_lower - delta, 0.0) / fpr_upper)
    bounds = bounds[np.isfinite(bounds)]
    return float(max(0.0, bounds.max())) if bounds.size else 0.0


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
        The statistical method within the estimator (e.g. ``"clopper-pearson/split(0.2)"``).
    estimator : str
        The estimator's name (:data:`privbound.audit.estimators.ESTIMATORS`): ``"black-box"``,
        ``"output-space"``, ``"white-box"``, ``"composition"`` or ``"floating-point"``.
    attack : str
        The test statistic that scored the outputs (an attack's name).
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
    epsilon_tight : float or None
        The tightest epsilon of what the audited code runs (its accountant under its own relation, or an
        exact computation; ``Target.tight_epsilon``), when the target states one.
    tight_source : str or None
        How ``epsilon_tight`` was computed.
    tight_violation : bool
        ``epsilon_lower_bound > epsilon_tight``: the code leaks more than what it runs should, even when
        the (looser) claim holds.
    float_audit : bool
        The audit included the floating-point attack (:mod:`privbound.audit.attacks.floating`): a
        violation then says the implementation is float-unsafe at the claimed epsilon.
    tradeoff : dict or None
        The empirical trade-off curve of the chosen attack's test family on the evaluation outputs, its
        simultaneous confidence band and the certified points (:class:`privbound.audit.tradeoff.TradeOffCurve`
        as a dict: ``alpha``, ``beta``, ``alpha_lower``, ``alpha_upper``, ``beta_lower``, ``beta_upper``,
        ``mu_lower_bound``, ``confidence``, ``null``, ``alternative``, ``n_null``, ``n_alternative``).
    mu_lower_bound : float or None
        Gaussian-DP: the mechanism is not mu-GDP for any mu below it (at the curve's confidence), read from
        the certified trade-off curve. A statement of its own: with ``epsilon_lower_bound`` it holds jointly at
        :func:`joint_confidence` of the two confidences (``summary()`` prints both).
    stop_reason : str or None
        For an audit with ``trials="auto"``: why it stopped (``trials`` is then the trials it spent per dataset).
    floating_point : AuditResult or None
        The floating-point attack's own verdict, beside the mathematical one, when it ran by default
        (``float_audit="auto"`` on float outputs); its confidence is its own share of the audit's.
    details : dict
        Everything else: the ROC of the chosen event family, timings, what the target records.
    status : str
        (property) ``"violated"`` when the bound exceeds the claim; ``"inconclusive"`` when a count-based
        audit (:data:`COUNT_BASED`) could not have seen a mechanism spending twice its claim at its trials
        (:attr:`power`); ``"holds"`` otherwise.
    any_violation : bool
        (property) ``violation``, or the floating-point verdict beside it (``floating_point``) found one: what a
        gate (the CLI's exit code, the nightly's status) reads, since a leak in floating point is a leak.
    flags_tightest : bool
        (property) The audit's verdict against the tightest epsilon it states: ``tight_violation`` when it has
        ``epsilon_tight``, else ``violation`` (how a learner mutant is judged caught).
    power : dict or None
        (property) For a count-based audit: ``epsilon_certifiable`` (:func:`certifiable_epsilon` at its
        evaluation trials), the ``alternative`` it is computed against and, when inconclusive,
        ``trials_needed`` -- the trials per dataset at which it would exceed the claim; ``basis`` names the
        argument to raise (``"trials"``, or ``"max_trials"`` for a ``trials="auto"`` audit); ``at_budget`` is true
        for a ``trials="auto"`` audit that stopped by its own rule: it would have sampled on to its budget against
        a larger overspend, so its power is the budget's evaluation part's.
    """

    epsilon_claimed: float
    delta: float
    epsilon_lower_bound: float
    confidence: float
    trials: int
    method: str
    estimator: str
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
    epsilon_tight: float | None = None
    tight_source: str | None = None
    tight_violation: bool = False
    float_audit: bool = False
    tradeoff: dict[str, Any] | None = None
    mu_lower_bound: float | None = None
    stop_reason: str | None = None
    floating_point: "AuditResult | None" = None
    details: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def power(self) -> dict[str, Any] | None:
        if self.estimator not in COUNT_BASED or self.epsilon_claimed <= 0:
            return None
        n, conf, eps, delta = self.n_evaluation, self.confidence, self.epsilon_claimed, self.delta
        sequential = self.details.get("sequential") or {}
        trials, basis, own_rule = self.trials, "max_trials" if sequential else "trials", False
        if sequential.get("stopped_by_rule"):
            # stopped by its own rule: it would have gone on to its budget against a larger overspend, so the
            # audit's power is the budget's evaluation part's
            n, trials, own_rule = sequential["budget_evaluation"], sequential["max_trials"], True
        kind = "Gaussian" if delta > 0 else "Laplace"
        power = {"epsilon_certifiable": certifiable_epsilon(n, conf, eps, delta), "overspend": OVERSPEND,
                 "alternative": f"a {kind} mechanism at epsilon {OVERSPEND * eps:.3g}" + (
                     f" (delta {delta:g})" if delta > 0 else ""), "trials_needed": None, "basis": basis,
                 "at_budget": own_rule}
        if power["epsilon_certifiable"] <= eps:
            share = n / max(trials, 1)  # the evaluation part of each dataset's trials
            hi = max(2 * n, 16)
            while certifiable_epsilon(hi, conf, eps, delta) <= eps and hi < 2**40:
                hi *= 2
            lo = hi // 2
            while hi - lo > max(1, lo // 50):
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if certifiable_epsilon(mid, conf, eps, delta) <= eps else (lo, mid)
            need = hi / share
            power["trials_needed"] = int(float(f"{need:.2g}") if float(f"{need:.2g}") >= need else
                                         float(f"{need * 1.05:.2g}"))
        return power

    @property
    def any_violation(self) -> bool:
        return self.violation or (self.floating_point is not None and self.floating_point.violation)

    @property
    def flags_tightest(self) -> bool:
        return self.tight_violation if self.epsilon_tight is not None else self.violation

    @cached_property
    def status(self) -> str:
        if self.violation:
            return "violated"
        power = self.power
        return "inconclusive" if power is not None and power["epsilon_certifiable"] <= self.epsilon_claimed else "holds"

    def attacks_run(self) -> list[str]:
        """The attacks that scored the outputs (those the portfolio tried on the selection part, then the chosen
        one), in order, each once."""
        tried = [a.get("attack") for a in (self.details.get("attack_selection") or []) if isinstance(a, dict)]
        return list(dict.fromkeys([*tried, self.attack]))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (non-finite floats become None), with :attr:`status` and :attr:`power` (the
        floating-point verdict's too)."""
        fp = None if self.floating_point is None else self.floating_point.to_dict()
        return json_safe({**asdict(self), "floating_point": fp, "status": self.status, "power": self.power})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    def __repr__(self) -> str:
        name = f"{self.name!r}, " if self.name else ""
        return (f"AuditResult({name}claimed=({self.epsilon_claimed:g}, {self.delta:g}), "
                f"epsilon_lower_bound={self.epsilon_lower_bound:.4g}, violation={self.violation}, "
                f"trials={self.trials}, estimator={self.estimator!r}, attack={self.attack!r})")

    def summary(self) -> str:
        """A readable paragraph, statsmodels-style: the verdict first (holds, VIOLATED or inconclusive)."""
        power = self.power
        if self.float_audit:
            verdict = ("float-unsafe at the claimed epsilon" if self.violation else
                       "inconclusive: too few trials to see a floating-point leak" if self.status == "inconclusive"
                       else "no floating-point leak found")
        elif self.status == "inconclusive":
            at = (f"up to its budget of {self.details['sequential']['max_trials']} trials" if power["at_budget"]
                  else f"at {self.trials} trials")
            verdict = (f"inconclusive: {at} this audit can certify at most eps_hat = "
                       f"{power['epsilon_certifiable']:.3g} against {power['alternative']}, not above the claim; "
                       f"try {power['basis']}={power['trials_needed']} or more")
        else:
            verdict = "VIOLATED" if self.violation else "holds"
        if self.tight_violation and not self.violation and not self.float_audit:
            verdict = ("holds, but ABOVE the tight epsilon of what the code runs" if verdict == "holds" else
                       f"{verdict}; ABOVE the tight epsilon of what the code runs")
        if self.floating_point is not None and not self.float_audit:
            verdict += ("; FLOAT-UNSAFE in floating point" if self.floating_point.violation else
                        "; floating point inconclusive" if self.floating_point.status == "inconclusive" else
                        "; no floating-point leak found")
        name = f"{self.name}: " if self.name else ""
        lines = [
            f"{name}{'floating-point ' if self.float_audit else ''}privacy audit -- {verdict}",
            f"  claimed             : ({self.epsilon_claimed:g}, {self.delta:g})-DP",
        ]
        if power is not None and self.status != "inconclusive":
            at = "its trial budget (it stopped by its own rule)" if power["at_budget"] else "these trials"
            lines.append(f"  power               : at most eps_hat = {power['epsilon_certifiable']:.3g} certifiable at "
                         f"{at} against {power['alternative']} (twice the claim)")
        floating = ("the floating-point attack ran" if self.float_audit or getattr(self, "floating_point", None)
                    else "the floating-point attack did not run (estimator=\"floating-point\"; CLI: --float)")
        lines.append(f"  attacks             : {', '.join(self.attacks_run())}; {floating}")
        if self.epsilon_tight is not None:
            verdict_tight = "EXCEEDED" if self.tight_violation else "not exceeded"
            lines.append(f"  tight epsilon       : {self.epsilon_tight:.4g} ({self.tight_source}) -- {verdict_tight}")
        if self.accountant_epsilon:
            tighter = ", ".join(f"{k.upper()} {v:.4g}" for k, v in sorted(self.accountant_epsilon.items()))
            lines.append(f"  accountant epsilon  : {tighter} (dp_accounting, same delta)")
        if math.isinf(self.epsilon_lower_bound):
            bound = f"  epsilon lower bound : inf at {self.confidence:.1%} confidence"
            if self.details.get("unbounded"):
                bound += f" ({self.details['unbounded']})"
        else:
            bound = (f"  epsilon lower bound : {self.epsilon_lower_bound:.4f} at {self.confidence:.1%} confidence"
                     f" ({self.epsilon_lower_bound / self.epsilon_claimed:.1%} of the claim"
                     + ("" if not self.epsilon_tight else
                        f", {self.epsilon_lower_bound / self.epsilon_tight:.1%} of the tight epsilon") + ")")
        lines += [
            bound,
            f"  p-value (claim holds): {self.p_value:.3g}",
            f"  trials              : {self.trials} per dataset ({self.n_evaluation} evaluated), seed {self.seed}",
            f"  estimator           : {self.estimator} (attack {self.attack}, method {self.method})",
        ]
        if self.estimator in PRIVACY_LOSS_BASED:
            lines.append(f"  event               : - (the bound tests the law of the privacy loss, not one event), "
                         f"AUROC {self.auroc:.3f}")
        else:
            lines += [
                f"  event               : {self.event or 'none (no distinguishing event found)'}",
                (f"  TPR / FPR           : {self.tpr:.4g} / {self.fpr:.4g}"
                 f" (CP bounds {self.tpr_lower:.4g} / {self.fpr_upper:.4g}), AUROC {self.auroc:.3f}"
                 if math.isfinite(self.tpr) and math.isfinite(self.fpr) else
                 f"  TPR / FPR           : - (no event told the datasets apart), AUROC {self.auroc:.3f}"),
            ]
        if self.mu_lower_bound is not None and self.mu_lower_bound <= 0.0:
            conf = (self.tradeoff or {}).get("confidence", self.confidence)
            lines.append(f"  Gaussian-DP mu      : - (the certified trade-off curve refutes no mu > 0 at {conf:.1%} "
                         "confidence)")
        elif self.mu_lower_bound is not None:
            conf = (self.tradeoff or {}).get("confidence", self.confidence)
            lines.append(f"  Gaussian-DP mu      : >= {self.mu_lower_bound:.4f} at {conf:.1%} confidence "
                         f"(from the certified trade-off curve; with the epsilon lower bound "
                         f"{self.epsilon_lower_bound:.4g}, both at {joint_confidence(self.confidence, conf):.1%})")
        elif "no_tradeoff_curve" in self.details:
            lines.append(f"  Gaussian-DP mu      : - (no trade-off curve: {self.details['no_tradeoff_curve']})")
        if self.stop_reason is not None:
            lines.append(f"  stopped             : after {self.trials} trials per dataset -- {self.stop_reason}")
        if self.floating_point is not None:
            lines.append(f"  floating point      : {self.floating_point.float_verdict()}")
        lines.append(f"  wall time           : {self.wall_seconds:.2f} s")
        return "\n".join(lines)

    def float_verdict(self) -> str:
        """One line on what the floating-point attack found (for a result with ``float_audit``)."""
        if self.violation:
            return (f"float-unsafe at the claimed epsilon: lower bound {self.epsilon_lower_bound:.4g} > "
                    f"{self.epsilon_claimed:g} at {self.confidence:.1%} confidence (attack {self.attack})")
        if self.status == "inconclusive":
            return (f"inconclusive: on {self.n_evaluation} evaluated trials the attack could certify at most "
                    f"{self.power['epsilon_certifiable']:.3g}, not above the claim (lower bound "
                    f"{self.epsilon_lower_bound:.4g}; try {self.power['basis']}={self.power['trials_needed']} or more)")
        return (f"no floating-point leak found: lower bound {self.epsilon_lower_bound:.4g} at "
                f"{self.confidence:.1%} confidence (attack {self.attack}, {self.n_evaluation} evaluated)")

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
