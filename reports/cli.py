"""The ``privbound`` command line.

Commands::

    privbound --version
    privbound list [--json]
    privbound audit NAME [--trials N] [--seed S] [--n-jobs J] [--confidence C]
                         [--dask-scheduler ADDRESS] [--json] [--one-run [--canaries M] | --search]
    privbound nightly [--profile smoke|default|full] [--out DIR] [--cache DIR] [--cache-max SIZE]
                      [--history FILE] [--wait [SECONDS]] [--seed S] [--n-jobs J] [--dask-scheduler ADDRESS]
    privbound cache size|prune [--cache DIR] [--max SIZE]
    privbound bounds list [--json]
    privbound bounds eval ID key=value ... [--json]
    privbound bounds check [ID ...] [--profile smoke|default|full] [--json]
    privbound experiment NAME [--dataset D] [--data PATH] [--quick] [--out DIR] [--seed S]
    privbound membership NAME|list [--reference-models K] [--targets T] [--seed S] [--n-jobs J]
                         [--confidence C] [--cache DIR] [--top N] [--dask-scheduler ADDRESS] [--json]

Exit status: 0 when every claim holds (and every planted bug is caught), 1 when a
claim is violated, a check fails or a planted bug is missed, 2 on an error or bad
arguments (one line on stderr, no traceback); ``nightly`` adds 4 (4 or 5) when its outputs
were written but the history was not updated; 130 when interrupted (Ctrl-C: the finished work
is in the cache, and the same command resumes); 141 when stdout is closed early (``| head``),
silently. An option that does nothing in the chosen mode, and a ``key=value`` parameter given
twice, are bad arguments.

Start-up: every argument and location is checked before the auditor, the targets or the checks
are imported, so ``--help``, ``--version``, ``list`` (from :mod:`privbound.reports.index`) and
every refusal answer in about a second; a refused ``nightly`` creates no folder.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import os
import shutil
import sys
import textwrap
from typing import Any, Callable, Sequence

from privbound.reports import arguments
from privbound.reports.arguments import CLIError
from privbound.reports.locations import human_size
from privbound.reports.schema import NightlyResults  # light: dataclasses and json only

__all__ = ["main", "build_parser", "EXIT_INTERRUPTED", "EXIT_BROKEN_PIPE"]

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a process stopped by Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: the reader of stdout went away (``privbound list | head -1``)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one clear line, exit 2 (argparse prints usage too)
        raise CLIError(f"{self.prog}: {message}")


def _trials(text: str) -> int | str:
    """argparse type: a number of trials per dataset (at least 10), or ``auto``."""
    if text == "auto":
        return "auto"
    try:
        return arguments.int_at_least("trials", 10)(text)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (or 'auto')") from None


def _add_list(sub) -> None:
    ls = sub.add_parser("list", help="list the audit targets, each with what it audits")
    ls.add_argument("--json", action="store_true", help="one JSON record per target")


def _add_audit(sub) -> None:
    au = sub.add_parser("audit", help="audit one target")
    au.add_argument("name", help="target name (see `privbound list`)")
    au.add_argument("--trials", type=_trials, default=None,
                    help="trials per dataset, or 'auto': sample in stages and stop when the bound is decided "
                         "(default: the target's; not with --one-run)")
    au.add_argument("--max-trials", type=arguments.int_at_least("max-trials", 20), default=None,
                    help="with --trials auto: the most trials per dataset it may spend (default 2000000)")
    au.add_argument("--max-seconds", type=arguments.positive_seconds("--max-seconds"), default=None,
                    help="with --trials auto: stop before a stage that would end after this many seconds (the "
                         "first stage, 10000 trials per dataset, is sampled in doubling groups of chunks when this is "
                         "set, and a slow mechanism stops after one of them)")
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
    au.add_argument("--float", action="store_true", dest="float_audit",
                    help="look for a floating-point leak: the attack portfolio with the floating-point attack "
                         "(the verdict then says whether the implementation is float-unsafe at its claim); with "
                         "--search, the floating-point attack also judges the pair the search found")
    au.add_argument("--canaries", type=arguments.positive_int("canaries"), default=None, metavar="M",
                    help="canaries of a one-run audit (default 1000; only with --one-run)")


def _add_nightly(sub) -> None:
    from privbound.reports.locations import profiles_help

    ni = sub.add_parser(
        "nightly", help="audit every target and run the bound checks",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.fill(
            "Audit every target and run the bound checks of a profile. Writes results.json, summary.md "
            "and report.html into --out, then appends the run to --history. Exit status: 0 all good, "
            "1 a claim violated / check failed / planted bug missed, 2 bad arguments, a bad or busy "
            "location or outputs that could not be written; 4 or 5: as 0 or 1, but the history was "
            "not updated (the outputs stand); 130 interrupted (rerun the same command: it resumes from the cache).",
            width=100) + "\n\nprofiles:\n" + profiles_help())
    ni.add_argument("--profile", choices=["smoke", "default", "full"], default="default",
                    help="smoke, default or full (described above; default: default)")
    ni.add_argument("--out", default=None, metavar="DIR",
                    help="output folder (default reports/out/<UTC date>/); one run at a time per folder")
    ni.add_argument("--cache", default=None, metavar="DIR",
                    help="finished trial chunks and checks, reused by a rerun (default <parent of --out>/.cache)")
    ni.add_argument("--cache-max", type=arguments.size_bytes("cache-max"), default=None, metavar="SIZE",
                    help="after the night, prune the cache's least recently used entries down to SIZE (e.g. 2G, "
                         "500M; 0 keeps only what this night used; default 2G); never what this night used")
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
                         "with their own generator (the OpenDP and PipelineDP targets, listed in summary.md)")
    ni.add_argument("--n-jobs", type=arguments.n_jobs, default=1)
    ni.add_argument("--dask-scheduler", default=None, metavar="ADDRESS")


def _add_bounds(sub) -> None:
    bo = sub.add_parser("bounds", help="the theorem registry")
    bsub = bo.add_subparsers(dest="bounds_command", parser_class=_Parser)
    bsub.required = True
    bl = bsub.add_parser("list", help="list the registered claims")
    bl.add_argument("--json", action="store_true")
    be = bsub.add_parser("eval", help="evaluate a claim's formula (its main quantity, labelled)")
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


def _add_cache(sub) -> None:
    ca = sub.add_parser("cache", help="the nightly's cache of finished work: its size, and pruning it")
    csub = ca.add_subparsers(dest="cache_command", parser_class=_Parser)
    csub.required = True
    for name, what in (("size", "print the cache's size"), ("prune", "delete least recently used entries")):
        c = csub.add_parser(name, help=what)
        c.add_argument("--cache", default=None, metavar="DIR",
                       help="the cache folder (default reports/out/.cache, the nightly's default)")
        if name == "prune":
            c.add_argument("--max", type=arguments.size_bytes("max"), required=True, metavar="SIZE",
                           help="keep at most SIZE (e.g. 2G, 500M, 0), dropping the least recently used first")


def _version() -> str:
    from privbound.reports.index import code_version

    return f"privbound {code_version()}"


class _VersionAction(argparse.Action):
    """``--version``: the version and the commit (or source digest), computed only when asked."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(_version())
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="privbound", description="Audit differential privacy claims and check learning-theory bounds.")
    p.add_argument("--version", action=_VersionAction, help="print the version and the commit (or source digest)")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    sub.required = True
    for _, add, _ in _SUBCOMMANDS:
        add(sub)
    return p


