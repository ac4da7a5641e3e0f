"""One control group per run, so that the kernel counts what a run holds.

In a memory cgroup everything a run keeps in memory is charged to it: resident
memory, files in its tmpfs mounts (``/tmp``, ``/dev/shm``), System V and POSIX
shared memory, and the kernel memory of its files and sockets. The kernel
refuses (or OOM-kills inside the group) beyond ``memory_mb``, so nothing can be
hidden where the watchdog does not look. A pids cgroup caps the processes at
the moment of ``fork``, not at the next watchdog poll.

Where: under this process's own cgroup (or ``$SHAREVAL_CODERUN_CGROUP``, a
folder of the memory hierarchy delegated to the worker), in the memory and pids
hierarchies of cgroup v1, or in the unified hierarchy of v2 when ``memory`` is
enabled in that folder's ``cgroup.subtree_control``; ``off`` uses none. Creating a child needs
write access there: root on v1, a delegated subtree on v2. Without it,
:func:`create` returns None and the run falls back to sized mounts and the
watchdog's sums (``run.py``).
"""
from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

PREFIX = "shareval-run-"


def _mounts() -> dict[str, Path]:
    """{controller: mount point} of the cgroup hierarchies ('' for the v2 one)."""
    out: dict[str, Path] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        left, _, right = line.partition(" - ")
        fstype, _, options = (right.split() + ["", "", ""])[:3]
        point = Path(left.split()[4])
        if fstype == "cgroup2":
            out.setdefault("", point)
        elif fstype == "cgroup":
            for opt in options.split(","):
                if opt in ("memory", "pids"):
                    out.setdefault(opt, point)
    return out


def _own_paths() -> dict[str, str]:
    """{controller: path of this process's cgroup} ('' for v2)."""
    out: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(",") if controllers else [""]:
            out[c] = path
    return out


def parents() -> dict[str, Path] | None:
    """Where runs' cgroups go: {'memory': dir, 'pids': dir or absent, 'version': ...}
    as paths, or None when no memory cgroup can be used here."""
    forced = os.environ.get("SHAREVAL_CODERUN_CGROUP")
    if forced == "off":
        return None
    mounts, own = _mounts(), _own_paths()
    if "memory" in mounts and "memory" in own:             # v1
        mem = Path(forced) if forced else mounts["memory"] / own["memory"].lstrip("/")
        out = {"memory": mem}
        if "pids" in mounts and "pids" in own:
            out["pids"] = mounts["pids"] / own["pids"].lstrip("/")
        return out if (mem / "memory.limit_in_bytes").exists() else None
    if "" in mounts and "" in own:                          # v2
        base = Path(forced) if forced else mounts[""] / own[""].lstrip("/")
        try:
            enabled = (base / "cgroup.subtree_control").read_text().split()
        except OSError:
            return None
        if "memory" not in enabled:
            return None
        out = {"memory": base}
        if "pids" in enabled:
            out["pids"] = base
        return out
    return None


@dataclass
class RunCgroup:
    """A run's cgroups: ``memory`` (and ``pids``, the same folder on v2)."""
    memory: Path
    pids: Path | None
    v2: bool

    def procs_files(self) -> list[str]:
        """The files a process writes its pid to, to join (before it forks)."""
        dirs = {self.memory, *([self.pids] if self.pids else [])}
        return [str(d / "cgroup.procs") for d in sorted(dirs)]

    def _read(self, folder: Path | None, name: str) -> str:
        try:
            return (folder / name).read_text() if folder else ""
        except OSError:
            return ""

    def _stat(self, folder: Path | None, name: str) -> dict[str, int]:
        out = {}
        for line in self._read(folder, name).splitlines():
            k, _, v = line.partition(" ")
            if v.strip().isdigit():
                out[k] = int(v)
        return out

    def held_bytes(self) -> int:
        """What the run holds and cannot give back: anonymous memory plus tmpfs
        and shared memory. The page cache of files it read is left out (the
        kernel reclaims it first), and so is kernel memory, which the kernel's
        own limit counts."""
        st = self._stat(self.memory, "memory.stat")
        return st.get("anon" if self.v2 else "rss", 0) + st.get("shmem", 0)

    def peak_bytes(self) -> int:
        """The kernel's peak of everything charged (page cache included)."""
        v = self._read(self.memory, "memory.peak" if self.v2 else
                       "memory.max_usage_in_bytes").strip()
        return int(v) if v.isdigit() else 0

    def oom_kills(self) -> int:
        name = "memory.events" if self.v2 else "memory.oom_control"
        return self._stat(self.memory, name).get("oom_kill", 0)

    def processes(self) -> int:
        """Processes in the run's cgroup (bwrap's outer process included); read
        from the cgroup, so no right over the sandbox user's processes is needed."""
        folder = self.pids or self.memory
        return len(self._read(folder, "cgroup.procs").split())

    def pids_refused(self) -> int:
        """How many forks the pids limit refused."""
        return self._stat(self.pids, "pids.events").get("max", 0)

    def kill(self) -> None:
        """SIGKILL every process in the cgroup."""
        import signal
        for d in {self.memory, *([self.pids] if self.pids else [])}:
            for pid in self._read(d, "cgroup.procs").split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (OSError, ValueError):
                    pass

    def remove(self, wait: float = 2.0) -> bool:
        """Remove the folders (once the run's processes are gone); False if one stays."""
        deadline, ok = time.monotonic() + wait, True
        for d in {self.memory, *([self.pids] if self.pids else [])}:
            while True:
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        ok = False
                        break
                    time.sleep(0.02)
        return ok


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def create(memory_bytes: int, processes: int) -> RunCgroup | None:
    """A fresh cgroup pair for one run with these limits, or None (no cgroup here)."""
    where = parents()
    if where is None:
        return None
    _sweep(where)
    name = f"{PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
    v2 = "memory.limit_in_bytes" not in os.listdir(where["memory"])
    made: list[Path] = []
    try:
        mem = where["memory"] / name
        mem.mkdir()
        made.append(mem)
        if v2:
            _write(mem / "memory.max", str(memory_bytes))
            if (mem / "memory.swap.max").exists():
                _write(mem / "memory.swap.max", "0")
            pids = mem if "pids" in where else None
        else:
            _write(mem / "memory.limit_in_bytes", str(memory_bytes))
            if (mem / "memory.memsw.limit_in_bytes").exists():
                _write(mem / "memory.memsw.limit_in_bytes", str(memory_bytes))
            pids = where["pids"] / name if "pids" in where else None
            if pids is not None:
                pids.mkdir()
                made.append(pids)
        if pids is not None:
            _write(pids / "pids.max", str(processes))
        return RunCgroup(mem, pids, v2)
    except OSError:
        for d in reversed(made):
            try:
                d.rmdir()
            except OSError:
                pass
        return None


def _sweep(where: dict[str, Path]) -> None:
    """Remove the run cgroups of a worker that is gone (its pid is in the name),
    killing what still runs in them first: nothing outlives its worker."""
    for parent in set(where.values()):
        try:
            names = [n for n in os.listdir(parent) if n.startswith(PREFIX)]
        except OSError:
            continue
        for n in names:
            pid = n[len(PREFIX):].split("-", 1)[0]
            if pid.isdigit() and int(pid) != os.getpid() and not os.path.exists(f"/proc/{pid}"):
                stale = RunCgroup(parent / n, None, False)
                stale.kill()
                stale.remove(wait=0.5)
