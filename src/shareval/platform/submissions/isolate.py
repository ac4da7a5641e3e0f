"""Validate an upload in a child process with memory, CPU and wall-time limits.

Uploads are hostile: a small archive can unpack to gigabytes, a large table can
take minutes. The web process only waits for the child's verdict (a few lines
of JSON), so its own memory stays flat whatever the file holds. The child sets
its limits on itself once the validators are imported (``RLIMIT_AS`` for the
memory validation may add, ``RLIMIT_CPU``), lowers its priority a little so
pages stay responsive on a small machine, and refuses a gzip'd tar whose members declare more than the unpacked
limit before reading any of them. This module imports neither Django nor the
tasks at import time: the child runs it as ``python -m``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
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


@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)
    total: int = 0                   # all problems, when more than listed
    warnings: list[str] = field(default_factory=list)
    limit: str = ""                  # "memory", "cpu", "time" or "busy" when one was hit
    crash: str = ""                  # an unexpected error (organizers' log only)
    max_rss_kb: int = 0              # the child's peak resident memory


def _slot(n: int) -> threading.BoundedSemaphore:
    with _slots_lock:
        return _slots.setdefault(n, threading.BoundedSemaphore(n))


def validate(task: str, path: str, reference: str | None, limits: Limits,
             catalog: tuple[str, str] | None = None, name: str | None = None) -> Verdict:
    """Run the task's validator on ``path`` in a limited child process; with
    ``catalog`` (file, label), a valid submission naming ids not in it is refused.
    ``name`` is the uploaded file's own name (``path`` is where it is stored): the
    task checks it as ``shareval validate`` checks the file's name."""
    slot = _slot(limits.slots)
    if not slot.acquire(timeout=limits.slot_wait):
        return Verdict(limit="busy")
    try:
        return _run_child(task, path, reference, limits, catalog, name)
    finally:
        slot.release()


def _run_child(task, path, reference, limits: Limits, catalog=None, name=None) -> Verdict:
    # no server secrets (database URL, secret key) for a process that reads hostile
    # files; fewer malloc arenas and BLAS threads: less address space, same speed
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SHAREVAL_") and k != "DJANGO_SETTINGS_MODULE"}
    env.update(OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", MALLOC_ARENA_MAX="2")
    job = json.dumps({"task": task, "submission": path, "reference": reference,
                      "memory_mb": limits.memory_mb, "cpu_seconds": limits.cpu_seconds,
                      "unpacked_mb": limits.unpacked_mb, "catalog": catalog, "name": name})
    try:
        r = subprocess.run([sys.executable, "-m", __name__], input=job, env=env,
                           capture_output=True, text=True, timeout=limits.wall_seconds)
    except subprocess.TimeoutExpired:           # run() has killed the child
        return Verdict(limit="time")
    lines = r.stdout.strip().splitlines()
    if lines:
        try:
            return Verdict(**json.loads(lines[-1]))
        except (ValueError, TypeError):
            pass
    if r.returncode in (-9, -24):               # SIGKILL / SIGXCPU: the CPU limit
        return Verdict(limit="cpu")
    if "MemoryError" in r.stderr or "bad_alloc" in r.stderr:    # Python or C++ (pyarrow)
        return Verdict(limit="memory")
    return Verdict(crash=f"validator exited with {r.returncode}: {r.stderr[-2000:]}")


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
    os.nice(5)


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


def _unpacked_too_large(path: str, limit: int) -> str | None:
    """For a (gzip'd) tar: a message if its members declare more than ``limit``
    bytes, or more than MAX_RATIO times the packed size once past RATIO_FLOOR
    (text compresses ~5-50x; a bomb of zeros ~1000x, caught at its first header).
    Headers are read in stream mode, so memory stays flat whatever the members hold."""
    import tarfile
    if not tarfile.is_tarfile(path):
        return None
    packed, total = os.path.getsize(path), 0
    try:
        with tarfile.open(path, mode="r|*") as tar:
            for m in tar:
                total += max(m.size, 0)
                if total > limit:
                    return (f"archive: unpacks to more than {limit // 2**20} MB "
                            f"(the server's limit)")
                if total > RATIO_FLOOR and total > MAX_RATIO * packed:
                    return (f"archive: unpacks to more than {MAX_RATIO} times its packed "
                            f"size (the server's limit for archives over "
                            f"{RATIO_FLOOR // 2**20} MB unpacked)")
    except (tarfile.TarError, OSError, EOFError):
        return None                      # the validator reports what is wrong with it
    return None


def _child(job: dict) -> dict:
    from shareval import tasks
    from shareval.formats.errors import InvalidInput
    task = tasks.get(job["task"])
    _limit_self(job["memory_mb"], job["cpu_seconds"])
    path = job["submission"]
    big = _unpacked_too_large(path, job["unpacked_mb"] * 2 ** 20)
    if big:
        return {"problems": [f"{path}: {big}"], "total": 1}
    try:
        warnings = task.validate(path, job["reference"], job.get("name"))
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


def main() -> int:
    import resource
    import traceback
    job = json.loads(sys.stdin.read())
    try:
        out = _child(job)
    except MemoryError:
        out = {"limit": "memory"}
    except Exception:                                          # noqa: BLE001
        out = {"crash": traceback.format_exc()[-4000:]}
    out["max_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
