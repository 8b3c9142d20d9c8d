"""diffprivlib and PipelineDP targets (run only where the libs extra is installed). Audits at confidence 0.999:
a sound auditor fails each correct-target check with probability <= 1e-3."""

from __future__ import annotations

import importlib.util

import pytest

# diffprivlib 0.6's package __init__ fails under scikit-learn 1.9 (its models): find it, do not import it
if importlib.util.find_spec("diffprivlib") is None or importlib.util.find_spec("pipeline_dp") is None:
    pytest.skip("diffprivlib or pipeline-dp is not installed: pip install 'privbound[libs]'", allow_module_level=True)

from privbound.audit.targets import get_target, targets  # noqa: E402
from privbound.audit.targets.libraries import FLOAT_SAFE, library_versions  # noqa: E402


def test_every_library_target_is_registered_with_its_float_verdict():
    names = {t.name for t in targets() if t.family in ("diffprivlib", "pipelinedp")}
    assert names == set(FLOAT_SAFE) and set(library_versions()) >= {"diffprivlib", "pipeline-dp"}


def test_diffprivlib_laplace_holds_and_is_refuted_in_floating_point():
    t = get_target("diffprivlib-laplace")
    assert not t.audit(trials=3000, confidence=0.999).violation
    assert t.audit(trials=3000, estimator="floating-point").violation  # float_safe=False: must be caught
    r1, r2 = t.audit(trials=500, seed=3), t.audit(trials=500, seed=3)
    assert r1.epsilon_lower_bound == r2.epsilon_lower_bound  # seeded RandomState: audits repeat


def test_pipelinedp_bounds_a_users_two_rows_per_privacy_id():
    # the planted bug pipelinedp-sum-row-as-privacy-id is flagged on its pair (tests/audit/targets/test_registry.py,
    # three seeds); PipelineDP with the user as privacy id keeps the claim on the same pair, at confidence 0.999
    # (its noise is not seeded): the bug is the extractor, not the pair
    import dataclasses

    from privbound.audit.targets.libraries import PipelineDPMechanism, _pdp_sum

    bug = get_target("pipelinedp-sum-row-as-privacy-id")
    assert bug.planted_bug
    fixed = dataclasses.replace(bug, mechanism=PipelineDPMechanism("sum, user as privacy id", _pdp_sum),
                                planted_bug=False)
    assert not fixed.audit(trials=bug.default_trials, confidence=0.999).violation
