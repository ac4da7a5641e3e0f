"""SV-Ident breakdowns by mention type and annotator, and inter-annotator agreement.

One tiny reference, worked by hand: document d1 (English, u1-u4) and d2 (German,
u5-u7), annotators A1 and A2. Each document is one unit, so every cell is the mean
of (en unit, de unit), or the one unit present. Cells are checked by hand
(comments show the arithmetic) and against scikit-learn / nltk."""
import itertools
import json
import math
import random
import warnings

import pytest
from nltk.metrics import distance as nltk_distance
from nltk.metrics.agreement import AnnotationTask
from sklearn.metrics import cohen_kappa_score, f1_score

from shareval.formats.errors import Problems
from shareval.formats.svident import read_reference
from shareval.tasks import get
from shareval.tasks.svident import annotator_agreement
from tests.conftest import write

HEADER = ["sentence", "is_variable", "variable", "research_data", "doc_id", "uuid", "lang",
          "mention_type", "is_variable@A1", "variable@A1", "mention_type@A1",
          "is_variable@A2", "variable@A2", "mention_type@A2"]
#        uuid  doc  lang  ref: flag vars  type        A1: flag vars type     A2: flag vars type
ROWS = [("u1", "d1", "en", "1", "v1", "explicit", "1", "v1", "explicit", "1", "v1", "explicit"),
        ("u2", "d1", "en", "1", "v2;v3", "implicit", "1", "v2", "implicit", "1", "v2;v3",
         "explicit"),
        ("u3", "d1", "en", "0", "", "", "0", "", "", "1", "v4", "implicit"),
        ("u4", "d1", "en", "0", "", "", "0", "", "", "0", "", ""),
        ("u5", "d2", "de", "1", "v5", "explicit", "1", "v5", "explicit", "1", "v5", "explicit"),
        ("u6", "d2", "de", "0", "", "", "1", "unk", "implicit", "0", "", ""),
        ("u7", "d2", "de", "0", "", "", "0", "", "", "0", "", "")]
DETECTION = {"u1": 1, "u2": 0, "u3": 1, "u4": 0, "u5": 1, "u6": 1, "u7": 0}
RANKING = {"u1": {"v1": 0.9, "v9": 0.5}, "u2": {"v3": 0.9, "v2": 0.5}, "u3": {"v4": 0.8},
           "u5": {"v9": 0.9, "v5": 0.1}}


def tsv(header, rows):
    return "\t".join(header) + "\n" + "".join("\t".join(r) + "\n" for r in rows)


@pytest.fixture
def ref(tmp_path):
    rows = [("s", flag, var, "R", doc, u, lang, t, *ann)
            for u, doc, lang, flag, var, t, *ann in ROWS]
    return write(tmp_path / "ref.tsv", tsv(HEADER, rows))


def score(tmp_path, ref, task, preds):
    return get(task).score(ref, write(tmp_path / "sub.json", json.dumps(preds)))


def f1(cell_uuids, labels):
    """The oracle: scikit-learn macro F1 per document, mean over documents (one per language)."""
    doc = {r[0]: r[1] for r in ROWS}
    by_doc = {}
    for u in cell_uuids:
        by_doc.setdefault(doc[u], []).append(u)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sum(f1_score([labels[u] for u in us], [DETECTION[u] for u in us],
                            average="macro") for us in by_doc.values()) / len(by_doc)


REF = {r[0]: int(r[3]) for r in ROWS}
A1 = {r[0]: int(r[6]) for r in ROWS}
A2 = {r[0]: int(r[9]) for r in ROWS}


