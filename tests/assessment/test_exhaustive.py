"""Recall judgments from exhaustive annotation: worked examples by hand, and
estimate_all on them giving recall = true items output / true items."""
from __future__ import annotations

import pytest

from shareval.assessment.estimate import estimate_all
from shareval.assessment.exhaustive import item_doc, recall_judgments
from shareval.assessment.judgments import Judgments
from shareval.formats.kbp_runs import item_key

# document "D": four relation mentions; document "E": two
A = item_key("D", (0, 4), "P19", (10, 14))
B = item_key("D", (0, 4), "P27", (20, 26))
C = item_key("D", (30, 35), "P17", (20, 26))
X = item_key("D", (40, 44), "P36", (0, 4))        # suggested, true for nobody
F = item_key("E", (0, 3), "P19", (5, 9))
G = item_key("E", (5, 9), "P17", (11, 16))


def _rows(records):
    return {(r.item, r.judge): (r.answer, r.submissions) for r in records}


def test_one_record_per_item_and_annotator_over_marked_and_suggested_items():
    recs = recall_judgments({"D": {"ann": {A, C}}},
                            {"team1": {A, X}, "team2": {A}}, {"D": {A, X}})
    # items: marked A, C plus suggested X (A is both); one annotator
    assert _rows(recs) == {(A, "ann"): (1.0, ("team1", "team2")),
                           (C, "ann"): (1.0, ()),
                           (X, "ann"): (0.0, ("team1",))}
    assert all((r.drawn_for, r.question, r.inclusion, r.doc, r.drawn_by) ==
               ("recall", "correct", 1.0, "D", ()) for r in recs)


def test_each_annotator_judges_every_item_of_the_document():
    recs = recall_judgments({"D": {"p": {A, B}, "q": {A, C}}}, {"t": {A}}, {"D": set()})
    assert _rows(recs) == {(A, "p"): (1.0, ("t",)), (A, "q"): (1.0, ("t",)),
                           (B, "p"): (1.0, ()), (B, "q"): (0.0, ()),
                           (C, "p"): (0.0, ()), (C, "q"): (1.0, ())}


def test_without_suggestions_the_pool_is_the_outputs_on_the_document():
    recs = recall_judgments({"D": {"ann": {A}}}, {"t": {A, X, F}})
    # F is on document E, which nobody annotated: no record
    assert _rows(recs) == {(A, "ann"): (1.0, ("t",)), (X, "ann"): (0.0, ("t",))}


def test_documents_nobody_annotated_give_nothing():
    assert recall_judgments({}, {"t": {A}}, {"D": {A}}) == []
    assert recall_judgments({"D": {}}, {"t": {A}}, {"D": {A}}) == []


def test_item_doc_reads_titles_with_bars():
    assert item_doc(item_key("a|b", (0, 1), "P1", (2, 3))) == "a|b"
    assert item_doc("plain|line") == "plain"


def _recall(annotations, outputs, suggestions=None):
    table, _ = estimate_all(Judgments(recall_judgments(annotations, outputs, suggestions),
                                      {n: max(len(k), 1) for n, k in outputs.items()}),
                            bootstrap=0)
    return {n: table[n].get("recall") for n in outputs}


def test_estimate_all_gives_true_items_output_over_true_items():
    # true: A, B, C in D (one annotator), F, G in E; X true for nobody
    annotations = {"D": {"ann": {A, B, C}}, "E": {"ann2": {F, G}}}
    outputs = {"t1": {A, X, F}, "t2": {A, B, C, G}, "t3": {X}}
    r = _recall(annotations, outputs)
    assert r["t1"] == pytest.approx(2 / 5)          # A, F
    assert r["t2"] == pytest.approx(4 / 5)          # A, B, C, G
    assert r["t3"] == pytest.approx(0.0)            # X is not true


def test_disagreeing_annotators_count_by_their_mean():
    # A: both mark it (1); B: one of two (0.5); C: one of two (0.5); true mass 2
    annotations = {"D": {"p": {A, B}, "q": {A, C}}}
    outputs = {"t1": {A}, "t2": {B}, "t3": {B, C}}
    r = _recall(annotations, outputs)
    assert r["t1"] == pytest.approx(1 / 2)
    assert r["t2"] == pytest.approx(0.5 / 2)
    assert r["t3"] == pytest.approx(1 / 2)


def test_an_item_only_an_annotator_found_lowers_everyone():
    r = _recall({"D": {"ann": {A, C}}}, {"t": {A}}, {"D": {A}})
    assert r["t"] == pytest.approx(1 / 2)
