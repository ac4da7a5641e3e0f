"""Crowd batches of exhaustive campaigns: numbered words and suggestions out,
accepted numbers and added 'subject | relation | object' lines back; every
problem file:line:field, nothing stored when there is one."""
from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth import get_user_model

from shareval.formats.errors import InvalidInput
from shareval.formats.kbp_runs import item_key
from shareval.platform.judging import crowd
from shareval.platform.judging.models import Assignment

from .exhaustive_world import BIRTH, RESID, campaign, kbp_world, submit_runs

PARIS_RES = item_key("Anna Berg", (0, 9), "P551", (43, 48))


@pytest.fixture
def batch(db, tmp_path):
    w = kbp_world(tmp_path)
    submit_runs(w)
    ann = get_user_model().objects.create_user("ann1", password="ann1-pass-123")
    camp = campaign(w, [ann], k=2, n=3)
    rows = {r["Input.item"]: r for r in csv.DictReader(io.StringIO(crowd.export_batch(camp)))}
    return {**w, "camp": camp, "rows": rows}


def _results(rows: list[dict]) -> str:
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=["HITId", "WorkerId", "WorkTimeInSeconds",
                                        "Answer.accepted", "Answer.added"], lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return out.getvalue()


def test_the_batch_numbers_words_and_suggestions_and_names_no_team(batch):
    rows = batch["rows"]
    assert set(rows) == {"Anna Berg", "Oslo", "Berlin"}
    r = rows["Anna Berg"]
    assert r["MaxAssignments"] == "2" and r["Input.title"] == "Anna Berg"
    assert r["Input.tokens"] == ("[1] Anna [2] Berg [3] was [4] born [5] in [6] Oslo [7] .\n"
                                 "[8] Berg [9] lives [10] in [11] Paris [12] .")
    assert r["Input.suggestions"] == ("1. Anna Berg (words 1-2) | place of birth | Oslo (word 6)\n"
                                      "2. Berg (word 8) | residence | Oslo (word 6)")
    assert "place of birth (P19)" in r["Input.relations"]
    assert (r["Answer.accepted"], r["Answer.added"]) == ("", "")
    assert not any("Team" in v for row in rows.values() for v in row.values())


def test_results_round_trip_into_stored_answers(batch):
    hit = batch["rows"]["Anna Berg"]["HITId"]
    n = crowd.import_results(batch["camp"], _results([
        {"HITId": hit, "WorkerId": "W1", "WorkTimeInSeconds": "90", "Answer.accepted": "1",
         "Answer.added": "1-2 | residence | 11"},
        {"HITId": hit, "WorkerId": "W2", "Answer.accepted": "2, 1",
         "Answer.added": "1-2|P551|11\n8 | Residence | 11"}]))
    assert n == 2
    got = {a.judge.username: a.answer for a in Assignment.objects.filter(status="done")}
    assert got["crowd-W1"] == {"relations": sorted([BIRTH, PARIS_RES])}
    assert got["crowd-W2"] == {"relations": sorted(
        [BIRTH, RESID, PARIS_RES, item_key("Anna Berg", (29, 33), "P551", (43, 48))])}
    # both of the document's k=2 are in: it leaves the batch
    assert "Anna Berg" not in crowd.export_batch(batch["camp"])


def test_bad_rows_name_line_and_column_and_nothing_is_stored(batch):
    hit = batch["rows"]["Anna Berg"]["HITId"]
    oslo = batch["rows"]["Oslo"]["HITId"]
    rows = [("W1", "3", ""), ("W2", "1", "1-2 | born in | 11"),
            ("W3", "", "0 | residence | 11"), ("W4", "", "1-2 residence 11"),
            ("W5", "", "6 | country | 6"), ("W6", "x", ""), ("W7", "", "1-2 | residence | 11-13"),
            ("W8", "", "2-1 | residence | 11"), ("W9", "", "1-2 | residence | 11"),
            ("W10", "\u00b2", "")]                  # a digit to str.isdigit(), not to int()
    text = _results([{"HITId": hit, "WorkerId": w, "Answer.accepted": acc, "Answer.added": add}
                     for w, acc, add in rows] +
                    [{"HITId": oslo, "WorkerId": "W1", "Answer.accepted": "1"}])
    with pytest.raises(InvalidInput) as e:
        crowd.import_results(batch["camp"], text, "results.csv")
    words = "of the document's words 1-12"
    assert [str(p) for p in e.value.problems] == [
        "results.csv:2: Answer.accepted: '3' is not a suggestion number (1-2)",
        "results.csv:3: Answer.added: added relation 1: relation: 'born in' is not a relation "
        "of the inventory",
        f"results.csv:4: Answer.added: added relation 1: subject: '0' is not a word number or "
        f"range N-M {words}",
        "results.csv:5: Answer.added: added relation 1: '1-2 residence 11' is not 'subject "
        "words | relation | object words'",
        "results.csv:6: Answer.added: added relation 1: the subject and the object are the "
        "same mention (characters 22-26)",
        "results.csv:7: Answer.accepted: 'x' is not a suggestion number (1-2)",
        f"results.csv:8: Answer.added: added relation 1: object: '11-13' is not a word number "
        f"or range N-M {words}",
        f"results.csv:9: Answer.added: added relation 1: subject: '2-1' is not a word number or "
        f"range N-M {words}",
        "results.csv:11: Answer.accepted: '\u00b2' is not a suggestion number (1-2)"]
    assert not Assignment.objects.filter(item__campaign=batch["camp"]).exists()


def test_a_document_without_suggestions_says_so(batch):
    from shareval.formats.errors import Problems
    from shareval.platform.judging import exhaustive_crowd
    item = batch["camp"].items.get(doc="Oslo")
    item.payload["suggestions"] = []
    p = Problems()
    assert exhaustive_crowd.parse(item, {"Answer.accepted": "1"}, "r.csv", 2, p) is None
    assert [str(x) for x in p.items] == ["r.csv:2: Answer.accepted: '1': this document has no "
                                         "suggestions"]
    assert exhaustive_crowd.parse(item, {}, "r.csv", 3, p) == {"accepted": [], "added": []}
