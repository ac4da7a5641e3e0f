"""KBP relation submissions: a TSV with a header, or a JSON array of records.

One line (record) per relation mention: ``doc_id, subject, <subject provenance>,
relation, object, <object provenance>[, evidence][, confidence]``. A mention's
provenance is character offsets (``subject_start``, ``subject_end``, end exclusive)
or a sentence and token span (``subject_sent``, ``subject_token_start``,
``subject_token_end``, end exclusive); the mention string must be the document
text at that span. Problems name the file and line (JSON: also the record).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .digits import is_digits
from .errors import Problems
from .jsonfile import iter_records, sniff_container
from .kbp import Document, KbpReference, Span
from .table import read_table

ROLES = ("subject", "object")
OFFSETS = ("start", "end")
TOKENS = ("sent", "token_start", "token_end")
REQUIRED = ("doc_id", "subject", "relation", "object")
OPTIONAL = ("evidence", "confidence")
# an unknown document or relation is one problem however many lines name it
GROUPED = ("doc_id", "relation")
COLUMNS = REQUIRED + OPTIONAL + tuple(f"{r}_{c}" for r in ROLES for c in OFFSETS + TOKENS)


@dataclass(frozen=True)
class Prediction:
    line: int | None
    doc: str
    subject: Span
    relation: str                    # the relation id (as written when no reference)
    object: Span
    subject_text: str
    object_text: str
    confidence: float | None = None
    evidence: tuple[int, ...] = ()

    @property
    def key(self) -> tuple:
        return self.doc, self.subject, self.relation, self.object


@dataclass
class KbpRun:
    path: str
    predictions: list[Prediction]
    warnings: list[str] = field(default_factory=list)


Report = Callable[[str, str], None]       # (field, message)


def item_key(doc: str, subject: Span, relation: str, obj: Span) -> str:
    """A relation mention as one string (judged items, pools, annotations):
    ``doc|s_start-s_end|relation|o_start-o_end``; a title may hold '|'."""
    return f"{doc}|{subject[0]}-{subject[1]}|{relation}|{obj[0]}-{obj[1]}"


def parse_item_key(key: str) -> tuple[str, Span, str, Span] | None:
    """The parts of :func:`item_key`'s string; None when it is not one."""
    parts = key.rsplit("|", 3)
    if len(parts) != 4:
        return None
    try:
        spans = [tuple(int(x) for x in parts[i].split("-")) for i in (1, 3)]
    except ValueError:
        return None
    if any(len(sp) != 2 or sp[0] < 0 or sp[1] <= sp[0] for sp in spans):
        return None
    return parts[0], spans[0], parts[2], spans[1]


def read_run(path: str | Path, problems: Problems, ref: KbpReference | None = None
             ) -> KbpRun | None:
    path = Path(path)
    container = sniff_container(path)
    if container == "object":
        problems.fatal(path, 1, "json", "expected a JSON array of records [{\"doc_id\": ...}, "
                                        "...], found an object")
        return None
    if container == "array":
        return _read_json(path, problems, ref)
    return _read_tsv(path, problems, ref)


def _read_tsv(path: Path, problems: Problems, ref) -> KbpRun | None:
    table = read_table(path, problems, REQUIRED, delimiter="\t")
    if table is None:
        return None
    header, rows = table
    unknown = [h for h in header if h not in COLUMNS]
    if unknown:
        problems.fatal(path, 1, "header", f"unknown column(s) {', '.join(unknown)}; the "
                                          f"columns are {', '.join(COLUMNS)}")
        return None
    for role in ROLES:
        if not ({f"{role}_{c}" for c in OFFSETS} <= set(header)
                or {f"{role}_{c}" for c in TOKENS} <= set(header)):
            problems.fatal(path, 1, "header", f"{role} provenance: needs columns {role}_start "
                                              f"and {role}_end, or {role}_sent, "
                                              f"{role}_token_start and {role}_token_end")
            return None
    run = KbpRun(str(path), [])
    seen: dict[tuple, int | None] = {}
    repeated: dict[tuple[str, str], list[int]] = {}
    for line, row in rows:
        def report(fld: str, message: str, line=line) -> None:
            if fld in GROUPED:
                repeated.setdefault((fld, message), []).append(line)
            else:
                problems.add(path, line, fld, message)
        cells = {k: v.strip() if k not in ("subject", "object") else v for k, v in row.items()}
        _add(run, _record(cells, line, ref, report), seen, report)
        if problems.full:
            break
    for (fld, message), lines in repeated.items():
        problems.add(path, lines[0], fld, message + _also(lines[1:]))
    return run


