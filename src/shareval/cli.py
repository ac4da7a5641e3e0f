"""``shareval`` command line: scoring, samples, assessment, reference systems, the server.

Scoring: score, validate, compare, agree, tasks, split-units; samples: demo,
examples; human assessment: assess; the reference systems: run,
serve-system, train-system, systems; code bundles: run-code; the server and
its client: server, submit.

Exit codes: 0 success, 2 invalid input (every problem listed as
``file:line: field: message``), 1 internal error. Never a traceback unless
SHAREVAL_DEBUG=1.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__, tasks
from .formats.errors import InvalidInput

if TYPE_CHECKING:
    from rich.console import Console

EXIT_INVALID = 2
ONE_SHOT_COMMANDS = ("score", "validate", "compare")


def _task_options(parser: argparse.ArgumentParser, task) -> None:
    if task.figure:
        parser.add_argument("--plot", metavar="FILE",
                            help=f"write {task.figure} to this PNG file")
    for o in task.options:
        flag = "--" + o.name.replace("_", "-")
        if o.flag:
            parser.add_argument(flag, dest=o.name, action="store_true", help=o.help)
        else:
            # allowed values are checked with the task's own check (one line naming the
            # option, exit 2), as the bundle loader and Task.score check them
            parser.add_argument(flag, dest=o.name, type=o.type, default=o.default,
                                metavar="{" + ",".join(o.choices) + "}" if o.choices else None,
                                help=f"{o.help} (default: {o.default})")


def _output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("table", "json"), default="table",
                        help="table for people, json for programs (default: table)")
    parser.add_argument("--output", "-o", metavar="FILE",
                        help="write the result to FILE instead of standard output")


def _add_task_parsers(score_tasks, validate_tasks, task) -> None:
    sp = score_tasks.add_parser(task.name, help=task.description, description=task.description)
    sp.add_argument("--reference", "-r", required=task.reference_required,
                    help="reference (gold) file" + ("" if task.reference_required
                                                    else " (not used by this task)"))
    sp.add_argument("--submission", "-s", help="submission file (or give it as SUBMISSION)")
    sp.add_argument("path", nargs="?", metavar="SUBMISSION", help="the submission file")
    _task_options(sp, task)
    _output_options(sp)
    sp.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    vp = validate_tasks.add_parser(task.name, help=task.description, description=task.description)
    vp.add_argument("--submission", "-s", help="submission file (or give it as SUBMISSION)")
    vp.add_argument("path", nargs="?", metavar="SUBMISSION", help="the submission file")
    vp.add_argument("--reference", "-r", help="reference, to also check ids and coverage")
    vp.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def _task_parser(argv: list[str]) -> argparse.ArgumentParser | None:
    """For ``score|validate TASK ...``: a parser knowing only that task, or None.

    Building the full parser imports every task, the systems and the server
    (numba, pandas, Django: about a second); scoring one small run should not.
    """
    if len(argv) < 2 or argv[0] not in ("score", "validate") or argv[1].startswith("-"):
        return None
    task = tasks.find(argv[1])
    if task is None:
        return None
    p = argparse.ArgumentParser(prog="shareval", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    score_tasks = sub.add_parser("score", help="score a submission against a reference"
                                 ).add_subparsers(dest="task", required=True, metavar="TASK")
    validate_tasks = sub.add_parser("validate", help="check a submission without scoring"
                                    ).add_subparsers(dest="task", required=True, metavar="TASK")
    _add_task_parsers(score_tasks, validate_tasks, task)
    return p


class _LazyConsole:
    """rich's Console, imported on first use (JSON output and errors need none)."""

    def __init__(self):
        self._real = None

    def real(self) -> Console:
        if self._real is None:
            from rich.console import Console
            self._real = Console(highlight=False, soft_wrap=True)
        return self._real

    def __getattr__(self, name):
        return getattr(self.real(), name)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="shareval", description=__doc__.split("\n")[0])
    p.add_argument("--version", action="version", version=f"shareval {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sub.add_parser("tasks", help="list the registered tasks")

    score = sub.add_parser("score", help="score a submission against a reference")
    score_tasks = score.add_subparsers(dest="task", required=True, metavar="TASK")
    validate = sub.add_parser("validate", help="check a submission (and its ids against a "
                                               "reference) without scoring")
    validate_tasks = validate.add_subparsers(dest="task", required=True, metavar="TASK")
    for name in tasks.names():
        _add_task_parsers(score_tasks, validate_tasks, tasks.get(name))

    agree = sub.add_parser("agree", help="inter-annotator agreement from an (item, annotator, "
                                         "label) table")
    agree.add_argument("file", help="TSV or CSV with columns item, annotator, label")
    _output_options(agree)

    cmp_ = sub.add_parser("compare", help="paired significance between two submissions")
    cmp_.add_argument("task", choices=tasks.names(), metavar="TASK")
    cmp_.add_argument("--reference", "-r", required=True)
    cmp_.add_argument("a", metavar="A", help="first submission")
    cmp_.add_argument("b", metavar="B", help="second submission")
    cmp_.add_argument("--samples", type=int, default=10_000, help="resamples (default 10000)")
    cmp_.add_argument("--confidence", type=float, default=0.95, help="CI level (default 0.95)")
    cmp_.add_argument("--seed", type=int, default=0)
    _output_options(cmp_)
    cmp_.add_argument("--quiet", "-q", action="store_true", help="no progress bar")

    units = sub.add_parser("split-units", help="the units of a public/private split (the "
                                               "bundle's split: rule), one id a line")
    units.add_argument("task", choices=sorted(split_tasks()), metavar="TASK")
    units.add_argument("--reference", "-r", required=True)
    how = units.add_mutually_exclusive_group(required=True)
    how.add_argument("--fraction", type=float, help="share of units that are private, with "
                                                    "--seed (as split: {fraction, seed})")
    how.add_argument("--private", metavar="FILE", help="the private unit ids, one a line")
    units.add_argument("--seed", type=int, help="seed of the hash fraction")
    units.add_argument("--part", choices=("public", "private"), default="private",
                       help="which part's units to print (default: private)")

    demo = sub.add_parser("demo", help="score perturbed copies of real gold data and print "
                                       "the result tables")
    demo.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    demo.add_argument("--data", default=None,
                      help="the shared data folder (default: ../shared/data if present, "
                           "else a small synthetic sample)")
    demo.add_argument("--out", default="out/demo", help="where to write the demo files")

    ex = sub.add_parser("examples", help="write the sample inputs the README's examples use "
                                         "(make test and make demo run it)")
    ex.add_argument("--data", default=None, help="as for demo")
    ex.add_argument("--out", default="out/demo", help="where to write them (default out/demo)")

    sm = sub.add_parser("submit", help="upload a submission to a shareval server (REST API)")
    sm.add_argument("file", metavar="FILE", nargs="?")
    sm.add_argument("--code", metavar="DIR", help="pack folder DIR (with shareval-system.yaml) "
                                                  "and upload it as a code submission")
    sm.add_argument("--competition", "-c", required=True)
    sm.add_argument("--phase", "-p", required=True)
    sm.add_argument("--task", "-t", required=True,
                    help="the dataset name the pages show (e.g. svident-dev), or the task's "
                         "slug or registry name")
    sm.add_argument("--dataset", help="needed only when a phase has several datasets per task")
    sm.add_argument("--primary", action="store_true", help="flag the run primary")
    sm.add_argument("--contrastive", action="store_true",
                    help="flag the run contrastive (without either flag a canonical "
                         "MATERIAL archive name decides, else contrastive)")
    sm.add_argument("--description", "-m", default="")
    sm.add_argument("--method", default=None, help="the fact sheet's method name")
    sm.add_argument("--factsheet", default=None, metavar="FILE.yaml",
                    help="the run's fact sheet (YAML or JSON mapping: method, paper, code, "
                         "resources, training and the competition's own fields)")
    sm.add_argument("--server", default=None,
                    help="server URL (default: $SHAREVAL_SERVER or http://127.0.0.1:8000)")
    sm.add_argument("--token", default=None, help="API token (default: $SHAREVAL_TOKEN)")
    sm.add_argument("--wait", action="store_true", help="wait until scored and print the score")
    sm.add_argument("--timeout", type=float, default=600, help="seconds to --wait (default 600)")

    assess = sub.add_parser("assess", help="human assessment: plan, sample, estimate, simulate")
    acmds = assess.add_subparsers(dest="assess_command", required=True, metavar="SUBCOMMAND")
    ap = acmds.add_parser("plan", help="judgments for a target CI half-width and their cost, "
                                       "or (with --budget) what a budget buys")
    target = ap.add_mutually_exclusive_group(required=True)
    target.add_argument("--half-width", type=float, help="e.g. 0.01 for +/-1 point")
    target.add_argument("--budget", type=float, help="money to spend on one submission")
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--z", type=float, default=None,
                    help="override the normal quantile (the spec's arithmetic uses 2)")
    ap.add_argument("--precision", type=float, default=0.5,
                    help="expected precision (0.5 is the worst case; default)")
    ap.add_argument("--seconds", type=float, default=4.5, help="seconds per judgment (4.5)")
    ap.add_argument("--rate", type=float, default=12.0, help="judge pay per hour (12)")
    ap.add_argument("--overlap", type=float, default=0.0,
                    help="share of the sample already judged for other submissions")
    ap.add_argument("--population", type=int, default=None,
                    help="items in the submission (finite-population correction)")
    _output_options(ap)
    sp = acmds.add_parser("sample", help="draw the items to judge from submissions' output, "
                                         "with inclusion probabilities")
    sp.add_argument("outputs", nargs="+", metavar="[NAME=]FILE",
                    help="each submission's output (TSV or JSONL); NAME defaults to the stem")
    sp.add_argument("--n", type=int, default=200, help="items drawn per submission (200)")
    sp.add_argument("--design", choices=["joint", "uniform"], default="joint",
                    help="joint (default): pooled draws reuse judgments across submissions; "
                         "uniform: each submission on its own")
    sp.add_argument("--docs", type=int, default=0,
                    help="documents to annotate exhaustively for recall (0: none)")
    sp.add_argument("--key", default=None,
                    help="columns (1-based, or JSON fields) that identify an item; default: all")
    sp.add_argument("--doc-column", default=None,
                    help="column or field holding the document (default: the first key column)")
    sp.add_argument("--seed", type=int, default=0)
    sp.add_argument("--output", "-o", default=None, help="write the sample here (TSV)")
    ep = acmds.add_parser("estimate", help="precision, entity precision, recall and F1 with "
                                           "intervals from judgments")
    ep.add_argument("judgments", metavar="JUDGMENTS", help="CSV, TSV or JSONL")
    ep.add_argument("--method", choices=["design", "importance"], default="design")
    ep.add_argument("--weights", choices=["heuristic", "size", "uniform"], default="heuristic",
                    help="importance mixture weights w_ij: heuristic (default, Chaganty et al. "
                         "2017: ~ n_j sum_x p_i(x) p_j(x)), size (~ n_j) or uniform")
    ep.add_argument("--confidence", type=float, default=0.95)
    ep.add_argument("--bootstrap", type=int, default=1000, help="replicates (0: none)")
    ep.add_argument("--seed", type=int, default=0)
    _output_options(ep)
    smp = acmds.add_parser("simulate", help="bias, coverage and interval widths of the "
                                            "estimators on synthetic ground truth")
    smp.add_argument("--sims", type=int, default=1000)
    smp.add_argument("--n", type=int, default=60,
                     help="mean draws per system (60): system s of S draws n (0.5 + s/(S-1))")
    smp.add_argument("--docs", type=int, default=30, help="recall documents per simulation")
    smp.add_argument("--systems", type=int, default=6)
    smp.add_argument("--world-docs", type=int, default=300)
    smp.add_argument("--coverage", type=float, default=1.0,
                     help="share of the documents each system covers (1: all; below 1 each "
                          "system has its own band, so outputs overlap unevenly)")
    smp.add_argument("--seed", type=int, default=0)
    _output_options(smp)

    from .systems.cli import add_parsers as add_system_parsers
    add_system_parsers(sub)

    from .runcode import add_parser as add_run_code_parser
    add_run_code_parser(sub)

    from .platform.commands import add_server_parser
    add_server_parser(sub)
    return p