def _terminal_width() -> int:
    return max(60, min(shutil.get_terminal_size((100, 24)).columns, 160))


def list_lines(records: list[dict[str, Any]], width: int = 100) -> list[str]:
    """``privbound list``'s lines: a row per target -- name, claim, family, kind -- with columns as wide as
    their longest entry, then its description wrapped to ``width`` and indented."""
    rows = [(r["name"], f"({r['epsilon']:g}, {r['delta']:g})", r["family"],
             "planted bug" if r["planted_bug"] else "correct") for r in records]
    head = ("name", "claim (eps, delta)", "family", "kind")
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(3)]
    lines = ["  ".join(f"{c:{w}s}" for c, w in zip(head[:3], widths)) + "  " + head[3]]
    for row, r in zip(rows, records):
        lines.append("  ".join(f"{c:{w}s}" for c, w in zip(row[:3], widths)) + "  " + row[3])
        text = " ".join(str(r.get("description") or "").split())
        if text:
            lines += textwrap.wrap(text, width=width, initial_indent="    ", subsequent_indent="    ")
    return lines


def _cmd_list(args) -> int:
    from privbound.reports.index import target_index

    recs = target_index()
    if args.json:
        print(json.dumps(recs, indent=1))
        return 0
    print("\n".join(list_lines(recs, _terminal_width())))
    return 0