def _also(lines: list[int]) -> str:
    if not lines:
        return ""
    more = f" and {len(lines) - 3} more" if len(lines) > 3 else ""
    return f" (also on line{'s' if len(lines) > 1 else ''} " + \
        ", ".join(str(x) for x in lines[:3]) + more + ")"


def _read_json(path: Path, problems: Problems, ref) -> KbpRun | None:
    records = iter_records(path, problems, "array")
    if records is None:
        return None
    run = KbpRun(str(path), [])
    seen: dict[tuple, int | None] = {}
    for line, index, value in records:
        def report(fld: str, message: str, line=line, index=index) -> None:
            problems.in_record(path, line, f"record {index}", fld, message)
        if not isinstance(value, dict):
            report("record", "expected an object with doc_id, subject, relation, object ...")
            continue
        unknown = sorted(set(value) - set(COLUMNS))
        if unknown:
            report("record", f"unknown field(s) {', '.join(unknown)}")
            continue
        cells = {k: _cell(v) for k, v in value.items() if v is not None}
        _add(run, _record(cells, line, ref, report), seen, report)
        if problems.full:
            break
    return run


def _cell(v: Any) -> str:
    """A JSON value as the TSV cell it stands for (evidence may be a list of ids)."""
    if isinstance(v, list):
        return ",".join(str(x) for x in v)
    if isinstance(v, bool):
        return str(v).lower()       # refused as a number below, with its JSON spelling
    return v if isinstance(v, str) else str(v)


def _add(run: KbpRun, pred: Prediction | None, seen: dict, report: Report) -> None:
    if pred is None:
        return
    if pred.key in seen:
        first = seen[pred.key]
        report("line", "duplicate: same document, subject span, relation and object span as "
                       + (f"line {first}" if first is not None else "an earlier record"))
        return
    seen[pred.key] = pred.line
    run.predictions.append(pred)


def _record(row: dict[str, str], line, ref: KbpReference | None,
            report: Report) -> Prediction | None:
    ok = True
    for name in REQUIRED:
        if not (row.get(name) or "").strip():
            report(name, "empty")
            ok = False
    if not ok:
        return None
    doc_id = row["doc_id"].strip()
    doc = None
    if ref is not None:
        doc = ref.documents.get(doc_id)
        if doc is None:
            report("doc_id", f"document {doc_id!r} is not in the reference (doc_id is the "
                             f"document's title)")
            return None
    relation = row["relation"].strip()
    if ref is not None:
        rid = ref.relation_id(relation)
        if rid is None:
            report("relation", f"unknown relation {relation!r}: not an id or a label of the "
                               f"task's {len(ref.relations)} relations (e.g. "
                               f"{_examples(ref)})")
            ok = False
        relation = rid or relation
    spans = {role: _span(row, role, doc, report) for role in ROLES}
    confidence = _confidence(row.get("confidence", ""), report)
    evidence = _evidence(row.get("evidence", ""), doc, report)
    if not ok or None in spans.values() or confidence is False or evidence is None:
        return None
    return Prediction(line, doc_id, spans["subject"], relation, spans["object"],
                      row["subject"], row["object"],
                      confidence if isinstance(confidence, float) else None, evidence)


