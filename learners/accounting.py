"""Privacy accounting of ``DpEvent`` descriptions with dp_accounting's RDP and PLD accountants.

A mechanism or learner describes its run as a ``dp_accounting.DpEvent``; these helpers ask
an accountant for the epsilon (or delta) of that description, so a second, usually tighter,
claim can be set beside the hand analysis:

* RDP: Mironov, "Rényi differential privacy", CSF 2017 (``dp_accounting.rdp.RdpAccountant``);
* PLD: Koskela, Jälkö & Honkela, AISTATS 2020, and Doroshenko et al., PoPETs 2022
  (``dp_accounting.pld.PLDAccountant``, pessimistic discretisation of step ``pld_discretization``).

Neighbouring relations. Every helper takes the :class:`NeighbouringRelation` the event is stated
under, and the accountant interprets the event under the ``dp_accounting.NeighboringRelation`` of
:data:`ACCOUNTANT_RELATIONS` (:func:`accountant_relation`). An event follows dp_accounting's
parameterisation: a ``GaussianDpEvent`` / ``LaplaceDpEvent`` noise multiplier is the noise over the
bound C of one record's contribution, so neighbours are C apart under add/remove and 2C apart
under replace-one (:func:`replace_one_noise_multiplier`); a ``RandomizedResponseDpEvent`` is the
mechanism on one input replaced by another.

* ``ADD_OR_REMOVE_ONE`` -> ``ADD_OR_REMOVE_ONE``; ``REPLACE_ONE`` -> ``REPLACE_ONE``.
* ``BOUNDED_QUERY_CHANGE`` -> ``ADD_OR_REMOVE_ONE``: the event's parameters are per unit of the
  query's sensitivity, the largest change between the neighbours' answers, and add/remove is the
  relation under which a Gaussian or Laplace event's loss is that of a shift by one unit.
* ``ANY_TWO_INPUTS`` and ``REPLACE_ONE_ROUND`` -> ``REPLACE_ONE``: one input (of one record, or of
  one round of a stream) is replaced by another. The events privbound states under them are
  randomized responses (local randomized response; DP-Winnow's pure-DP steps), which dp_accounting
  interprets under the replace relations only, and under ``REPLACE_ONE`` as exactly the epsilon of
  their parameters.

What dp_accounting 0.6.0 does with an event under ``REPLACE_ONE`` (its ``rdp_privacy_accountant``
and ``pld_privacy_accountant``): PLD composes a Gaussian (Poisson-subsampled or not) with the
record moved from -C to +C, i.e. the add/remove Gaussian at twice the sensitivity when not
subsampled, and randomized response exactly; it refuses Laplace, discrete Laplace and subsampled
Laplace. RDP interprets randomized response under the relation, refuses Poisson subsampling and
computes Gaussian, Laplace and sampled-without-replacement Gaussian events as if the neighbours
were C apart (google/differential-privacy#378 on GitHub): the RDP accountant made here refuses those
under ``REPLACE_ONE`` instead of understating them. dp_accounting's PLD accountant composes a
``RandomizedResponseDpEvent`` once whatever its count; the PLD accountant made here refuses a
randomized response composed more than once.

The exact privacy curve of a pair of discrete output laws (:func:`hockey_stick_delta`, :func:`exact_epsilon`)
is the other route to a tight epsilon, where an output law can be computed exactly.

dp_accounting is imported on first use only.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
from typing import Any, Callable, Iterator

import numpy as np

from privbound.learners.neighbouring import NeighbouringRelation

__all__ = [
    "ACCOUNTANTS",
    "ACCOUNTANT_RELATIONS",
    "accountant_relation",
    "check_neighbouring",
    "replace_one_noise_multiplier",
    "make_accountant",
    "epsilon_of",
    "delta_of",
    "calibrate_noise",
    "quiet_absl",
    "hockey_stick_delta",
    "exact_epsilon",
]

ACCOUNTANTS = ("rdp", "pld")
# dp_accounting's own default discretisation of the privacy-loss distribution.
PLD_DISCRETIZATION = 1e-4

_NR = NeighbouringRelation
# privbound's relation -> the name of the dp_accounting.NeighboringRelation its events are interpreted under
# (the module docstring says why).
ACCOUNTANT_RELATIONS: dict[NeighbouringRelation, str] = {
    _NR.ADD_OR_REMOVE_ONE: "ADD_OR_REMOVE_ONE",
    _NR.REPLACE_ONE: "REPLACE_ONE",
    _NR.REPLACE_ONE_ROUND: "REPLACE_ONE",
    _NR.BOUNDED_QUERY_CHANGE: "ADD_OR_REMOVE_ONE",
    _NR.ANY_TWO_INPUTS: "REPLACE_ONE",
}

# Events whose RDP dp_accounting computes for neighbours one noise-multiplier unit apart whatever the relation.
_RDP_RELATION_BLIND_EVENTS = ("GaussianDpEvent", "LaplaceDpEvent", "SampledWithoutReplacementDpEvent")


def check_neighbouring(neighbouring: Any) -> NeighbouringRelation:
    """``neighbouring`` if it is a :class:`NeighbouringRelation`; ``TypeError`` naming the allowed members otherwise."""
    if not isinstance(neighbouring, NeighbouringRelation):
        raise TypeError(f"neighbouring must be a NeighbouringRelation "
                        f"({', '.join(r.name for r in NeighbouringRelation)}), got {neighbouring!r}")
    return neighbouring


def accountant_relation(neighbouring: NeighbouringRelation) -> Any:
    """The ``dp_accounting.NeighboringRelation`` an event stated under ``neighbouring`` is interpreted under."""
    import dp_accounting

    return dp_accounting.NeighboringRelation[ACCOUNTANT_RELATIONS[check_neighbouring(neighbouring)]]


def replace_one_noise_multiplier(noise_over_sensitivity: float) -> float:
    """The noise multiplier of a Gaussian or Laplace ``DpEvent`` under replace-one, for noise of
    ``noise_over_sensitivity`` times the replace-one sensitivity.

    dp_accounting's multiplier is the noise over one record's bound C, and replacing a record moves it
    from -C to +C: the replace-one sensitivity is 2C, so the multiplier is twice ``noise_over_sensitivity``.
    """
    return 2.0 * float(noise_over_sensitivity)


@contextlib.contextmanager
def quiet_absl() -> Iterator[None]:
    """Silence absl's per-order RDP warnings (fractional orders it cannot evaluate at large sampling rates)."""
    logger = logging.getLogger("absl")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _rdp_refusal(event: Any, relation: Any) -> str | None:
    """Why privbound's RDP accountant refuses ``event`` under the dp_accounting ``relation`` (None: it does not)."""
    import dp_accounting

    if relation is dp_accounting.NeighboringRelation.REPLACE_ONE and type(event).__name__ in _RDP_RELATION_BLIND_EVENTS:
        return (f"dp_accounting's RDP accountant computes a {type(event).__name__} under REPLACE_ONE as if the "
                "neighbours were one record's bound C apart (they are 2C apart): use the PLD accountant")
    return None


