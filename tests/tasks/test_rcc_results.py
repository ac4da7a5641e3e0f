"""Whole RCC results by hand (docs/conventions.md, "Rich Context Competition"): every
per-publication row, count, warning and convention of the three RCC tasks on cases
small enough to count on paper, so a wrong field, order or rule changes an equality."""
import json

import numpy as np
import pytest

from shareval.formats.errors import InvalidInput
from shareval.tasks import get
from shareval.tasks.rcc import PR_CURVE_POINTS, pr_curve
from tests.conftest import write


def cit(pub, ds, score=1.0, mentions=()):
    return {"publication_id": pub, "data_set_id": ds, "score": score,
            "mention_list": list(mentions)}


def files(tmp_path, ref, sub):
    return (write(tmp_path / "ref.json", json.dumps(ref)),
            write(tmp_path / "sub.json", json.dumps(sub)))


def prf(tp, fp, fn, prefix=""):
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0
    return {f"{prefix}precision": pytest.approx(p), f"{prefix}recall": pytest.approx(r),
            f"{prefix}f1": pytest.approx(f)}


def row(tp, fp, fn, above_fp, above_fn):
    return {"tp": tp, "fp": fp, "fn": fn, **prf(tp, fp, fn), "above_mean_fp": above_fp,
            "above_mean_fn": above_fn}


# ---------------------------------------------------------------------------
# rcc-citations

def test_citations_whole_result_by_hand(tmp_path):
    # reference: pub 10 -> d1, d2; pub 9 -> d3 (listed twice); pub 2 -> d4
    ref = [cit(10, "d1"), cit(10, "d2"), cit(9, "d3"), cit(9, "d3"), cit(2, "d4")]
    # submission: pub 10 finds d1 (twice) and d9; pub 9 finds d3; pub 7 (no gold) d5
    sub = [cit(10, "d1", 0.9), cit(10, "d1", 0.3), cit(10, "d9", 0.6), cit(9, "d3", 0.6),
           cit(7, "d5", 0.2)]
    r = get("rcc-citations").score(*files(tmp_path, ref, sub))
    # pairs: tp (10,d1) (9,d3); fp (10,d9) (7,d5); fn (10,d2) (2,d4)
    assert r.metrics == {**prf(2, 2, 2), "tp": 2, "fp": 2, "fn": 2}
    # publications in natural order (numbers as numbers); mean fp = mean fn = 2/4
    pp = r.breakdowns["per_publication"]
    assert list(pp) == ["2", "7", "9", "10"]
    assert pp == {"2": row(0, 0, 1, False, True), "7": row(0, 1, 0, True, False),
                  "9": row(1, 0, 0, False, False), "10": row(1, 1, 1, True, True)}
    assert r.counts == {"reference_pairs": 4, "submitted_pairs": 4, "submitted_records": 5,
                        "duplicate_records": 1, "publications": 4,
                        "publications_above_mean_fp": 2, "publications_above_mean_fn": 2,
                        "mean_fp_per_publication": 0.5, "mean_fn_per_publication": 0.5}
    assert r.warnings == [
        "1 duplicate (publication_id, data_set_id) records in the submission were counted once",
        "1 duplicate pairs in the reference were counted once"]
    assert r.conventions["min_score"] is None and r.task == "rcc-citations"
    # the duplicate keeps 0.9: three points at 0.9, 0.6 (two pairs) and 0.2
    assert r.breakdowns["pr_curve"] == {
        "0.9": {**prf(1, 0, 3), "pairs": 1}, "0.6": {**prf(2, 1, 2), "pairs": 3},
        "0.2": {**prf(2, 2, 2), "pairs": 4}}


