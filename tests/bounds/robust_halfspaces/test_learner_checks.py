"""The robust-halfspaces checks that run the learners at length (slow): the Theorem 6 scaling check (smoke profile)
and the Figure 1 experiment on the bundled digits.

Both are seeded, so the outcomes are deterministic; the error rates of the underlying statistics are stated per test.
"""

import numpy as np
import pytest

from privbound.bounds.checks import PROFILES, CheckContext
from privbound.bounds.robust_halfspaces.batch_perceptron import check_theorem6_scaling_d

@pytest.mark.slow
def test_scaling_check_detects_a_wrong_exponent():
    # The fitted slope must exclude the wrong exponents 0 (flat) and 1 (linear in d) at the default profile, so the
    # check could fail (smoke profile, 20 runs per point; the pass itself is asserted by test_all_checks_smoke).
    # A 95% CI: at a fixed seed deterministic, over seeds it misses the true slope with probability ~0.05.
    ctx = CheckContext(rng=np.random.default_rng(0), seed=3, profile=PROFILES["smoke"])
    out = check_theorem6_scaling_d(ctx)
    lo, hi = out.details["slope_ci"]
    assert lo <= 0.5 <= hi
    assert lo > 0.0 and hi < 1.0
    # The noiseless reference needs no more samples at d = 2048 than at d = 32 (flat in d).
    assert out.details["noiseless_required_n"][-1] <= out.details["noiseless_required_n"][0]


@pytest.mark.slow
def test_figure1_quick_on_digits(tmp_path):
    # The trends of Figure 1 on digits: accuracy increases with epsilon (Spearman > 0.8) and robust accuracy is
    # non-increasing in gamma.
    from privbound.reports.experiments.robust_halfspaces import run

    s = run(dataset="digits", quick=True, out=tmp_path)
    assert {"accuracy_vs_epsilon.csv", "accuracy_vs_delta.csv", "robust_accuracy_vs_gamma.csv", "figure1.png"} <= set(s["files"])
    assert s["trend_accuracy_vs_epsilon_spearman"] > 0.8
    assert s["trend_robust_decreasing_in_gamma"]
    assert all(v <= e * (1 + 1e-3) for v, e in ((v, float(k.split(",")[0])) for k, v in s["total_epsilon_reported"].items()))
