"""kbp-relations validation: every problem names the file, the line and the field, and
says what is wrong (issue 38: offsets outside the document, an unknown relation, a
mention string that does not match its offsets ...)."""
from __future__ import annotations

import json

import pytest

from shareval import tasks
from shareval.formats.errors import InvalidInput
from tests.tasks.kbp_tiny import DOCUMENTS, HEADER, PERFECT, RELATIONS, write_reference

TASK = tasks.get("kbp-relations")
GOOD = PERFECT[0]                  # Anna Berg	Anna Berg	0	9	P19	Oslo	22	26	1


def _problems(tmp_path, text, name="run.tsv", ref=True):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    reference = write_reference(tmp_path / "ref") if ref else None
    with pytest.raises(InvalidInput) as e:
        TASK.validate(path, reference)
    return [str(p).removeprefix(f"{path}:") for p in e.value.problems]


def _line(**cells) -> str:
    cols = HEADER.rstrip("\n").split("\t")
    row = dict(zip(cols, GOOD.split("\t")))
    row.update(cells)
    return "\t".join(row[c] for c in cols)


@pytest.mark.parametrize("cells, problem", [
    ({"relation": "P99"}, "2: relation: unknown relation 'P99': not an id or a label of the "
                          "task's 5 relations (e.g. P17 = country, P19 = place of birth)"),
    ({"relation": "born in"}, "2: relation: unknown relation 'born in': not an id or a label "
                              "of the task's 5 relations (e.g. P17 = country, P19 = place of "
                              "birth)"),
    ({"doc_id": "Anna"}, "2: doc_id: document 'Anna' is not in the reference (doc_id is the "
                         "document's title)"),
    ({"object_start": "49", "object_end": "51"},
     "2: object_end: 51 is past the end of document 'Anna Berg' (50 characters)"),
    ({"subject": "Anna"}, "2: subject: 'Anna' is not the text at characters 0-9 of document "
                          "'Anna Berg', which is 'Anna Berg'"),
    ({"object": "Oslo", "object_start": "21", "object_end": "25"},
     "2: object: 'Oslo' is not the text at characters 21-25 of document 'Anna Berg', "
     "which is ' Osl'"),
    ({"subject_start": "9", "subject_end": "9"},
     "2: subject_end: 9 is not after subject_start 9 (end is exclusive)"),
    ({"subject_start": "-1"}, "2: subject_start: expected a whole number >= 0, found '-1'"),
    ({"object_end": "2.5"}, "2: object_end: expected a whole number >= 0, found '2.5'"),
    ({"confidence": "high"}, "2: confidence: expected a finite number, found 'high'"),
    ({"confidence": "nan"}, "2: confidence: expected a finite number, found 'nan'"),
    ({"confidence": "inf"}, "2: confidence: expected a finite number, found 'inf'"),
    # str.isdigit() takes these and int() refuses or reads them: whole numbers are ASCII
    ({"object_end": "5\u00b2"}, "2: object_end: expected a whole number >= 0, found '5\u00b2'"),
    ({"subject_start": "\u0660"},
     "2: subject_start: expected a whole number >= 0, found '\u0660'"),
    ({"object": " "}, "2: object: empty"),
])
def test_a_bad_cell_is_a_problem_naming_line_and_field(tmp_path, cells, problem):
    assert _problems(tmp_path, HEADER + _line(**cells) + "\n") == [problem]


def test_evidence_names_sentences_of_the_document(tmp_path):
    """Anna Berg has sentences 0 and 1."""
    header = HEADER.rstrip("\n") + "\tevidence\n"
    path = tmp_path / "ok.tsv"
    path.write_text(header + GOOD + "\t0, 1\n", encoding="utf-8")
    assert TASK.validate(path, write_reference(tmp_path / "ok-ref")) == []
    assert _problems(tmp_path, header + GOOD + "\t1,2\n") == [
        "2: evidence: document 'Anna Berg' has sentences 0 to 1, not 2"]
    assert _problems(tmp_path, header + GOOD + "\t1;2\n") == [
        "2: evidence: expected sentence ids separated by ',', found '1;2'"]


def test_every_bad_line_is_reported_in_one_go(tmp_path):
    text = HEADER + GOOD + "\n" + _line(relation="P99") + "\n" + _line(doc_id="Nowhere") + "\n"
    assert [p.split(":")[0] for p in _problems(tmp_path, text)] == ["3", "4"]


