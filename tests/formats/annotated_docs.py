"""Annotated documents the format tests write and read back: unicode (an emoji counts two
UTF-16 units), spans at both text edges, adjacent, nested, stacked (same extent twice) and
crossing spans, a span starting in white space, reserved characters of every format, links,
relations, answers and sentence links, an empty document; and real documents built from
../shared/data."""
from __future__ import annotations

import json

from shareval.formats.standoff import Doc, Relation, Span

TEXT = ("Los Angeles 😊 uses [ALLBUS|2010]_* data;\n\n"
        "The ALLBUS 2012 -> survey\tand NHANES.\\n end")


def rich_doc() -> Doc:
    t = TEXT
    spans = [Span(0, 11, "LOC", "Q65", "la"),                     # at the start
             Span(0, 3, "X", "", "los"),                          # nested, unlinked
             Span(20, 26, "DS", "allbus", "a1"),                  # adjacent to the next
             Span(26, 31, "YEAR", "", "y1"),
             Span(20, 31, "DS", "allbus-2010", "a2"),             # stacked over both
             Span(20, 31, "DS|*", "x_y", "a3"),                   # same extent, reserved chars
             Span(29, 47, "CROSS", "", "c"),                      # crosses the paragraph break
             Span(11, 14, "EMO", "", "emo"),                      # begins in white space
             Span(len(t) - 3, len(t), "END", "k:1", "end")]       # at the end
    assert t[20:26] == "ALLBUS" and t[26:31] == "|2010" and t[11:14] == " 😊 "
    rels = [Relation("la", "a1", "uses"), Relation("a2", "los", ""), Relation("a1", "a2", "->|")]
    return Doc("pub|7", t, spans, rels, answers={"cited": "yes"},
               meta={"variables": ["v1", "v2"], "title": "A title"})


def plain_doc() -> Doc:
    return Doc("42", "Survey data.", [Span(0, 6, "DS", "d1", "s")])


def empty_doc() -> Doc:
    return Doc("empty", "")


def rcc_docs(shared_data, count=3) -> list[Doc]:
    """The first ``count`` training publications with a citation, each mention string of
    the gold found in the text as a span linked to its data set (first occurrence only,
    longer mentions first so that a shorter one nested in it is a second span)."""
    rcc = shared_data / "rcc" / "train"
    cites = json.loads((rcc / "data_set_citations.json").read_text(encoding="utf-8"))
    by_pub: dict[str, list] = {}
    for c in cites:
        by_pub.setdefault(str(c["publication_id"]), []).append(c)
    docs = []
    for pub in sorted(by_pub, key=int):
        path = rcc / "texts" / f"{pub}.json"
        if not path.exists():
            continue
        text = json.loads(path.read_text(encoding="utf-8"))["reduced_content"]
        spans = []
        for c in by_pub[pub]:
            for m in sorted(set(c["mention_list"]), key=len, reverse=True):
                at = text.find(m)
                if m.strip() and at >= 0:
                    spans.append(Span(at, at + len(m), "dataset", str(c["data_set_id"]),
                                      f"s{len(spans)}"))
        if spans:
            docs.append(Doc(pub, text, spans))
        if len(docs) == count:
            break
    return docs


def redocred_docs(shared_data, count=3) -> list[Doc]:
    """Re-DocRED documents as Docs: the reader's text, an entity's mentions as spans
    linked to ``e<index>``, labels as relations between first mentions."""
    from shareval.formats.errors import Problems
    from shareval.formats.kbp import read_reference
    ref = read_reference(shared_data / "kbp", Problems())
    docs = []
    for title, d in list(ref.documents.items())[:count]:
        spans, first = [], {}
        for e, mentions in enumerate(d.entities):
            for b, end in sorted(mentions):
                sid = f"m{len(spans)}"
                first.setdefault(e, sid)
                spans.append(Span(b, end, d.types[e], f"e{e}", sid))
        rels = [Relation(first[h], first[t], r) for h, t, r in sorted(d.labels)]
        sentences = [d.token_span(i, 0, len(toks)) for i, toks in enumerate(d.sentences) if toks]
        docs.append(Doc(title, d.text, spans, rels, sentences))
    return docs, ref
