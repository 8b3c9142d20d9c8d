"""Audits of every robust-halfspaces target at its default trials (DP Batch Perceptron and the sphere mechanism).

Each correct target must not be flagged and each planted bug must be (seeded audits, seed 0; the auditor's
lower bound holds with probability 0.95 per audit, so a correct target is wrongly flagged with probability
<= 0.05 -- at the fixed seed the outcome is deterministic and these tests pin it).
"""

import numpy as np
import pytest

from privbound.audit.targets import get_target, targets

NAMES = [t.name for t in targets() if t.paper == "robust-halfspaces"]


def test_families_and_bugs_present():
    fam = {t.name: t.family for t in targets() if t.paper == "robust-halfspaces"}
    assert set(fam.values()) == {"batch-perceptron", "sphere"}
    bugs = {t.name for t in targets() if t.paper == "robust-halfspaces" and t.planted_bug}
    assert {"batch-perceptron-noise-div10", "batch-perceptron-unclipped", "batch-perceptron-no-stop-noise"} <= bugs


@pytest.mark.parametrize("name", NAMES)
def test_target_verdict_at_default_trials(name):
    t = get_target(name)
    r = t.audit(seed=0)
    assert r.violation == t.planted_bug, r.summary()
    if not t.planted_bug:
        assert r.epsilon_lower_bound <= t.epsilon


def test_sphere_exact_max_log_density_ratio():
    # Exact privacy loss on the audited pair: the sup |log p0 - log p1| over the circle is <= eps for the mechanism and
    # > eps for the planted bug. d0 = {(e_1, +1)}, d1 = two copies; the score changes only on the arc
    # cos(theta) <= 0.475, so evaluating at theta = 0 and pi covers both arcs.
    W = np.array([[1.0, 0.0], [-1.0, 0.0]])
    for name, bug in (("sphere-em-d2", False), ("sphere-em-d2-exponent-x4", True)):
        t = get_target(name)
        ratio = np.abs(t.mechanism.log_density(t.d0, W) - t.mechanism.log_density(t.d1, W)).max()
        assert (ratio > t.epsilon) == bug
