"""The neutral model's helpers: span checks, the tokens token formats write (every span
edge a token boundary), UTF-16 offsets and the text check."""
from __future__ import annotations

from shareval.formats.errors import Problems
from shareval.formats.standoff import (Doc, Relation, Span, annotation_key, check_spans,
                                       check_text, from_utf16, line_sentences,
                                       token_sentences, utf16_offsets)

from .annotated_docs import rich_doc


def test_check_spans_names_the_document_span_and_field():
    doc = Doc("d", "abc", [Span(0, 4, "X", id="s1"), Span(2, 2, "Y", id="s2"),
                           Span(0, 1, "Z", id="s1")], [Relation("s1", "nope", "r")])
    problems = Problems()
    assert not check_spans(doc, problems, "f.json")
    text = [str(p) for p in problems.items]
    assert text[0] == ("f.json: offsets: document 'd' span s1: [0, 4) is not a non-empty "
                       "range inside the text (0-3)")
    assert "span s2: [2, 2)" in text[1]
    assert text[2] == "f.json: id: document 'd' span s1: duplicate span id"
    assert text[3] == "f.json: tail: document 'd' relation 'r': no span with id 'nope'"


def test_check_spans_accepts_spans_at_both_edges():
    assert check_spans(rich_doc(), Problems(), "f")


def test_every_span_is_a_run_of_whole_tokens():
    doc = rich_doc()
    tokens = [t for sent in token_sentences(doc) for t in sent]
    starts, ends = {b for b, _ in tokens}, {e for _, e in tokens}
    for s in doc.spans:
        assert s.begin in starts and s.end in ends, s
    assert tokens == sorted(tokens) and all(b < e for b, e in tokens)
    assert all(e1 <= b2 for (_, e1), (b2, _) in zip(tokens, tokens[1:]))   # no overlap
    # white space is a token only where a span begins or ends in it
    spaces = [doc.text[b:e] for b, e in tokens if not doc.text[b:e].strip()]
    assert spaces == [" ", " "]          # " 😊 " has both; the "\n\n" inside a span is not


def test_sentences_are_lines_and_a_crossing_span_merges_them():
    text = "One line.\n\n  Two here.\nThree"
    assert line_sentences(text) == [(0, 9), (13, 22), (23, 28)]
    doc = Doc("d", text, [Span(17, 25, "X")])
    sents = token_sentences(doc)
    assert len(sents) == 2 and sents[1][0][0] == 13 and sents[1][-1][1] == 28


def test_given_sentences_that_leave_text_out_fall_back_to_lines():
    doc = Doc("d", "A b. C d.", sentences=[(5, 9)])
    assert token_sentences(doc)[0][0] == (0, 1)            # "A" is not lost


def test_utf16_offsets_count_astral_characters_twice():
    assert utf16_offsets("a😊b") == [0, 1, 3, 4]
    assert from_utf16("a😊b") == {0: 0, 1: 1, 3: 2, 4: 3}


def test_check_text_points_at_the_first_difference_and_its_line():
    problems = Problems()
    assert not check_text("ab\ncd", "ab\nce", problems, "x.txt", "text",
                          lambda i: 1 + "ab\ncd".count("\n", 0, i))
    assert str(problems.items[0]) == (
        "x.txt:2: text: text differs from the unit's text at character 4: the file has "
        "'d', the unit has 'e' (lengths 5 and 5)")


def test_annotation_key_ignores_ids_but_not_links_labels_or_relations():
    a = rich_doc()
    b = rich_doc()
    for s in b.spans:
        s.id = "n" + s.id
    for r in b.relations:
        r.head, r.tail = "n" + r.head, "n" + r.tail
    assert annotation_key(a) == annotation_key(b)
    b.spans[0].target = "other"
    assert annotation_key(a) != annotation_key(b)
