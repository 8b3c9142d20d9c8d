"""An audit states its power: holds, violated or inconclusive (audit/result.py), and names labelled events
(audit/statistics.py ``label_event``)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from privbound import audit_mechanism
from privbound.audit.result import certifiable_epsilon

EPS, DELTA = 1.0, 1e-5
SIGMA = math.sqrt(2 * math.log(1.25 / DELTA)) / EPS  # the classic Gaussian calibration for sensitivity 1


def forgets_sensitivity_two(x, rng):
    """A vector Gaussian mechanism calibrated for sensitivity 1 on a pair at distance 2."""
    return x + rng.normal(scale=SIGMA, size=10)


D0, D1 = np.zeros(10), np.r_[2.0, np.zeros(9)]


def test_a_weak_audit_of_a_broken_mechanism_is_inconclusive_not_holds():
    r = audit_mechanism(forgets_sensitivity_two, D0, D1, epsilon=EPS, delta=DELTA, trials=10_000)
    assert not r.violation and r.status == "inconclusive"
    power = r.power
    assert power["epsilon_certifiable"] <= EPS and power["trials_needed"] > 10_000
    first = r.summary().splitlines()[0]
    assert first.startswith("privacy audit -- inconclusive: at 10000 trials this audit can certify at most eps_hat = ")
    assert f"try trials={power['trials_needed']} or more" in first
    # the float attack ran beside it on these float outputs: its verdict stays on the first line
    assert r.floating_point is not None
    assert first.endswith("; FLOAT-UNSAFE in floating point" if r.floating_point.violation else
                          "; no floating-point leak found")
    d = json.loads(r.to_json())
    assert d["status"] == "inconclusive" and d["power"]["trials_needed"] == power["trials_needed"]


def test_trials_too_few_for_any_bound_are_inconclusive_never_nan():
    r = audit_mechanism(forgets_sensitivity_two, D0, D1, epsilon=EPS, delta=DELTA, trials=10)
    assert r.status == "inconclusive" and r.power["epsilon_certifiable"] == 0.0
    assert "nan" not in r.summary().lower()


def test_a_powerful_audit_of_a_correct_mechanism_holds_and_says_which_attacks_ran():
    laplace = lambda x, rng: x + rng.laplace(scale=1.0)  # noqa: E731
    r = audit_mechanism(laplace, 0.0, 1.0, epsilon=1.0, trials=10_000, float_audit=False)
    assert r.status == "holds" and r.power["epsilon_certifiable"] > 1.0
    text = r.summary()
    assert text.splitlines()[0] == "privacy audit -- holds"
    attacks = next(ln for ln in text.splitlines() if ln.strip().startswith("attacks"))
    assert r.attack in attacks and "the floating-point attack did not run" in attacks and "--float" in attacks
    # By default the floating-point attack runs beside it on float outputs, and the first line gives both
    # verdicts: textbook Laplace noise on doubles is float-unsafe (Mironov, CCS 2012).
    both = audit_mechanism(laplace, 0.0, 1.0, epsilon=1.0, trials=10_000).summary().splitlines()
    assert both[0] == "privacy audit -- holds; FLOAT-UNSAFE in floating point"
    assert "the floating-point attack ran" in next(ln for ln in both if ln.strip().startswith("attacks"))
    fields = [ln.split(":")[0].strip() for ln in both[1:]]
    assert len(fields) == len(set(fields)) and "floating point" in fields  # each field once


def test_a_violation_reads_violated():
    r = audit_mechanism(lambda x, rng: x + rng.laplace(scale=0.25), 0.0, 1.0, epsilon=1.0, trials=10_000)
    assert r.violation and r.status == "violated" and r.summary().startswith("privacy audit -- VIOLATED")


def test_the_certifiable_epsilon_is_what_the_best_test_certifies_at_the_expected_counts():
    # Laplace at 2 eps: every tail event X > t (t past the sensitivity) has P_1 = e^{2 eps} P_0. At the tail
    # P_0 = q the one-sided Clopper-Pearson bounds at the expected counts give the bound by hand.
    n, conf, eps = 5000, 0.95, 0.5
    best = 0.0
    for q in np.geomspace(1e-4, 0.5 * math.exp(-2 * eps), 400):
        k0, k1 = n * q, n * q * math.exp(2 * eps)
        lo = stats.beta.ppf(1 - conf, k1, n - k1 + 1)
        hi = stats.beta.ppf(conf, k0 + 1, n - k0)
        best = max(best, math.log(lo / hi))
    assert certifiable_epsilon(n, conf, eps, 0.0) == pytest.approx(best, rel=0.01)
    assert certifiable_epsilon(n, conf, eps, 0.0) < 2 * eps  # never above what the mechanism spends
    assert certifiable_epsilon(100 * n, conf, eps, 0.0) > certifiable_epsilon(n, conf, eps, 0.0)


def test_the_suggested_trials_reach_the_claim():
    r = audit_mechanism(forgets_sensitivity_two, D0, D1, epsilon=EPS, delta=DELTA, trials=10_000)
    share = r.n_evaluation / r.trials
    need = r.power["trials_needed"]
    assert certifiable_epsilon(int(need * share), r.confidence, EPS, DELTA) > EPS
    assert certifiable_epsilon(int(0.8 * need * share), r.confidence, EPS, DELTA) <= EPS * 1.02


def test_events_on_labelled_outputs_name_the_label():
    def answers(x, rng):
        return "yes" if rng.random() < (0.73 if x else 0.27) else "no"

    r = audit_mechanism(answers, 0, 1, epsilon=1.0, trials=5_000)
    assert "score" not in r.event
    assert "output == 'yes'" in r.event or "output == 'no'" in r.event, r.event
