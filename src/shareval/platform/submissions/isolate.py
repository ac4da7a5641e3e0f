"""Read participants' files in a child process with memory, CPU and wall-time limits.

Uploads are hostile: a small archive can unpack to gigabytes, a large table can
take minutes. The web process (or worker) only waits for the child's verdict (a
few lines of JSON), so its own memory stays flat whatever the file holds. The
child sets its limits on itself once its job's modules are imported
(``RLIMIT_AS`` for the memory the job may add, ``RLIMIT_CPU``), runs at a lower
CPU priority (``Limits.nice``, from its first line: its imports cost CPU too)
so pages stay responsive on a small machine, and refuses an
archive whose members declare more than the unpacked limit before reading any
of them. Jobs (:data:`JOBS`): validating an upload, and for code submissions
unpacking a bundle and validating and scoring a test run's output
(``coderuns/isolated.py``). This module imports neither Django nor the tasks at
import time: the child runs it as ``python -m``.
"""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

_slots_lock = threading.Lock()
_slots: dict[int, threading.BoundedSemaphore] = {}


@dataclass
class Limits:
    memory_mb: int = 3072            # address space validation may add after start-up
    cpu_seconds: int = 300
    wall_seconds: float = 600
    unpacked_mb: int = 1024          # a .tgz's members, added up (archive bombs)
    slots: int = 2                   # validations at once in this process
    slot_wait: float = 120           # seconds to wait for a free slot
    nice: int = 5                    # the child's CPU priority, at least (0-19)


@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)
    total: int = 0                   # all problems, when more than listed
    warnings: list[str] = field(default_factory=list)
    limit: str = ""                  # "memory", "cpu", "time" or "busy" when one was hit
    crash: str = ""                  # an unexpected error (organizers' log only)
    max_rss_kb: int = 0              # the child's peak resident memory
    nice: int = 0                    # the child's CPU priority (nice value) when it ended
    result: dict = field(default_factory=dict)     # what a job other than validation returns


# job kind -> "module:function" run in the child: function(job, limit) -> Verdict fields,
# calling limit() once its imports are done
JOBS = {"validate": f"{__name__}:validate_job",
        "bundle": "shareval.platform.coderuns.isolated:bundle_job",
        "score": "shareval.platform.coderuns.isolated:score_job"}


def _slot(n: int) -> threading.BoundedSemaphore:
    with _slots_lock:
        return _slots.setdefault(n, threading.BoundedSemaphore(n))


def validate(task: str, path: str, reference: str | None, limits: Limits,
             catalog: tuple[str, str] | None = None, name: str | None = None) -> Verdict:
    """Run the task's validator on ``path`` in a limited child process; with
    ``catalog`` (file, label), a valid submission naming ids not in it is refused.
    ``name`` is the uploaded file's own name (``path`` is where it is stored): the
    task checks it as ``shareval validate`` checks the file's name."""
    return run({"kind": "validate", "task": task, "submission": path, "reference": reference,
                "catalog": catalog, "name": name}, limits)


def run(job: dict, limits: Limits, env: dict[str, str] | None = None) -> Verdict:
    """Run ``job`` (``{"kind": one of JOBS, ...its arguments}``) in a limited child
    process; ``env``: variables the job needs beyond the server's non-secret ones."""
    slot = _slot(limits.slots)
    if not slot.acquire(timeout=limits.slot_wait):
        return Verdict(limit="busy")
    try:
        return _run_child(job, limits, env or {})
    finally:
        slot.release()


