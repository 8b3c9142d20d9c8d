"""privbound's pytest plugin: statistical privacy assertions with a session error budget.

Registered through the ``pytest11`` entry point, so any project that installs
privbound can write::

    from privbound.audit.pytest_plugin import assert_dp

    def test_my_mechanism_is_private():
        assert_dp(my_mechanism, d0, d1, epsilon=1.0)

Options: ``--privbound-seed`` (seed of every audit, default 0), ``--privbound-scale``
(multiplies trial counts, default 1) and ``--privbound-error-budget`` (default 1e-3).

**Session error budget.** A statistical assertion can fail a correct implementation
by chance. The i-th statistical assertion of a session is run at level
``alpha_i = budget * 6 / (pi^2 i^2)``; these sum to at most ``budget`` however many
assertions run, so by the union bound all the assertions of a session together fail a
correct implementation with probability at most ``budget``. An explicit
``confidence=`` argument opts out of the budget for that assertion (and is reported).
The terminal summary shows the assertions run and the budget spent. Under pytest-xdist
each worker is a session with its own budget: ``-n k`` workers together spend at most
``k * budget``.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass, field
from typing import Any, Callable

import pytest
from scipy import stats

from privbound._validation import check_confidence, check_int, check_probability

__all__ = ["assert_dp", "assert_rate_at_most", "ErrorBudget", "budget", "next_alpha"]


@dataclass
class ErrorBudget:
    """The session's false-failure budget, spent by alpha_i = budget * 6/(pi^2 i^2)."""

    total: float = 1e-3
    used: int = 0
    spent: float = 0.0
    explicit: int = 0
    seed: int = 0
    scale: float = 1.0
    nodeid: str | None = None
    log: list = field(default_factory=list)

    def next_alpha(self) -> float:
        self.used += 1
        alpha = self.total * 6.0 / (math.pi**2 * self.used**2)
        self.spent += alpha
        return alpha

    def reproduce(self) -> str:
        """The one-line command that reruns the current test with the same seed."""
        target = self.nodeid or "<test>"
        return f"python -m pytest {shlex.quote(target)} --privbound-seed={self.seed} --privbound-scale={self.scale:g}"


_BUDGET = ErrorBudget()


def budget() -> ErrorBudget:
    """The budget of the running session (a fresh default one outside pytest)."""
    return _BUDGET


def next_alpha(confidence: float | None) -> float:
    """Level of the next statistical assertion: ``1 - confidence`` or the budget's next share."""
    if confidence is not None:
        _BUDGET.explicit += 1
        return 1.0 - check_confidence(confidence)
    return _BUDGET.next_alpha()


def assert_dp(
    mechanism: Any,
    d0: Any,
    d1: Any,
    *,
    epsilon: float,
    delta: float = 0.0,
    trials: int = 20_000,
    confidence: float | None = None,
    seed: int | None = None,
    **audit_kwargs: Any,
) -> Any:
    """Assert that an audit finds no violation of (epsilon, delta)-DP; returns the AuditResult.

    Raises ``AssertionError`` whose first words are the verdict (``assert_dp: VIOLATED ...``), then the
    epsilon lower bound, the trials, the seed and the command that reproduces the failure; pytest shows
    the test's line, not this function's source.
    """
    __tracebackhide__ = True
    from privbound.audit.core import audit_mechanism

    alpha = next_alpha(confidence)
    seed = _BUDGET.seed if seed is None else seed
    n = max(10, int(round(trials * _BUDGET.scale)))
    result = audit_mechanism(mechanism, d0, d1, epsilon=epsilon, delta=delta, trials=n, confidence=1.0 - alpha,
                             seed=seed, **audit_kwargs)
    _BUDGET.log.append(("assert_dp", alpha, result.violation))
    if result.violation:
        raise AssertionError(
            f"assert_dp: VIOLATED ({epsilon:g}, {delta:g})-DP -- epsilon lower bound "
            f"{result.epsilon_lower_bound:.4f} > claimed {epsilon:g} at confidence {1 - alpha:.6g}; trials={n} per "
            f"dataset, seed={seed}, attack={result.attack}, event: {result.event}.\nReproduce: {_BUDGET.reproduce()}"
        )
    return result


def assert_rate_at_most(successes: int, trials: int, p: float, *, confidence: float | None = None) -> float:
    """Assert that an event's probability is at most ``p`` from ``successes`` out of ``trials``.

    Exact one-sided binomial test of H0: rate <= p; fails when the p-value
    ``P[Binom(trials, p) >= successes]`` is below the assertion's level. Returns the p-value.
    """
    __tracebackhide__ = True
    trials = check_int(trials, "trials", low=1)
    successes = check_int(successes, "successes", low=0, high=trials)
    p = check_probability(p, "p")
    alpha = next_alpha(confidence)
    p_value = float(stats.binom.sf(successes - 1, trials, p)) if successes > 0 else 1.0
    _BUDGET.log.append(("assert_rate_at_most", alpha, p_value < alpha))
    if p_value < alpha:
        upper = stats.beta.ppf(1 - alpha, successes + 1, trials - successes) if successes < trials else 1.0
        raise AssertionError(
            f"rate {successes}/{trials} = {successes / trials:.4g} exceeds p = {p:g}: one-sided binomial "
            f"p-value {p_value:.3g} < level {alpha:.3g} (upper confidence bound on the rate {upper:.4g}).\n"
            f"Reproduce: {_BUDGET.reproduce()}"
        )
    return p_value


# ------------------------------------------------------------------------ hooks


def pytest_addoption(parser):
    group = parser.getgroup("privbound")
    group.addoption("--privbound-seed", type=int, default=0, help="seed of privbound audits in tests (default 0)")
    group.addoption("--privbound-scale", type=float, default=1.0,
                    help="multiplies the trial counts of privbound audits (default 1)")
    group.addoption("--privbound-error-budget", type=float, default=1e-3,
                    help="probability that the session's statistical assertions fail a correct "
                         "implementation (default 1e-3)")


def pytest_configure(config):
    total = config.getoption("--privbound-error-budget")
    scale = config.getoption("--privbound-scale")
    if not 0 < total < 1:
        raise pytest.UsageError(f"--privbound-error-budget must be in (0, 1), got {total}")
    if not scale > 0:
        raise pytest.UsageError(f"--privbound-scale must be > 0, got {scale}")
    global _BUDGET
    _BUDGET = ErrorBudget(total=total, seed=config.getoption("--privbound-seed"), scale=scale)


def pytest_runtest_setup(item):
    _BUDGET.nodeid = item.nodeid


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _BUDGET.used or _BUDGET.explicit:
        terminalreporter.write_sep("-", "privbound statistical assertions")
        terminalreporter.write_line(
            f"{_BUDGET.used} under the session budget {_BUDGET.total:g} (spent {_BUDGET.spent:.3g}), "
            f"{_BUDGET.explicit} with an explicit confidence; seed {_BUDGET.seed}, scale {_BUDGET.scale:g}"
        )


@pytest.fixture
def dp_audit(request) -> Callable[..., Any]:
    """``dp_audit(mechanism, d0, d1, epsilon=..., ...)``: :func:`assert_dp` with the session's seed and budget."""
    return assert_dp
