"""SV-Ident 2022 files.

Reference: the shared task's TSV (``sentence, is_variable, variable,
research_data, doc_id, uuid, lang``; variables ';'-separated, ``unk`` = not
disambiguated), optionally with a ``mention_type`` column
(explicit/implicit/mixed). The earlier trial data (``doc_id, [context_id,]
text, is_variable, variable, uuid``; variables like ``293-Yes,288-No``) is
read too; its language comes from the file name (``en.tsv``, ``de.tsv``).
The layout is told by the variable column's content, not by its columns:
the trial test files have no ``context_id``, and ``-yes`` occurs in lower case.

A reference may also carry each annotator's labels before adjudication:
``is_variable@NAME`` and ``variable@NAME`` (both required for every
annotator, at least two annotators) and optionally ``mention_type@NAME``
(then for every annotator). Their cells are checked like the reference's own:
0/1, ids read in the file's layout, types explicit/implicit/mixed or empty; an
annotator's 0 with variables or with a type is a problem.

Submissions: detection as JSON ``{uuid: 0|1}`` or TSV ``uuid<TAB>is_variable``;
disambiguation as JSON ``{uuid: {variable_id: score}}`` (or a ranked list of
ids) or a TREC run whose query ids are sentence uuids.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import Problems
from .jsonfile import iter_records, keyed_record, sniff_container
from .table import iter_lines, read_table
from .trec import read_run

LANGS_FROM_NAME = {"en", "de"}
TRIAL_ITEM = re.compile(r"^([^;,]+?)\s*-\s*(yes|no)$", re.IGNORECASE)
# trial cells of sentences without variables
TRIAL_MARKERS = {"no", "noskip"}
TRIAL, SHARED_TASK = "trial", "shared task"
ANNOTATOR_FIELDS = ("is_variable", "variable", "mention_type")
MENTION_TYPES = ("explicit", "implicit", "mixed")


@dataclass(slots=True)             # one per sentence and annotator: no __dict__ each
class Annotation:
    """One annotator's labels of one sentence (``is_variable@NAME`` ...)."""
    is_variable: int
    variables: list[str]          # as the reference's: 'unk' removed
    mention_type: str | None


@dataclass(slots=True)             # one per reference sentence: no __dict__ each
class Sentence:
    uuid: str
    doc_id: str
    lang: str
    is_variable: int
    variables: list[str]          # disambiguated ids, 'unk' removed
    mention_type: str | None
    line: int
    annotations: dict[str, Annotation] = field(default_factory=dict)   # by annotator


@dataclass
class SvReference:
    path: str
    sentences: dict[str, Sentence]
    has_mention_type: bool
    warnings: list[str] = field(default_factory=list)
    layout: str = SHARED_TASK
    annotators: list[str] = field(default_factory=list)   # in header order; [] = none
    annotator_types: bool = False     # every annotator has a mention_type@NAME column


def read_reference(path: str | Path, problems: Problems) -> SvReference | None:
    path = Path(path)
    table = read_table(path, problems, ("uuid", "is_variable", "doc_id"),
                       aliases={"sentence": ("text",), "mention_type": ("type",)})
    if table is None:
        return None
    header, rows = table
    cols = {h.lower() for h in header}
    layout = _layout(path, rows, problems)
    trial = layout == TRIAL
    lang_default = path.stem.lower() if path.stem.lower() in LANGS_FROM_NAME else None
    if "lang" not in cols and lang_default is None:
        problems.fatal(path, 1, "header", "missing column lang (or name the file en.tsv / de.tsv)")
        return None
    has_type = any(h.lower() in ("mention_type", "type") for h in header)
    annotators, annotator_types = _annotator_columns(path, header, problems)
    sentences: dict[str, Sentence] = {}
    one = {}.setdefault
    for line, row in rows:
        uuid = row["uuid"].strip()
        if not uuid:
            problems.add(path, line, "uuid", "empty")
            continue
        if uuid in sentences:
            problems.add(path, line, "uuid", f"duplicate (first at line {sentences[uuid].line})")
            continue
        flag = row["is_variable"].strip()
        if flag not in ("0", "1"):
            problems.add(path, line, "is_variable", f"expected 0 or 1, found {flag!r}")
            continue
        lang = (row.get("lang") or lang_default or "").strip()
        if not lang:
            problems.add(path, line, "lang", "empty")
            continue
        doc = row["doc_id"].strip()
        if not doc:
            problems.add(path, line, "doc_id", "empty")
            continue
        variables = _trial_variables(row.get("variable", "")) if trial else \
            _variables(row.get("variable", ""))
        mtype = (row.get("mention_type") or "").strip().lower() or None
        doc, lang = one(doc, doc), one(lang, lang)      # repeated on most lines
        sentences[uuid] = Sentence(uuid, doc, lang, int(flag), variables, mtype, line,
                                   _annotations(path, line, row, annotators, trial, problems))
    if not sentences and not problems:
        problems.add(path, None, "file", "no sentences")
    return SvReference(str(path), sentences, has_type, layout=layout, annotators=annotators,
                       annotator_types=annotator_types)


