"""What a run can write, and what it can learn of the host (docs/code-submissions.md).

The only writable places are the output folder and two tmpfs mounts of fixed
size, /tmp (also /var/tmp) and /dev/shm; the root, /etc, /dev, /usr and the
read-only mounts refuse writes. What the tmpfs mounts and shared memory hold
counts against memory_mb, with a memory cgroup (the kernel's count) and
without one (the watchdog's sum of resident memory and tmpfs files)."""
from __future__ import annotations

import pytest

from shareval.sandbox import bwrap

from .conftest import HAS_CGROUP, NO_CGROUP_WHY, needs_sandbox

pytestmark = needs_sandbox

WRITER = """
import json, os
MB = b"\\0" * (1 << 20)
def fill(path, limit_mb):
    n = 0
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            for _ in range(limit_mb):
                f.write(MB); f.flush(); n += 1
    except OSError:
        pass
    return n
places = {PLACES}
print(json.dumps({p: fill(p, mb) for p, mb in places.items()}))
"""


def writer(places: dict[str, int]) -> str:
    return WRITER.replace("{PLACES}", repr(places))


def test_only_the_sized_tmpfs_mounts_are_writable_besides_the_output(sandboxed):
    # the probe wrote 1.8 GB to /var/tmp, /big-b and /dev/shm with tmp_mb 64
    places = {"/big-b": 64, "/etc/x": 8, "/var/tmp/x": 64, "/dev/x": 8, "/dev/shm/x": 64,
              "/usr/x": 8, "/code/x": 8, "/env/x": 8, "/input/x": 8, "/proc/x": 8,
              "/tmp/y": 64, "/new/folder/x": 8}
    rep, wrote = sandboxed(writer(places), {"memory_mb": 512, "tmp_mb": 16, "shm_mb": 8})
    assert rep.result.state == "ok", rep.result
    for p in ("/big-b", "/etc/x", "/dev/x", "/usr/x", "/code/x", "/env/x", "/input/x",
              "/proc/x", "/new/folder/x"):
        assert wrote[p] == 0, (p, wrote)
    # /var/tmp is /tmp: the two share its 16 MB (a block or two go to the tmpfs itself)
    assert 14 <= wrote["/var/tmp/x"] + wrote["/tmp/y"] <= 16, wrote
    assert 6 <= wrote["/dev/shm/x"] <= 8, wrote


SIZES = """
import json, os
st = {p: os.statvfs(p) for p in ("/tmp", "/dev/shm")}
print(json.dumps({p: s.f_blocks * s.f_frsize >> 20 for p, s in st.items()}))
"""


def test_a_tmpfs_is_never_larger_than_the_memory_limit(sandboxed):
    rep, size_mb = sandboxed(SIZES, {"memory_mb": 96, "tmp_mb": 1024, "shm_mb": 1024})
    assert rep.result.state == "ok", rep.result
    assert size_mb == {"/tmp": 96, "/dev/shm": 96}
    rep, size_mb = sandboxed(SIZES, {"memory_mb": 512, "tmp_mb": 40, "shm_mb": 30})
    assert size_mb == {"/tmp": 40, "/dev/shm": 30}


FILL_AND_WAIT = """
import os, time
MB = b"\\1" * (1 << 20)
for path in ("/tmp/a", "/dev/shm/b"):
    with open(path, "wb") as f:
        for _ in range(120):
            f.write(MB)
time.sleep(3)
print("{}")
"""


@pytest.mark.parametrize("mode", ["cgroup", "no cgroup"])
def test_what_the_tmpfs_mounts_hold_counts_as_memory(sandboxed, monkeypatch, mode):
    if mode == "cgroup" and not HAS_CGROUP:
        pytest.skip(NO_CGROUP_WHY)
    if mode == "no cgroup":
        monkeypatch.setenv("SHAREVAL_CODERUN_CGROUP", "off")
    # 240 MB of files in memory, a few MB of resident memory: over a 200 MB limit
    rep, _ = sandboxed(FILL_AND_WAIT, {"memory_mb": 200, "tmp_mb": 150, "shm_mb": 150})
    assert rep.result.state == "memory", rep.result
    assert "memory limit of 200 MB" in rep.result.message


def test_the_same_files_fit_a_larger_limit(sandboxed):
    rep, _ = sandboxed(FILL_AND_WAIT, {"memory_mb": 512, "tmp_mb": 150, "shm_mb": 150})
    assert rep.result.state == "ok", rep.result
    assert rep.result.peak_mb >= 240, rep.result.peak_mb


