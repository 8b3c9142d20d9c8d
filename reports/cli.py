"""The ``privbound`` command line.

Commands::

    privbound list [--json]
    privbound audit NAME [--trials N] [--seed S] [--n-jobs J] [--confidence C]
                         [--dask-scheduler ADDRESS] [--json] [--one-run [--canaries M] | --search]
    privbound nightly [--profile smoke|default|full] [--out DIR] [--cache DIR] [--history FILE]
                      [--wait [SECONDS]] [--seed S] [--n-jobs J] [--dask-scheduler ADDRESS]
    privbound bounds list [--json]
    privbound bounds eval ID key=value ... [--json]
    privbound bounds check [ID ...] [--profile smoke|default|full] [--json]
    privbound experiment NAME [--dataset D] [--data PATH] [--quick] [--out DIR] [--seed S]
    privbound membership NAME|list [--reference-models K] [--targets T] [--seed S] [--n-jobs J]
                         [--confidence C] [--cache DIR] [--top N] [--dask-scheduler ADDRESS] [--json]

Exit status: 0 when every claim holds (and every planted bug is caught), 1 when a
claim is violated, a check fails or a planted bug is missed, 2 on an error or bad
arguments (one line on stderr, no traceback); ``nightly`` adds 4 (4 or 5) when its outputs
were written but the history was not updated. An option that does nothing in the chosen
mode, and a ``key=value`` parameter given twice, are bad arguments.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import sys
import time
from typing import Any, Callable, Sequence

from privbound.reports import arguments
from privbound.reports.arguments import CLIError
from privbound.reports.schema import NightlyResults

__all__ = ["main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one clear line, exit 2 (argparse prints usage too)
        raise CLIError(f"{self.prog}: {message}")


def _add_list(sub) -> None:
    ls = sub.add_parser("list", help="list the audit targets")
    ls.add_argument("--json", action="store_true", help="one JSON record per target")


def _add_audit(sub) -> None:
    au = sub.add_parser("audit", help="audit one target")
    au.add_argument("name", help="target name (see `privbound list`)")
    au.add_argument("--trials", type=arguments.positive_int("trials"), default=None,
                    help="trials per dataset (default: the target's; not with --one-run)")
    au.add_argument("--seed", type=arguments.nonneg_int("seed"), default=0)
    au.add_argument("--n-jobs", type=arguments.n_jobs, default=1)
    au.add_argument("--confidence", type=arguments.confidence, default=0.95)
    au.add_argument("--dask-scheduler", default=None, metavar="ADDRESS", help="run the trials on a Dask cluster")
    au.add_argument("--json", action="store_true", help="print AuditResult.to_dict() as JSON")
    mode = au.add_mutually_exclusive_group()
    mode.add_argument("--one-run", action="store_true",
                      help="one-run audit (Steinke, Nasr & Jagielski 2023) with --canaries canaries")
    mode.add_argument("--search", action="store_true",
                      help="search for the most distinguishing neighbouring pair, then audit it on fresh trials")
    mode.add_argument("--float", action="store_true", dest="float_audit",
                      help="look for a floating-point leak: the attack portfolio with the floating-point attack "
                           "(the verdict then says whether the implementation is float-unsafe at its claim)")
    au.add_argument("--canaries", type=arguments.positive_int("canaries"), default=None, metavar="M",
                    help="canaries of a one-run audit (default 1000; only with --one-run)")


def _add_nightly(sub) -> None:
    ni = sub.add_parser(
        "nightly", help="audit every target and run the bound checks",
        description="Audit every target and run the bound checks of a profile. Writes results.json, summary.md "
                    "and report.html into --out, then appends the run to --history. Exit status: 0 all good, "
                    "1 a claim violated / check failed / planted bug missed, 2 bad arguments, a bad or busy "
                    "location or outputs that could not be written; 4 or 5: as 0 or 1, but the history was "
                    "not updated (the outputs stand).")
    ni.add_argument("--profile", choices=["smoke", "default", "full"], default="default")
    ni.add_argument("--out", default=None, metavar="DIR",
                    help="output folder (default reports/out/<UTC date>/); one run at a time per folder")
    ni.add_argument("--cache", default=None, metavar="DIR",
                    help="finished trial chunks and checks, reused by a rerun (default <parent of --out>/.cache)")
    ni.add_argument("--history", default=None, metavar="FILE",
                    help="SQLite run history compared against and appended to "
                         "(default <parent of --out>/history.sqlite)")
    ni.add_argument("--wait", type=arguments.wait_seconds, nargs="?", const=float("inf"), default=0.0,
                    metavar="SECONDS",
                    help="when another run holds --out, wait for it (for ever, or SECONDS) instead of failing")
    ni.add_argument("--seed", type=arguments.nonneg_int("seed"), default=0,
                    help="the night's seed (default 0): it fixes the audits' trials, the bound checks' and their "
                         "mutant runs' draws (each check's own seed is derived from it and the check's name; 0 "
                         "repeats the checks' stable seeds) and the membership audits; not the draws of targets "
                         "with their own generator (the OpenDP targets)")
    ni.add_argument("--n-jobs", type=arguments.n_jobs, default=1)
    ni.add_argument("--dask-scheduler", default=None, metavar="ADDRESS")


def _add_bounds(sub) -> None:
    bo = sub.add_parser("bounds", help="the theorem registry")
    bsub = bo.add_subparsers(dest="bounds_command", parser_class=_Parser)
    bsub.required = True
    bl = bsub.add_parser("list", help="list the registered claims")
    bl.add_argument("--json", action="store_true")
    be = bsub.add_parser("eval", help="evaluate a claim's formula")
    be.add_argument("id")
    be.add_argument("params", nargs="*", metavar="key=value", help="each parameter once")
    be.add_argument("--json", action="store_true")
    bc = bsub.add_parser("check", help="run the checks of claims (all by default)")
    bc.add_argument("ids", nargs="*", metavar="ID")
    bc.add_argument("--profile", choices=["smoke", "default", "full"], default="default")
    bc.add_argument("--n-jobs", type=arguments.n_jobs, default=1)
    bc.add_argument("--json", action="store_true")


def _add_experiment(sub) -> None:
    ex = sub.add_parser("experiment", help="run a paper's experiment")
    ex.add_argument("name", help="experiment name, e.g. robust-halfspaces")
    ex.add_argument("--dataset", default="digits")
    ex.add_argument("--data", default=None, help="path of the data files (mnist, usps; not with digits)")
    ex.add_argument("--quick", action="store_true")
    ex.add_argument("--out", default=None)
    ex.add_argument("--seed", type=arguments.nonneg_int("seed"), default=0)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="privbound", description="Audit differential privacy claims and check learning-theory bounds.")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    sub.required = True
    for _, add, _ in _SUBCOMMANDS:
        add(sub)
    return p


def _cmd_list(args) -> int:
    from privbound.audit.targets import targets

    recs = [t.record() for t in targets()]
    if args.json:
        print(json.dumps(recs, indent=1))
        return 0
    print(f"{'name':32s} {'family':20s} {'epsilon':>9s} {'delta':>8s}  planted_bug")
    for r in recs:
        print(f"{r['name']:32s} {r['family']:20s} {r['epsilon']:9.4g} {r['delta']:8.2g}  {r['planted_bug']}")
    return 0


def _cmd_audit(args) -> int:
    from privbound.audit.targets import get_target
    from privbound.reports.nightly import expects_violation

    if args.canaries is not None and not args.one_run:
        raise CLIError("--canaries only applies to a one-run audit: add --one-run, or drop --canaries")
    if args.one_run and args.trials is not None:
        raise CLIError("--trials does not apply to --one-run (one training run with --canaries canaries)")

    try:
        target = get_target(args.name)
    except KeyError as exc:
        raise CLIError(str(exc.args[0])) from None
    n_jobs = -1 if (args.dask_scheduler and args.n_jobs == 1) else args.n_jobs
    if args.one_run:
        with arguments.dask_backend(args.dask_scheduler):
            one = target.one_run_audit(args.canaries or 1000, args.seed, confidence=args.confidence, n_jobs=n_jobs)
        print(json.dumps(one.to_dict(), sort_keys=True) if args.json else one.summary())
        return _verdict_status(target, one.violation)
    if args.search:
        from privbound.audit.search import search_target

        with arguments.dask_backend(args.dask_scheduler):
            found = search_target(target, trials=args.trials, seed=args.seed, confidence=args.confidence,
                                  n_jobs=n_jobs)
        print(json.dumps(found.audit.to_dict(), sort_keys=True) if args.json else found.summary())
        return _verdict_status(target, found.audit.violation)
    with arguments.dask_backend(args.dask_scheduler):
        result = target.audit(trials=args.trials, seed=args.seed, n_jobs=n_jobs, confidence=args.confidence,
                              estimator="floating-point" if args.float_audit else "auto")
    expect_violation = expects_violation(target, args.float_audit)
    if args.json:
        print(json.dumps(result.to_dict(), sort_keys=True))
    else:
        print(result.summary())
        if expect_violation:
            what = "planted bug" if target.planted_bug else "float-unsafe target"
            print(f"  {what:20s}: {'caught' if result.violation else 'MISSED'}")
    return _verdict_status(target, result.violation, expect_violation)


def _verdict_status(target, violation: bool, expect_violation: bool | None = None) -> int:
    """0 when the verdict is the expected one (correct target holds, planted bug caught), else 1."""
    if target.planted_bug if expect_violation is None else expect_violation:
        return 0 if violation else 1
    return 1 if violation else 0


def _cmd_nightly(args) -> int:
    from privbound.reports.nightly import NightlyError, main_status, run_nightly

    for stream in (sys.stdout, sys.stderr):  # a log file or a pipe gets each line as it is written
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(line_buffering=True)
    n_jobs = -1 if (args.dask_scheduler and args.n_jobs == 1) else args.n_jobs
    t0 = time.perf_counter()
    try:
        with arguments.dask_backend(args.dask_scheduler):
            results, out_dir = run_nightly(args.profile, args.out, seed=args.seed, n_jobs=n_jobs, cache=args.cache,
                                           history=args.history, wait=args.wait)
    except NightlyError as exc:
        raise CLIError(str(exc)) from None
    print(_nightly_table(results))
    for line in _nightly_footer(results, out_dir, time.perf_counter() - t0):
        print(line)
    return main_status(results)


def _nightly_table(results: NightlyResults) -> str:
    """The night on the terminal: one line per audit, the counts, the comparison."""
    from privbound.reports.html import tight_columns

    c = results.counts
    lines = [f"{'target':32s} {'claim':>8s} {'tight':>8s} {'eps_lb':>8s}  {'tight verdict':13s} claim verdict"]
    for a in results.audits:
        claim = (a.result or {}).get("epsilon_claimed")
        tight, lb, _ = tight_columns(a)
        lines.append(f"{a.target:32s} {'-' if claim is None else f'{claim:8.4g}':>8} {tight:>8} {lb:>8}  "
                     f"{a.tight_status or '-':13s} {a.status}")
    lines.append(f"checks: {c.checks_pass} pass, {c.checks_fail} fail, {c.checks_inconclusive} inconclusive, "
                 f"{c.checks_expected_fail} expected failures (documented errata)")
    lines.append(f"tight verdicts: {c.tight_holds} hold, {c.tight_violated} violated, {c.tight_inconclusive} "
                 "inconclusive (bound below half the tight epsilon)")
    lines.append(f"audits: {c.holds} hold, {c.violated} violated, {c.caught} planted bugs caught, "
                 f"{c.missed} missed, {c.error} errors")
    if results.learner_mutants:
        lines.append(f"learner mutants: {c.learner_mutants_caught} caught, {c.learner_mutants_missed} missed, "
                     f"{c.learner_mutants_error} errors, {c.learner_mutants_not_run} not run")
    changes = [ch for ch in results.changes if ch["kind"] != "note"]
    comp = results.comparison
    base = None if comp is None else comp.baseline
    if base is None:
        lines.append((comp and comp.note) or "no baseline")
    else:
        lines.append(f"changes since run {base.run_id} (seed {base.seed}): "
                     + (f"{len(changes)}, see summary.md" if changes else "none"))
    return "\n".join(lines)


def _nightly_footer(results: NightlyResults, out_dir, total: float) -> list[str]:
    """The closing lines: every file written, and the wall time of each phase."""
    from privbound.reports.nightly import OUTPUT_FILES

    hist = results.history
    lines = [f"run {results.run_id} wrote:"]
    lines += [f"  {out_dir / name}" for name in OUTPUT_FILES]
    if hist is not None and hist.updated:
        lines.append(f"  {hist.path} (history: run appended)")
    else:
        lines.append(f"  history NOT updated: {None if hist is None else hist.problem}")
    if results.paths is not None and results.paths.cache is not None:
        lines.append(f"  {results.paths.cache} (cache)")
    ph = dict(results.phases)
    ph["history"] = 0.0 if hist is None else hist.seconds
    lines.append("wall time: " + ", ".join(f"{k} {v:.1f} s" for k, v in ph.items()) + f"; total {total:.1f} s")
    return lines


def _parse_value(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise CLIError(f"parameter value must be a number, got {text!r}") from None
    return v


def _cmd_bounds(args) -> int:
    from privbound import bounds

    if args.bounds_command == "list":
        cs = bounds.claims()
        if args.json:
            print(json.dumps([
                {"id": c.id, "kind": c.kind.value, "reconstructed": c.reconstructed, "parameters": list(c.parameters),
                 "checks": [k.name for k in c.checks], "uncheckable_reason": c.uncheckable_reason,
                 "pending": c.pending, "statement": c.statement} for c in cs], indent=1))
        else:
            for c in cs:
                state = (f"{len(c.checks)} check(s)" if c.checks else
                         ("uncheckable" if c.uncheckable_reason else f"pending: {c.pending}"))
                print(f"{c.id:48s} {c.kind.value:26s} {state}")
        return 0
    if args.bounds_command == "eval":
        params = {}
        for item in args.params:
            if "=" not in item:
                raise CLIError(f"parameters are key=value, got {item!r}")
            k, v = item.split("=", 1)
            k = k.strip()
            if not k:
                raise CLIError(f"parameters are key=value, got {item!r}")
            if k in params:
                raise CLIError(f"parameter {k!r} given twice ({k}={params[k]:g} and {item}): give each once")
            params[k] = _parse_value(v)
        try:
            value = bounds.evaluate(args.id, **params)
        except KeyError as exc:
            raise CLIError(str(exc.args[0])) from None
        except (TypeError, ValueError) as exc:
            raise CLIError(str(exc)) from None
        if args.json:
            print(json.dumps({"id": args.id, "params": params, "value": value if math.isfinite(value) else None}))
        else:
            print(f"{value:.10g}")
        return 0
    # check
    try:
        results = bounds.run_checks(args.ids or None, profile=args.profile, n_jobs=args.n_jobs)
    except KeyError as exc:
        raise CLIError(str(exc.args[0])) from None
    from privbound.reports.nightly import expected_failure

    bad = 0
    if args.json:
        print(json.dumps([r.to_dict() for r in results], indent=1))
    for r in results:
        d = r.to_dict()
        expected = expected_failure(d)
        if r.status == "fail" and not expected:
            bad += 1
        if not args.json:
            tag = " [expected: documented erratum]" if expected else ""
            print(r.summary() + tag)
    return 1 if bad else 0


def _cmd_experiment(args) -> int:
    if args.data is not None and args.dataset == "digits":
        raise CLIError("--data does not apply to --dataset digits (bundled with scikit-learn): "
                       "pass --dataset mnist or usps, or drop --data")
    module_name = "privbound.reports.experiments." + args.name.replace("-", "_")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError:
        raise CLIError(f"no experiment named {args.name!r}") from None
    from pathlib import Path

    out = args.out or str(Path("reports") / "out" / "experiments" / args.name)
    summary = module.run(dataset=args.dataset, quick=args.quick, out=out, data=args.data, seed=args.seed)
    print(json.dumps(summary, indent=1, default=str))
    return 0


def _add_membership(sub) -> None:
    from privbound.reports.membership import add_parser

    add_parser(sub)


def _cmd_membership(args) -> int:
    from privbound.reports.membership import cmd_membership

    return cmd_membership(args)


# One entry per subcommand: its name, the function that adds its parser, the function that runs it.
# A new subcommand is an _add_NAME and a _cmd_NAME function and one line here.
_SUBCOMMANDS: list[tuple[str, Callable[[Any], None], Callable[[Any], int]]] = [
    ("list", _add_list, _cmd_list),
    ("audit", _add_audit, _cmd_audit),
    ("nightly", _add_nightly, _cmd_nightly),
    ("bounds", _add_bounds, _cmd_bounds),
    ("experiment", _add_experiment, _cmd_experiment),
    ("membership", _add_membership, _cmd_membership),
]
_COMMANDS = {name: run for name, _, run in _SUBCOMMANDS}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``privbound`` console script; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return _COMMANDS[args.command](args)
    except CLIError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 2
    except (ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # an unexpected failure: one line, exit 2
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