def _emit(result, args, console: Console) -> None:
    from .report import print_result, result_json
    if args.format == "json":
        text = result_json(result)
        if args.output:
            Path(args.output).write_text(text + "\n", encoding="utf-8")
        else:
            sys.stdout.write(text + "\n")
        return
    from rich.console import Console
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            print_result(result, Console(file=f, width=120, no_color=True))
    else:
        print_result(result, console.real() if isinstance(console, _LazyConsole) else console)


def run(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _task_parser(argv) or build_parser()
    args = parser.parse_args(argv)
    if args.command in ("score", "validate"):
        # the plan's own form names the run last: shareval score TASK ... RUN.tgz
        if args.submission and args.path:
            parser.error("give the submission once: --submission FILE or SUBMISSION")
        args.submission = args.submission or args.path
        if not args.submission:
            parser.error("the following arguments are required: --submission/-s (or "
                         "SUBMISSION)")
    if args.command in ONE_SHOT_COMMANDS and "pyarrow" not in sys.modules:
        _choose_allocator(_input_bytes(args))
    from . import progress
    # --quiet holds for this command only: run() is also called in-process (tests,
    # scripts), where a lasting switch would silence every later progress bar
    quiet_before = progress.QUIET
    progress.QUIET = quiet_before or bool(getattr(args, "quiet", False))
    try:
        return _dispatch(args, _LazyConsole())
    finally:
        progress.QUIET = quiet_before


# From this many bytes of input a one-shot command reads with jemalloc returning freed
# pages at once: at 10M TREC lines half the peak of the C library's allocator, and
# faster (5.7 s instead of 7.9 s for UUID ids); below it the C library's allocator is
# faster (0.34-0.47 x pytrec_eval at 2M lines instead of 0.36-0.59 x), sparing it the
# kernel time jemalloc's page returns cost on virtual machines
# (docs/dev/i41-ranking.md). Servers and workers keep pyarrow's default (jemalloc).
LARGE_INPUT_BYTES = 256 * 2 ** 20
JEMALLOC_RETURN_AT_ONCE = "dirty_decay_ms:0,muzzy_decay_ms:0"


def _choose_allocator(input_bytes: int) -> None:
    """pyarrow's allocator for this process (before pyarrow is imported); an operator's
    ``ARROW_DEFAULT_MEMORY_POOL`` (and ``JE_ARROW_MALLOC_CONF``) win."""
    if "ARROW_DEFAULT_MEMORY_POOL" in os.environ:
        return
    if input_bytes >= LARGE_INPUT_BYTES:
        os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "jemalloc"
        os.environ.setdefault("JE_ARROW_MALLOC_CONF", JEMALLOC_RETURN_AT_ONCE)
    else:
        os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "system"


def _input_bytes(args) -> int:
    """Bytes of the files a one-shot command reads (a folder: its files, added up)."""
    total = 0
    for name in ("reference", "submission", "a", "b"):
        path = getattr(args, name, None)
        if not isinstance(path, str):
            continue
        try:
            if os.path.isdir(path):
                total += sum(os.path.getsize(os.path.join(d, f))
                             for d, _, files in os.walk(path) for f in files)
            else:
                total += os.path.getsize(path)
        except OSError:
            pass                # the task reports a missing or unreadable file
    return total


def _dispatch(args, console) -> int:
    if args.command == "tasks":
        for name in tasks.names():
            t = tasks.get(name)
            primary = f"primary metric {t.primary_metric}" if t.primary_metric else \
                "no primary metric: not ranked"
            console.print(f"[bold]{name}[/bold]  {t.description} [dim]({primary})[/dim]")
        return 0
    if args.command == "score":
        task = tasks.get(args.task)
        opts = task.checked_options({o.name: getattr(args, o.name) for o in task.options})
        result = task.score(args.reference, args.submission, **opts)
        if getattr(args, "plot", None):
            from .plots import save_figure
            save_figure(result, args.plot)
        _emit(result, args, console)
        return 0
    if args.command == "validate":
        task = tasks.get(args.task)
        warnings = task.validate(args.submission, args.reference)
        for w in warnings:
            console.print(f"[yellow]warning:[/yellow] {w}")
        console.print(f"{args.submission}: valid {args.task} submission"
                      + ("" if args.reference else " (ids not checked: no --reference)"))
        return 0
    console = console.real()
    if args.command == "agree":
        from .stats import agreement_result
        _emit(agreement_result(args.file), args, console)
        return 0
    if args.command == "compare":
        from .stats import compare_result
        _emit(compare_result(args.task, args.reference, args.a, args.b, args.samples,
                             args.confidence, args.seed, show_progress=True), args, console)
        return 0
    if args.command == "split-units":
        return _split_units(args, console)
    if args.command == "demo":
        from .demo import run_demo
        return run_demo(args.data, args.out, console)
    if args.command == "examples":
        from .examples import write_examples
        console.print(f"README sample inputs written to {write_examples(args.out, args.data)}/")
        return 0
    if args.command == "assess":
        from .assessment import cli as acli
        if args.assess_command == "sample":
            return acli.sample_command(args, console)
        make = {"plan": acli.plan_result, "estimate": acli.estimate_result,
                "simulate": acli.simulate_result}[args.assess_command]
        _emit(make(args), args, console)
        return 0
    if args.command == "submit":
        from .client import submit_command
        return submit_command(args, console)
    if args.command in ("systems", "run", "serve-system", "train-system"):
        from .systems.cli import command
        return command(args, console)
    if args.command == "run-code":
        from .runcode import command
        return command(args, console)
    if args.command == "server":
        from .platform.commands import run_server_command
        return run_server_command(args, console)
    raise AssertionError(args.command)


def split_tasks() -> list[str]:
    from .tasks.splits import SPLITTERS
    return list(SPLITTERS)


def _split_units(args, console) -> int:
    """Print one part's unit ids; the counts of both parts go to standard error."""
    from .tasks.splits import SPLITTERS, private_test, units
    if args.private:
        text = Path(args.private).read_text(encoding="utf-8")
        split = {"units": [ln.strip() for ln in text.splitlines() if ln.strip()]}
    elif args.seed is None or not 0 < args.fraction < 1:
        sys.stderr.write("shareval: --fraction needs a value between 0 and 1 and --seed\n")
        return EXIT_INVALID
    else:
        split = {"fraction": args.fraction, "seed": args.seed}
    every = units(tasks.get(args.task), args.reference)
    test = private_test(split)
    private = [u for u in every if test(u)]
    chosen = private if args.part == "private" else [u for u in every if not test(u)]
    sys.stdout.write("".join(f"{u}\n" for u in chosen))
    sys.stderr.write(f"{args.task}: {len(every)} {SPLITTERS[args.task].unit} units, "
                     f"{len(every) - len(private)} public, {len(private)} private\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        return run(argv)
    except InvalidInput as e:
        sys.stderr.write(e.render() + "\n")
        sys.stderr.write(f"{e.total} problem(s) found; nothing was scored.\n")
        return EXIT_INVALID
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except Exception as e:  # never a traceback for users
        if os.environ.get("SHAREVAL_DEBUG"):
            raise
        sys.stderr.write(f"shareval: internal error: {type(e).__name__}: {e}\n"
                         f"(set SHAREVAL_DEBUG=1 for the traceback and report it)\n")
        return 1


# A one-shot command makes many objects it keeps (a file's rows, its ids) and few
# cycles: the collector's default pace (a pass every 700 allocations) walked them
# again and again, and the interpreter's last pass at exit walked them all (20 ms of
# a 0.1 s 50-query score, 0.1 s of 1 s at 20,000 queries: docs/dev/i41-ranking.md).
ONE_SHOT_GC_THRESHOLD = 100_000


def entry() -> None:
    """The ``shareval`` command (and ``python -m shareval.cli``): :func:`main` in a
    process of its own. A one-shot command collects garbage rarely and skips the
    collection at exit; a server keeps the collector's defaults. (Not done in
    :func:`main`: tests and scripts call it in a process that goes on.)"""
    import gc
    one_shot = len(sys.argv) > 1 and sys.argv[1] in ONE_SHOT_COMMANDS
    if one_shot:
        gc.set_threshold(ONE_SHOT_GC_THRESHOLD, *gc.get_threshold()[1:])
    code = main()
    if one_shot:
        gc.freeze()                 # what is left is freed with the process
    sys.exit(code)


if __name__ == "__main__":
    entry()
