"""Hostile-upload-safe reading of ``.tgz`` submissions.

Nothing is extracted with ``tarfile.extractall``: each member is checked and
its bytes are read through a counting stream, so an archive cannot write
outside the returned mapping, smuggle links or devices, hide nested archives,
or exhaust memory with a decompression bomb (the limit applies to the bytes
actually decompressed, not to what the headers claim), nor name one path twice
or as both a file and a folder (:class:`Members`), which no folder on disk can
hold.
"""
from __future__ import annotations

import posixpath
import re
import tarfile
from zlib import error as zlib_error
from dataclasses import dataclass
from pathlib import Path

from .errors import Problems

# archives inside archives (pip's local-archive names too: a bundle cannot bring a package)
NESTED = re.compile(r"\.(tgz|tar|gz|bz2|xz|zip|7z|rar|zst|whl|egg|tbz|txz|tlz|lz|lzma)$",
                    re.IGNORECASE)


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 4 * 1024 ** 3        # unpacked, in total
    max_files: int = 20_000
    max_member_bytes: int = 512 * 1024 ** 2
    # a competition archive carries submitted bundles (.tgz, .zip) as files
    nested_ok: bool = False


@dataclass
class Stored:
    """How many bytes of the stored submission (a .tgz's packed bytes, a folder's
    files) were read before the file just yielded: readers whose fixed costs pay off
    only past a size compare them with that size, which is what the upload weighs."""
    read: int = 0


class Members:
    """The member paths of an archive read so far. A new member is refused when
    no folder on disk could hold it beside them: the same path twice (``a/./b``
    and ``a/b`` are one path), or one path as a file and as a folder (``a`` and
    ``a/b``; a folder entry ``a/`` and a file ``a``)."""

    def __init__(self):
        self.files: set[str] = set()
        self.folders: set[str] = set()

    def clash(self, norm: str, folder: bool = False) -> str | None:
        """Why ``norm`` (a normalized member path) cannot be added, or None (added)."""
        parents, head = [], posixpath.dirname(norm)
        while head:
            parents.append(head)
            head = posixpath.dirname(head)
        taken = next((p for p in parents if p in self.files), None)
        if taken is not None:
            return f"{taken} is a file in the archive, so it cannot also be a folder"
        if norm in self.files:
            return ("is a file in the archive, so it cannot also be a folder" if folder
                    else "appears twice in the archive")
        if not folder and norm in self.folders:
            return "is a folder in the archive, so it cannot also be a file"
        (self.folders if folder else self.files).add(norm)
        self.folders.update(parents)
        return None


def normalized(name: str) -> str:
    """A member path as the disk sees it: ``./a//b/`` is ``a/b``; the top is ``.``."""
    return posixpath.normpath(name).removeprefix("./")


def read_tgz(path, problems: Problems, limits: Limits = Limits()) -> dict[str, bytes] | None:
    """{member path: bytes} of the regular files of a gzip'd tar archive."""
    files = dict(iter_tgz(path, problems, limits))
    if problems:
        return None
    if not files:
        problems.fatal(path, None, "archive", "contains no files")
        return None
    return files


def iter_tgz(path, problems: Problems, limits: Limits = Limits(), mutable: bool = False,
             stored: Stored | None = None):
    """Yield (member path, bytes) of each regular file, one at a time; stops at a limit.
    ``mutable``: each member as a bytearray, read in place (a member's peak is its size,
    not twice it: the bytes are not joined from chunks), for readers that take any
    bytes-like object (MATERIAL submissions). ``stored.read``: the packed bytes read
    before the yielded member's own."""
    path = Path(path)
    members = Members()
    count = total = 0
    try:
        raw = open(path, "rb")
    except OSError as e:
        problems.fatal(path, None, "archive", f"not a readable .tgz archive ({e})")
        return
    try:
        tar = tarfile.open(fileobj=raw, mode="r|gz")
    except (tarfile.TarError, OSError, EOFError) as e:
        raw.close()
        problems.fatal(path, None, "archive", f"not a readable .tgz archive ({e})")
        return
    with raw, tar:
        try:
            for member in tar:
                name = member.name
                where = f"{path}!{name}"
                norm = posixpath.normpath(name)
                if name.startswith("/") or norm.startswith("../") or norm == ".." or \
                        re.match(r"^[A-Za-z]:", name) or "\\" in name:
                    problems.add(where, None, "member", "absolute or parent-relative path "
                                                       "is not allowed")
                    continue
                if member.issym() or member.islnk():
                    problems.add(where, None, "member", "links are not allowed")
                    continue
                norm = normalized(name)
                if member.isdir():
                    why = members.clash(norm, folder=True) if norm != "." else None
                    if why:
                        problems.add(where, None, "member", why)
                    continue
                if not member.isfile():
                    problems.add(where, None, "member", "only regular files are allowed "
                                                       "(no devices, fifos or special files)")
                    continue
                if NESTED.search(name) and not limits.nested_ok:
                    problems.add(where, None, "member", "nested archives are not allowed")
                    continue
                why = members.clash(norm)
                if why:
                    problems.add(where, None, "member", why)
                    continue
                count += 1
                if count > limits.max_files:
                    problems.fatal(path, None, "archive",
                                   f"more than {limits.max_files} files (limit)")
                    return
                if stored is not None:
                    stored.read = raw.tell()         # before this member's bytes
                data = (_read_member_in_place if mutable else _read_member)(
                    tar, member, limits.max_member_bytes)
                if data is None:
                    problems.add(where, None, "member",
                                 f"larger than {limits.max_member_bytes} bytes (limit)")
                    return
                total += len(data)
                if total > limits.max_bytes:
                    problems.fatal(path, None, "archive",
                                   f"unpacks to more than {limits.max_bytes} bytes (limit)")
                    return
                yield norm, data
                del data                # not held while the next member is read
        except (tarfile.TarError, OSError, EOFError, zlib_error) as e:
            problems.fatal(path, None, "archive", f"corrupt archive ({e})")