def _run_child(job: dict, limits: Limits, extra_env: dict[str, str]) -> Verdict:
    # no server secrets (database URL, secret key) for a process that reads hostile
    # files; fewer malloc arenas and BLAS threads: less address space, same speed
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SHAREVAL_") and k != "DJANGO_SETTINGS_MODULE"}
    # pyarrow's default pool (mimalloc) keeps what it freed: the system allocator
    # gives it back, so a reader's passes do not add up (measured in bench/uploads.py)
    env.update(OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", MALLOC_ARENA_MAX="2",
               ARROW_DEFAULT_MEMORY_POOL="system", **extra_env)
    text = json.dumps({**job, "memory_mb": limits.memory_mb, "cpu_seconds": limits.cpu_seconds,
                       "unpacked_mb": limits.unpacked_mb, "nice": limits.nice})
    stdout, stderr, code, limit = supervise([sys.executable, "-m", __name__], text, env,
                                            limits.wall_seconds)
    if limit:
        return Verdict(limit=limit)
    lines = stdout.strip().splitlines()
    if lines:
        try:
            return Verdict(**json.loads(lines[-1]))
        except (ValueError, TypeError):
            pass
    if code in (-9, -24):                       # SIGKILL / SIGXCPU: the CPU limit
        return Verdict(limit="cpu")
    if "MemoryError" in stderr or "bad_alloc" in stderr:      # Python or C++ (pyarrow)
        return Verdict(limit="memory")
    return Verdict(crash=f"the {job['kind']} child exited with {code}: {stderr[-2000:]}")


POLL_SECONDS = 0.25
STUCK_SECONDS = 2.0             # this long at its address-space limit: the child is stuck
NEAR_LIMIT = 4 * 2 ** 20        # closer than this to the limit: no room for a new arena


