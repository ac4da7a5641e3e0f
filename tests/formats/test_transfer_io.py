"""write_export / read_import over every format: what goes out comes back."""
from __future__ import annotations

import pytest

from shareval.formats.errors import Problems
from shareval.formats.standoff import Doc, Span, annotation_key
from shareval.formats.transfer_io import FORMATS, read_import, write_export

from .annotated_docs import plain_doc, redocred_docs, rich_doc


def _keys(docs, keep_doc_level=True):
    out = {}
    for d in docs:
        if not keep_doc_level:
            d = Doc(d.id, d.text, d.spans, d.relations)
        out[d.id] = annotation_key(d)
    return out


@pytest.mark.parametrize("fmt,doc_level", [("xmi", True), ("webanno", False)])
def test_inception_formats_round_trip(tmp_path, fmt, doc_level):
    docs = [rich_doc(), plain_doc()]
    path = write_export(docs, fmt, tmp_path / "out.zip")
    problems = Problems()
    back = read_import(path, fmt, {d.id: d.text for d in docs}, problems)
    assert problems.items == []
    assert _keys(back, doc_level) == _keys(docs, doc_level)


def test_rcc_export_imports_as_spans_at_every_mention(tmp_path):
    text = "ALLBUS data. We used ALLBUS again."
    docs = [Doc("101", text, [Span(0, 6, "dataset", "7")]), Doc("102", "Nothing.")]
    path = write_export(docs, "rcc", tmp_path / "gold.zip")
    problems = Problems()
    back = read_import(path, "rcc", {"101": text, "102": "Nothing."}, problems)
    assert problems.items == []
    spans = {d.id: [(s.begin, s.end, s.target) for s in d.spans] for d in back}
    assert spans == {"101": [(0, 6, "7"), (21, 27, "7")], "102": []}
    problems = Problems()
    assert read_import(path, "rcc", None, problems) is None
    assert problems.items[0].message.startswith("RCC files hold no full text")


def test_svident_export_imports_answers_and_links(tmp_path):
    docs = [Doc("u1", "Age.", answers={"is_variable": "yes"},
                meta={"variables": ["v1"], "doc_id": "d", "lang": "en"}),
            Doc("u2", "No.", answers={"is_variable": "no"}, meta={"doc_id": "d", "lang": "en"})]
    path = write_export(docs, "svident", tmp_path / "train.tsv")
    problems = Problems()
    back = read_import(path, "svident", {"u1": "Age.", "u2": "No.", "u3": "x"}, problems)
    assert problems.items == []
    assert {d.id: (d.answers, d.meta["variables"]) for d in back} == {
        "u1": ({"is_variable": "yes"}, ["v1"]), "u2": ({"is_variable": "no"}, [])}


@pytest.mark.realdata
def test_redocred_export_round_trips(tmp_path, shared_data):
    docs, original = redocred_docs(shared_data)
    path = write_export(docs, "redocred", tmp_path / "kbp.zip", original.relations)
    problems = Problems()
    back = read_import(path, "redocred", {d.id: d.text for d in docs}, problems)
    assert problems.items == []
    assert _keys(back) == _keys(docs)


def test_unknown_format(tmp_path):
    problems = Problems()
    assert read_import(tmp_path, "csv", None, problems) is None
    assert problems.items[0].message == f"unknown format 'csv'; one of {', '.join(FORMATS)}"
    with pytest.raises(ValueError):
        write_export([], "csv", tmp_path / "x")