def test_a_corpus_lists_every_publication_in_its_order(tmp_path):
    (tmp_path / "ref").mkdir()
    write(tmp_path / "ref" / "data_set_citations.json", json.dumps([cit(5, "a"), cit(3, "b")]))
    write(tmp_path / "ref" / "publications.json",
          json.dumps([{"publication_id": p} for p in (5, 4, 3)]))
    sub = write(tmp_path / "sub.json", json.dumps([cit(5, "a"), cit(3, "c")]))
    r = get("rcc-citations").score(tmp_path / "ref", sub)
    pp = r.breakdowns["per_publication"]
    assert list(pp) == ["5", "4", "3"]                 # the corpus' order, 4 without data
    # mean fp = mean fn = 1/3: only publication 3 is above
    assert pp["4"] == row(0, 0, 0, False, False)
    assert pp["3"] == row(0, 1, 1, True, True) and pp["5"] == row(1, 0, 0, False, False)
    assert r.counts["publications"] == 3
    assert r.counts["mean_fp_per_publication"] == pytest.approx(1 / 3)
    stats = get("rcc-citations").unit_stats(tmp_path / "ref", sub)
    assert stats.units == ["5", "4", "3"] and stats.metric == "f1"
    assert stats.stats.tolist() == [[1, 0, 0], [0, 0, 0], [0, 1, 1]]
    assert stats.weights.tolist() == [1, 1, 1] and stats.strata is None
    # the aggregate is the micro F1 of the summed counts: 2 * 1 / (2 + 1 + 1)
    assert float(stats.aggregate(stats.stats, stats.weights)) == pytest.approx(0.5)
    assert float(stats.aggregate(stats.stats[[1]], stats.weights[[1]])) == 0.0


def test_paired_comparison_refuses_publications_outside_the_corpus(tmp_path):
    # a submitted publication outside publications.json is an error, for compare too
    (tmp_path / "ref").mkdir()
    write(tmp_path / "ref" / "data_set_citations.json", json.dumps([cit(5, "a")]))
    write(tmp_path / "ref" / "publications.json", json.dumps([{"publication_id": 5}]))
    sub = write(tmp_path / "sub.json", json.dumps([cit(5, "a"), cit(6, "b")]))
    for call in (get("rcc-citations").score, get("rcc-citations").unit_stats):
        with pytest.raises(InvalidInput) as e:
            call(tmp_path / "ref", sub)
        assert [(p.field, p.message) for p in e.value.problems] == [
            ("publication_id",
             "1 record names a publication not in the evaluated corpus: '6' (record 1)")]
    sub = write(tmp_path / "sub.json", json.dumps([cit(6, "a"), cit(7, "b")]))
    with pytest.raises(InvalidInput) as e:
        get("rcc-citations").unit_stats(tmp_path / "ref", sub)
    assert [(p.field, p.message) for p in e.value.problems] == [
        ("publication_id",
         "2 records name publications not in the evaluated corpus: '6', '7' (records 0, 1)")]


def test_rows_add_up_to_the_totals_with_a_gold_publication_outside_the_corpus(tmp_path):
    # micro-averaging sums tp, fp, fn over all pairs: the per-publication rows hold the same
    # counts, also for a reference citation whose publication publications.json omits
    (tmp_path / "ref").mkdir()
    write(tmp_path / "ref" / "data_set_citations.json",
          json.dumps([cit(5, "a"), cit(9, "b"), cit(9, "c")]))
    write(tmp_path / "ref" / "publications.json", json.dumps([{"publication_id": 5}]))
    sub = write(tmp_path / "sub.json", json.dumps([cit(5, "a"), cit(5, "x")]))
    r = get("rcc-citations").score(tmp_path / "ref", sub)
    pp = r.breakdowns["per_publication"]
    assert list(pp) == ["5", "9"]
    assert pp["5"] == row(1, 1, 0, True, False) and pp["9"] == row(0, 0, 2, False, True)
    assert [sum(x[k] for x in pp.values()) for k in ("tp", "fp", "fn")] == \
        [r.metrics["tp"], r.metrics["fp"], r.metrics["fn"]] == [1, 1, 2]


def test_publications_in_natural_order_numbers_first(tmp_path):
    # numbers as numbers (2 before 10), then other ids in code-point order
    ids = ["b", "10", "pub-a", "2", "a"]
    r = get("rcc-citations").score(*files(tmp_path, [cit(i, "d") for i in ids], []))
    assert list(r.breakdowns["per_publication"]) == ["2", "10", "a", "b", "pub-a"]


def test_each_duplicate_record_is_counted(tmp_path):
    # a pair submitted three times counts once; the two extra records are the duplicates
    ref, sub = files(tmp_path, [cit(1, "a")], [cit(1, "a", 0.2), cit(1, "a", 0.9),
                                              cit(1, "a", 0.5), cit(2, "b", 0.1)])
    r = get("rcc-citations").score(ref, sub)
    assert r.counts["duplicate_records"] == 2 and r.counts["submitted_pairs"] == 2
    assert r.warnings[0] == ("2 duplicate (publication_id, data_set_id) records in the "
                             "submission were counted once")