def _annotator_columns(path: Path, header: list[str], problems: Problems
                       ) -> tuple[list[str], bool]:
    """The annotators named by ``FIELD@NAME`` columns, and whether all have a mention type.

    Every annotator needs is_variable@NAME and variable@NAME (Task 2's per-annotator
    scores and the agreement on variables read them); mention_type@NAME is for all
    annotators or none; two annotators at least (agreement needs a pair)."""
    columns: dict[str, dict[str, str]] = {}
    tagged = [h for h in header if "@" in h]
    if not any(h.split("@", 1)[0].strip().lower() in ANNOTATOR_FIELDS for h in tagged):
        return [], False          # other columns with '@' are ignored, as any extra column
    for h in tagged:
        base, name = h.split("@", 1)
        if base.strip().lower() not in ANNOTATOR_FIELDS:
            problems.add(path, 1, "header", f"column {h!r}: per-annotator columns are "
                                            f"{', '.join(f + '@NAME' for f in ANNOTATOR_FIELDS)}")
            continue
        if not name.strip():
            problems.add(path, 1, "header", f"column {h!r}: no annotator name after '@'")
            continue
        own = columns.setdefault(name.strip(), {})
        if base.strip().lower() in own:
            problems.add(path, 1, "header", f"column {h!r} repeats {own[base.strip().lower()]!r}")
            continue
        own[base.strip().lower()] = h
    if not columns:
        return [], False
    complete = [n for n, own in columns.items() if {"is_variable", "variable"} <= set(own)]
    for name, own in columns.items():
        for needed in ("is_variable", "variable"):
            if needed not in own:
                given = ", ".join(own.values())
                problems.add(path, 1, "header", f"annotator {name!r}: column {needed}@{name} "
                                                f"missing ({given} given); every annotator "
                                                f"needs is_variable@NAME and variable@NAME")
    typed = [n for n, own in columns.items() if "mention_type" in own]
    if typed and len(typed) != len(columns):
        untyped = [n for n in columns if n not in typed]
        problems.add(path, 1, "header", f"mention_type@NAME for annotator(s) "
                                        f"{', '.join(typed)} but not {', '.join(untyped)}: "
                                        f"give it for every annotator or none")
    if len(columns) < 2:
        problems.add(path, 1, "header", f"per-annotator columns name one annotator "
                                        f"({next(iter(columns))!r}); they need two or more")
    # only complete annotators' cells are read: an incomplete one is one header problem
    return complete, bool(typed) and len(typed) == len(columns)


def _annotations(path: Path, line: int, row: dict, annotators: list[str], trial: bool,
                 problems: Problems) -> dict[str, Annotation]:
    out = {}
    for name in annotators:
        cells = {k.split("@", 1)[0].strip().lower(): v for k, v in row.items()
                 if "@" in k and k.split("@", 1)[1].strip() == name}
        flag = (cells.get("is_variable") or "").strip()
        if flag not in ("0", "1"):
            problems.add(path, line, f"is_variable@{name}", f"expected 0 or 1, found {flag!r}")
            continue
        cell = cells.get("variable") or ""
        variables = _trial_variables(cell) if trial else _variables(cell)
        mtype = (cells.get("mention_type") or "").strip().lower() or None
        if mtype is not None and mtype not in MENTION_TYPES:
            problems.add(path, line, f"mention_type@{name}",
                         f"expected {', '.join(MENTION_TYPES)} or empty, found {mtype!r}")
            continue
        if flag == "0" and variables:
            problems.add(path, line, f"variable@{name}",
                         f"is_variable@{name} is 0 but the annotator lists variables")
            continue
        if flag == "0" and mtype is not None:
            problems.add(path, line, f"mention_type@{name}",
                         f"is_variable@{name} is 0 but the annotator gives a mention type")
            continue
        out[name] = Annotation(int(flag), variables, mtype)
    return out


def _trial_items(cell: str) -> list[tuple[str, bool]] | None:
    """[(id, mentioned)] when every ','-item ends in -Yes/-No (any case), else None."""
    out = []
    for item in cell.split(","):
        m = TRIAL_ITEM.match(item.strip())
        if m is None:
            return None
        out.append((m.group(1).strip(), m.group(2).lower() == "yes"))
    return out


def _layout(path: Path, rows: list[tuple[int, dict]], problems: Problems) -> str:
    """TRIAL when the variable cells are trial items (``311-yes,286-No``) or markers.

    A file mixing both kinds is a problem on the lines of the smaller kind
    (reading it either way would score some sentences against the wrong ids);
    the rest is then read in the larger kind's layout, to report all problems.
    """
    trial_lines, shared_lines, markers = [], [], False
    for line, row in rows:
        cell = (row.get("variable") or "").strip()
        if not cell or cell.lower() == "unk":
            continue
        if cell.lower() in TRIAL_MARKERS:
            markers = True
        elif _trial_items(cell) is not None:
            trial_lines.append(line)
        else:
            shared_lines.append(line)
    if trial_lines and shared_lines:
        kinds = [(trial_lines, "trial ID-Yes/ID-No items"),
                 (shared_lines, "ids without -Yes/-No")]
        (few, kind), (many, other) = sorted(kinds, key=lambda k: len(k[0]))
        for line in few:
            problems.add(path, line, "variable",
                         f"{kind} here, but {other} on {len(many)} other lines (first: line "
                         f"{many[0]}); a file must use one layout")
        return TRIAL if many is trial_lines else SHARED_TASK
    return TRIAL if trial_lines or (markers and not shared_lines) else SHARED_TASK


