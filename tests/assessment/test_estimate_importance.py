"""Rules of the importance estimator in `assess estimate` (docs/assessment.md) that the
paper oracle of test_weights.py does not reach: its normal interval and its bootstrap
within strata, importance recall, the pool weights, the overlaps line's defaults and
every refusal with its message. Expected numbers are worked out by hand below."""
from __future__ import annotations

import itertools
import math
import warnings
from statistics import NormalDist

import numpy as np
import pytest

from shareval.assessment.estimate import estimate_all
from shareval.assessment.judgments import Judgment, Judgments

Z95 = NormalDist().inv_cdf(0.975)


def judged(outputs, draws, truth, overlaps="all", recall=()):
    """One precision unit per distinct drawn item (drawn_by repeats a submission once per
    draw), plus recall rows (doc, item, submissions, correct)."""
    by: dict[str, list[str]] = {}
    for j, xs in draws.items():
        for x in xs:
            by.setdefault(x, []).append(j)
    names = sorted(outputs)
    recs = [Judgment(x, tuple(s for s in names if x in outputs[s]), "j1", "correct",
                     float(truth[x]), 0.5, "d", "precision", tuple(js), k)
            for k, (x, js) in enumerate(sorted(by.items()))]
    recs += [Judgment(x, tuple(subs), "j1", "correct", float(c), 1.0, doc, "recall",
                      tuple(subs), 100 + k) for k, (doc, x, subs, c) in enumerate(recall)]
    ov = {(a, b): len(outputs[a] & outputs[b]) for a, b in itertools.combinations(names, 2)}
    if overlaps == "nonzero":
        ov = {k: v for k, v in ov.items() if v}
    return Judgments(recs, {s: len(outputs[s]) for s in names},
                     None if overlaps is None else ov)


# A = {a, b}, B = {b, c, d}; A drew a once, B drew b and c twice each; a and b correct.
OUT = {"A": {"a", "b"}, "B": {"b", "c", "d"}}
DRAWS = {"A": ["a"], "B": ["b", "c", "b", "c"]}
TRUTH = {"a": 1.0, "b": 1.0, "c": 0.0, "d": 0.0}
# recall rows: three true items, two of them in some output (pool recall 2/3)
RECALL = [("r", "a", ("A",), 1), ("r", "n", (), 1), ("s", "c2", ("B",), 1),
          ("s", "b2", ("A", "B"), 0)]


def test_normal_interval_is_sum_of_w_squared_s_squared_over_n():
    """Size weights w = (1/5, 4/5). Target B: p_B = 1/3 on B's items; q(b) = 1/5·1/2 +
    4/5·1/3 = 11/30, q(c) = 4/15. g on B's draws b, c, b, c = (10/11, 0, 10/11, 0), on A's
    draw 0 (a is not in B). P_B = 4/5 · 5/11 = 4/11; variance (4/5)² s²/4 with s² the
    sample variance of g (A's single draw adds none)."""
    row = estimate_all(judged(OUT, DRAWS, TRUTH), "importance", bootstrap=0,
                       weights="size")[0]["B"]
    g = [10 / 11, 0, 10 / 11, 0]
    s2 = sum((v - 5 / 11) ** 2 for v in g) / 3
    se = math.sqrt((4 / 5) ** 2 * s2 / 4)
    assert row["precision"] == pytest.approx(4 / 11)
    assert row["precision_low"] == pytest.approx(max(0.0, 4 / 11 - Z95 * se))
    assert row["precision_high"] == pytest.approx(4 / 11 + Z95 * se)
    assert row["judged_items"] == 2                       # b and c
    z80 = NormalDist().inv_cdf(0.9)
    row80 = estimate_all(judged(OUT, DRAWS, TRUTH), "importance", confidence=0.8,
                         bootstrap=0, weights="size")[0]["B"]
    assert row80["precision_low"] == pytest.approx(4 / 11 - z80 * se)


