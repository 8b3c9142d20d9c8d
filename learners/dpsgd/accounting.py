"""Privacy accounting of DP-SGD (Abadi et al., CCS 2016, arXiv:1607.00133).

One DP-SGD step releases the sum of the per-example gradients of a Poisson(q) subsample, each
clipped to L2 norm C, plus N(0, sigma^2 C^2 I): a Poisson-subsampled Gaussian mechanism of
noise multiplier sigma (sensitivity C under add/remove of one example). T steps compose:

    SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), T)

and dp_accounting's accountants (:mod:`privbound.learners.accounting`: RDP, Mironov 2017 and
Mironov, Talwar & Zhang 2019; PLD, Koskela et al. 2020 and Doroshenko et al. 2022) turn it into
(epsilon, delta). Dividing the noisy sum by a public constant (the expected batch size) is
post-processing.
"""

from __future__ import annotations

import functools
from typing import Any

from privbound.learners.accounting import ACCOUNTANTS, calibrate_noise, epsilon_of
from privbound.learners.neighbouring import NeighbouringRelation
from privbound._validation import check_delta, check_epsilon, check_int, check_probability, check_real

__all__ = ["PLD_STEP", "dpsgd_dp_event", "dpsgd_epsilon", "calibrate_noise_multiplier"]

# Discretisation of the privacy-loss distribution used to calibrate and to state DP-SGD's claim
# (pessimistic: the epsilon it reports is an upper bound).
PLD_STEP = 1e-3
# The relation DP-SGD's guarantee is stated under (the sum's sensitivity is C under add/remove).
_RELATION = NeighbouringRelation.ADD_OR_REMOVE_ONE


def dpsgd_dp_event(sampling_rate: float, noise_multiplier: float, steps: int) -> Any:
    """The ``dp_accounting.DpEvent`` of ``steps`` DP-SGD steps: T-fold self-composition of the Poisson-subsampled Gaussian."""
    import dp_accounting

    q = check_probability(sampling_rate, "sampling_rate", open_low=True)
    sigma = check_real(noise_multiplier, "noise_multiplier", low=0.0)
    T = check_int(steps, "steps", low=1)
    if sigma == 0.0:
        return dp_accounting.NonPrivateDpEvent()
    step = dp_accounting.GaussianDpEvent(sigma)
    if q < 1.0:
        step = dp_accounting.PoissonSampledDpEvent(q, step)
    return dp_accounting.SelfComposedDpEvent(step, T)


def _check_accountant(accountant: str) -> str:
    if accountant not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}")
    return accountant


def dpsgd_epsilon(sampling_rate: float, noise_multiplier: float, steps: int, delta: float, accountant: str = "pld") -> float:
    """epsilon at ``delta`` of ``steps`` DP-SGD steps by the named accountant (PLD at discretisation :data:`PLD_STEP`)."""
    delta = check_delta(delta)
    return epsilon_of(dpsgd_dp_event(sampling_rate, noise_multiplier, steps), delta, _check_accountant(accountant),
                      neighbouring=_RELATION, pld_discretization=PLD_STEP)


@functools.lru_cache(maxsize=256)
def calibrate_noise_multiplier(epsilon: float, delta: float, sampling_rate: float, steps: int,
                               accountant: str = "pld") -> float:
    """The smallest noise multiplier sigma (to 1e-4) with which ``steps`` DP-SGD steps at rate ``sampling_rate`` are
    (epsilon, delta)-DP by dp_accounting's ``accountant``
    (:func:`privbound.learners.accounting.calibrate_noise`).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_real(delta, "delta", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    q = check_probability(sampling_rate, "sampling_rate", open_low=True)
    T = check_int(steps, "steps", low=1)
    _check_accountant(accountant)
    return calibrate_noise(lambda sigma: dpsgd_dp_event(q, sigma, T), epsilon, delta, accountant,
                           neighbouring=_RELATION, pld_discretization=PLD_STEP, lowest=1e-2)
