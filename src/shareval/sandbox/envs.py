"""Environments for bundles: a venv of the platform's Python with the bundle's
requirements, built once per set of requirements and shared read-only.

The build has three steps, none of which runs a participant's code with a
network or outside the sandbox:

1. the venv itself is made by the platform's Python on the host (``python -m
   venv --without-pip``: no participant input is involved);
2. ``pip download --only-binary :all:`` fetches the wheels of the requirements
   (read strictly, ``requirements.py``: names of the configured index only)
   and their dependencies, on the host with the worker's pip configuration.
   Only wheels: no source package is unpacked or built, so no package code runs
   here, and the only addresses pip contacts are the index's;
3. ``pip install --no-index --find-links /wheels`` runs **inside the
   sandbox**, with no network at all, the new venv mounted writable at
   ``/env`` and the downloaded wheels read-only.

An environment is ready when its folder exists under its final name: builds
go to a temporary folder renamed at the end, so a crash never leaves half an
environment in the cache.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import bwrap, tree
from .requirements import normal_lines
from .run import Limits, Result, run

BUILD_LIMITS = Limits(wall_seconds=900, cpu_seconds=900, memory_mb=4096, processes=64,
                      output_mb=8192, output_files=500_000, tmp_mb=1024)
FORMAT = "wheels-offline/1"        # how environments are built (part of the cache key)
# what the host's pip download may see of the worker's environment: its pip
# configuration and proxy, never the server's secrets
PASSED_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "SSL_CERT_FILE", "SSL_CERT_DIR",
              "REQUESTS_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy",
              "https_proxy", "no_proxy")


def env_key(lines: list[str]) -> str:
    h = hashlib.sha256()
    for part in (sys.version, sys.base_prefix, FORMAT, *lines):
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
               limits: Limits = BUILD_LIMITS) -> Built:
    """The environment for ``requirements`` under ``root/envs``, built if missing.

    Raises EnvError with the build log if the requirements are refused or pip
    fails."""
    t0 = time.monotonic()
    try:
        lines = normal_lines(requirements)
    except ValueError as e:
        raise EnvError("requirements.txt was refused", str(e)) from None
    key = env_key(lines)
    final = Path(root) / "envs" / key
    if (final / "pyvenv.cfg").exists():
        return Built(final, True, time.monotonic() - t0, "")
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=final.parent))
    wheels = Path(tempfile.mkdtemp(prefix=f".{key}-wheels-", dir=final.parent))
    try:
        base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
        subprocess.run([str(base), "-m", "venv", "--without-pip", "--symlinks", str(tmp)],
                       check=True, capture_output=True, timeout=120)
        log, result = "", None
        if lines:
            (tmp / "requirements.txt").write_text("\n".join(lines) + "\n")
            download(tmp / "requirements.txt", wheels, limits)
            if user is not None:
                _chown_tree(tmp, user)
            result = install(tmp, wheels, user=user, python=python, limits=limits)
            log = result.stdout + result.stderr
            if result.state != "ok":
                raise EnvError(f"installing requirements.txt failed ({result.message})", log)
        _readable_by_all(tmp)            # the server's umask (077) made it private
        os.chmod(tmp, 0o755)
        try:
            os.rename(tmp, final)
        except OSError:                   # another worker finished the same build first
            tree.remove(tmp)
        return Built(final, False, time.monotonic() - t0, log, result)
    except BaseException:
        tree.remove(tmp)                 # however deep a package's files go
        raise
    finally:
        tree.remove(wheels)


def download(requirements: Path, wheels: Path, limits: Limits) -> None:
    """The wheels of ``requirements`` and of their dependencies into ``wheels``
    (host side, wheels only: nothing is built or run)."""
    env = {k: v for k, v in os.environ.items() if k in PASSED_ENV or k.startswith("PIP_")}
    env.pop("PIP_NO_BINARY", None)
    cmd = [sys.executable, "-m", "pip", "download", "--only-binary", ":all:",
           "--no-input", "--disable-pip-version-check", "--progress-bar", "off",
           "--dest", str(wheels), "-r", str(requirements)]
    # an empty folder of its own as the working folder: a relative path in a
    # requirement (which the reading refuses anyway) would name nothing there
    with tempfile.TemporaryDirectory(prefix="shareval-pip-") as empty:
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=empty,
                               timeout=limits.wall_seconds, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise EnvError(f"downloading the requirements took longer than "
                           f"{limits.wall_seconds:g} s") from None
    if r.returncode != 0:
        raise EnvError("downloading the requirements failed (only packages with a wheel "
                       "for this platform can be installed)", _pip_errors(r.stdout + r.stderr))
    for dirpath, dirnames, filenames in os.walk(wheels):
        os.chmod(dirpath, 0o755)
        for n in filenames:
            os.chmod(os.path.join(dirpath, n), 0o644)


def _pip_errors(log: str) -> str:
    """pip's log without the lines that show the server's configuration."""
    return "\n".join(x for x in log.splitlines()
                     if not x.startswith(("Looking in ", "WARNING: Location ")))


def install(env: Path, wheels: Path, *, user, python: Path | None, limits: Limits) -> Result:
    """``pip install`` of the downloaded wheels into ``env``, in the sandbox, offline."""
    spec = bwrap.Spec(
        argv=["/env/bin/python", "/opt/pip/pip", "install", "--isolated", "--no-index",
              "--find-links", "/wheels", "--only-binary", ":all:", "--no-cache-dir",
              "--disable-pip-version-check", "--no-input", "--no-warn-script-location",
              "-r", "/env/requirements.txt"],
        mounts=[bwrap.Mount(env, "/env", writable=True), bwrap.Mount(wheels, "/wheels"),
                bwrap.Mount(pip_dir(), "/opt/pip/pip")],
        chdir="/env")
    # the new environment is watched as an output: what the wheels unpack to counts
    # against the build's output limits (a wheel can be a zip bomb)
    return run(spec, limits, user=user, python=python, output=env)


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


def _link_or_copy(src: str, dst: str) -> None:
    """A hard link of a file everyone may read (no bytes copied), else a copy."""
    try:
        if os.stat(src).st_mode & 0o004:
            os.link(src, dst)
            return
    except OSError:
        pass
    shutil.copy2(src, dst)


def staged_python(root: Path, user) -> Path | None:
    """A copy of the platform's Python prefix under the workspace that the
    sandbox user can read, when it cannot read the original (a root-owned
    pyenv under /root); None if not needed. Files are hard links where the
    file system allows (the bytes are not copied)."""
    prefix = bwrap.python_prefix()
    probe = prefix / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "os.py"
    if bwrap.reachable(probe, user):
        return None
    dest = Path(root) / "python" / hashlib.sha256(f"{prefix}{sys.version}".encode()) \
        .hexdigest()[:16]
    if (dest / ".complete").exists():
        return dest
    if not dest.parent.exists():
        dest.parent.mkdir(parents=True)
        os.chmod(dest.parent, 0o711)
    tmp = Path(tempfile.mkdtemp(prefix=".python-", dir=dest.parent))
    skip = shutil.ignore_patterns("site-packages", "test", "tests", "idlelib", "tkinter",
                                  "turtledemo", "__pycache__")
    shutil.copytree(prefix, tmp / "p", symlinks=True, ignore=skip, dirs_exist_ok=True,
                    copy_function=_link_or_copy)
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
