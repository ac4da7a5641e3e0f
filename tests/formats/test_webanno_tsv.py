"""WebAnno TSV 3.3: exact round trips (stacked, nested, crossing spans, UTF-16 offsets,
reserved characters, paragraph breaks) and problems at file:line:field."""
from __future__ import annotations

import pytest

from shareval.formats.errors import Problems
from shareval.formats.standoff import Doc, annotation_key
from shareval.formats.webanno_tsv import (HEADER, escape_value, read_webanno_tsv,
                                          unescape_value, write_webanno_tsv)

from .annotated_docs import empty_doc, plain_doc, rcc_docs, redocred_docs, rich_doc


def _write(tmp_path, doc, name=None):
    path = tmp_path / (name or f"{doc.id}.tsv")
    path.write_text(write_webanno_tsv(doc), encoding="utf-8")
    return path


def _read(path, expected=None):
    problems = Problems()
    docs = read_webanno_tsv(path, problems, expected)
    return docs, [str(p) for p in problems.items]


def _key_without_doc_level(doc):
    doc = Doc(doc.id, doc.text, doc.spans, doc.relations)      # answers and links: not in TSV
    return annotation_key(doc)


def test_round_trip_is_exact_with_the_units_text(tmp_path):
    doc = rich_doc()
    path = _write(tmp_path, doc, "pub_7.tsv")
    docs, problems = _read(path, {"pub|7": doc.text})
    assert problems == []
    assert docs[0].id == "pub|7"                       # the safe file name stands for the id
    assert _key_without_doc_level(docs[0]) == _key_without_doc_level(doc)


def test_the_written_file_follows_the_format(tmp_path):
    text = write_webanno_tsv(rich_doc())
    assert text.startswith(HEADER) and HEADER.endswith("\n\n\n")
    lines = text.split("\n")
    # one sentence (a span crosses the paragraph break), its text on three #Text lines
    assert lines[5:8] == ["#Text=Los Angeles 😊 uses [ALLBUS|2010]_* data;", "#Text=",
                          "#Text=The ALLBUS 2012 -> survey\\tand NHANES.\\\\n end"]
    # Los: LOC over two tokens [1] stacked with X [2]; a relation sits on its dependent's
    # line, with the governor's first token and [governor_dependent]
    assert lines[8].split("\t") == ["1-1", "0-3", "Los", "Q65[1]|*[2]", "LOC[1]|X[2]", "*",
                                    "1-8[5_2]"]
    emoji = next(line for line in lines if "\t😊\t" in line)
    assert emoji.split("\t")[:2] == ["1-4", "12-14"]            # UTF-16 offsets
    assert "DS\\|\\*[" in text and "x\\_y[" in text and "\\->\\|" in text


@pytest.mark.parametrize("value", ["a|b", "x_y", "[1]", "->", "a;b", "*", "back\\slash",
                                   "tab\there", "\\[", ""])
def test_value_escaping_round_trips(value):
    assert unescape_value(escape_value(value)) == value


def test_plain_and_empty_documents(tmp_path):
    for doc in (plain_doc(), empty_doc()):
        docs, problems = _read(_write(tmp_path, doc), {doc.id: doc.text})
        assert problems == [] and annotation_key(docs[0]) == annotation_key(doc)


def test_without_the_units_text_a_leading_gap_becomes_spaces(tmp_path):
    doc = Doc("d", "\n\nHello world.")
    docs, problems = _read(_write(tmp_path, doc))
    assert problems == [] and docs[0].text == "  Hello world."
    docs, problems = _read(_write(tmp_path, doc), {"d": doc.text})
    assert docs[0].text == doc.text


def _broken(tmp_path, old, new, doc=None):
    doc = doc or plain_doc()
    path = tmp_path / f"{doc.id}.tsv"
    text = write_webanno_tsv(doc)
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def test_bad_format_line(tmp_path):
    path = _broken(tmp_path, "#FORMAT=WebAnno TSV 3.3", "#FORMAT=Other 1")
    assert _read(path) == (None, [f"{path}:1: #FORMAT: expected 'WebAnno TSV 3.x' on the "
                                  f"first line"])


def test_offsets_beyond_the_text(tmp_path):
    path = _broken(tmp_path, "1-2\t7-11\tdata", "1-2\t7-30\tdata")
    docs, problems = _read(path)
    assert problems == [f"{path}:8: offsets: 7-30 is outside the text rebuilt from the #Text "
                        f"lines (UTF-16 length 12)"]


