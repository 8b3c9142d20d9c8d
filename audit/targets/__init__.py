"""privbound.audit.targets: the registered audit targets.

:mod:`.registry` holds :class:`Target` and the registry; importing this package
registers the targets of every module below (computing nothing: mechanisms calibrate
on first use):

* :mod:`.reference` -- the DP primitives and their planted bugs;
* :mod:`.decision_lists_winnow`, :mod:`.robust_halfspaces`, :mod:`.agnostic_halfspaces` --
  the learners of each paper, their planted bugs and their one-run canary designs;
* :mod:`.dpsgd` -- DP-SGD audited with gradient (white-box) and input (black-box) canaries;
* :mod:`.opendp` -- measurements of the OpenDP Library at its own claims (when installed);
* :mod:`.opacus` -- Opacus DP-SGD trainings at the claims of its accountant (when torch and Opacus are installed);
* :mod:`.libraries` -- diffprivlib and PipelineDP mechanisms at their own claims (when installed).

:mod:`.membership` holds the membership-inference targets (models and data, audited by
:func:`privbound.audit.membership.membership_audit`); it registers them when it is imported.
"""

from privbound.audit.targets.registry import (
    INDEPENDENT_RELEASES,
    OneRunDesign,
    Target,
    TightEpsilon,
    accountant_epsilon,
    get_target,
    register_target,
    targets,
)

from privbound.audit.targets import reference  # noqa: E402,F401  (registers)
from privbound.audit.targets import decision_lists_winnow  # noqa: E402,F401  (registers)
from privbound.audit.targets import robust_halfspaces  # noqa: E402,F401  (registers)
from privbound.audit.targets import agnostic_halfspaces  # noqa: E402,F401  (registers)
from privbound.audit.targets import opendp  # noqa: E402,F401  (registers when OpenDP is installed)
from privbound.audit.targets import dpsgd  # noqa: E402,F401  (registers)
from privbound.audit.targets import opacus  # noqa: E402,F401  (registers when torch and Opacus are installed)
from privbound.audit.targets import libraries  # noqa: E402,F401  (registers when diffprivlib / PipelineDP are installed)

__all__ = [
    "INDEPENDENT_RELEASES",
    "OneRunDesign",
    "Target",
    "TightEpsilon",
    "accountant_epsilon",
    "get_target",
    "register_target",
    "targets",
]