def _variables(text: str) -> list[str]:
    out = []
    for v in text.split(";"):
        v = v.strip()
        if v and v.lower() != "unk" and v not in out:
            out.append(v)
    return out


def _trial_variables(text: str) -> list[str]:
    """The ids marked -Yes (mentioned, any letter case); -No ids are not relevant."""
    out: list[str] = []
    for vid, mentioned in _trial_items(text.strip()) or []:
        if mentioned and vid not in out:
            out.append(vid)
    return out


@dataclass
class Predictions:
    path: str
    values: dict[str, object]            # uuid -> 0/1 or {variable: score}, valid ones only
    lines: dict[str, int | None]         # every uuid in the file, valid value or not
    warnings: list[str] = field(default_factory=list)


def _read_object(path: Path, problems: Problems, convert, value_name: str
                 ) -> Predictions | None:
    """``{uuid: value}`` with each value passed through ``convert`` (a str = a problem,
    on the field ``value_name`` of the record named by its uuid)."""
    records = iter_records(path, problems, "object", "uuid")
    if records is None:
        return None
    values: dict[str, object] = {}
    lines: dict[str, int | None] = {}
    for line, uuid, v in records:
        out = convert(v)
        lines.setdefault(uuid, line)
        if isinstance(out, str):
            problems.in_record(path, line, keyed_record("uuid", uuid), value_name, out)
            continue
        values[uuid] = out
    return Predictions(str(path), values, lines)


def _binary(v) -> int | str:
    if isinstance(v, bool) or v not in (0, 1):
        return f"expected 0 or 1, found {v!r}"
    return int(v)


def read_detection(path: str | Path, problems: Problems) -> Predictions | None:
    path = Path(path)
    container = sniff_container(path)
    if container == "object":
        return _read_object(path, problems, _binary, "is_variable")
    if container == "array":
        problems.fatal(path, 1, "json", "expected a JSON object {uuid: 0|1}, found an array")
        return None
    values: dict[str, object] = {}
    lines: dict[str, int | None] = {}
    first = True
    for line, text in iter_lines(path, problems):
        parts = text.split("\t")
        if line == 1 and parts[0].strip().lower() == "uuid":
            continue
        if len(parts) != 2:
            report = problems.fatal if first else problems.add   # the first line: wrong layout
            report(path, line, "line", f"expected uuid<TAB>is_variable, found "
                                       f"{len(parts)} column(s)")
            if first:
                return None
            continue
        first = False
        uuid, v = parts[0].strip(), parts[1].strip()
        if uuid in lines:
            problems.add(path, line, "uuid", f"duplicate (first at line {lines[uuid]})")
            continue
        lines[uuid] = line
        if v not in ("0", "1"):
            problems.add(path, line, "is_variable", f"expected 0 or 1, found {v!r}")
            continue
        values[uuid] = int(v)
    return Predictions(str(path), values, lines)


def read_disambiguation(path: str | Path, problems: Problems) -> Predictions | None:
    path = Path(path)
    container = sniff_container(path)
    if container == "object":
        return _read_object(path, problems, _ranking, "variables")
    if container == "array":
        problems.fatal(path, 1, "json", "expected a JSON object {uuid: {variable_id: score}} "
                                        "or a TREC run, found an array")
        return None
    values: dict[str, object] = {}
    lines: dict[str, int | None] = {}
    run = read_run(path, problems)
    if run is None:
        return None
    for q, d, s in zip(run.qids(), run.docs(), run.value.tolist()):
        values.setdefault(q, {})[d] = s
    # the first line of each sentence, for messages (SV-Ident runs are small)
    for line, text in iter_lines(path, problems):
        lines.setdefault(text.split(None, 1)[0], line)
    return Predictions(str(path), values, lines)


def _ranking(v) -> dict[str, float] | str:
    """{variable: score} from a mapping or a ranked list; a message when invalid."""
    if isinstance(v, list):
        if not all(isinstance(x, str) for x in v):
            return "a ranked list must hold variable ids (strings)"
        if len(set(v)) != len(v):
            return "the ranked list repeats a variable id"
        return {x: float(len(v) - i) for i, x in enumerate(v)}
    if isinstance(v, dict):
        out = {}
        for k, s in v.items():
            if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s):
                return f"score of variable {k!r} is not a finite number: {s!r}"
            out[k] = float(s)
        return out
    return "expected {variable_id: score} or a ranked list of variable ids"