def _has_randomized_response(event: Any) -> bool:
    import dp_accounting

    if isinstance(event, dp_accounting.RandomizedResponseDpEvent):
        return True
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return _has_randomized_response(event.event)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return any(_has_randomized_response(e) for e in event.events)
    return False


def _pld_refusal(event: Any, count: int) -> str | None:
    """Why privbound's PLD accountant refuses ``event`` composed ``count`` times (None: it does not)."""
    import dp_accounting

    repeats = event.count if isinstance(event, dp_accounting.SelfComposedDpEvent) else count
    if repeats > 1 and _has_randomized_response(event):
        return (f"dp_accounting's PLD accountant composes a RandomizedResponseDpEvent once, not {repeats} times: "
                "use the RDP accountant")
    return None


@functools.cache
def _accountant_classes() -> dict[str, type]:
    """dp_accounting's RDP and PLD accountants, refusing the events they would account wrongly (module docstring)."""
    from dp_accounting.pld import PLDAccountant
    from dp_accounting.rdp import RdpAccountant

    class RelationAwareRdpAccountant(RdpAccountant):
        def _maybe_compose(self, event, count, do_compose):
            reason = _rdp_refusal(event, self.neighboring_relation)
            if reason is not None:
                return self.CompositionErrorDetails(invalid_event=event, error_message=reason)
            return super()._maybe_compose(event, count, do_compose)

    class RelationAwarePLDAccountant(PLDAccountant):
        def _maybe_compose(self, event, count, do_compose):
            reason = _pld_refusal(event, count)
            if reason is not None:
                return self.CompositionErrorDetails(invalid_event=event, error_message=reason)
            return super()._maybe_compose(event, count, do_compose)

    return {"rdp": RelationAwareRdpAccountant, "pld": RelationAwarePLDAccountant}


def _check_accountant(name: str) -> str:
    if name not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {name!r}")
    return name


def make_accountant(name: str = "rdp", *, neighbouring: NeighbouringRelation,
                    pld_discretization: float = PLD_DISCRETIZATION) -> Any:
    """A fresh dp_accounting accountant, ``"rdp"`` or ``"pld"``, for events stated under ``neighbouring``."""
    cls = _accountant_classes()[_check_accountant(name)]
    relation = accountant_relation(neighbouring)
    if name == "rdp":
        return cls(neighboring_relation=relation)
    return cls(neighboring_relation=relation, value_discretization_interval=pld_discretization)


def _composed(event: Any, accountant: str, neighbouring: NeighbouringRelation, pld_discretization: float) -> Any:
    """An accountant with ``event`` composed; ``ValueError`` saying why when it does not support the event."""
    import dp_accounting

    acc = make_accountant(accountant, neighbouring=neighbouring, pld_discretization=pld_discretization)
    try:
        return acc.compose(event)
    except dp_accounting.UnsupportedEventError as e:
        raise ValueError(f"the {accountant} accountant does not support this event under neighbouring="
                         f"{neighbouring.value}: {e}") from None


