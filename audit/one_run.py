"""One-run privacy auditing.

* Steinke, Nasr & Jagielski 2023, "Privacy auditing with one (1) training run"
  (NeurIPS 2023, arXiv:2305.08846): m canaries, each included independently with probability 1/2
  (``S_i in {-1, +1}``), a single run of the mechanism, scores after the run; the
  auditor guesses "+1" for the ``k_plus`` highest scores, "-1" for the ``k_minus``
  lowest and abstains on the rest. Thm 3.1 / Prop. 5.7 (delta = 0: the number of
  correct guesses ``v`` among ``r`` guesses is stochastically dominated by
  ``Binomial(r, e^eps/(1 + e^eps))``) and its delta > 0 extension (their appendix code):

      P[W >= v] <= beta + 2 m delta max_{1<=i<=v} (P[Bin >= v - i] - beta) / i,
      beta = P[Bin(r, e^eps/(1 + e^eps)) >= v].

  The epsilon lower bound is the largest eps whose p-value is <= 1 - confidence.
* Mahloujifar, Melis & Chaudhuri 2024, "Auditing f-differential privacy in one run"
  (arXiv:2410.22235): the same game analysed with the whole trade-off curve of the
  hypothesised mechanism. We use the Gaussian trade-off curve ``G_mu`` with ``mu = 1/sigma``,
  ``sigma = get_sigma_gaussian(eps, delta)`` (the Gaussian mechanism calibrated to (eps,
  delta)), and their recursive bound on the probability of ``v`` correct guesses out of
  ``r`` one-sided guesses (``k_minus = 0``), as in ``jax_privacy.auditing``
  (``audit_rh_with_cap``). A rejection refutes "the mechanism is at least as private as the
  Gaussian mechanism calibrated to (eps, delta)", which is the claim of Gaussian-noise
  targets; for a pure-DP claim use the Steinke--Nasr--Jagielski bound.

Choice of the number of guesses. The guesses may depend on the scores arbitrarily but
not on S. Choosing ``k`` by looking at which guesses were correct is not allowed, so
:func:`one_run_audit` evaluates a fixed grid of ``(k_plus, k_minus)`` and corrects by
Bonferroni (level ``(1 - confidence)/len(grid)`` for each).

Canary designs: :func:`one_run_audit_target` runs the reference design -- canary i is one
independent release of the target mechanism on d1 (included) or d0 (excluded), i.e. the
"training run" is the product mechanism over m canaries, which is (eps, delta)-DP with
respect to each canary when the target is (Steinke et al. Sec. 6, the idealised setting).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from scipy import optimize, special

from privbound.audit.attacks.choice import single_attack
from privbound.audit.engine import run_trials
from privbound.learners.mechanisms import gaussian_delta
from privbound._validation import check_confidence, check_delta, check_int, check_real

__all__ = [
    "OneRunResult",
    "one_run_p_value",
    "one_run_epsilon_lower_bound",
    "fdp_one_run_epsilon_lower_bound",
    "guesses_from_scores",
    "one_run_audit",
    "one_run_audit_target",
    "default_guess_grid",
    ]

_EPS_MAX = 50.0


def _check_counts(m, r, v):
    m = check_int(m, "m", low=1)
    r = check_int(r, "r", low=0, high=m)
    v = check_int(v, "v", low=0, high=r)
    return m, r, v


def one_run_p_value(m: int, r: int, v: int, epsilon: float, delta: float = 0.0) -> float:
    """P-value of ">= v correct out of r guesses" under an (epsilon, delta)-DP mechanism (SNJ 2023).

    Worked example (delta = 0): r = 1, v = 1 gives p = e^eps/(1 + e^eps), the accuracy of
    eps-randomized response.
    """
    m, r, v = _check_counts(m, r, v)
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    delta = check_delta(delta)
    return _p_value(m, r, v, epsilon, delta)


def _p_value(m: int, r: int, v: int, epsilon: float, delta: float) -> float:
    # P[Bin(r, q) >= k] = bdtrc(k - 1, r, q) (scipy.special, fast and accurate in the tail).
    if v == 0:
        return 1.0
    q = float(special.expit(epsilon))
    beta = float(special.bdtrc(v - 1, r, q)) if v <= r else 0.0
    if delta == 0.0:
        return min(beta, 1.0)
    i = np.arange(1, v + 1)
    k = v - i  # P[Bin >= k]; k = 0 gives probability 1
    cum = np.where(k > 0, special.bdtrc(np.maximum(k - 1, 0), r, q), 1.0) - beta
    alpha = float(np.max(cum / i, initial=0.0))
    return float(min(beta + alpha * delta * 2 * m, 1.0))


def _largest_rejected(objective: Callable[[float], float]) -> float:
    """Largest eps with objective(eps) > 0, for an objective decreasing in eps (0 if none).

    Reported at the rejected end of the final bracket, so the returned eps is rejected.
    """
    if not objective(0.0) > 0:
        return 0.0
    lo, hi = 0.0, 1.0
    while objective(hi) > 0:
        lo, hi = hi, 2 * hi
        if hi > _EPS_MAX:
            return lo
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if objective(mid) > 0:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-5:
            break
    return lo


def one_run_epsilon_lower_bound(m: int, r: int, v: int, *, delta: float = 0.0, confidence: float = 0.95) -> float:
    """Largest eps rejected by :func:`one_run_p_value` at level ``1 - confidence`` (one fixed guess rule)."""
    m, r, v = _check_counts(m, r, v)
    delta = check_delta(delta)
    alpha = 1.0 - check_confidence(confidence)
    if r == 0:
        return 0.0
    return _largest_rejected(lambda e: alpha - _p_value(m, r, v, e, delta))


def _gaussian_epsilon(mu: float, delta: float) -> float:
    """The epsilon at which mu-GDP (the Gaussian mechanism with sigma = 1/mu) has delta(eps) = delta.

    Solves delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) = delta
    (Balle & Wang 2018, Thm 8; :func:`privbound.learners.mechanisms.gaussian_delta`), decreasing in eps.
    """
    if mu <= 0:
        return 0.0
    sigma = 1.0 / mu
    f = lambda e: gaussian_delta(sigma, e) - delta
    if f(0.0) <= 0:
        return 0.0
    hi = 1.0
    while f(hi) > 0:
        hi *= 2
        if hi > 1e4:
            return math.inf
    return float(optimize.brentq(f, 0.0, hi, xtol=1e-9))


def _fdp_objective(m: int, r: int, v: int, mu: float, alpha: float) -> float:
    """Mahloujifar et al. 2024 recursion (one-sided guesses); positive when the f-DP claim is refuted."""
    if math.isinf(mu):
        return -1.0
    def inv(x):
        return float(special.ndtr(special.ndtri(x) - mu))
    rr = alpha * v / m
    h = alpha * (r - v) / m
    for i in range(v - 1, -1, -1):
        h_new = max(h, inv(rr))
        if h_new == h:
            break
        rr = min(rr + (i / (r - i)) * (h_new - h), 1.0)
        h = h_new
    return rr + h - r / m


def fdp_one_run_epsilon_lower_bound(m: int, r: int, v: int, *, delta: float, confidence: float = 0.95) -> float:
    """Largest eps whose calibrated Gaussian trade-off curve is refuted by (r guesses, v correct) (MMC 2024)."""
    m, r, v = _check_counts(m, r, v)
    delta = check_real(delta, "delta", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    alpha = 1.0 - check_confidence(confidence)
    if r == 0 or v == 0:
        return 0.0

    # The refutation is monotone in mu = 1/sigma (a larger mu is a weaker claim); search the
    # largest refuted mu, then report the epsilon of that Gaussian curve at delta.
    mu = _largest_rejected(lambda u: _fdp_objective(m, r, v, max(u, 1e-12), alpha))
    return _gaussian_epsilon(mu, delta) if mu > 0 else 0.0


def guesses_from_scores(scores, k_plus: int, k_minus: int = 0) -> np.ndarray:
    """Guesses in {-1, 0, +1}: +1 for the ``k_plus`` highest scores, -1 for the ``k_minus`` lowest.

    Ties are broken by canary index (a rule that does not look at S).
    """
    s = np.asarray(scores, dtype=float)
    n = s.size
    k_plus = check_int(k_plus, "k_plus", low=0, high=n)
    k_minus = check_int(k_minus, "k_minus", low=0, high=n - k_plus)
    order = np.argsort(-s, kind="stable")
    g = np.zeros(n, dtype=int)
    g[order[:k_plus]] = 1
    if k_minus:
        g[order[n - k_minus:]] = -1
    return g


def default_guess_grid(m: int, one_sided: bool = False) -> tuple[tuple[int, int], ...]:
    """A fixed grid of (k_plus, k_minus): r = 1%, 2%, 5%, 10%, 20%, 50%, 100% of m guesses."""
    out = []
    for frac in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0):
        r = max(1, int(round(frac * m)))
        pair = (r, 0) if one_sided else (r - r // 2, r // 2)
        if pair not in out:
            out.append(pair)
    return tuple(out)


def _fdp_grid(m: int) -> tuple[tuple[int, int], ...]:
    """One-sided rules for the f-DP refinement: r = 2%, 5%, 10%, 20% of m guesses, all "+1"."""
    out = []
    for frac in (0.02, 0.05, 0.1, 0.2):
        pair = (max(1, int(round(frac * m))), 0)
        if pair not in out:
            out.append(pair)
    return tuple(out)


@dataclass(frozen=True)
class OneRunResult:
    """Verdict of a one-run audit (Steinke, Nasr & Jagielski 2023; f-DP refinement of Mahloujifar et al. 2024)."""

    epsilon_lower_bound: float  # best of the SNJ bounds over the guess grid (Bonferroni)
    epsilon_fdp_lower_bound: float | None  # Gaussian f-DP refinement (None when delta = 0)
    confidence: float
    delta: float
    m: int
    k_plus: int  # of the best guess rule
    k_minus: int
    r: int
    v: int
    n_rules: int
    method: str
    epsilon_claimed: float | None = None
    details: dict = field(default_factory=dict, compare=False)

    @property
    def violation(self) -> bool:
        return self.epsilon_claimed is not None and max(
            self.epsilon_lower_bound, self.epsilon_fdp_lower_bound or 0.0
        ) > self.epsilon_claimed

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        out = asdict(self)
        out["violation"] = self.violation
        return out

    def summary(self) -> str:
        lines = [
            f"one-run audit ({self.m} canaries, {self.n_rules} guess rules, Bonferroni)",
            f"  epsilon lower bound (SNJ 2023)  : {self.epsilon_lower_bound:.4f} at {self.confidence:.1%}"
            f" (best rule k+={self.k_plus}, k-={self.k_minus}: {self.v}/{self.r} correct)",
        ]
        if self.epsilon_fdp_lower_bound is not None:
            lines.append(f"  f-DP refinement (MMC 2024)      : {self.epsilon_fdp_lower_bound:.4f}")
        if self.epsilon_claimed is not None:
            lines.append(f"  claimed epsilon                 : {self.epsilon_claimed:g} -> "
                         + ("VIOLATION" if self.violation else "consistent"))
        return "\n".join(lines)


def one_run_audit(
    scores,
    included,
    *,
    delta: float = 0.0,
    confidence: float = 0.95,
    grid: Sequence[tuple[int, int]] | None = None,
    fdp: bool = False,
    epsilon_claimed: float | None = None,
) -> OneRunResult:
    """One-run audit from canary ``scores`` (higher = "included") and the secret inclusion bits.

    ``included`` is boolean (S_i = +1 when true). ``fdp=True`` adds the Mahloujifar et al.
    refinement against the Gaussian trade-off curve calibrated to (epsilon, delta): set it
    only when the claim *is* that curve (Gaussian-noise mechanisms); it is not a test of
    a generic (epsilon, delta) claim. Every guess rule of ``grid`` (default
    :func:`default_guess_grid`) is tested at level ``(1 - confidence)/(number of tests)``,
    where the f-DP refinement (when ``fdp`` and delta > 0) counts as one extra test per
    one-sided rule; the reported bounds are the best over the rules. Correct guesses are
    counted as ``guess == S``.
    """
    s = np.asarray(scores, dtype=float)
    inc = np.asarray(included, dtype=bool)
    if s.ndim != 1 or s.shape != inc.shape or s.size == 0:
        raise ValueError(f"scores and included must be 1-d of equal length, got {s.shape} and {inc.shape}")
    if np.isnan(s).any():
        raise ValueError(f"scores must not be NaN (entry {int(np.flatnonzero(np.isnan(s))[0])} is); +-inf are allowed: "
                         "only their order matters")
    delta = check_delta(delta)
    confidence = check_confidence(confidence)
    m = s.size
    rules = tuple(default_guess_grid(m) if grid is None else grid)
    if not rules:
        raise ValueError("grid must contain at least one (k_plus, k_minus) rule")
    use_fdp = fdp and delta > 0
    fdp_rules = list(_fdp_grid(m)) if use_fdp else []
    n_tests = len(rules) + len(fdp_rules)
    level = 1.0 - (1.0 - confidence) / n_tests
    truth = np.where(inc, 1, -1)
    best = (0.0, rules[0], 0, 0)
    for kp, km in rules:
        g = guesses_from_scores(s, kp, km)
        r = int(np.count_nonzero(g))
        v = int(np.count_nonzero(g == truth))
        e = one_run_epsilon_lower_bound(m, r, v, delta=delta, confidence=level)
        if e > best[0] or (best[0] == 0.0 and (kp, km) == rules[0]):
            best = (e, (kp, km), r, v)
    eps_fdp = None
    if use_fdp:
        eps_fdp = 0.0
        for kp, km in fdp_rules:
            g = guesses_from_scores(s, kp, km)
            r = int(np.count_nonzero(g))
            v = int(np.count_nonzero(g == truth))
            eps_fdp = max(eps_fdp, fdp_one_run_epsilon_lower_bound(m, r, v, delta=delta, confidence=level))
    e, (kp, km), r, v = best
    return OneRunResult(
        epsilon_lower_bound=float(e),
        epsilon_fdp_lower_bound=eps_fdp,
        confidence=confidence,
        delta=delta,
        m=m,
        k_plus=kp,
        k_minus=km,
        r=r,
        v=v,
        n_rules=n_tests,
        method="one-run/steinke-nasr-jagielski-2023" + ("+fdp-mahloujifar-2024" if use_fdp else ""),
        epsilon_claimed=epsilon_claimed,
    )


# ------------------------------------------------------------------ targets


def _target_score(target, seed: int) -> Callable[[np.ndarray], np.ndarray]:
    """The score used for the canaries of ``target``: -LLR, the target's score, or an attack fitted on pilot runs.

    The pilot runs use their own seed stream (``SeedSequence([seed, 2])``), independent
    of the canaries' outputs and inclusion bits.
    """
    if getattr(target, "log_likelihood_ratio", None) is not None:
        f = target.log_likelihood_ratio
        return lambda o: -np.asarray(f(o), dtype=float)
    if getattr(target, "score", None) is not None:
        return lambda o: np.asarray(target.score(o), dtype=float)
    pilot_seed = int(np.random.SeedSequence([seed, 2]).generate_state(1)[0])
    pilot = run_trials(target.mechanism, target.d0, target.d1, 2000, seed=pilot_seed)
    atk = target.attack() if getattr(target, "attack", None) is not None else single_attack(pilot.out0, pilot.out1)
    atk.fit(pilot.out0, pilot.out1)
    s0, s1 = atk.score(pilot.out0), atk.score(pilot.out1)
    sign = 1.0 if np.mean(s1) >= np.mean(s0) else -1.0
    return lambda o: sign * atk.score(o)


def one_run_audit_target(
    target,
    m: int,
    seed: int = 0,
    *,
    confidence: float = 0.95,
    grid: Sequence[tuple[int, int]] | None = None,
    n_jobs: int | None = 1,
) -> OneRunResult:
    """One-run audit of a registered target with ``m`` canaries (``privbound audit NAME --one-run --canaries M``).

    Canary design (reference, "idealised" setting of Steinke et al.): canary i is one
    independent release of ``target.mechanism`` on ``target.d1`` if included (probability
    1/2, drawn from ``SeedSequence([seed, 1])``) and on ``target.d0`` otherwise. Outputs
    come from the chunk engine (:func:`privbound.audit.engine.run_trials` with seed ``seed``: m
    outputs per side, of which each canary keeps the side its bit selects -- outputs are
    independent of the bits, so this is the product mechanism exactly). Scores: the
    target's -log-likelihood ratio, its score, or an attack fitted on separate pilot runs.
    """
    m = check_int(m, "m", low=2)
    check_int(seed, "seed", low=0)
    rng_bits = np.random.default_rng(np.random.SeedSequence([seed, 1]))
    included = rng_bits.random(m) < 0.5
    outs = run_trials(target.mechanism, target.d0, target.d1, m, seed=seed, n_jobs=n_jobs)
    pick = included.reshape((m,) + (1,) * (outs.out0.ndim - 1))
    outputs = np.where(pick, outs.out1, outs.out0) if outs.out0.dtype != object else np.array(
        [b if i else a for a, b, i in zip(outs.out0, outs.out1, included)], dtype=object)
    score = _target_score(target, seed)
    scores = np.asarray(score(outputs), dtype=float)
    res = one_run_audit(scores, included, delta=target.delta, confidence=confidence, grid=grid,
                        fdp=getattr(target, "family", None) == "gaussian", epsilon_claimed=target.epsilon)
    res.details.update(target=target.name, seed=seed, design="independent release per canary")
    return res
