"""The parent's watch over an isolated child: a child stuck at its address-space
limit is killed and reported as over the memory limit (CPython 3.11 can spin for
ever there; CI saw it as "needed more than 300 s of CPU time" for a 30 MB limit),
past the wall limit as "time"; a child that ends gives its output."""
from __future__ import annotations

import os
import sys
import time

from shareval.platform.submissions import isolate

# sets its address-space limit 1 MiB above what it has, then loops without allocating
STUCK = """
import resource
size = next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (size + 2**20, size + 2**20))
while True:
    pass
"""

ROOMY = """
import resource, sys, time
size = next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (size + 2**30, size + 2**30))
time.sleep(float(sys.stdin.read()))
print("done")
"""


def test_a_child_stuck_at_its_address_space_limit_is_killed_as_over_memory():
    t = time.monotonic()
    out, err, code, limit = isolate.supervise([sys.executable, "-c", STUCK], "", dict(os.environ), 60)
    took = time.monotonic() - t
    assert limit == "memory" and code == -9
    assert isolate.STUCK_SECONDS <= took < 30


def test_a_child_with_room_runs_past_the_stuck_window_and_gives_its_output():
    wait = isolate.STUCK_SECONDS + 0.5
    out, err, code, limit = isolate.supervise([sys.executable, "-c", ROOMY], str(wait),
                                              dict(os.environ), 60)
    assert (out, code, limit) == ("done\n", 0, ""), err


def test_a_child_past_the_wall_limit_is_killed_as_over_time():
    out, err, code, limit = isolate.supervise([sys.executable, "-c", ROOMY], "30",
                                              dict(os.environ), 0.5)
    assert limit == "time" and code == -9 and out == ""


def test_only_a_child_near_its_address_space_limit_counts_as_stuck():
    import subprocess
    free = subprocess.Popen(["sleep", "30"])
    try:
        assert not isolate._at_address_limit(free.pid)
    finally:
        free.kill()
        free.wait()
    assert not isolate._at_address_limit(free.pid)        # ended: no /proc entry
