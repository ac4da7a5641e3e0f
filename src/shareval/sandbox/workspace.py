"""One code run from start to end, without Django: folders, environment, run,
and the output collected without following anything the run wrote as a link.

Layout under the workspace root (``SHAREVAL_CODERUN_DIR``)::

    envs/<requirements hash>/       shared environments (read-only in runs)
    inputs/<digest>-<random>/       copies of the hidden inputs (made once)
    python/<hash>/                  the platform's Python, when the sandbox user
                                    cannot read the original (a pyenv under /root)
    runs/<random>/code/             the unpacked bundle (read-only in the run)
    runs/<random>/output/           the only writable folder

Everything a run mounts lies under the workspace root, never in the server's
own folders: the kernel shows the source path of every mount in the
sandbox's ``/proc/self/mountinfo``, so those paths show only this layout.

When the worker is root, the runs run as the sandbox user (``nobody`` by
default), so the root is made traversable (0711) but not listable, and each
run's folder has an unguessable name.
"""
from __future__ import annotations

import os
import secrets
import shutil
import stat
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from . import bwrap, envs, tree
from .bundle import INPUT, OUTPUT, Manifest
from .run import Limits, Result, run


@dataclass
class Collected:
    path: Path | None               # the submission file (one file, or a .tgz of several)
    notes: list[str] = field(default_factory=list)


@dataclass
class Report:
    result: Result
    env_seconds: float = 0.0
    env_cached: bool = True
    env_log: str = ""
    output: Collected | None = None


class Workspace:
    def __init__(self, root: Path, user=None, pool: bool | None = None):
        self.root = Path(root)
        self.user = user
        self.pool = user is not None and user[0] == bwrap.POOL[0] if pool is None else pool
        for d in (self.root, self.root / "runs", self.root / "envs", self.root / "inputs"):
            d.mkdir(parents=True, exist_ok=True)
            os.chmod(d, 0o711)
        self.python = envs.staged_python(self.root, user) if user else None

    def new_run(self) -> Path:
        d = self.root / "runs" / secrets.token_hex(16)
        (d / "output").mkdir(parents=True)
        os.chmod(d, 0o711)
        return d

    def run_user(self):
        """Who runs the next run: a fresh pool uid, the configured user, or None."""
        return bwrap.pool_user() if self.pool else self.user

    def stage(self, path: Path, key: str) -> Path:
        """A copy of ``path`` (file or folder) under ``inputs/``, readable by the
        sandbox user, made once per ``key`` (the content's digest)."""
        path = Path(path)
        leaf = "data" if path.is_dir() else f"data/{path.name}"
        dest = next((p for p in (self.root / "inputs").glob(f"{key}-*")
                     if (p / ".complete").exists()), None)
        if dest is not None:
            return dest / leaf
        dest = self.root / "inputs" / f"{key}-{secrets.token_hex(12)}"
        dest.mkdir()
        os.chmod(dest, 0o711)            # not left to the server's umask
        try:
            if path.is_dir():
                shutil.copytree(path, dest / "data", symlinks=True)
            else:
                (dest / "data").mkdir()
                shutil.copyfile(path, dest / leaf)
            for dirpath, dirnames, filenames in os.walk(dest / "data"):
                os.chmod(dirpath, 0o755)
                for n in filenames:
                    os.chmod(os.path.join(dirpath, n), 0o644, follow_symlinks=False)
        except BaseException:
            shutil.rmtree(dest, ignore_errors=True)
            raise
        (dest / ".complete").touch()
        return dest / leaf

    def execute(self, code: Path, manifest: Manifest, input_dir: Path, limits: Limits,
                *, env_limits: Limits | None = None, extra: list[bwrap.Mount] = ()) -> Report:
        """Build (or reuse) the environment and run the bundle in ``code``."""
        user = self.run_user()
        try:
            built = envs.ensure_env(self.root, manifest.requirements, user=user,
                                    python=self.python, limits=env_limits or envs.BUILD_LIMITS)
        except envs.EnvError as e:
            return Report(Result("env", e.message, stderr=e.log[-20000:]), env_cached=False,
                          env_log=e.log)
        run_dir = code.parent
        out = run_dir / "output"
        if user:
            os.chown(out, *user)
        os.chmod(out, 0o700)
        spec = bwrap.Spec(argv=manifest.argv(), chdir="/code",
                          mounts=[bwrap.Mount(code, "/code"),
                                  bwrap.Mount(built.path, "/env"),
                                  bwrap.Mount(input_dir, INPUT),
                                  bwrap.Mount(out, OUTPUT, writable=True), *extra],
                          env={"PATH": "/env/bin:/usr/local/bin:/usr/bin:/bin",
                               "VIRTUAL_ENV": "/env", "SHAREVAL_INPUT": INPUT,
                               "SHAREVAL_OUTPUT": OUTPUT})
        result = run(spec, limits, user=user, output=out, python=self.python)
        rep = Report(result, built.seconds, built.cached, built.log)
        if result.state == "ok":
            rep.output = collect(out, run_dir / "submission")
            if rep.output.path is None:
                result.state, result.message = "failed", "finished but wrote no output file"
        return rep

    def prepare_code(self, files) -> Path:
        """A new run folder with the bundle in ``code/``: ``files`` is {path: bytes}
        or a function that writes them into the folder it is given. The run folder
        is removed again if that fails."""
        from .bundle import write_tree
        run_dir = self.new_run()
        try:
            code = run_dir / "code"
            code.mkdir()
            files(code) if callable(files) else write_tree(files, code)
            for dirpath, dirnames, filenames in os.walk(code):
                os.chmod(dirpath, 0o755)
                for n in filenames:
                    os.chmod(os.path.join(dirpath, n), 0o644)
        except BaseException:
            self.remove(run_dir)
            raise
        return code

    @staticmethod
    def remove(run_dir: Path) -> None:
        tree.remove(run_dir)


