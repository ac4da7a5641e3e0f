"""Delimited text tables with a header row, read with line numbers.

TSV (``.tsv``, ``.txt``, ``.tab``) is read literally: one record per line,
no quoting, so sentences with quote characters stay intact. CSV follows
RFC 4180 quoting.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Iterator

from .errors import Problems, locate_not_utf8, read_text


def delimiter_for(path: str | Path) -> str:
    return "," if str(path).lower().endswith(".csv") else "\t"


def read_table(path: str | Path, problems: Problems, required: tuple[str, ...],
               aliases: dict[str, tuple[str, ...]] | None = None,
               delimiter: str | None = None) -> tuple[list[str], list[tuple[int, dict]]] | None:
    """Return (header, [(line, row)]) with rows keyed by canonical column names.

    ``aliases`` maps a canonical name to alternative header spellings.
    Ragged rows are problems; an empty file or a header without the required
    columns (the wrong layout) is fatal: no row is read.
    """
    text = read_text(path, problems)
    if text is None:
        return None
    delim = delimiter or delimiter_for(path)
    if delim == "\t":
        reader = csv.reader(_lines(text), delimiter="\t", quoting=csv.QUOTE_NONE)
    else:
        reader = csv.reader(_lines(text), delimiter=delim)
    try:
        header = next(reader)
    except StopIteration:
        problems.fatal(path, 1, "header", "file is empty")
        return None
    except csv.Error as e:
        problems.fatal(path, 1, "header", str(e))
        return None
    header = [h.strip() for h in header]
    canon = _canonical(header, aliases or {})
    missing = [c for c in required if c not in canon.values()]
    if missing:
        found = ", ".join(header) or "(none)"
        problems.fatal(path, 1, "header", f"missing column(s) {', '.join(missing)}; found: {found}")
        return None
    rows: list[tuple[int, dict]] = []
    try:
        for record in reader:
            line = reader.line_num
            if not record or (len(record) == 1 and not record[0].strip()):
                continue
            if len(record) != len(header):
                problems.add(path, line, "line",
                             f"expected {len(header)} columns, found {len(record)}")
                if problems.full:
                    break
                continue
            rows.append((line, {canon.get(h, h): v for h, v in zip(header, record)}))
    except csv.Error as e:
        problems.add(path, reader.line_num, "line", str(e))
    return header, rows


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` as ``io.StringIO(text)`` gives them (ended by "\n" only, kept),
    one at a time: a StringIO holds a copy of the whole text at 4 bytes a character."""
    start, n = 0, len(text)
    while start < n:
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end + 1]
        start = end + 1


def _canonical(header: list[str], aliases: dict[str, tuple[str, ...]]) -> dict[str, str]:
    out = {}
    lower = {h.lower(): h for h in header}
    for name, alts in aliases.items():
        for a in (name, *alts):
            if a.lower() in lower:
                out[lower[a.lower()]] = name
                break
    for h in header:
        out.setdefault(h, h)
    return out


BLOCK_BYTES = 1 << 22


def iter_lines(path: str | Path, problems: Problems) -> Iterator[tuple[int, str]]:
    """Non-blank lines of a UTF-8 file with their numbers (as ``str.splitlines`` numbers
    them). Read in blocks ending after a newline, so the file is never held whole; the
    encoding is checked over the whole file first, so a file that is not UTF-8 gives
    its one fatal problem (as ``read_text``) before any line."""
    try:
        for block in _blocks(path):
            block.decode("utf-8")
    except UnicodeDecodeError:
        locate_not_utf8(problems, path)
        return
    except OSError:
        read_text(path, problems)              # the same problem as a whole read gives
        return
    number = 0
    for i, block in enumerate(_blocks(path)):
        text = block.decode("utf-8")
        del block
        if i == 0:
            text = text.removeprefix("\ufeff")
        # a block ends after a b"\n": no line break (\r\n included) spans two blocks
        for line in text.splitlines():
            number += 1
            if line.strip():
                yield number, line


def _blocks(path: str | Path) -> Iterator[bytes]:
    """The file's bytes in blocks of about BLOCK_BYTES, each but the last ending in b"\n"."""
    parts: list[bytes] = []
    with open(path, "rb") as f:
        while data := f.read(BLOCK_BYTES):
            cut = data.rfind(b"\n") + 1
            if not cut:
                parts.append(data)
                continue
            parts.append(data[:cut])
            yield b"".join(parts)
            parts = [data[cut:]]
    tail = b"".join(parts)
    if tail:
        yield tail