def _examples(ref: KbpReference) -> str:
    return ", ".join(f"{rid} = {label}" for rid, label in list(ref.relations.items())[:2])


def _int(row: dict, name: str, report: Report) -> int | None:
    text = row.get(name, "")
    if not is_digits(text):
        report(name, f"expected a whole number >= 0, found {text!r}")
        return None
    return int(text)


def _span(row: dict, role: str, doc: Document | None, report: Report) -> Span | None:
    """The mention's character span, from offsets or from a token span (both: they
    must agree), checked against the document when there is one."""
    has_offsets = any(row.get(f"{role}_{c}") for c in OFFSETS)
    has_tokens = any(row.get(f"{role}_{c}") for c in TOKENS)
    if not has_offsets and not has_tokens:
        report(role, f"no provenance: give {role}_start and {role}_end, or {role}_sent, "
                     f"{role}_token_start and {role}_token_end")
        return None
    span = _offset_span(row, role, doc, report) if has_offsets else None
    if has_tokens:
        from_tokens = _token_span(row, role, doc, report)
        if from_tokens is None:
            return None
        if has_offsets and span is not None and doc is not None and span != from_tokens:
            report(f"{role}_token_start", f"the token span is characters {from_tokens[0]}-"
                                          f"{from_tokens[1]}, not {role}_start-{role}_end "
                                          f"{span[0]}-{span[1]}")
            return None
        span = span or from_tokens
    if span is None or doc is None:
        return span
    found = doc.text[span[0]:span[1]]
    if row[role] != found:
        report(role, f"{row[role]!r} is not the text at characters {span[0]}-{span[1]} of "
                     f"document {doc.title!r}, which is {found!r}")
        return None
    return span


def _offset_span(row, role, doc, report) -> Span | None:
    start, end = (_int(row, f"{role}_{c}", report) for c in OFFSETS)
    if start is None or end is None:
        return None
    if start >= end:
        report(f"{role}_end", f"{end} is not after {role}_start {start} (end is exclusive)")
        return None
    if doc is not None and end > len(doc.text):
        report(f"{role}_end", f"{end} is past the end of document {doc.title!r} "
                              f"({len(doc.text)} characters)")
        return None
    return start, end


def _token_span(row, role, doc, report) -> Span | None:
    sent, start, end = (_int(row, f"{role}_{c}", report) for c in TOKENS)
    if sent is None or start is None or end is None:
        return None
    if start >= end:
        report(f"{role}_token_end", f"{end} is not after {role}_token_start {start} "
                                    f"(end is exclusive)")
        return None
    if doc is None:               # offsets unknown without the document: a key for duplicates
        return -1 - sent, start * 1_000_000 + end
    if sent >= len(doc.sentences):
        report(f"{role}_sent", f"document {doc.title!r} has {len(doc.sentences)} sentences "
                               f"(0 to {len(doc.sentences) - 1}), not {sent}")
        return None
    if end > len(doc.sentences[sent]):
        report(f"{role}_token_end", f"{end} is past the end of sentence {sent} of document "
                                    f"{doc.title!r} ({len(doc.sentences[sent])} tokens)")
        return None
    return doc.token_span(sent, start, end)


def _confidence(text: str, report: Report) -> float | None | bool:
    """The confidence, None when absent, False when invalid (reported)."""
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        report("confidence", f"expected a finite number, found {text!r}")
        return False
    return value


def _evidence(text: str, doc: Document | None, report: Report) -> tuple[int, ...] | None:
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not all(is_digits(x) for x in items):
        report("evidence", f"expected sentence ids separated by ',', found {text!r}")
        return None
    ids = tuple(int(x) for x in items)
    if doc is not None and any(i >= len(doc.sentences) for i in ids):
        report("evidence", f"document {doc.title!r} has sentences 0 to "
                           f"{len(doc.sentences) - 1}, not {max(ids)}")
        return None
    return ids
