"""UIMA CAS XMI (INCEpTION's export layout) through dkpro-cassis: round trips, the XML
itself checked without cassis, and bad input named by file, line, xmi:id and field."""
from __future__ import annotations

import re
import zipfile
import xml.etree.ElementTree as ET

import pytest

from shareval.formats.errors import Problems
from shareval.formats.standoff import annotation_key
from shareval.formats.xmi import NAMED_ENTITY, TYPESYSTEM, XMI_ID, read_xmi, write_xmi

from .annotated_docs import empty_doc, plain_doc, rcc_docs, rich_doc

NS = {"xmi": "http://www.omg.org/XMI", "cas": "http:///uima/cas.ecore",
      "ner": "http:///de/tudarmstadt/ukp/dkpro/core/api/ner/type.ecore"}


def _roundtrip(docs, tmp_path, expected=True):
    path = write_xmi(docs, tmp_path / "export.zip")
    problems = Problems()
    back = read_xmi(path, problems, {d.id: d.text for d in docs} if expected else None)
    assert not problems.items, [str(p) for p in problems.items]
    return path, {d.id: d for d in back}


def test_round_trip_keeps_spans_links_relations_answers_and_links(tmp_path):
    docs = [rich_doc(), plain_doc(), empty_doc()]
    _, back = _roundtrip(docs, tmp_path)
    for d in docs:
        assert annotation_key(back[d.id]) == annotation_key(d)
    assert back["pub|7"].meta["title"] == "A title"
    # one sentence: the span "c" crosses the paragraph break, and a span never crosses one
    assert back["pub|7"].sentences == [(0, len(rich_doc().text))]
    assert back["42"].sentences == [(0, 12)]


def test_zip_is_inception_layout_and_the_xml_holds_utf16_offsets(tmp_path):
    path, _ = _roundtrip([rich_doc(), plain_doc()], tmp_path)
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == sorted([TYPESYSTEM, "pub_7.xmi", "42.xmi"])
        root = ET.fromstring(z.read("pub_7.xmi"))
        types = ET.fromstring(z.read(TYPESYSTEM))
    names = {t.findtext("{http://uima.apache.org/resourceSpecifier}name")
             for t in types.iter("{http://uima.apache.org/resourceSpecifier}typeDescription")}
    assert {NAMED_ENTITY, "webanno.custom.Relation", "webanno.custom.DocumentAnswer"} <= names
    sofa = root.find("cas:Sofa", NS).get("sofaString")
    assert sofa == rich_doc().text
    entities = {(int(e.get("begin")), int(e.get("end")), e.get("value"), e.get("identifier"))
                for e in root.findall("ner:NamedEntity", NS)}
    # "END" is the text's last 3 characters; after the emoji, UTF-16 offsets are one more
    n16 = len(sofa) + 1
    assert (n16 - 3, n16, "END", "k:1") in entities
    assert (0, 11, "LOC", "Q65") in entities and (0, 3, "X", None) in entities


def test_a_single_xmi_is_read_with_the_typesystem_beside_it(tmp_path):
    path, _ = _roundtrip([plain_doc()], tmp_path)
    with zipfile.ZipFile(path) as z:
        z.extractall(tmp_path / "out")
    problems = Problems()
    docs = read_xmi(tmp_path / "out" / "42.xmi", problems)
    assert annotation_key(docs[0]) == annotation_key(plain_doc())
    (tmp_path / "out" / TYPESYSTEM).unlink()
    problems = Problems()
    assert read_xmi(tmp_path / "out" / "42.xmi", problems) is None
    assert str(problems.items[0]) == (f"{tmp_path / 'out' / TYPESYSTEM}: file: no type "
                                      f"system: 42.xmi needs {TYPESYSTEM} beside it")


def _rewrite(path, name, change):
    with zipfile.ZipFile(path) as z:
        files = {n: z.read(n) for n in z.namelist()}
    files[name] = change(files[name].decode()).encode()
    with zipfile.ZipFile(path, "w") as z:
        for n, data in files.items():
            z.writestr(n, data)


