"""Mutants: broken versions of the code a check guards, each installed only while the check runs.

A :class:`Mutant` is a bug written down on purpose -- a noise scale halved, a constant or a log base
changed, a sign flipped, a factor dropped -- and the check that guards the code must be seen to fail
while it is applied. Every layer declares its mutants with this one type (the bound checks of each paper
in ``bounds/<paper>/mutants.py``), and installs them with :func:`patch`::

    Mutant("sigma-halved", "the Gaussian noise sigma halved",
           patch(semi_agnostic, "dpsas_sigma", lambda sigma: lambda *a, **k: sigma(*a, **k) / 2))

This module imports no layer of privbound.
"""

from __future__ import annotations

import contextlib
import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, ContextManager, Iterator
from unittest import mock

__all__ = ["MUTANT_PROFILES", "Mutant", "patch", "together"]

MUTANT_PROFILES = ("smoke", "default", "full")
"""The profiles in increasing order of budget; a mutant's ``profile`` is one of them."""


@dataclass(frozen=True)
class Mutant:
    """A broken version of what a check guards; the check must fail while it is applied.

    ``apply()`` returns a context manager that installs the bug and removes it on exit (usually built by
    :func:`patch`): a learner that makes twice the mistakes, a noise scale halved, a constant or log base
    changed, a sign flipped, a union bound shrunk -- broken the way a real bug would break it.
    ``profile`` is the smallest profile (one of :data:`MUTANT_PROFILES`) at which the check is expected
    to detect it. ``power`` states, when the statement is too loose for a 2x deviation to be visible on
    any instance, the factor the check can detect instead (e.g. "detects 4x the mistakes").
    """

    name: str
    description: str
    apply: Callable[[], ContextManager[Any]] = field(repr=False)
    profile: str = "smoke"
    power: str = ""

    def __post_init__(self) -> None:
        if self.profile not in MUTANT_PROFILES:
            raise ValueError(f"Mutant.profile must be one of {MUTANT_PROFILES}, got {self.profile!r}")


def patch(target: Any, attribute: str, make: Callable[[Any], Any]) -> Callable[[], ContextManager[Any]]:
    """The ``apply`` of a mutant that replaces ``target.attribute`` by ``make(original)`` while it is applied.

    ``target`` is the object that holds the name where the guarded code looks it up (a module, a class), or
    the dotted name of a module, imported when the mutant is applied. ``make`` receives the original value,
    read when the mutant is applied, and returns the broken one (``lambda _: 0.3`` for a constant).
    """

    def apply() -> ContextManager[Any]:
        owner = importlib.import_module(target) if isinstance(target, str) else target
        return mock.patch.object(owner, attribute, make(getattr(owner, attribute)))

    return apply


def together(*applies: Callable[[], ContextManager[Any]]) -> Callable[[], ContextManager[Any]]:
    """The ``apply`` of a mutant made of several patches (each an ``apply``), installed in order."""

    @contextlib.contextmanager
    def apply() -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            for one in applies:
                stack.enter_context(one())
            yield

    return apply