def test_bootstrap_resamples_each_stratum_on_its_own():
    """A drew a once, B drew b, c, c. Size weights (1/4, 3/4), target A: q(a) = 1/8,
    q(b) = 1/8 + 3/4·1/3 = 3/8, c is not in A. A's stratum always gives 1/4 · (1/2)/(1/8)
    = 1; B's adds 3/4 · (k · 4/3) / 3 = k/3 for k copies of b in its resample (k ~
    Binomial(3, 1/3)). Resampling the four draws together would move A's share too."""
    draws = {"A": ["a"], "B": ["b", "c", "c"]}
    j = judged(OUT, draws, TRUTH)
    reps = [1 + sum(x == "b" for x in r) / 3 for r in itertools.product("bcc", repeat=3)]
    v = np.sort(reps)
    lo, hi = np.quantile(v, [0.2, 0.8], method="inverted_cdf")
    assert (lo, hi) == pytest.approx((1.0, 1 + 2 / 3))      # CDF 8/27, 20/27, 26/27, 1
    row = estimate_all(j, "importance", confidence=0.6, bootstrap=40_000, seed=7,
                       weights="size")[0]["A"]
    assert row["precision"] == pytest.approx(1 + 1 / 3)
    assert (row["precision_boot_low"], row["precision_boot_high"]) == pytest.approx((lo, hi))


@pytest.mark.parametrize("weights,pool", [("size", 34 / 11), ("heuristic", 34 / 11),
                                          ("uniform", 2.6)])
def test_importance_recall_is_pool_recall_times_own_share_of_the_correct_pool(weights, pool):
    """Pool total Σ_j w_j mean_j(y / q), q = Σ_j w_j p_j, with w ∝ n_j = (1/5, 4/5)
    (size and heuristic): q(a) = 1/10, q(b) = 11/30: 1/5 · 10 + 4/5 · (30/11 · 2)/4 = 34/11.
    Uniform keeps w = (1/2, 1/2): q(a) = 1/4, q(b) = 5/12: 1/2 · 4 + 1/2 · (12/5 · 2)/4
    = 2.6. Recall = pool recall (2/3) × |X_s| P_s / pool."""
    table, _ = estimate_all(judged(OUT, DRAWS, TRUTH, recall=RECALL), "importance",
                            bootstrap=0, weights=weights)
    for s in ("A", "B"):
        row = table[s]
        assert row["pool_recall"] == pytest.approx(2 / 3)
        assert row["recall_importance"] == pytest.approx(
            2 / 3 * len(OUT[s]) * row["precision"] / pool)
    assert table["A"]["recall"] == pytest.approx(1 / 3)     # the design recall stays
    design = estimate_all(judged(OUT, DRAWS, TRUTH, recall=RECALL), bootstrap=0)[0]["A"]
    assert "recall_importance" not in design and "pool_recall" not in design


def test_pairs_missing_from_the_overlaps_line_share_nothing():
    outputs = {"A": {"a", "b"}, "B": {"b", "c"}, "C": {"d"}}
    draws = {"A": ["a", "b"], "B": ["c", "b"], "C": ["d"]}
    truth = {"a": 1.0, "b": 0.0, "c": 1.0, "d": 1.0}
    full, _ = estimate_all(judged(outputs, draws, truth), "importance", bootstrap=0)
    short, _ = estimate_all(judged(outputs, draws, truth, overlaps="nonzero"), "importance",
                            bootstrap=0)
    assert judged(outputs, draws, truth, overlaps="nonzero").overlaps == {("A", "B"): 1}
    for s in outputs:
        assert short[s]["precision"] == pytest.approx(full[s]["precision"])
    # C shares nothing: under the heuristic only its own draw counts
    assert short["C"]["precision"] == pytest.approx(1.0)


