"""Reading judgments (CSV, TSV or JSONL) for ``assess estimate``.

One record per (item, judge, question). Fields: ``item``, ``submissions``
(comma-separated names of the submissions whose output contains the item;
empty for an item a recall annotator found that nobody submitted),
``answer`` (yes/no, 1/0, true/false, or a fraction in [0, 1]; empty means
not judged), ``inclusion_probability`` (needed on precision rows), and
optionally ``judge``, ``question`` (default ``correct``), ``doc``,
``drawn_for`` (``precision`` by default, or ``recall``) and ``drawn_by``.
A ``# sizes: A=120,B=80`` line gives output sizes for the importance estimator,
and a ``# overlaps: A+B=40`` line the number of items two outputs share (pairs
not listed share none), which its ``heuristic`` weights need.
In CSV and TSV files, an apostrophe before a cell that starts like a spreadsheet
formula (``'=x``, written by shareval's exports so spreadsheets do not run it)
is dropped.

Output names are written with ``%``, ``,``, ``+``, ``=`` and line breaks
percent-encoded (``quote_name``), so a team called "Smith, Jones & Co" stays
one name in the ``submissions`` and ``drawn_by`` cells and in the comment
lines; reading decodes exactly those five codes and leaves any other ``%``
as written.
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..formats.errors import Problems
from ..formats.jsonfile import json_object_line
from ..formats.spreadsheet import unescape_formula

YES = {"yes", "y", "1", "true", "correct", "relevant"}
NO = {"no", "n", "0", "false", "incorrect", "not relevant", "irrelevant"}
DESIGNS = ("precision", "recall")


@dataclass
class Judgment:
    item: str
    submissions: tuple[str, ...]
    judge: str
    question: str
    answer: float
    inclusion: float
    doc: str
    drawn_for: str
    drawn_by: tuple[str, ...]
    line: int


@dataclass
class Judgments:
    records: list[Judgment] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)
    # |X_a & X_b| keyed by the sorted pair; None when the file has no overlaps line
    overlaps: dict[tuple[str, str], int] | None = None


def parse_answer(text) -> float | None:
    if isinstance(text, bool):
        return float(text)
    if isinstance(text, (int, float)):
        v = float(text)
    else:
        t = str(text).strip().lower()
        if t in YES:
            return 1.0
        if t in NO:
            return 0.0
        v = float(t)                       # ValueError for anything else
    if not 0 <= v <= 1:
        raise ValueError("outside [0, 1]")
    return v


_QUOTE = {"%": "%25", ",": "%2C", "+": "%2B", "=": "%3D", "\n": "%0A", "\r": "%0D"}
_UNQUOTE = re.compile("%(25|2C|2B|3D|0A|0D)", re.IGNORECASE)


def quote_name(name: str) -> str:
    """An output name safe inside comma lists, ``A+B=n`` pairs and one line."""
    return "".join(_QUOTE.get(c, c) for c in str(name))


def unquote_name(text: str) -> str:
    return _UNQUOTE.sub(lambda m: chr(int(m.group(1), 16)), text)


def _names(v) -> tuple[str, ...]:
    if isinstance(v, list):
        return tuple(str(x) for x in v)
    return tuple(unquote_name(s.strip()) for s in str(v or "").split(",") if s.strip())


def _rows(path: Path, text: str, problems: Problems):
    body = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.startswith("# sizes:"):
            yield "sizes", lineno, line[len("# sizes:"):]
        elif line.startswith("# overlaps:"):
            yield "overlaps", lineno, line[len("# overlaps:"):]
        elif line.strip() and not line.startswith("#"):
            body.append((lineno, line))
    if path.suffix.lower() in (".jsonl", ".json"):
        for lineno, line in body:
            obj = json_object_line(path, lineno, line, problems)
            if obj is not None:
                yield "row", lineno, obj
        return
    delim = "," if path.suffix.lower() == ".csv" else "\t"
    if not body:
        return
    lines = [ln for ln, _ in body]
    reader = csv.reader(io.StringIO("\n".join(t for _, t in body)), delimiter=delim)
    header = None
    for i, cells in enumerate(reader):
        lineno = lines[min(i, len(lines) - 1)]
        if header is None:
            header = [c.strip() for c in cells]
            missing = {"item", "answer"} - set(header)
            if missing:
                problems.add(path, lineno, "header", f"missing column(s) {sorted(missing)}; "
                                                     f"found {header}")
                return
            continue
        if len(cells) != len(header):
            problems.add(path, lineno, "columns", f"{len(cells)} fields, header has {len(header)}")
            continue
        yield "row", lineno, dict(zip(header, map(unescape_formula, cells)))


def read_judgments(path: str | Path, problems: Problems) -> Judgments:
    path = Path(path)
    out = Judgments()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        problems.add(path, None, "file", f"cannot read: {e}")
        return out
    for kind, lineno, row in _rows(path, text, problems):
        if kind == "sizes":
            for part in row.split(","):
                name, _, n = unescape_formula(part.strip()).rpartition("=")
                try:
                    out.sizes[unquote_name(name)] = int(n)
                except ValueError:
                    problems.add(path, lineno, "sizes", f"{part.strip()!r} is not NAME=COUNT")
            continue
        if kind == "overlaps":
            _overlaps(path, lineno, row, out, problems)
            continue
        item = str(row.get("item") or "").strip()
        if not item:
            problems.add(path, lineno, "item", "missing")
            continue
        raw = row.get("answer")
        if raw is None or str(raw).strip() == "":
            continue                        # not judged (yet)
        try:
            answer = parse_answer(raw)
        except ValueError:
            problems.add(path, lineno, "answer", f"{raw!r} is not yes/no, 1/0 or a fraction")
            continue
        drawn_for = str(row.get("drawn_for") or "precision").strip()
        if drawn_for not in DESIGNS:
            problems.add(path, lineno, "drawn_for", f"{drawn_for!r} is not one of {DESIGNS}")
            continue
        pi_raw = row.get("inclusion_probability")
        if pi_raw in (None, ""):
            if drawn_for == "precision":
                problems.add(path, lineno, "inclusion_probability",
                             "missing (needed to weight a precision judgment)")
                continue
            pi = 1.0
        else:
            try:
                pi = float(pi_raw)
                if not 0 < pi <= 1:
                    raise ValueError
            except ValueError:
                problems.add(path, lineno, "inclusion_probability", f"{pi_raw!r} not in (0, 1]")
                continue
        subs = _names(row.get("submissions"))
        if drawn_for == "precision" and not subs:
            problems.add(path, lineno, "submissions", "a precision row must name a submission")
            continue
        out.records.append(Judgment(
            item, subs, str(row.get("judge") or ""), str(row.get("question") or "correct"),
            answer, pi, str(row.get("doc") or item.split("|")[0]), drawn_for,
            _names(row.get("drawn_by")), lineno))
    return out


def _overlaps(path: Path, lineno: int, text: str, out: Judgments, problems: Problems) -> None:
    """``A+B=40,...``: checked against the sizes line, which must come first."""
    if out.overlaps is None:
        out.overlaps = {}
    for part in (unescape_formula(p.strip()) for p in text.split(",")):
        if not part:
            continue
        pair, _, n = part.rpartition("=")
        # a name may hold '+': take the split whose two sides are both known names
        splits = [(unquote_name(pair[:k]), unquote_name(pair[k + 1:]))
                  for k, c in enumerate(pair) if c == "+"]
        a, b = next(((x, y) for x, y in splits if x in out.sizes and y in out.sizes),
                    (None, None))
        if a is None or a == b:
            problems.add(path, lineno, "overlaps", f"{part!r} is not NAME+NAME=COUNT with two "
                                                   f"names of the sizes line")
            continue
        try:
            count = int(n)
            if not 0 <= count <= min(out.sizes[a], out.sizes[b]):
                raise ValueError
        except ValueError:
            problems.add(path, lineno, "overlaps", f"{part!r}: the count must be a whole number "
                                                   f"from 0 to the smaller output's size")
            continue
        out.overlaps[tuple(sorted((a, b)))] = count