# RLIMIT_AS stops one segment larger than memory_mb, not several in turn: each
# is mapped, filled and let go, so that no process maps any of them in the end
SYSV = """
import ctypes, json, time
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
size, held = 80 << 20, 0
for _ in range(4):
    key = libc.shmget(0, ctypes.c_size_t(size), 0o1600)   # IPC_PRIVATE, IPC_CREAT | 0600
    addr = libc.shmat(key, None, 0)
    if key < 0 or addr in (None, ctypes.c_void_p(-1).value):
        break
    ctypes.memset(addr, 1, size)
    libc.shmdt(ctypes.c_void_p(addr))
    held += 80
time.sleep(3)
print(json.dumps({"held_mb": held}))
"""


@pytest.mark.skipif(not HAS_CGROUP, reason=NO_CGROUP_WHY)
def test_shared_memory_no_process_maps_counts_in_the_cgroup(sandboxed):
    rep, out = sandboxed(SYSV, {"memory_mb": 200})
    assert rep.result.state == "memory", (rep.result, out)


SEES = """
import json
print(json.dumps({"mountinfo": open("/proc/self/mountinfo").read(),
                  "init": open("/proc/1/cmdline").read().split("\\0")}))
"""


def test_the_sandbox_sees_no_path_of_the_host_but_its_own_workspace(sandboxed, workspace):
    rep, seen = sandboxed(SEES)
    assert rep.result.state == "ok", rep.result
    roots = []
    for line in seen["mountinfo"].splitlines():
        left, _, right = line.partition(" - ")
        fstype = right.split()[0]
        root, point = left.split()[3:5]
        if fstype not in ("tmpfs", "proc", "devpts", "devtmpfs"):
            roots.append((root, point))
    allowed = ("/usr", "/etc/", str(workspace.root) + "/")
    python = str(bwrap.python_prefix())
    for root, point in roots:
        assert root.startswith(allowed) or (point == python and root == python), (root, point)
    # bwrap's options (every host path it mounts) went through a descriptor
    init = seen["init"]
    assert "--args" in init and not any(str(workspace.root) in a for a in init), init
    assert init[init.index("--") + 1:][:2] == ["python", "main.py"], init


def test_an_input_anyone_may_read_is_still_copied_into_the_workspace(workspace):
    """Mounted from where it lies, its path (a server's private folder) would show
    in the sandbox's mountinfo."""
    import os
    import secrets
    from pathlib import Path
    outside = Path(f"/tmp/shareval-readable-input-{secrets.token_hex(4)}")
    outside.mkdir(mode=0o755)
    try:
        os.chmod(outside, 0o755)
        (outside / "items.txt").write_text("i01\n")
        os.chmod(outside / "items.txt", 0o644)
        staged = workspace.stage(outside, "digest-of-the-input")
        assert staged.is_relative_to(workspace.root / "inputs")
        assert (staged / "items.txt").read_text() == "i01\n"
        assert workspace.stage(outside, "digest-of-the-input") == staged     # made once
    finally:
        import shutil
        shutil.rmtree(outside, ignore_errors=True)


THREADS = """
import os, threading, time
def wait():
    time.sleep(5)
ts = [threading.Thread(target=wait) for _ in range(400)]
for t in ts:
    t.start()           # a thread is a task: the pids cgroup refuses past its limit
"""


@pytest.mark.skipif(not HAS_CGROUP, reason=NO_CGROUP_WHY)
def test_tasks_past_the_pids_limit_end_the_run_as_processes(sandboxed):
    rep, _ = sandboxed(THREADS, {"processes": 16})       # 4 x 16 + 64 = 128 tasks
    assert rep.result.state == "processes", rep.result


FORK_BOMB = "import os\nwhile True:\n    try: os.fork()\n    except OSError: pass\n"


@pytest.mark.skipif(not HAS_CGROUP, reason=NO_CGROUP_WHY)
def test_a_fork_bomb_stops_at_processes_when_the_namespace_cannot_be_read(sandboxed,
                                                                           monkeypatch):
    # where the worker has no right over the sandbox user's processes, /proc shows
    # it nothing of the run: the cgroup's count still stops it at the limit
    from shareval.sandbox import run
    monkeypatch.setattr(run, "_members", lambda ns: [])
    rep, _ = sandboxed(FORK_BOMB, {"processes": 16, "wall_seconds": 20})
    assert rep.result.state == "processes", rep.result
    assert rep.result.wall_seconds < 15, rep.result
