"""The gold writers, proved by the project's own readers and scorers: an RCC gold folder
scores 1.0 against its own mentions and citations, the SV-Ident TSV is read by the
reference reader, the Re-DocRED file by the KBP reader with the same entities and labels."""
from __future__ import annotations

import json

import pytest

from shareval.formats import kbp, rcc, svident
from shareval.formats.errors import InvalidInput, Problems
from shareval.formats.gold import write_rcc_gold, write_redocred, write_svident_tsv
from shareval.formats.standoff import Doc, Relation, Span

from .annotated_docs import rcc_docs, redocred_docs

TEXT = "We use the ALLBUS 2010 and ALLBUS 2012 data.\nAlso NHANES."


def _rcc_docs():
    return [Doc("101", TEXT, [Span(11, 22, "DS", "7"), Span(27, 38, "DS", "ds2"),
                              Span(50, 56, "DS", "ds3"), Span(11, 17, "DS", "7"),
                              Span(0, 2, "DS")]),                 # unlinked: not gold
            Doc("102|9", "The survey here.", [Span(4, 10, "DS")],
                meta={"publication_id": "102", "data_set_id": "9"}),
            Doc("103", "No mention.")]


def test_rcc_folder_layout_and_what_the_reader_sees(tmp_path):
    folder = write_rcc_gold(_rcc_docs(), tmp_path / "gold")
    cites = json.loads((folder / "data_set_citations.json").read_text())
    assert cites[0] == {"publication_id": 101, "data_set_id": 7, "score": 1.0,
                        "mention_list": ["ALLBUS", "ALLBUS 2010"]}
    problems = Problems()
    ref = rcc.read_citations(folder, problems, False)
    assert problems.items == [] and ref.publications == ["101", "102", "103"]
    assert [(c.publication_id, c.data_set_id, c.mentions) for c in ref.records] == [
        ("101", "7", ["ALLBUS", "ALLBUS 2010"]), ("101", "ds2", ["ALLBUS 2012"]),
        ("101", "ds3", ["NHANES"]), ("102", "9", ["survey"])]   # the pair's data set
    mentions = rcc.read_mentions(folder / "data_set_mentions.json", Problems())
    assert sorted(m.mention for m in mentions.records) == [
        "ALLBUS", "ALLBUS 2010", "ALLBUS 2012", "NHANES", "survey"]


def test_rcc_ids_become_json_numbers_only_when_ascii_digits_without_a_leading_zero(tmp_path):
    """The id the reader gives back is the annotated one: "07" and "\u0661\u0662"
    (Arabic-Indic 12, which int() reads as 12) stay strings."""
    docs = [Doc(pid, "ALLBUS", [Span(0, 6, "DS", "7")])
            for pid in ("12", "07", "\u0661\u0662", "5\u00b2")]
    folder = write_rcc_gold(docs, tmp_path / "gold")
    ids = [c["publication_id"] for c in json.loads((folder / "data_set_citations.json")
                                                   .read_text(encoding="utf-8"))]
    assert sorted(map(str, ids)) == sorted(["12", "07", "\u0661\u0662", "5\u00b2"])
    assert [i for i in ids if isinstance(i, int)] == [12]


def _score(cli, task, folder, submission):
    code, out, err = cli("score", task, "-r", folder, submission, "--format", "json")
    assert code == 0, err
    return json.loads(out)["metrics"]


def test_rcc_gold_scores_one_against_itself(tmp_path, cli):
    folder = write_rcc_gold(_rcc_docs(), tmp_path / "gold")
    metrics = _score(cli, "rcc-mentions", folder, folder / "data_set_mentions.json")
    assert metrics["exact_f1"] == 1.0 and metrics["partial_f1"] == 1.0
    assert _score(cli, "rcc-citations", folder, folder / "data_set_citations.json")["f1"] == 1.0


