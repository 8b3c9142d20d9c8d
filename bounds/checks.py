"""Check machinery: results, budgets and the four check kinds.

A check is a function ``run(ctx: CheckContext) -> CheckResult``. The helpers here
turn raw observations into results with a status:

* :func:`inequality` -- a deterministic inequality over instances / adversaries;
* :func:`failure_rate` -- a probabilistic lemma: the observed failure count against
  the stated probability, one-sided Clopper--Pearson / exact binomial test;
* :func:`scaling` -- an OLS fit (statsmodels) of log y against log x, the slope's
  confidence interval compared with the theorem's exponent;
* :func:`exact` -- quadrature or enumeration compared with a closed form.

:func:`run_checks` runs many checks and applies Holm's step-down correction to the
p-values of the statistical checks, so that a run of many correct checks fails
with probability at most ``1 - confidence`` in total.
"""

from __future__ import annotations

import enum
import math
import time
import zlib
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Iterable, Sequence

import numpy as np
from scipy import stats

from privbound.audit.result import json_safe
from privbound._validation import check_confidence, check_int
from privbound.mutation import MUTANT_PROFILES

__all__ = [
    "PROFILES",
    "Profile",
    "CheckContext",
    "CheckResult",
    "check_seed",
    "derived_seed",
    "CheckStatus",
    "inequality",
    "failure_rate",
    "scaling",
    "exact",
    "inconclusive",
    "check",
    "run_checks",
    "holm",
    "MUTANT_PROFILES",
    "MutantResult",
    "run_mutants",
]


@dataclass(frozen=True)
class Profile:
    """A budget: ``scale`` multiplies each check's default number of trials."""

    name: str
    scale: float
    confidence: float  # family-wise confidence of a run of checks (Holm)


PROFILES = {
    "smoke": Profile("smoke", 0.1, 0.999),
    "default": Profile("default", 1.0, 0.999),
    "full": Profile("full", 10.0, 0.999),
}


def _profile(profile: str | Profile) -> Profile:
    if isinstance(profile, Profile):
        return profile
    try:
        return PROFILES[profile]
    except KeyError:
        raise ValueError(f"profile must be one of {sorted(PROFILES)}, got {profile!r}") from None


# Run seed S moves every seed of a run by S times this odd constant (round(2^31 / golden ratio)), modulo 2^31:
# run seeds 0..100000 give any one check seeds at least 9056 apart, so a check that seeds its i-th stream
# with seed + i (i small) never reuses, under one run seed, a stream of another.
_RUN_SEED_STRIDE = 1_327_217_885


def derived_seed(base: int, run_seed: int) -> int:
    """``base`` moved by the run seed: ``(base + run_seed * 1327217885) mod 2**31``; run seed 0 gives ``base``."""
    run_seed = check_int(run_seed, "run_seed", low=0)
    return (int(base) + run_seed * _RUN_SEED_STRIDE) % 2**31


def _stable_seed(*parts: str) -> int:
    return zlib.crc32("/".join(parts).encode()) & 0x7FFFFFFF


def check_seed(claim_id: str, check: str, run_seed: int = 0) -> int:
    """The seed check ``check`` of claim ``claim_id`` runs with in a run seeded ``run_seed``.

    The check's stable seed (CRC-32 of ``"<claim id>/<check>"``, 31 bits) moved by the run seed
    (:func:`derived_seed`): run seed 0 gives the stable seed itself, so a run at seed 0 repeats the checks
    exactly; another run seed gives every check other seeds, the same for its mutant runs.
    """
    return derived_seed(_stable_seed(claim_id, check), run_seed)


