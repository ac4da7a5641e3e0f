"""A run never outlives the worker that runs it: bwrap dies with the thread
that started it (PR_SET_PDEATHSIG), the sandbox with bwrap (--die-with-parent),
and a cgroup a dead worker left is emptied by the next run's sweep."""
from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time

from shareval.sandbox import cgroup

from .conftest import HAS_CGROUP, needs_sandbox

pytestmark = needs_sandbox

WORKER = """
import sys
from shareval.sandbox import bwrap, run
spec = bwrap.Spec(argv=["/bin/sh", "-c", "sleep 300; echo " + sys.argv[1]],
                  python_mount=False)
print("started", flush=True)
run.run(spec, run.Limits(wall_seconds=600), user=bwrap.pool_user() if bwrap.sandbox_user()
        else None)
"""


def _alive(marker: str) -> list[int]:
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                cmd = open(f"/proc/{p}/cmdline", "rb").read().decode(errors="replace")
                state = open(f"/proc/{p}/stat").read().rpartition(")")[2].split()[0]
            except (OSError, IndexError):
                continue
            if marker in cmd and state != "Z" and "import sys" not in cmd:
                out.append(int(p))
    return out


def test_a_run_ends_when_its_worker_is_killed():
    marker = "marker-" + secrets.token_hex(6)
    worker = subprocess.Popen([sys.executable, "-c", WORKER, marker], stdout=subprocess.PIPE,
                              env=dict(os.environ))
    assert worker.stdout.readline().strip() == b"started"
    deadline = time.monotonic() + 10
    while not _alive(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _alive(marker), "the run did not start"
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    deadline = time.monotonic() + 5
    while _alive(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _alive(marker) == []


def test_what_a_dead_worker_left_in_its_cgroup_is_killed_by_the_next_run():
    if not HAS_CGROUP:
        import pytest
        pytest.skip("no memory cgroup can be created here")
    where = cgroup.parents()
    stale = where["memory"] / f"{cgroup.PREFIX}999999999-{secrets.token_hex(3)}"
    stale.mkdir()
    left = subprocess.Popen(["sleep", "300"])
    (stale / "cgroup.procs").write_text(str(left.pid))
    fresh = cgroup.create(64 << 20, 16)
    try:
        assert left.wait(timeout=5) == -signal.SIGKILL
        assert not stale.exists()
    finally:
        if fresh is not None:
            fresh.remove()
        if stale.exists():
            left.kill()
            stale.rmdir()
