"""Environments for bundles: a venv of the platform's Python with the bundle's
requirements, built once per requirements hash and shared read-only.

The build has two steps. The venv itself is made by the platform's Python on
the host (``python -m venv --without-pip``: no participant input is involved).
``pip install`` then runs **inside the sandbox**, with the new venv mounted
writable at ``/env``, the platform's own pip mounted read-only, and by default
``--only-binary :all:`` so that no package's build script runs. The build
sandbox shares the host's network only when the configured package index is
reached over http(s) (bubblewrap cannot restrict a network namespace to one
host: the build then sees the host's network, but no participant code runs
in it; wheels are only unpacked). A file:// index or find-links folder is
mounted read-only instead, and the build has no network at all.

An environment is ready when its folder exists under its final name: builds
go to a temporary folder renamed at the end, so a crash never leaves half an
environment in the cache.
"""
from __future__ import annotations

import functools
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import bwrap
from .run import Limits, Result, run

BUILD_LIMITS = Limits(wall_seconds=900, cpu_seconds=900, memory_mb=4096, processes=64,
                      output_mb=8192, tmp_mb=1024)


@dataclass
class Index:
    """Where pip finds packages, taken from the worker's own pip configuration."""
    pip_args: list[str]
    local_paths: list[str]
    network: bool

    @classmethod
    def from_host(cls, only_binary: bool = True, extra_args: list[str] | None = None) -> "Index":
        env = os.environ
        cfg = _pip_config()
        urls = []
        for key in ("index-url", "extra-index-url", "find-links"):
            for src in (env.get("PIP_" + key.replace("-", "_").upper(), ""),
                        cfg.get(key, "")):
                urls += src.split()
        index_set = bool(env.get("PIP_INDEX_URL") or cfg.get("index-url"))
        no_index = bool(env.get("PIP_NO_INDEX") or cfg.get("no-index"))
        local = [u.removeprefix("file://") for u in urls
                 if u.startswith("file://") or u.startswith("/")]
        for key in ("constraint",):
            for src in (env.get("PIP_CONSTRAINT", ""), cfg.get(key, "")):
                local += [p for p in src.split() if p.startswith("/")]
        network = not no_index and (not index_set or any(u.startswith(("http://", "https://"))
                                                         for u in urls))
        args = ["--only-binary", ":all:"] if only_binary else []
        return cls(args + list(extra_args or []), sorted({str(Path(p).parent) if
                                                          Path(p).is_file() else p
                                                          for p in local}), network)


@functools.lru_cache(maxsize=1)
def _pip_config() -> dict[str, str]:
    """pip's own configuration (read once per process: it costs a pip start-up)."""
    try:
        r = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True,
                           text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return {}
    out = {}
    for line in r.stdout.splitlines():
        key, _, value = line.partition("=")
        name = key.split(".", 1)[-1]
        if key.startswith(("global.", "install.")):
            out[name] = value.strip().strip("'\"")
    return out


def env_key(requirements: str, index: Index) -> str:
    h = hashlib.sha256()
    for part in (sys.version, sys.base_prefix, " ".join(index.pip_args),
                 requirements.strip()):
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:32]


def pip_dir() -> Path:
    import pip
    return Path(pip.__file__).resolve().parent


@dataclass
class Built:
    path: Path
    cached: bool
    seconds: float
    log: str
    result: Result | None = None