def test_a_submitted_citation_needs_its_score_and_mention_list(tmp_path):
    # the competition's submission format; the reference's citations carry neither
    rec = {"publication_id": 1, "data_set_id": "a"}
    ref, sub = files(tmp_path, [rec], [rec])
    with pytest.raises(InvalidInput) as e:
        get("rcc-citations").score(ref, sub)
    assert [(p.line, p.field, p.message) for p in e.value.problems] == [
        (1, "score", "missing"), (1, "mention_list", "missing (use [] when there are none)")]
    ok = write(tmp_path / "ok.json", json.dumps([cit(1, "a")]))
    assert get("rcc-citations").score(ref, ok).metrics["f1"] == 1.0


def test_pr_curve_ties_below_the_top_score_give_one_point():
    gold = {("p", "a"): 1.0, ("p", "c"): 1.0}
    pred = {("p", "a"): 0.9, ("p", "b"): 0.5, ("p", "c"): 0.5, ("p", "d"): 0.2}
    c = pr_curve(gold, pred)
    assert [(x["threshold"], x["pairs"]) for x in c] == [(0.9, 1), (0.5, 3), (0.2, 4)]
    assert (c[1]["precision"], c[1]["recall"]) == (pytest.approx(2 / 3), 1.0)


def test_no_publication_at_all_gives_zero_means(tmp_path):
    # zero division is 0 (conventions.md): the means over no publication are 0, not NaN
    r = get("rcc-citations").score(*files(tmp_path, [], []))
    assert r.breakdowns["per_publication"] == {}
    assert (r.counts["mean_fp_per_publication"], r.counts["mean_fn_per_publication"]) == (0, 0)
    assert r.metrics == {**prf(0, 0, 0), "tp": 0, "fp": 0, "fn": 0}


def test_citation_unit_stats_apply_min_score(tmp_path):
    ref, sub = files(tmp_path, [cit(1, "a"), cit(2, "b")],
                     [cit(1, "a", 0.9), cit(2, "b", 0.4), cit(2, "x", 0.5)])
    stats = get("rcc-citations").unit_stats(ref, sub, min_score=0.5)
    assert stats.units == ["1", "2"] and stats.stats.tolist() == [[1, 0, 0], [0, 1, 1]]


def test_pr_curve_keeps_at_most_101_evenly_spaced_points(tmp_path):
    ref = [cit(1, f"d{k}") for k in range(0, 300, 2)]
    sub = [cit(1, f"d{k}", round(1 - k / 1000, 3)) for k in range(250)]
    r = get("rcc-citations").score(*files(tmp_path, ref, sub))
    curve = r.breakdowns["pr_curve"]
    full = pr_curve({(1, f"d{k}"): 1.0 for k in range(0, 300, 2)},
                    {(1, f"d{k}"): round(1 - k / 1000, 3) for k in range(250)})
    assert len(full) == 250 and len(curve) == PR_CURVE_POINTS == 101
    picked = [full[i] for i in np.linspace(0, 249, 101).round().astype(int)]
    assert list(curve) == [f"{c['threshold']:.6g}" for c in picked]
    assert list(curve)[0] == "1" and list(curve)[-1] == "0.751"
    last = curve["0.751"]
    assert last["pairs"] == 250 and last["recall"] == pytest.approx(125 / 150)
    assert set(last) == {"precision", "recall", "f1", "pairs"}


def test_pr_curve_by_hand():
    gold = {("p", "a"): 1.0, ("p", "b"): 1.0}
    assert pr_curve(gold, {}) == []
    c = pr_curve(gold, {("p", "a"): 0.5, ("p", "z"): 0.5, ("p", "b"): 0.25})
    assert c == [{"threshold": 0.5, "precision": 0.5, "recall": 0.5, "f1": 0.5, "pairs": 2},
                 {"threshold": 0.25, "precision": pytest.approx(2 / 3), "recall": 1.0,
                  "f1": pytest.approx(0.8), "pairs": 3}]


# ---------------------------------------------------------------------------
# rcc-mentions

