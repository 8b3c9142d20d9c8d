"""privbound: verify differential-privacy code and learning-theory bounds.

The public face of the package. Every name below is loaded on first use, so
``import privbound`` itself imports nothing heavy::

    >>> import privbound
    >>> mechanism = lambda x, rng: x + rng.laplace(scale=1.0)   # epsilon = 1 for |x - x'| <= 1
    >>> result = privbound.audit_mechanism(mechanism, 0.0, 1.0, epsilon=1.0)

Subpackages (one folder each in the repository, dependencies pointing one way,
``learners`` <- ``audit`` <- ``bounds`` <- ``reports``):

* :mod:`privbound.learners` -- DP primitives and the learners of the three papers;
* :mod:`privbound.audit` -- the privacy auditor and the target registry;
* :mod:`privbound.bounds` -- the papers' theorems as executable claims with checks;
* :mod:`privbound.reports` -- the ``privbound`` command line and the nightly run.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

# public name -> module that defines it
_EXPORTS = {
    "audit_mechanism": "privbound.audit.core",
    "audit_outputs": "privbound.audit.core",
    "AuditResult": "privbound.audit.result",
    "BlackBox": "privbound.audit.estimators",
    "OutputSpace": "privbound.audit.estimators",
    "WhiteBox": "privbound.audit.estimators",
    "Composition": "privbound.audit.estimators",
    "FloatingPoint": "privbound.audit.estimators",
    "epsilon_lower_bound": "privbound.audit.statistics",
    "Split": "privbound.audit.statistics",
    "AllThresholds": "privbound.audit.statistics",
    "Explicit": "privbound.audit.statistics",
    "MechanismError": "privbound.audit.engine",
    "membership_audit": "privbound.audit.membership",
    "MembershipResult": "privbound.audit.membership",
    "search_and_audit": "privbound.audit.search",
    "one_run_audit": "privbound.audit.one_run",
    "assert_dp": "privbound.audit.pytest_plugin",
    "targets": "privbound.audit.targets",
    "get_target": "privbound.audit.targets",
    "NeighbouringRelation": "privbound.learners.neighbouring",
}
_SUBPACKAGES = ("audit", "bounds", "learners", "reports")

__all__ = sorted(_EXPORTS) + list(_SUBPACKAGES) + ["__version__"]

if TYPE_CHECKING:  # static analysers see the real names
    from privbound.audit.core import audit_mechanism, audit_outputs  # noqa: F401
    from privbound.audit.estimators import BlackBox, Composition, FloatingPoint, OutputSpace, WhiteBox  # noqa: F401
    from privbound.audit.result import AuditResult  # noqa: F401
    from privbound.audit.engine import MechanismError  # noqa: F401
    from privbound.audit.statistics import AllThresholds, Explicit, Split, epsilon_lower_bound  # noqa: F401
    from privbound.audit.membership import MembershipResult, membership_audit  # noqa: F401
    from privbound.audit.one_run import one_run_audit  # noqa: F401
    from privbound.audit.pytest_plugin import assert_dp  # noqa: F401
    from privbound.audit.search import search_and_audit  # noqa: F401
    from privbound.audit.targets import get_target, targets  # noqa: F401
    from privbound.learners.neighbouring import NeighbouringRelation  # noqa: F401


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f"privbound.{name}")
    else:
        raise AttributeError(f"module 'privbound' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
