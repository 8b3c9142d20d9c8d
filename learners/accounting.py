"""Privacy accounting of ``DpEvent`` descriptions with dp_accounting's RDP and PLD accountants.

A mechanism or learner describes its run as a ``dp_accounting.DpEvent``; these helpers ask
an accountant for the epsilon (or delta) of that description, so a second, usually tighter,
claim can be set beside the hand analysis:

* RDP: Mironov, "Rényi differential privacy", CSF 2017 (``dp_accounting.rdp.RdpAccountant``);
* PLD: Koskela, Jälkö & Honkela, AISTATS 2020, and Doroshenko et al., PoPETs 2022
  (``dp_accounting.pld.PLDAccountant``, pessimistic discretisation of step ``pld_discretization``).

The exact privacy curve of a pair of discrete output laws (:func:`hockey_stick_delta`, :func:`exact_epsilon`)
is the other route to a tight epsilon, where an output law can be computed exactly.

dp_accounting is imported on first use only.
"""

from __future__ import annotations

import contextlib
import logging
import math
from typing import Any, Callable, Iterator

import numpy as np

__all__ = ["ACCOUNTANTS", "make_accountant", "epsilon_of", "delta_of", "calibrate_noise", "quiet_absl",
           "dp_accounting_relation", "hockey_stick_delta", "exact_epsilon"]

ACCOUNTANTS = ("rdp", "pld")
# dp_accounting's own default discretisation of the privacy-loss distribution.
PLD_DISCRETIZATION = 1e-4


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


def dp_accounting_relation(neighbouring: Any) -> Any:
    """The ``dp_accounting.NeighboringRelation`` of a dataset relation (``None``: dp_accounting's default,
    add-or-remove-one). Event-level replace-one is replace-one of the round's example."""
    import dp_accounting

    from privbound.learners.neighbouring import NeighbouringRelation as NR

    if neighbouring is None or neighbouring == NR.ADD_OR_REMOVE_ONE:
        return dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
    if neighbouring in (NR.REPLACE_ONE, NR.REPLACE_ONE_ROUND):
        return dp_accounting.NeighboringRelation.REPLACE_ONE
    raise ValueError(f"neighbouring must be one of {[r.value for r in (NR.ADD_OR_REMOVE_ONE, NR.REPLACE_ONE, NR.REPLACE_ONE_ROUND)]} "
                     f"(the relations of dp_accounting), got {neighbouring!r}")


def make_accountant(name: str = "rdp", *, pld_discretization: float = PLD_DISCRETIZATION,
                    neighbouring: Any = None) -> Any:
    """A fresh dp_accounting accountant: ``"rdp"`` or ``"pld"``, for the relation ``neighbouring``
    (a :class:`~privbound.learners.neighbouring.NeighbouringRelation`; ``None``: add-or-remove-one)."""
    relation = dp_accounting_relation(neighbouring)
    if name == "rdp":
        from dp_accounting.rdp import RdpAccountant

        return RdpAccountant(neighboring_relation=relation)
    if name == "pld":
        from dp_accounting.pld import PLDAccountant

        return PLDAccountant(neighboring_relation=relation, value_discretization_interval=pld_discretization)
    raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {name!r}")


def epsilon_of(event: Any, delta: float, accountant: str = "rdp", *,
               pld_discretization: float = PLD_DISCRETIZATION, neighbouring: Any = None) -> float:
    """epsilon at ``delta`` of ``event`` by the named accountant, under ``neighbouring`` (default add-or-remove-one)."""
    with quiet_absl():
        acc = make_accountant(accountant, pld_discretization=pld_discretization, neighbouring=neighbouring)
        acc.compose(event)
        return float(acc.get_epsilon(delta))


def delta_of(event: Any, epsilon: float, accountant: str = "pld", *,
             pld_discretization: float = PLD_DISCRETIZATION) -> float:
    """delta at ``epsilon`` of ``event`` by the named accountant."""
    with quiet_absl():
        acc = make_accountant(accountant, pld_discretization=pld_discretization)
        acc.compose(event)
        return float(acc.get_delta(epsilon))


def calibrate_noise(dp_event_of: Callable[[float], Any], epsilon: float, delta: float, accountant: str = "rdp", *,
                    pld_discretization: float = PLD_DISCRETIZATION, lowest: float = 1e-3) -> float:
    """The smallest noise multiplier sigma (to 1e-4) with which ``dp_event_of(sigma)`` is (epsilon, delta)-DP
    by the named accountant (``dp_accounting.calibrate_dp_mechanism``).

    PLD on a tiny sigma needs a huge discretised distribution, so its search is bracketed by the RDP value,
    which is valid (PLD's sigma is never larger) and rarely more than ~2x too large.
    """
    import dp_accounting

    if accountant not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}")
    with quiet_absl():
        rdp = float(dp_accounting.calibrate_dp_mechanism(
            lambda: make_accountant("rdp"), dp_event_of, epsilon, delta,
            bracket_interval=dp_accounting.LowerEndpointAndGuess(lowest, 1.0), tol=1e-4))
        if accountant == "rdp":
            return rdp
        return float(dp_accounting.calibrate_dp_mechanism(
            lambda: make_accountant("pld", pld_discretization=pld_discretization), dp_event_of, epsilon, delta,
            bracket_interval=dp_accounting.ExplicitBracketInterval(0.3 * rdp, 1.001 * rdp), tol=1e-4))


# ============================================================================ exact privacy curves of discrete pairs


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