def _known(name: str, records: list[dict[str, Any]], key: str, what: str, see: str, live: str = "") -> None:
    """:class:`CLIError` when ``name`` is not the ``key`` of one of ``records`` (the index), naming the closest.

    When the registry module ``live`` is already imported (a program that registered targets of its own, a test),
    the registry itself answers instead (nothing is checked here)."""
    if live and live in sys.modules:
        return
    names = [r[key] for r in records]
    if name in names:
        return
    import difflib

    close = difflib.get_close_matches(name, names, n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise CLIError(f"no {what} named {name!r}{hint}; see `{see}`")


def _cmd_audit(args) -> int:
    if args.canaries is not None and not args.one_run:
        raise CLIError("--canaries only applies to a one-run audit: add --one-run, or drop --canaries")
    if args.one_run and args.float_audit:
        raise CLIError("--float does not apply to --one-run (the one-run audit has no floating-point attack)")
    if args.one_run and args.trials is not None:
        raise CLIError("--trials does not apply to --one-run (one training run with --canaries canaries)")
    if args.trials != "auto" and (args.max_trials is not None or args.max_seconds is not None):
        raise CLIError("--max-trials and --max-seconds only apply to --trials auto")
    if args.trials == "auto" and args.search:
        raise CLIError("--trials auto does not apply to --search: give --trials N")
    from privbound.reports.index import target_index

    _known(args.name, target_index(), "name", "target", "privbound list", live="privbound.audit.targets")
    from privbound.audit.targets import get_target
    from privbound.reports.nightly import expects_violation

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
                                  n_jobs=n_jobs, float_audit=True if args.float_audit else "auto")
        print(json.dumps(found.audit.to_dict(), sort_keys=True) if args.json else found.summary())
        return _verdict_status(target, found.audit.any_violation, expects_violation(target, args.float_audit))
    with arguments.dask_backend(args.dask_scheduler):
        auto = {} if args.trials != "auto" else {
            k: v for k, v in (("max_trials", args.max_trials), ("max_seconds", args.max_seconds)) if v is not None}
        try:
            result = target.audit(trials=args.trials, seed=args.seed, n_jobs=n_jobs, confidence=args.confidence,
                                  estimator="floating-point" if args.float_audit else "auto", **auto)
        except ValueError as exc:
            if args.trials != "auto":
                raise
            raise CLIError(f"--trials auto: {str(exc).replace('pass trials=<int>', 'give --trials N')}") from None
    expect_violation = expects_violation(target, args.float_audit)
    if args.json:
        print(json.dumps(result.to_dict(), sort_keys=True))
    else:
        print(result.summary())
        if expect_violation:
            what = "planted bug" if target.planted_bug else "float-unsafe target"
            print(f"  {what:20s}: {'caught' if result.any_violation else 'MISSED'}")
    return _verdict_status(target, result.any_violation, expect_violation)


def _verdict_status(target, violation: bool, expect_violation: bool | None = None) -> int:
    """0 when the verdict is the expected one (correct target holds, planted bug caught), else 1."""
    if target.planted_bug if expect_violation is None else expect_violation:
        return 0 if violation else 1
    return 1 if violation else 0


def _precheck_nightly(args) -> None:
    """Refuse a bad location or a busy output folder before anything heavy is imported, creating nothing."""
    from privbound.reports.locations import NightlyError, create_locations, resolve_paths, validate_paths
    from privbound.reports.locking import LockBusy, RunLock

    paths = resolve_paths(args.out, args.cache, args.history)
    try:
        validate_paths(paths)
        create_locations(paths)  # what the file system refuses (a read-only mount, /proc) shows here
    except NightlyError as exc:
        raise CLIError(str(exc)) from None
    lock_file = paths.out / ".nightly.lock"
    if args.wait == 0 and lock_file.exists():  # a peek; run_nightly takes the lock for real
        peek = RunLock(lock_file, f"--out {paths.out}")
        try:
            peek.acquire({"pid": os.getpid(), "peek": True})
        except LockBusy as exc:
            raise CLIError(f"{exc}; wait for it or pass --wait") from None
        except OSError:
            return
        peek.release()


def _cmd_nightly(args) -> int:
    _precheck_nightly(args)
    if args.dask_scheduler is not None:
        arguments.require_dask()
    for stream in (sys.stdout, sys.stderr):  # a log file or a pipe gets each line as it is written
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(line_buffering=True)
    print(f"privbound nightly --profile {args.profile}: loading the auditor, the targets and the checks",
          file=sys.stderr)
    from privbound.reports.nightly import DEFAULT_CACHE_MAX, NightlyError, main_status, run_nightly

    n_jobs = -1 if (args.dask_scheduler and args.n_jobs == 1) else args.n_jobs
    try:
        with arguments.dask_backend(args.dask_scheduler):
            results, out_dir = run_nightly(args.profile, args.out, seed=args.seed, n_jobs=n_jobs, cache=args.cache,
                                           history=args.history, wait=args.wait,
                                           cache_max=DEFAULT_CACHE_MAX if args.cache_max is None else args.cache_max)
    except NightlyError as exc:
        raise CLIError(str(exc)) from None
    print(_nightly_table(results))
    for line in _nightly_footer(results, out_dir):
        print(line)
    _refresh_index()
    return main_status(results)


