"""Each rule of the RCC scorers' conventions (docs/conventions.md) on a case built so
that breaking the rule changes the result: boundaries, duplicates, flags, F0.5."""
import json

import pytest

from shareval.tasks import get
from tests.conftest import write


def cit(pub, ds, score=1.0, mentions=()):
    return {"publication_id": pub, "data_set_id": ds, "score": score, "mention_list": list(mentions)}


def score(tmp_path, ref, sub, task="rcc-citations", **opts):
    r = write(tmp_path / "ref.json", json.dumps(ref))
    s = write(tmp_path / "sub.json", json.dumps(sub))
    return get(task).score(r, s, **opts)


@pytest.mark.parametrize("order", [(0.2, 0.9), (0.9, 0.2)])
def test_duplicate_pair_counts_once_with_its_highest_score(tmp_path, order):
    ref = [cit(1, 10), cit(2, 20)]
    sub = [cit(1, 10, order[0]), cit(1, 10, order[1]), cit(2, 21, 0.5)]
    r = score(tmp_path, ref, sub)
    assert (r.metrics["tp"], r.metrics["fp"], r.metrics["fn"]) == (1, 1, 1)
    assert r.counts["duplicate_records"] == 1 and r.counts["submitted_pairs"] == 2
    assert any("1 duplicate" in w for w in r.warnings)
    # the pair sits at 0.9 on the curve: the hit ranks above the 0.5 false positive
    curve = r.breakdowns["pr_curve"]
    assert list(curve) == ["0.9", "0.5"]
    assert curve["0.9"] == {"precision": 1.0, "recall": 0.5, "f1": pytest.approx(2 / 3),
                            "pairs": 1}


def test_min_score_keeps_scores_equal_to_the_threshold(tmp_path):
    ref = [cit(1, 10), cit(1, 11), cit(2, 20)]
    sub = [cit(1, 10, 0.5), cit(1, 11, 0.4999), cit(2, 20, 0.7), cit(2, 21, 0.5)]
    r = score(tmp_path, ref, sub, min_score=0.5)
    assert (r.metrics["tp"], r.metrics["fp"], r.metrics["fn"]) == (2, 1, 1)
    assert r.conventions["min_score"] == 0.5
    # a duplicate below the threshold is dropped before merging, not counted as one
    r = score(tmp_path, ref, [cit(1, 10, 0.1), cit(1, 10, 0.6)], min_score=0.5)
    assert r.counts["duplicate_records"] == 0 and r.metrics["tp"] == 1


def test_above_mean_flags_are_strict(tmp_path):
    # every publication has exactly the mean fp (1) and fn (1): none is above it
    ref = [cit(1, 10), cit(2, 20), cit(3, 30)]
    sub = [cit(1, 11), cit(2, 21), cit(3, 31)]
    r = score(tmp_path, ref, sub)
    assert r.counts["mean_fp_per_publication"] == 1.0 == r.counts["mean_fn_per_publication"]
    assert r.counts["publications_above_mean_fp"] == 0 == r.counts["publications_above_mean_fn"]
    assert not any(p["above_mean_fp"] or p["above_mean_fn"]
                   for p in r.breakdowns["per_publication"].values())
    # one more false positive in publication 1: mean 4/3, only publication 1 above it
    r = score(tmp_path, ref, sub + [cit(1, 12)])
    flags = {p: v["above_mean_fp"] for p, v in r.breakdowns["per_publication"].items()}
    assert flags == {"1": True, "2": False, "3": False}


def test_pr_curve_one_point_per_distinct_score_thresholds_inclusive(tmp_path):
    ref = [cit(1, 10), cit(1, 11), cit(2, 20)]
    sub = [cit(1, 10, 0.8), cit(1, 12, 0.8), cit(1, 11, 0.3), cit(2, 21, 0.1)]
    curve = score(tmp_path, ref, sub).breakdowns["pr_curve"]
    assert list(curve) == ["0.8", "0.3", "0.1"]
    assert curve["0.8"] == {"precision": 0.5, "recall": pytest.approx(1 / 3),
                            "f1": pytest.approx(0.4), "pairs": 2}
    assert curve["0.3"]["pairs"] == 3 and curve["0.3"]["recall"] == pytest.approx(2 / 3)
    assert curve["0.1"]["precision"] == 0.5


def test_mentions_min_score_keeps_equal_scores_and_f05(tmp_path):
    ref = [cit(1, 5, mentions=["National Health Survey"]), cit(2, 6, mentions=["PSID"])]
    sub = [{"publication_id": 1, "mention": "national health survey", "score": 0.5},
           {"publication_id": 2, "mention": "psid", "score": 0.49},
           {"publication_id": 2, "mention": "census", "score": 0.9}]
    r = score(tmp_path, ref, sub, task="rcc-mentions", min_score=0.5)
    assert (r.counts["partial_tp"], r.counts["partial_fp"], r.counts["partial_fn"]) == (1, 1, 1)
    assert (r.counts["exact_tp"], r.counts["exact_fp"], r.counts["exact_fn"]) == (1, 1, 1)
    # F0.5 = 1.25 tp / (1.25 tp + 0.25 fn + fp)
    assert r.metrics["partial_f0_5"] == pytest.approx(1.25 / (1.25 + 0.25 + 1))
    r = score(tmp_path, ref, sub[:2] + [{"publication_id": 2, "mention": "x y", "score": 1}],
              task="rcc-mentions")
    # tp 2, fp 1, fn 0: precision and recall weigh differently in F0.5
    assert r.metrics["partial_f0_5"] == pytest.approx(2.5 / (2.5 + 1))
    assert r.conventions["min_score"] is None and r.conventions["jaccard_threshold"] == 0.5


def test_exact_mentions_match_after_nfkc(tmp_path):
    # conventions.md, rcc-mentions: exact matching after NFKC normalisation. Fullwidth
    # letters tell NFKC from case folding alone (which already turns the ligature into fi)
    ref = [{"publication_id": 1, "data_set_id": 7, "mention_list": ["\ufb01nancial survey",
                                                                    "\uff21\uff24\uff2e\uff29"]}]
    sub = [{"publication_id": 1, "mention": "Financial  Survey", "score": 1.0},
           {"publication_id": 1, "mention": "adni", "score": 1.0}]
    r = score(tmp_path, ref, sub, task="rcc-mentions")
    assert [r.counts[k] for k in ("exact_tp", "exact_fp", "exact_fn")] == [2, 0, 0]
    assert r.metrics["exact_f1"] == 1.0


def test_precision_with_no_kept_prediction_is_zero_with_a_warning(tmp_path):
    # conventions.md, General: a ratio whose denominator is 0 is 0, with a warning
    r = score(tmp_path, [cit(1, 7)], [cit(1, 7, score=0.2)], min_score=0.5)
    assert (r.metrics["precision"], r.metrics["recall"], r.metrics["f1"]) == (0.0, 0.0, 0.0)
    assert r.warnings == ["no submitted pairs with a score >= 0.5: precision and F1 are 0 (0/0)"]
    assert score(tmp_path, [cit(1, 7)], [cit(1, 7, score=0.2)]).warnings == []
    ref = [cit(1, 7, mentions=["ALLBUS"])]
    sub = [{"publication_id": 1, "mention": "ALLBUS", "score": 0.2}]
    r = score(tmp_path, ref, sub, task="rcc-mentions", min_score=0.5)
    assert r.metrics["exact_precision"] == 0.0 and r.warnings == [
        "no submitted mentions with a score >= 0.5: precision and F1 are 0 (0/0)"]