def test_mentions_whole_result_by_hand(tmp_path):
    ref = [cit(2, "a", mentions=["National Survey", "NS data"]), cit(2, "b", mentions=["  "]),
           cit(11, "c", mentions=["PSID"])]
    sub = [{"publication_id": 2, "mention": "national  SURVEY", "score": 0.9},
           {"publication_id": 2, "mention": "data", "score": 0.9},
           {"publication_id": 11, "mention": "the PSID|psid", "score": 0.8},
           {"publication_id": 3, "mention": "other", "score": 0.8}]
    r = get("rcc-mentions").score(*files(tmp_path, ref, sub))
    # exact (normalised): 2: tp 1 (national survey), fp 1 (data), fn 1 (ns data);
    # 11: "the psid|psid" is one string: fp 1, fn 1; 3: fp 1
    # partial (kaggle, split at |): 2: "national survey" = gold, "data" vs "ns data" 1/2 -> tp 2;
    # 11: predictions "psid" and "the psid"; gold psid takes "psid" (1.0): tp 1, fp 1; 3: fp 1
    pp = r.breakdowns["per_publication"]
    assert list(pp) == ["2", "3", "11"]
    assert pp["2"] == {"exact_tp": 1, "exact_fp": 1, "exact_fn": 1, **prf(1, 1, 1, "exact_"),
                       "partial_tp": 2, "partial_fp": 0, "partial_fn": 0,
                       **prf(2, 0, 0, "partial_")}
    assert pp["11"] == {"exact_tp": 0, "exact_fp": 1, "exact_fn": 1, **prf(0, 1, 1, "exact_"),
                        "partial_tp": 1, "partial_fp": 1, "partial_fn": 0,
                        **prf(1, 1, 0, "partial_")}
    assert pp["3"] == {"exact_tp": 0, "exact_fp": 1, "exact_fn": 0, **prf(0, 1, 0, "exact_"),
                       "partial_tp": 0, "partial_fp": 1, "partial_fn": 0,
                       **prf(0, 1, 0, "partial_")}
    assert r.counts == {"publications": 3, "exact_tp": 1, "exact_fp": 3, "exact_fn": 2,
                        "partial_tp": 3, "partial_fp": 2, "partial_fn": 0,
                        "submitted_records": 4, "gold_mentions_empty_after_cleaning": 0}
    assert r.metrics == {**prf(1, 3, 2, "exact_"), **prf(3, 2, 0, "partial_"),
                         "partial_f0_5": pytest.approx(1.25 * 3 / (1.25 * 3 + 0 + 2))}
    assert r.warnings == []
    assert r.conventions["cleaning"] == "kaggle" and r.conventions["min_score"] is None
    assert r.conventions["cleaning_rule"].startswith("Kaggle 2021 clean_text")
    # unicode cleaning: a mention with | is one prediction, Jaccard({the, psid, psid}...)
    u = get("rcc-mentions").score(*files(tmp_path, ref, sub), cleaning="unicode", jaccard=0.3)
    assert u.breakdowns["per_publication"]["11"]["partial_tp"] == 1
    assert u.breakdowns["per_publication"]["11"]["partial_fp"] == 0
    assert u.conventions["cleaning_rule"].startswith("NFKC, case-folded")
    assert u.conventions["jaccard_threshold"] == 0.3
    stats = get("rcc-mentions").unit_stats(*files(tmp_path, ref, sub))
    assert stats.metric == "partial_f1" and stats.units == ["2", "3", "11"]
    assert stats.weights.tolist() == [1, 1, 1] and stats.strata is None   # publications, equal
    assert stats.stats.tolist() == [[2, 0, 0], [0, 1, 0], [1, 1, 0]]
    assert float(stats.aggregate(stats.stats, stats.weights)) == \
        pytest.approx(r.metrics["partial_f1"])
    low = get("rcc-mentions").unit_stats(*files(tmp_path, ref, sub), min_score=0.85,
                                         jaccard=0.5, cleaning="unicode")
    assert low.stats.tolist() == [[2, 0, 0], [0, 0, 1]]      # 11 and 3 dropped below 0.85
    assert low.units == ["2", "11"]
    scored = get("rcc-mentions").score(*files(tmp_path, ref, sub), min_score=0.85)
    assert scored.conventions["min_score"] == 0.85         # the result states its options
    assert list(scored.breakdowns["per_publication"]) == ["2", "11"]


@pytest.mark.parametrize("cleaning,hint", [
    ("kaggle", " (--cleaning unicode keeps non-ASCII letters)"), ("unicode", "")])