def test_offsets_outside_the_sofa_name_file_line_xmi_id_and_field(tmp_path):
    path, _ = _roundtrip([plain_doc()], tmp_path)
    _rewrite(path, "42.xmi", lambda x: x.replace('begin="0" end="6" value="DS"',
                                                 'begin="0" end="60" value="DS"'))
    problems = Problems()
    assert read_xmi(path, problems) is None
    (p,) = problems.items
    assert p.file == f"{path}/42.xmi" and p.field == "begin/end" and p.line > 1
    assert p.message.startswith("NamedEntity xmi:id=") and "[0, 60)" in p.message
    lines = zipfile.ZipFile(path).read("42.xmi").decode().split("\n")
    assert 'end="60"' in lines[p.line - 1]


def test_a_typesystem_without_the_span_type_is_refused(tmp_path):
    path, _ = _roundtrip([plain_doc()], tmp_path)
    _rewrite(path, TYPESYSTEM, lambda x: x.replace(NAMED_ENTITY, "my.Other"))
    problems = Problems()
    assert read_xmi(path, problems) is None
    assert [str(p) for p in problems.items] == [
        f"{path}/{TYPESYSTEM}: type: lacks {NAMED_ENTITY}: the spans' type"]


def test_text_that_differs_from_the_unit_is_refused(tmp_path):
    path = write_xmi([plain_doc()], tmp_path / "e.zip")
    problems = Problems()
    assert read_xmi(path, problems, {"42": "Survey date."}) is None
    (p,) = problems.items
    assert p.file == f"{path}/42.xmi" and p.field == "sofaString" and p.line is not None
    assert "at character 10: the file has 'a.', the unit has 'e.'" in p.message


def test_unknown_document_and_broken_xml(tmp_path):
    path = write_xmi([plain_doc()], tmp_path / "e.zip")
    problems = Problems()
    assert read_xmi(path, problems, {"other": "x"}) is None
    assert str(problems.items[0]) == (f"{path}/42.xmi: documentId: '42' is not a unit of "
                                      f"the project")
    _rewrite(path, "42.xmi", lambda x: x.replace("</xmi:XMI>", ""))
    problems = Problems()
    assert read_xmi(path, problems) is None
    assert problems.items[0].field == "xml" and problems.items[0].line is not None


def test_a_reference_to_a_missing_xmi_id_is_named_with_its_line(tmp_path):
    path = write_xmi([rich_doc()], tmp_path / "e.zip")
    _rewrite(path, "pub_7.xmi", lambda x: x.replace('Governor="', 'Governor="9999', 1))
    problems = Problems()
    assert read_xmi(path, problems) is None
    (p,) = problems.items
    assert p.field == "xmi:id" and p.message.startswith("an annotation points to xmi:id 9999")
    lines = zipfile.ZipFile(path).read("pub_7.xmi").decode().split("\n")
    assert 'Governor="9999' in lines[p.line - 1]


def test_a_relation_whose_governor_is_not_a_span_is_named(tmp_path):
    path = write_xmi([rich_doc()], tmp_path / "e.zip")

    def governor_to_sentence(x):
        sentence = ET.fromstring(x.encode()).find(
            "{http:///de/tudarmstadt/ukp/dkpro/core/api/segmentation/type.ecore}Sentence")
        return re.sub(r'Governor="\d+"', f'Governor="{sentence.get(XMI_ID)}"', x, count=1)
    _rewrite(path, "pub_7.xmi", governor_to_sentence)
    problems = Problems()
    assert read_xmi(path, problems) is None
    (p,) = problems.items
    assert p.field == "Governor" and p.line is not None
    assert p.message.startswith("webanno.custom.Relation xmi:id=")
    assert p.message.endswith(f"must point to a {NAMED_ENTITY} of the document")


@pytest.mark.realdata
def test_rcc_publications_round_trip(tmp_path, shared_data):
    docs = rcc_docs(shared_data)
    assert docs
    _, back = _roundtrip(docs, tmp_path)
    for d in docs:
        assert annotation_key(back[d.id]) == annotation_key(d)
