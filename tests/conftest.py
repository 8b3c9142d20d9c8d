"""Fixtures shared by the whole test suite."""

from __future__ import annotations

from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

from privbound.bounds.checks import CheckContext

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository's top folder (README.md, benchmarks/, the package folders)."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def check_context():
    """``check_context(seed, profile="smoke")``: the context a check gets from the runner, for that seed."""
    return CheckContext.seeded


@pytest.fixture(scope="session", autouse=True)
def one_blas_thread():
    """One BLAS / OpenMP thread per test process: the small products of the tests gain nothing from
    threads, and on a busy machine competing threads made them many times slower."""
    with threadpool_limits(limits=1):
        yield