def ensure_env(root: Path, requirements: str, *, user=None, python: Path | None = None,
               index: Index | None = None, limits: Limits = BUILD_LIMITS) -> Built:
    """The environment for ``requirements`` under ``root/envs``, built if missing.

    Raises EnvError with the build log if pip fails."""
    t0 = time.monotonic()
    index = index or Index.from_host()
    key = env_key(requirements, index)
    final = Path(root) / "envs" / key
    if (final / "pyvenv.cfg").exists():
        return Built(final, True, time.monotonic() - t0, "")
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=final.parent))
    try:
        base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
        subprocess.run([str(base), "-m", "venv", "--without-pip", "--symlinks", str(tmp)],
                       check=True, capture_output=True, timeout=120)
        log, result = "", None
        if requirements.strip():
            (tmp / "requirements.txt").write_text(requirements)
            if user is not None:
                _chown_tree(tmp, user)
            spec = bwrap.Spec(
                argv=["/env/bin/python", "/opt/pip/pip", "install", "--no-cache-dir",
                      "--disable-pip-version-check", "--no-input", "--no-warn-script-location",
                      *index.pip_args, "-r", "/env/requirements.txt"],
                mounts=[bwrap.Mount(tmp, "/env", writable=True),
                        bwrap.Mount(pip_dir(), "/opt/pip/pip")],
                env={k: v for k, v in os.environ.items()
                     if k.startswith("PIP_") and k != "PIP_REQUIRE_VIRTUALENV"},
                network=index.network, extra_ro=index.local_paths, chdir="/env")
            result = run(spec, limits, user=user, python=python, output=None)
            log = result.stdout + result.stderr
            if result.state != "ok":
                raise EnvError(f"installing requirements.txt failed ({result.message})", log)
        _readable_by_all(tmp)            # the server's umask (077) made it private
        os.chmod(tmp, 0o755)
        try:
            os.rename(tmp, final)
        except OSError:                   # another worker finished the same build first
            shutil.rmtree(tmp, ignore_errors=True)
        return Built(final, False, time.monotonic() - t0, log, result)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


class EnvError(Exception):
    def __init__(self, message: str, log: str = ""):
        super().__init__(message)
        self.message, self.log = message, log


def _readable_by_all(path: Path) -> None:
    """Folders 0755, files readable by all (executable by all if by the owner): every
    run's own uid reads a shared environment."""
    for dirpath, dirnames, filenames in os.walk(path):
        os.chmod(dirpath, 0o755)
        for n in filenames:
            p = os.path.join(dirpath, n)
            if not os.path.islink(p):
                mode = os.stat(p).st_mode
                os.chmod(p, mode | 0o444 | (0o111 if mode & 0o100 else 0))


def _chown_tree(path: Path, user) -> None:
    for dirpath, dirnames, filenames in os.walk(path):
        os.chown(dirpath, *user)
        for n in filenames:
            os.chown(os.path.join(dirpath, n), *user, follow_symlinks=False)


def _python_cache(root: Path, user) -> Path:
    """Where copies of the Python runtime go: one folder per machine and user
    (``$TMPDIR/shareval-python-<uid>``, ~100 MB, shared by every workspace), if
    it is a real folder of this user writable by no one else and the sandbox
    user can pass through it; else the workspace. (``$TMPDIR`` from the
    environment: the server points Python's own temporary folder into its
    private data folder.)"""
    shared = Path(os.environ.get("TMPDIR") or "/tmp") / f"shareval-python-{os.getuid()}"
    try:
        if not shared.exists():
            shared.mkdir()
            os.chmod(shared, 0o755)      # not left to the umask
        st = os.lstat(shared)
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and \
                not st.st_mode & 0o022 and bwrap.reachable(shared, user, enter=True):
            return shared
    except OSError:
        pass
    return root / "python"


def staged_python(root: Path, user) -> Path | None:
    """A copy of the platform's Python prefix the sandbox user can read, when it
    cannot read the original (a root-owned pyenv under /root); None if not needed."""
    prefix = bwrap.python_prefix()
    probe = prefix / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "os.py"
    if bwrap.reachable(probe, user):
        return None
    dest = _python_cache(Path(root), user) / hashlib.sha256(f"{prefix}{sys.version}".encode()) \
        .hexdigest()[:16]
    if (dest / ".complete").exists():
        return dest
    if not dest.parent.exists():
        dest.parent.mkdir(parents=True)
        os.chmod(dest.parent, 0o711)
    tmp = Path(tempfile.mkdtemp(prefix=".python-", dir=dest.parent))
    skip = shutil.ignore_patterns("site-packages", "test", "tests", "idlelib", "tkinter",
                                  "turtledemo", "__pycache__")
    shutil.copytree(prefix, tmp / "p", symlinks=True, ignore=skip, dirs_exist_ok=True)
    for dirpath, dirnames, filenames in os.walk(tmp):
        os.chmod(dirpath, 0o755)
    os.chmod(tmp, 0o755)
    (tmp / "p" / ".complete").touch()
    try:
        os.rename(tmp / "p", dest)
    except OSError:
        pass
    shutil.rmtree(tmp, ignore_errors=True)
    return dest
