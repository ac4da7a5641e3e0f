"""Run one sandboxed command with limits, watch it, and say how it ended.

Limits, each with the state a run ends in when it hits it:

========== ======================================================= ==========
limit      how it is enforced                                      state
========== ======================================================= ==========
wall time  a watchdog kills ``bwrap``; its namespace dies with it  ``time``
CPU time   ``RLIMIT_CPU`` per process (SIGXCPU, then SIGKILL)      ``cpu``
memory     the run's memory cgroup (``cgroup.py``) counts all it    ``memory``
           holds, tmpfs and shared memory included, and the kernel
           stops it there; ``RLIMIT_AS`` per process; the watchdog
           kills the run when what it holds (without a cgroup:
           resident memory plus the files in ``/tmp`` and
           ``/dev/shm``) adds up to more
processes  the watchdog kills the run when its PID namespace holds  ``processes``
           that many; the pids cgroup (4x + 64 tasks, threads
           included) and ``RLIMIT_NPROC`` are backstops
output     ``RLIMIT_FSIZE`` per file (SIGXFSZ), and the watchdog    ``output``
           kills the run when the output folder's apparent size
           (with files it removed but holds open) passes
           ``output_mb``, it holds more than ``output_files``
           entries (files, folders, links), or nests folders
           deeper than ``tree.MAX_DEPTH``
========== ======================================================= ==========

The writable places are the output folder and two tmpfs mounts of fixed size,
``/tmp`` (``tmp_mb``, also ``/var/tmp``) and ``/dev/shm`` (``shm_mb``); each is
at most ``memory_mb``, and what they hold counts as memory (above).

Other states: ``ok`` (exit 0), ``failed`` (another exit status), ``error``
(the sandbox itself could not start). The watchdog polls every
``POLL`` seconds; after the run it kills whatever is left in the namespace (the
kernel already has, since the namespace's init died) and checks that nothing is.

Resource use: wall time from the clock; CPU time and the largest single
process's peak resident memory from ``wait4``; the peak of what the run held
(the cgroup's anonymous and shared memory, or the processes' summed resident
memory plus the tmpfs files) from the watchdog's samples (the larger is kept).
"""
from __future__ import annotations

import ctypes
import functools
import json
import os
import resource
import signal
import stat
import subprocess
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from . import bwrap, cgroup, tree

POLL = 0.1
TAIL = 64 * 1024               # bytes of stdout/stderr kept


@dataclass
class Limits:
    wall_seconds: float = 600
    cpu_seconds: int = 600
    memory_mb: int = 4096
    processes: int = 64
    output_mb: int = 1024
    tmp_mb: int = 256
    shm_mb: int = 64
    output_files: int = 10_000
    open_files: int = 1024

    @classmethod
    def from_dict(cls, d: dict | None, base: "Limits | None" = None) -> "Limits":
        out = Limits(**asdict(base)) if base else Limits()
        for k, v in (d or {}).items():
            if k in out.__dataclass_fields__ and isinstance(v, (int, float)) and v > 0:
                setattr(out, k, type(getattr(out, k))(v))
        return out

    def capped(self, ceiling: "Limits") -> "Limits":
        """Each limit at most the ceiling's (what a participant may request)."""
        return Limits(**{k: min(v, getattr(ceiling, k)) for k, v in asdict(self).items()})


# a run's limits unless the dataset says otherwise, and the most a manifest may
# ask for (the server's coderuns and `shareval run-code` alike)
DEFAULT_LIMITS = Limits()
DEFAULT_MAX = Limits(wall_seconds=3600, cpu_seconds=3600, memory_mb=8192, processes=256,
                     output_mb=4096, tmp_mb=1024, shm_mb=1024, output_files=100_000)


def run_limits(defaults: dict | None, ceiling: dict | None, requested: dict | None) -> Limits:
    """The defaults (over :data:`DEFAULT_LIMITS`), raised or lowered by a
    manifest's requests up to the ceiling (over :data:`DEFAULT_MAX`)."""
    base = Limits.from_dict(defaults, DEFAULT_LIMITS)
    return Limits.from_dict(requested, base).capped(Limits.from_dict(ceiling, DEFAULT_MAX))


@dataclass
class Result:
    state: str
    message: str
    exit_code: int | None = None
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0
    peak_mb: float = 0.0
    output_bytes: int = 0       # apparent size of what the output folder holds
    output_entries: int = 0
    stdout: str = ""
    stderr: str = ""
    survivors: int = 0          # processes found in the namespace after the run (must be 0)

    def to_dict(self) -> dict:
        return asdict(self)


