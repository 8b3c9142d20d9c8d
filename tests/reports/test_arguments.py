"""The argument types shared by the subcommands (reports/arguments.py): values in range parse, others raise
an error naming the option and the allowed range."""

from __future__ import annotations

import argparse

import pytest

from privbound.reports import arguments


@pytest.mark.parametrize("parse, text, value", [
    (arguments.int_at_least("reference-models", 2), "2", 2),
    (arguments.positive_int("trials"), "1", 1),
    (arguments.nonneg_int("seed"), "0", 0),
    (arguments.confidence, "0.99", 0.99),
    (arguments.n_jobs, "-1", -1),
    (arguments.n_jobs, "3", 3),
    (arguments.wait_seconds, "0.5", 0.5),
])
def test_values_in_range_parse(parse, text, value):
    assert parse(text) == value


@pytest.mark.parametrize("parse, text, message", [
    (arguments.int_at_least("reference-models", 2), "1", "reference-models must be >= 2, got 1"),
    (arguments.positive_int("trials"), "0", "trials must be >= 1, got 0"),
    (arguments.positive_int("trials"), "1.5", "trials must be an integer, got '1.5'"),
    (arguments.nonneg_int("seed"), "-1", "seed must be >= 0, got -1"),
    (arguments.confidence, "1", "confidence must be in (0, 1), got 1.0"),
    (arguments.confidence, "high", "confidence must be a number in (0, 1), got 'high'"),
    (arguments.n_jobs, "0", "n-jobs must be >= 1 or -1 (all cores), got 0"),
    (arguments.n_jobs, "-2", "n-jobs must be >= 1 or -1 (all cores), got -2"),
    (arguments.wait_seconds, "0", "--wait must be a finite number of seconds > 0, got 0"),
    (arguments.positive_seconds("--max-seconds"), "-1", "--max-seconds must be a finite number of seconds > 0, got -1"),
    (arguments.positive_seconds("--max-seconds"), "inf", "--max-seconds must be a finite number of seconds > 0, got inf"),
    (arguments.positive_seconds("--max-seconds"), "soon", "--max-seconds takes seconds, got 'soon'"),
])
def test_values_out_of_range_name_the_option(parse, text, message):
    with pytest.raises(argparse.ArgumentTypeError) as err:
        parse(text)
    assert str(err.value) == message



def test_the_audit_commands_max_seconds_names_itself(capsys):
    from privbound.reports.cli import main

    assert main(["audit", "laplace-eps1", "--trials", "auto", "--max-seconds", "0"]) == 2
    assert "argument --max-seconds: --max-seconds must be a finite number of seconds > 0" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--trials", "AUTO"], "argument --trials: trials must be an integer, got 'AUTO' (or 'auto')"),
    (["--trials", "5"], "argument --trials: trials must be >= 10, got 5 (or 'auto')"),
    (["--trials", "auto", "--max-trials", "5"], "argument --max-trials: max-trials must be >= 20, got 5"),
])
def test_the_audit_commands_trial_options_name_themselves_and_their_ranges(capsys, argv, message):
    from privbound.reports.cli import main

    assert main(["audit", "laplace-eps1", *argv]) == 2
    assert message in capsys.readouterr().err


def test_trials_auto_on_a_target_without_a_selection_part_says_what_to_type(capsys):
    from privbound.reports.cli import main

    assert main(["audit", "randomized-response", "--trials", "auto"]) == 2
    err = capsys.readouterr().err
    assert "give --trials N" in err and "trials=<int>" not in err