@dataclass
class CheckContext:
    """What a check gets: a seeded generator, the integer seed, the run's seed, the budget and n_jobs.

    ``seed`` is the check's own seed (:func:`check_seed`) and ``rng`` a generator seeded with it;
    ``run_seed`` is the seed of the whole run, for randomness shared by several checks
    (:meth:`shared_seed`).
    """

    rng: np.random.Generator
    seed: int
    profile: Profile
    n_jobs: int | None = 1
    run_seed: int = 0

    @classmethod
    def seeded(cls, seed: int, profile: str | Profile = "smoke", n_jobs: int | None = 1,
               run_seed: int = 0) -> "CheckContext":
        """The context the runner gives a check run with ``seed`` under ``profile``, in a run seeded ``run_seed``."""
        return cls(rng=np.random.default_rng(seed), seed=seed, profile=_profile(profile), n_jobs=n_jobs,
                   run_seed=check_int(run_seed, "run_seed", low=0))

    def shared_seed(self, base: int) -> int:
        """The seed of a simulation several checks share (or a check fixes): ``base`` at run seed 0, moved by the
        run seed as each check's own seed is (:func:`derived_seed`)."""
        return derived_seed(base, self.run_seed)

    def trials(self, default: int, *, minimum: int = 10) -> int:
        """The number of trials for this profile: ``default`` times the profile's scale."""
        return max(int(minimum), int(round(default * self.profile.scale)))


class CheckStatus(str, enum.Enum):
    """The verdict of a check."""

    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"

    def __str__(self) -> str:
        return self.value


_STATUS_ORDER = {CheckStatus.FAIL: 0, CheckStatus.INCONCLUSIVE: 1, CheckStatus.PASS: 2}


