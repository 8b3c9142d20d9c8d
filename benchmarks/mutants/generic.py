"""Mutants of the auditor (estimators, engine, attacks) and of the DP primitives."""

from __future__ import annotations

from . import SourceMutant

MUTANTS: list[SourceMutant] = []
