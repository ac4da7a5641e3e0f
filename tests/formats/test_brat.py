"""brat standoff: round trips through a zip of .txt/.ann pairs, and problems at
file:line:field for offsets outside the .txt, misquoted text, discontinuous spans."""
from __future__ import annotations

import zipfile

import pytest

from shareval.formats.brat import read_brat, write_ann, write_brat
from shareval.formats.errors import Problems
from shareval.formats.standoff import Doc, annotation_key

from .annotated_docs import empty_doc, plain_doc, rcc_docs, rich_doc


def _doc_level_free(doc):
    """What brat keeps: no answers or links; an empty relation label is written as brat's
    required type, 'Relation' (an empty span label likewise as 'Span')."""
    for r in doc.relations:
        r.label = r.label or "Relation"
    return annotation_key(Doc(doc.id, doc.text, doc.spans, doc.relations))


def test_round_trip_through_a_zip(tmp_path):
    docs = [rich_doc(), plain_doc(), empty_doc()]
    path = write_brat(docs, tmp_path / "b.zip")
    assert sorted(zipfile.ZipFile(path).namelist()) == sorted(
        ["pub_7.txt", "pub_7.ann", "42.txt", "42.ann", "empty.txt", "empty.ann"])
    problems = Problems()
    back = {d.id: d for d in read_brat(path, problems, {d.id: d.text for d in docs})}
    assert problems.items == []
    for d in docs:
        assert _doc_level_free(back[d.id]) == _doc_level_free(d)


def test_ann_lines_as_brat_writes_them():
    ann = write_ann(plain_doc(), {"d1": "The d1 survey"}).split("\n")
    assert ann[:2] == ["T1\tDS 0 6\tSurvey", "N1\tReference T1 Catalog:d1\tThe d1 survey"]
    rich = write_ann(rich_doc())
    assert "\tCROSS 29 47\t10]_* data;  The A\n" in rich          # line breaks as spaces
    assert "R1\tuses Arg1:T1 Arg2:T3\t\n" in rich


def _pair(tmp_path, text, ann):
    (tmp_path / "d.txt").write_text(text, encoding="utf-8")
    (tmp_path / "d.ann").write_text(ann, encoding="utf-8")
    problems = Problems()
    docs = read_brat(tmp_path / "d.ann", problems)
    return docs, [str(p) for p in problems.items]


def test_a_single_ann_with_its_txt(tmp_path):
    docs, problems = _pair(tmp_path, "Survey data.", "T1\tDS 0 6\tSurvey\n#1\tAnnotatorNotes "
                                                     "T1\tfree text\nA1\tNegated T1\n")
    assert problems == [] and [(s.begin, s.end, s.label) for s in docs[0].spans] == [(0, 6, "DS")]


@pytest.mark.parametrize("ann,problem", [
    ("T1\tDS 0 60\tSurvey", "2: offsets: T1 [0, 60) is outside the .txt (length 12) or empty"),
    ("T1\tDS 0 6\tSurvei", "2: text: T1 quotes 'Survei', but the .txt has 'Survey' at [0, 6)"),
    ("T1\tDS 0 3;4 6\tSur vey", "2: offsets: T1 is discontinuous ('DS 0 3;4 6'); only "
                                "continuous spans are read"),
    ("N1\tReference T9 Catalog:x\tX", "2: Reference: T9 is not a span defined above"),
    ("R1\tr Arg1:T1 Arg2:T7\t", "2: Arg2: T7 is not a span of the file"),
    ("E1\tEvent:T1", "2: id: 'E1': only T, N and R annotations are read (# notes and A/M "
                     "attributes skipped)"),
    ("T1\tDS x y\tSurvey", "2: span: expected 'Label begin end', found 'DS x y'"),
])
def test_bad_lines_name_file_line_and_field(tmp_path, ann, problem):
    docs, problems = _pair(tmp_path, "Survey data.", "T1\tDS 0 6\tSurvey\n" + ann + "\n")
    assert docs is None and problems == [f"{tmp_path / 'd.ann'}:{problem}"]


def test_txt_of_another_unit_and_a_missing_txt(tmp_path):
    path = write_brat([plain_doc()], tmp_path / "b.zip")
    problems = Problems()
    assert read_brat(path, problems, {"42": "Survey\ndate."}) is None
    assert [str(p) for p in problems.items] == [
        f"{path}/42.txt:1: text: text differs from the unit's text at character 6: the file "
        f"has ' data.', the unit has '\\ndate.' (lengths 12 and 12)"]
    (tmp_path / "x.ann").write_text("", encoding="utf-8")
    problems = Problems()
    assert read_brat(tmp_path / "x.ann", problems) is None
    assert str(problems.items[0]) == f"{tmp_path}/x.ann: file: no x.txt beside it"


def test_a_second_link_for_one_span_is_refused(tmp_path):
    _, problems = _pair(tmp_path, "Survey data.", "T1\tDS 0 6\tSurvey\nN1\tReference T1 C:a\ta\n"
                                                  "N2\tReference T1 C:b\tb\n")
    assert problems == [f"{tmp_path / 'd.ann'}:3: Reference: T1 is already linked at line 2"]


@pytest.mark.realdata
def test_rcc_publications_round_trip(tmp_path, shared_data):
    docs = rcc_docs(shared_data)
    problems = Problems()
    back = {d.id: d for d in read_brat(write_brat(docs, tmp_path / "b.zip"), problems,
                                       {d.id: d.text for d in docs})}
    assert problems.items == []
    for d in docs:
        assert annotation_key(back[d.id]) == annotation_key(d)
