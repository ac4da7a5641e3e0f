"""Problems in JSON records name the record, and one problem repeated in many records
is one line: a file written by a plain ``json.dump`` has every record on line 1, so
``file:1`` alone says nothing, and a field missing from every record must not fill the
listing with one identical line per record. Checked for every JSON format a task reads."""
from __future__ import annotations

import json

import pytest

from shareval.formats.errors import InvalidInput, Problems
from shareval.formats.rcc import read_citations
from shareval.tasks import get
from tests.conftest import write

N = 150          # records: more than the 100 problems a listing holds


def _citations():
    recs = [{"publication_id": 3000 + i, "data_set_id": 1, "score": 1.0} for i in range(N)]
    recs[17]["score"] = "x"
    return recs


def _mentions():
    recs = [{"publication_id": 3000 + i, "mention": "", "score": 1.0} for i in range(N)]
    recs[17]["score"] = "x"
    return recs


def _methods():
    recs = [{"publication_id": 3000 + i, "method": ""} for i in range(N)]
    recs[17]["score"] = "x"
    return recs


def _detection():
    recs = {f"u{i:03d}": 2 for i in range(N)}
    recs["u017"] = "x"
    return recs


def _disambiguation():
    recs = {f"u{i:03d}": "v1" for i in range(N)}
    recs["u017"] = ["v1", "v1"]
    return recs


def _labels():                  # a label has one fault only: no problem of its own
    return {f"i{i:03d}": None for i in range(N)}


PUB = "record {i} (publication {p})"
# task: records, how the first records are named, the repeated problem (field: message)
# and in how many records, the problem of record 17 alone
CASES = {
    "rcc-citations": (_citations, [PUB.format(i=i, p=3000 + i) for i in range(3)],
                      "mention_list: missing (use [] when there are none)", N,
                      "record 17 (publication 3017): score: must be a finite number, found 'x'"),
    "rcc-mentions": (_mentions, [PUB.format(i=i, p=3000 + i) for i in range(3)],
                     "mention: must be a non-empty string, found ''", N,
                     "record 17 (publication 3017): score: must be a finite number, found 'x'"),
    "rcc-fields-methods": (_methods, [PUB.format(i=i, p=3000 + i) for i in range(3)],
                           "method: must be a non-empty string, found ''", N,
                           "record 17 (publication 3017): score: must be a finite number, "
                           "found 'x'"),
    "svident-detection": (_detection, ["uuid u000", "uuid u001", "uuid u002"],
                          "is_variable: expected 0 or 1, found 2", N - 1,
                          "uuid u017: is_variable: expected 0 or 1, found 'x'"),
    "svident-disambiguation": (_disambiguation, ["uuid u000", "uuid u001", "uuid u002"],
                               "variables: expected {variable_id: score} or a ranked list of "
                               "variable ids", N - 1,
                               "uuid u017: variables: the ranked list repeats a variable id"),
    "classification": (_labels, ["item i000", "item i001", "item i002"],
                       "label: must be a string or an integer", N, None),
}


def _problems(task: str, path) -> list[str]:
    with pytest.raises(InvalidInput) as e:
        get(task).validate(path)
    return e.value.lines()


@pytest.mark.parametrize("task", sorted(CASES))
def test_a_one_line_json_file_names_records_and_counts_repeats(task, tmp_path):
    make, first, repeated, n, alone = CASES[task]
    p = tmp_path / "sub.json"
    p.write_text(json.dumps(make()))                   # one line, as json.dump writes
    field, message = repeated.split(": ", 1)
    assert _problems(task, p) == [
        f"{p}:1: {field}: {message} in {n} records, first: {', '.join(first)}",
        *([f"{p}:1: {alone}"] if alone else [])]


@pytest.mark.parametrize("task", sorted(CASES))
def test_a_pretty_printed_json_file_keeps_the_records_lines(task, tmp_path):
    make, first, repeated, n, alone = CASES[task]
    p = tmp_path / "sub.json"
    p.write_text(json.dumps(make(), indent=1))
    text = p.read_text().splitlines()
    starts = [k for k, line in enumerate(text, 1) if line.startswith((' {', ' "'))]
    field, message = repeated.split(": ", 1)
    shown = ", ".join(f"{name} at line {starts[i]}" for i, name in enumerate(first))
    assert _problems(task, p) == [
        f"{p}:{starts[0]}: {field}: {message} in {n} records, first: {shown}",
        *([f"{p}:{starts[17]}: {alone}"] if alone else [])]


def test_reference_publications_name_their_records(tmp_path):
    ref = tmp_path / "ref"
    ref.mkdir()
    write(ref / "data_set_citations.json", json.dumps([{"publication_id": 1, "data_set_id": 2}]))
    write(ref / "publications.json", json.dumps([{"title": f"t{i}"} for i in range(N)]))
    problems = Problems()
    assert read_citations(ref, problems, submission=False) is None
    assert [str(x) for x in problems.items] == [
        f"{ref / 'publications.json'}:1: publication_id: missing or invalid in {N} records, "
        f"first: record 0, record 1, record 2"]


def test_two_records_are_listed_without_first(tmp_path):
    p = write(tmp_path / "sub.json", json.dumps({"a": 2, "b": 1, "c": 2}))
    assert _problems("svident-detection", p) == [
        f"{p}:1: is_variable: expected 0 or 1, found 2 in 2 records: uuid a, uuid c"]


def test_repeats_count_as_one_problem_against_the_cap(tmp_path):
    """Different faults in many records: each kind is one problem, so a listing of 100
    holds them all and the count says how many kinds there are."""
    recs = [{"publication_id": i, "data_set_id": 1, "score": 1.0, "mention_list": [],
             } for i in range(300)]
    for i, r in enumerate(recs):
        r["score"] = f"s{i % 120}"                    # 120 messages, each in 2 or 3 records
    p = write(tmp_path / "sub.json", json.dumps(recs))
    with pytest.raises(InvalidInput) as e:
        get("rcc-citations").validate(p)
    assert e.value.total == 120 and len(e.value.problems) == 100
    assert e.value.problems[0].message == ("must be a finite number, found 's0' in 3 records: "
                                           "record 0 (publication 0), record 120 (publication "
                                           "120), record 240 (publication 240)")