def _refresh_index() -> None:
    """Write the indexes of targets, claims and membership targets while their modules are imported anyway (at the
    end of a night: nearly free), so that ``privbound list`` answers at once from then on."""
    from privbound.reports import index

    for build in (index.target_index, index.claim_index, index.membership_index):
        with contextlib.suppress(Exception):
            build()


def _nightly_table(results: NightlyResults) -> str:
    """The night on the terminal: one line per audit, the counts, the comparison."""
    from privbound.reports.html import tight_columns

    c = results.counts
    w = max([len("target"), *(len(a.target) for a in results.audits)])
    lines = [f"{'target':{w}s} {'claim':>8s} {'tight':>8s} {'eps_lb':>8s}  {'tight verdict':13s} {'claim verdict':13s} "
             "power"]
    for a in results.audits:
        claim = (a.result or {}).get("epsilon_claimed")
        tight, lb, _ = tight_columns(a)
        lines.append(f"{a.target:{w}s} {'-' if claim is None else f'{claim:8.4g}':>8} {tight:>8} {lb:>8}  "
                     f"{a.tight_status or '-':13s} {a.status:13s} {(a.result or {}).get('status') or '-'}")
    lines.append(f"checks: {c.checks_pass} pass, {c.checks_fail} fail, {c.checks_inconclusive} inconclusive, "
                 f"{c.checks_expected_fail} expected fail (documented errata: they show the paper's printed or "
                 "reconstructed statement is wrong)")
    weak = len(results.held_inconclusive())
    if weak:
        lines.append(f"power: {weak} claim(s) hold only as far as their audit could see (inconclusive at their "
                     "trials against a 2x overspend; see the power column of summary.md)")
    lines.append(f"tight verdicts: {c.tight_holds} hold, {c.tight_violated} violated, {c.tight_inconclusive} "
                 "inconclusive (bound below half the tight epsilon)")
    lines.append(f"audits: {c.holds} hold, {c.violated} violated, {c.caught} planted bugs caught, "
                 f"{c.missed} missed, {c.error} errors")
    if results.learner_mutants:
        lines.append(f"learner mutants: {c.learner_mutants_caught} caught, {c.learner_mutants_missed} missed, "
                     f"{c.learner_mutants_error} errors, {c.learner_mutants_not_run} not run at this profile")
    if results.mutants or c.mutants_not_run:
        lines.append(f"check mutants: {c.mutants_detected} detected, {c.mutants_undetected} not detected, "
                     f"{c.mutants_not_run} not run at this profile")
    changes = [ch for ch in results.changes if ch["kind"] != "note"]
    comp = results.comparison
    base = None if comp is None else comp.baseline
    if base is None:
        lines.append((comp and comp.note) or "no baseline")
    else:
        lines.append(f"changes since run {base.run_id} (seed {base.seed}): "
                     + (f"{len(changes)}, see summary.md" if changes else "none"))
    return "\n".join(lines)


def _nightly_footer(results: NightlyResults, out_dir) -> list[str]:
    """The closing lines: every file written, the cache and its size, and the wall time of each phase with the
    run's total -- the same total as summary.md and report.html (the history's update comes after it)."""
    from privbound.reports.nightly import OUTPUT_FILES

    hist = results.history
    lines = [f"run {results.run_id} wrote:"]
    lines += [f"  {out_dir / name}" for name in OUTPUT_FILES]
    if hist is not None and hist.updated:
        lines.append(f"  {hist.path} (history: run appended)")
    else:
        lines.append(f"  history NOT updated: {None if hist is None else hist.problem}")
    if results.paths is not None and results.paths.cache is not None:
        lines.append(f"  {results.paths.cache} (cache{_cache_note(results)})")
    ph = {k.replace("_", " "): v for k, v in results.phases.items()}
    after = "" if hist is None else f", then history {hist.seconds:.1f} s"
    lines.append("wall time: " + ", ".join(f"{k} {v:.1f} s" for k, v in ph.items())
                 + f"; total {results.wall_seconds:.1f} s{after}")
    return lines


def _cache_note(results: NightlyResults) -> str:
    c = results.cache
    if not c:
        return ""
    note = f": {human_size(c['bytes'])}, {human_size(c['added_bytes'])} added tonight"
    if c.get("pruned_bytes"):
        note += f", {human_size(c['pruned_bytes'])} pruned to stay under {human_size(c['max_bytes'])}"
    return note


