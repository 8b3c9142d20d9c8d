"""privbound.audit.seeding.GlobalNumpyRandom: code that draws from the global np.random, audited reproducibly."""

from __future__ import annotations

import numpy as np
import pytest

from privbound import audit_mechanism
from privbound.audit.engine import MechanismError
from privbound.audit.seeding import GlobalNumpyRandom


def _legacy(x):
    return x + np.random.laplace()


def test_the_error_names_both_ways_out():
    with pytest.raises(MechanismError, match="GlobalNumpyRandom") as err:
        audit_mechanism(lambda x, rng: _legacy(x), 0.0, 1.0, epsilon=1.0, trials=200)
    assert "draws_own_randomness" in str(err.value)


def test_wrapped_audits_repeat_for_a_seed_and_leave_the_global_state_alone():
    np.random.seed(123)
    before = np.random.get_state()[1].copy()
    a = audit_mechanism(GlobalNumpyRandom(_legacy), 0.0, 1.0, epsilon=1.0, trials=2000, seed=4)
    b = audit_mechanism(GlobalNumpyRandom(_legacy), 0.0, 1.0, epsilon=1.0, trials=2000, seed=4)
    assert a.epsilon_lower_bound == b.epsilon_lower_bound
    assert np.array_equal(np.random.get_state()[1], before)


def test_state_is_restored_when_the_mechanism_raises():
    def boom(x):
        np.random.random()
        raise RuntimeError("boom")

    np.random.seed(7)
    before = np.random.get_state()[1].copy()
    with pytest.raises(RuntimeError):
        GlobalNumpyRandom(boom)(0.0, np.random.default_rng(0))
    assert np.array_equal(np.random.get_state()[1], before)


def test_draws_follow_the_trial_rng_and_pass_rng():
    m = GlobalNumpyRandom(lambda x, rng: (np.random.random(), rng.random()), pass_rng=True)
    assert m(0, np.random.default_rng(1)) == m(0, np.random.default_rng(1))
    assert m(0, np.random.default_rng(1)) != m(0, np.random.default_rng(2))


def test_bad_arguments_name_themselves():
    with pytest.raises(TypeError, match="mechanism"):
        GlobalNumpyRandom(3)
    with pytest.raises(TypeError, match="pass_rng"):
        GlobalNumpyRandom(_legacy, pass_rng="yes")
    with pytest.raises(TypeError, match="rng"):
        GlobalNumpyRandom(_legacy)(0.0, 5)
