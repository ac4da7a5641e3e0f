"""Reading and removing what a run wrote, without trusting its shape.

A run's output may be nested thousands of folders deep or hold paths far
longer than PATH_MAX. Everything here walks it through file descriptors
(``openat``: no path ever grows), without recursion (no depth overflows
Python's stack), never following a link. An output deeper than
:data:`MAX_DEPTH` folders, or with a path longer than :data:`MAX_PATH` bytes, is
over the output limit: the walk stops descending there and says so.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MAX_DEPTH = 32          # folders below the output folder
MAX_PATH = 1024         # bytes of a path below the output folder
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class Usage:
    bytes: int = 0      # apparent sizes (a sparse file counts its holes)
    entries: int = 0    # files, folders, links and anything else
    too_deep: bool = False      # a folder past MAX_DEPTH or a path past MAX_PATH


@dataclass
class Entry:
    rel: str            # the path below the root, '/'-separated
    name: str
    dir_fd: int         # the open folder that holds it (valid while the walk is at it)
    st: os.stat_result


def walk(root: Path, usage: Usage | None = None) -> Iterator[Entry]:
    """Every entry below ``root``, depth first, counted into ``usage``."""
    usage = usage if usage is not None else Usage()
    try:
        top = os.open(root, _DIR_FLAGS)
    except OSError:
        return
    stack = [(top, os.scandir(top), "", 0)]
    try:
        while stack:
            fd, it, prefix, depth = stack[-1]
            try:
                e = next(it, None)
            except OSError:
                e = None
            if e is None:
                it.close()
                os.close(fd)
                stack.pop()
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            rel = prefix + e.name
            usage.entries += 1
            usage.bytes += st.st_size
            if len(rel.encode("utf-8", "surrogateescape")) > MAX_PATH:
                usage.too_deep = True
            yield Entry(rel, e.name, fd, st)
            if stat.S_ISDIR(st.st_mode):
                if depth + 1 > MAX_DEPTH:
                    usage.too_deep = True
                    continue
                try:
                    child = os.open(e.name, _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    continue
                stack.append((child, os.scandir(child), rel + "/", depth + 1))
    finally:
        for fd, it, _, _ in stack:
            it.close()
            os.close(fd)


def usage(root: Path, max_entries: int | None = None) -> Usage:
    """What ``root`` holds; stops counting past ``max_entries``."""
    u = Usage()
    for _ in walk(root, u):
        if max_entries is not None and u.entries > max_entries:
            break
    return u


def open_file(entry: Entry) -> int:
    """A read-only descriptor of a regular file met by :func:`walk` (no link followed)."""
    return os.open(entry.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=entry.dir_fd)


def remove(path: Path) -> None:
    """Remove ``path`` and everything below it, however deep (GNU ``rm`` walks by
    descriptors; ``shutil.rmtree`` recurses and overflows)."""
    path = Path(path)
    if not os.path.lexists(path):
        return
    try:
        subprocess.run(["rm", "-rf", "--one-file-system", "--", str(path)], check=False,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=3600)
    except (OSError, subprocess.SubprocessError):
        pass
    if os.path.lexists(path):
        try:
            shutil.rmtree(path, ignore_errors=True)
        except RecursionError:
            pass
