"""The "significant change" rule of reports/history.py, tested by simulation (fixed seeds).

A night compared with a night of the same code at another seed must report a spurious
epsilon change with probability at most CHANGE_ALPHA (5%); a real change must be reported.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privbound.reports import history as H
from privbound.reports.nightly import NIGHTLY_PROFILES, audit_confidence, trials_for
from privbound.reports.schema import SCHEMA, Counts, NightlyResults

# Cheap targets whose bounds come from counted events: continuous and discrete scores, learned
# and plug-in attacks, events that flip between seeds (svt-no-cutoff), correct targets and planted bugs.
CHEAP = ["laplace-eps1", "randomized-response", "geometric", "laplace-inverted-scale", "report-noisy-max-value",
         "geometric-inverted-scale", "randomized-response-doubled-eps", "exponential-mechanism-no-half",
         "svt-no-cutoff", "svt-cutoff-blind-noise"]


def _row(result: dict) -> dict:
    return {"value": result["epsilon_lower_bound"], "extra": H._audit_extra(result)}


@pytest.fixture(scope="module")
def nights():
    """40 smoke nights of the cheap targets (seeds 0..39), as history rows."""
    from privbound.audit.targets import get_target

    prof = NIGHTLY_PROFILES["smoke"]
    conf = audit_confidence(59)
    out = {}
    for name in CHEAP:
        t = get_target(name)
        out[name] = [_row(t.audit(trials=trials_for(t, prof), seed=s, confidence=conf).to_dict()) for s in range(40)]
    return out


def test_a_night_against_itself_at_another_seed_reports_no_change_at_the_stated_rate(nights):
    # 20 disjoint pairs of nights (seeds 2i, 2i+1), each compared as the nightly does: Bonferroni over its audits.
    false_nights = 0
    for i in range(20):
        zs = [H.epsilon_change_z(nights[n][2 * i], nights[n][2 * i + 1]) for n in CHEAP]
        judged = [z for z in zs if z is not None]
        assert len(judged) == len(CHEAP)
        false_nights += any(abs(z) > H.change_threshold(len(judged)) for z in judged)
    # At most 5% of nights in expectation; P[Binomial(20, 0.05) >= 4] = 1.6%.
    assert false_nights <= 3, false_nights


def test_the_spread_is_calibrated_comparison_by_comparison(nights):
    # One comparison at a time, at the 5% two-sided level (z > 1.96): 200 comparisons of correct
    # pairs; a spread that ignored the event's selection would flag about twice the nominal rate.
    z = np.array([H.epsilon_change_z(nights[n][2 * i], nights[n][2 * i + 1]) for n in CHEAP for i in range(20)])
    rate = float(np.mean(np.abs(z) > 1.96))
    assert rate <= 0.08, rate  # nominal 0.05; P[Binomial(200, 0.05) > 16] < 1%
    # and the count-only spread (no selection term) is measurably too small on the same nights:
    naive = []
    for n in CHEAP:
        for i in range(20):
            a, b = nights[n][2 * i], nights[n][2 * i + 1]
            va, vb = H.epsilon_variance(a["extra"]), H.epsilon_variance(b["extra"])
            fa, fb = (H.selection_fraction(r["extra"]["method"]) for r in (a, b))
            naive.append((b["value"] - a["value"]) / math.sqrt(va * fa + vb * fb))
    assert np.mean(np.abs(naive) > 1.96) > rate


def _laplace_rows(scale: float, seeds):
    from privbound import audit_mechanism

    class Laplace:
        def sample(self, data, rng, size):
            return data + rng.laplace(scale=scale, size=size)

    conf = audit_confidence(59)
    return [_row(audit_mechanism(Laplace(), 0.0, 1.0, epsilon=1.0, trials=2000, seed=s, confidence=conf).to_dict())
            for s in seeds]


def test_a_real_change_is_reported():
    # The same target whose noise scale was halved (epsilon 1 -> 2) between two nights.
    before = _laplace_rows(1.0, range(100, 110))
    after = _laplace_rows(0.5, range(200, 210))
    threshold = H.change_threshold(59)  # as strict as a full night's Bonferroni threshold
    z = [H.epsilon_change_z(a, b) for a, b in zip(before, after)]
    assert all(v is not None and v > 0 for v in z)
    assert sum(v > threshold for v in z) >= 9, z


def test_changes_are_ordered_status_first_and_drops_are_reported():
    def res(started, audits):
        return NightlyResults.from_dict({
            "schema": SCHEMA, "profile": "smoke", "started_utc": started, "finished_utc": started, "wall_seconds": 1.0,
            "seed": 0, "code_version": "v", "audit_family_confidence": 0.95, "audit_confidence": 0.95, "checks": [],
            "counts": Counts().to_dict(), "audits": audits})

    def audit(name, status, lb, tpr, fpr):
        return {"target": name, "family": "f", "paper": None, "planted_bug": status in ("caught", "missed"),
                "status": status, "error": None, "result": {
            "epsilon_lower_bound": lb, "epsilon_claimed": 1.0, "p_value": 0.5, "delta": 0.0,
            "method": "clopper-pearson/split(0.2)", "tpr": tpr, "fpr": fpr, "n_evaluation": 40000}}

    old = res("2026-01-01", [audit("up", "holds", 0.2, 0.5, 0.4), audit("down", "caught", 2.0, 0.5, 0.06),
                             audit("bad", "holds", 0.5, 0.5, 0.3), audit("same", "holds", 0.5, 0.5, 0.3)])
    new = res("2026-01-02", [audit("up", "holds", 0.6, 0.5, 0.27), audit("down", "caught", 1.2, 0.5, 0.15),
                             audit("bad", "violated", 1.5, 0.5, 0.1), audit("same", "holds", 0.51, 0.5, 0.3)])
    rows = {(k, n): {"status": s, "value": v, "reference": r, "p_value": p, "extra": e}
            for k, n, s, v, r, p, e in ((k, n, s, v, r, p, None if e is None else __import__("json").loads(e))
                                        for k, n, s, v, r, p, e in H._rows(old))}
    changes = H.compare(new, {"rows": rows})
    assert [c["name"] for c in changes] == ["bad", "up", "down"]
    assert changes[0]["change"] == "holds -> violated"
    assert "rose 0.200 -> 0.600" in changes[1]["change"] and "dropped 2.000 -> 1.200" in changes[2]["change"]


def test_censored_and_white_box_comparisons():
    counted = {"value": 0.29, "extra": {"method": "clopper-pearson/split(0.2)", "n": 3200, "tpr": 0.6, "fpr": 0.4,
                                        "delta": 0.0}}
    censored = {"value": 0.0, "extra": {"method": "clopper-pearson/split(0.2)", "n": 3200, "tpr": None, "fpr": None,
                                        "delta": 0.0}}
    z = H.epsilon_change_z(censored, counted)
    assert 0 < z < H.change_threshold(59)  # a weak event seen in one night and not the other is no change
    white = {"value": 0.66, "extra": {"method": "white-box/betting", "n": 10000, "tpr": None, "fpr": None}}
    assert H.epsilon_change_z(white, dict(white, value=0.70)) is None
    assert H.epsilon_change_z(censored, censored) == 0.0