MESSAGES = {
    "ok": "finished",
    "failed": "exited with status {code}",
    "time": "stopped: ran longer than the wall-time limit of {l.wall_seconds:g} s",
    "cpu": "stopped: used more than the CPU-time limit of {l.cpu_seconds} s",
    "memory": "stopped: needed more than the memory limit of {l.memory_mb} MB",
    "processes": "stopped: started more than the limit of {l.processes} processes",
    "output": "stopped: wrote more than the output limit of {l.output_mb} MB "
              "or {l.output_files} files and folders (or folders nested more than "
              f"{tree.MAX_DEPTH} deep, or a path of more than {tree.MAX_PATH} bytes)",
}


def _own_processes() -> int:
    uid, n = os.getuid(), 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                n += os.stat(f"/proc/{name}").st_uid == uid
            except OSError:
                pass
    return n


PR_SET_PDEATHSIG = 1


@functools.lru_cache(maxsize=1)
def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _backstop(limits: Limits) -> int:
    """Tasks (threads included) a run may have at once, whatever the watchdog sees."""
    return 4 * limits.processes + 64


def _limit_child(limits: Limits, user: tuple[int, int] | None, procs_files: list[str] = ()):
    # RLIMIT_NPROC counts every process of the user: for the worker's own user
    # (no user given) that includes the server's, so the backstop goes on top
    base = 0 if user is not None else _own_processes()
    me = b"0"           # cgroup.procs: "0" moves the writing process itself
    _libc()             # loaded before the fork (no dlopen in the child)

    def pre():
        os.setsid()
        # bwrap dies with the thread that started it (and the sandbox with bwrap:
        # --die-with-parent), so a worker killed mid-run leaves no run behind
        _libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        for f in procs_files:       # before bwrap forks: its children are born inside
            fd = os.open(f, os.O_WRONLY)
            try:
                os.write(fd, me)
            finally:
                os.close(fd)
        mem = limits.memory_mb * 2 ** 20
        for res, v in ((resource.RLIMIT_AS, mem),
                       (resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 2)),
                       # the watchdog stops the run at ``processes`` in its namespace;
                       # the rlimit counts all processes of the sandbox user (every
                       # concurrent run), so it is only the backstop, well above
                       # a few over the pids cgroup's, which counts this run alone
                       (resource.RLIMIT_NPROC, base + _backstop(limits) + 8),
                       (resource.RLIMIT_FSIZE, limits.output_mb * 2 ** 20),
                       (resource.RLIMIT_CORE, 0),
                       (resource.RLIMIT_NOFILE, limits.open_files)):
            resource.setrlimit(res, v if isinstance(v, tuple) else (v, v))
        if user is not None:
            os.setgroups([])
            os.setgid(user[1])
            os.setuid(user[0])
    return pre