@dataclass(frozen=True, repr=False)
class CheckResult:
    """The result of one check of one claim.

    A check function returns one built by :func:`inequality`, :func:`failure_rate`,
    :func:`scaling`, :func:`exact` or :func:`inconclusive`; the runner adds the identity
    fields (claim, check, seed, wall time, errata).

    Attributes
    ----------
    status : CheckStatus
        Pass, fail or inconclusive (after Holm's correction, in a run of many checks).
    observed, bound : float
        The observed quantity and the bound it is compared with (``details["sense"]`` says
        which way); ``ratio`` is observed / bound.
    kind : str
        ``deterministic``, ``probabilistic``, ``scaling`` or ``exact``.
    confidence : float or None
        Confidence level of a statistical check.
    trials : int or None
        Runs, sequences or fitted points behind the observation.
    p_value : float or None
        p-value of "the claim holds", for statistical checks.
    details : dict
        Everything else the check records (instance, counts, fits, errata, Holm's decision).
    claim_id, check : str
        The claim and the check's name.
    seed : int or None
        The seed the check ran with.
    wall_seconds : float
        Its wall time.
    errata : tuple of str
        The claim's documented errata.
    """

    status: CheckStatus
    observed: float
    bound: float
    kind: str
    confidence: float | None = None
    trials: int | None = None
    p_value: float | None = None
    details: dict[str, Any] = field(default_factory=dict)
    claim_id: str = ""
    check: str = ""
    seed: int | None = None
    wall_seconds: float = 0.0
    errata: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "status", CheckStatus(self.status))
        except ValueError:
            raise ValueError(
                f"status must be one of {[s.value for s in CheckStatus]}, got {self.status!r}"
            ) from None

    @property
    def ratio(self) -> float:
        """observed / bound (NaN when the bound is 0 or not finite)."""
        if self.bound == 0.0 or not math.isfinite(self.bound):
            return float("nan")
        return float(self.observed / self.bound)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (non-finite floats become None)."""
        return json_safe({**asdict(self), "ratio": self.ratio})

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "CheckResult":
        """The inverse of :meth:`to_dict` (None becomes NaN for the float fields)."""
        d = {k: v for k, v in d.items() if k != "ratio"}
        d["errata"] = tuple(d.get("errata") or ())
        for k in ("observed", "bound"):
            if d.get(k) is None:
                d[k] = float("nan")
        return cls(**d)

    def __repr__(self) -> str:
        ident = f"{self.claim_id}:{self.check}, " if self.claim_id else ""
        return (f"CheckResult({ident}{self.status.value}, observed={self.observed:.6g}, "
                f"bound={self.bound:.6g}, kind={self.kind!r})")

    def summary(self) -> str:
        ratio = "n/a" if not math.isfinite(self.ratio) else f"{self.ratio:.4g}"
        return (
            f"{self.claim_id} [{self.check}, {self.kind}]: {self.status.value.upper()} "
            f"observed={self.observed:.6g} bound={self.bound:.6g} ratio={ratio} "
            f"trials={self.trials} seed={self.seed} ({self.wall_seconds:.2f}s)"
        )


# ----------------------------------------------------------------- outcome helpers


def inequality(observed: float, bound: float, *, sense: str = "<=", rtol: float = 1e-9, **details: Any) -> CheckResult:
    """A deterministic inequality ``observed <= bound`` (or ``>=``), up to float rounding ``rtol``."""
    slack = rtol * max(1.0, abs(bound))
    if sense == "<=":
        ok = observed <= bound + slack
    elif sense == ">=":
        ok = observed >= bound - slack
    else:
        raise ValueError(f"sense must be '<=' or '>=', got {sense!r}")
    return CheckResult("pass" if ok else "fail", float(observed), float(bound), "deterministic", details=dict(details, sense=sense))


def exact(observed: float, bound: float, *, sense: str = "==", rtol: float = 1e-6, atol: float = 0.0, **details: Any) -> CheckResult:
    """An exact numeric check: quadrature/enumeration against a closed form or bound."""
    if sense == "==":
        ok = math.isclose(observed, bound, rel_tol=rtol, abs_tol=atol)
    elif sense in ("<=", ">="):
        out = inequality(observed, bound, sense=sense, rtol=rtol)
        ok = out.status == "pass" or abs(observed - bound) <= atol
    else:
        raise ValueError(f"sense must be '==', '<=' or '>=', got {sense!r}")
    return CheckResult("pass" if ok else "fail", float(observed), float(bound), "exact", details=dict(details, sense=sense, rtol=rtol, atol=atol))


def failure_rate(failures: int, trials: int, p_stated: float, *, confidence: float = 0.999, **details: Any) -> CheckResult:
    """Test "failure probability <= p_stated" from ``failures`` out of ``trials``.

    The p-value is the exact one-sided binomial tail ``P[Binom(trials, p_stated) >= failures]``;
    the check fails when it is below ``1 - confidence`` (before any Holm correction).
    ``observed`` is the empirical rate; ``details['rate_upper']`` is the one-sided
    Clopper--Pearson upper confidence bound on the rate.
    """
    trials = check_int(trials, "trials", low=1)
    failures = check_int(failures, "failures", low=0, high=trials)
    confidence = check_confidence(confidence)
    p_value = float(stats.binom.sf(failures - 1, trials, p_stated)) if failures > 0 else 1.0
    rate_upper = float(stats.beta.ppf(confidence, failures + 1, trials - failures)) if failures < trials else 1.0
    status = "fail" if p_value < 1 - confidence else "pass"
    return CheckResult(
        status,
        failures / trials,
        float(p_stated),
        "probabilistic",
        confidence=confidence,
        trials=trials,
        p_value=p_value,
        details=dict(details, failures=failures, rate_upper=rate_upper),
    )


def scaling(
    x: Sequence[float],
    y: Sequence[float],
    expected_exponent: float,
    *,
    confidence: float = 0.95,
    parameter: str = "x",
    sense: str = "two-sided",
    **details: Any,
) -> CheckResult:
    """Fit ``log y = a + b log x`` by OLS (statsmodels) and compare ``b`` with the exponent.

    ``sense="two-sided"`` (a Theta statement): passes when the ``confidence`` interval of
    the slope contains ``expected_exponent``; the p-value is the two-sided t-test of
    ``b == expected_exponent``. ``sense="at-most"`` (an O upper bound: the quantity may
    grow more slowly than the theorem says, never faster): passes unless the slope is
    significantly larger, i.e. when the one-sided lower confidence limit is <= the
    exponent; the p-value is the one-sided t-test against ``b <= expected_exponent``.
    """
    if sense not in ("two-sided", "at-most"):
        raise ValueError(f"sense must be 'two-sided' or 'at-most', got {sense!r}")
    import statsmodels.api as sm

    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size < 3:
        raise ValueError(f"scaling needs two 1-d arrays of equal length >= 3, got {x.shape} and {y.shape}")
    if np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("scaling needs positive x and y (it fits on a log-log scale)")
    model = sm.OLS(np.log(y), sm.add_constant(np.log(x))).fit()
    lo, hi = model.conf_int(alpha=1 - confidence)[1]
    slope = float(model.params[1])
    t = model.t_test(([0.0, 1.0], expected_exponent))
    if sense == "two-sided":
        p_value = float(np.squeeze(t.pvalue))
        status = "pass" if lo <= expected_exponent <= hi else "fail"
    else:
        from scipy import stats as _stats

        tval = float(np.squeeze(t.tvalue))
        p_value = float(_stats.t.sf(tval, model.df_resid))
        lo = float(model.conf_int(alpha=2 * (1 - confidence))[1][0])  # one-sided lower limit
        hi = float("inf")
        status = "pass" if lo <= expected_exponent else "fail"
    return CheckResult(
        status,
        slope,
        float(expected_exponent),
        "scaling",
        confidence=confidence,
        trials=int(x.size),
        p_value=p_value,
        details=dict(details, parameter=parameter, sense=sense, slope_ci=[float(lo), float(hi)], intercept=float(model.params[0]),
                     r_squared=float(model.rsquared), x=x.tolist(), y=y.tolist()),
    )


def inconclusive(observed: float, bound: float, kind: str, reason: str, **details: Any) -> CheckResult:
    """An outcome that can neither pass nor fail (e.g. a vacuous bound); ``reason`` says why."""
    return CheckResult("inconclusive", float(observed), float(bound), kind, details=dict(details, reason=reason))


# ----------------------------------------------------------------------- running


def _run_one(claim, chk, *, seed: int | None, profile: Profile, n_jobs, run_seed: int = 0) -> CheckResult:
    """Run one check at ``seed`` (by default its :func:`check_seed` in a run seeded ``run_seed``)."""
    if seed is None:
        seed = check_seed(claim.id, chk.name, run_seed)
    ctx = CheckContext.seeded(seed, profile, n_jobs, run_seed)
    start = time.perf_counter()
    outcome = chk.run(ctx)
    wall = time.perf_counter() - start
    if not isinstance(outcome, CheckResult):
        raise TypeError(f"check {claim.id}:{chk.name} returned {type(outcome).__name__}, expected CheckResult")
    if "erratum" in outcome.details and not chk.erratum_form:
        from privbound.bounds.registry import ERRATUM_FORMS

        raise TypeError(f"check {claim.id}:{chk.name} reports an erratum but declares no erratum_form "
                        f"(one of {ERRATUM_FORMS[1:]})")
    details = outcome.details if not chk.erratum_form else {**outcome.details, "erratum_form": chk.erratum_form}
    return replace(outcome, claim_id=claim.id, check=chk.name, seed=seed, wall_seconds=wall,
                   errata=tuple(claim.errata), details=details)


def check(claim_id: str, *, rng: np.random.Generator | None = None, profile: str | Profile = "default", n_jobs: int | None = 1) -> CheckResult:
    """Run every check of one claim; several checks are combined (worst status wins).

    With ``rng`` given, the seed is drawn from it; otherwise each check runs at its :func:`check_seed`
    (run seed 0), so runs are reproducible.
    """
    from privbound.bounds.registry import get

    claim = get(claim_id)
    prof = _profile(profile)
    if not claim.checks:
        raise ValueError(f"claim {claim_id!r} has no checks: {claim.uncheckable_reason}")
    results = []
    for chk in claim.checks:
        seed = None if rng is None else int(rng.integers(0, 2**31 - 1))
        results.append(_run_one(claim, chk, seed=seed, profile=prof, n_jobs=n_jobs))
    if len(results) == 1:
        return results[0]
    worst = min(results, key=lambda r: _STATUS_ORDER[r.status])
    return replace(worst, check="+".join(r.check for r in results), wall_seconds=sum(r.wall_seconds for r in results),
                   details={"checks": [r.to_dict() for r in results], "worst": worst.check})


def holm(p_values: Sequence[float], alpha: float) -> list[bool]:
    """Holm's step-down procedure: which hypotheses are rejected at family-wise level ``alpha``."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    reject = [False] * m
    for rank, idx in enumerate(np.argsort(p, kind="stable")):
        if p[idx] <= alpha / (m - rank):
            reject[idx] = True
        else:
            break
    return reject


