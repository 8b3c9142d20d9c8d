"""pytest helpers for theorem claims: ``assert_bound`` (registered through ``pytest11``).

    from privbound.bounds.pytest_plugin import assert_bound

    def test_winnow_updates():
        trace = ConfidentWinnow(eta=0.1, c=0.2).run(X, y)
        assert_bound("decision-lists-winnow/lemma-9", trace.updates, d=X.shape[1], rho=0.2, eta=0.1, c=0.2)

For upper bounds (mistake, update and upper sample-complexity bounds, privacy,
accuracy) ``observed <= bound`` must hold; for lower bounds ``observed >= bound``.
The comparison is deterministic: a claim that holds only with some probability is
asserted over many runs with ``privbound.audit.pytest_plugin.assert_rate_at_most``, which
spends the session's error budget.
"""

from __future__ import annotations

import math

from privbound.bounds.registry import ClaimKind, get

__all__ = ["assert_bound"]

_LOWER = {ClaimKind.SAMPLE_COMPLEXITY_LOWER}


def assert_bound(claim_id: str, observed: float, *, rtol: float = 1e-9, **params: float) -> float:
    """Assert that ``observed`` is on the right side of claim ``claim_id``'s bound at ``params``.

    Returns the bound. Raises ``AssertionError`` naming the claim, its statement, the
    parameters and both numbers.
    """
    claim = get(claim_id)
    bound = claim.evaluate(**params)
    observed = float(observed)
    if math.isnan(observed):
        raise ValueError(f"observed must be a number, got {observed!r}")
    slack = rtol * max(1.0, abs(bound))
    if claim.kind in _LOWER:
        ok, sense = observed >= bound - slack, ">="
    else:
        ok, sense = observed <= bound + slack, "<="
    if not ok:
        shown = ", ".join(f"{k}={v!r}" for k, v in params.items())
        raise AssertionError(
            f"{claim_id} violated: observed {observed:.6g} is not {sense} bound {bound:.6g} at {shown}.\n"
            f"Statement: {claim.statement}"
        )
    return bound
