"""The pytest plugin: assert_dp, assert_rate_at_most, assert_bound, the session budget."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from privbound.audit import pytest_plugin as P
from privbound.bounds.pytest_plugin import assert_bound

pytest_plugins = ["pytester"]

README = Path(__file__).resolve().parents[2] / "README.md"


def test_budget_shares_sum_to_at_most_the_budget():
    b = P.ErrorBudget(total=1e-3)
    alphas = [b.next_alpha() for _ in range(10_000)]
    assert sum(alphas) <= 1e-3
    assert alphas[0] == pytest.approx(1e-3 * 6 / math.pi**2)
    assert b.spent == pytest.approx(sum(alphas))


def test_assert_rate_at_most_exact_binomial_threshold():
    # P[Binom(1000, 0.01) >= 22] = 6.5e-4 < 1e-3, while P[>= 21] = 1.5e-3 > 1e-3.
    P.assert_rate_at_most(21, 1000, 0.01, confidence=0.999)
    with pytest.raises(AssertionError, match="exceeds p = 0.01"):
        P.assert_rate_at_most(22, 1000, 0.01, confidence=0.999)
    with pytest.raises(ValueError, match="successes"):
        P.assert_rate_at_most(5, 3, 0.1)


def test_assert_bound_on_a_registered_claim():
    # Lemma 9 at d=100, rho=eta=0.2, c=0: bound ln(100)/0.02 = 230.26.
    assert assert_bound("decision-lists-winnow/lemma-9", 230, d=100, rho=0.2, eta=0.2, c=0.0) == pytest.approx(
        230.2585, abs=1e-4)
    with pytest.raises(AssertionError, match="lemma-9 violated"):
        assert_bound("decision-lists-winnow/lemma-9", 231, d=100, rho=0.2, eta=0.2, c=0.0)


def _readme_example() -> str:
    text = README.read_text()
    m = re.search(r"```python\n(# tests/test_privacy.py\n.*?)```", text, re.S)
    assert m, "README.md lost its downstream example"
    return m.group(1)


def test_readme_downstream_example_runs_in_a_temporary_project(pytester):
    pytester.makepyfile(test_privacy=_readme_example())
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*privbound statistical assertions*", "*3 under the session budget 0.001*"])


def test_failing_assert_dp_reports_bound_seed_and_command(pytester):
    pytester.makepyfile(test_leaky="""
import numpy as np
from privbound.audit.pytest_plugin import assert_dp

def leaky(data, rng):
    return np.sum(data) + rng.laplace(scale=0.25)     # really epsilon = 4

def test_leaky():
    assert_dp(leaky, np.array([1, 0]), np.array([0, 0]), epsilon=1.0)
""")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--privbound-seed=5")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "assert_dp: VIOLATED (1, 0)-DP -- epsilon lower bound" in out
    assert "seed=5" in out and "trials=20000" in out
    assert "Reproduce: python -m pytest test_leaky.py::test_leaky --privbound-seed=5" in out


def test_dp_audit_fixture_and_scale_option(pytester):
    pytester.makepyfile(test_fx="""
import numpy as np

def test_fx(dp_audit):
    r = dp_audit(lambda d, rng: d + rng.laplace(scale=1.0), 0.0, 1.0, epsilon=1.0, trials=10000)
    assert r.trials == 5000 and not r.violation
""")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--privbound-scale=0.5")
    result.assert_outcomes(passed=1)