def _cache_key(kind: str, *parts: Any) -> str:
    """The cache entry of a finished check or mutant run: ``kind`` and a SHA-256 digest of what determines it."""
    from privbound.audit.cache import fingerprint

    return f"{kind}-{fingerprint(*parts)[:32]}"


def _bounds_code_version() -> str:
    """Digest of the bounds, learners and audit sources and the versions of the libraries that sample (the checks
    call scipy and dp_accounting): part of every cached check's key."""
    from privbound import audit, bounds, learners
    from privbound.audit.cache import sampling_library_versions, source_digest

    return f"{source_digest(bounds, learners, audit)}|{','.join(sampling_library_versions())}"


def run_checks(
    ids: Iterable[str] | None = None,
    *,
    profile: str | Profile = "default",
    seed: int = 0,
    n_jobs: int | None = 1,
    progress: Any = None,
    cache: Any = None,
) -> list[CheckResult]:
    """Run the checks of the given claims (all checkable claims by default), in a run seeded ``seed``.

    Each check runs at :func:`check_seed` of its claim, its name and ``seed`` (``CheckResult.seed``
    records it); seed 0 repeats the checks' stable seeds.

    Statistical checks (probabilistic and scaling, by their p-values) are re-judged
    together by Holm's correction at family-wise level ``1 - profile.confidence``: a run of many correct
    checks fails one with probability at most that level. Each result's
    ``details['holm']`` records the adjusted decision.

    ``cache`` (an :class:`privbound.audit.cache.ResultCache`) keeps each finished check, keyed by
    claim, check, profile, run seed and a digest of the sources, so an interrupted run resumes
    without rerunning finished checks (Holm is applied afterwards, to all of them).
    """
    from privbound.bounds.registry import claims as all_claims, get

    prof = _profile(profile)
    seed = check_int(seed, "seed", low=0)
    selected = [get(i) for i in ids] if ids is not None else [c for c in all_claims() if c.checks]
    results: list[CheckResult] = []
    version = _bounds_code_version() if cache is not None else ""
    for claim in selected:
        for chk in claim.checks:
            key = _cache_key("check", claim.id, chk.name, prof.name, seed, version) if cache is not None else None
            cached = cache.load(key) if cache is not None else None
            if cached is not None:
                results.append(CheckResult.from_dict(cached))
            else:
                results.append(_run_one(claim, chk, seed=None, profile=prof, n_jobs=n_jobs, run_seed=seed))
                if cache is not None:
                    cache.store(key, results[-1].to_dict())
            if progress is not None:
                progress(results[-1])
    return _holm_adjusted(results, 1 - prof.confidence)


