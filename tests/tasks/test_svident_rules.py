"""SV-Ident disambiguation rules where a broken rule changes the score: a sentence
without a prediction counts 0 in its unit's mean (never dropped), units are averaged
per language first."""
import json

import pytest

from shareval.formats.errors import InvalidInput
from shareval.tasks import get
from tests.conftest import write
from tests.tasks.test_svident import reference


def test_sentence_without_prediction_scores_zero_in_its_unit(tmp_path):
    rows = [["s", "1", "a", "R", "d1", "u1", "en"],
            ["s", "1", "b", "R", "d1", "u2", "en"],
            ["s", "1", "c", "R", "d1", "u3", "en"],
            ["s", "1", "a", "R", "g1", "u4", "de"]]
    ref = reference(tmp_path, rows)
    # u1 perfect, u2 at rank 2, u3 without any prediction, u4 perfect
    sub = write(tmp_path / "sub.json", json.dumps({"u1": ["a"], "u2": ["x", "b"], "u4": ["a"]}))
    r = get("svident-disambiguation").score(ref, sub)
    d1 = (1 + 0.5 + 0) / 3                      # dropping u3 would give 0.75
    assert r.breakdowns["per_document"]["d1"]["map@10"] == pytest.approx(d1)
    assert r.metrics["map@10"] == pytest.approx((d1 + 1.0) / 2)
    assert r.metrics["map@1"] == pytest.approx((1 / 3 + 1.0) / 2)
    assert r.counts["sentences_without_prediction"] == 1
    assert r.counts["sentences_evaluated"] == 4
    assert any("1 evaluated sentences have no prediction (scored 0)" in w and "u3" in w
               for w in r.warnings)


# d1 is English; d2 has a German and an English sentence: two units, "d2 (de)" and "d2 (en)".
# Variables: u1 {v1}, u3 {v2, v3}; u2 and u4 have none.
MIXED = ("sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"
         "s\t1\tv1\tR\td1\tu1\ten\ns\t0\t\tR\td1\tu2\ten\n"
         "s\t1\tv2;v3\tR\td2\tu3\tde\ns\t0\t\tR\td2\tu4\ten\n")
MIXED_WARNING = ("documents with sentences in several languages, scored as one unit per "
                 "language (as the official scripts do): d2 (de, en)")


def test_detection_rows_counts_and_warnings_by_hand(tmp_path):
    """d1: true (1, 0), predicted (1, 1): class 1 P 1/2 R 1 F1 2/3, class 0 never predicted
    (P 0 by zero division) R 0: macro P 1/4, R 1/2, F1 1/3. d2 (de): true 1, predicted 0:
    all 0 (two zero divisions). d2 (en): true 0, predicted 0: 1. English = mean(d1, d2 (en)),
    German = d2 (de), overall = mean over the two languages."""
    ref = write(tmp_path / "ref.tsv", MIXED)
    sub = write(tmp_path / "p.json", json.dumps({"u1": 1, "u2": 1, "u3": 0, "u4": 0}))
    r = get("svident-detection").score(ref, sub)
    row = {"d1": (1 / 3, 1 / 4, 1 / 2, 2, 1, "d1", "en"), "d2 (de)": (0, 0, 0, 1, 1, "d2", "de"),
           "d2 (en)": (1, 1, 1, 1, 0, "d2", "en")}
    keys = ("f1_macro", "precision_macro", "recall_macro", "sentences", "positives", "doc_id",
            "lang")
    assert r.breakdowns["per_document"] == {u: pytest.approx(dict(zip(keys, v)))
                                            for u, v in row.items()}
    assert r.breakdowns["per_language"]["en"] == pytest.approx(
        {"f1_macro": (1 / 3 + 1) / 2, "precision_macro": (1 / 4 + 1) / 2,
         "recall_macro": (1 / 2 + 1) / 2, "documents": 2})
    assert r.metrics == pytest.approx({"f1_macro": (2 / 3 + 0) / 2,
                                       "precision_macro": (5 / 8 + 0) / 2,
                                       "recall_macro": (3 / 4 + 0) / 2})
    assert r.counts == {"sentences": 4, "documents": 2, "units": 3, "languages": 2}
    assert r.warnings == ["2 units have a class with no predictions or no reference items; its "
                          "precision/recall counted as 0", MIXED_WARNING]


