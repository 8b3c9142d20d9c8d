"""Tests of ``audit.audit_mechanism`` / ``audit_outputs`` and ``AuditResult`` (``audit/core.py``).

Soundness is tested by simulation: many independent audits (distinct seeds) of
CORRECT mechanisms, audited at a claimed epsilon equal to their TRUE epsilon, must
flag a violation at no more than the nominal rate 1 - confidence. Each such test
is a one-sided binomial check whose false-failure rate (the probability that it
fails although the auditor is sound) is stated next to it. For the fixed-event
(``Explicit``) audits the false-alarm probability is known EXACTLY (double sum over
the two binomial laws with an independent Clopper--Pearson from scipy.stats.beta),
and the simulated rate is compared with it two-sidedly: that makes the test sharp
(a wrong alpha split or an off-by-one count would show).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats
from sklearn.tree import DecisionTreeClassifier

from privbound.audit import (
    AllThresholds,
    BlackBox,
    BoostingAttack,
    Explicit,
    MechanismError,
    PlugInAttack,
    ScoreAttack,
    Split,
    LikelihoodRatioAttack,
    OutputSpace,
    ThresholdAttack,
    WhiteBox,
    audit_mechanism,
    audit_outputs,
)
from privbound.audit.statistics import event_bound
from privbound.audit.targets import get_target
from privbound.learners.mechanisms import GaussianMechanism, LaplaceMechanism, RandomizedResponse

R = 300  # independent audits per soundness check
N = 1_000  # trials per dataset in each audit
LEVEL = 1e-3  # false-failure rate of each binomial check below


def max_flags(rate: float, audits: int = R, level: float = LEVEL) -> int:
    """Largest flag count a one-sided binomial test at ``level`` accepts under rate ``rate``.

    If the true flag probability is <= rate, P(flags > max_flags) <= level.
    """
    return int(stats.binom.ppf(1 - level, audits, rate))


def count_flags(mech, d0, d1, *, epsilon, delta=0.0, confidence=0.95, make=None, audits=R, seed0=10_000, **kw):
    """Number of violations among ``audits`` independent audits (seeds seed0, seed0 + 1, ...)."""
    flags = 0
    strategy = kw.pop("strategy", None)
    for s in range(audits):
        extra = dict(kw)
        if make is not None:  # a fresh attack per audit (attacks hold fitted state)
            extra["estimator"] = BlackBox(make(), strategy)
        r = audit_mechanism(mech, d0, d1, epsilon=epsilon, delta=delta, trials=N, confidence=confidence,
                            seed=seed0 + s, **extra)
        flags += r.violation
    return flags


def cp_lower(k, n, a):
    """Independent one-sided Clopper-Pearson lower bound: the a-quantile of Beta(k, n - k + 1)."""
    k = np.asarray(k)
    return np.where(k == 0, 0.0, stats.beta.ppf(a, np.maximum(k, 1), n - k + 1))


def cp_upper(k, n, a):
    """Independent one-sided Clopper-Pearson upper bound: the (1-a)-quantile of Beta(k + 1, n - k)."""
    k = np.asarray(k)
    return np.where(k == n, 1.0, stats.beta.ppf(1 - a, k + 1, np.maximum(n - k, 1)))


def exact_false_alarm(n, p_top, p_bottom, epsilon, confidence):
    """P(ln(CP_lo(K_top) / CP_hi(K_bot)) > epsilon), K_top ~ Bin(n, p_top), K_bot ~ Bin(n, p_bottom).

    Each CP bound at level (1 - confidence) / 2 (the union bound of the estimator's docstring).
    """
    k = np.arange(n + 1)
    a = (1 - confidence) / 2
    lo, hi = cp_lower(k, n, a), cp_upper(k, n, a)
    with np.errstate(divide="ignore"):
        flag = (np.log(lo)[:, None] - np.log(hi)[None, :]) > epsilon
    joint = stats.binom.pmf(k, n, p_top)[:, None] * stats.binom.pmf(k, n, p_bottom)[None, :]
    return float((joint * flag).sum())


LAP = LaplaceMechanism(1.0)  # scale 1 on |d1 - d0| = 1: TRUE epsilon exactly 1 (ratio e at every t >= 1)
RR = RandomizedResponse(1.0)  # P(out = x) = e/(1 + e): TRUE epsilon exactly 1
GAUSS = GaussianMechanism(1.0, 1e-5)  # analytic calibration: TRUE epsilon at delta 1e-5 is 1 (Balle & Wang)


def _gauss_llr(o):
    # log p_0(o) / p_1(o) for N(0, s^2) vs N(1, s^2): ((o - 1)^2 - o^2) / (2 s^2) = (1 - 2 o) / (2 s^2)
    return (1.0 - 2.0 * np.asarray(o, float)) / (2.0 * GAUSS.sigma**2)


_V1 = np.array([0.6, 0.8])  # L2 distance 1 from the origin


def _gauss_vec_llr(o):
    # log p_0(o)/p_1(o) = (||o - v1||^2 - ||o||^2) / (2 s^2)
    o = np.asarray(o, float)
    return (((o - _V1) ** 2).sum(axis=1) - (o**2).sum(axis=1)) / (2.0 * GAUSS.sigma**2)


def _tree():
    # An overfitting classifier: if any training trial leaked into the evaluation part,
    # its pure leaves would make the bound explode and the false-alarm rate jump.
    return BoostingAttack(model=DecisionTreeClassifier(random_state=0))


# Every strategy (Split, AllThresholds, Explicit) and every attack kind (scalar, discrete
# plug-in, classifier, user score, white-box log-likelihood ratio), at claimed = TRUE eps.
SOUNDNESS = {
    "laplace/split/scalar": (LAP, 0.0, 1.0, 0.0, dict(make=ThresholdAttack)),
    "laplace/all-thresholds/scalar": (LAP, 0.0, 1.0, 0.0, dict(make=ThresholdAttack, strategy=AllThresholds())),
    "laplace/explicit/scalar": (LAP, 0.0, 1.0, 0.0, dict(make=ThresholdAttack, strategy=Explicit(1.0))),
    "laplace/split/user-score": (LAP, 0.0, 1.0, 0.0, dict(make=lambda: ScoreAttack(lambda o: -np.exp(-np.asarray(o, float))))),
    "laplace/split/classifier": (LAP, 0.0, 1.0, 0.0, dict(make=_tree)),
    "rr/split/discrete": (RR, 0, 1, 0.0, dict(make=PlugInAttack)),
    "rr/all-thresholds/scalar": (RR, 0, 1, 0.0, dict(make=ThresholdAttack, strategy=AllThresholds())),
    "rr/explicit/scalar": (RR, 0, 1, 0.0, dict(make=ThresholdAttack, strategy=Explicit(0.5))),
    "gauss/split/scalar": (GAUSS, 0.0, 1.0, 1e-5, dict(make=ThresholdAttack)),
    "gauss/all-thresholds/scalar": (GAUSS, 0.0, 1.0, 1e-5, dict(make=ThresholdAttack, strategy=AllThresholds())),
    "gauss/split/white-box": (GAUSS, 0.0, 1.0, 1e-5, dict(estimator=WhiteBox(_gauss_llr))),
    "gauss-vector/split/white-box": (GAUSS, np.zeros(2), _V1, 1e-5, dict(estimator=WhiteBox(_gauss_vec_llr))),
    "gauss-vector/split/classifier": (GAUSS, np.zeros(2), _V1, 1e-5, dict(make=_tree)),
}


@pytest.mark.parametrize("case", sorted(SOUNDNESS))
def test_soundness_at_the_true_epsilon(case):
    # R = 300 audits at N = 1000; a sound auditor flags each with probability <= 0.05.
    # The check fails only if flags > the 0.999 quantile of Bin(300, 0.05) (= 28):
    # false-failure rate <= 1e-3 per case.
    mech, d0, d1, delta, kw = SOUNDNESS[case]
    flags = count_flags(mech, d0, d1, epsilon=1.0, delta=delta, **kw)
    assert flags <= max_flags(0.05), f"{case}: {flags}/{R} false alarms"


@pytest.mark.parametrize(
    "case, mech, d0, d1, threshold, p_top, p_bottom",
    [
        # RR, event {out >= 0.5} = {out = 1}: P_d1 = e/(1+e), P_d0 = 1/(1+e), ratio e (tight).
        ("rr", RR, 0, 1, 0.5, math.e / (1 + math.e), 1 / (1 + math.e)),
        # Laplace(1), event {out >= 1}: P_d1 = P(L >= 0) = 1/2, P_d0 = P(L >= 1) = e^-1 / 2, ratio e (tight).
        ("laplace", LAP, 0.0, 1.0, 1.0, 0.5, math.exp(-1) / 2),
    ],
)
def test_explicit_false_alarm_rate_matches_exact_probability(case, mech, d0, d1, threshold, p_top, p_bottom):
    # At confidence 0.5 the exact false-alarm probability q is large enough to measure
    # (0.18 for RR); it must be <= 1 - confidence, and the simulated count over
    # R = 300 audits must agree with Bin(300, q): two-sided binomial test at 1e-3
    # (false-failure rate 1e-3). At confidence 0.95, q must be <= 0.05 as well.
    confidence = 0.5
    q = exact_false_alarm(N, p_top, p_bottom, 1.0, confidence)
    assert q <= 1 - confidence
    assert exact_false_alarm(N, p_top, p_bottom, 1.0, 0.95) <= 0.05
    flags = count_flags(mech, d0, d1, epsilon=1.0, confidence=confidence, make=ThresholdAttack,
                        strategy=Explicit(threshold))
    assert stats.binomtest(flags, R, q).pvalue > LEVEL, f"{case}: {flags}/{R} flags, exact rate {q:.4f}"


def test_soundness_of_the_default_auto_attack():
    # No attack given: the auditor chooses one from the first trials (here the plug-in
    # likelihood ratio on RR outputs). Same check as above: false-failure rate <= 1e-3.
    assert count_flags(RR, 0, 1, epsilon=1.0) <= max_flags(0.05)


@pytest.mark.slow
def test_soundness_default_classifier_model():
    # The default HistGradientBoosting classifier on vector Gaussian outputs; 300 audits,
    # false-failure rate <= 1e-3 (slow: one boosted model per audit).
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # OpenMP oversubscription makes each fit ~15x slower on a busy machine
        flags = count_flags(GAUSS, np.zeros(2), _V1, epsilon=1.0, delta=1e-5, make=BoostingAttack)
    assert flags <= max_flags(0.05)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(SOUNDNESS))
def test_soundness_at_the_true_epsilon_many_audits(case):
    # 2000 audits: with rate <= 0.05, P(flags > 0.999 quantile of Bin(2000, 0.05)) <= 1e-3.
    mech, d0, d1, delta, kw = SOUNDNESS[case]
    flags = count_flags(mech, d0, d1, epsilon=1.0, delta=delta, audits=2_000, seed0=50_000, **kw)
    assert flags <= max_flags(0.05, audits=2_000)


# --------------------------------------------------------------------- power (sanity)


def test_laplace_with_half_the_noise_is_flagged():
    # Laplace scale 1/2 has true epsilon 2; claimed 1. Explicit event {out >= 1}:
    # P_d1 = 1/2, P_d0 = e^-2 / 2. At N = 1000 the bound is about ln(0.47/0.081) = 1.76 > 1,
    # and the exact probability of NOT flagging (computed below) is tiny.
    miss = 1 - exact_false_alarm(N, 0.5, math.exp(-2) / 2, 1.0, 0.95)
    assert miss < 1e-6
    r = audit_mechanism(LaplaceMechanism(2.0), 0.0, 1.0, epsilon=1.0, trials=N, seed=3,
                        estimator=BlackBox(ThresholdAttack(), Explicit(1.0)))
    assert r.violation and r.epsilon_lower_bound > 1.0


# --------------------------------------------------------------------- AuditResult


@pytest.fixture(scope="module")
def results():
    flagged = get_target("laplace-inverted-scale").audit()
    ok = get_target("laplace-eps1").audit()
    # A pair the auditor cannot tell apart at all: no event selected (tpr/fpr are NaN).
    null = audit_mechanism(LAP, 0.0, 0.0, epsilon=1.0, trials=200, seed=1, attack=ThresholdAttack())
    return {"flagged": flagged, "ok": ok, "null": null}


@pytest.mark.parametrize("which", ["flagged", "ok", "null"])
def test_to_dict_is_json_safe(results, which):
    r = results[which]
    d = r.to_dict()
    text = json.dumps(d, allow_nan=False)  # raises on NaN / inf
    assert json.loads(text)["epsilon_claimed"] == r.epsilon_claimed
    assert json.loads(r.to_json()) == json.loads(text)
    for key in ("epsilon_claimed", "delta", "epsilon_lower_bound", "confidence", "trials", "method", "attack",
                "p_value", "violation", "seed"):
        assert key in d


def test_null_result_fields(results):
    r = results["null"]
    assert r.event is None and r.threshold is None and r.epsilon_lower_bound == 0.0
    assert r.to_dict()["tpr"] is None  # NaN becomes null
    assert r.p_value == 1.0 and not r.violation
    assert "none (no distinguishing event found)" in r.summary()


@pytest.mark.parametrize("which", ["flagged", "ok", "null"])
def test_p_value_and_violation_consistent_with_the_bound(results, which):
    r = results[which]
    alpha = 1 - r.confidence
    assert 0.0 < r.p_value <= 1.0
    assert r.violation == (r.epsilon_lower_bound > r.epsilon_claimed)
    # p-value of "the claim holds" <= alpha exactly when the (1 - alpha) bound exceeds the claim
    # (bisection tolerance 1e-10 in log alpha).
    if r.violation:
        assert r.p_value <= alpha * (1 + 1e-8)
    else:
        assert r.p_value >= alpha * (1 - 1e-8)
    if r.event is not None:
        assert r.tpr_lower <= r.tpr and r.fpr <= r.fpr_upper
        test = r.method.split("/")[0]
        if test == "clopper-pearson":
            # the bound is ln((TPR lower - delta) / FPR upper), clipped at 0
            expected = max(0.0, math.log((r.tpr_lower - r.delta) / r.fpr_upper)) if r.tpr_lower > r.delta else 0.0
        else:
            # the conditional test of the same counts (TPR = P_top(E), FPR = P_bottom(E))
            n = r.n_evaluation
            expected = max(0.0, event_bound(test, round(r.tpr * n), n, round(r.fpr * n), n, delta=r.delta,
                                            alpha=alpha))
        assert r.epsilon_lower_bound == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_summary_is_readable(results):
    s = results["flagged"].summary()
    assert s.startswith("laplace-inverted-scale: privacy audit -- VIOLATED")
    assert "claimed             : (0.5, 0)-DP" in s
    assert "epsilon lower bound" in s and "seed 0" in s
    assert str(results["flagged"]) == s
    assert results["ok"].summary().splitlines()[0].endswith(f"privacy audit -- {results['ok'].status}")
    assert results["ok"].status == "holds"


def test_planted_violation_has_a_small_p_value(results):
    r = results["flagged"]
    assert r.violation and r.p_value < 1e-6  # true eps 2 vs claimed 0.5 at 10_000 trials


def test_white_box_vs_scalar_on_the_gaussian_target():
    # gaussian-analytic: outputs N(3, s^2) on d0 and N(4, s^2) on d1 (counts 3 and 4).
    # Exact log ratio log p_0(o)/p_1(o) = ((o - 4)^2 - (o - 3)^2) / (2 s^2) = (7 - 2 o) / (2 s^2).
    # (a) Given to the white-box estimator, it goes to the betting
    #     estimator (audit/estimators/whitebox.py), whose bound at 20,000 trials is far above the
    #     single-threshold test's (0.89 vs 0.38 at 1e4 in benchmarks/auditor_power.py);
    #     we assert it is at least the scalar bound, and below the true epsilon (sound).
    # (b) As the black-box estimator's attack on a Split the score -L is an increasing function of the
    #     output, and the threshold estimator is invariant to increasing transforms:
    #     equal to the scalar attack BY CONSTRUCTION.
    t = get_target("gaussian-analytic")
    s = t.mechanism.sigma

    def llr(o):
        return (7.0 - 2.0 * np.asarray(o, float)) / (2.0 * s**2)

    wb = audit_mechanism(t.mechanism, t.d0, t.d1, epsilon=t.epsilon, delta=t.delta, trials=20_000, seed=4,
                         estimator=WhiteBox(llr))
    sc = audit_mechanism(t.mechanism, t.d0, t.d1, epsilon=t.epsilon, delta=t.delta, trials=20_000, seed=4,
                         attack=ThresholdAttack())
    tb = audit_mechanism(t.mechanism, t.d0, t.d1, epsilon=t.epsilon, delta=t.delta, trials=20_000, seed=4,
                         estimator=BlackBox(LikelihoodRatioAttack(llr), Split(0.2)))
    assert wb.attack == "likelihood-ratio" and wb.estimator == "white-box" and wb.method.startswith("white-box")
    assert sc.attack == "threshold"
    assert wb.epsilon_lower_bound >= sc.epsilon_lower_bound
    assert not wb.violation  # soundness on a correct target
    assert tb.epsilon_lower_bound == pytest.approx(sc.epsilon_lower_bound, abs=1e-12)


# --------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs, exc, pattern",
    [
        (dict(epsilon=0.0), ValueError, r"epsilon must be in \(0.0, inf\)"),
        (dict(epsilon=-1.0), ValueError, "epsilon"),
        (dict(epsilon=float("inf")), ValueError, "epsilon must be finite"),
        (dict(epsilon=float("nan")), ValueError, "epsilon must be finite"),
        (dict(epsilon="1"), TypeError, "epsilon must be a real number"),
        (dict(delta=-0.1), ValueError, r"delta must be in \[0.0, 1.0\)"),
        (dict(delta=1.0), ValueError, "delta"),
        (dict(delta=float("nan")), ValueError, "delta must be finite"),
        (dict(trials=0), ValueError, r"trials must be an integer in \[1, inf\]"),
        (dict(trials=-5), ValueError, "trials"),
        (dict(trials=5), ValueError, "trials must be at least 10"),
        (dict(trials=100.0), TypeError, "trials must be an integer"),
        (dict(confidence=0.0), ValueError, r"confidence must be in \(0.0, 1.0\)"),
        (dict(confidence=1.0), ValueError, "confidence"),
        (dict(confidence=-0.5), ValueError, "confidence"),
        (dict(seed=-1), ValueError, "seed"),
        (dict(attack="scalar"), ValueError, "attack must be an Attack or one of .*'boosting', 'floating-point', 'logistic', 'plug-in', 'single-pattern', 'threshold', 'auto'"),
        (dict(attack=3), TypeError, "attack must be a privbound.audit.attacks.Attack or one of"),
        (dict(estimator=WhiteBox(lambda o: o), attack=ThresholdAttack()), TypeError,
         "attack=.* is an argument of the black-box estimators; with an estimator value pass it there"),
        (dict(estimator=BlackBox(BoostingAttack(), AllThresholds())), ValueError, "needs a Split strategy"),
        (dict(attack=ScoreAttack(lambda o: np.asarray(o)[:5])), ValueError, "one score per output"),
        (dict(estimator="scalar"), ValueError, "estimator must be an Estimator or one of .*'black-box', 'composition', 'floating-point', 'output-space', 'white-box', 'auto'"),
        (dict(estimator=3), TypeError, "estimator must be an Estimator or one of"),
        (dict(estimator="white-box"), ValueError, "estimator='white-box' needs the log_likelihood_ratio"),
        (dict(estimator="output-space"), ValueError, "estimator='output-space' needs the output_space"),
    ],
)
def test_audit_mechanism_bad_arguments(kwargs, exc, pattern):
    kw = dict(epsilon=1.0, trials=100)
    kw.update(kwargs)
    with pytest.raises(exc, match=pattern):
        audit_mechanism(LAP, 0.0, 1.0, **kw)


@pytest.mark.parametrize("make, exc, pattern", [
    (lambda: ScoreAttack(42), TypeError, "score must be callable"),
    (lambda: WhiteBox(42), TypeError, r"WhiteBox\(log_likelihood_ratio\) must be callable"),
    (lambda: BlackBox(strategy=0.2), TypeError, "strategy must be Split, AllThresholds or Explicit"),
    (lambda: BlackBox(attack="scalar"), ValueError, "attack must be an Attack or one of"),
    (lambda: OutputSpace([0]), ValueError, r"OutputSpace\(space\) must list 2 to 5 distinct values"),
    (lambda: OutputSpace(range(6)), ValueError, r"OutputSpace\(space\) must list 2 to 5 distinct values"),
])
def test_estimator_values_refuse_bad_arguments(make, exc, pattern):
    with pytest.raises(exc, match=pattern):
        make()


def test_mechanism_that_raises():
    def broken(data, rng):
        if data == 1.0:
            raise KeyError("missing")
        return rng.normal()

    with pytest.raises(MechanismError, match=r"KeyError: 'missing' on d1 in trials 0\.\.99 \(seed=6"):
        audit_mechanism(broken, 0.0, 1.0, epsilon=1.0, trials=100, seed=6)


def test_mechanism_returning_nan():
    def nan_mech(data, rng):
        x = rng.normal()
        return float("nan") if x > 2.5 else x  # P(N(0,1) > 2.5) = 0.6%: some trial in 2000 hits it

    with pytest.raises(MechanismError, match=r"non-finite output on d0 at trial \d+ \(seed=2"):
        audit_mechanism(nan_mech, 0.0, 1.0, epsilon=1.0, trials=2_000, seed=2)


def test_audit_outputs_mismatched_outputs():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="out0 and out1 must hold outputs of the same shape"):
        audit_outputs(rng.normal(size=(100, 2)), rng.normal(size=(100, 3)), epsilon=1.0)
    with pytest.raises(ValueError, match="trials must be at least 10"):
        audit_outputs(rng.normal(size=5), rng.normal(size=100), epsilon=1.0)


def test_split_fraction_is_respected_by_the_attack_choice():
    # With a user Split(0.05) the attack and event may only depend on the first 5% of the trials
    # (the rest is evaluation data). Here the first 50 of 1000 outputs per side take 2 values and
    # all later ones are continuous: the plug-in likelihood ratio of the two values is the only
    # signal the selection part shows. Whatever the evaluation outputs are, the same attack and
    # event are chosen (only the counts change).
    rng = np.random.default_rng(0)
    sel0, sel1 = (rng.integers(0, 2, 50).astype(float) for _ in range(2))
    sel1[:20] = 1.0
    for trial in range(5):
        r = np.random.default_rng(trial)
        out0 = np.r_[sel0, r.laplace(size=950)]
        out1 = np.r_[sel1, 1.0 + r.laplace(size=950) * (trial + 1)]
        res = audit_outputs(out0, out1, epsilon=1.0, estimator=BlackBox(strategy=Split(0.05)))
        assert res.method.endswith("/split(0.05)")
        assert res.details["selection_trials"] == 50
        if trial == 0:
            chosen = (res.attack, res.event, res.method)
        assert (res.attack, res.event, res.method) == chosen  # the test of the counts too
    # the default window (first 20% = 200 trials) sees the continuous part and chooses differently
    default = audit_outputs(out0, out1, epsilon=1.0)
    assert default.details["selection_trials"] == 200 and (default.attack, default.event) != chosen