def test_an_unknown_document_or_relation_is_one_problem_however_many_lines_name_it(tmp_path):
    lines = [_line(relation="P99", subject_end=str(9 - (i == 3))) for i in range(6)]
    lines += [_line(doc_id="Nowhere", subject_end="x")]
    problems = _problems(tmp_path, HEADER + "\n".join(lines) + "\n")
    assert problems == [
        "5: subject: 'Anna Berg' is not the text at characters 0-8 of document 'Anna Berg', "
        "which is 'Anna Ber'",
        "2: relation: unknown relation 'P99': not an id or a label of the task's 5 relations "
        "(e.g. P17 = country, P19 = place of birth) (also on lines 3, 4, 5 and 2 more)",
        "8: doc_id: document 'Nowhere' is not in the reference (doc_id is the document's title)"]


def test_a_json_object_is_not_a_submission(tmp_path):
    assert _problems(tmp_path, '{"Oslo": []}\n', "run.json") == [
        '1: json: expected a JSON array of records [{"doc_id": ...}, ...], found an object']


def test_a_duplicate_line_is_a_problem_even_with_the_relation_by_label(tmp_path):
    text = HEADER + GOOD + "\n" + _line(relation="Place of Birth", confidence="0.2") + "\n"
    assert _problems(tmp_path, text) == [
        "3: line: duplicate: same document, subject span, relation and object span as line 2"]


@pytest.mark.parametrize("header, problem", [
    ("doc_id\tsubject\trelation\n", "1: header: missing column(s) object; found: doc_id, "
                                    "subject, relation"),
    ("doc_id\tsubject\tsubject_start\tsubject_end\trelation\tobject\tobject_start\t"
     "object_end\tscore\n", "1: header: unknown column(s) score; the columns are doc_id, "
                            "subject, relation, object, evidence, confidence, subject_start, "
                            "subject_end, subject_sent, subject_token_start, subject_token_end, "
                            "object_start, object_end, object_sent, object_token_start, "
                            "object_token_end"),
    ("doc_id\tsubject\tsubject_start\tsubject_end\trelation\tobject\tobject_start\n",
     "1: header: object provenance: needs columns object_start and object_end, or "
     "object_sent, object_token_start and object_token_end"),
])
def test_a_wrong_header_is_one_problem_on_line_1(tmp_path, header, problem):
    assert _problems(tmp_path, header + GOOD + "\n") == [problem]


TOKENS = ("doc_id\tsubject\tsubject_sent\tsubject_token_start\tsubject_token_end\trelation\t"
          "object\tobject_start\tobject_end\tevidence\n")


@pytest.mark.parametrize("row, problem", [
    ("Anna Berg\tBerg\t2\t0\t1\tP19\tOslo\t22\t26\t0",
     "2: subject_sent: document 'Anna Berg' has 2 sentences (0 to 1), not 2"),
    ("Anna Berg\tBerg\t1\t0\t6\tP19\tOslo\t22\t26\t0",
     "2: subject_token_end: 6 is past the end of sentence 1 of document 'Anna Berg' (5 tokens)"),
    ("Anna Berg\tBerg\t1\t1\t1\tP19\tOslo\t22\t26\t0",
     "2: subject_token_end: 1 is not after subject_token_start 1 (end is exclusive)"),
    ("Anna Berg\tBerg\t1\t1\t2\tP19\tOslo\t22\t26\t0",
     "2: subject: 'Berg' is not the text at characters 34-39 of document 'Anna Berg', "
     "which is 'lives'"),
    ("Anna Berg\tBerg\t1\t0\t1\tP19\tOslo\t22\t26\t0,5",
     "2: evidence: document 'Anna Berg' has sentences 0 to 1, not 5"),
    ("Anna Berg\tBerg\t1\t0\t1\tP19\tOslo\t22\t26\tfirst",
     "2: evidence: expected sentence ids separated by ',', found 'first'"),
    ("Anna Berg\tBerg\t\t\t\tP19\tOslo\t22\t26\t",
     "2: subject: no provenance: give subject_start and subject_end, or subject_sent, "
     "subject_token_start and subject_token_end"),
])
def test_token_span_provenance_is_checked_against_the_sentence(tmp_path, row, problem):
    assert _problems(tmp_path, TOKENS + row + "\n") == [problem]


