"""DP-SGD in numpy (Abadi et al., CCS 2016): Poisson subsampling, per-example clipping, Gaussian noise.

* :mod:`.models` -- logistic regression and a one-hidden-layer MLP, vectorised over training runs;
* :mod:`.accounting` -- the run's ``DpEvent`` and its (epsilon, delta) by dp_accounting (RDP / PLD);
* :mod:`.sgd` -- :class:`DPSGD`: one run (``fit``) and many runs as array operations (``run_batch``).

The canary designs that audit it live in :mod:`privbound.audit.canaries` and
:mod:`privbound.audit.targets.dpsgd`.
"""

from privbound.learners.dpsgd.accounting import calibrate_noise_multiplier, dpsgd_dp_event, dpsgd_epsilon
from privbound.learners.dpsgd.models import MLP, LogisticRegression
from privbound.learners.dpsgd.sgd import DPSGD, DPSGDParameters, split_training_data

__all__ = [
    "DPSGD",
    "DPSGDParameters",
    "LogisticRegression",
    "MLP",
    "calibrate_noise_multiplier",
    "dpsgd_dp_event",
    "dpsgd_epsilon",
    "split_training_data",
]
