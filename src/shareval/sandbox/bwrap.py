"""The bubblewrap command line for one sandboxed process, and whether it can run here.

What the sandboxed process sees (``command``):

- a fresh root (tmpfs, read-only once built) holding only: ``/usr`` read-only
  (with the merged-usr links ``/bin``, ``/lib``, ``/lib64``, ``/sbin``), a
  handful of harmless ``/etc`` files, the platform's Python prefix read-only,
  and the mounts the caller names (code and input read-only, one writable
  output folder);
- a fresh ``/proc`` of its own PID namespace, a minimal read-only ``/dev``, and
  two tmpfs of fixed size, the only writable places besides the output:
  ``/tmp`` (``/var/tmp`` links to it) and ``/dev/shm``;
- bwrap's own options passed through a file descriptor (``--args``): the
  sandbox's init, whose ``/proc/1/cmdline`` it can read, shows no host path;
- new user, PID, network, IPC, UTS and cgroup namespaces (``--unshare-all``):
  no network interface but its own loopback, no other process visible;
- ``--die-with-parent``: killing the watching ``bwrap`` kills the namespace's
  init, and with it every process of the namespace (the kernel's rule);
- ``--new-session`` (no terminal injection), no capabilities (``--cap-drop
  ALL``), no further user namespaces (``--disable-userns``);
- a scrubbed environment (``--clearenv``): only PATH, HOME, LANG and the names
  the caller sets; nothing of the server's variables (database URL, secret key).

When the worker runs as root, the caller drops to an unprivileged user before
``bwrap`` starts (``run.py``): inside a user namespace uid 0 would still be uid
0 on the host's files. Every source path must then be reachable by that user,
which ``reachable`` checks.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime", "/etc/nsswitch.conf",
             "/etc/alternatives")
SANDBOX_UID = 1000


@dataclass(frozen=True)
class Mount:
    source: Path
    dest: str
    writable: bool = False


@dataclass
class Spec:
    """One sandboxed command: what it sees and what it runs. The only writable
    places are the writable mounts and two tmpfs of fixed size: ``/tmp`` (also
    ``/var/tmp``) and ``/dev/shm``; everything else is read-only."""
    argv: list[str]
    mounts: list[Mount] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    chdir: str = "/"
    tmp_mb: int = 256
    shm_mb: int = 64
    python_mount: bool = True       # the platform's Python prefix (not for the probe)


def python_prefix() -> Path:
    """The prefix of the Python the platform runs on (venvs are built from it)."""
    return Path(sys.base_prefix).resolve()


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def command(spec: Spec, python: Path | None = None, info_fd: int | None = None) -> list[str]:
    """The full argv: ``bwrap`` options, then ``--`` and ``spec.argv``."""
    exe = bwrap_path() or "bwrap"
    argv = [exe, "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session",
            "--cap-drop", "ALL", "--disable-userns",
            "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
            "--hostname", "sandbox",
            "--ro-bind", "/usr", "/usr"]
    for link in ("bin", "lib", "lib64", "sbin"):
        p = Path("/" + link)
        if p.is_symlink():
            argv += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            argv += ["--ro-bind", str(p), str(p)]
    for f in ETC_FILES:
        argv += ["--ro-bind-try", f, f]
    # /dev is read-only but for its own sized /dev/shm (devices stay writable:
    # a read-only mount does not stop writes to a device node)
    argv += ["--proc", "/proc", "--dev", "/dev",
             "--size", str(spec.shm_mb * 2 ** 20), "--tmpfs", "/dev/shm",
             "--remount-ro", "/dev",
             "--size", str(spec.tmp_mb * 2 ** 20), "--tmpfs", "/tmp",
             "--symlink", "/tmp", "/var/tmp"]
    prefix = python or python_prefix()
    if spec.python_mount and not str(prefix).startswith("/usr/"):
        argv += ["--ro-bind", str(prefix), str(python_prefix())]
    for m in spec.mounts:
        argv += ["--bind" if m.writable else "--ro-bind", str(m.source), m.dest]
    # the root (a tmpfs bwrap makes, of no size) last: nothing more can be written there
    argv += ["--remount-ro", "/", "--chdir", spec.chdir, "--clearenv"]
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
           "TMPDIR": "/tmp", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1",
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           **spec.env}
    for k, v in env.items():
        argv += ["--setenv", k, v]
    if info_fd is not None:
        argv += ["--info-fd", str(info_fd)]
    return argv + ["--", *spec.argv]


def hidden_args(argv: list[str]) -> tuple[list[str], int]:
    """``argv`` with its options passed through a file descriptor (``--args``), so
    that the sandbox's init process, whose command line the sandbox can read in
    ``/proc/1/cmdline``, shows ``bwrap --args N -- COMMAND`` and no host path.
    Returns the short argv and the descriptor (the caller passes it on and
    closes it)."""
    cut = argv.index("--")
    fd = os.memfd_create("bwrap-args", 0)
    os.write(fd, b"".join(a.encode() + b"\0" for a in argv[1:cut]))
    os.lseek(fd, 0, os.SEEK_SET)
    return [argv[0], "--args", str(fd), *argv[cut:]], fd


# ---------------------------------------------------------------------------
# Who runs it, and can it run here

POOL = (1_000_000, 2_000_000)     # uids/gids of "pool": one unused pair per run


def sandbox_user(configured: str | int | None = "pool") -> tuple[int, int] | None:
    """The (uid, gid) ``bwrap`` runs as: the configured user when this process is
    root, else None (it runs as this process's own user). ``pool`` (the
    default) stands for a fresh uid per run (:func:`pool_user`); the pair
    returned here is the pool's first, a stand-in for permission checks, since
    no file is owned by any pool uid."""
    if os.geteuid() != 0:
        return None
    if configured in (None, "pool"):
        return POOL[0], POOL[0]
    import pwd
    try:
        pw = pwd.getpwuid(int(configured)) if str(configured).isdigit() \
            else pwd.getpwnam(str(configured))
    except (KeyError, ValueError):
        raise RuntimeError(f"sandbox user {configured!r} does not exist") from None
    if pw.pw_uid == 0:
        raise RuntimeError("the sandbox user must not be root")
    return pw.pw_uid, pw.pw_gid


def pool_user() -> tuple[int, int]:
    """A uid (= gid) of the pool for one run: no two concurrent runs share one,
    so per-user limits (RLIMIT_NPROC) and file ownership never mix runs."""
    import secrets
    uid = POOL[0] + 1 + secrets.randbelow(POOL[1] - POOL[0] - 1)
    return uid, uid


def reachable(path: Path, user: tuple[int, int] | None, enter: bool = False) -> bool:
    """Whether ``user`` (None: this process's user) can reach ``path`` through
    its parents (execute permission on each) and read it (``enter``: a folder
    it can pass through, not necessarily list)."""
    if user is None:
        return os.access(path, os.X_OK if enter else os.R_OK)
    uid, gid = user
    p = Path(path).resolve()
    for i, part in enumerate([*reversed(p.parents), p]):
        try:
            st = part.stat()
        except OSError:
            return False
        need = stat.S_IXOTH if part != p or enter else stat.S_IROTH
        if st.st_uid == uid:
            need <<= 6
        elif st.st_gid == gid:
            need <<= 3
        if not st.st_mode & need:
            return False
    return True


def probe(user: tuple[int, int] | None, timeout: float = 10) -> str:
    """'' if bubblewrap can create its namespaces here, else why not (a sentence)."""
    if bwrap_path() is None:
        return ("bubblewrap (bwrap) is not installed on this server: code submissions "
                "are refused (install the Debian package bubblewrap)")
    spec = Spec(argv=["/bin/sh", "-c", "exit 0"], tmp_mb=1, shm_mb=1, python_mount=False)
    try:
        argv, fd = hidden_args(command(spec))
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env={},
                               pass_fds=(fd,), preexec_fn=_drop(user) if user else None)
        finally:
            os.close(fd)
    except (OSError, subprocess.SubprocessError) as e:
        return f"bubblewrap could not start ({e}): code submissions are refused"
    if r.returncode != 0:
        return ("bubblewrap cannot create its namespaces on this server "
                f"({r.stderr.strip()[:300] or 'exit ' + str(r.returncode)}): code submissions "
                f"are refused; code is never run outside the sandbox")
    return ""


def _drop(user: tuple[int, int]):
    uid, gid = user

    def pre():
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    return pre


def platform_paths() -> list[str]:
    """Paths of the running server that a sandbox must never see (tests check them)."""
    return [sysconfig.get_paths()["purelib"], str(Path(__file__).resolve().parents[1])]