def test_offsets_and_tokens_given_together_must_agree(tmp_path):
    header = HEADER.replace("subject_end", "subject_end\tsubject_sent\tsubject_token_start\t"
                                           "subject_token_end")
    ok = "Anna Berg\tBerg\t29\t33\t1\t0\t1\tP19\tOslo\t22\t26\t1"
    TASK.validate(_write(tmp_path, header + ok + "\n"), write_reference(tmp_path / "ref"))
    bad = "Anna Berg\tBerg\t29\t33\t0\t1\t2\tP19\tOslo\t22\t26\t1"
    assert _problems(tmp_path, header + bad + "\n") == [
        "2: subject_token_start: the token span is characters 5-9, not "
        "subject_start-subject_end 29-33"]


def _write(tmp_path, text, name="ok.tsv"):
    (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path / name


def test_json_records_are_named_with_their_line(tmp_path):
    good = dict(doc_id="Oslo", subject="Oslo", subject_start=0, subject_end=4, relation="P17",
                object="Norway", object_start=23, object_end=29)
    records = [good, dict(good, relation="P99"), dict(good, object_end=40), "Oslo",
               dict(good, score=1)]
    text = "[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n"
    assert _problems(tmp_path, text, "run.json") == [
        "3: record 1: relation: unknown relation 'P99': not an id or a label of the task's 5 "
        "relations (e.g. P17 = country, P19 = place of birth)",
        "4: record 2: object_end: 40 is past the end of document 'Oslo' (31 characters)",
        "5: record 3: record: expected an object with doc_id, subject, relation, object ...",
        "6: record 4: record: unknown field(s) score"]


def test_json_syntax_error_is_one_problem_with_line_and_column(tmp_path):
    assert _problems(tmp_path, '[\n{"doc_id": "Oslo",}\n]\n', "run.json") == [
        "2:19: json: Expecting property name enclosed in double quotes"]


def test_without_a_reference_the_layout_is_checked_and_the_rest_warned(tmp_path):
    path = _write(tmp_path, HEADER + _line(relation="P99") + "\n")
    warnings = TASK.validate(path)
    assert warnings == ["no reference given: documents, relations, offsets and mention strings "
                        "were not checked"]
    assert _problems(tmp_path, HEADER + _line(subject_end="x") + "\n", ref=False) == [
        "2: subject_end: expected a whole number >= 0, found 'x'"]


@pytest.mark.parametrize("change, problem", [
    (lambda docs, rels: (docs, {k: v for k, v in rels.items() if k != "P36"}),
     "document 1: labels: relation 'P36' is not in relations.json"),
    (lambda docs, rels: ([docs[0], docs[0]], rels),
     "document 1: title: duplicate title 'Anna Berg' (first: document 0)"),
    (lambda docs, rels: ([dict(docs[0], labels=[{"h": 0, "t": 7, "r": "P19"}])], rels),
     "document 0: labels: a label needs h and t, indices of entities of the document"),
    (lambda docs, rels: ([dict(docs[0], vertexSet=[[{"sent_id": 0, "pos": [5, 9]}]])], rels),
     "document 0: vertexSet: entity 0: a mention needs sent_id and pos [start, end) "
     "of tokens in that sentence"),
])
def test_a_bad_reference_is_a_problem_naming_the_document(tmp_path, change, problem):
    docs, rels = change(json.loads(json.dumps(DOCUMENTS)), dict(RELATIONS))
    folder = write_reference(tmp_path / "ref", docs, rels)
    with pytest.raises(InvalidInput) as e:
        TASK.load_reference(folder)
    assert [str(p) for p in e.value.problems] == [f"{folder / 'documents.json'}: {problem}"]


def test_a_missing_relation_inventory_is_named(tmp_path):
    folder = write_reference(tmp_path / "ref")
    (folder / "relations.json").unlink()
    with pytest.raises(InvalidInput) as e:
        TASK.load_reference(folder)
    assert [str(p) for p in e.value.problems] == [f"{folder / 'relations.json'}: file: does "
                                                  f"not exist"]


def test_a_folder_with_two_candidate_document_files_asks_for_documents_json(tmp_path):
    folder = write_reference(tmp_path / "ref")
    (folder / "documents.json").rename(folder / "dev.json")
    (folder / "test.json").write_text("[]", encoding="utf-8")
    with pytest.raises(InvalidInput) as e:
        TASK.load_reference(folder)
    assert [str(p) for p in e.value.problems] == [f"{folder / 'documents.json'}: file: does "
                                                  f"not exist"]
