"""Gold files the scorers read, written from annotated documents.

* RCC (:func:`write_rcc_gold`): a reference folder as :mod:`.rcc` reads it.
  A document is a publication (``meta["publication_id"]``, else its id) or a
  publication–dataset pair (``meta["data_set_id"]``: the pair's data set, the target of
  its spans that have none). ``data_set_citations.json``: one record per (publication,
  linked data set) with the texts of the spans linked to it; ``data_set_mentions.json``:
  one record per (publication, distinct text of a linked span): the scorer's gold
  mentions are the citations' mention lists, so an unlinked span is not a gold mention;
  ``publications.json``: every document's publication (the evaluated corpus, also those
  with no citation). Numeric ids are written as integers, as the competition's files.
* SV-Ident (:func:`write_svident_tsv`): one row per document (a sentence): ``sentence,
  is_variable, variable, research_data, doc_id, uuid, lang``. The variables are
  ``meta["variables"]`` (sentence links) and the spans' targets; ``is_variable`` is
  ``answers["is_variable"]`` (yes/no/1/0) when given, else whether there is a link or a
  span; a variable sentence with no link gets ``unk``. ``uuid`` defaults to the id.
* Re-DocRED (:func:`write_redocred`): ``title``, ``sents`` (tokens per sentence, split at
  white space and at span edges), ``vertexSet`` (spans with the same target are one
  entity; an unlinked span is its own), ``labels`` (relations between entities, ``r``
  the relation label) and ``relations.json`` beside it.
"""
from __future__ import annotations

import json
from pathlib import Path

from .digits import is_digits
from .errors import Problems
from .standoff import LINKS, NON_SPACE, Doc, check_spans, named_spans, token_sentences

YES = {"yes", "1", "true"}
NO = {"no", "0", "false"}


def _checked(docs: list[Doc], what: str) -> None:
    problems = Problems()
    for doc in docs:
        check_spans(doc, problems, what)
    problems.raise_if_any()


def _json_id(value: str):
    number = is_digits(value) and not (len(value) > 1 and value[0] == "0")
    return int(value) if number else value


def _dump(path: Path, records) -> None:
    path.write_text(json.dumps(records, ensure_ascii=False) + "\n", encoding="utf-8")


def write_rcc_gold(docs: list[Doc], folder: Path) -> Path:
    _checked(docs, "rcc gold")
    folder.mkdir(parents=True, exist_ok=True)
    citations: dict[tuple[str, str], list[str]] = {}
    mentions: dict[tuple[str, str], None] = {}
    publications: dict[str, None] = {}
    for doc in docs:
        pub = str(doc.meta.get("publication_id") or doc.id)
        publications[pub] = None
        pair = str(doc.meta.get("data_set_id") or "")
        for s in sorted(doc.spans, key=lambda s: (s.begin, s.end)):
            text = doc.text[s.begin:s.end]
            target = s.target or pair
            if target:
                mentions[pub, text] = None
                texts = citations.setdefault((pub, target), [])
                if text not in texts:
                    texts.append(text)
    _dump(folder / "data_set_citations.json",
          [{"publication_id": _json_id(p), "data_set_id": _json_id(d), "score": 1.0,
            "mention_list": texts} for (p, d), texts in citations.items()])
    _dump(folder / "data_set_mentions.json",
          [{"publication_id": _json_id(p), "mention": m, "score": 1.0} for p, m in mentions])
    _dump(folder / "publications.json", [{"publication_id": _json_id(p)} for p in publications])
    return folder


SVIDENT_COLUMNS = ("sentence", "is_variable", "variable", "research_data", "doc_id", "uuid",
                   "lang")


def write_svident_tsv(docs: list[Doc], path: Path) -> Path:
    _checked(docs, "svident gold")
    problems = Problems()
    rows = []
    for doc in docs:
        variables = list(dict.fromkeys([*doc.meta.get(LINKS, []),
                                        *(s.target for s in doc.spans if s.target)]))
        answer = str(doc.answers.get("is_variable", "")).strip().lower()
        if answer and answer not in YES | NO:
            problems.add("svident gold", None, "is_variable",
                         f"document {doc.id!r}: answer {answer!r} is not yes or no")
        flag = answer in YES if answer else bool(variables or doc.spans)
        rows.append([" ".join(doc.text.split()), "1" if flag else "0",
                     ";".join(variables or ["unk"]) if flag else "",
                     str(doc.meta.get("research_data", "")), str(doc.meta.get("doc_id", "")),
                     str(doc.meta.get("uuid") or doc.id), str(doc.meta.get("lang", ""))])
    problems.raise_if_any()
    path.parent.mkdir(parents=True, exist_ok=True)
    # plain tab-joined cells, as the shared task's files (no CSV quoting of '"')
    path.write_text("".join("\t".join(" ".join(c.split()) for c in row) + "\n"
                            for row in [list(SVIDENT_COLUMNS), *rows]), encoding="utf-8")
    return path


def write_redocred(docs: list[Doc], path: Path, relations: dict[str, str] | None = None
                   ) -> Path:
    """The documents file at ``path`` and ``relations.json`` beside it: ``relations``
    (id -> label) when given, else each relation label standing for itself."""
    _checked(docs, "re-docred gold")
    out, used = [], {}
    for doc in docs:
        if not doc.text.strip():
            raise ValueError(f"document {doc.id!r} has no text: Re-DocRED needs tokens")
        sents = token_sentences(doc, NON_SPACE)
        where = {tok: (i, j) for i, toks in enumerate(sents) for j, tok in enumerate(toks)}
        begins = {b: where[(b, e)] for (b, e) in where}
        ends = {e: where[(b, e)] for (b, e) in where}
        entities: dict[str, int] = {}
        vertex: list[list[dict]] = []
        spans = named_spans(doc)
        of_span = {}
        for sid, s in sorted(spans.items(), key=lambda kv: (kv[1].begin, kv[1].end)):
            key = f"target:{s.target}" if s.target else f"span:{sid}"
            if key not in entities:
                entities[key] = len(vertex)
                vertex.append([])
            of_span[sid] = entities[key]
            sent, first = begins[s.begin]
            _, last = ends[s.end]
            vertex[entities[key]].append({"name": doc.text[s.begin:s.end], "sent_id": sent,
                                          "pos": [first, last + 1], "type": s.label})
        labels = {(of_span[r.head], of_span[r.tail], r.label): None for r in doc.relations}
        for *_, r in labels:
            used[r] = r
        out.append({"title": doc.id,
                    "sents": [[doc.text[b:e] for b, e in toks] for toks in sents],
                    "vertexSet": vertex,
                    "labels": [{"h": h, "t": t, "r": r, "evidence": []} for h, t, r in labels]})
    path.parent.mkdir(parents=True, exist_ok=True)
    _dump(path, out)
    _dump(path.parent / "relations.json", relations if relations is not None else used)
    return path
