"""Mutation testing: how many small planted bugs the tests of each module catch.

    python bench/mutate.py                      # every module below
    python bench/mutate.py --module metrics/ranking.py --module tasks/rcc.py
    python bench/mutate.py --list               # the modules and their tests
    python bench/mutate.py --module metrics/detection.py --recheck [--tests FILE ...]
                                                # last run's survivors against today's tests
    python bench/mutate.py --module platform/submissions/service.py --serial [--resume]
                                                # every mutant of the last run, one at a time
    python bench/mutate.py --module platform/submissions/service.py --recheck --of-serial
                                                # its survivors against today's tests
    python bench/mutate.py --module platform/submissions/service.py --mutants '*x_rescore__*'
                                                # a parallel run of some mutants only
    python bench/mutate.py --module tasks/trec.py --tests-at 81ba35d --tests tests/tasks/test_trec.py
                                                # a "before" run: the tests of a commit
    python bench/mutate.py --module platform/access/visibility.py --tests FILE ...
                                                # a full run against other tests

Each module is mutated by mutmut (operators, constants, comparisons, arguments,
returned values) in its own copy of the tree under out/mutate/<module>/, and
each mutant runs against that module's own tests only (the TESTS table), so a
module's score says what its tests catch, not what the whole suite catches by
chance. Mutants in code those tests never run count as survivors ("no tests").

Prints, per module: mutants, killed, survived, score = killed / (all - skipped)
and the run time; then every survivor as a one-line diff. The list of accepted
survivors (equivalent mutants and the reason for each) is docs/dev/testing.md.
A benchmark-style command: not part of `make test`.

``--recheck`` runs only the survivors of a module's last run (kept in
out/mutate/<module>/result.json) against the current tests (the module's
TESTS, or ``--tests``), one mutant at a time in one warm process, selecting
each mutant through mutmut's ``MUTANT_UNDER_TEST``: minutes instead of a full
run, to check that new tests kill what they were written for.

``--serial`` runs every mutant of the module's last run (not only its survivors)
in that loop, each against the module's tests that reach its function: the
score with nothing shared between mutants run side by side and no timeout that
depends on the load, compared mutant by mutant with the parallel run's verdicts
(out/mutate/<module>/serial.json). It needs a run's mutants first (a normal
run; ``--budget 120`` is enough to make them).

All set SHAREVAL_HYPOTHESIS_PROFILE=mutation: tests/conftest.py then caps every
property test at 30 derandomized examples (deterministic tests unchanged), so
a score is a lower bound of what the full example counts would kill.
``--full-examples`` runs the property tests at their own counts (hours for
the metric modules).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "out" / "mutate"

MATERIAL_TESTS = ["tests/tasks/test_material.py", "tests/tasks/test_material_e2e.py",
                  "tests/tasks/test_material_rules.py", "tests/tasks/test_material_e2e_rules.py"]

# module (under src/shareval) -> the tests that own it
TESTS: dict[str, list[str]] = {
    "metrics/agreement.py": ["tests/metrics/test_agreement.py",
                             "tests/metrics/test_agreement_rules.py"],
    "metrics/classification.py": ["tests/metrics/test_classification.py",
                                  "tests/metrics/test_classification_rules.py"],
    "metrics/detection.py": ["tests/metrics/test_detection.py",
                             "tests/metrics/test_detection_rules.py"],
    "metrics/estimation.py": ["tests/metrics/test_estimation.py",
                              "tests/metrics/test_estimation_rules.py",
                              "tests/assessment/test_weights.py"],
    "metrics/ranking.py": ["tests/metrics/test_ranking.py", "tests/metrics/test_ranking_rules.py",
                           "tests/metrics/test_ranking_rel_level.py",
                           "tests/metrics/test_ranking_oracle.py",
                           "tests/tasks/test_svident_ties.py"],
    "metrics/significance.py": ["tests/metrics/test_significance.py"],
    # the mention rule of rcc-mentions: its own tests, then the scorer's over files
    "metrics/mentions.py": ["tests/metrics/test_mentions.py", "tests/tasks/test_rcc.py",
                            "tests/tasks/test_rcc_rules.py", "tests/tasks/test_rcc_results.py",
                            "tests/tasks/test_rcc_mentions_kaggle.py"],
    "tasks/base.py": ["tests/tasks/test_base.py", "tests/tasks/test_classification.py",
                      "tests/tasks/test_trec.py"],
    "tasks/classification.py": ["tests/tasks/test_classification.py",
                                "tests/tasks/test_classification_rules.py"],
    "tasks/catalogs.py": ["tests/tasks/test_catalogs.py", "tests/tasks/test_catalogs_rules.py"],
    "tasks/material/base.py": MATERIAL_TESTS,
    "tasks/material/clir.py": MATERIAL_TESTS,
    "tasks/material/e2e.py": MATERIAL_TESTS,
    "tasks/material/identification.py": MATERIAL_TESTS,
    "tasks/program.py": ["tests/tasks/test_program.py"],
    "tasks/rcc.py": ["tests/tasks/test_rcc.py", "tests/tasks/test_rcc_rules.py",
                     "tests/tasks/test_rcc_results.py", "tests/tasks/test_rcc_mentions_kaggle.py",
                     "tests/metrics/test_mentions.py"],
    "tasks/svident.py": ["tests/tasks/test_svident.py", "tests/tasks/test_svident_rules.py",
                         "tests/tasks/test_svident_official.py",
                         "tests/tasks/test_svident_ties.py"],
    "tasks/trec.py": ["tests/tasks/test_trec.py", "tests/tasks/test_trec_rules.py"],
    # the registry (register, find, names, get); test_registry.py re-imports the task
    # modules into an empty registry, so register's mutants take effect there too
    "tasks/__init__.py": ["tests/tasks/test_registry.py"],
    # the public/private split of every family: no other file of tests/tasks imports it
    "tasks/splits.py": ["tests/tasks/test_splits.py", "tests/tasks/test_splits_rules.py"],
    "assessment/estimate.py": ["tests/assessment/test_estimate.py",
                               "tests/assessment/test_estimate_rules.py",
                               "tests/assessment/test_estimate_intervals.py",
                               "tests/assessment/test_estimate_importance.py",
                               "tests/assessment/test_weights.py"],
    # the server's rules: focused files on rows written to the database (no bundle,
    # no scoring, no pages), a few seconds per mutant; the page-level tests
    # (test_visibility.py, test_submissions.py, test_teams.py) were the mapping
    # before them and can still be chosen with --tests
    "platform/access/visibility.py": ["tests/platform/access/test_access_rules.py"],
    "platform/leaderboards/rows.py":
        ["tests/platform/leaderboards/test_leaderboard_rules.py"],
    "platform/leaderboards/boards.py":
        ["tests/platform/leaderboards/test_leaderboard_rules.py"],
    "platform/access/eligibility.py": ["tests/platform/access/test_eligibility_rules.py"],
    # test_locks.py: the team lock and the retry of a deadlock victim (its lock tests run
    # in PostgreSQL mode only: SQLite has no row locks, so a --recheck there is needed)
    "platform/submissions/service.py": ["tests/platform/submissions/test_service_rules.py",
                                        "tests/platform/submissions/test_service_refusal_rules.py",
                                        "tests/platform/submissions/test_service_edge_rules.py",
                                        "tests/platform/submissions/test_locks.py"],
}

# Django's test database: built from the models instead of by running every migration
# (none holds data: no RunPython or RunSQL), about 2 s instead of 30 s on a busy
# machine for each mutant, since every mutant's pytest process makes its own
PLATFORM_ARGS = ["--nomigrations"]

KILLED = {1, 3, 36, -24, 24, 152, 255, 37}    # failed, pytest error, timeouts, type check
SKIPPED = {34}
NO_TESTS = {33, 5}

DIFFS = r"""
import json, sys
from mutmut.mutation.diff_apply import get_diff_for_mutant
for name in json.load(sys.stdin):
    diff = get_diff_for_mutant(name)
    lines = [l for l in diff.splitlines() if l[:1] in "+-" and l[:3] not in ("+++", "---")]
    print(json.dumps([name, lines]))
