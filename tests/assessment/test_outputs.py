"""`assess sample` reads a line output as the server's judging campaigns do: a header
line is not an item (a relations TSV with a header gave 322 items for 321 relations,
and the header was drawn for judging)."""
from __future__ import annotations

import csv

import pytest

from shareval.assessment.outputs import output_rows, read_output, read_outputs
from shareval.cli import main
from shareval.formats.errors import InvalidInput, Problems

RELATIONS = [("d1", "Wahid", "per:alternate_names", "Gus Dur"),
             ("d1", "Wahid", "per:title", "president"),
             ("d2", "Jakarta", "gpe:capital_of", "Indonesia")]
KEYS = {"|".join(r) for r in RELATIONS}


def _tsv(path, header: str | None, rows=RELATIONS, comment: bool = False):
    lines = (["# made by the test"] if comment else []) + ([header] if header else [])
    path.write_text("\n".join(lines + ["\t".join(r) for r in rows]) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("header", [None, "doc_id\tsubject\trelation\tobject",
                                    "item\tsubject\trelation\tobject"])
@pytest.mark.parametrize("comment", [False, True])
def test_a_header_line_is_not_an_item(tmp_path, header, comment):
    out = read_output(_tsv(tmp_path / "run.tsv", header, comment=comment), "A", None, None,
                      Problems())
    assert set(out.items) == KEYS and len(out) == 3
    assert out.items["d2|Jakarta|gpe:capital_of|Indonesia"] == "d2"


@pytest.mark.parametrize("word", ["item", "id", "uuid", "doc", "doc_id", "docid", "query",
                                  "qid", "query_id", "item_id"])
def test_each_header_word_of_the_guide_marks_a_header(tmp_path, word):
    out = read_output(_tsv(tmp_path / "run.tsv", f"{word}\tsubject\trelation\tobject"), "A",
                      None, None, Problems())
    assert set(out.items) == KEYS


def test_only_the_first_line_is_a_header_and_duplicates_count_once(tmp_path):
    rows = RELATIONS + [("item", "a", "b", "c"), RELATIONS[0], RELATIONS[0]]
    out = read_output(_tsv(tmp_path / "run.tsv", None, rows=rows), "A", None, None,
                      Problems())
    assert set(out.items) == KEYS | {"item|a|b|c"} and len(out) == 4


def test_sample_and_the_server_read_the_same_items(tmp_path):
    """The judging campaign's units of a run (platform/judging/content.py) and `assess
    sample`'s items of the same file are the same keys, with and without a header
    (a task read line by line: kbp-relations has its own mention keys)."""
    from shareval.platform.judging import content
    for header in (None, "doc_id\tsubject\trelation\tobject"):
        path = _tsv(tmp_path / f"run-{bool(header)}.tsv", header)
        server = content.run_units("program", path)
        ours = read_output(path, "A", None, None, Problems())
        assert set(server) == set(ours.items) == KEYS
        assert {k: u.doc for k, u in server.items()} == ours.items


def test_assess_sample_never_draws_the_header(tmp_path):
    run = _tsv(tmp_path / "run.tsv", "doc_id\tsubject\trelation\tobject")
    sample = tmp_path / "sample.tsv"
    assert main(["assess", "sample", f"A={run}", "--n", "10", "-o", str(sample)]) == 0
    lines = sample.read_text().splitlines()
    assert lines[0] == "# sizes: A=3"
    drawn = {r["item"] for r in csv.DictReader(lines[2:], delimiter="\t")}
    assert drawn == KEYS


def test_a_key_by_column_names_reads_them_from_the_header(tmp_path):
    """A header whose first cell is no header word is still one when it names every
    --key column; the items are then those columns."""
    run = _tsv(tmp_path / "run.tsv", "subject\trelation\tobject\tdoc",
               rows=[(s, r, o, d) for d, s, r, o in RELATIONS])
    out, = read_outputs([f"A={run}"], ["subject", "object"], "doc")
    assert out.items == {"Wahid|Gus Dur": "d1", "Wahid|president": "d1",
                         "Jakarta|Indonesia": "d2"}
    with pytest.raises(InvalidInput) as e:                   # a name no header has
        read_outputs([f"A={run}"], ["subject", "target"], None)
    assert e.value.lines() == [f"{run}:1: --key: no header line names the columns subject, "
                               f"target"]


def test_output_rows_numbers_lines_and_splits_tabs_else_whitespace():
    header: list[str] = []
    rows = list(output_rows(["# c", "", "qid\tdoc", "q1 Q0 d1 1 2.5 run\r\n", "a b\tc d"],
                            header=header))
    assert header == ["qid", "doc"]
    assert rows == [(4, ["q1", "Q0", "d1", "1", "2.5", "run"]), (5, ["a b", "c d"])]
