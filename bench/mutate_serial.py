"""``bench/mutate.py --serial``: every mutant of a module's last run, one at a time.

mutmut runs two mutants at once in processes forked from one warm process, with
a wall-clock limit per mutant; a verdict can then depend on the other mutant
(anything the two share) or on the load (a limit firing). Here each mutant runs
alone in one warm process (the loop of ``--recheck``, selecting the mutant
through mutmut's ``MUTANT_UNDER_TEST``), without a time limit, and its verdict
is compared with the parallel run's. ``m`` is bench/mutate.py's module (its
folders, tables and helpers).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time

SERIAL = r"""
import contextlib, io, json, os, sys, time
import pytest
jobs, extra = json.load(open(sys.argv[1])), sys.argv[2:]


class First:
    # the first failing test phase and the last lines of its error
    def __init__(self):
        self.test, self.error = None, []

    def pytest_runtest_logreport(self, report):
        if report.failed and self.test is None:
            self.test = report.nodeid
            self.error = (getattr(report, "longreprtext", "") or "").splitlines()[-3:]


for name, tests in jobs:
    os.environ["MUTANT_UNDER_TEST"] = name
    first, t = First(), time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = pytest.main(["-q", "-x", "-p", "no:cacheprovider", *extra, *tests],
                           plugins=[first]) if tests else 5
    print(json.dumps([name, int(code), first.test, first.error,
                      round(time.perf_counter() - t, 2)]), flush=True)
    if os.getppid() == 1:          # bench/mutate.py was stopped: so is this loop
        break
"""


def serial(m, module: str, tests: list[str] | None, resume: bool = False,
           full_examples: bool = False, shard: tuple[int, int] = (1, 1)) -> dict | None:
    """Every mutant of ``module``'s last run, one at a time in one warm process (the
    loop of ``--recheck``): no mutant shares anything with another one running beside
    it, and no timeout depends on the load. Each mutant runs the tests of the module
    that reach its function (mutmut's record of the run; a test that never calls the
    function cannot see the mutant), in their files' order; with ``tests`` given, all
    of those instead. Each mutant's exit
    code, first failing test and time go to serial.jsonl line by line (``resume``
    continues a stopped run); the parallel run's verdicts (mutmut's record in the
    same folder) are compared with these: ``disagree``. ``shard`` (k, n): only every
    n-th mutant from the k-th, in a process of its own (its own data folder and
    database; n = 2 uses both cores), appended to the same record; a last
    ``resume`` run summarizes."""
    work = m.OUT / m.slug(module)
    meta = work / "mutants" / "src" / "shareval" / (module + ".meta")
    if not meta.is_file():
        raise SystemExit(f"no mutants of {module}: a normal run makes them first "
                         f"(a short one is enough: --budget 120)")
    parallel = json.loads(meta.read_text())["exit_code_by_key"]
    shutil.rmtree(work / "tests")
    shutil.copytree(m.ROOT / "tests", work / "tests",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis"))
    env = dict(m.profile_env(full_examples), PYTHONPATH=str(work / "mutants" / "src"))
    env["SHAREVAL_MUTATION_FAILLOG"] = str(work / "serial-failures.jsonl")
    log = work / "serial.jsonl"
    done = {}
    if resume and log.is_file():
        done = {r[0]: r for r in map(json.loads, log.read_text().splitlines())}
    elif log.exists():
        log.unlink()
    names = [n for n in sorted(parallel)[shard[0] - 1::shard[1]] if n not in done]
    stats = json.loads((work / "mutants" / "mutmut-stats.json").read_text())
    order = list(stats["duration_by_test"])         # the order the whole files ran in
    reach = stats["tests_by_mangled_function_name"]

    def tests_of(name: str) -> list[str]:
        if tests:
            return tests
        return sorted(reach.get(name.rsplit("__mutmut_", 1)[0], []),
                      key=lambda t: order.index(t) if t in order else len(order))
    # the unmutated code first ("" = no mutant): every test must pass, or the run means nothing
    jobs = [["", tests or m.TESTS[module]], *([n, tests_of(n)] for n in names)]
    jobs_file = work / f"serial-jobs-{shard[0]}.json"
    jobs_file.write_text(json.dumps(jobs), encoding="utf-8")
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", SERIAL, str(jobs_file),
                             *m.extra_args(module)],
                            cwd=work, env=env, stdout=subprocess.PIPE, text=True)
    with open(log, "a", encoding="utf-8") as out:
        for line in proc.stdout:
            if not line.startswith("["):
                continue
            row = json.loads(line)
            if row[0] == "":
                if row[1] != 0:
                    proc.kill()
                    raise SystemExit(f"the unmutated code fails {row[2]}: {row[3]}")
                continue
            done[row[0]] = row
            out.write(json.dumps(row) + "\n")
            out.flush()
    if shard[1] > 1 and proc.wait() == 0:
        return None
    if proc.wait() != 0 or set(done) != set(parallel):
        raise SystemExit(f"serial run of {module} stopped after {len(done)} of "
                         f"{len(parallel)} mutants (--resume continues it)")
    codes = {n: r[1] for n, r in done.items()}
    killed = sorted(n for n, c in codes.items() if c not in (0, 5))
    still = sorted(n for n, c in codes.items() if c in (0, 5))        # 5: no test reaches it
    par_killed = {n for n, c in parallel.items() if c in m.KILLED}
    disagree = {"killed in parallel, survive serially": sorted(par_killed & set(still)),
                "survived in parallel, killed serially": sorted(
                    n for n in killed if parallel[n] is not None and parallel[n] not in m.KILLED)}
    diffs = {}
    if still:
        out = subprocess.run([sys.executable, "-c", m.DIFFS], cwd=work, env=env, text=True,
                             input=json.dumps(still), capture_output=True)
        diffs = dict(json.loads(line) for line in out.stdout.splitlines())
    return {"module": module, "mode": "serial", "mutants": len(codes), "killed": len(killed),
            "survived": len(still), "skipped": 0, "not_run": 0,
            "no_tests": sum(codes[n] == 5 for n in still),
            "score": len(killed) / len(codes) if codes else float("nan"),
            "seconds": time.perf_counter() - t0, "resumed": len(done) - len(names),
            "disagree": disagree, "parallel_codes": parallel,
            "killed_by": {n: done[n][2] for n in killed},
            "survivors": {n: {"status": "no tests" if codes[n] == 5 else "survived",
                              "diff": diffs.get(n, [])} for n in still}}
