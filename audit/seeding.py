"""Auditing code you cannot change: a mechanism that draws from the global ``np.random``.

The trial engine (:mod:`privbound.audit.engine`) needs every draw to come from the ``rng`` it passes, so that a
seed repeats an audit bit for bit; a mechanism that uses the global ``np.random`` (legacy ``np.random.laplace``,
``np.random.normal``, ...) is refused with a :class:`~privbound.audit.engine.MechanismError`. When the code cannot
be changed, :class:`GlobalNumpyRandom` wraps it: for each call it seeds the global state from the trial's generator
and restores the previous global state afterwards, so the draws follow from the audit's seed and nothing outside
the call sees them. (The other way out, for a library that draws from a secure generator of its own on purpose, is
to declare ``draws_own_randomness = True`` on the mechanism: its audits are valid but do not repeat for a seed.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

__all__ = ["GlobalNumpyRandom"]


@dataclass(frozen=True)
class GlobalNumpyRandom:
    """``mechanism(data)`` (or ``mechanism(data, rng)`` with ``pass_rng=True``) made auditable although it draws from
    the global ``np.random``: each call runs with ``np.random.seed(rng.integers(2**32))`` and the global state is
    restored afterwards, also when the mechanism raises. Not thread-safe (the global state is shared): run its audits
    with the default process-based backend, not joblib's threading backend."""

    mechanism: Callable[..., Any] = field(repr=False)
    pass_rng: bool = False
    name: str = "mechanism"

    def __post_init__(self) -> None:
        if not callable(self.mechanism):
            raise TypeError(f"mechanism must be callable, got {type(self.mechanism).__name__}")
        if not isinstance(self.pass_rng, bool):
            raise TypeError(f"pass_rng must be a bool, got {type(self.pass_rng).__name__}")

    def __repr__(self) -> str:
        return f"GlobalNumpyRandom({self.name})"

    def __call__(self, data: Any, rng: np.random.Generator) -> Any:
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        state = np.random.get_state()
        np.random.seed(int(rng.integers(2 ** 32)))
        try:
            return self.mechanism(data, rng) if self.pass_rng else self.mechanism(data)
        finally:
            np.random.set_state(state)