def test_detection_needs_every_sentence_disambiguation_does_not(tmp_path):
    ref = write(tmp_path / "ref.tsv", MIXED)
    sub = write(tmp_path / "p.json", json.dumps({"u1": 1, "x1": 0, "x2": 1}))
    with pytest.raises(InvalidInput) as e:
        get("svident-detection").score(ref, sub)
    msgs = [str(p) for p in e.value.problems]
    assert any(m.startswith(f"{sub}:") and ": uuid: 2 uuids are not in the reference: 'x1', "
               "'x2'" in m for m in msgs), msgs
    assert f"{sub}: uuid: 3 sentences have no prediction: 'u2', 'u3', 'u4'" in msgs
    with pytest.raises(InvalidInput):                      # the paired tests check it too
        get("svident-detection").unit_stats(ref, sub)
    one = write(tmp_path / "one.json", json.dumps({"u1": 1, "u2": 0, "u3": 1}))
    with pytest.raises(InvalidInput) as e:
        get("svident-detection").score(ref, one)
    assert [str(p) for p in e.value.problems] == [f"{one}: uuid: 1 sentence has no "
                                                  "prediction: 'u4'"]
    # disambiguation scores a sentence without prediction 0 instead (empty_units=zero); by
    # default a unit with no prediction at all is left out, as the official script does
    r = get("svident-disambiguation").score(ref, write(tmp_path / "r.json",
                                                       json.dumps({"u1": {"v1": 1.0}})),
                                            empty_units="zero")
    assert r.counts["sentences_without_prediction"] == 1 and r.metrics["map@10"] == 0.5
    r = get("svident-disambiguation").score(ref, tmp_path / "r.json")
    assert r.counts["sentences_without_prediction"] == 0 and r.counts["units_left_out"] == 1
    assert r.metrics["map@10"] == 1.0 and r.conventions["empty_units"] == "skip"
    assert r.warnings[0].startswith("1 units have no prediction at all and are left out")


def test_disambiguation_rows_and_counts_by_hand(tmp_path):
    """u1 ranks v1 first (AP 1, P@10 1/10); u3 finds v3 of {v2, v3} first (AP 1/2, R-prec
    1/2): d1 (en) 1, d2 (de) 1/2, overall the mean over the two languages."""
    ref = write(tmp_path / "ref.tsv", MIXED)
    sub = write(tmp_path / "r.json", json.dumps({"u1": {"v1": 1.0, "v9": 0.5},
                                                 "u3": {"v3": 0.9}}))
    r = get("svident-disambiguation").score(ref, sub)
    assert r.metrics == pytest.approx({"map@1": 0.75, "map@5": 0.75, "map@10": 0.75,
                                       "map@20": 0.75, "r_precision": 0.75, "p@10": 0.1})
    assert {u: (d["sentences"], d["doc_id"], d["lang"], d["map@10"])
            for u, d in r.breakdowns["per_document"].items()} == {
        "d1": (1, "d1", "en", 1.0), "d2 (de)": (1, "d2", "de", 0.5)}
    assert r.counts == {"sentences_evaluated": 2, "sentences_in_reference": 4,
                        "sentences_without_prediction": 0, "predictions_ignored": 0,
                        "units_left_out": 0, "documents": 2, "units": 2, "languages": 2}
    assert r.warnings == [MIXED_WARNING]
    u = get("svident-disambiguation").unit_stats(ref, sub)
    assert sorted(u.units) == ["d1", "d2 (de)"]


@pytest.mark.parametrize("name", ["de.tsv", "en.tsv"])
def test_a_trial_file_without_lang_takes_its_language_from_its_name(tmp_path, name):
    # conventions.md, SV-Ident: the language comes from the file name (en.tsv, de.tsv)
    ref = write(tmp_path / name, "doc_id\ttext\tis_variable\tvariable\tuuid\n"
                                 "d1\tAlter\t1\t311-yes,286-No\tu1\nd1\tHallo\t0\tNo\tu2\n")
    sub = write(tmp_path / "sub.json", json.dumps({"u1": 1, "u2": 0}))
    r = get("svident-detection").score(ref, sub)
    assert list(r.breakdowns["per_language"]) == [name[:2]]
    assert r.metrics["f1_macro"] == 1.0
    other = write(tmp_path / "fr.tsv", (tmp_path / name).read_text())
    with pytest.raises(InvalidInput) as e:
        get("svident-detection").score(other, sub)
    assert "missing column lang" in str(e.value.problems[0])


LANGS = ["en", "de", "en", "de", "en"]


def _two_languages(tmp_path):
    """3 English and 2 German documents of two sentences, the second with a variable."""
    return reference(tmp_path, [["s", str(k), f"v{d}" if k else "", "", f"d{d}", f"u{d}_{k}",
                                 lang] for d, lang in enumerate(LANGS) for k in (0, 1)])


@pytest.mark.parametrize("task,sub", [
    ("svident-detection", {f"u{d}_{k}": k for d in range(5) for k in (0, 1)}),
    ("svident-disambiguation", {f"u{d}_1": {f"v{d}": 1.0, "x": 0.5} for d in range(5)})])
def test_compare_resamples_documents_within_their_language(tmp_path, task, sub):
    # conventions.md, compare: SV-Ident units are resampled within each language
    ref = _two_languages(tmp_path)
    s = write(tmp_path / "sub.json", json.dumps(sub))
    stats = get(task).unit_stats(ref, s)
    assert stats.units == [f"d{d}" for d in range(5)]
    assert list(stats.strata) == LANGS