"""


def slug(module: str) -> str:
    return module.replace("/", "__").removesuffix(".py")


def extra_args(module: str) -> list[str]:
    return PLATFORM_ARGS if module.startswith("platform/") else []


def prepare(module: str, tests: list[str] | None = None, tests_at: str | None = None) -> Path:
    work = OUT / slug(module)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
    shutil.copytree(ROOT / "src", work / "src", ignore=ignore)
    if tests_at:            # the tests as they were at a commit: a "before" run
        archive = subprocess.run(["git", "archive", tests_at, "tests"], cwd=ROOT,
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(work)], input=archive, check=True)
    else:
        shutil.copytree(ROOT / "tests", work / "tests", ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", work / "pyproject.toml")
    tests = "\n    ".join(tests or TESTS[module])
    args = "\n    ".join(["-p", "no:cacheprovider", "-x", *extra_args(module)])
    (work / "setup.cfg").write_text(
        "[mutmut]\n"
        "source_paths = src\n"
        f"only_mutate = src/shareval/{module}\n"
        f"pytest_add_cli_args_test_selection =\n    {tests}\n"
        f"pytest_add_cli_args =\n    {args}\n"
        "use_git_change_detection = false\n", encoding="utf-8")
    return work


def profile_env(full_examples: bool) -> dict:
    env = dict(os.environ)
    if full_examples:
        env.pop("SHAREVAL_HYPOTHESIS_PROFILE", None)
    else:
        env["SHAREVAL_HYPOTHESIS_PROFILE"] = "mutation"
    return env


def run(module: str, children: int, tests: list[str] | None = None,
        tests_at: str | None = None, budget: float | None = None,
        full_examples: bool = False, mutants: list[str] | None = None) -> dict:
    """A full mutmut run; with ``budget`` (seconds) it is stopped then, and the
    mutants not run yet are reported as such (left out of the score); with
    ``mutants`` (names or fnmatch patterns), only those are run."""
    work = prepare(module, tests, tests_at)
    env = profile_env(full_examples)
    env.pop("PYTHONPATH", None)    # mutmut puts mutants/src first (tests/conftest.py
    #                                 passes it on to the tests' child processes)
    env.setdefault("SHAREVAL_SHARED_DATA", str(ROOT.parent / "shared" / "data"))
    env["SHAREVAL_MUTATION_FAILLOG"] = str(work / "failures.jsonl")   # tests/conftest.py
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "mutmut", "run", "--max-children",
                             str(children), *(mutants or [])], cwd=work, env=env,
                            stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        log, _ = proc.communicate(timeout=budget)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)       # mutmut and the mutants it forked
        log, _ = proc.communicate()
        log += f"\nstopped after the budget of {budget:.0f} s\n"
    seconds = time.perf_counter() - t0
    (work / "mutmut.log").write_text(log, encoding="utf-8")
    return summarize(module, work, seconds, env, full_examples)


def summarize(module: str, work: Path, seconds: float, env: dict | None = None,
              full_examples: bool = False) -> dict:
    """The score of a run from mutmut's record of it (also of a run that was stopped:
    mutants without an exit code were not run)."""
    meta = work / "mutants" / "src" / "shareval" / (module + ".meta")
    if not meta.is_file():
        tail = "\n".join((work / "mutmut.log").read_text().splitlines()[-15:]) \
            if (work / "mutmut.log").is_file() else ""
        raise SystemExit(f"mutmut produced no results for {module} (log: {work}/mutmut.log)\n{tail}")
    codes = json.loads(meta.read_text())["exit_code_by_key"]
    not_run = sorted(k for k, c in codes.items() if c is None)
    codes = {k: c for k, c in codes.items() if c is not None}
    killed = sorted(k for k, c in codes.items() if c in KILLED)
    skipped = sorted(k for k, c in codes.items() if c in SKIPPED)
    survived = sorted(k for k, c in codes.items() if c not in KILLED | SKIPPED)
    diffs = {}
    if survived:
        out = subprocess.run([sys.executable, "-c", DIFFS], cwd=work, env=env, text=True,
                             input=json.dumps(survived), capture_output=True)
        for line in out.stdout.splitlines():
            name, lines = json.loads(line)
            diffs[name] = lines
    tested = len(codes) - len(skipped)
    return {"module": module, "examples": "full" if full_examples else "mutation profile",
            "mutants": len(codes), "killed": len(killed),
            "survived": len(survived), "skipped": len(skipped), "not_run": len(not_run),
            "not_run_names": not_run,
            "no_tests": sum(codes[k] in NO_TESTS for k in survived),
            "score": len(killed) / tested if tested else float("nan"), "seconds": seconds,
            "survivors": {k: {"status": "no tests" if codes[k] in NO_TESTS else
                              ("survived" if codes[k] == 0 else f"exit {codes[k]}"),
                              "diff": diffs.get(k, [])} for k in survived}}


def recheck(module: str, tests: list[str] | None, sample: int = 0,
            full_examples: bool = False, of_serial: bool = False) -> dict:
    """The last run's survivors of ``module`` against the current tests; with
    ``sample``, also that many mutants (seeded draw) of those a stopped run did not
    reach, whose kill rate estimates the rest (reported apart, not in the score);
    ``of_serial``: the survivors of the last ``--serial`` run instead."""
    work = OUT / slug(module)
    result = json.loads((work / ("serial.json" if of_serial else "result.json")).read_text())
    shutil.rmtree(work / "tests")
    shutil.copytree(ROOT / "tests", work / "tests",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis"))
    env = dict(profile_env(full_examples), PYTHONPATH=str(work / "mutants" / "src"))
    drawn = sorted(random.Random(0).sample(result.get("not_run_names", []),
                                           min(sample, len(result.get("not_run_names", [])))))
    names = sorted(result["survivors"]) + drawn
    t0 = time.perf_counter()
    from mutate_serial import SERIAL           # the same one-mutant-at-a-time loop
    jobs_file = work / "recheck-jobs.json"
    jobs_file.write_text(json.dumps([[n, tests or TESTS[module]] for n in names]),
                         encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", SERIAL, str(jobs_file), *extra_args(module)],
                          cwd=work, env=env, capture_output=True, text=True)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("[")]
    codes = {row[0]: row[1] for row in rows}
    if set(codes) != set(names):
        raise SystemExit(f"recheck of {module} failed:\n{proc.stderr[-2000:]}")
    sampled = {"sampled": len(drawn), "sample_killed": sum(codes[n] != 0 for n in drawn),
               "sample_survivors": [n for n in drawn if codes[n] == 0]}
    names = sorted(result["survivors"])
    killed = [n for n in names if codes[n] != 0]
    still = {n: result["survivors"][n] for n in names if codes[n] == 0}
    total_killed = result["killed"] + len(killed)
    tested = result["mutants"] - result["skipped"]
    return {**result, "killed": total_killed, "survived": len(still), "survivors": still,
            "score": total_killed / tested if tested else float("nan"),
            "seconds": time.perf_counter() - t0, "rechecked": len(names), **sampled}


def main(argv=None) -> int:
    global OUT
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--module", action="append", choices=sorted(TESTS),
                    help="one module (repeatable); default: all")
    ap.add_argument("--children", type=int, default=2, help="parallel mutants (default 2)")
    ap.add_argument("--list", action="store_true", help="print modules and their tests")
    ap.add_argument("--recheck", action="store_true",
                    help="only the last run's survivors, against the current tests")
    ap.add_argument("--serial", action="store_true",
                    help="every mutant of the last run, one at a time (the true score: "
                         "nothing shared with a mutant running beside it), compared with "
                         "the parallel run's verdicts")
    ap.add_argument("--mutants", nargs="+", metavar="PATTERN",
                    help="a run of only these mutants (names or patterns such as "
                         "'*x_rescore__*'); the others are counted as not run")
    ap.add_argument("--shard", default="1/1", metavar="K/N",
                    help="with --serial: every N-th mutant from the K-th (two shards at "
                         "once use both cores; then --serial --resume summarizes)")
    ap.add_argument("--of-serial", action="store_true",
                    help="with --recheck: the last --serial run's survivors")
    ap.add_argument("--resume", action="store_true",
                    help="with --serial: continue a stopped serial run")
    ap.add_argument("--tests", nargs="+",
                    help="these tests instead of TESTS (e.g. a 'before' run without new tests)")
    ap.add_argument("--tests-at", metavar="COMMIT",
                    help="a full run against the tests as they were at COMMIT (a 'before' "
                         "run; with --tests naming the files that existed then)")
    ap.add_argument("--out", type=Path, default=OUT,
                    help="where the runs are kept (default out/mutate; e.g. out/mutate-before "
                         "for before runs, so that an after run's survivors stay rechecked)")
    ap.add_argument("--sample", type=int, default=0,
                    help="with --recheck: also this many of the mutants a stopped run did "
                         "not reach (seeded draw), reported apart")
    ap.add_argument("--budget", type=float,
                    help="stop a module's run after this many seconds; the mutants not run "
                         "are counted apart (not in the score)")
    ap.add_argument("--full-examples", action="store_true",
                    help="property tests at their own example counts (default: at most 30)")
    args = ap.parse_args(argv)
    OUT = args.out.resolve()
    if args.list:
        for m, t in TESTS.items():
            print(f"{m:40s} {' '.join(t)}")
        return 0
    results = []
    for module in args.module or list(TESTS):
        print(f"{'rechecking' if args.recheck else 'serial' if args.serial else 'mutating'} "
              f"{module} ...", flush=True)
        if args.serial:
            from mutate_serial import serial
            r = serial(sys.modules[__name__], module, args.tests, args.resume,
                       args.full_examples, tuple(map(int, args.shard.split("/"))))
            if r is None:
                print(f"  shard {args.shard} done; --serial --resume summarizes")
                return 0
            (OUT / slug(module) / "serial.json").write_text(json.dumps(r, indent=1),
                                                            encoding="utf-8")
            for what, names in r["disagree"].items():
                print(f"  {what}: {len(names)} {' '.join(names)}", flush=True)
        elif args.recheck:
            r = recheck(module, args.tests, args.sample, args.full_examples, args.of_serial)
        else:
            r = run(module, args.children, args.tests, args.tests_at, args.budget,
                    args.full_examples, args.mutants)
        results.append(r)
        if not args.recheck and not args.serial:
            (OUT / slug(module) / "result.json").write_text(json.dumps(r, indent=1),
                                                            encoding="utf-8")
        print(f"  {r['killed']}/{r['mutants'] - r['skipped']} killed "
              f"({100 * r['score']:.1f}%) in {r['seconds']:.0f} s"
              + (f"; {r['not_run']} mutants not run (budget or --mutants)"
                 if r.get("not_run") else ""),
              flush=True)
        if r.get("sampled"):
            print(f"  sample of the mutants not run: {r['sample_killed']}/{r['sampled']} "
                  f"killed; survivors: {' '.join(r['sample_survivors']) or 'none'}", flush=True)
    print()
    print(f"{'module':40s} {'mutants':>7s} {'killed':>6s} {'surv.':>5s} {'no tests':>8s} "
          f"{'score':>6s} {'time':>6s}")
    for r in results:
        print(f"{r['module']:40s} {r['mutants']:7d} {r['killed']:6d} {r['survived']:5d} "
              f"{r['no_tests']:8d} {100 * r['score']:5.1f}% {r['seconds']:5.0f}s")
    total = sum(r["seconds"] for r in results)
    if args.recheck or args.serial:
        print(f"total time {total:.0f} s, "
              f"{'survivors rechecked' if args.recheck else 'every mutant'} one at a time")
    else:
        print(f"total time {total:.0f} s with {args.children} parallel mutants")
    for r in results:
        if r["survivors"]:
            print(f"\nsurvivors in {r['module']}:")
            for name, s in r["survivors"].items():
                print(f"  {name} [{s['status']}]")
                for line in s["diff"]:
                    print(f"      {line.strip()[:150]}")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "summary.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(f"\nwritten {OUT / 'summary.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
