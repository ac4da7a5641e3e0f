"""Answers of the ``exhaustive`` design: every relation a document states.

An item's payload (judging/exhaustive_build.py) holds the document's tokens
(``sentences``) with their character offsets (``starts``), the relation
inventory (``relations``: id -> label) and the pooled system outputs as
``suggestions`` (item keys with their spans). A posted answer is either

* the stored form ``{"relations": [item keys]}`` (adjudications, gold), or
* the page's form ``{"accepted": [suggestion keys], "rejected": [suggestion
  keys], "added": [{"subject": [start, end], "relation": id or label,
  "object": [start, end]}]}``. With ``rejected`` given, every suggestion must
  be accepted or rejected; without it (crowd batches) the suggestions not
  accepted are rejected.

A relation's mentions are character offsets in the document text (end
exclusive): non-empty, inside the text, starting where a token starts and
ending where one ends, subject and object not the same span; its relation is
one of the inventory. Stored: ``{"relations": sorted item keys}``.
"""
from __future__ import annotations

from shareval.formats.kbp_runs import item_key, parse_item_key

from shareval.platform.judging.designs import BadAnswer

MAX_RELATIONS = 2000          # per document: a bound on what one answer stores


def document_text(payload: dict) -> str:
    return " ".join(" ".join(s) for s in payload.get("sentences", []) if s)


def token_bounds(payload: dict) -> tuple[set[int], set[int]]:
    """Character offsets where tokens start and where they end."""
    starts, ends = set(), set()
    for sent, offs in zip(payload.get("sentences", []), payload.get("starts", [])):
        for tok, s in zip(sent, offs):
            starts.add(s)
            ends.add(s + len(tok))
    return starts, ends


class _Doc:
    def __init__(self, doc: str, payload: dict):
        self.doc, self.text = doc, document_text(payload)
        self.starts, self.ends = token_bounds(payload)
        self.relations = dict(payload.get("relations") or {})
        self.by_label = {v.lower(): k for k, v in self.relations.items()}
        self.suggestions = [s["key"] for s in payload.get("suggestions", [])]

    def span(self, value, where: str) -> tuple[int, int]:
        if not (isinstance(value, (list, tuple)) and len(value) == 2 and
                all(isinstance(x, int) and not isinstance(x, bool) for x in value)):
            raise BadAnswer(f"{where}: two character offsets [start, end] are needed")
        s, e = value
        if s >= e:
            raise BadAnswer(f"{where}: empty (start {s} is not before end {e})")
        if s < 0 or e > len(self.text):
            raise BadAnswer(f"{where}: characters {s}-{e} are outside the document text "
                            f"(0-{len(self.text)})")
        if s not in self.starts or e not in self.ends:
            raise BadAnswer(f"{where}: characters {s}-{e} ({self.text[s:e]!r}) do not fall on "
                            f"token boundaries")
        return s, e

    def relation(self, value, where: str, labels: bool = True) -> str:
        rid = None
        if isinstance(value, str):
            rid = value if value in self.relations else \
                self.by_label.get(value.strip().lower()) if labels else None
        if rid is None:
            raise BadAnswer(f"{where}: {value!r} is not a relation of the inventory")
        return rid

    def key(self, subject, relation, obj, where: str, labels: bool = True) -> str:
        s = self.span(subject, f"{where}: subject")
        o = self.span(obj, f"{where}: object")
        rid = self.relation(relation, f"{where}: relation", labels)
        if s == o:
            raise BadAnswer(f"{where}: the subject and the object are the same mention "
                            f"(characters {s[0]}-{s[1]})")
        return item_key(self.doc, s, rid, o)


def _keys(raw: dict, field: str) -> list[str]:
    v = raw.get(field, [])
    if not isinstance(v, list) or not all(isinstance(k, str) for k in v):
        raise BadAnswer(f"{field}: a list of relation keys is needed")
    if len(v) > MAX_RELATIONS:
        raise BadAnswer(f"{field}: at most {MAX_RELATIONS} relations per document")
    return v


def clean(doc: str, payload: dict, raw) -> dict:
    d = _Doc(doc, payload)
    if not isinstance(raw, dict):
        raise BadAnswer("the answer must be an object")
    page = {"accepted", "rejected", "added"} & set(raw)
    if "relations" in raw:
        if page:
            raise BadAnswer("give relations, or accepted, rejected and added, not both")
        return {"relations": sorted(_stored(d, _keys(raw, "relations")))}
    suggested = set(d.suggestions)
    accepted, rejected = _keys(raw, "accepted"), _keys(raw, "rejected")
    for field, keys in (("accepted", accepted), ("rejected", rejected)):
        for k in keys:
            if k not in suggested:
                raise BadAnswer(f"{field}: {k!r} is not a suggestion of this document")
    both = set(accepted) & set(rejected)
    if both:
        raise BadAnswer(f"{len(both)} suggestion(s) both accepted and rejected")
    if "rejected" in raw:
        undecided = suggested - set(accepted) - set(rejected)
        if undecided:
            raise BadAnswer(f"decide every suggestion: {len(undecided)} not yet accepted or "
                            f"rejected")
    added = raw.get("added", [])
    if not isinstance(added, list) or not all(isinstance(a, dict) for a in added):
        raise BadAnswer("added: a list of {subject, relation, object} is needed")
    if len(added) + len(accepted) > MAX_RELATIONS:
        raise BadAnswer(f"at most {MAX_RELATIONS} relations per document")
    out = set(accepted)
    for i, a in enumerate(added, 1):
        k = d.key(a.get("subject"), a.get("relation"), a.get("object"), f"added relation {i}")
        if k in rejected:
            raise BadAnswer(f"added relation {i}: it is a suggestion you rejected")
        out.add(k)
    return {"relations": sorted(out)}


def _stored(d: _Doc, keys: list[str]) -> set[str]:
    out = set()
    suggested = set(d.suggestions)
    for i, k in enumerate(keys, 1):
        if k in suggested:
            out.add(k)
            continue
        parts = parse_item_key(k)
        if parts is None or parts[0] != d.doc:
            raise BadAnswer(f"relations[{i}]: {k!r} is not a relation mention of this document")
        _, s, rid, o = parts
        out.add(d.key(list(s), rid, list(o), f"relations[{i}]", labels=False))
    return out


def labels(payload: dict, answer: dict) -> dict[str, str]:
    """Per suggestion yes/no, per added relation yes: the units agreement compares."""
    marked = set(answer["relations"])
    out = {s["key"]: "yes" if s["key"] in marked else "no"
           for s in payload.get("suggestions", [])}
    out.update({k: "yes" for k in marked})
    return out
