"""Source mutants for ``benchmarks/mutation_score.py``: one-line bugs of the kinds real code has.

Each module here lists ``MUTANTS``, each a :class:`SourceMutant`: a file of the repository, a
piece of its text that occurs exactly once, the text that replaces it, and what the change
breaks. ``generic.py`` holds the auditor's and the primitives'; one module per paper holds its
learners' and checks'.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass

__all__ = ["SourceMutant", "all_mutants"]


@dataclass(frozen=True)
class SourceMutant:
    """Replace ``old`` (which must occur exactly once in ``path``) by ``new``."""

    name: str
    path: str  # relative to the repository root
    old: str
    new: str
    description: str


def all_mutants() -> list[SourceMutant]:
    """Every module's ``MUTANTS``, in module order."""
    out: list[SourceMutant] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        out += importlib.import_module(f"{__name__}.{info.name}").MUTANTS
    return out
