"""Rules of `assess estimate` (docs/assessment.md) written out by hand: the intervals
of each measure, the bootstrap distributions enumerated exactly, F1's edge cases, the
judge conventions, importance recall, and the messages. Each expected number is
computed here from the documented formula, not read from the estimator."""
from __future__ import annotations

import itertools
import math
import warnings
from statistics import NormalDist

import numpy as np
import pytest
from scipy.stats import t as student_t

from shareval.assessment.estimate import estimate_all
from shareval.assessment.judgments import Judgment, Judgments


def wilson(k: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval from its formula (centre ± half-width)."""
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def exact_quantiles(values, confidence):
    """Percentile-interval limits of an exactly enumerated, equally likely bootstrap
    distribution. Checks that neither tail probability is within 0.01 (4 standard errors
    of 40,000 replicates) of a step of the CDF, so that a large Monte Carlo bootstrap
    lands on the same atom."""
    v = np.sort(np.asarray(values, dtype=float))
    a = (1 - confidence) / 2
    for t in (a, 1 - a):
        cdf = np.searchsorted(v, v, side="right") / v.size
        assert np.min(np.abs(cdf - t)) > 0.01, "tail probability at a CDF step"
    return tuple(np.quantile(v, [a, 1 - a], method="inverted_cdf"))


def prec(item, subs, answer, pi, judge="j1", question="correct", line=0, drawn_by=None):
    subs = tuple(subs)
    return Judgment(item, subs, judge, question, float(answer), pi, "d", "precision",
                    subs if drawn_by is None else tuple(drawn_by), line)


def rec(item, doc, subs, answer, line=0):
    return Judgment(item, tuple(subs), "j1", "correct", float(answer), 1.0, doc, "recall",
                    tuple(subs), line)


PI = [0.5, 0.25, 1.0, 0.2]
Y = [1, 0, 1, 1]


def test_design_intervals_wilson_on_kish_n_and_the_delta_method():
    """low/high: Wilson at p = Hajek estimate with Kish's n = (Σw)²/Σw²; normal_: the
    Hajek estimate ± z·se, se² = n/(n-1) Σ (w_i (y_i - R) / Σw)²."""
    recs = [prec(f"x{i}", "A", y, p, line=i) for i, (y, p) in enumerate(zip(Y, PI))]
    row = estimate_all(Judgments(recs, {}), bootstrap=0)[0]["A"]
    w = [1 / p for p in PI]
    est = sum(wi * yi for wi, yi in zip(w, Y)) / sum(w)
    assert est == pytest.approx(8 / 12)
    n_eff = sum(w) ** 2 / sum(wi * wi for wi in w)
    assert n_eff == pytest.approx(144 / 46)
    assert row["precision"] == pytest.approx(est)
    assert (row["precision_low"], row["precision_high"]) == pytest.approx(
        wilson(est * n_eff, n_eff))
    se = math.sqrt(4 / 3 * sum((wi * (yi - est) / sum(w)) ** 2 for wi, yi in zip(w, Y)))
    z = NormalDist().inv_cdf(0.975)
    assert row["precision_normal_low"] == pytest.approx(est - z * se)
    assert row["precision_normal_high"] == pytest.approx(min(1.0, est + z * se))
    assert row["judged_items"] == 4
    # no bootstrap asked: no bootstrap limits, and no recall rows: no recall, F1 NaN
    assert not any("boot" in k for k in row) and "recall" not in row
    assert math.isnan(row["f1"]) and "f1_low" not in row


def test_design_interval_at_another_confidence_and_a_single_item():
    recs = [prec(f"x{i}", "A", y, p, line=i) for i, (y, p) in enumerate(zip(Y, PI))]
    row = estimate_all(Judgments(recs, {}), confidence=0.8, bootstrap=0)[0]["A"]
    w = [1 / p for p in PI]
    n_eff = sum(w) ** 2 / sum(wi * wi for wi in w)
    assert (row["precision_low"], row["precision_high"]) == pytest.approx(
        wilson(8 / 12 * n_eff, n_eff, 0.8))
    se = math.sqrt(4 / 3 * sum((wi * (yi - 8 / 12) / sum(w)) ** 2 for wi, yi in zip(w, Y)))
    z80 = NormalDist().inv_cdf(0.9)
    assert (row["precision_normal_low"], row["precision_normal_high"]) == pytest.approx(
        (8 / 12 - z80 * se, min(1.0, 8 / 12 + z80 * se)))
    # one judged item: Kish's n is 1, Wilson on one yes (never a zero-width interval)
    one = estimate_all(Judgments([prec("x", "A", 1, 0.5)], {}), bootstrap=0)[0]["A"]
    assert one["precision"] == 1.0
    assert (one["precision_low"], one["precision_high"]) == pytest.approx(wilson(1, 1))
    assert one["precision_low"] < 1.0


def test_design_bootstrap_resamples_items_and_recomputes_the_hajek_ratio():
    """Three items with unequal weights resampled with replacement: the 27 equally likely
    replicates give the exact bootstrap distribution of Σ w y / Σ w; 40,000 replicates
    put the percentile limits on its atoms."""
    pi, y = [0.5, 0.25, 1.0], [1, 0, 1]
    recs = [prec(f"x{i}", "A", yi, p, line=i) for i, (yi, p) in enumerate(zip(y, pi))]
    w = [1 / p for p in pi]
    reps = [sum(w[i] * y[i] for i in r) / sum(w[i] for i in r)
            for r in itertools.product(range(3), repeat=3)]
    lo, hi = exact_quantiles(reps, 0.6)
    row = estimate_all(Judgments(recs, {}), confidence=0.6, bootstrap=40_000, seed=5)[0]["A"]
    assert (row["precision_boot_low"], row["precision_boot_high"]) == pytest.approx((lo, hi))
    # an unweighted resample mean would put the limits elsewhere
    flat = exact_quantiles([sum(y[i] for i in r) / 3
                            for r in itertools.product(range(3), repeat=3)], 0.6)
    assert flat != pytest.approx((lo, hi))


def test_entity_precision_bootstrap_resamples_items_for_all_three_questions_at_once():
    """P_e's bootstrap: one item resample, each question's Hajek ratio over the resampled
    items where it was answered, their product; a replicate where a question has no
    answered item is left out."""
    pi = [0.5, 1.0, 0.25]
    answers = {"relation": [1, 1, 0], "subject": [1, 0, 1], "object": [1, 0, None]}
    recs = [prec(f"x{i}", "A", v, pi[i], question=q, line=n)
            for n, (q, vs) in enumerate(answers.items()) for i, v in enumerate(vs)
            if v is not None]
    w = [1 / p for p in pi]
    reps = []
    for r in itertools.product(range(3), repeat=3):
        parts = []
        for vs in answers.values():
            ok = [i for i in r if vs[i] is not None]
            parts.append(sum(vs[i] * w[i] for i in ok) / sum(w[i] for i in ok)
                         if ok else math.nan)
        reps.append(math.prod(parts))
    reps = [v for v in reps if v == v]
    lo, hi = exact_quantiles(reps, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # the replicate without an object answer: silent
        row = estimate_all(Judgments(recs, {}), confidence=0.5, bootstrap=40_000,
                           seed=2)[0]["A"]
    assert (row["entity_precision_low"], row["entity_precision_high"]) == pytest.approx((lo, hi))
    none = estimate_all(Judgments(recs, {}), bootstrap=0)[0]["A"]
    assert none["entity_precision"] == pytest.approx(row["entity_precision"])
    assert math.isnan(none["entity_precision_low"]) and math.isnan(none["entity_precision_high"])
    # object: answered on x0 (yes) and x1 (no) only
    parts = [(w[0] + w[1]) / sum(w), (w[0] + w[2]) / sum(w), w[0] / (w[0] + w[1])]
    assert row["entity_precision"] == pytest.approx(math.prod(parts))


def test_each_question_is_the_mean_of_its_judges_answers():
    recs = [prec("x0", "A", v, 1.0, judge, q, n) for n, (judge, q, v) in enumerate(
        [("j1", "relation", 1), ("j2", "relation", 0), ("j3", "relation", 1),
         ("j1", "subject", 1), ("j1", "object", 0), ("j2", "object", 1)])]
    row = estimate_all(Judgments(recs, {}), bootstrap=0)[0]["A"]
    assert row["precision_relation"] == pytest.approx(2 / 3)
    assert row["precision_subject"] == 1.0 and row["precision_object"] == 0.5
    assert row["entity_precision"] == pytest.approx(1 / 3)


def test_entity_precision_needs_an_answer_to_each_of_the_three_questions():
    recs = [prec("x0", "A", 1, 0.5, question="relation"),
            prec("x0", "A", 1, 0.5, question="subject", line=1)]
    row = estimate_all(Judgments(recs, {}), bootstrap=50)[0]["A"]
    assert "entity_precision" not in row and "precision_relation" not in row
    assert row["precision"] == 1.0


def test_recall_interval_counts_documents_not_items():
    """Documents are the sampling unit (assessment.estimate.document_ratio_interval):
    the interval is Wilson's on the effective number of true items, R(1-R) over the
    ratio's variance between documents, with Student's t for D'-1 degrees of freedom;
    Wilson on the items stays as recall_item_*."""
    docs = [rec("a", "d1", "A", 1), rec("b", "d1", "", 1), rec("c", "d2", "A", 1),
            rec("e", "d2", "A", 0), rec("f", "d3", "", 1, line=4), rec("g", "d3", "A", 1)]
    row = estimate_all(Judgments(docs, {"A": 3}), bootstrap=0)[0]["A"]
    assert row["recall"] == pytest.approx(3 / 5)
    # by hand: per document found / true = 1/2, 1/1, 1/2; R = 3/5
    found, true = np.array([1, 1, 1.0]), np.array([2, 1, 2.0])
    var = np.sum((found - 0.6 * true) ** 2) / 2 / 3 / np.mean(true) ** 2
    n_eff, t = 0.6 * 0.4 / var, student_t.ppf(0.975, 2)
    centre = (0.6 + t * t / (2 * n_eff)) / (1 + t * t / n_eff)
    half = t * np.sqrt(0.24 / n_eff + t * t / (4 * n_eff ** 2)) / (1 + t * t / n_eff)
    assert (row["recall_low"], row["recall_high"]) == pytest.approx(
        (max(0, centre - half), min(1, centre + half)))
    assert (row["recall_item_low"], row["recall_item_high"]) == pytest.approx(wilson(3, 5))
    assert row["recall_high"] - row["recall_low"] > \
        row["recall_item_high"] - row["recall_item_low"]        # 3 documents, not 5 items
    assert "recall_boot_low" not in row
    # one document: nothing is known of the spread between documents
    one = estimate_all(Judgments([rec("a", "d1", "A", 1)], {"A": 1}), bootstrap=0)[0]["A"]
    assert one["recall"] == 1.0 and math.isnan(one["recall_low"]) and \
        math.isnan(one["recall_high"])
    # the same ratio in every document: no spread, the item count is the size
    same = [rec(k, d, "A" if k.endswith("1") else "", 1)
            for d in ("d1", "d2") for k in (d + "1", d + "2")]
    row = estimate_all(Judgments(same, {"A": 2}), bootstrap=0)[0]["A"]
    t1 = student_t.ppf(0.975, 1)
    c = (0.5 + t1 * t1 / 8) / (1 + t1 * t1 / 4)
    h = t1 * np.sqrt(0.25 / 4 + t1 * t1 / 64) / (1 + t1 * t1 / 4)
    assert (row["recall_low"], row["recall_high"]) == pytest.approx((max(0, c - h),
                                                                     min(1, c + h)))


def test_recall_without_true_items_is_not_estimated_and_says_nothing_else():
    recs = [rec("a", "d1", "A", 0), prec("p", "A", 1, 1.0, drawn_by=("A",), line=1)]
    for method in ("design", "importance"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            row = estimate_all(Judgments(recs, {"A": 1}), method, bootstrap=20)[0]["A"]
        assert "recall" not in row and "recall_importance" not in row
        assert math.isnan(row["f1"]) and "f1_low" not in row


def test_f1_bootstrap_pairs_item_and_document_replicates():
    """Every precision item correct: each precision replicate is 1, so an F1 replicate
    is 2r/(1 + r) of its recall replicate, and the F1 limits are that map of the
    recall limits (recall replicates: three documents, 27 equally likely)."""
    recs = [prec("p1", "A", 1, 0.5), prec("p2", "A", 1, 1.0, line=1)]
    recs += [rec("r1", "d1", "", 1, 2), rec("r2", "d2", "A", 1, 3), rec("r3", "d3", "A", 1, 4),
             rec("r4", "d3", "", 1, 5), rec("r5", "d2", "A", 0, 6), rec("r6", "d1", "", 0, 7)]
    # false items (r5, r6) are in neither the numerator nor the denominator
    num, den = {0: 0, 1: 1, 2: 1}, {0: 1, 1: 1, 2: 2}
    reps = [sum(num[d] for d in r) / sum(den[d] for d in r)
            for r in itertools.product(range(3), repeat=3)]
    lo, hi = exact_quantiles(reps, 0.6)
    row = estimate_all(Judgments(recs, {"A": 2}), confidence=0.6, bootstrap=40_000,
                       seed=1)[0]["A"]
    assert row["recall"] == pytest.approx(2 / 4)
    assert row["precision_boot_low"] == row["precision_boot_high"] == 1.0
    assert row["f1"] == pytest.approx(2 * 1 * 0.5 / 1.5)
    assert (row["recall_boot_low"], row["recall_boot_high"]) == pytest.approx((lo, hi))
    assert (row["f1_low"], row["f1_high"]) == pytest.approx((2 * lo / (1 + lo),
                                                             2 * hi / (1 + hi)))


def test_f1_bootstrap_when_recall_is_one_is_2p_over_1_plus_p_of_the_precision_replicates():
    """Every true item of the annotated documents is in A's output: each recall replicate
    is 1, so the F1 limits are 2p/(1 + p) of the precision limits (the Hajek ratios of the
    27 item resamples, weights 2, 4, 1)."""
    pi, y = [0.5, 0.25, 1.0], [1, 0, 1]
    recs = [prec(f"x{i}", "A", yi, p, line=i) for i, (yi, p) in enumerate(zip(y, pi))]
    recs += [rec("r1", "d1", "A", 1, 5), rec("r2", "d2", "A", 1, 6), rec("r3", "d2", "", 0, 7)]
    w = [1 / p for p in pi]
    lo, hi = exact_quantiles([sum(w[i] * y[i] for i in r) / sum(w[i] for i in r)
                              for r in itertools.product(range(3), repeat=3)], 0.6)
    row = estimate_all(Judgments(recs, {"A": 3}), confidence=0.6, bootstrap=40_000,
                       seed=4)[0]["A"]
    assert row["recall"] == 1.0 and row["f1"] == pytest.approx(2 * (3 / 7) / (1 + 3 / 7))
    assert (row["precision_boot_low"], row["precision_boot_high"]) == pytest.approx((lo, hi))
    assert (row["f1_low"], row["f1_high"]) == pytest.approx((2 * lo / (1 + lo),
                                                             2 * hi / (1 + hi)))


def test_f1_of_small_precision_and_recall_and_replicates_without_data_are_silent():
    """P = 1/2, R = 1/4: F1 = 2PR/(P+R) = 1/3. Some replicates have P = R = 0 or no true
    item: their F1 is NaN, left out, without a numpy warning."""
    recs = [prec("p1", "A", 1, 1.0), prec("p2", "A", 0, 1.0, line=1)]
    recs += [rec(f"r{k}", f"d{k}", "A" if k == 0 else "", 1, 2 + k) for k in range(4)]
    recs += [rec("f", "d4", "", 0, 9)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        row = estimate_all(Judgments(recs, {"A": 2}), bootstrap=500, seed=3)[0]["A"]
    assert row["precision"] == 0.5 and row["recall"] == 0.25
    assert row["f1"] == pytest.approx(1 / 3)
    assert 0.0 <= row["f1_low"] <= row["f1"] <= row["f1_high"] <= 1.0


def test_the_bootstrap_is_seeded():
    pi = [0.2, 0.3, 0.5, 0.7, 0.9, 0.25, 0.4, 0.6, 0.8, 1.0, 0.35, 0.45]
    recs = [prec(f"x{i}", "A", i % 3 != 0, p, line=i) for i, p in enumerate(pi)]
    recs += [rec(f"r{k}", f"d{k % 7}", "A" if k % 3 else "", 1, 20 + k) for k in range(15)]
    runs = [estimate_all(Judgments(recs, {"A": 4}), bootstrap=200, seed=9)[0]["A"]
            for _ in range(2)]
    keys = ("precision_boot_low", "precision_boot_high", "recall_boot_low", "recall_boot_high",
            "f1_low", "f1_high")
    assert [runs[0][k] for k in keys] == [runs[1][k] for k in keys]
    other = estimate_all(Judgments(recs, {"A": 4}), bootstrap=200, seed=10)[0]["A"]
    assert [other[k] for k in keys] != [runs[0][k] for k in keys]


def test_f1_is_zero_when_precision_and_recall_are_zero_and_nan_when_one_is_missing():
    recs = [prec("p1", "A", 0, 1.0), rec("r1", "d1", "A", 0, 1), rec("r2", "d1", "", 1, 2)]
    table, warnings = estimate_all(Judgments(recs, {"A": 1, "B": 4}), bootstrap=0)
    assert table["A"]["precision"] == 0 and table["A"]["recall"] == 0
    assert table["A"]["f1"] == 0.0
    # B: only on the sizes line, nothing judged: a row with NaN precision and F1
    assert table["B"]["judged_items"] == 0 and math.isnan(table["B"]["precision"])
    assert math.isnan(table["B"]["precision_low"]) and math.isnan(table["B"]["precision_high"])
    assert table["B"]["recall"] == 0.0 and math.isnan(table["B"]["f1"])
    assert warnings == []


def test_no_recall_rows_warns_once():
    _, warnings = estimate_all(Judgments([prec("p1", "A", 1, 1.0)], {}), bootstrap=0)
    assert warnings == ["no recall rows (drawn_for = recall): recall and F1 are not estimated"]


def test_item_value_is_the_mean_over_judges_and_a_chain_needs_every_answer_yes():
    """A judge says correct when every question they answered is yes; the item's value
    is the mean over judges. Unnamed judges on different lines are different judges.
    A `correct` question, when present, is the verdict."""
    chain = [prec("x", "A", 1, 1.0, "j1", "relation", 0), prec("x", "A", 0, 1.0, "j1", "subject", 1),
             prec("x", "A", 1, 1.0, "j2", "relation", 2), prec("x", "A", 1, 1.0, "j2", "subject", 3),
             prec("x", "A", 1, 1.0, "j3", "object", 4)]
    assert estimate_all(Judgments(chain, {}), bootstrap=0)[0]["A"]["precision"] == \
        pytest.approx(2 / 3)
    unnamed = [prec("y", "A", 1, 1.0, "", line=0), prec("y", "A", 0, 1.0, "", line=1),
               prec("y", "A", 0, 1.0, "", line=2)]
    assert estimate_all(Judgments(unnamed, {}), bootstrap=0)[0]["A"]["precision"] == \
        pytest.approx(1 / 3)
    verdict = chain + [prec("x", "A", 1, 1.0, "j1", "correct", 5)]
    assert estimate_all(Judgments(verdict, {}), bootstrap=0)[0]["A"]["precision"] == 1.0


def test_the_same_item_drawn_for_precision_and_recall_is_two_units():
    recs = [prec("x", "A", 0, 1.0), rec("x", "d", "A", 1, 1)]
    row = estimate_all(Judgments(recs, {"A": 1}), bootstrap=0)[0]["A"]
    assert row["precision"] == 0.0 and row["recall"] == 1.0 and row["judged_items"] == 1


def test_method_and_weights_are_checked():
    j = Judgments([prec("x", "A", 1, 1.0)], {})
    with pytest.raises(ValueError, match=r"^method must be 'design' or 'importance'$"):
        estimate_all(j, "hajek")
    with pytest.raises(ValueError, match=r"^weights must be one of heuristic, size, uniform$"):
        estimate_all(j, weights="best")


def test_a_recall_replicate_without_true_items_is_left_out_silently():
    """Two documents, one without a true item: a quarter of the replicates draw it twice
    and have no recall (0/0); they are dropped, so every kept replicate is 1/1."""
    recs = [rec("a", "d1", "A", 1), rec("b", "d2", "A", 0, 1)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        row = estimate_all(Judgments(recs, {"A": 1}), bootstrap=200, seed=0)[0]["A"]
    assert row["recall"] == 1.0
    assert (row["recall_boot_low"], row["recall_boot_high"]) == (1.0, 1.0)