def test_task1_overall_is_unchanged_and_cells_by_hand(tmp_path, ref):
    r = score(tmp_path, ref, "svident-detection", DETECTION)
    # d1: y 1100, p 1010: class 1 P=R=1/2, class 0 P=R=1/2 -> F 1/2
    # d2: y 100, p 110: class 1 P 1/2 R 1 F 2/3; class 0 P 1 R 1/2 F 2/3 -> F 2/3
    assert r.metrics["f1_macro"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    t = r.breakdowns["per_mention_type"]
    assert sorted(t) == ["explicit", "implicit"]
    # explicit = u1, u5 + negatives u3 u4 u6 u7: d1 {u1,u3,u4} y 100 p 110 -> 2/3;
    # d2 {u5,u6,u7} y 100 p 110 -> 2/3
    assert t["explicit"] == {"f1_macro": pytest.approx(2 / 3), "sentences": 2,
                             "precision_macro": pytest.approx(3 / 4),
                             "recall_macro": pytest.approx(3 / 4)}
    # implicit = u2 + negatives: d1 {u2,u3,u4} y 100 p 010: class 1 F 0, class 0 P=R=1/2 ->
    # 1/4; d2 {u6,u7} y 00 p 10: class 0 P 1 R 1/2 F 2/3, class 1 F 0 -> 1/3
    assert t["implicit"]["f1_macro"] == pytest.approx((1 / 4 + 1 / 3) / 2)
    assert t["implicit"]["sentences"] == 1

    a = r.breakdowns["per_annotator"]
    assert sorted(a) == ["A1", "A2", "agreed"]
    # A1 labels 1100 | 110: d1 as the reference 1/2; d2 y 110 p 110 -> 1
    assert a["A1"]["f1_macro"] == pytest.approx((1 / 2 + 1) / 2)
    assert (a["A1"]["sentences"], a["A1"]["sentences_scored"]) == (4, 7)
    # A2 labels 1110 | 100: d1 y 1110 p 1010: class 1 P 1 R 2/3 F 4/5, class 0 P 1/2 R 1
    # F 2/3 -> 11/15; d2 -> 2/3 as the reference
    assert a["A2"]["f1_macro"] == pytest.approx((11 / 15 + 2 / 3) / 2)
    # agreed on is_variable: u1 u2 u4 u5 u7 (A1 and A2 differ on u3, u6), reference labels:
    # d1 {u1,u2,u4} y 110 p 100: F 2/3; d2 {u5,u7} y 10 p 10: 1
    assert a["agreed"]["f1_macro"] == pytest.approx((2 / 3 + 1) / 2)
    assert (a["agreed"]["sentences"], a["agreed"]["sentences_scored"]) == (3, 5)

    at = r.breakdowns["per_annotator_type"]
    assert sorted(at) == ["A1 explicit", "A1 implicit", "A2 explicit", "A2 implicit",
                          "agreed explicit"]          # u2 typed differently: no agreed implicit
    # A1 explicit = u1 u5 + A1's 0s u3 u4 u7: d1 {u1,u3,u4} y 100 p 110 -> 2/3; d2 {u5,u7} -> 1
    assert at["A1 explicit"]["f1_macro"] == pytest.approx((2 / 3 + 1) / 2)
    # A1 implicit = u2 u6 + u3 u4 u7: d1 {u2,u3,u4} -> 1/4 (above); d2 {u6,u7} y 10 p 10 -> 1
    assert at["A1 implicit"]["f1_macro"] == pytest.approx((1 / 4 + 1) / 2)
    # A2 explicit = u1 u2 u5 + A2's 0s u4 u6 u7: d1 {u1,u2,u4} y 110 p 100 -> 2/3; d2 -> 2/3
    assert at["A2 explicit"]["f1_macro"] == pytest.approx(2 / 3)
    assert at["A2 explicit"]["sentences"] == 3
    # A2 implicit = u3 + u4 u6 u7: d1 {u3,u4} y 10 p 10 -> 1; d2 {u6,u7} y 00 p 10 -> 1/3
    assert at["A2 implicit"]["f1_macro"] == pytest.approx((1 + 1 / 3) / 2)
    # agreed explicit = u1 u5 + agreed 0s u4 u7: both units perfect
    assert at["agreed explicit"]["f1_macro"] == pytest.approx(1.0)
    assert at["agreed explicit"]["sentences"] == 2

    # the same cells from scikit-learn
    cells = {("per_annotator", "A1"): (list(A1), A1), ("per_annotator", "A2"): (list(A2), A2),
             ("per_annotator", "agreed"): (["u1", "u2", "u4", "u5", "u7"], REF),
             ("per_annotator_type", "A2 implicit"): (["u3", "u4", "u6", "u7"], A2),
             ("per_mention_type", "implicit"): (["u2", "u3", "u4", "u6", "u7"], REF)}
    for (b, k), (us, labels) in cells.items():
        assert r.breakdowns[b][k]["f1_macro"] == pytest.approx(f1(us, labels), abs=1e-12)
    assert "per_annotator" in r.conventions and "per_mention_type" in r.conventions


def test_task2_cells_by_hand(tmp_path, ref):
    r = score(tmp_path, ref, "svident-disambiguation", RANKING)
    # reference: u1 {v1} AP 1; u2 {v2,v3} both in the top 2: AP 1; u5 {v5} at rank 2: AP 1/2
    assert r.metrics["map@10"] == pytest.approx((1 + 1) / 2 / 2 + 0.5 / 2)
    a = r.breakdowns["per_annotator"]
    # A1: u1 {v1} 1; u2 {v2} at rank 2: 1/2; u5 1/2 (u6: 'unk' only, not evaluated)
    assert a["A1"]["map@10"] == pytest.approx(((1 + 1 / 2) / 2 + 1 / 2) / 2)
    assert a["A1"]["sentences"] == 3
    # A1 R-precision: u1 1, u2 (R 1, top 1 is v3) 0, u5 0
    assert a["A1"]["r_precision"] == pytest.approx(((1 + 0) / 2 + 0) / 2)
    # A2: u1 1, u2 {v2,v3} 1, u3 {v4} 1 | u5 1/2
    assert a["A2"]["map@10"] == pytest.approx((1 + 1 / 2) / 2)
    assert a["A2"]["sentences"] == 4
    # agreed on is_variable and the set: u1, u5 (u2: {v2} vs {v2,v3}); reference labels
    assert a["agreed"]["map@10"] == pytest.approx((1 + 1 / 2) / 2)
    assert a["agreed"]["sentences"] == 2
    at = r.breakdowns["per_annotator_type"]
    assert sorted(at) == ["A1 explicit", "A1 implicit", "A2 explicit", "A2 implicit",
                          "agreed explicit"]
    assert at["A1 explicit"]["map@10"] == pytest.approx((1 + 1 / 2) / 2)    # u1 | u5
    assert at["A1 implicit"]["map@10"] == pytest.approx(1 / 2)              # u2 alone (en)
    assert at["A2 explicit"]["map@10"] == pytest.approx(((1 + 1) / 2 + 1 / 2) / 2)  # u1 u2|u5
    assert at["A2 implicit"]["map@10"] == pytest.approx(1.0)                # u3 alone
    assert at["agreed explicit"] == {**a["agreed"]}                         # u1 | u5
    # the existing per_mention_type is kept: explicit u1 | u5, implicit u2
    assert r.breakdowns["per_mention_type"]["implicit"]["map@10"] == pytest.approx(1.0)
    assert "per_annotator" in r.conventions


def test_task2_annotator_cells_follow_empty_units(tmp_path, ref):
    """A2's only German sentence u5 gets no prediction: skip leaves that unit out,
    zero scores it 0 (as the result's own rule)."""
    run = {u: v for u, v in RANKING.items() if u != "u5"}
    sub = write(tmp_path / "sub.json", json.dumps(run))
    task = get("svident-disambiguation")
    skip = task.score(ref, sub).breakdowns["per_annotator"]["A2"]
    zero = task.score(ref, sub, empty_units="zero").breakdowns["per_annotator"]["A2"]
    assert (skip["map@10"], skip["sentences"]) == (pytest.approx(1.0), 3)   # en only
    assert (zero["map@10"], zero["sentences"]) == (pytest.approx((1 + 0) / 2), 4)


def test_agreement_by_hand_and_against_sklearn_and_nltk(ref):
    g = annotator_agreement(str(ref))
    assert sorted(g) == ["all", "de", "en"]
    # all: A1 1100110, A2 1110100: observed 5/7, chance (4/7)^2 + (3/7)^2 = 25/49
    assert g["all"]["cohen_kappa"] == pytest.approx((5 / 7 - 25 / 49) / (1 - 25 / 49))  # 5/12
    assert g["en"]["cohen_kappa"] == pytest.approx(1 / 2)       # (3/4 - 1/2) / (1 - 1/2)
    assert g["de"]["cohen_kappa"] == pytest.approx(2 / 5)       # (2/3 - 4/9) / (1 - 4/9)
    for lang, us in [("all", list(A1)), ("en", ["u1", "u2", "u3", "u4"]),
                     ("de", ["u5", "u6", "u7"])]:
        assert g[lang]["cohen_kappa"] == pytest.approx(
            cohen_kappa_score([A1[u] for u in us], [A2[u] for u in us]), abs=1e-12)
    # en alpha over u1 ({v1},{v1}), u2 ({v2},{v2,v3}), u3 ({},{v4}): of the 15 pairs of the
    # 6 values one is equal, {v2}-{v2,v3} is at Jaccard 1/2 (MASI 2/3), the 13 others at 1.
    # Jaccard: D_o = (0 + 2*1/2 + 2*1) / 6 = 1/2, D_e = 2 * 13.5 / 30 = 9/10 -> 1 - 5/9
    assert g["en"]["alpha_jaccard"] == pytest.approx(4 / 9)
    # MASI: D_o = (2*2/3 + 2) / 6 = 5/9, D_e = 2 * (13 + 2/3) / 30 = 41/45 -> 1 - 25/41
    assert g["en"]["alpha_masi"] == pytest.approx(16 / 41)
    # de: u5 ({v5},{v5}), u6 ({}, {}: A1 marked it with 'unk' only): no disagreement
    assert g["de"]["alpha_masi"] == g["de"]["alpha_jaccard"] == 1.0
    assert (g["all"]["sentences"], g["all"]["sentences_marked"]) == (7, 5)
    assert (g["en"]["sentences"], g["en"]["sentences_marked"]) == (4, 3)
    # labels: A1 v1 v2 v5, A2 v1 v2 v3 v4 v5
    assert (g["all"]["variables_labelled"], g["all"]["variables_unique"]) == (8, 5)
    assert g["en"]["variables_labelled"] == 6 and g["all"]["annotators"] == ["A1", "A2"]
    sets = {r[0]: (frozenset(_ids(r[7])), frozenset(_ids(r[10]))) for r in ROWS
            if "1" in (r[6], r[9])}
    assert g["all"]["alpha_masi"] == pytest.approx(_nltk_alpha(sets, "masi"), abs=1e-12)
    assert g["all"]["alpha_jaccard"] == pytest.approx(_nltk_alpha(sets, "jaccard"), abs=1e-12)


def _ids(cell):
    return [v for v in cell.split(";") if v and v != "unk"]


def _nltk_alpha(sets, name):
    """nltk's alpha; its distances divide by zero on two empty sets, which are equal (0)."""
    oracle = getattr(nltk_distance, f"{name}_distance")
    triples = [(f"A{i + 1}", u, s) for u, pair in sets.items() for i, s in enumerate(pair)]
    return AnnotationTask(data=triples, distance=lambda a, b: 0.0 if a == b else oracle(a, b)
                          ).alpha()


def test_agreement_of_three_annotators_on_random_data(tmp_path):
    rnd = random.Random(7)
    names = ["A1", "A2", "anna"]
    header = HEADER[:7] + [f"{f}@{n}" for n in names for f in ("is_variable", "variable")]
    rows, flags, sets = [], {n: [] for n in names}, {}
    for i in range(60):
        cells, marks = [], []
        for n in names:
            flag = rnd.random() < 0.5
            ids = rnd.sample(["a", "b", "c", "d"], rnd.randint(1, 2)) if flag else []
            cells += [str(int(flag)), ";".join(ids)]
            flags[n].append(int(flag))
            marks.append(frozenset(ids))
        if any(flags[n][-1] for n in names):
            sets[f"u{i}"] = marks
        rows.append(["s", "0", "", "R", f"d{i % 3}", f"u{i}", "en", *cells])
    path = write(tmp_path / "ref.tsv", tsv(header, rows))
    g = annotator_agreement(str(path))["all"]
    pairs = [cohen_kappa_score(flags[a], flags[b]) for a, b in itertools.combinations(names, 2)]
    assert g["cohen_kappa"] == pytest.approx(sum(pairs) / 3, abs=1e-12)
    for name in ("masi", "jaccard"):
        oracle = getattr(nltk_distance, f"{name}_distance")
        triples = [(names[i], u, s) for u, marks in sets.items() for i, s in enumerate(marks)]
        expected = AnnotationTask(data=triples, distance=lambda a, b: 0.0 if a == b
                                  else oracle(a, b)).alpha()
        assert g[f"alpha_{name}"] == pytest.approx(expected, abs=1e-12)
    assert g["annotators"] == names and g["sentences_marked"] == len(sets)


def test_reference_without_annotator_columns_has_no_new_breakdowns(tmp_path):
    header = HEADER[:7]
    rows = [("s", r[3], r[4], "R", r[1], r[0], r[2]) for r in ROWS]
    path = write(tmp_path / "ref.tsv", tsv(header, rows))
    r = score(tmp_path, path, "svident-detection", DETECTION)
    assert sorted(r.breakdowns) == ["per_document", "per_language"]
    assert not {"per_annotator", "per_annotator_type", "per_mention_type"} & set(r.conventions)
    r2 = score(tmp_path, path, "svident-disambiguation", RANKING)
    assert sorted(r2.breakdowns) == ["per_document", "per_language"]
    assert annotator_agreement(str(path)) == {}
    ref = read_reference(path, Problems())
    assert annotator_agreement(ref) == {}


def test_task1_per_mention_type_without_annotators(tmp_path):
    """mention_type alone gives Task 1's per_mention_type, with an 'unlabelled' key for a
    positive sentence without a type; no annotator breakdowns."""
    header = HEADER[:8]
    rows = [("s", r[3], r[4], "R", r[1], r[0], r[2], r[5] if r[0] != "u2" else "")
            for r in ROWS]
    path = write(tmp_path / "ref.tsv", tsv(header, rows))
    r = score(tmp_path, path, "svident-detection", DETECTION)
    t = r.breakdowns["per_mention_type"]
    assert sorted(t) == ["explicit", "unlabelled"] and "per_annotator" not in r.breakdowns
    # u2 untyped: 'unlabelled' is what 'implicit' was above
    assert t["unlabelled"]["f1_macro"] == pytest.approx((1 / 4 + 1 / 3) / 2)
    assert math.isclose(t["explicit"]["f1_macro"], 2 / 3)
