"""The organizer's document properties (vocabulary size, year, ...): a CSV whose first
column is the document id (a per_document key or its doc_id), one column per property."""
from __future__ import annotations

import csv
import io
from pathlib import Path

from ..formats.errors import InvalidInput, Problem

MAX_BYTES = 5_000_000
MAX_PROPERTIES = 50          # columns: every one makes table columns, correlations, groups
MAX_DOCUMENTS = 100_000


def read_properties(path: str | Path, text: str | None = None) -> dict[str, dict]:
    """{document: {property: value}}, numbers as floats where they parse; raises
    InvalidInput naming file, line and column."""
    name = str(path)
    if text is None:
        p = Path(path)
        if not p.is_file():
            raise InvalidInput([Problem(name, None, "file", "no such file")])
        if p.stat().st_size > MAX_BYTES:
            raise InvalidInput([Problem(name, None, "file", f"larger than {MAX_BYTES:,} bytes")])
        raw = p.read_bytes()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise InvalidInput([Problem(name, None, "encoding",
                                        f"not UTF-8 (byte {e.start})")]) from None
    rows = list(csv.reader(io.StringIO(text)))
    problems = []
    if not rows or len(rows[0]) < 2:
        raise InvalidInput([Problem(name, 1, "header", "needs a header: the document id "
                                                       "column, then at least one property")])
    header = [h.strip() for h in rows[0]]
    if len(header) - 1 > MAX_PROPERTIES:
        raise InvalidInput([Problem(name, 1, "header", f"{len(header) - 1} properties; at "
                                                       f"most {MAX_PROPERTIES}")])
    if len(rows) - 1 > MAX_DOCUMENTS:
        raise InvalidInput([Problem(name, None, "rows", f"{len(rows) - 1:,} rows; at most "
                                                        f"{MAX_DOCUMENTS:,} documents")])
    for j, h in enumerate(header):
        if not h:
            problems.append(Problem(name, 1, f"column {j + 1}", "empty column name"))
        elif h in header[:j]:
            problems.append(Problem(name, 1, h, "column named twice"))
    out: dict[str, dict] = {}
    for i, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) != len(header):
            problems.append(Problem(name, i, "row", f"{len(row)} fields, the header has "
                                                    f"{len(header)}"))
            continue
        doc = row[0].strip()
        bad = next((j for j, c in enumerate(row)
                    if any(ord(ch) < 32 and ch != "\t" or ord(ch) == 127 for ch in c)), None)
        if bad is not None:
            problems.append(Problem(name, i, header[bad], "a control character (such as NUL)"))
            continue
        if not doc:
            problems.append(Problem(name, i, header[0], "empty document id"))
            continue
        if doc in out:
            problems.append(Problem(name, i, header[0], f"document {doc!r} given twice"))
            continue
        out[doc] = {h: _value(v) for h, v in zip(header[1:], row[1:])}
    if not out and not problems:
        problems.append(Problem(name, 2, header[0], "no document: the file has a header only"))
    if problems:
        raise InvalidInput(problems)
    return out


def _value(v: str):
    v = v.strip()
    if not v:
        return None
    try:
        x = float(v)
    except ValueError:
        return v
    return int(x) if x.is_integer() and "." not in v and "e" not in v.lower() else x
