"""Tests of privbound.learners.accounting: the neighbouring relation reaches dp_accounting's accountants.

Deterministic (no randomness). What each accountant does under replace-one is that of dp_accounting 0.6.0
(``rdp_privacy_accountant``, ``pld_privacy_accountant``); the module docstring states it.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest

from privbound.learners.accounting import (
    ACCOUNTANT_RELATIONS,
    accountant_relation,
    calibrate_noise,
    delta_of,
    epsilon_of,
    exact_epsilon,
    hockey_stick_delta,
    make_accountant,
    replace_one_noise_multiplier,
)
from privbound.learners.neighbouring import NeighbouringRelation as NR

AR, R1 = NR.ADD_OR_REMOVE_ONE, NR.REPLACE_ONE
DELTA = 1e-5


def _rr(eps: float) -> dp_accounting.RandomizedResponseDpEvent:
    """Binary randomized response that is exactly eps-DP between its two inputs."""
    return dp_accounting.RandomizedResponseDpEvent(noise_parameter=2.0 / (1.0 + math.exp(eps)), num_buckets=2)


def test_every_relation_has_an_accountant_relation():
    assert set(ACCOUNTANT_RELATIONS) == set(NR)
    assert accountant_relation(AR) is dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
    assert accountant_relation(R1) is dp_accounting.NeighboringRelation.REPLACE_ONE
    assert accountant_relation(NR.BOUNDED_QUERY_CHANGE) is dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
    assert accountant_relation(NR.ANY_TWO_INPUTS) is dp_accounting.NeighboringRelation.REPLACE_ONE
    assert accountant_relation(NR.REPLACE_ONE_ROUND) is dp_accounting.NeighboringRelation.REPLACE_ONE
    for relation in NR:
        for name in ("rdp", "pld"):
            assert make_accountant(name, neighbouring=relation).neighboring_relation is accountant_relation(relation)


def test_replace_one_gaussian_is_the_add_remove_one_at_twice_the_sensitivity():
    # dp_accounting's GaussianDpEvent(z) is noise z C for records of norm <= C: add/remove neighbours are C apart,
    # replace-one neighbours 2C apart, i.e. the add/remove Gaussian of multiplier z / 2.
    z = 2.0
    replace_one = epsilon_of(dp_accounting.GaussianDpEvent(z), DELTA, "pld", neighbouring=R1)
    add_remove = epsilon_of(dp_accounting.GaussianDpEvent(z), DELTA, "pld", neighbouring=AR)
    at_twice = epsilon_of(dp_accounting.GaussianDpEvent(z / 2), DELTA, "pld", neighbouring=AR)
    assert replace_one == pytest.approx(at_twice, rel=1e-9)
    assert replace_one > 2 * add_remove  # 4.38 vs 1.99
    assert delta_of(dp_accounting.GaussianDpEvent(z), 1.0, "pld", neighbouring=R1) == pytest.approx(
        delta_of(dp_accounting.GaussianDpEvent(z / 2), 1.0, "pld", neighbouring=AR), rel=1e-9)


def test_replace_one_subsampled_gaussian_is_neither_the_add_remove_one_nor_it_at_twice_the_sensitivity():
    # Poisson(q)-subsampled Gaussian, 100 steps: replace-one compares q N(C) + (1-q) N(0) with q N(-C) + (1-q) N(0),
    # add/remove N(0) with q N(C) + (1-q) N(0). Measured: add/remove 7.05 < replace-one 10.52 < add/remove at 2C 31.37.
    def event(z):
        return dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(0.1, dp_accounting.GaussianDpEvent(z)), 100)

    replace_one = epsilon_of(event(1.0), DELTA, "pld", neighbouring=R1)
    add_remove = epsilon_of(event(1.0), DELTA, "pld", neighbouring=AR)
    at_twice = epsilon_of(event(0.5), DELTA, "pld", neighbouring=AR)
    assert 1.2 * add_remove < replace_one < 0.5 * at_twice


@pytest.mark.parametrize("event", [
    dp_accounting.GaussianDpEvent(1.5),
    dp_accounting.LaplaceDpEvent(1.0),
    dp_accounting.dp_event.DiscreteLaplaceDpEvent(noise_parameter=1.0, sensitivity=1),
    dp_accounting.PoissonSampledDpEvent(0.1, dp_accounting.GaussianDpEvent(1.0)),
    dp_accounting.ZCDpEvent(0.1),
], ids=["gaussian", "laplace", "discrete-laplace", "subsampled-gaussian", "zcdp"])
def test_bounded_query_change_is_accounted_as_add_remove(event):
    # An event per unit of the query's sensitivity: its loss is that of a shift by one unit, the add/remove one.
    for name in ("rdp", "pld"):
        if not make_accountant(name, neighbouring=AR).supports(event):
            continue
        assert epsilon_of(event, DELTA, name, neighbouring=NR.BOUNDED_QUERY_CHANGE) == epsilon_of(
            event, DELTA, name, neighbouring=AR)


def test_zcdp_is_the_same_under_replace_one_and_add_remove():
    # A zCDP statement is already relative to the relation it was derived for: RDP converts it unchanged.
    event = dp_accounting.ZCDpEvent(0.1)
    assert epsilon_of(event, DELTA, "rdp", neighbouring=R1) == epsilon_of(event, DELTA, "rdp", neighbouring=AR)


@pytest.mark.parametrize("relation", [R1, NR.ANY_TWO_INPUTS, NR.REPLACE_ONE_ROUND])
def test_randomized_response_is_its_epsilon_under_the_replace_relations(relation):
    # Binary randomized response at eps is exactly eps-DP between its two inputs (one input replaced by another).
    assert epsilon_of(_rr(1.0), DELTA, "pld", neighbouring=relation) == pytest.approx(1.0, abs=2e-4)
    assert 1.0 <= epsilon_of(_rr(1.0), DELTA, "rdp", neighbouring=relation) < 1.1


@pytest.mark.parametrize("relation", [AR, NR.BOUNDED_QUERY_CHANGE])
@pytest.mark.parametrize("name", ["rdp", "pld"])
def test_randomized_response_is_unsupported_under_add_remove(relation, name):
    with pytest.raises(ValueError, match=f"the {name} accountant does not support this event under neighbouring"):
        epsilon_of(_rr(1.0), DELTA, name, neighbouring=relation)


@pytest.mark.parametrize("event", [
    dp_accounting.GaussianDpEvent(2.0),
    dp_accounting.LaplaceDpEvent(1.0),
    dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(2.0), 10),
    dp_accounting.ComposedDpEvent([_rr(1.0), dp_accounting.GaussianDpEvent(2.0)]),
], ids=["gaussian", "laplace", "self-composed", "composed"])
def test_rdp_refuses_what_it_would_compute_as_add_remove_under_replace_one(event):
    # dp_accounting's RDP gives a Gaussian or Laplace event under REPLACE_ONE its add/remove value (neighbours C
    # apart, not 2C): the accountant made here says so instead of understating.
    acc = make_accountant("rdp", neighbouring=R1)
    assert not acc.supports(event)
    with pytest.raises(ValueError, match="as if the neighbours were one record's bound C apart"):
        epsilon_of(event, DELTA, "rdp", neighbouring=R1)
    assert make_accountant("rdp", neighbouring=AR).supports(dp_accounting.GaussianDpEvent(2.0))


def test_rdp_refuses_poisson_subsampling_under_replace_one():
    event = dp_accounting.PoissonSampledDpEvent(0.1, dp_accounting.GaussianDpEvent(1.0))
    with pytest.raises(ValueError, match="neighboring_relation must be `ADD_OR_REMOVE_ONE`"):
        epsilon_of(event, DELTA, "rdp", neighbouring=R1)


def test_pld_refuses_laplace_under_replace_one():
    with pytest.raises(ValueError, match="for `LaplaceDpEvent`"):
        epsilon_of(dp_accounting.LaplaceDpEvent(1.0), DELTA, "pld", neighbouring=R1)


def test_pld_refuses_a_randomized_response_composed_more_than_once():
    # dp_accounting 0.6.0's PLD accountant composes a RandomizedResponseDpEvent once whatever its count:
    # 10 x RR(1) would come out as 1.0. RDP composes it 10 times (>= the 10-fold composition's ~4.3 at 1e-5).
    ten = dp_accounting.SelfComposedDpEvent(_rr(1.0), 10)
    assert not make_accountant("pld", neighbouring=R1).supports(ten)
    with pytest.raises(ValueError, match="composes a RandomizedResponseDpEvent once, not 10 times"):
        epsilon_of(ten, DELTA, "pld", neighbouring=R1)
    with pytest.raises(dp_accounting.UnsupportedEventError, match="once, not 10 times"):
        make_accountant("pld", neighbouring=R1).compose(_rr(1.0), 10)
    assert epsilon_of(ten, DELTA, "rdp", neighbouring=R1) > 4.0
    once = dp_accounting.ComposedDpEvent([_rr(1.0), _rr(0.5)])
    assert epsilon_of(once, DELTA, "pld", neighbouring=R1) == pytest.approx(1.5, abs=1e-3)


def test_calibrated_noise_under_replace_one_is_twice_the_add_remove_one():
    def event(sigma):
        return dp_accounting.GaussianDpEvent(sigma)

    add_remove = calibrate_noise(event, 1.0, DELTA, "pld", neighbouring=AR)
    replace_one = calibrate_noise(event, 1.0, DELTA, "pld", neighbouring=R1)  # RDP refuses: PLD searches alone
    assert replace_one == pytest.approx(2 * add_remove, rel=1e-3)
    with pytest.raises(ValueError, match="the rdp accountant does not support this event"):
        calibrate_noise(event, 1.0, DELTA, "rdp", neighbouring=R1)


def test_replace_one_noise_multiplier_gives_the_add_remove_loss_of_the_replace_one_sensitivity():
    # Noise z times the replace-one sensitivity, stated per record, is accounted as a shift by that sensitivity.
    z = 1.7
    per_record = dp_accounting.GaussianDpEvent(replace_one_noise_multiplier(z))
    assert epsilon_of(per_record, DELTA, "pld", neighbouring=R1) == pytest.approx(
        epsilon_of(dp_accounting.GaussianDpEvent(z), DELTA, "pld", neighbouring=AR), rel=1e-9)


@pytest.mark.parametrize("bad", [None, "replace-one", dp_accounting.NeighboringRelation.REPLACE_ONE])
def test_neighbouring_must_be_a_neighbouring_relation(bad):
    with pytest.raises(TypeError, match="neighbouring must be a NeighbouringRelation .*ADD_OR_REMOVE_ONE"):
        epsilon_of(dp_accounting.GaussianDpEvent(1.0), DELTA, "pld", neighbouring=bad)
    with pytest.raises(TypeError, match="neighbouring must be a NeighbouringRelation"):
        make_accountant("rdp", neighbouring=bad)


def test_neighbouring_is_required():
    with pytest.raises(TypeError, match="neighbouring"):
        epsilon_of(dp_accounting.GaussianDpEvent(1.0), DELTA, "pld")  # noqa -- deliberately missing


def test_unknown_accountant_is_rejected():
    with pytest.raises(ValueError, match=r"accountant must be one of \('rdp', 'pld'\), got 'gdp'"):
        make_accountant("gdp", neighbouring=AR)


# An asymmetric discrete pair: P0 = (0.6, 0.4, 0), P1 = (0.2, 0.4, 0.4).
_P0, _P1 = np.array([0.6, 0.4, 0.0]), np.array([0.2, 0.4, 0.4])


@pytest.mark.parametrize("first, second", [(_P0, _P1), (_P1, _P0)], ids=["p0-first", "p1-first"])
def test_hockey_stick_delta_takes_both_orders_by_hand(first, second):
    # At eps = ln 2: sum (P0 - 2 P1)_+ = (0.6 - 0.4) = 0.2; sum (P1 - 2 P0)_+ = 0.4 (the third output, impossible
    # under P0). The curve is the larger, 0.4, whichever argument comes first; dropping either order leaves 0.2 in
    # one of the two argument orders. At eps = 0 both orders give the total variation 0.4.
    with np.errstate(divide="ignore"):
        lp, lq = np.log(first), np.log(second)
    assert hockey_stick_delta(lp, lq, math.log(2)) == pytest.approx(0.4, abs=1e-12)
    assert hockey_stick_delta(lp, lq, 0.0) == pytest.approx(0.4, abs=1e-12)
    # The P1-over-P0 order stays at 0.4 for every finite eps (its third output has P0 = 0): no eps meets
    # delta = 0.25, and eps = 0 already meets delta = 0.4.
    assert exact_epsilon(lp, lq, 0.25) == math.inf
    assert exact_epsilon(lp, lq, 0.4) == 0.0
    # With the impossible output removed (P1 = (0.2, 0.8)), the curve is max((0.6 - 0.2 e^eps)_+, (0.2 - 0.6 e^eps)_+
    # + (0.8 - 0.4 e^eps)_+) and delta = 0.1 is met where 0.6 - 0.2 e^eps = 0.1 (e^eps = 2.5) and
    # 0.8 - 0.4 e^eps = 0.1 (e^eps = 1.75): eps = ln 2.5, set by the P0-over-P1 order.
    a, b = np.log([0.6, 0.4]), np.log([0.2, 0.8])
    if first is _P1:
        a, b = b, a
    assert exact_epsilon(a, b, 0.1) == pytest.approx(math.log(2.5), abs=1e-9)
