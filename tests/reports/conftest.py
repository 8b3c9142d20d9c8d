"""Fixtures of the reports tests: a small learner-like target registered for one test."""

from __future__ import annotations

import numpy as np
import pytest

from privbound.audit.targets import registry
from privbound.audit.targets.registry import Target, TightEpsilon
from privbound.mutation import Mutant, patch


class Noise:
    """Where the fixture mechanism looks its Laplace scale up at each batch, so a mutant can patch it
    (``privbound.mutation.patch(Noise, "scale", ...)``)."""

    scale = 1.0


class NoisyCount:
    """A count released with discrete Laplace noise of scale ``Noise.scale`` (P(k) proportional to
    exp(-|k| / scale), the difference of two geometric draws): on the pair 0 / 1 (sensitivity 1), epsilon =
    1 / scale exactly, in floating point too (integer outputs), so a night reads only the verdicts under test."""

    def sample(self, data, rng, size):
        p = -np.expm1(-1.0 / Noise.scale)
        return data + (rng.geometric(p, size=size) - rng.geometric(p, size=size))

    def __repr__(self) -> str:
        return "NoisyCount()"


@pytest.fixture
def laplace_target(monkeypatch):
    """``laplace_target(name, tight=1.0, mutants=(), claim=2.0)``: register (for this test) a Laplace count of
    scale 1 -- epsilon 1 exactly -- with a looser paper claim and ``tight`` as its tight epsilon (None: no
    tight value), and return it."""

    names = []

    def make(name: str, *, tight: float | None = 1.0, mutants=(), claim: float = 2.0, **kw) -> Target:
        target = Target(
            name, "fixture-laplace", NoisyCount(), 0.0, 1.0, claim, canary="the count moves by one",
            description="Laplace count of scale 1 (a test fixture)", default_trials=10_000,
            tight_epsilon=None if tight is None else (lambda: TightEpsilon(tight, "Laplace scale 1, sensitivity 1")),
            mutants=tuple(mutants), **kw)
        monkeypatch.setitem(registry._TARGETS, name, target)
        registry._TIGHT.pop(name, None)  # tight values are cached by name
        names.append(name)
        return target

    yield make
    for name in names:
        registry._TIGHT.pop(name, None)


@pytest.fixture
def scale_mutant():
    """``scale_mutant(name, factor, profile="default")``: a mutant of the fixture target's learner that
    multiplies its Laplace scale by ``factor`` (0.5: epsilon doubled, a privacy bug; 2: harmless)."""

    def make(name: str, factor: float, profile: str = "default") -> Mutant:
        return Mutant(name, f"the Laplace scale times {factor:g}", patch(Noise, "scale", lambda s: s * factor),
                      profile=profile)

    return make
