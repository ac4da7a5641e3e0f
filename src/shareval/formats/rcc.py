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
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from .errors import Problems
from .jsonfile import iter_records, load_plain


CITATIONS_LAYOUT = "data_set_citations records {publication_id, data_set_id, score, mention_list}"


@dataclass
class Citation:
    publication_id: str
    data_set_id: str
    score: float
    mentions: list[str]
    line: int


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
            problems.add(path, line, f"[{index}]", "expected a JSON object")
            continue
        yield line, rec


def _common(path, line, rec, problems, value_field: str | None, need_score: bool):
    """Check publication_id, score and (optionally) one string field; None when invalid."""
    ok = True
    pub = _id(rec.get("publication_id"))
    if pub is None:
        problems.add(path, line, "publication_id",
                     "missing" if "publication_id" not in rec else
                     f"must be an integer or a non-empty string, found {rec['publication_id']!r}")
        ok = False
    score = 1.0
    if "score" in rec:
        score = _score(rec["score"])
        if score is None:
            problems.add(path, line, "score", f"must be a finite number, found {rec['score']!r}")
            ok = False
    elif need_score:
        problems.add(path, line, "score", "missing")
        ok = False
    value = None
    if value_field is not None:
        value = rec.get(value_field)
        if not isinstance(value, str) or not value.strip():
            problems.add(path, line, value_field,
                         "missing" if value_field not in rec else
                         f"must be a non-empty string, found {value!r}")
            ok = False
    return (pub, score, value) if ok else None


def read_citations(path: str | Path, problems: Problems, submission: bool) -> Citations | None:
    path = Path(path)
    publications = None
    if path.is_dir():
        pubs_path = path / "publications.json"
        path = path / "data_set_citations.json"
        if pubs_path.exists():
            publications = read_publications(pubs_path, problems)
    out: list[Citation] = []
    for line, rec in _records(path, problems, CITATIONS_LAYOUT, "data_set_id"):
        common = _common(path, line, rec, problems, None, need_score=submission)
        ds = _id(rec.get("data_set_id"))
        if ds is None:
            problems.add(path, line, "data_set_id",
                         "missing" if "data_set_id" not in rec else
                         f"must be an integer or a non-empty string, found {rec['data_set_id']!r}")
        mentions = rec.get("mention_list", [])
        if "mention_list" not in rec and submission:
            problems.add(path, line, "mention_list", "missing (use [] when there are none)")
            mentions = None
        elif not isinstance(mentions, list) or not all(isinstance(m, str) for m in mentions):
            problems.add(path, line, "mention_list", "must be a list of strings")
            mentions = None
        if common is None or ds is None or mentions is None:
            continue
        out.append(Citation(common[0], ds, common[1], mentions, line))
    if problems:
        return None
    return Citations(str(path), out, publications)


def read_publications(path: Path, problems: Problems) -> list[str] | None:
    data = load_plain(path, problems)
    if data is None:
        return None
    if not isinstance(data, list):
        problems.fatal(path, 1, "json", "expected a list of publication records")
        return None
    ids = []
    for i, rec in enumerate(data):
        pub = _id(rec.get("publication_id")) if isinstance(rec, dict) else None
        if pub is None:
            problems.add(path, None, f"[{i}].publication_id", "missing or invalid")
            continue
        ids.append(pub)
    return ids


@dataclass
class Mention:
    publication_id: str
    mention: str
    score: float
    line: int


@dataclass
class Mentions:
    path: str
    records: list[Mention]
    warnings: list[str] = field(default_factory=list)


def read_mentions(path: str | Path, problems: Problems) -> Mentions | None:
    path = Path(path)
    out = []
    for line, rec in _records(path, problems, "data_set_mentions records {publication_id, "
                              "mention, score}", "mention"):
        common = _common(path, line, rec, problems, "mention", need_score=False)
        if common is not None:
            out.append(Mention(common[0], common[2], common[1], line))
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
    for line, rec in _records(path, problems, "research_fields or methods records "
                              "{publication_id, research_field|method, score}", None):
        present = [k for k in FIELD_KINDS if k in rec]
        if kind is None and present:
            kind = present[0]
        if kind is None:                       # the first record decides the file's kind
            problems.fatal(path, line, "record", "expected a 'research_field' or a 'method' "
                                                 "field")
            return None
        if kind not in rec:
            problems.add(path, line, "record",
                         f"missing {kind!r} (this file holds {FIELD_KINDS[kind]})")
            continue
        common = _common(path, line, rec, problems, kind, need_score=False)
        if common is not None:
            out.append((common[0], common[2].strip(), common[1], line))
    if problems:
        return None
    if kind is None:
        problems.add(path, None, "file", "no records")
        return None
    return Values(str(path), kind, out)