def test_gold_without_letters_is_counted_and_warned(tmp_path, cleaning, hint):
    ref = [cit(1, "a", mentions=["ßü" if cleaning == "kaggle" else "--", "PSID"])]
    sub = [{"publication_id": 1, "mention": "psid"}]
    r = get("rcc-mentions").score(*files(tmp_path, ref, sub), cleaning=cleaning)
    assert r.counts["gold_mentions_empty_after_cleaning"] == 1
    assert r.warnings == [f"1 gold mentions have no letter or digit left after {cleaning} "
                          f"cleaning and are left out of the partial scores{hint}"]
    assert (r.counts["partial_tp"], r.counts["partial_fn"]) == (1, 0)
    assert r.counts["exact_fn"] == 1                    # exact matching still counts it


def test_unknown_cleaning_names_the_known_ones(tmp_path):
    with pytest.raises(InvalidInput) as e:
        get("rcc-mentions").score(*files(tmp_path, [cit(1, "a", mentions=["x"])],
                                         [{"publication_id": 1, "mention": "x"}]),
                                  cleaning="ascii")
    assert [str(p) for p in e.value.problems] == [
        "<arguments>: cleaning: unknown cleaning 'ascii' (use one of kaggle, unicode)"]


# ---------------------------------------------------------------------------
# rcc-fields-methods

def values(tmp_path, name, kind, recs):
    return write(tmp_path / name, json.dumps([{"publication_id": p, kind: v} for p, v in recs]))


def test_fields_methods_counts_and_comparison_by_hand(tmp_path):
    a = values(tmp_path, "a.json", "method", [(1, "Regression"), (1, "survey"),
                                              (2, "regression"), (3, "Survey "), (3, "ols")])
    b = values(tmp_path, "b.json", "method", [(1, "regression"), (4, "interviews"),
                                              (4, "OLS")])
    r = get("rcc-fields-methods").score(None, a, compare=str(b))
    # a: regression 2 records (pubs 1, 2), survey 2 (pubs 1, 3), ols 1; b: 3 distinct values
    assert r.breakdowns["value_counts"] == {
        "regression": {"records": 2, "publications": 2},
        "survey": {"records": 2, "publications": 2}, "ols": {"records": 1, "publications": 1}}
    # value sets {regression, survey, ols} and {regression, interviews, ols}: 2 of 4
    # per publication: 1 {reg, survey} vs {reg} 1/2; 2 {reg} vs {} 0; 3 0; 4 0
    assert r.metrics == {"distinct_values": 3, "values_per_publication": pytest.approx(5 / 3),
                         "value_set_jaccard": 0.5,
                         "mean_publication_jaccard": pytest.approx(0.5 / 4)}
    assert type(r.metrics["distinct_values"]) is int              # a count (conventions.md)
    assert r.counts == {"records": 5, "publications": 3, "kind": "method", "records_other": 3,
                        "publications_other": 2, "shared_values": 2}
    assert r.breakdowns["compare"] == {
        "regression": {"records": 2, "records_other": 1},
        "ols": {"records": 1, "records_other": 1},
        "survey": {"records": 2, "records_other": 0},
        "interviews": {"records": 0, "records_other": 1}}
    top = get("rcc-fields-methods").score(None, a, compare=str(b), top=1)
    assert top.breakdowns["value_counts"] == {"regression": {"records": 2, "publications": 2}}
    assert top.breakdowns["compare"] == {"regression": {"records": 2, "records_other": 1}}
    alone = get("rcc-fields-methods").score(None, a)
    assert set(alone.breakdowns) == {"value_counts"}
    assert alone.counts == {"records": 5, "publications": 3, "kind": "method"}
    assert set(alone.metrics) == {"distinct_values", "values_per_publication"}


def test_fields_and_methods_are_not_compared(tmp_path):
    a = values(tmp_path, "a.json", "method", [(1, "ols")])
    f = values(tmp_path, "f.json", "research_field", [(1, "economics")])
    with pytest.raises(InvalidInput) as e:
        get("rcc-fields-methods").score(None, a, compare=str(f))
    assert [str(p) for p in e.value.problems] == [
        f"{f}: kind: holds research_field values, the submission holds method values"]
    assert get("rcc-fields-methods").load_reference("anything") is None
    assert get("rcc-fields-methods").score(None, f).counts["kind"] == "research_field"
