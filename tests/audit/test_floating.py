"""The floating-point attack (Mironov, CCS 2012): it flags textbook float noise and not float-safe mechanisms.

Error rates: soundness checks run 300 floating-point audits at N = 1000 at the mechanism's claim and fail
only if the flags exceed the 0.999 quantile of Bin(300, 0.05) (false-failure rate <= 1e-3 each). Power
checks are seeded, hence deterministic; the measured values are stated.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from privbound import audit_mechanism
from privbound.audit.attacks.floating import infer_center, reachable
from privbound.audit.targets import get_target
from privbound.learners import mechanisms as M

D0, D1 = np.array([1, 1, 1, 0, 0]), np.array([1, 1, 1, 1, 0])  # counts 3 and 4


def test_reachability_sees_mironovs_gap():
    # From f(d) = 3 every double of [1, 2) is 3 + (o - 3); from 4 only those with an even last bit.
    o = np.nextafter(1.5, 2.0)  # odd last mantissa bit
    assert reachable(np.array([o]), 3.0)[0] and not reachable(np.array([o]), 4.0)[0]
    assert reachable(np.array([1.5]), 4.0)[0]
    # Vector outputs: reachable when EVERY coordinate is. One unreachable coordinate, first or second, makes the
    # output unreachable; with scalar outputs "every" and "any" (or "the first") coincide.
    vec = np.array([[1.5, o], [o, 1.5], [1.5, 1.5]])
    assert reachable(vec, np.array([4.0, 4.0])).tolist() == [False, False, True]
    assert reachable(vec, np.array([3.0, 3.0])).tolist() == [True, True, True]


def test_representation_features_by_hand():
    # (reachable from c0, reachable from c1, the two lowest mantissa bits of the first coordinate): 1.5 has bits
    # 00; its three successors 01, 10, 11 (odd ones unreachable from 4).
    from privbound.audit.attacks.floating import representation_features

    x = [1.5]
    for _ in range(3):
        x.append(np.nextafter(x[-1], 2.0))
    f = representation_features(np.array(x)[:, None], (np.array(3.0), np.array(4.0)))
    assert f.tolist() == [[1, 1, 0], [1, 0, 1], [1, 1, 2], [1, 0, 3]]


def test_infer_center_rounds_to_the_integer_answer():
    rng = np.random.default_rng(0)
    assert infer_center(3.0 + rng.laplace(size=(20_000, 1)))[0] == 3.0
    assert infer_center(3.4 + rng.laplace(size=(20_000, 1)))[0] != 3.0


@pytest.mark.parametrize("mech, eps, delta", [
    (M.LaplaceMechanism(1.0, query=np.sum), 1.0, 0.0),
    (M.LaplaceMechanism(0.1, query=np.sum), 0.1, 0.0),
    (M.GaussianMechanism(1.0, 1e-5, query=np.sum), 1.0, 1e-5),
])
def test_textbook_float_noise_is_flagged(mech, eps, delta):
    # Measured at 1e5 trials per side: 7.25, 6.79, 7.58 (an output impossible under one dataset makes the bound large).
    r = audit_mechanism(mech, D0, D1, epsilon=eps, delta=delta, trials=100_000, estimator="floating-point")
    assert r.violation and r.attack == "floating-point" and r.estimator == "floating-point" and r.epsilon_lower_bound > 5 * eps
    assert "float-unsafe at the claimed epsilon" in r.summary()
    # the ordinary audit of the same mechanism is not flagged
    assert not audit_mechanism(mech, D0, D1, epsilon=eps, delta=delta, trials=100_000).violation


def test_centers_are_inferred_for_a_black_box_function():
    noisy_count = lambda data, rng: float(np.sum(data)) + rng.laplace(scale=1.0)  # noqa: E731
    r = audit_mechanism(noisy_count, D0, D1, epsilon=1.0, trials=50_000, estimator="floating-point")
    assert r.violation and r.attack == "floating-point"


def max_flags(rate=0.05, audits=300, level=1e-3):
    return int(stats.binom.ppf(1 - level, audits, rate))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["snapping-laplace", "discrete-laplace", "discrete-gaussian"])
def test_float_safe_targets_are_not_flagged_by_the_float_audit(name):
    t = get_target(name)
    flags = sum(t.audit(trials=1000, seed=40_000 + s, estimator="floating-point").violation for s in range(300))
    assert flags <= max_flags(), f"{name}: {flags}/300"


def test_float_safe_target_flags():
    assert get_target("laplace-eps1").float_safe is False and get_target("snapping-laplace").float_safe is True