def _read_member(tar: tarfile.TarFile, member: tarfile.TarInfo, limit: int) -> bytes | None:
    f = tar.extractfile(member)
    if f is None:
        return b""
    chunks, size = [], 0
    while True:
        block = f.read(1 << 20)
        if not block:
            break
        size += len(block)
        if size > limit:
            return None
        chunks.append(block)
    return b"".join(chunks)


def _read_member_in_place(tar: tarfile.TarFile, member: tarfile.TarInfo,
                          limit: int) -> bytearray | None:
    """``_read_member`` into one buffer of the declared size (tarfile never reads a
    member past it), 256 kB at a time (tarfile copies what it reads twice)."""
    if member.size > limit:
        return None
    f = tar.extractfile(member)
    if f is None:
        return bytearray()
    data = bytearray(member.size)
    with memoryview(data) as view:
        done = 0
        while done < member.size:
            got = f.readinto(view[done:done + (1 << 18)])
            if not got:
                break
            done += got
    del data[done:]
    return data


def iter_folder(path, problems: Problems, limits: Limits = Limits(),
                stored: Stored | None = None):
    """The same stream for a submission given as a folder (links are refused)."""
    root = Path(path)
    count = total = 0
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_symlink():
            problems.add(p, None, "member", "links are not allowed")
            continue
        if p.is_dir():
            continue
        if not p.is_file():
            problems.add(p, None, "member", "only regular files are allowed")
            continue
        count += 1
        if stored is not None:
            stored.read = total                      # before this file's bytes
        total += p.stat().st_size
        if count > limits.max_files or total > limits.max_bytes:
            problems.fatal(root, None, "submission", "exceeds the size or file-count limit")
            return
        yield rel, p.read_bytes()


ARCHIVE_NAME = re.compile(
    r"^(?P<team>[A-Za-z0-9]+)_(?P<task>CLIR|E2E|DomainID|LangID)-(?P<type>primary|contrastive)"
    r"-(?P<condition>[A-Za-z]+)-(?P<set>[A-Za-z0-9-]+)-(?P<sys>[A-Za-z0-9]+)"
    r"_(?P<period>[A-Za-z0-9]+)-(?P<lang>[A-Za-z0-9]+)-(?P<dataset>[A-Za-z0-9]+)"
    r"_(?P<date>[0-9]{8})_(?P<time>[0-9]{6})\.tgz$")
WEB_NAME = re.compile(r"^(?P<sys>[A-Za-z0-9]+)\.tgz$")


def parse_archive_name(name: str) -> dict | str:
    """Fields of a submission archive name (plan 8.2.1.1-2), or a message.

    ``<TeamID>_<Task>-<SubmissionType>-<TrainingCondition>-<DomainID|QuerysetID>-<SysLabel>
    _<EvalPeriod>-<LangID>-<DatasetName>_<Date>_<Timestamp>.tgz``; DomainIDs are
    3-letter codes joined by hyphens. A web upload is just ``<SysLabel>.tgz``.
    ``syslabel`` repeats ``sys`` under the plan's name for it.
    """
    base = Path(name).name
    m = ARCHIVE_NAME.match(base)
    if m:
        d = m.groupdict()
        d["set"] = d["set"].split("-") if d["task"] == "DomainID" else d["set"]
        d["syslabel"] = d["sys"]
        return d
    m = WEB_NAME.match(base)
    if m:
        return {"sys": m.group("sys"), "syslabel": m.group("sys")}
    return (f"{base!r} is neither <SysLabel>.tgz nor <TeamID>_<Task>-<SubmissionType>-"
            f"<TrainingCondition>-<DomainID|QuerysetID>-<SysLabel>_<EvalPeriod>-<LangID>-"
            f"<DatasetName>_<Date>_<Timestamp>.tgz")
