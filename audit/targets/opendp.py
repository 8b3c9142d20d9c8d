"""Audit targets from a real DP library: measurements of the OpenDP Library (opendp.org) at its own claims.

Each target is an OpenDP measurement -- a transformation (count, bounded sum, histogram, sized
bounded mean) chained with a noise mechanism (OpenDP's Laplace and Gaussian, which sample
exactly on integers and floats) -- audited on a neighbouring pair of the relation OpenDP states
it for (``symmetric_distance`` 1: one record added or removed; 2 on a sized dataset: one record
replaced; ``absolute_distance`` 1 on a scalar). The claimed epsilon is what the library's own
privacy map returns (``measurement.map(d_in)``), zCDP turned into (epsilon, delta) by its own
combinators. The planted bug breaks the promise a domain makes: a sum declared over values in
[0, 1] with no clamp is fed a record of 10 (OpenDP does not check membership when a measurement
is invoked), so its sensitivity is 10 while the map claims 1 -- a mistake users make.

OpenDP draws from its own cryptographically secure generator, not from the ``rng`` an audit
passes: the outputs of these targets are valid samples but do not repeat for a seed
(``draws_own_randomness``). The module registers nothing when ``opendp`` is not installed
(``pip install "privbound[libs]"``); :data:`UNAVAILABLE` then says why.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable

import numpy as np

from privbound.audit.targets.registry import Target, register_target
from privbound.learners.neighbouring import NeighbouringRelation as NR

__all__ = ["OpenDPMeasurement", "UNAVAILABLE", "opendp_targets"]

UNAVAILABLE: str | None = (None if importlib.util.find_spec("opendp") is not None
                           else "opendp is not installed: pip install 'privbound[libs]'")


@dataclass(frozen=True)
class OpenDPMeasurement:
    """An OpenDP measurement as an auditable mechanism: ``build()`` makes it on first use.

    ``d_in`` is the input distance the claim is mapped at; ``epsilon``/``delta`` read the
    library's privacy map there.
    """

    label: str
    build: Callable[[], Any] = field(repr=False, compare=False)
    d_in: Any = 1
    draws_own_randomness = True  # OpenDP samples from its own secure generator, not from rng

    @cached_property
    def measurement(self) -> Any:
        return self.build()

    def __getstate__(self) -> dict[str, Any]:
        # The built measurement wraps ctypes pointers and cannot be pickled: a worker process
        # (loky, Dask) gets the recipe and builds its own on first use.
        state = self.__dict__.copy()
        state.pop("measurement", None)
        return state

    def __call__(self, data: Any, rng: np.random.Generator) -> Any:
        out = self.measurement(data.tolist() if isinstance(data, np.ndarray) else data)
        return np.asarray(out) if isinstance(out, list) else out

    @property
    def claim(self) -> tuple[float, float]:
        """(epsilon, delta) from OpenDP's privacy map at ``d_in``."""
        value = self.measurement.map(self.d_in)
        return (float(value[0]), float(value[1])) if isinstance(value, tuple) else (float(value), 0.0)


def _dp():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


def _count_laplace():
    dp = _dp()
    return (dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()) >> dp.t.then_count() \
        >> dp.m.then_laplace(scale=1.0)


def _float_sum_laplace():
    dp = _dp()
    return (dp.vector_domain(dp.atom_domain(bounds=(0.0, 10.0))), dp.symmetric_distance()) >> dp.t.then_sum() \
        >> dp.m.then_laplace(scale=10.0)


def _int_sum_gaussian():
    dp = _dp()
    zcdp = (dp.vector_domain(dp.atom_domain(bounds=(0, 10))), dp.symmetric_distance()) >> dp.t.then_sum() \
        >> dp.m.then_gaussian(scale=20.0)
    return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(zcdp), delta=1e-6)


def _scalar_laplace():
    dp = _dp()
    return (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)) >> dp.m.then_laplace(scale=1.0)


