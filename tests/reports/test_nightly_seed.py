"""The night's seed reaches the audits, the bound checks and their mutant runs (reports/nightly.py, reports/cli.py).

One small night (one target, one claim whose checks and mutants take well under a second, no membership audit)
at run seed 5, started from the command line: each check and each mutant row records the seed it ran with, which
must be that check's seed of run seed 5, not its stable seed (run seed 0). Deterministic: every draw is seeded.
"""

from __future__ import annotations

import json

from privbound.bounds.checks import check_seed
from privbound.bounds.registry import get
from privbound.reports import nightly
from privbound.reports.cli import main

CLAIM = "decision-lists-winnow/lemma-3"


def test_nightly_seed_reaches_the_audits_the_checks_and_the_mutant_runs(tmp_path, monkeypatch, capsys):
    real = nightly.run_nightly
    calls = []

    def small_night(profile, out, **kw):  # the CLI's night, restricted to one target and one claim
        calls.append((profile, kw["seed"]))
        return real(profile, out, target_names=["randomized-response"], claim_ids=[CLAIM], membership_names=[],
                    progress=False, **kw)

    monkeypatch.setattr(nightly, "run_nightly", small_night)
    code = main(["nightly", "--profile", "default", "--seed", "5", "--out", str(tmp_path / "night")])
    capsys.readouterr()
    assert code == 0 and calls == [("default", 5)]
    results = json.loads((tmp_path / "night" / "results.json").read_text())
    assert results["seed"] == 5 and [a["result"]["seed"] for a in results["audits"]] == [5]

    checks = [k.name for k in get(CLAIM).checks]
    assert [(c["check"], c["seed"]) for c in results["checks"]] == [(k, check_seed(CLAIM, k, 5)) for k in checks]
    mutants = [(k.name, m.name) for k in get(CLAIM).checks for m in k.mutants]
    assert len(mutants) >= 2
    assert [(m["check"], m["mutant"], m["seed"]) for m in results["mutants"]] == [
        (k, m, check_seed(CLAIM, k, 5)) for k, m in mutants]
    assert all(c["seed"] != check_seed(CLAIM, c["check"], 0) for c in results["checks"] + results["mutants"])