def test_one_submission_needs_no_overlaps_line():
    outputs = {"A": {"a", "b", "c"}}
    j = judged(outputs, {"A": ["a", "b", "b"]}, {"a": 1.0, "b": 0.0, "c": 1.0}, overlaps=None)
    row = estimate_all(j, "importance", bootstrap=0)[0]["A"]
    assert row["precision"] == pytest.approx(1 / 3)          # q = p: the mean of the draws


def test_only_recall_rows_need_neither_draws_nor_overlaps():
    recs = [Judgment("x", ("A",), "j1", "correct", 1.0, 1.0, "d", "recall", ("A",), 0),
            Judgment("y", (), "j1", "correct", 1.0, 1.0, "d", "recall", (), 1)]
    table, warnings = estimate_all(Judgments(recs, {"A": 3, "B": 2}), "importance",
                                   bootstrap=0)
    assert math.isnan(table["A"]["precision"]) and table["A"]["recall"] == 0.5
    assert "recall_importance" not in table["A"]
    assert warnings == []


def test_a_submission_without_draws_is_warned_about_and_a_disjoint_one_is_nan():
    outputs = {"A": {"a", "b"}, "B": {"b", "c"}, "C": {"b", "e"}, "D": {"f"}}
    draws = {"A": ["a", "b"], "B": ["c"], "C": [], "D": []}
    truth = {"a": 1.0, "b": 1.0, "c": 0.0, "e": 0.0, "f": 1.0}
    table, warnings = estimate_all(judged(outputs, draws, truth), "importance", bootstrap=10)
    assert warnings == [
        f"{s}: no draws of its own; items only it output are never seen, so its importance "
        f"estimate is biased (draw from it: assess sample)" for s in ("C", "D")
    ] + ["no recall rows (drawn_for = recall): recall and F1 are not estimated"]
    # C shares b with A and B: a (biased) number; D shares nothing drawn: NaN, no bootstrap
    assert not math.isnan(table["C"]["precision"])
    assert math.isnan(table["D"]["precision"]) and math.isnan(table["D"]["precision_low"])
    assert "precision_boot_low" not in table["D"] and "precision_boot_low" in table["C"]


def test_refusals_say_what_is_missing():
    no_drawn_by = Judgments([Judgment("x", ("A",), "j1", "correct", 1.0, 0.5, "d", "precision",
                                      (), 0)], {"A": 2})
    with pytest.raises(ValueError, match=r"^the importance estimator needs the drawn_by "
                                         r"column \(assess sample writes it\)$"):
        estimate_all(no_drawn_by, "importance", bootstrap=0)
    j = judged({"A": {"a"}, "B": {"a", "b"}, "C": {"b"}}, {"B": ["a", "b"]},
               {"a": 1.0, "b": 0.0})
    j.sizes = {"C": 1}                     # B drew, A and B output judged items
    with pytest.raises(ValueError, match=r"^output sizes missing for \['A', 'B'\]: add a "
                                         r"'# sizes: NAME=COUNT,\.\.\.' line \(assess sample "
                                         r"writes it\)$"):
        estimate_all(j, "importance", bootstrap=0, weights="size")
    j.sizes = {"A": 1, "B": 2, "C": 0}
    with pytest.raises(ValueError, match=r"^every output size on the sizes line must be "
                                         r"positive$"):
        estimate_all(j, "importance", bootstrap=0, weights="size")
    j.sizes = {"A": 1, "B": 1, "C": 1}
    with pytest.raises(ValueError, match=r"^the sizes line says B has 1 items, but 2 judged "
                                         r"items are in it$"):
        estimate_all(j, "importance", bootstrap=0, weights="size")
    j.sizes = {"A": 1, "B": 2, "C": 1}
    j.overlaps = {("A", "B"): 1}           # B and C share b, judged: the line says 0
    with pytest.raises(ValueError, match=r"^the overlaps line says B and C share 0 items, "
                                         r"but 1 judged items are in both$"):
        estimate_all(j, "importance", bootstrap=0)
    with pytest.raises(ValueError, match=r"^heuristic weights need how many items each pair "
                                         r"of outputs shares: a '# overlaps: "
                                         r"A\+B=COUNT,\.\.\.' line \(assess sample writes "
                                         r"it\); or choose --weights size$"):
        estimate_all(Judgments(j.records, j.sizes, None), "importance", bootstrap=0)
    # size weights ignore the overlaps line, wrong or missing
    table, _ = estimate_all(j, "importance", bootstrap=0, weights="size")
    assert table["B"]["precision"] == pytest.approx(0.5)


