"""Source bundles: the ``shareval-system.yaml`` manifest, packing a folder, and
unpacking an upload with the same hostile-archive checks as every submission.

Manifest::

    command: python -m mysystem {input} {output}   # required; run without a shell
    requirements: requirements.txt                  # optional (default: that file if present;
                                                    # names of the index only: requirements.py)
    limits:                                         # optional requests, capped by the dataset
      wall_seconds: 600
      memory_mb: 2048

``{input}`` becomes the read-only input folder and ``{output}`` the empty
folder the system writes its submission to (one file: that file is the
submission; several: they are packed as a .tgz).
"""
from __future__ import annotations

import io
import re
import shlex
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from shareval.formats.archive import (NESTED, Limits as ArchiveLimits, Members, iter_tgz,
                                      normalized)
from shareval.formats.errors import Problems

from .requirements import parse as parse_requirements

MANIFEST = "shareval-system.yaml"
INPUT, OUTPUT = "/input", "/output"
LIMIT_KEYS = ("wall_seconds", "cpu_seconds", "memory_mb", "processes", "output_mb", "tmp_mb",
              "shm_mb", "output_files")


@dataclass
class Manifest:
    command: list[str]
    requirements: str = ""
    limits: dict = field(default_factory=dict)

    def argv(self, input_dir: str = INPUT, output_dir: str = OUTPUT) -> list[str]:
        return [a.replace("{input}", input_dir).replace("{output}", output_dir)
                for a in self.command]