def _parse_value(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise CLIError(f"parameter value must be a number, got {text!r}") from None
    return v


def _eval_params(items: list[str]) -> dict[str, float]:
    """``key=value`` parameters of ``bounds eval``, each once, each a number (:class:`CLIError` otherwise)."""
    params: dict[str, float] = {}
    for item in items:
        if "=" not in item:
            raise CLIError(f"parameters are key=value, got {item!r}")
        k, v = item.split("=", 1)
        k = k.strip()
        if not k:
            raise CLIError(f"parameters are key=value, got {item!r}")
        if k in params:
            raise CLIError(f"parameter {k!r} given twice ({k}={params[k]:g} and {item}): give each once")
        params[k] = _parse_value(v)
    return params


def _cmd_bounds(args) -> int:
    from privbound.reports.index import claim_index

    params = _eval_params(args.params) if args.bounds_command == "eval" else {}
    index = claim_index()
    if args.bounds_command == "list":
        if args.json:
            print(json.dumps([{k: v for k, v in c.items() if k != "quantity"} for c in index], indent=1))
        else:
            width = max(len(c["id"]) for c in index)
            kinds = max(len(c["kind"]) for c in index)
            for c in index:
                state = (f"{len(c['checks'])} check(s)" if c["checks"] else
                         ("uncheckable" if c["uncheckable_reason"] else f"pending: {c['pending']}"))
                print(f"{c['id']:{width}s}  {c['kind']:{kinds}s}  {state}")
        return 0
    for claim_id in [args.id] if args.bounds_command == "eval" else args.ids:
        _known(claim_id, index, "id", "claim", "privbound bounds list", live="privbound.bounds")
    from privbound import bounds

    if args.bounds_command == "eval":
        try:
            value = bounds.evaluate(args.id, **params)
        except KeyError as exc:
            raise CLIError(str(exc.args[0])) from None
        except (TypeError, ValueError) as exc:
            raise CLIError(str(exc)) from None
        quantity = next(c["quantity"] for c in index if c["id"] == args.id) or "value"
        if args.json:
            print(json.dumps({"id": args.id, "params": params, "quantity": quantity,
                              "value": value if math.isfinite(value) else None}))
        else:
            at = ", ".join(f"{k}={v:g}" for k, v in params.items())
            print(f"{args.id}: {quantity} = {value:.10g}" + (f" at {at}" if at else ""))
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
            form = (d.get("details") or {}).get("erratum_form")
            tag = f" [expected fail: documented erratum, {form} form]" if expected else ""
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


def _cmd_cache(args) -> int:
    from pathlib import Path

    from privbound.reports.locations import resolve_paths

    root = Path(args.cache) if args.cache is not None else resolve_paths(Path("reports") / "out" / "x").cache
    if root.exists() and not root.is_dir():
        raise CLIError(f"--cache {root}: exists and is not a directory")
    from privbound.audit.cache import cache_size, prune_cache

    if args.cache_command == "size":
        print(f"{root}: {human_size(cache_size(root))}" if root.exists() else f"{root}: no cache")
        return 0
    if not root.exists():
        print(f"{root}: no cache")
        return 0
    freed = prune_cache(root, args.max)
    print(f"{root}: {human_size(freed.removed_bytes)} pruned ({freed.removed_files} files), "
          f"{human_size(freed.kept_bytes)} kept")
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
    ("cache", _add_cache, _cmd_cache),
]
_COMMANDS = {name: run for name, _, run in _SUBCOMMANDS}


def _interrupted(args) -> str:
    """What Ctrl-C leaves behind, in one line: for a nightly, where its finished work is and how to resume."""
    if getattr(args, "command", None) == "nightly":
        from privbound.reports.locations import resolve_paths

        cache = resolve_paths(args.out, args.cache, args.history).cache
        return (f"interrupted: nothing was published; finished work is in the cache {cache}, "
                "and rerunning the same command resumes from it")
    if getattr(args, "command", None) == "membership" and getattr(args, "cache", None):
        return f"interrupted: finished models are in the cache {args.cache}; rerunning the same command resumes"
    return "interrupted"


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's last flush into a closed pipe is silent."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``privbound`` console script; returns the exit status."""
    parser = build_parser()
    args = None
    try:
        args = parser.parse_args(argv)
        status = _COMMANDS[args.command](args)
        sys.stdout.flush()
        return status
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except CLIError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(_interrupted(args), file=sys.stderr)
        return EXIT_INTERRUPTED
    except (ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # an unexpected failure: one line, exit 2
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