def _holm_adjusted(results: list[CheckResult], alpha: float) -> list[CheckResult]:
    """``results`` with the statistical ones re-judged by Holm's procedure at family-wise level ``alpha``."""
    stat = [i for i, r in enumerate(results) if r.kind in ("probabilistic", "scaling") and r.p_value is not None
            and r.status is not CheckStatus.INCONCLUSIVE]
    rejected = holm([results[i].p_value for i in stat], alpha) if stat else []
    out = list(results)
    for i, rej in zip(stat, rejected):
        r = results[i]
        holm_record = {"family_size": len(stat), "alpha": alpha, "rejected": rej, "unadjusted_status": r.status}
        out[i] = replace(r, status=CheckStatus.FAIL if rej else CheckStatus.PASS, details={**r.details, "holm": holm_record})
    return out


# ----------------------------------------------------------------------- mutants


@dataclass(frozen=True)
class MutantResult:
    """One check run with one of its mutants applied.

    Attributes
    ----------
    claim_id, check, mutant : str
        Which check, and which of its mutants.
    description : str
        What the mutant breaks.
    profile : str
        The profile the check ran at.
    detected : bool
        The check failed while the mutant was applied (a check that raises is not a detection).
    status : CheckStatus or None
        The check's status under the mutant (``None`` when it raised).
    observed, bound : float
        What the check saw under the mutant.
    power : str
        The mutant's stated detection power, when the claim is too loose for a 2x deviation.
    wall_seconds : float
        Wall time of the run.
    error : str or None
        The exception the check raised under the mutant, if any.
    seed : int or None
        The seed the check ran with (:func:`check_seed` of the run seed).
    """

    claim_id: str
    check: str
    mutant: str
    description: str
    profile: str
    detected: bool
    status: CheckStatus | None
    observed: float
    bound: float
    power: str = ""
    wall_seconds: float = 0.0
    error: str | None = None
    seed: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return json_safe(asdict(self))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "MutantResult":
        """Inverse of :meth:`to_dict`."""
        d = dict(d)
        d["status"] = None if d.get("status") is None else CheckStatus(d["status"])
        d["observed"], d["bound"] = (float("nan") if d.get(k) is None else float(d[k]) for k in ("observed", "bound"))
        return cls(**d)


