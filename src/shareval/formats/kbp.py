"""KBP relation extraction files: a Re-DocRED-style reference and the submissions.

Reference: a JSON list of documents as Re-DocRED's (``title``, ``sents``: lists of
tokens, ``vertexSet``: entities as lists of mentions with ``sent_id`` and token
``pos`` [start, end), ``labels``: ``h``, ``t`` entity indices and ``r`` a relation
id) plus ``relations.json`` (relation id -> English label). Either a folder with
``documents.json`` and ``relations.json``, or the documents file itself with
``relations.json`` beside it.

A document's text is its tokens joined by single spaces, sentences joined by a
single space too: character offsets count in that text (end exclusive).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .errors import Problems, read_text

DOCUMENTS, RELATIONS = "documents.json", "relations.json"

Span = tuple[int, int]           # character offsets in the document text, end exclusive


@dataclass
class Document:
    title: str
    sentences: list[list[str]]
    text: str
    token_starts: list[list[int]]     # per sentence, the character offset of each token
    entities: list[set[Span]]         # per entity, its mentions' spans
    labels: set[tuple[int, int, str]]  # (head entity, tail entity, relation id)
    merged: int = 0                   # entities merged into an earlier one with the same mentions
    types: list[str] = field(default_factory=list)   # per entity, its mentions' commonest type

    def mention_type(self, span: Span) -> str:
        """The type of the entity a span is a mention of ('' when none is)."""
        for e, spans in enumerate(self.entities):
            if span in spans:
                return self.types[e] if e < len(self.types) else ""
        return ""

    def token_span(self, sent: int, start: int, end: int) -> Span:
        """Character offsets of tokens [start, end) of sentence ``sent``."""
        starts = self.token_starts[sent]
        return starts[start], starts[end - 1] + len(self.sentences[sent][end - 1])


@dataclass
class KbpReference:
    path: str
    documents: dict[str, Document]
    relations: dict[str, str]                       # id -> label
    by_label: dict[str, str] = field(default_factory=dict)   # label (lower case) -> id
    warnings: list[str] = field(default_factory=list)

    def relation_id(self, name: str) -> str | None:
        """The id of a relation given by id or by its label (any letter case)."""
        if name in self.relations:
            return name
        return self.by_label.get(name.strip().lower())


def layout_text(sentences: list[list[str]]) -> tuple[str, list[list[int]]]:
    """The document text (tokens and sentences joined by single spaces) and token offsets."""
    starts, pos = [], 0
    for sent in sentences:
        row = []
        for tok in sent:
            row.append(pos)
            pos += len(tok) + 1
        starts.append(row)
    text = " ".join(" ".join(s) for s in sentences if s)
    return text, starts


def reference_paths(path: str | Path) -> tuple[Path, Path]:
    """(documents, relations) of a reference folder or documents file. A folder without
    documents.json whose only other JSON file is the documents (as ../shared/data/kbp)."""
    p = Path(path)
    if not p.is_dir():
        return p, p.parent / RELATIONS
    others = [f for f in sorted(p.glob("*.json")) if f.name != RELATIONS]
    if not (p / DOCUMENTS).exists() and len(others) == 1:
        return others[0], p / RELATIONS
    return p / DOCUMENTS, p / RELATIONS


def _load_json(path: Path, problems: Problems):
    text = read_text(path, problems)
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        problems.fatal(path, e.lineno, "json", e.msg, column=e.colno)
        return None


def read_relations(path: Path, problems: Problems) -> dict[str, str] | None:
    rel = _load_json(path, problems)
    if rel is None:
        return None
    if not isinstance(rel, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                            for k, v in rel.items()):
        problems.fatal(path, 1, "json", "expected an object {relation id: label}")
        return None
    return rel


def read_reference(path: str | Path, problems: Problems) -> KbpReference | None:
    docs_path, rel_path = reference_paths(path)
    relations = read_relations(rel_path, problems)
    raw = _load_json(docs_path, problems)
    if relations is None or raw is None:
        return None
    if not isinstance(raw, list):
        problems.fatal(docs_path, 1, "json", "expected a JSON array of documents")
        return None
    documents: dict[str, Document] = {}
    first_index: dict[str, int] = {}
    for i, d in enumerate(raw):
        doc = _document(docs_path, i, d, relations, problems)
        if doc is None:
            continue
        if doc.title in documents:
            problems.in_record(docs_path, None, f"document {i}", "title",
                               f"duplicate title {doc.title!r} (first: document "
                               f"{first_index[doc.title]})")
            continue
        documents[doc.title], first_index[doc.title] = doc, i
    if not raw:
        problems.add(docs_path, None, "file", "no documents")
    by_label = {label.lower(): rid for rid, label in relations.items()}
    ref = KbpReference(str(docs_path), documents, relations, by_label)
    merged = [f"{t!r} ({d.merged})" for t, d in documents.items() if d.merged]
    if merged:
        ref.warnings.append(f"entities with the very same mentions are one entity (their "
                            f"labels merged), in {len(merged)} document(s): "
                            + ", ".join(merged[:3]) + (" ..." if len(merged) > 3 else ""))
    return ref


def _document(path: Path, i: int, d, relations: dict[str, str],
              problems: Problems) -> Document | None:
    def bad(fld: str, message: str) -> None:
        problems.in_record(path, None, f"document {i}", fld, message)

    if not isinstance(d, dict) or not {"title", "sents", "vertexSet", "labels"} <= set(d):
        bad("document", "expected an object with title, sents, vertexSet and labels")
        return None
    title, sents = d["title"], d["sents"]
    if not isinstance(title, str) or not title.strip() or "\t" in title or "\n" in title:
        bad("title", "expected a non-empty title without tabs or line breaks")
        return None
    if not isinstance(sents, list) or not all(
            isinstance(s, list) and all(isinstance(t, str) and t for t in s) for s in sents):
        bad("sents", "expected a list of sentences, each a list of non-empty token strings")
        return None
    text, starts = layout_text(sents)
    doc = Document(title, sents, text, starts, [], set())
    for e, entity in enumerate(d["vertexSet"] if isinstance(d["vertexSet"], list) else [None]):
        spans, kinds = set(), {}
        for m in entity if isinstance(entity, list) else [None]:
            span = _mention_span(doc, m)
            if span is None:
                bad("vertexSet", f"entity {e}: a mention needs sent_id and pos [start, end) "
                                 f"of tokens in that sentence")
                return None
            spans.add(span)
            kind = m.get("type")
            if isinstance(kind, str) and kind.strip():
                kinds[kind.strip()] = kinds.get(kind.strip(), 0) + 1
        doc.entities.append(spans)
        # the commonest type of the entity's mentions (ties: alphabetical); '' if untyped
        doc.types.append(min(kinds, key=lambda k: (-kinds[k], k)) if kinds else "")
    same = _same_entities(doc.entities)
    for lab in d["labels"] if isinstance(d["labels"], list) else [None]:
        ok = isinstance(lab, dict) and all(
            isinstance(lab.get(k), int) and 0 <= lab[k] < len(doc.entities) for k in ("h", "t"))
        if not ok:
            bad("labels", "a label needs h and t, indices of entities of the document")
            return None
        if lab.get("r") not in relations:
            bad("labels", f"relation {lab.get('r')!r} is not in {RELATIONS}")
            return None
        doc.labels.add((same[lab["h"]], same[lab["t"]], lab["r"]))
    doc.merged = sum(i != j for i, j in enumerate(same))
    return doc


def _same_entities(entities: list[set[Span]]) -> list[int]:
    """Each entity's index, or the first one's with the very same mentions: spans
    cannot tell such entities apart, so their labels are one entity's."""
    first: dict[frozenset, int] = {}
    return [first.setdefault(frozenset(spans), i) for i, spans in enumerate(entities)]


def _mention_span(doc: Document, m) -> Span | None:
    if not isinstance(m, dict):
        return None
    sent, pos = m.get("sent_id"), m.get("pos")
    if not isinstance(sent, int) or not 0 <= sent < len(doc.sentences):
        return None
    if not (isinstance(pos, list) and len(pos) == 2 and all(isinstance(x, int) for x in pos)
            and 0 <= pos[0] < pos[1] <= len(doc.sentences[sent])):
        return None
    return doc.token_span(sent, pos[0], pos[1])