def epsilon_of(event: Any, delta: float, accountant: str = "rdp", *, neighbouring: NeighbouringRelation,
               pld_discretization: float = PLD_DISCRETIZATION) -> float:
    """epsilon at ``delta`` of ``event``, stated under ``neighbouring``, by the named accountant."""
    with quiet_absl():
        return float(_composed(event, accountant, neighbouring, pld_discretization).get_epsilon(delta))


def delta_of(event: Any, epsilon: float, accountant: str = "pld", *, neighbouring: NeighbouringRelation,
             pld_discretization: float = PLD_DISCRETIZATION) -> float:
    """delta at ``epsilon`` of ``event``, stated under ``neighbouring``, by the named accountant."""
    with quiet_absl():
        return float(_composed(event, accountant, neighbouring, pld_discretization).get_delta(epsilon))


def _pld_bracket(dp_event_of: Callable[[float], Any], epsilon: float, delta: float,
                 neighbouring: NeighbouringRelation, pld_discretization: float, lowest: float) -> Any:
    """An interval [lo, hi] of noise multipliers with PLD epsilon above ``epsilon`` at ``lo`` and at most it at
    ``hi``, found from sigma = 1 by doubling and halving (never evaluating PLD below the bracket's lower end)."""
    import dp_accounting

    def private(sigma: float) -> bool:
        acc = make_accountant("pld", neighbouring=neighbouring, pld_discretization=pld_discretization)
        return acc.compose(dp_event_of(sigma)).get_epsilon(delta) <= epsilon

    hi = 1.0
    while not private(hi):
        if hi > 2.0**30:
            raise ValueError(f"no noise multiplier up to 2^30 makes the event ({epsilon:g}, {delta:g})-DP")
        hi *= 2.0
    lo = hi / 2.0
    while lo > lowest and private(lo):
        lo /= 2.0
    return dp_accounting.ExplicitBracketInterval(max(lo, lowest), hi)


def calibrate_noise(dp_event_of: Callable[[float], Any], epsilon: float, delta: float, accountant: str = "rdp", *,
                    neighbouring: NeighbouringRelation, pld_discretization: float = PLD_DISCRETIZATION,
                    lowest: float = 1e-3) -> float:
    """The smallest noise multiplier sigma (to 1e-4) with which ``dp_event_of(sigma)``, stated under
    ``neighbouring``, is (epsilon, delta)-DP by the named accountant (``dp_accounting.calibrate_dp_mechanism``).

    PLD on a tiny sigma needs a huge discretised distribution, so its search is bracketed by the RDP value,
    which is valid (PLD's sigma is never larger) and rarely more than ~2x too large; where the RDP
    accountant does not support the event, by halving and doubling sigma from 1 (:func:`_pld_bracket`).
    """
    import dp_accounting

    _check_accountant(accountant)
    check_neighbouring(neighbouring)
    rdp_supports = make_accountant("rdp", neighbouring=neighbouring).supports(dp_event_of(1.0))
    if accountant == "rdp" and not rdp_supports:
        _composed(dp_event_of(1.0), "rdp", neighbouring, pld_discretization)  # raises, saying why
    with quiet_absl():
        if rdp_supports:
            rdp = float(dp_accounting.calibrate_dp_mechanism(
                lambda: make_accountant("rdp", neighbouring=neighbouring), dp_event_of, epsilon, delta,
                bracket_interval=dp_accounting.LowerEndpointAndGuess(lowest, 1.0), tol=1e-4))
            if accountant == "rdp":
                return rdp
            bracket = dp_accounting.ExplicitBracketInterval(0.3 * rdp, 1.001 * rdp)
        else:
            bracket = _pld_bracket(dp_event_of, epsilon, delta, neighbouring, pld_discretization, lowest)
        return float(dp_accounting.calibrate_dp_mechanism(
            lambda: make_accountant("pld", neighbouring=neighbouring, pld_discretization=pld_discretization),
            dp_event_of, epsilon, delta, bracket_interval=bracket, tol=1e-4))


def hockey_stick_delta(logp0: np.ndarray, logp1: np.ndarray, epsilon: float) -> float:
    """max over both orders of sum_o max(0, P_a(o) - e^eps P_b(o)) (exact privacy curve of a discrete pair)."""
    p0, p1 = np.exp(logp0), np.exp(logp1)
    e = math.exp(epsilon)
    return float(max(np.maximum(0.0, p0 - e * p1).sum(), np.maximum(0.0, p1 - e * p0).sum()))


def exact_epsilon(logp0: np.ndarray, logp1: np.ndarray, delta: float) -> float:
    """The smallest epsilon >= 0 with hockey_stick_delta <= delta (bisection; delta(eps) is non-increasing)."""
    if hockey_stick_delta(logp0, logp1, 0.0) <= delta:
        return 0.0
    finite = np.isfinite(logp0) & np.isfinite(logp1)
    hi = float(np.max(np.abs(logp0[finite] - logp1[finite]))) + 1e-9 if finite.any() else 50.0
    if hockey_stick_delta(logp0, logp1, hi) > delta:
        return math.inf
    lo = 0.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if hockey_stick_delta(logp0, logp1, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi
