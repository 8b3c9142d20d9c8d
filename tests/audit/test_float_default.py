"""The floating-point attack by default: its own verdict beside the mathematical one, its own share of the
confidence, off where asked, and no false alarm on float-safe primitives or OpenDP's targets."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from privbound.audit import audit_mechanism
from privbound.audit.core import FLOAT_SHARE
from privbound.audit.estimators import WhiteBox
from privbound.audit.targets import get_target, targets
from privbound.learners import mechanisms as M


def textbook_laplace(x, rng):
    return x + rng.laplace(scale=1.0)


def test_the_readme_example_is_flagged_float_unsafe_beside_its_mathematical_verdict():
    r = audit_mechanism(textbook_laplace, 0.0, 1.0, epsilon=1.0)
    assert not r.violation and r.confidence == pytest.approx(1 - 0.05 * (1 - FLOAT_SHARE))
    fp = r.floating_point
    assert fp is not None and fp.violation and fp.float_audit and fp.attack == "floating-point"
    assert fp.confidence == pytest.approx(1 - 0.05 * FLOAT_SHARE)
    text = r.summary()
    assert "FLOAT-UNSAFE" in text and "floating point      : float-unsafe at the claimed epsilon" in text
    assert r.to_dict()["floating_point"]["violation"] is True


def test_a_float_verdict_that_could_not_have_seen_a_leak_says_inconclusive():
    # 16 evaluated trials: no event could certify above the claim, so "no leak found" would say what was not seen
    r = audit_mechanism(textbook_laplace, 0.0, 1.0, epsilon=1.0, trials=20)
    fp = r.floating_point
    assert fp.status == "inconclusive" and not fp.violation
    assert r.summary().splitlines()[0].endswith("; floating point inconclusive")
    assert fp.float_verdict().startswith("inconclusive: on 16 evaluated trials")
    assert r.to_dict()["floating_point"]["status"] == "inconclusive"
    alone = audit_mechanism(textbook_laplace, 0.0, 1.0, epsilon=1.0, trials=20, estimator="floating-point")
    assert "inconclusive" in alone.summary().splitlines()[0] and "no floating-point leak" not in alone.summary()
    # with the power to see one, a float-safe primitive's verdict says none was found
    snapping = M.SnappingLaplaceMechanism(1.0, bound=64.0)
    safe = audit_mechanism(snapping, 0.0, 1.0, epsilon=snapping.guarantee.epsilon, trials=10_000, float_audit=True)
    assert safe.floating_point.status == "holds" and not safe.floating_point.violation
    assert safe.summary().splitlines()[0].endswith("; no floating-point leak found")


def test_it_is_off_when_asked_for_another_estimator_or_attack_or_for_integer_outputs():
    kw = dict(epsilon=1.0, trials=2_000)
    assert audit_mechanism(textbook_laplace, 0.0, 1.0, float_audit=False, **kw).floating_point is None
    assert audit_mechanism(textbook_laplace, 0.0, 1.0, attack="threshold", **kw).floating_point is None
    wb = WhiteBox(lambda o: np.abs(np.asarray(o, float) - 1.0) - np.abs(np.asarray(o, float)))
    assert audit_mechanism(textbook_laplace, 0.0, 1.0, estimator=wb, **kw).floating_point is None
    assert audit_mechanism(M.GeometricMechanism(1.0), 0, 1, **kw).floating_point is None  # integers
    r = audit_mechanism(textbook_laplace, 0.0, 1.0, estimator="floating-point", **kw)
    assert r.float_audit and r.floating_point is None  # the float attack is already in the estimator
    with pytest.raises(ValueError, match="float_audit"):
        audit_mechanism(textbook_laplace, 0.0, 1.0, float_audit="yes", **kw)


def test_a_sequential_audit_carries_the_float_verdict_on_the_trials_it_spent():
    r = audit_mechanism(M.LaplaceMechanism(2.0), 0.0, 1.0, epsilon=1.0, trials="auto")
    assert r.violation and r.floating_point.trials == r.trials and r.floating_point.violation


FLOAT_SAFE = [("snapping", M.SnappingLaplaceMechanism(1.0, bound=64.0)),
              ("discrete-laplace", M.DiscreteLaplaceMechanism(1.0)),
              ("discrete-gaussian", M.DiscreteGaussianMechanism(4.0, 1e-5))]


@pytest.mark.parametrize("name,mech", FLOAT_SAFE, ids=[n for n, _ in FLOAT_SAFE])
def test_float_safe_primitives_are_not_flagged(name, mech):
    # forced on (their integer outputs would turn the default off): 10 seeds, each verdict at its 1% level;
    # P(Binomial(10, 0.01) > 1) < 5e-3
    flagged = sum(audit_mechanism(mech, 0.0, 1.0, epsilon=mech.guarantee.epsilon, delta=mech.guarantee.delta,
                                  trials=10_000, seed=s, float_audit=True).floating_point.violation for s in range(10))
    assert flagged <= 1


def test_opendp_float_laplace_is_not_flagged_by_the_float_attack():
    pytest.importorskip("opendp")
    r = get_target("opendp-scalar-laplace").audit(float_audit=True, trials=4_000)
    assert r.floating_point is not None and not r.floating_point.violation


@pytest.mark.slow
def test_no_opendp_target_is_flagged_by_the_float_attack():
    pytest.importorskip("opendp")
    correct = [t for t in targets("opendp") if not t.planted_bug]
    assert correct
    for t in correct:
        r = t.audit(float_audit=True)
        assert r.floating_point is not None and not r.floating_point.violation, t.name


def test_targets_that_declare_float_safety_keep_their_own_floating_point_audit():
    assert get_target("laplace-eps1").audit().floating_point is None
    assert get_target("gaussian-classic").audit().floating_point is None
    assert get_target("randomized-response").audit().floating_point is None  # integer outputs: nothing to attack
    undeclared = dataclasses.replace(get_target("gaussian-classic"), float_safe=None)
    assert undeclared.audit(trials=2000).floating_point is not None