def run_mutants(ids: Iterable[str] | None = None, *, profile: str | Profile | None = None, seed: int = 0,
                progress: Any = None, checks: Iterable[str] | None = None,
                mutants: Iterable[str] | None = None, up_to: str | None = None,
                cache: Any = None) -> list[MutantResult]:
    """Run every check of the given claims (all by default) once per mutant, with the mutant applied.

    ``profile=None`` runs each mutant at its own ``Mutant.profile`` (the smallest profile
    expected to detect it); a profile given runs them all there. ``up_to`` (a profile name)
    skips the mutants whose own profile is larger. ``checks`` and ``mutants`` restrict the run
    to those check and mutant names. Each check runs at the seed :func:`run_checks` gives it in a run
    seeded ``seed`` (:func:`check_seed`), so a mutant changes nothing but the code it patches.
    ``cache`` keeps each finished row as :func:`run_checks` keeps checks. Every mutant runs in this process
    (a mutant is patched here only; a worker process would import the correct code), so this takes no ``n_jobs``.
    """
    seed = check_int(seed, "seed", low=0)
    check_names = None if checks is None else set(checks)
    mutant_names = None if mutants is None else set(mutants)
    ceiling = None if up_to is None else MUTANT_PROFILES.index(_profile(up_to).name)
    from privbound.bounds.registry import claims as all_claims, get

    selected = [get(i) for i in ids] if ids is not None else [c for c in all_claims() if c.checks]
    version = _bounds_code_version() if cache is not None else ""
    out: list[MutantResult] = []
    for claim in selected:
        for chk in claim.checks:
            if check_names is not None and chk.name not in check_names:
                continue
            for mutant in chk.mutants:
                if mutant_names is not None and mutant.name not in mutant_names:
                    continue
                if ceiling is not None and MUTANT_PROFILES.index(mutant.profile) > ceiling:
                    continue
                prof = _profile(mutant.profile if profile is None else profile)
                key = (_cache_key("mutant", claim.id, chk.name, mutant.name, prof.name, seed, version)
                       if cache is not None else None)
                cached = cache.load(key) if cache is not None else None
                row = (MutantResult.from_dict(cached) if cached is not None
                       else _run_mutant(claim, chk, mutant, prof, seed))
                if cache is not None and cached is None:
                    cache.store(key, row.to_dict())
                out.append(row)
                if progress is not None:
                    progress(row)
    return out


def _run_mutant(claim, chk, mutant, prof: Profile, run_seed: int) -> MutantResult:
    """The check with ``mutant`` applied, in this process (``n_jobs=1``): a mutant is patched here only, and a
    worker process would import the correct code."""
    start = time.perf_counter()
    seed = check_seed(claim.id, chk.name, run_seed)
    try:
        with mutant.apply():
            res = _run_one(claim, chk, seed=seed, profile=prof, n_jobs=1, run_seed=run_seed)
        return MutantResult(claim.id, chk.name, mutant.name, mutant.description, prof.name,
                            res.status is CheckStatus.FAIL, res.status, res.observed, res.bound,
                            mutant.power, time.perf_counter() - start, seed=seed)
    except Exception as exc:  # the check could not run with the bug in place
        return MutantResult(claim.id, chk.name, mutant.name, mutant.description, prof.name, False, None,
                            float("nan"), float("nan"), mutant.power, time.perf_counter() - start,
                            f"{type(exc).__name__}: {exc}", seed=seed)

