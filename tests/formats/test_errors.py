"""Bad input: every problem with file, line and field; capped; never a crash."""
import json

import pytest

from shareval.formats.errors import MAX_PROBLEMS, InvalidInput, Problems
from shareval.formats.jsonfile import iter_records
from shareval.formats.rcc import read_citations
from shareval.formats.trec import read_qrels, read_run
from tests.conftest import write


def test_json_records_know_their_lines(tmp_path):
    p = write(tmp_path / "a.json", '[\n  {"a": 1},\n\n  {"a": 2}\n]\n')
    recs = list(iter_records(p, Problems(), "array"))
    assert [(line, v) for line, _, v in recs] == [(2, {"a": 1}), (4, {"a": 2})]


def test_json_syntax_error_has_line_and_column(tmp_path):
    p = write(tmp_path / "a.json", '[\n  {"a": 1},\n  {"a": }\n]')
    probs = Problems()
    list(iter_records(p, probs, "array"))
    assert [str(x) for x in probs.items] == [f"{p}:3:9: json: Expecting value"]


def test_duplicate_object_keys_are_problems(tmp_path):
    p = write(tmp_path / "a.json", '{"x": 1,\n "x": 0}')
    probs = Problems()
    list(iter_records(p, probs, "object"))
    assert str(probs.items[0]) == f"{p}:2: key x: key: duplicate (first at line 1)"


def test_citations_list_every_problem(tmp_path):
    recs = [{"publication_id": 1, "data_set_id": 2, "score": 0.5, "mention_list": []},
            {"publication_id": None, "data_set_id": 2, "score": "high", "mention_list": []},
            {"data_set_id": 3, "score": 1.0},
            "not an object"]
    p = write(tmp_path / "c.json", json.dumps(recs, indent=1))
    probs = Problems()
    assert read_citations(p, probs, submission=True) is None
    assert [str(x) for x in probs.items] == [                  # each at its record's line
        f"{p}:8: record 1: publication_id: must be an integer or a non-empty string, found None",
        f"{p}:8: record 1: score: must be a finite number, found 'high'",
        f"{p}:14: record 2: publication_id: missing",
        f"{p}:14: record 2: mention_list: missing (use [] when there are none)",
        f"{p}:18: record 3: record: expected a JSON object"]


def test_trec_problems_are_all_listed_with_lines(tmp_path):
    p = write(tmp_path / "run", "q1 Q0 d1 1 1.5 t\nq1 Q0 d2 x 1.0 t\nq1 Q0 d3 3 nan t\n"
                                "q1 Q0 d1 4 0.5 t\nq2 Q0 d1 1\n")
    probs = Problems()
    assert read_run(p, probs) is None
    got = [str(x) for x in probs.items]
    assert got == [f"{p}:2: rank: not an integer: 'x'",
                   f"{p}:3: score: not a finite number: 'nan'",
                   f"{p}:4: doc_id: duplicate document 'd1' for query 'q1' (first at line 1)",
                   f"{p}:5: line: expected 6 whitespace-separated columns "
                   f"(query_id Q0 doc_id rank score run_tag), found 4"]


def test_problem_cap(tmp_path):
    p = write(tmp_path / "qrels", "".join(f"q{i} 0 d x\n" for i in range(500)))
    probs = Problems()
    read_qrels(p, probs)
    with pytest.raises(InvalidInput) as e:
        probs.raise_if_any()
    assert len(e.value.problems) == MAX_PROBLEMS
    assert "reading stopped after 100 problems" in e.value.render()


def test_fast_and_slow_trec_paths_agree(tmp_path, monkeypatch):
    from shareval.formats import trec
    monkeypatch.setattr(trec, "SMALL_FILE_BYTES", 0)      # pyarrow for every well-formed file
    lines = "".join(f"q{i % 7} Q0 d{i} {i} {i * 0.25} tag\n" for i in range(200))
    fast = read_run(write(tmp_path / "fast", lines), Problems())
    slow = read_run(write(tmp_path / "slow", lines.replace(" ", "  ")), Problems())
    assert fast.qids() == slow.qids()
    assert fast.docs() == slow.docs()
    assert fast.value.tolist() == slow.value.tolist()


def test_missing_file_and_bad_encoding(tmp_path):
    probs = Problems()
    read_qrels(tmp_path / "nope", probs)
    assert "does not exist" in str(probs.items[0])
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'[{"a": "\xff"}]')
    probs = Problems()
    assert read_citations(bad, probs, submission=True) is None
    assert "not valid UTF-8" in str(probs.items[0])


def test_fatal_problem_replaces_its_files_problems_and_stops_later_ones():
    probs = Problems()
    probs.add("a.json", 2, "x", "bad value")
    probs.add("b.json", 1, "y", "bad value")          # another file: kept
    probs.fatal("a.json", 5, "json", "Expecting value", column=3)
    probs.add("a.json", 6, "x", "a consequence")
    probs.summarize("a.json", "uuid", ["u1", "u2"], "{n} missing", "{n} missing")
    probs.fatal("a.json", 9, "json", "a second syntax error")
    assert probs.has_fatal and probs.total == 2
    assert [str(p) for p in probs.items] == ["b.json:1: y: bad value",
                                             "a.json:5:3: json: Expecting value"]


def test_fatal_problem_is_listed_past_the_cap():
    probs = Problems(cap=2)
    for k in range(5):
        probs.add("a.tsv", k + 1, "x", "bad")
    probs.fatal("b.tsv", None, "file", "does not exist")
    with pytest.raises(InvalidInput) as e:
        probs.raise_if_any()
    assert e.value.lines() == ["a.tsv:1: x: bad", "a.tsv:2: x: bad", "b.tsv: file: does not exist",
                               "... and 3 more problems (only the first 3 are listed)"]


def test_submission_service_has_no_second_copy_of_the_listing_text():
    """The web pages list problems with errors.listing, not a text of their own."""
    from importlib.util import find_spec
    from pathlib import Path
    def source(module):
        return Path(find_spec(f"shareval.platform.submissions.{module}").origin).read_text()
    assert "more problems" not in source("service") + source("isolate")
    assert "e.lines()" in source("isolate")           # the child sends the listing's lines
