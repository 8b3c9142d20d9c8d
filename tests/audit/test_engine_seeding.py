"""run_trials rejects a mechanism whose randomness its rng does not control (audit/engine.py)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from privbound.audit.engine import MechanismError, run_trials


@pytest.mark.parametrize("mechanism, how", [
    (lambda x, rng: x + np.random.laplace(), "global np.random"),
    (lambda x, rng: x + np.random.default_rng().laplace(), "same seed gave different outputs"),
    (lambda x, rng: x + random.random(), "same seed gave different outputs"),
])
def test_unseeded_randomness_is_an_error_naming_the_cause(mechanism, how):
    with pytest.raises(MechanismError, match=how):
        run_trials(mechanism, 0.0, 1.0, 100, seed=3)


def test_a_vectorised_mechanism_on_the_global_state_is_caught_in_any_chunk():
    class Sneaky:
        calls = 0

        def sample(self, data, rng, size):
            self.calls += 1
            noise = rng.laplace(size=size)
            if self.calls > 4:  # behaves during the probe, then draws from the global state
                noise = noise + np.random.normal(size=size)
            return data + noise

    with pytest.raises(MechanismError, match="global np.random in chunk 0"):
        run_trials(Sneaky(), 0.0, 1.0, 50, seed=0, chunk_size=20)


def test_seeded_and_deterministic_mechanisms_pass_and_leave_the_global_state_alone():
    state = np.random.get_state(legacy=False)["state"]["pos"]
    a = run_trials(lambda x, rng: x + rng.laplace(), 0.0, 1.0, 300, seed=5, chunk_size=100)
    b = run_trials(lambda x, rng: x + rng.laplace(), 0.0, 1.0, 300, seed=5, chunk_size=100, n_jobs=2)
    np.testing.assert_array_equal(a.out0, b.out0)
    run_trials(lambda x, rng: x, 0.0, 1.0, 10)  # no randomness at all is fine
    assert np.random.get_state(legacy=False)["state"]["pos"] == state
