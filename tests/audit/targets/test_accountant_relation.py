"""The registered targets' accountant epsilon is computed under the relation its DpEvent is stated under.

``accountant_epsilon(mechanism, delta, neighbouring)`` gets the target's relation and accounts the event under
the relation of the mechanism's own guarantee when it states one (a primitive's event is per unit of its
query's sensitivity), the target's otherwise (:mod:`privbound.learners.accounting` maps that relation to
dp_accounting's). Deterministic: no randomness but the one short audit, seeded.
"""

from __future__ import annotations

import pytest

from privbound.audit.targets import accountant_epsilon, get_target, targets
from privbound.audit.targets import registry
from privbound.learners.mechanisms import PrivacyGuarantee
from privbound.learners.neighbouring import NeighbouringRelation

WITH_EVENT = [t for t in targets() if hasattr(t.mechanism, "dp_event")]


def _stated_relation(target) -> NeighbouringRelation:
    try:
        guarantee = getattr(target.mechanism, "guarantee", None)
    except ValueError:
        return target.neighbouring
    return guarantee.neighbouring if isinstance(guarantee, PrivacyGuarantee) else target.neighbouring


def _spy(monkeypatch) -> list[NeighbouringRelation]:
    seen: list[NeighbouringRelation] = []
    for name in ("make_accountant", "epsilon_of"):
        real = getattr(registry, name)

        def spy(*args, _real=real, **kwargs):
            seen.append(kwargs["neighbouring"])
            return _real(*args, **kwargs)

        monkeypatch.setattr(registry, name, spy)
    return seen


def test_targets_with_an_event_include_both_kinds_of_relation():
    stated = {t.name: _stated_relation(t) for t in WITH_EVENT}
    assert len(WITH_EVENT) >= 40
    # targets whose own relation reaches the accountant (no guarantee of the mechanism) include replace-one ones
    own = [t for t in WITH_EVENT if stated[t.name] is t.neighbouring and not hasattr(type(t.mechanism), "guarantee")]
    assert {t.neighbouring for t in own} >= {NeighbouringRelation.REPLACE_ONE, NeighbouringRelation.ADD_OR_REMOVE_ONE}
    assert stated["gaussian-analytic"] is NeighbouringRelation.BOUNDED_QUERY_CHANGE


@pytest.mark.parametrize("target", WITH_EVENT, ids=[t.name for t in WITH_EVENT])
def test_accountant_epsilon_is_computed_under_the_targets_stated_relation(target, monkeypatch):
    import dp_accounting

    seen = _spy(monkeypatch)
    acc = accountant_epsilon(target.mechanism, target.delta, target.neighbouring) or {}
    if isinstance(target.mechanism.dp_event(), dp_accounting.UnsupportedDpEvent):
        assert seen == []
        return
    assert seen and set(seen) == {_stated_relation(target)}, (target.name, seen)
    if not target.planted_bug:
        # A relation read wrongly doubles a replace-one shift (alg2-coefficients 0.56 -> 1.28 > 0.9) or a
        # primitive's (gaussian-analytic 1.0 -> 2.08): the PLD accountant would contradict a correct claim.
        assert acc.get("pld", 0.0) <= target.epsilon + 1e-3, acc


def test_target_audit_passes_its_own_relation(monkeypatch):
    passed = []
    real = registry.accountant_epsilon

    def spy(mechanism, delta, neighbouring):
        passed.append(neighbouring)
        return real(mechanism, delta, neighbouring)

    monkeypatch.setattr(registry, "accountant_epsilon", spy)
    t = get_target("alg2-coefficients")
    r = t.audit(trials=200, seed=0)
    assert passed == [NeighbouringRelation.REPLACE_ONE] == [t.neighbouring]
    assert r.accountant_epsilon == accountant_epsilon(t.mechanism, t.delta, t.neighbouring)


# Correct targets whose noise is calibrated exactly to the claim (PLD at discretisation 1e-4, or the learner's 1e-3).
TIGHT = ["gaussian-analytic", "randomized-response", "geometric", "discrete-laplace", "dpsgd-gradient-eps4",
         "dpsgd-input-eps8", "batch-perceptron-clipped"]


@pytest.mark.parametrize("name", TIGHT)
def test_exactly_calibrated_targets_have_their_claim_as_pld_epsilon(name):
    t = get_target(name)
    acc = accountant_epsilon(t.mechanism, t.delta, t.neighbouring)
    assert acc is not None and acc["pld"] == pytest.approx(t.epsilon, abs=1e-3), acc


def test_replace_one_targets_have_no_rdp_value():
    # dp_accounting's RDP would give a replace-one Gaussian its add/remove value; it is refused, PLD remains.
    acc = accountant_epsilon(get_target("alg2-coefficients").mechanism, 1e-5, NeighbouringRelation.REPLACE_ONE)
    assert set(acc) == {"pld"}


def test_accountant_epsilon_rejects_a_relation_that_is_not_one():
    t = get_target("gaussian-analytic")
    with pytest.raises(TypeError, match="neighbouring must be a NeighbouringRelation"):
        accountant_epsilon(t.mechanism, t.delta, "replace-one")
