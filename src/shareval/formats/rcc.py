"""Rich Context Competition files: lists of JSON records.

* ``data_set_citations.json``: ``{publication_id, data_set_id, score, mention_list}``
  (``citation_id`` optional). In a reference, ``score`` and ``mention_list``
  may be absent.
* ``data_set_mentions.json``: ``{publication_id, mention, score?}``.
* ``research_fields.json`` / ``methods.json``:
  ``{publication_id, research_field|method, score?}``.

Ids may be integers or strings; they are compared as strings.
A reference may also be given as a folder holding ``data_set_citations.json``
and, optionally, ``publications.json`` (the evaluated publications).

A problem names its record by index and publication (``record 17 (publication
3735)``): a file written by a plain ``json.dump`` has every record on line 1.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from .errors import Problems
from .jsonfile import iter_records


CITATIONS_LAYOUT = "data_set_citations records {publication_id, data_set_id, score, mention_list}"


@dataclass(slots=True)             # one per record: no __dict__ each (uploads' memory)
class Citation:
    publication_id: str
    data_set_id: str
    score: float
    mentions: list[str]
    line: int
    index: int = 0                  # the record's position in the file's array


@dataclass
class Citations:
    path: str
    records: list[Citation]
    publications: list[str] | None = None   # the evaluated corpus, when known
    warnings: list[str] = field(default_factory=list)


def _id(value) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _score(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


@dataclass
class _Record:
    """One record of a JSON array, where it is and what problems call it."""
    line: int
    index: int
    fields: dict

    @property
    def name(self) -> str:
        """``record 17 (publication 3735)``; ``record 17`` without a valid publication id."""
        pub = _id(self.fields.get("publication_id"))
        return f"record {self.index}" + ("" if pub is None else f" (publication {pub})")


def _records(path: Path, problems: Problems, layout: str, key: str | None):
    """Records of a JSON array. The first record shows the layout: when it is not
    an object, or lacks ``key``, the file is of another kind (fatal, reported alone)."""
    it = iter_records(path, problems, "array")
    if it is None:
        return
    for line, index, rec in it:
        if index == 0 and (not isinstance(rec, dict) or (key is not None and key not in rec)):
            found = f"a record without {key!r}" if isinstance(rec, dict) else \
                f"a JSON {type(rec).__name__}"
            problems.fatal(path, line, "[0]", f"expected {layout}, found {found}")
            return
        if not isinstance(rec, dict):
            problems.in_record(path, line, f"record {index}", "record", "expected a JSON object")
            continue
        yield _Record(line, index, rec)


def _problem(problems: Problems, path, rec: _Record, field_name: str, message: str) -> None:
    problems.in_record(path, rec.line, rec.name, field_name, message)


def _common(path, rec: _Record, problems, value_field: str | None, need_score: bool):
    """Check publication_id, score and (optionally) one string field; None when invalid."""
    ok = True
    fields = rec.fields
    pub = _id(fields.get("publication_id"))
    if pub is None:
        _problem(problems, path, rec, "publication_id",
                 "missing" if "publication_id" not in fields else
                 f"must be an integer or a non-empty string, found {fields['publication_id']!r}")
        ok = False
    score = 1.0
    if "score" in fields:
        score = _score(fields["score"])
        if score is None:
            _problem(problems, path, rec, "score",
                     f"must be a finite number, found {fields['score']!r}")
            ok = False
    elif need_score:
        _problem(problems, path, rec, "score", "missing")
        ok = False
    value = None
    if value_field is not None:
        value = fields.get(value_field)
        if not isinstance(value, str) or not value.strip():
            _problem(problems, path, rec, value_field,
                     "missing" if value_field not in fields else
                     f"must be a non-empty string, found {value!r}")
            ok = False
    return (pub, score, value) if ok else None


def read_citations(path: str | Path, problems: Problems, submission: bool,
                   keep=None) -> Citations | None:
    """The citations of ``path`` (a file, or a reference folder), None with the
    problems recorded. ``keep(citation)``: which valid records to hold (default all;
    validation holds only those it reports, so its memory does not grow per record)."""
    path = Path(path)
    publications = None
    if path.is_dir():
        pubs_path = path / "publications.json"
        path = path / "data_set_citations.json"
        if pubs_path.exists():
            publications = read_publications(pubs_path, problems)
    out: list[Citation] = []
    one = {}.setdefault        # one string per distinct id: publications and datasets repeat
    for rec in _records(path, problems, CITATIONS_LAYOUT, "data_set_id"):
        common = _common(path, rec, problems, None, need_score=submission)
        ds = _data_set_id(path, rec, problems)
        mentions = _mention_list(path, rec, problems, submission)
        if common is None or ds is None or mentions is None:
            continue
        citation = Citation(common[0], ds, common[1], mentions, rec.line, rec.index)
        if keep is None or keep(citation):
            citation.publication_id = one(common[0], common[0])
            citation.data_set_id = one(ds, ds)
            out.append(citation)
    if problems:
        return None
    return Citations(str(path), out, publications)


def _data_set_id(path, rec: _Record, problems: Problems) -> str | None:
    ds = _id(rec.fields.get("data_set_id"))
    if ds is None:
        _problem(problems, path, rec, "data_set_id",
                 "missing" if "data_set_id" not in rec.fields else
                 f"must be an integer or a non-empty string, found {rec.fields['data_set_id']!r}")
    return ds


def _mention_list(path, rec: _Record, problems: Problems, submission: bool) -> list | None:
    mentions = rec.fields.get("mention_list", [])
    if "mention_list" not in rec.fields and submission:
        _problem(problems, path, rec, "mention_list", "missing (use [] when there are none)")
        return None
    if not isinstance(mentions, list) or not all(isinstance(m, str) for m in mentions):
        _problem(problems, path, rec, "mention_list", "must be a list of strings")
        return None
    return mentions


def read_publications(path: Path, problems: Problems) -> list[str] | None:
    it = iter_records(path, problems, "array")
    if it is None:
        return None
    ids = []
    for line, index, rec in it:
        pub = _id(rec.get("publication_id")) if isinstance(rec, dict) else None
        if pub is None:
            problems.in_record(path, line, f"record {index}", "publication_id",
                               "missing or invalid")
            continue
        ids.append(pub)
    return None if problems.has_fatal else ids


@dataclass(slots=True)
class Mention:
    publication_id: str
    mention: str
    score: float
    line: int
    index: int = 0                  # the record's position in the file's array


@dataclass
class Mentions:
    path: str
    records: list[Mention]
    warnings: list[str] = field(default_factory=list)


def read_mentions(path: str | Path, problems: Problems) -> Mentions | None:
    path = Path(path)
    out = []
    for rec in _records(path, problems, "data_set_mentions records {publication_id, "
                        "mention, score}", "mention"):
        common = _common(path, rec, problems, "mention", need_score=False)
        if common is not None:
            out.append(Mention(common[0], common[2], common[1], rec.line, rec.index))
    if problems:
        return None
    return Mentions(str(path), out)


FIELD_KINDS = {"research_field": "research fields", "method": "methods"}


@dataclass
class Values:
    """Research fields or methods assigned to publications."""
    path: str
    kind: str                       # "research_field" or "method"
    records: list[tuple[str, str, float, int]]   # (publication, value, score, line)
    warnings: list[str] = field(default_factory=list)


def read_values(path: str | Path, problems: Problems) -> Values | None:
    path = Path(path)
    kind = None
    out = []
    for rec in _records(path, problems, "research_fields or methods records "
                        "{publication_id, research_field|method, score}", None):
        present = [k for k in FIELD_KINDS if k in rec.fields]
        if kind is None and present:
            kind = present[0]
        if kind is None:                       # the first record decides the file's kind
            problems.fatal(path, rec.line, "record", "expected a 'research_field' or a "
                                                     "'method' field")
            return None
        if kind not in rec.fields:
            _problem(problems, path, rec, kind, f"missing (this file holds {FIELD_KINDS[kind]})")
            continue
        common = _common(path, rec, problems, kind, need_score=False)
        if common is not None:
            out.append((common[0], common[2].strip(), common[1], rec.line))
    if problems:
        return None
    if kind is None:
        problems.add(path, None, "file", "no records")
        return None
    return Values(str(path), kind, out)
