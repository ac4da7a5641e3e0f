"""Submissions' output read as sets of items to judge.

An item is one output line reduced to its key columns (joined with ``|``),
so the same extraction made by two teams is one item, judged once. Its
document is one chosen column (the unit that recall annotation samples).
TSV (tab-separated, ``#`` comments) and JSONL (one object per line) are read.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..formats.errors import Problems
from ..formats.jsonfile import json_object_line

SEP = "|"


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
            i = int(c) - 1 if c.isdigit() else (header_cols.index(c) if c in header_cols else -1)
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
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        if jsonl:
            row = json_object_line(path, lineno, line, problems)
            if row is None:
                continue
        else:
            row = line.split("\t")
        cols = key or [str(i + 1) for i in range(len(row))]
        k = _pick(row, cols, header, path, lineno, problems, "key")
        d = _pick(row, [doc or cols[0]], header, path, lineno, problems, "document")
        if k is None or d is None:
            continue
        items.setdefault(SEP.join(k), d[0])
    return Output(name, items)


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
