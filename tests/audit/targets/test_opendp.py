"""OpenDP measurements as audit targets (run only where the `libs` extra is installed).

Error rates: the default checks audit a correct target at confidence 0.999, so each fails a sound auditor
with probability <= 1e-3 (the audits do not repeat for a seed); the slow
test audits every target at its default trials at the nightly's Bonferroni confidence (family-wise 0.05).
Audits of OpenDP targets are not seeded: OpenDP draws from its own secure generator.
"""

from __future__ import annotations

import pytest

opendp = pytest.importorskip("opendp")

from privbound.audit.targets import get_target, targets  # noqa: E402
from privbound.audit.targets.opendp import UNAVAILABLE  # noqa: E402


def test_every_opendp_target_claims_what_the_library_maps():
    ts = targets("opendp")
    assert UNAVAILABLE is None and len(ts) == 7 and sum(t.planted_bug for t in ts) == 1
    for t in ts:
        assert (t.epsilon, t.delta) == t.mechanism.claim
        assert t.mechanism.draws_own_randomness
    assert get_target("opendp-sized-mean-laplace").epsilon == pytest.approx(0.2, rel=1e-9)


def test_the_unclamped_sum_is_flagged_and_a_count_is_not():
    bug = get_target("opendp-sum-unclamped").audit(trials=3000)
    assert bug.violation and bug.epsilon_lower_bound > 3.0  # sensitivity 10 under a claim for 1
    assert not get_target("opendp-count-laplace").audit(trials=3000, confidence=0.999).violation


@pytest.mark.slow
def test_every_opendp_target_at_default_trials_and_float_audit():
    ts = targets("opendp")
    confidence = 1 - 0.05 / (2 * len(ts))
    for t in ts:
        r = t.audit(confidence=confidence)
        assert r.violation == t.planted_bug, r.summary()
        if t.float_safe:
            assert not t.audit(confidence=confidence, estimator="floating-point").violation, t.name


def test_a_used_measurement_pickles_for_worker_processes():
    # Dask and loky ship the mechanism to worker processes; the built OpenDP measurement wraps ctypes
    # pointers, so the pickled form carries the recipe and the worker rebuilds it.
    import pickle

    mech = get_target("opendp-count-laplace").mechanism
    assert mech.claim[0] > 0  # builds the measurement
    copy = pickle.loads(pickle.dumps(mech))
    assert copy.claim == mech.claim and copy(list(range(5)), None) is not None
