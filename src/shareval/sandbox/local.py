"""``shareval run-code``: a bundle run on this machine exactly as the server
runs it (TIRA's ``tira-run``): the same archive and manifest checks, the same
environment build, sandbox, limits and output collection.

The workspace (environments, input copies, run folders) is
``$SHAREVAL_CODERUN_DIR``, else ``/var/lib/shareval-sandbox`` as root (the
server's default there), else ``~/.cache/shareval/coderuns``.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from shareval.formats.archive import Limits as ArchiveLimits
from shareval.formats.errors import InvalidInput, Problem, Problems

from . import bwrap
from .bundle import MANIFEST, pack, read_manifest, unpack
from .run import Limits, Result, run_limits
from .workspace import Report, Workspace

UNPACKED_MB = int(os.environ.get("SHAREVAL_MAX_UNPACKED_MB", "1024"))   # as the server


def default_root() -> Path:
    if os.environ.get("SHAREVAL_CODERUN_DIR"):
        return Path(os.environ["SHAREVAL_CODERUN_DIR"])
    if os.geteuid() == 0:
        return Path("/var/lib/shareval-sandbox")
    return Path.home() / ".cache" / "shareval" / "coderuns"


@dataclass
class LocalRun:
    report: Report
    limits: Limits
    output_files: list[str] = field(default_factory=list)   # copied to the output folder
    checked: object = None      # what ``check`` said of the collected output


def parse_limits(text: str) -> dict:
    """``wall_seconds=60,memory_mb=512`` as a dict; ValueError naming the bad part."""
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = part.partition("=")
        if not eq or key not in Limits.__dataclass_fields__:
            raise ValueError(f"--limits: {part!r}: expected NAME=NUMBER with NAME one of "
                             f"{', '.join(Limits.__dataclass_fields__)}")
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"--limits: {part!r}: {value!r} is not a number") from None
        if number <= 0:
            raise ValueError(f"--limits: {part!r}: must be positive")
        out[key] = number
    return out


def read_bundle(path: Path) -> tuple[dict[str, bytes], object]:
    """The bundle's files and manifest, checked as an upload is; InvalidInput if
    it is refused (every problem listed)."""
    path = Path(path)
    problems = Problems()
    if not path.exists():
        problems.fatal(path, None, "bundle", "not found")
        raise InvalidInput(problems.items)
    with tempfile.TemporaryDirectory() as tmp:
        archive = path
        if path.is_dir():
            if not (path / MANIFEST).is_file():
                problems.fatal(path, None, "bundle", f"no {MANIFEST} at the top of the folder "
                                                     f"(see docs/code-submissions.md)")
                raise InvalidInput(problems.items)
            try:
                data = pack(path)
            except ValueError as e:
                problems.fatal(path, None, "bundle", str(e).removeprefix(f"{path}: "))
                raise InvalidInput(problems.items) from None
            archive = Path(tmp) / "bundle.tgz"
            archive.write_bytes(data)
        files = unpack(archive, problems, ArchiveLimits(max_bytes=UNPACKED_MB * 2 ** 20))
        manifest = read_manifest(files, problems) if not problems else None
    if problems or manifest is None:
        raise InvalidInput([dataclasses.replace(p, file=p.file.replace(str(archive), str(path)))
                            for p in problems.items], problems.total)
    return files, manifest


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        st = p.lstat()
        h.update(f"{p.relative_to(folder)}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()


def run_bundle(bundle: Path, input_dir: Path, output_dir: Path, limits: dict | None = None,
               root: Path | None = None, check=None) -> LocalRun:
    """Check, build and run ``bundle`` on ``input_dir``; its output files are
    copied to ``output_dir``, and ``check`` (if given) is called with the
    collected output, the file the server would score (one file, or a .tgz of
    several). Raises InvalidInput for a refused bundle."""
    files, manifest = read_bundle(bundle)
    input_dir, output_dir = Path(input_dir), Path(output_dir)
    if not input_dir.is_dir():
        raise InvalidInput([Problem(str(input_dir), None, "input", "not a folder")])
    lim = Limits.from_dict(limits or {}, run_limits(None, None, manifest.limits))
    why = bwrap.probe(bwrap.sandbox_user(os.environ.get("SHAREVAL_CODERUN_USER", "pool")))
    if why:
        return LocalRun(Report(Result("error", why), env_cached=False), lim)
    ws = Workspace(root or default_root(), bwrap.sandbox_user(
        os.environ.get("SHAREVAL_CODERUN_USER", "pool")))
    code = ws.prepare_code(files)
    try:
        staged = ws.stage(input_dir, "local-" + _digest(input_dir)[:32])
        rep = ws.execute(code, manifest, staged, lim)
        out = LocalRun(rep, lim)
        if rep.result.state == "ok" and rep.output and rep.output.path:
            out.output_files = _copy_out(code.parent / "output", output_dir)
            if check is not None:
                out.checked = check(rep.output.path)
        return out
    finally:
        Workspace.remove(code.parent)


def _copy_out(src: Path, dest: Path) -> list[str]:
    """The run's regular files (no links, no sparse files: as the server collects)."""
    from .workspace import _copy_fd, _files
    dest.mkdir(parents=True, exist_ok=True)
    copied = []
    for e, fd in _files(src, []):
        try:
            target = dest / e.rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "wb") as g:
                _copy_fd(fd, g)
            copied.append(e.rel)
        finally:
            os.close(fd)
    return copied