def supervise(command: list[str], text: str, env: dict[str, str],
              wall_seconds: float) -> tuple[str, str, int | None, str]:
    """Run ``command`` with ``text`` on its stdin: (stdout, stderr, exit code, limit hit).
    The limit is "time" past ``wall_seconds``, or "memory" for a child that stays at its
    address-space limit: CPython 3.11 can spin for ever there (a MemoryError unwinding
    into a ``with`` needs a new int, and failing to make one starts the unwinding
    again: python/cpython#132508), burning its CPU limit; the child is killed."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, text=True)
    start = time.monotonic()
    stuck_since, pending = None, text
    while True:
        left = start + wall_seconds - time.monotonic()
        try:
            out, err = proc.communicate(pending, timeout=max(0.01, min(POLL_SECONDS, left)))
            return out, err, proc.returncode, ""
        except subprocess.TimeoutExpired:
            pending = None          # kept by communicate(): it may not be given twice
        now = time.monotonic()
        if not _at_address_limit(proc.pid):
            stuck_since = None
        elif stuck_since is None:
            stuck_since = now
        limit = ("time" if now - start >= wall_seconds else
                 "memory" if stuck_since is not None and now - stuck_since >= STUCK_SECONDS
                 else "")
        if limit:
            proc.kill()
            out, err = proc.communicate()
            return out, err, proc.returncode, limit


def _at_address_limit(pid: int) -> bool:
    """Whether process ``pid`` has less than NEAR_LIMIT address space left."""
    try:
        with open(f"/proc/{pid}/limits") as f:
            soft = next(line.split()[3] for line in f if line.startswith("Max address space"))
        if soft == "unlimited":
            return False
        with open(f"/proc/{pid}/status") as f:
            size = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError, IndexError):
        return False                # ended meanwhile, or no /proc
    return int(soft) - size < NEAR_LIMIT


# ---------------------------------------------------------------------------
# The child

def _address_space() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


def _limit_self(memory_mb: int, cpu_seconds: int) -> None:
    """Called once the validators are imported: numba and pyarrow reserve far more
    address space than they use, so the limit is what validation may add."""
    import resource
    mem = _address_space() + memory_mb * 2 ** 20
    _lower(resource.RLIMIT_AS, mem, mem)
    _lower(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 5)


def lower_priority(nice: int) -> int:
    """Run this thread, and the threads and processes it starts from now on, at a
    nice value of at least ``nice`` (never raised: that needs a privilege); the
    value now. On Linux the nice value is per thread: call it before starting any."""
    now = os.getpriority(os.PRIO_PROCESS, 0)
    want = max(0, min(19, nice))
    if want > now:
        os.setpriority(os.PRIO_PROCESS, 0, want)
    return os.getpriority(os.PRIO_PROCESS, 0)


def _lower(which: int, soft: int, hard: int) -> None:
    """Set a limit, never above the hard limit the server itself runs under: raising
    one needs a privilege (CAP_SYS_RESOURCE) the server may lack, and every
    validation then crashed (under systemd's LimitCPU, or mutmut's CPU limit per
    mutant, which turned every mutant reaching a real validation into a kill)."""
    import resource
    inherited = resource.getrlimit(which)[1]
    if inherited != resource.RLIM_INFINITY:
        hard = min(hard, inherited)
        soft = min(soft, hard)
    resource.setrlimit(which, (soft, hard))


MAX_RATIO, RATIO_FLOOR = 200, 256 * 2 ** 20


def unpacked_too_large(path: str, limit: int) -> str | None:
    """For a (gzip'd) tar or a zip: a message if its members declare more than
    ``limit`` bytes, or more than MAX_RATIO times the packed size once past
    RATIO_FLOOR (text compresses ~5-50x; a bomb of zeros ~1000x, caught at its
    first header). Only headers are read, so memory stays flat whatever the
    members hold (a member's bytes never exceed its declared size: both readers
    stop there)."""
    packed, total = os.path.getsize(path), 0
    for size in _declared_sizes(path):
        total += max(size, 0)
        if total > limit:
            return f"archive: unpacks to more than {limit // 2**20} MB (the server's limit)"
        if total > RATIO_FLOOR and total > MAX_RATIO * packed:
            return (f"archive: unpacks to more than {MAX_RATIO} times its packed "
                    f"size (the server's limit for archives over "
                    f"{RATIO_FLOOR // 2**20} MB unpacked)")
    return None


def _declared_sizes(path: str):
    """The sizes a tar's member headers or a zip's central directory declare; nothing
    for another file or a broken archive (its reader reports what is wrong)."""
    import tarfile
    import zipfile
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                yield from (i.file_size for i in z.infolist())
        elif tarfile.is_tarfile(path):
            with tarfile.open(path, mode="r|*") as tar:
                yield from (m.size for m in tar)
    except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError):
        return


def validate_job(job: dict, limit) -> dict:
    from shareval import tasks
    from shareval.formats.errors import InvalidInput
    task = tasks.get(job["task"])
    limit()
    path = job["submission"]
    big = unpacked_too_large(path, job["unpacked_mb"] * 2 ** 20)
    if big:
        return {"problems": [f"{path}: {big}"], "total": 1}
    try:
        from shareval.platform.submissions import lean
        warnings = lean.validate(task, path, job["reference"], job.get("name"))
        if job.get("catalog"):
            from shareval.tasks.catalogs import unknown_ids_problem
            problem = unknown_ids_problem(task.name, path, *job["catalog"])
            if problem:
                return {"problems": [problem], "total": 1}
        return {"warnings": [str(w) for w in warnings]}
    except InvalidInput as e:
        # the listing (with its "... and N more" line) is built once, in formats.errors
        return {"problems": e.lines(), "total": e.total}
    except MemoryError:
        return {"limit": "memory"}


def _peak_rss_kb() -> int:
    """This process's peak resident memory (VmHWM). Not ru_maxrss: execve keeps it, so
    the child reported at least what the server held when it started the child."""
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def main() -> int:
    import resource
    import traceback
    job = json.loads(sys.stdin.read())
    lower_priority(job.get("nice", 5))
    try:
        module, name = JOBS[job["kind"]].split(":")
        function = getattr(importlib.import_module(module), name)
        out = function(job, lambda: _limit_self(job["memory_mb"], job["cpu_seconds"]))
    except MemoryError:
        out = {"limit": "memory"}
    except Exception:                                          # noqa: BLE001
        out = {"crash": traceback.format_exc()[-4000:]}
    out["max_rss_kb"] = _peak_rss_kb() or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out["nice"] = os.getpriority(os.PRIO_PROCESS, 0)
    print(json.dumps(out, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