def _histogram_laplace():
    dp = _dp()
    return (dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()) \
        >> dp.t.then_count_by_categories(categories=["a", "b", "c"]) >> dp.m.then_laplace(scale=1.0)


def _sized_mean_laplace():
    dp = _dp()
    return (dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0)), size=10), dp.symmetric_distance()) \
        >> dp.t.then_mean() >> dp.m.then_laplace(scale=0.5)


def _unclamped_sum_laplace():
    dp = _dp()
    return (dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0))), dp.symmetric_distance()) >> dp.t.then_sum() \
        >> dp.m.then_laplace(scale=1.0)


_COUNTS = np.arange(1, 9)


def opendp_targets() -> list[Target]:
    """The OpenDP targets (building each measurement to read its claim); empty when OpenDP is missing."""
    if UNAVAILABLE is not None:
        return []
    specs = [
        ("opendp-count-laplace", "count of an integer dataset + OpenDP's Laplace (discrete on integers), scale 1",
         OpenDPMeasurement("count/laplace", _count_laplace), _COUNTS.tolist(), _COUNTS.tolist() + [9], NR.ADD_OR_REMOVE_ONE,
         "one record added", False, 10_000),
        ("opendp-sum-float-laplace", "sum of floats clamped to [0, 10] + OpenDP's float Laplace, scale 10",
         OpenDPMeasurement("sum/laplace", _float_sum_laplace), [1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 10.0],
         NR.ADD_OR_REMOVE_ONE, "a record at the upper bound added", False, 20_000),
        ("opendp-sum-int-gaussian", "sum of integers in [0, 10] + OpenDP's Gaussian, scale 20, zCDP -> (eps, 1e-6)",
         OpenDPMeasurement("sum/gaussian", _int_sum_gaussian), [1, 2, 3], [1, 2, 3, 10], NR.ADD_OR_REMOVE_ONE,
         "a record at the upper bound added", False, 20_000),
        ("opendp-scalar-laplace", "a float scalar + OpenDP's float Laplace, scale 1, absolute distance 1",
         OpenDPMeasurement("scalar/laplace", _scalar_laplace, 1.0), 0.0, 1.0, NR.BOUNDED_QUERY_CHANGE,
         "|x - x'| = 1", False, 10_000),
        ("opendp-histogram-laplace", "histogram over categories a, b, c (and 'other') + OpenDP's Laplace, scale 1",
         OpenDPMeasurement("histogram/laplace", _histogram_laplace), ["a", "b", "b"], ["a", "b", "b", "a"],
         NR.ADD_OR_REMOVE_ONE, "one record 'a' added", False, 10_000),
        ("opendp-sized-mean-laplace", "mean of 10 values in [0, 1] + OpenDP's Laplace, scale 0.5, mapped at d_in = 2",
         OpenDPMeasurement("mean/laplace", _sized_mean_laplace, 2), [0.0] * 10, [0.0] * 9 + [1.0], NR.REPLACE_ONE,
         "one record 0 replaced by 1 (symmetric distance 2)", False, 20_000),
        ("opendp-sum-unclamped", "BUG: sum declared over [0, 1] with no clamp, fed a record of 10 (OpenDP does not "
         "check the domain on invocation): sensitivity 10 under a claim for 1",
         OpenDPMeasurement("sum/laplace, bounds [0, 1]", _unclamped_sum_laplace), [0.5, 0.5], [0.5, 0.5, 10.0],
         NR.ADD_OR_REMOVE_ONE, "a record of 10 added (outside the declared bounds)", True, 10_000),
    ]
    out = []
    for name, desc, mech, d0, d1, relation, canary, bug, trials in specs:
        eps, delta = mech.claim
        out.append(Target(name, "opendp", mech, d0, d1, eps, delta, neighbouring=relation, canary=canary,
                          planted_bug=bug, description=desc, default_trials=trials,
                          claim_source="OpenDP Library: measurement.map(d_in)", float_safe=None if bug else True))
    return out


for _target in opendp_targets():
    register_target(_target)
