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

from .errors import Problems, read_text


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
        reader = csv.reader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE)
    else:
        reader = csv.reader(io.StringIO(text), delimiter=delim)
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


def iter_lines(path: str | Path, problems: Problems) -> Iterator[tuple[int, str]]:
    """Non-blank lines of a UTF-8 file with their numbers."""
    text = read_text(path, problems)
    if text is None:
        return
    for i, line in enumerate(text.splitlines(), 1):
        if line.strip():
            yield i, line