def read_manifest(files: dict[str, bytes], problems: Problems, name: str = MANIFEST) -> \
        Manifest | None:
    """The manifest of an unpacked bundle ({path: bytes}); problems if it is unusable."""
    if name not in files:
        problems.fatal(name, None, "manifest", f"no {MANIFEST} at the top of the bundle")
        return None
    try:
        doc = yaml.safe_load(files[name].decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        problems.fatal(name, None, "yaml", str(e).splitlines()[0])
        return None
    if not isinstance(doc, dict):
        problems.fatal(name, 1, "manifest", "expected a mapping")
        return None
    cmd = doc.get("command")
    argv: list[str] = []
    if isinstance(cmd, str):
        try:
            argv = shlex.split(cmd)
        except ValueError as e:
            problems.add(name, None, "command", f"cannot be split into words ({e})")
    elif isinstance(cmd, list) and all(isinstance(a, str) for a in cmd):
        argv = list(cmd)
    else:
        problems.add(name, None, "command", "required: a string such as "
                                            "'python -m mysystem {input} {output}'")
    if argv and "{output}" not in " ".join(argv):
        problems.add(name, None, "command", "must name {output}, the folder to write to")
    req_name = doc.get("requirements")
    requirements = ""
    if req_name is not None:
        if not isinstance(req_name, str) or req_name not in files:
            problems.add(name, None, "requirements", f"{req_name!r} is not a file of the bundle")
        else:
            requirements = files[req_name].decode("utf-8", "replace")
    elif "requirements.txt" in files:
        requirements = files["requirements.txt"].decode("utf-8", "replace")
    if requirements:
        parse_requirements(requirements, req_name or "requirements.txt", problems)
    limits = doc.get("limits") or {}
    if not isinstance(limits, dict):
        problems.add(name, None, "limits", "expected a mapping")
        limits = {}
    for k, v in limits.items():
        if k not in LIMIT_KEYS:
            problems.add(name, None, f"limits.{k}", f"unknown limit; known: {', '.join(LIMIT_KEYS)}")
        elif not isinstance(v, (int, float)) or v <= 0:
            problems.add(name, None, f"limits.{k}", "a positive number is required")
    if problems:
        return None
    return Manifest(argv, requirements, {k: v for k, v in limits.items() if k in LIMIT_KEYS})


def unpack(path: Path, problems: Problems, limits: ArchiveLimits) -> dict[str, bytes]:
    """{member: bytes} of a .tgz or .zip bundle, checked like every upload: no links,
    devices, absolute or parent paths, nested archives; size and count limits."""
    path = Path(path)
    if zipfile.is_zipfile(path):
        return dict(_iter_zip(path, problems, limits))
    files = dict(iter_tgz(path, problems, limits))
    if len(files) > 0 and not problems:
        return _strip_top(files)
    return files


def _iter_zip(path: Path, problems: Problems, limits: ArchiveLimits):
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        problems.fatal(path, None, "archive", f"not a readable .zip archive ({e})")
        return
    out = {}
    with zf:
        infos = zf.infolist()
        if len(infos) > limits.max_files:
            problems.fatal(path, None, "archive", f"more than {limits.max_files} files (limit)")
            return
        # the central directory's sizes bound what reading yields: a bomb is refused
        # before anything is inflated
        if sum(i.file_size for i in infos) > limits.max_bytes:
            problems.fatal(path, None, "archive", f"unpacks to more than {limits.max_bytes} "
                                                  f"bytes (limit)")
            return
        members, total = Members(), 0
        for info in infos:
            name, where = info.filename, f"{path}!{info.filename}"
            why = _zip_member_problem(info, members, limits)
            if why:
                problems.add(where, None, "member", why)
                continue
            if info.is_dir():
                continue
            try:
                with zf.open(info) as f:
                    data = f.read(limits.max_member_bytes + 1)
            except (zipfile.BadZipFile, OSError, EOFError) as e:
                problems.fatal(path, None, "archive", f"corrupt archive ({e})")
                return
            total += len(data)
            if len(data) > limits.max_member_bytes:
                problems.add(where, None, "member",
                             f"larger than {limits.max_member_bytes} bytes (limit)")
                return
            if total > limits.max_bytes:
                problems.fatal(path, None, "archive", f"unpacks to more than "
                                                      f"{limits.max_bytes} bytes (limit)")
                return
            out[normalized(name)] = data
    if not problems:
        yield from _strip_top(out).items()


def _zip_member_problem(info: zipfile.ZipInfo, members: Members,
                        limits: ArchiveLimits) -> str | None:
    """Why a .zip member is refused (the checks every .tgz member gets), or None."""
    name = info.filename
    norm = normalized(name)
    if name.startswith("/") or norm.startswith("../") or norm == ".." or "\\" in name or \
            re.match(r"^[A-Za-z]:", name):
        return "absolute or parent-relative path is not allowed"
    mode = (info.external_attr >> 16) & 0o170000
    if mode == 0o120000:
        return "links are not allowed"
    if info.is_dir():
        return members.clash(norm, folder=True) if norm != "." else None
    if mode not in (0, 0o100000):
        return "only regular files are allowed"
    if NESTED.search(name) and not limits.nested_ok:
        return "nested archives are not allowed"
    return members.clash(norm)


def _strip_top(files: dict[str, bytes]) -> dict[str, bytes]:
    """A bundle packed as one top folder (``mysystem/shareval-system.yaml``) is
    read as if packed from inside it."""
    if MANIFEST in files:
        return files
    tops = {n.split("/", 1)[0] for n in files}
    if len(tops) == 1 and all("/" in n for n in files):
        top = tops.pop() + "/"
        return {n[len(top):]: d for n, d in files.items()}
    return files


def pack(folder: Path) -> bytes:
    """A .tgz of ``folder``'s regular files (links and special files refused)."""
    folder = Path(folder)
    if not (folder / MANIFEST).is_file():
        raise ValueError(f"{folder}: no {MANIFEST} (see docs/code-submissions.md)")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for p in sorted(folder.rglob("*")):
            rel = p.relative_to(folder).as_posix()
            if any(part in ("__pycache__", ".git") for part in p.relative_to(folder).parts):
                continue
            if p.is_symlink():
                raise ValueError(f"{p}: links are not allowed in a bundle")
            if p.is_file():
                tar.add(p, arcname=rel, recursive=False)
    return buf.getvalue()


def write_tree(files: dict[str, bytes], dest: Path) -> None:
    """Write an unpacked bundle under ``dest`` (names already checked by unpack)."""
    dest = Path(dest)
    for name, data in files.items():
        target = (dest / name).resolve()
        if not target.is_relative_to(dest.resolve()):
            raise ValueError(f"{name} leaves the bundle folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