def collect(out: Path, dest_stem: Path) -> Collected:
    """The run's output as one file: links and special files are skipped (never
    followed), noted for the team; so are sparse files. Read through file
    descriptors (``tree.walk``): no path is too long, no nesting too deep. (The
    run has ended: nothing changes the folder between the two walks.)"""
    notes, regular = [], []
    for e, fd in _files(out, notes):
        os.close(fd)
        regular.append(e.rel)
    if not regular:
        return Collected(None, notes)
    if len(regular) == 1:
        rel = regular[0]
        suffix = "".join(Path(rel).suffixes[-2:]) if rel.endswith(".tar.gz") else Path(rel).suffix
        dest = dest_stem.with_name(dest_stem.name + suffix)
    else:
        dest = dest_stem.with_name(dest_stem.name + ".tgz")
    with (open(dest, "wb") if len(regular) == 1 else tarfile.open(dest, "w:gz")) as sink:
        for e, fd in _files(out, []):
            try:
                if len(regular) == 1:
                    _copy_fd(fd, sink)
                else:
                    info = tarfile.TarInfo(e.rel)
                    info.size = os.fstat(fd).st_size
                    with os.fdopen(os.dup(fd), "rb") as f:
                        sink.addfile(info, f)
            finally:
                os.close(fd)
    return Collected(dest, notes)


def _files(out: Path, notes: list[str]):
    """(entry, open descriptor) of each regular file without holes; the rest noted."""
    for e in tree.walk(out):
        mode = e.st.st_mode
        if stat.S_ISLNK(mode):
            notes.append(f"{e.rel}: a link; ignored (links in the output are not followed)")
        elif stat.S_ISREG(mode):
            try:
                fd = tree.open_file(e)
            except OSError:
                notes.append(f"{e.rel}: cannot be read; ignored")
                continue
            if _fd_has_holes(fd, e.st.st_size):
                os.close(fd)
                notes.append(f"{e.rel}: a sparse file (it has holes); ignored")
            else:
                yield e, fd
        elif not stat.S_ISDIR(mode):
            notes.append(f"{e.rel}: not a regular file; ignored")


def _copy_fd(fd: int, g) -> None:
    os.lseek(fd, 0, os.SEEK_SET)
    while block := os.read(fd, 1 << 20):
        g.write(block)


def _fd_has_holes(fd: int, size: int) -> bool:
    """Whether the file has holes (written with seeks or ``truncate``): its zeros
    are never read, so a run cannot make the server read gigabytes of them for a
    few blocks of disk. Leaves the offset at the start."""
    try:
        return size > 0 and os.lseek(fd, 0, os.SEEK_HOLE) < size
    except OSError:
        return False
    finally:
        os.lseek(fd, 0, os.SEEK_SET)
