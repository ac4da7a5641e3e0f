"""Files of an import: a zip, a folder or one file, as ``{relative name: bytes}``.

An uploaded zip is hostile: members are read through a size cap on the bytes actually
decompressed (not the sizes the headers claim), absolute or ``..`` names are refused,
and nothing is extracted to disk. Problems name a member as ``archive.zip/member``.
"""
from __future__ import annotations

import posixpath
import re
import zipfile
from pathlib import Path

from .errors import Problems

MAX_BYTES = 512 * 1024 ** 2          # decompressed, all members together
MAX_FILES = 20_000
CHUNK = 1024 * 1024


def read_files(path: str | Path, problems: Problems, suffixes: tuple[str, ...]
               ) -> dict[str, bytes] | None:
    """The files whose names end in one of ``suffixes`` (lower case compared)."""
    path = Path(path)
    if path.is_dir():
        return _folder(path, problems, suffixes)
    if not path.exists():
        problems.fatal(path, None, "file", "does not exist")
        return None
    if zipfile.is_zipfile(path):
        return _zip(path, problems, suffixes)
    return {path.name: path.read_bytes()}


def _wanted(name: str, suffixes) -> bool:
    return name.lower().endswith(suffixes)


def _folder(path: Path, problems: Problems, suffixes) -> dict[str, bytes] | None:
    files = sorted(p for p in path.rglob("*") if p.is_file() and _wanted(p.name, suffixes))
    if len(files) > MAX_FILES:
        problems.fatal(path, None, "file", f"more than {MAX_FILES} files")
        return None
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in files}


def _zip(path: Path, problems: Problems, suffixes) -> dict[str, bytes] | None:
    out: dict[str, bytes] = {}
    total = 0
    try:
        with zipfile.ZipFile(path) as z:
            infos = [i for i in z.infolist() if not i.is_dir() and _wanted(i.filename, suffixes)]
            if len(infos) > MAX_FILES:
                problems.fatal(path, None, "file", f"more than {MAX_FILES} members")
                return None
            for info in infos:
                name = posixpath.normpath(info.filename)
                if name.startswith(("/", "../")) or name == ".." or re.match(r"^[A-Za-z]:", name):
                    problems.add(f"{path}/{info.filename}", None, "file",
                                 "member name leaves the archive")
                    continue
                data = bytearray()
                with z.open(info) as f:
                    while chunk := f.read(CHUNK):
                        data += chunk
                        if total + len(data) > MAX_BYTES:
                            problems.fatal(path, None, "file", f"more than {MAX_BYTES} bytes "
                                                               f"once decompressed")
                            return None
                total += len(data)
                out[name] = bytes(data)
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        problems.fatal(path, None, "file", f"not a readable zip archive ({e})")
        return None
    return out


def member_path(root: str | Path, name: str) -> str:
    """How problems name a file of an import: the member path inside a zip or folder."""
    root = Path(root)
    return str(root) if root.name == name else f"{root}/{name}"


def write_zip(dest: Path, files: dict[str, bytes | str]) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data.encode("utf-8") if isinstance(data, str) else data)
    return dest


SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def file_names(ids: list[str], suffix: str) -> list[str]:
    """A distinct, file-system-safe name per document id (``pub|ds`` -> ``pub_ds``)."""
    out, seen = [], set()
    for doc_id in ids:
        base = SAFE.sub("_", doc_id).strip("._") or "document"
        name, n = base + suffix, 1
        while name.lower() in seen:
            n += 1
            name = f"{base}-{n}{suffix}"
        seen.add(name.lower())
        out.append(name)
    return out


def document_id(stem: str, expected: dict[str, str] | None) -> str:
    """The document id a file stands for: its stem, or the expected id whose safe file
    name the stem is (``pub_ds`` for ``pub|ds``)."""
    if expected is None or stem in expected:
        return stem
    for doc_id in expected:
        if SAFE.sub("_", doc_id).strip("._") == stem:
            return doc_id
    return stem
