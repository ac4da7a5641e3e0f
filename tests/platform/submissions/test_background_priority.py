"""Scoring workers and the children that validate uploads run at a lower CPU
priority than the pages (BACKGROUND_NICE): in a deadline rush on a 2-core machine
pages waited for a core behind them (docs/dev/i41-rush.md)."""
from __future__ import annotations

import os
import subprocess
import sys

from django.conf import settings

from shareval.platform.submissions import isolate, service

from ..factories import run_with_accuracy

OWN = os.getpriority(os.PRIO_PROCESS, 0)


def _validate(tmp_path, limits):
    f = tmp_path / "run.tsv"
    f.write_text(run_with_accuracy(10))
    v = isolate.validate("classification", str(f), None, limits)
    assert not v.problems and not v.limit and not v.crash, v
    return v


def test_the_upload_validation_child_runs_at_the_background_priority(tmp_path):
    v = _validate(tmp_path, service.validation_limits())
    assert settings.BACKGROUND_NICE == 10          # the default
    assert v.nice == max(OWN, 10)


def test_the_child_priority_is_configurable_and_never_raised(tmp_path):
    if OWN < 15:
        assert _validate(tmp_path, service.validation_limits(nice=15)).nice == 15
    assert _validate(tmp_path, service.validation_limits(nice=0)).nice == OWN


def _worker_nice(tmp_path, *extra: str, env: dict | None = None) -> int:
    """`shareval server worker` with its loops replaced by a print of the nice value."""
    code = ("import os, sys\n"
            "from shareval.platform import commands\n"
            "setup = commands._setup\n"
            "def patched(args):\n"
            "    setup(args)\n"
            "    from shareval.platform.submissions import queue\n"
            "    from shareval.platform.coderuns import queue as cq\n"
            "    show = lambda: print('NICE', os.getpriority(os.PRIO_PROCESS, 0))\n"
            "    queue.worker_loop = cq.worker_loop = show\n"
            "    queue.start_small_lane = lambda: None\n"
            "commands._setup = patched\n"
            "from shareval.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("SHAREVAL_") and k != "DJANGO_SETTINGS_MODULE"}
    e.update(env or {})
    r = subprocess.run([sys.executable, "-c", code, "server", "--home", str(tmp_path / "home"),
                        "worker", *extra], env=e, capture_output=True, text=True, timeout=120)
    nice = [line.split()[1] for line in r.stdout.splitlines() if line.startswith("NICE ")]
    assert r.returncode == 0 and nice, r.stdout + r.stderr
    return int(nice[0])


def test_the_scoring_worker_runs_niced(tmp_path):
    assert _worker_nice(tmp_path) == max(OWN, 10)


def test_the_worker_nice_value_is_a_setting(tmp_path):
    assert _worker_nice(tmp_path, env={"SHAREVAL_BACKGROUND_NICE": "0"}) == OWN
    if OWN < 13:
        assert _worker_nice(tmp_path, "--code", env={"SHAREVAL_BACKGROUND_NICE": "13"}) == 13