def test_pool_weights_leave_out_outputs_without_draws():
    """Uniform pool weights go to the outputs that have draws only: an output C without
    draws (sharing b and d with B) changes neither the pool total nor the recall."""
    with_c = {**OUT, "C": {"b", "d"}}
    base, _ = estimate_all(judged(OUT, DRAWS, TRUTH, recall=RECALL), "importance",
                           bootstrap=0, weights="uniform")
    more, _ = estimate_all(judged(with_c, {**DRAWS, "C": []}, TRUTH, recall=RECALL),
                           "importance", bootstrap=0, weights="uniform")
    assert more["A"]["precision"] == pytest.approx(base["A"]["precision"])
    assert more["A"]["recall_importance"] == pytest.approx(
        2 / 3 * 2 * base["A"]["precision"] / 2.6)


def test_importance_recall_with_a_pool_total_below_one_and_nan_at_zero():
    """A = {a, x} drew a, x, x, x; B = {b} drew b; uniform weights (1/2, 1/2). Only a is
    correct: q(a) = 1/4, pool = 1/2 · mean(4, 0, 0, 0) = 0.5 (an estimate of the
    pool's correct items from a small sample), P_A = 1/2 · mean(2, 0, 0, 0) = 0.25,
    recall = 1/2 (pool recall) · 2 · 0.25 / 0.5. With nothing correct the pool
    total is 0 and the recall NaN, without a numpy warning."""
    outputs = {"A": {"a", "x"}, "B": {"b"}}
    draws = {"A": ["a", "x", "x", "x"], "B": ["b"]}
    recall = [("r", "a", ("A",), 1), ("r", "n", (), 1)]
    row = estimate_all(judged(outputs, draws, {"a": 1.0, "x": 0.0, "b": 0.0}, recall=recall),
                       "importance", bootstrap=0, weights="uniform")[0]["A"]
    assert row["precision"] == pytest.approx(0.25)
    assert row["recall_importance"] == pytest.approx(0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        zero = estimate_all(judged(outputs, draws, {"a": 0.0, "x": 0.0, "b": 0.0},
                                   recall=recall), "importance", bootstrap=0,
                            weights="uniform")[0]
    assert zero["A"]["precision"] == 0.0 and math.isnan(zero["A"]["recall_importance"])
    assert zero["A"]["pool_recall"] == 0.5


def test_bootstrap_ignores_draws_of_strata_with_zero_weight():
    """Heuristic weights: C = {d} is disjoint from A and B, so row C weighs only C's
    draws and row A gives C's draw weight 0 (q_A(d) = 0 there: that draw must not
    enter A's replicates as 0/0)."""
    outputs = {"A": {"a", "b"}, "B": {"b", "c"}, "C": {"d"}}
    draws = {"A": ["a", "b"], "B": ["c", "b"], "C": ["d", "d"]}
    truth = {"a": 1.0, "b": 0.0, "c": 1.0, "d": 1.0}
    table, _ = estimate_all(judged(outputs, draws, truth), "importance", bootstrap=300)
    assert (table["C"]["precision_boot_low"], table["C"]["precision_boot_high"]) == (1.0, 1.0)
    for s in ("A", "B"):
        lo, hi = table[s]["precision_boot_low"], table[s]["precision_boot_high"]
        assert math.isfinite(lo) and math.isfinite(hi) and lo <= hi