def test_svident_tsv_is_read_by_the_reference_reader(tmp_path):
    docs = [Doc("u1", 'We use "ALLBUS"\tdata.', answers={"is_variable": "yes"},
                meta={"variables": ["v1"], "doc_id": "d1", "lang": "en",
                      "research_data": "ZA1"}, spans=[Span(7, 15, "variable", "v2")]),
            Doc("u2", "Nothing.", answers={"is_variable": "no"}, meta={"doc_id": "d1",
                                                                     "lang": "en"}),
            Doc("u3", "Age of respondent.", answers={"is_variable": "1"},
                meta={"doc_id": "d2", "lang": "de"})]
    path = write_svident_tsv(docs, tmp_path / "train.tsv")
    lines = path.read_text().split("\n")
    assert lines[0] == "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang"
    assert lines[1] == 'We use "ALLBUS" data.\t1\tv1;v2\tZA1\td1\tu1\ten'
    assert lines[3] == "Age of respondent.\t1\tunk\t\td2\tu3\tde"
    problems = Problems()
    ref = svident.read_reference(path, problems)
    assert problems.items == []
    got = {u: (s.is_variable, s.variables, s.doc_id, s.lang) for u, s in ref.sentences.items()}
    assert got == {"u1": (1, ["v1", "v2"], "d1", "en"), "u2": (0, [], "d1", "en"),
                   "u3": (1, [], "d2", "de")}


def test_svident_answer_that_is_not_yes_or_no_is_refused(tmp_path):
    with pytest.raises(InvalidInput, match="document 'u1': answer 'maybe' is not yes or no"):
        write_svident_tsv([Doc("u1", "x", answers={"is_variable": "maybe"})],
                          tmp_path / "t.tsv")


def test_redocred_file_is_read_by_the_kbp_reader(tmp_path):
    text = "Paris is the capital of France.\nBerlin is in Germany."
    doc = Doc("Doc A", text, [Span(0, 5, "LOC", "Q90", "a"), Span(24, 30, "LOC", "Q142", "b"),
                              Span(32, 38, "LOC", "", "c"), Span(45, 52, "LOC", "Q183", "d"),
                              Span(32, 38, "LOC", "Q142", "e")],
              [Relation("a", "b", "P17"), Relation("c", "d", "P17")])
    path = write_redocred([doc], tmp_path / "kbp" / "documents.json", {"P17": "country"})
    problems = Problems()
    ref = kbp.read_reference(path.parent, problems)
    assert problems.items == [] and ref.relations == {"P17": "country"}
    d = ref.documents["Doc A"]
    assert d.sentences == [["Paris", "is", "the", "capital", "of", "France", "."],
                           ["Berlin", "is", "in", "Germany", "."]]
    spans = [{d.text[b:e] for b, e in mentions} for mentions in d.entities]
    # "Berlin" linked to Q142 joins France's entity; unlinked it is its own
    assert spans == [{"Paris"}, {"France", "Berlin"}, {"Berlin"}, {"Germany"}]
    assert d.labels == {(0, 1, "P17"), (2, 3, "P17")}


def test_writers_refuse_spans_outside_the_text(tmp_path):
    with pytest.raises(InvalidInput, match=r"document 'x' span 0: \[0, 9\)"):
        write_rcc_gold([Doc("x", "abc", [Span(0, 9, "DS", "d")])], tmp_path / "g")


@pytest.mark.realdata
def test_real_rcc_gold_scores_one(tmp_path, shared_data, cli):
    folder = write_rcc_gold(rcc_docs(shared_data, 5), tmp_path / "gold")
    metrics = _score(cli, "rcc-mentions", folder, folder / "data_set_mentions.json")
    assert metrics["exact_f1"] == 1.0 and metrics["partial_f1"] == 1.0


@pytest.mark.realdata
def test_real_redocred_documents_keep_entities_and_labels(tmp_path, shared_data):
    docs, original = redocred_docs(shared_data)
    path = write_redocred(docs, tmp_path / "kbp" / "documents.json", original.relations)
    problems = Problems()
    ref = kbp.read_reference(path.parent, problems)
    assert problems.items == []
    for doc in docs:
        want, got = original.documents[doc.id], ref.documents[doc.id]
        assert got.text == want.text and got.sentences == want.sentences
        assert got.entities == want.entities and got.labels == want.labels
        assert got.types == want.types
