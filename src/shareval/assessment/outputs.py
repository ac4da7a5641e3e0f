"""Submissions' output read as sets of items to judge.

An item is one output line reduced to its key columns (joined with ``|``),
so the same extraction made by two teams is one item, judged once. Its
document is one chosen column (the unit that recall annotation samples).
Line outputs (:func:`output_rows`: TSV, or whitespace-separated lines such as
a TREC run; ``#`` comments; a header line skipped) and JSONL (one object per
line) are read. ``shareval assess sample`` and the server's judging campaigns
drawn from runs read line outputs with the same :func:`output_rows`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from ..formats.digits import is_digits
from ..formats.errors import Problems
from ..formats.jsonfile import json_object_line

SEP = "|"
# a line output's first line is a header, not an item, when its first cell is one of these
HEADER_WORDS = {"item", "id", "uuid", "doc", "doc_id", "docid", "query", "qid", "query_id",
                "item_id"}


def split_cells(line: str) -> list[str]:
    """A line's cells: tab-separated when it has a tab, else separated by whitespace."""
    return [c.strip() for c in (line.split("\t") if "\t" in line else line.split())]


def output_rows(lines: Iterable[str], names: Iterable[str] = (),
                header: list[str] | None = None) -> Iterator[tuple[int, list[str]]]:
    """``(line number, cells)`` of each item line of a line output. Blank lines and ``#``
    comments are skipped, and so is the first other line when it is a header: its first
    cell is a header word (:data:`HEADER_WORDS`), or it holds every column ``names``
    names. A header's cells are put in ``header``."""
    names = {n.lower() for n in names if not is_digits(n)}
    first = True
    for number, line in enumerate(lines, 1):
        line = line.rstrip("\r\n")
        if not line.strip() or line.startswith("#"):
            continue
        cells = split_cells(line)
        if first and _is_header(cells, names):
            if header is not None:
                header.extend(cells)
            first = False
            continue
        first = False
        yield number, cells


def _is_header(cells: list[str], names: set[str]) -> bool:
    lowered = {c.lower() for c in cells}
    return cells[0].lower() in HEADER_WORDS or bool(names) and names <= lowered


@dataclass
class Output:
    name: str
    items: dict[str, str]          # item key -> document
    _keys: list[str] | None = field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.items)

    def keys(self) -> list[str]:
        """Sorted item keys (cached: the order draws index into)."""
        if self._keys is None or len(self._keys) != len(self.items):
            self._keys = sorted(self.items)
        return self._keys


def parse_columns(spec: str | None) -> list[str] | None:
    if not spec:
        return None
    return [c.strip() for c in spec.split(",") if c.strip()]


def _pick(row, cols, header_cols, path, lineno, problems, what):
    """Column i (1-based) of a TSV row, or field name of a JSON object."""
    out = []
    for c in cols:
        if isinstance(row, dict):
            if c not in row or row[c] in (None, ""):
                problems.add(path, lineno, c, f"{what} field missing")
                return None
            out.append(str(row[c]))
        else:
            lowered = [h.lower() for h in header_cols]
            i = int(c) - 1 if is_digits(c) else (lowered.index(c.lower()) if c.lower() in lowered
                                                else -1)
            if i < 0 or i >= len(row) or row[i].strip() == "":
                problems.add(path, lineno, f"column {c}", f"{what} column missing or empty")
                return None
            out.append(row[i].strip())
    return out


def read_output(path: str | Path, name: str, key: list[str] | None, doc: str | None,
                problems: Problems) -> Output:
    """Read one submission; duplicated keys count once (a set of extractions)."""
    path = Path(path)
    items: dict[str, str] = {}
    jsonl = path.suffix.lower() in (".jsonl", ".json")
    if jsonl and not key:
        problems.add(path, None, "--key", "JSONL needs --key naming the fields of an item")
        return Output(name, items)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        problems.add(path, None, "file", f"cannot read: {e}")
        return Output(name, items)
    header: list[str] = []
    named = [c for c in [*(key or ()), *([doc] if doc else [])] if not is_digits(c)]
    for lineno, row in _rows(path, text, jsonl, named, header, problems):
        if named and not jsonl and _unnamed(named, header):
            problems.fatal(path, lineno, "--key", f"no header line names the columns "
                                                  f"{', '.join(_unnamed(named, header))}"
                                                  + (f" (header: {', '.join(header)})"
                                                     if header else ""))
            break
        cols = key or [str(i + 1) for i in range(len(row))]
        k = _pick(row, cols, header, path, lineno, problems, "key")
        d = _pick(row, [doc or cols[0]], header, path, lineno, problems, "document")
        if k is None or d is None:
            continue
        items.setdefault(SEP.join(k), d[0])
    return Output(name, items)


def _unnamed(names: list[str], header: list[str]) -> list[str]:
    lowered = {h.lower() for h in header}
    return [n for n in names if n.lower() not in lowered]


def _rows(path, text: str, jsonl: bool, named: list[str], header: list[str],
          problems: Problems):
    """(line number, row) of each item: a JSON object (JSONL) or a line's cells."""
    if not jsonl:
        yield from output_rows(text.splitlines(), named, header)
        return
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.strip() and not line.startswith("#"):
            row = json_object_line(path, lineno, line, problems)
            if row is not None:
                yield lineno, row


def read_outputs(specs: list[str], key: list[str] | None, doc: str | None) -> list[Output]:
    """``name=path`` or ``path`` (the name is the file's stem)."""
    problems = Problems()
    outs, names = [], set()
    for spec in specs:
        name, _, path = spec.rpartition("=") if "=" in spec else ("", "", spec)
        name = name or Path(path).stem
        if not name or any(c in name for c in ",\t\n") or name in names:
            problems.add(path, None, "name", f"submission name {name!r} is empty, repeated or "
                                             f"contains a comma/tab; use NAME=PATH")
            continue
        names.add(name)
        outs.append(read_output(path, name, key, doc, problems))
    problems.raise_if_any()
    return outs