def _pid_ns(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def _members(ns: str) -> list[int]:
    """Live (not zombie) processes of PID namespace ``ns``."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.readlink(f"/proc/{name}/ns/pid") == ns:
                    with open(f"/proc/{name}/stat") as f:
                        if f.read().rpartition(")")[2].split()[0] != "Z":
                            out.append(int(name))
            except (OSError, IndexError):
                pass
    return out


def _rss_mb(pids: list[int]) -> float:
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1])
        except (OSError, ValueError, IndexError):
            pass
    return total * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


TICK = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and of its children it has waited for."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        return sum(int(x) for x in fields[11:15]) / TICK
    except (OSError, ValueError, IndexError):
        return 0.0


def output_usage(root: Path, max_entries: int | None = None) -> tuple[int, int]:
    """(apparent bytes, entries) under ``root``: every file counts its size as
    ``ls`` shows it (a sparse file's holes too, a folder its own size), every
    file, folder and link counts one entry; links are never followed. Stops
    counting past ``max_entries``."""
    u = tree.usage(root, max_entries)
    return u.bytes, u.entries


def _unlinked_bytes(pids: list[int], dev: int) -> int:
    """Apparent sizes of the files on the output's file system that the run's
    processes hold open or mapped after removing their names: they take disk
    space that no listing shows (a run could fill the disk with them)."""
    seen, total = set(), 0
    for p in pids:
        for kind in ("fd", "map_files"):
            try:
                names = os.listdir(f"/proc/{p}/{kind}")
            except OSError:
                continue
            for n in names:
                try:
                    st = os.stat(f"/proc/{p}/{kind}/{n}")
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) and st.st_nlink == 0 and st.st_dev == dev and \
                        st.st_ino not in seen:
                    seen.add(st.st_ino)
                    total += st.st_size
    return total


def _tmpfs_bytes(child: int) -> int:
    """Bytes (and inodes, at 1 KiB each: the kernel keeps them in memory) held
    by the sandbox's tmpfs mounts, seen through its init's root."""
    total = 0
    for where in ("tmp", "dev/shm"):
        try:
            st = os.statvfs(f"/proc/{child}/root/{where}")
        except OSError:
            continue
        total += (st.f_blocks - st.f_bfree) * st.f_frsize + (st.f_files - st.f_ffree) * 1024
    return total


class _Watch(threading.Thread):
    def __init__(self, proc, limits: Limits, output: Path | None, info_r: int,
                 cg: cgroup.RunCgroup | None):
        super().__init__(daemon=True)
        self.proc, self.limits, self.output, self.info_r = proc, limits, output, info_r
        self.cg = cg
        self.reason, self.peak_mb, self.ns = "", 0.0, None
        self.cpu: dict[int, float] = {}     # last CPU time seen per process
        self.done = threading.Event()
        self.start_time = time.monotonic()

    def _child_pid(self) -> int | None:
        try:
            data = b""
            while not data.rstrip().endswith(b"}"):
                block = os.read(self.info_r, 4096)
                if not block:
                    break
                data += block
            return int(json.loads(data)["child-pid"])
        except (OSError, ValueError, KeyError):
            return None

    def held_mb(self, child: int, pids: list[int]) -> float:
        """What the run holds now: the cgroup's count, else resident memory plus
        the tmpfs files."""
        if self.cg is not None:
            return max(self.cg.held_bytes() / 2 ** 20, _rss_mb(pids))
        return _rss_mb(pids) + _tmpfs_bytes(child) / 2 ** 20

    def run(self):
        child = self._child_pid()
        self.ns = _pid_ns(child) if child else None
        lim = self.limits
        while not self.done.wait(POLL):
            # the cgroup's count first: one file read, where scanning /proc under a
            # fork bomb can take longer than the wall-time limit, and the namespace
            # may be unreadable (another user's processes)
            if self.cg is not None and (self.cg.processes() - 1 >= lim.processes
                                        or self.cg.pids_refused()):
                self.kill("processes")
                return
            if time.monotonic() - self.start_time > lim.wall_seconds:
                self.kill("time")
                return
            pids: list[int] = []
            if self.ns:
                pids = _members(self.ns)
                self.peak_mb = max(self.peak_mb, self.held_mb(child, pids))
                for p in pids:
                    self.cpu[p] = _cpu(p)
                if sum(self.cpu.values()) > lim.cpu_seconds + 2:
                    self.kill("cpu")
                    return
                if len(pids) >= lim.processes:
                    self.kill("processes")
                    return
                if self.peak_mb > lim.memory_mb:
                    self.kill("memory")
                    return
            if self.cg is not None:
                self.peak_mb = max(self.peak_mb, self.cg.held_bytes() / 2 ** 20)
                if self.peak_mb > lim.memory_mb or self.cg.oom_kills():
                    self.kill("memory")
                    return
            if self.output is not None and _over_output(self.output, lim, self.unlinked(pids)):
                self.kill("output")
                return

    def unlinked(self, pids: list[int]) -> int:
        try:
            return _unlinked_bytes(pids, os.stat(self.output).st_dev) if pids else 0
        except OSError:
            return 0

    def kill(self, reason: str):
        self.reason = self.reason or reason
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass


def _over_output(output: Path, lim: Limits, unlinked: int = 0) -> bool:
    u = tree.usage(output, lim.output_files)
    return u.bytes + unlinked > lim.output_mb * 2 ** 20 or u.entries > lim.output_files or \
        u.too_deep


def run(spec: bwrap.Spec, limits: Limits, *, user: tuple[int, int] | None = None,
        output: Path | None = None, python: Path | None = None) -> Result:
    """Run ``spec`` in the sandbox under ``limits``; ``output``: the host folder
    mounted writable (watched for size). Never raises for what the command does."""
    spec.tmp_mb = min(limits.tmp_mb, limits.memory_mb)
    spec.shm_mb = min(limits.shm_mb, limits.memory_mb)
    cg = cgroup.create(limits.memory_mb * 2 ** 20, _backstop(limits))
    try:
        return _run(spec, limits, user, output, python, cg)
    finally:
        if cg is not None:
            cg.remove()


def _run(spec, limits, user, output, python, cg) -> Result:
    info_r, info_w = os.pipe()
    argv, args_fd = bwrap.hidden_args(bwrap.command(spec, python=python, info_fd=info_w))
    t0 = time.monotonic()
    try:
        # bwrap itself gets no environment: it is the namespace's init, and a
        # sandboxed process could read its /proc/1/environ (the worker's secrets)
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, pass_fds=(info_w, args_fd), env={},
                                preexec_fn=_limit_child(limits, user,
                                                        cg.procs_files() if cg else []))
    except OSError as e:
        os.close(info_r)
        return Result("error", f"the sandbox could not start: {e}")
    finally:
        os.close(info_w)
        os.close(args_fd)
    watch = _Watch(proc, limits, output, info_r, cg)
    watch.start()
    out, err = {}, {}
    readers = [threading.Thread(target=_tail, args=(proc.stdout, out), daemon=True),
               threading.Thread(target=_tail, args=(proc.stderr, err), daemon=True)]
    for r in readers:
        r.start()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    watch.done.set()
    watch.join(5)
    os.close(info_r)
    for r in readers:
        r.join(5)
    survivors = _reap(watch.ns)
    stdout, stderr = out.get("text", ""), err.get("text", "")
    code = proc.returncode
    oom = cg is not None and cg.oom_kills() > 0
    state = watch.reason or ("memory" if oom else _state(code, stderr, output, limits, usage))
    if state == "failed" and cg is not None and cg.pids_refused():
        state = "processes"             # it failed after the kernel refused it a process
    if oom:             # the kernel stopped it between two samples: its peak is the one
        watch.peak_mb = max(watch.peak_mb, cg.peak_bytes() / 2 ** 20)
    cpu = max(usage.ru_utime + usage.ru_stime, sum(watch.cpu.values()))
    size, entries = output_usage(output) if output is not None else (0, 0)
    res = Result(state, "", code, wall, cpu, max(watch.peak_mb, usage.ru_maxrss / 1024),
                 size, entries, stdout, stderr, survivors)
    if state == "error":
        res.message = "the sandbox could not start: " + stderr.strip()[-500:]
    else:
        res.message = MESSAGES[state].format(code=code, l=limits)
    return res


def _tail(stream, box: dict) -> None:
    buf = bytearray()
    for block in iter(lambda: stream.read(65536), b""):
        buf += block
        if len(buf) > 2 * TAIL:
            del buf[:-TAIL]
    text = bytes(buf[-TAIL:]).decode("utf-8", "replace")
    box["text"] = text


def _state(code: int, stderr: str, output, limits: Limits, usage) -> str:
    # the watchdog samples: a run that ends between two samples is measured here,
    # whatever its exit code (a deep tree made in 0.1 s then exit 0 is over)
    if code == 0:
        return "output" if output is not None and _over_output(output, limits) else "ok"
    if stderr.startswith("bwrap:") and code == 1:
        return "error"
    # a signal shows as -N when it killed the process we started, as 128 + N when
    # it killed the command under bubblewrap (bwrap exits with 128 + the signal):
    # a busy loop reaches RLIMIT_CPU's SIGXCPU before the watchdog's cpu + 2 s
    if code in (-signal.SIGXCPU, 128 + signal.SIGXCPU) or \
            usage.ru_utime + usage.ru_stime >= limits.cpu_seconds:
        return "cpu"
    if code in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ) or "File too large" in stderr:
        return "output"
    if output is not None and _over_output(output, limits):
        return "output"
    if "MemoryError" in stderr or "Cannot allocate memory" in stderr or "bad_alloc" in stderr:
        return "memory"
    if "Resource temporarily unavailable" in stderr or "BlockingIOError" in stderr or \
            "can't start new thread" in stderr:
        return "processes"
    return "failed"


def _reap(ns: str | None, grace: float = 2.0) -> int:
    """Wait up to ``grace`` seconds for the namespace to empty (its init died, so
    the kernel is killing the rest), then kill what is left; returns how many
    processes outlived the grace period (0 unless the sandbox is broken)."""
    if not ns:
        return 0
    deadline = time.monotonic() + grace
    while _members(ns) and time.monotonic() < deadline:
        time.sleep(0.02)
    left = _members(ns)
    for p in left:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    return len(left)
