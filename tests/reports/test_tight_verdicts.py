"""Two verdicts per audit (reports/nightly.py): the claim verdict and the tight verdict, the bound against the
tight epsilon of what the code runs -- violated above it, holds down to half of it, inconclusive below.

The nights run a discrete Laplace count of scale 1 (epsilon 1 exactly; claim 2) at the smoke profile's 2000
trials, seed 0: its bound is 0.94, so a declared tight epsilon of 0.3 is exceeded, 1 holds (above its half, 0.5)
and 4 is inconclusive (below its half, 2).
"""

from __future__ import annotations

import math
import re

import pytest

from privbound.audit.result import AuditResult
from privbound.audit.targets.registry import Target
from privbound.reports import nightly
from privbound.reports.cli import main
from privbound.reports.nightly import TIGHT_POWER_FRACTION, main_status, run_nightly, tight_status
from privbound.reports.schema import load_results


def _result(bound: float, tight: float | None) -> AuditResult:
    return AuditResult(epsilon_claimed=2.0, delta=0.0, epsilon_lower_bound=bound, confidence=0.95, trials=100,
                       method="m", estimator="black-box", attack="threshold", threshold=None, event=None, tpr=0.5,
                       fpr=0.1, tpr_lower=0.4, fpr_upper=0.2, auroc=0.7, p_value=0.5, violation=bound > 2.0, seed=0,
                       wall_seconds=0.0, n_evaluation=100, epsilon_tight=tight,
                       tight_violation=tight is not None and bound > tight)


def _target(**kw) -> Target:
    return Target("t", "f", None, 0.0, 1.0, 2.0, **kw)


@pytest.mark.parametrize("bound, status", [
    (1.2, "violated"), (math.inf, "violated"), (1.0, "holds"), (0.5, "holds"), (0.49, "inconclusive"),
    (0.0, "inconclusive"),
])
def test_the_rule_against_a_tight_epsilon_of_one(bound, status):
    assert tight_status(_target(), _result(bound, 1.0)) == (status, None)


def test_the_factor_is_the_module_constant(monkeypatch):
    assert TIGHT_POWER_FRACTION == 0.5
    monkeypatch.setattr(nightly, "TIGHT_POWER_FRACTION", 0.25)
    assert tight_status(_target(), _result(0.3, 1.0)) == ("holds", None)


@pytest.mark.parametrize("target, result, float_audit, reason", [
    (_target(no_tight_epsilon="no closed form"), _result(0.5, None), False, "no closed form"),
    (_target(), _result(0.5, None), False, "the target states no tight epsilon"),
    (_target(planted_bug=True), _result(3.0, 1.0), False, "a planted bug: judged by its claim verdict"),
    (_target(), _result(3.0, 1.0), True, "a floating-point audit: judged against the claim only"),
    (_target(), None, False, "the audit failed"),
])
def test_no_tight_verdict_says_why(target, result, float_audit, reason):
    status, why = tight_status(target, result, float_audit)
    assert status is None and why.startswith(reason)


@pytest.mark.parametrize("tight, verdict, exit_status", [(0.3, "violated", 1), (1.0, "holds", 0),
                                                          (4.0, "inconclusive", 0)])
def test_the_night_records_counts_and_reports_the_tight_verdict(tmp_path, laplace_target, tight, verdict, exit_status):
    name = f"fixture-laplace-tight-{tight:g}"
    laplace_target(name, tight=tight)
    results, out = run_nightly("smoke", tmp_path / "run", target_names=[name], claim_ids=[], progress=False)
    (rec,) = results.audits
    assert rec.status == "holds" and rec.tight_status == verdict and rec.tight_reason is None  # the claim (2) holds
    assert 0.6 < rec.result["epsilon_lower_bound"] < 1.0 and rec.result["epsilon_tight"] == tight
    counts = results.counts
    assert (counts.tight_holds, counts.tight_violated, counts.tight_inconclusive) == tuple(
        int(v == verdict) for v in ("holds", "violated", "inconclusive"))
    assert main_status(results) == exit_status and main_status(load_results(out / "results.json")) == exit_status
    summary = (out / "summary.md").read_text()
    headline = summary.index("- tight verdicts")
    assert headline < summary.index("- claims held")  # the tight verdicts lead
    assert f"{verdict} **1**" in summary[headline:summary.index("\n", headline)]
    ratio = rec.result["epsilon_lower_bound"] / tight
    assert f"| {name} | fixture-laplace | (2, 0) | {tight:.3g} | " in summary
    mu = f"{rec.result['mu_lower_bound']:.3f}"
    assert re.search(rf" \| {ratio:.2f} \| {mu} \| {verdict} \| holds \| (holds|inconclusive) \| 2000 \|", summary)
    page = (out / "report.html").read_text()
    assert f'<td class="{verdict}">{verdict}</td><td class="holds">holds</td>' in page
    assert 'title="Laplace scale 1, sensitivity 1"' in page  # the tight epsilon's source
    assert page.index("tight: violated") < page.index("claims violated")


def test_a_target_without_a_tight_value_has_no_tight_verdict_and_says_why(tmp_path, laplace_target):
    laplace_target("fixture-laplace-untight", tight=None, no_tight_epsilon="no exact law for this fixture")
    results, out = run_nightly("smoke", tmp_path / "run", target_names=["fixture-laplace-untight"], claim_ids=[],
                               progress=False)
    (rec,) = load_results(out / "results.json").audits
    assert rec.tight_status is None and rec.tight_reason == "no exact law for this fixture"
    assert results.counts.tight_holds == results.counts.tight_inconclusive == 0 and main_status(results) == 0
    assert 'title="no exact law for this fixture">-</td>' in (out / "report.html").read_text()


def test_a_tight_violation_gives_exit_status_1_on_the_command_line(tmp_path, laplace_target, monkeypatch, capsys):
    laplace_target("fixture-laplace-tight-low", tight=0.3)
    real = nightly.run_nightly
    monkeypatch.setattr(nightly, "run_nightly", lambda *a, **k: real(*a, **dict(
        k, target_names=["fixture-laplace-tight-low"], claim_ids=[], progress=False)))
    assert main(["nightly", "--profile", "smoke", "--out", str(tmp_path / "run")]) == 1
    out = capsys.readouterr().out
    assert "violated      holds" in out and "tight verdicts: 0 hold, 1 violated, 0 inconclusive" in out


def test_summary_md_says_which_held_claims_their_audit_could_not_have_refuted(tmp_path, laplace_target):
    # A claim of 40 on a Laplace count of epsilon 1: at 2000 trials no audit could certify 80 (twice the claim), so
    # its "holds" is as far as the audit could see; summary.md says so beside the count, as the terminal and
    # report.html do.
    laplace_target("fixture-laplace-claim-40", claim=40.0)
    results, out = run_nightly("smoke", tmp_path / "run", target_names=["fixture-laplace-claim-40"], claim_ids=[],
                               progress=False)
    (rec,) = results.audits
    assert rec.status == "holds" and rec.result["status"] == "inconclusive"
    assert results.held_inconclusive() == ["fixture-laplace-claim-40"]
    summary = (out / "summary.md").read_text()
    line = summary[summary.index("- claims held"):].splitlines()[1]
    assert line.startswith("  - of the claims held, 1 hold only as far as their audit could see")
    assert line.endswith("`fixture-laplace-claim-40`")
    assert "1 claim(s) hold only as far as their audit could see" in (out / "report.html").read_text()