def test_token_that_does_not_fit_the_text(tmp_path):
    path = _broken(tmp_path, "1-2\t7-11\tdata", "1-2\t7-11\tdate")
    assert _read(path)[1] == [f"{path}:8: token: 'date', but the text at 7-11 is 'data'"]


def test_wrong_column_count_and_bad_address(tmp_path):
    path = _broken(tmp_path, "1-3\t11-12\t.\t_\t_\t_\t_", "1-3\t11-12\t.\t_\t_")
    assert _read(path)[1] == [f"{path}:9: columns: expected 7 tab-separated fields (3 + the "
                              f"header's 4 columns), found 5"]
    path = _broken(tmp_path, "1-3\t11-12", "x-3\t11-12")
    assert _read(path)[1] == [f"{path}:9: token id: expected sentence-token (1-3 or 1-3.1), "
                              f"found 'x-3'"]


def test_annotation_of_an_unknown_layer_is_refused_and_an_empty_one_skipped(tmp_path):
    doc = plain_doc()
    text = write_webanno_tsv(doc).replace(
        "#T_RL=", "#T_SP=de.tudarmstadt.ukp.dkpro.core.api.lexmorph.type.pos.POS|PosValue\n"
                  "#T_RL=")
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line[:1].isdigit():
            cells = line.split("\t")
            lines[i] = "\t".join(cells[:5] + ["_"] + cells[5:])
    path = tmp_path / "42.tsv"
    path.write_text("\n".join(lines), encoding="utf-8")
    docs, problems = _read(path)
    assert problems == [] and annotation_key(docs[0]) == annotation_key(doc)
    path.write_text("\n".join(lines).replace("\tDS\t_\t", "\tDS\tNN\t", 1), encoding="utf-8")
    assert _read(path)[1] == [
        f"{path}:8: de.tudarmstadt.ukp.dkpro.core.api.lexmorph.type.pos.POS: an annotation of "
        f"a layer that is not read (declared at line 3; only de.tudarmstadt.ukp.dkpro.core."
        f"api.ner.type.NamedEntity and webanno.custom.Relation are): it would be lost"]


def test_relation_to_no_span_and_text_of_another_unit(tmp_path):
    doc = rich_doc()
    path = _broken(tmp_path, "1-8[5_2]", "1-7[5_2]", doc)
    assert _read(path)[1] == [f"{path}:9: BT: '1-7[5_2]': no governor span there"]
    path = _broken(tmp_path, "1-8[5_2]", "1-8[5_9]", doc)
    assert _read(path)[1] == [f"{path}:9: BT: '1-8[5_9]': no dependent span there"]
    path = _write(tmp_path, plain_doc())
    assert _read(path, {"42": "Survey date."})[1] == [
        f"{path}:6: #Text: text differs from the unit's text at character 10: the file has "
        f"'a.', the unit has 'e.' (lengths 12 and 12)"]


def test_inception_example_with_a_trailing_tab_and_sub_tokens(tmp_path):
    """A file as INCEpTION's guide shows one: a trailing tab, a span on a sub-token."""
    path = tmp_path / "doc.tsv"
    path.write_text(HEADER + "#Text=Ms. Haag plays\n"
                    "1-1\t0-3\tMs.\tQ1[1]\tPER[1]\t_\t_\t\n"
                    "1-2\t4-8\tHaag\tQ1[1]\tPER[1]\t_\t_\t\n"
                    "1-3\t9-14\tplays\t_\t_\t_\t_\t\n"
                    "1-3.1\t9-13\tplay\t*\tVERB\tagent\t1-1[1_0]\t\n\n", encoding="utf-8")
    docs, problems = _read(path)
    assert problems == []
    d = docs[0]
    assert [(s.begin, s.end, s.label, s.target) for s in d.spans] == [
        (0, 8, "PER", "Q1"), (9, 13, "VERB", "")]
    (r,) = d.relations
    assert (r.head, r.tail, r.label) == (d.spans[0].id, d.spans[1].id, "agent")


@pytest.mark.realdata
def test_real_documents_round_trip(tmp_path, shared_data):
    docs = rcc_docs(shared_data) + redocred_docs(shared_data)[0]
    for doc in docs:
        path = _write(tmp_path, doc, "doc.tsv")
        back, problems = _read(path, {"doc": doc.text})
        assert problems == []
        doc.id = "doc"
        assert annotation_key(back[0]) == annotation_key(doc)
