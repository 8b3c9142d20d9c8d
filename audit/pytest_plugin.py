"""pytest plugin of privbound (registered through the ``pytest11`` entry point).

Adds the options ``--privbound-seed`` and ``--privbound-scale`` and a ``dp_audit``
fixture that runs :func:`audit.audit_mechanism` with them. The statistical
assertions and the session error budget come with the reports issue.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("privbound")
    group.addoption("--privbound-seed", type=int, default=0, help="seed of privbound audits in tests (default 0)")
    group.addoption(
        "--privbound-scale", type=float, default=1.0, help="multiplies the trial counts of privbound audits (default 1)"
    )


@pytest.fixture
def dp_audit(request):
    """``dp_audit(mechanism, d0, d1, epsilon=..., ...)``: an audit with the session's seed and scale."""
    from audit.core import audit_mechanism

    seed = request.config.getoption("--privbound-seed")
    scale = request.config.getoption("--privbound-scale")

    def run(mechanism, d0, d1, *, trials=10_000, **kwargs):
        kwargs.setdefault("seed", seed)
        return audit_mechanism(mechanism, d0, d1, trials=max(10, int(trials * scale)), **kwargs)

    return run
