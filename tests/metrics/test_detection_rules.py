"""The rules written at the top of metrics/detection.py and in docs/material.md, one test each,
on inputs where a wrong weight, a wrong denominator or a wrong edge case changes the number.

The expected values are worked out by hand in the comments (plan Eq. 1-3 and 8.3.1).
"""
import math
import warnings

import numpy as np
import pytest

from shareval.metrics.detection import (GRID, VARIANTS, Sweep, aqwv, document_weighted_value,
                                        grid_statistics, grid_ticks, oracle_qwv,
                                        per_query_counts, query_values, roc_auc, sweep,
                                        variant_weights, variants_from_query_values)


def silent(f, *args, **kw):
    """Call f with numpy and Python warnings turned into errors: an undefined value is
    documented as NaN, not as a RuntimeWarning printed to the user."""
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        return f(*args, **kw)

# q0: 2 relevant of 5 documents; q1: none relevant; q2: 4 relevant of 4 (no non-relevant)
N_REL = np.array([2, 0, 4])
N_TOTAL = np.array([5, 5, 4])


def test_variant_weights_by_hand():
    """Q = 3 queries, R = 2 with relevant documents; N_nonrel = 3, 5, 0."""
    w = variant_weights(N_REL, N_TOTAL, "all")              # Eq. 2 over all queries
    assert w.M == pytest.approx(2 / 3) and w.n_queries == 3
    assert w.w_miss.tolist() == pytest.approx([1 / (3 * 2), 0.0, 1 / (3 * 4)])
    assert w.w_fa.tolist() == pytest.approx([1 / (3 * 3), 1 / (3 * 5), 0.0])
    w = variant_weights(N_REL, N_TOTAL, "with_relevant")    # Eq. 2 over the R queries
    assert w.M == 1.0 and w.n_queries == 2
    assert w.w_miss.tolist() == pytest.approx([1 / (2 * 2), 0.0, 1 / (2 * 4)])
    assert w.w_fa.tolist() == pytest.approx([1 / (2 * 3), 0.0, 0.0])      # q1 weighs 0
    w = variant_weights(N_REL, N_TOTAL, "primary")          # Eq. 3
    assert w.M == 1.0 and w.n_queries == 3
    assert w.w_miss.tolist() == pytest.approx([1 / (2 * 2), 0.0, 1 / (2 * 4)])
    assert w.w_fa.tolist() == pytest.approx([1 / (3 * 3), 1 / (3 * 5), 0.0])
    assert VARIANTS == ("all", "with_relevant", "primary")


def test_variants_without_any_relevant_query():
    """No relevant documents anywhere: every query has P_miss = 0, so M = 0 for all three; the
    R-averages have no query and weigh nothing."""
    n_rel, n_total = np.array([0, 0]), np.array([4, 2])
    for variant in VARIANTS:
        w = variant_weights(n_rel, n_total, variant)
        assert w.M == 0.0 and w.w_miss.tolist() == [0.0, 0.0]
    assert variant_weights(n_rel, n_total, "all").w_fa.tolist() == pytest.approx([1 / 8, 1 / 4])
    assert variant_weights(n_rel, n_total, "with_relevant").w_fa.tolist() == [0.0, 0.0]
    # nothing retrieved: QV 1 for each query (P_miss = P_FA = 0)
    q, rel = np.array([0, 1]), np.array([False, False])
    assert aqwv(q, rel, [False, False], n_rel, n_total, 20.0, "all") == 1.0


def test_no_query_at_all():
    for variant in VARIANTS:
        w = variant_weights([], [], variant)
        assert w.M == 0.0 and w.w_miss.size == 0 and w.n_queries == 0


def test_query_values_eq_1_per_query():
    """P_miss = misses / N_rel (0 without relevant), P_FA = false alarms / N_nonrel (0 when
    every document is relevant), QV = 1 - (P_miss + beta P_FA)."""
    pm, pf, qv = query_values(N_REL, N_TOTAL, np.array([1, 0, 3]), np.array([2, 1, 0]), 10.0)
    assert pm.tolist() == [0.5, 0.0, 0.25]
    assert pf.tolist() == pytest.approx([2 / 3, 1 / 5, 0.0])
    assert qv.tolist() == pytest.approx([1 - (0.5 + 10 * 2 / 3), 1 - 10 / 5, 1 - 0.25])


def test_counts_and_values_from_zero_one_integers():
    """Relevance and decisions given as 0/1 integers mean what the booleans mean; a query
    whose pairs are not listed counts zero hits and false alarms."""
    q = [0, 0, 0, 1]
    rel, dec = [1, 0, 1, 0], [1, 1, 0, 1]
    hits, fas = per_query_counts(np.array(q), rel, dec, 3)
    assert hits.tolist() == [1, 0, 0] and fas.tolist() == [1, 1, 0]
    n_rel, n_total = np.array([2, 0, 1]), np.array([4, 4, 4])
    bools = aqwv(np.array(q), np.array(rel, bool), np.array(dec, bool), n_rel, n_total, 2.0)
    assert aqwv(np.array(q), rel, dec, n_rel, n_total, 2.0) == pytest.approx(bools)
    # primary by default: P_miss (1/2 + 1) / 2 over q0 and q2, P_FA (1/2 + 1/4 + 0) / 3
    assert bools == pytest.approx(1 - (0.75 + 2.0 * 0.75 / 3))
    assert roc_auc([1, 0, 1, 0], [0.9, 0.8, 0.1, 0.2]) == pytest.approx(roc_auc(
        [True, False, True, False], [0.9, 0.8, 0.1, 0.2]))
    assert roc_auc([1, 0, 1, 0], [0.9, 0.8, 0.1, 0.2]) == 0.5


def test_document_weighted_without_relevant_pairs_is_nan_silently():
    assert math.isnan(silent(document_weighted_value, [0, 0], [3, 3], [0, 0], [1, 0], 20.0))


def test_document_weighted_lengths_message():
    with pytest.raises(ValueError,
                       match="^n_rel, n_total, hits and fas must have the same length$"):
        document_weighted_value([1], [3, 3], [0], [0], 20.0)


def test_unknown_variant_names_the_known_ones():
    with pytest.raises(ValueError, match=r"^unknown variant 'best'; known: all, with_relevant, "
                                         r"primary$"):
        variant_weights(N_REL, N_TOTAL, "best")


def test_nothing_listed_gives_one_minus_m():
    """A query whose pairs are never listed retrieved nothing: every measure is 1 - M."""
    empty = np.array([], dtype=int)
    for variant, m in (("all", 2 / 3), ("primary", 1.0)):
        assert oracle_qwv(empty, [], [], N_REL, N_TOTAL, 20.0, variant) == pytest.approx(1 - m)
        s = sweep(empty, [], [], N_REL, N_TOTAL, 20.0, variant)
        assert s.thresholds.tolist() == [math.inf] and s.qwv.tolist() == pytest.approx([1 - m])
        assert s.p_miss.tolist() == pytest.approx([m]) and s.p_fa.tolist() == [0.0]


def test_sweep_retrieves_ties_together_and_best_is_the_highest_best_threshold():
    """Retrieve pairs with confidence >= t: two pairs tied at 0.5 enter together."""
    q = np.array([0, 0, 0, 0])
    rel = np.array([True, False, True, False])
    conf = np.array([0.9, 0.5, 0.5, 0.1])
    s = sweep(q, rel, conf, np.array([2]), np.array([4]), 1.0)
    assert s.thresholds.tolist() == [math.inf, 0.9, 0.5, 0.1]
    assert s.p_miss.tolist() == [1.0, 0.5, 0.0, 0.0]
    assert s.p_fa.tolist() == [0.0, 0.0, 0.5, 1.0]
    assert s.qwv.tolist() == [0.0, 0.5, 0.5, 0.0]
    assert s.best() == (0.5, 0.9)          # equal QWV: the first (highest) threshold
    assert Sweep(np.array([np.inf, 0.2]), np.array([0.0, 0.3]), np.zeros(2),
                 np.zeros(2)).best() == (0.3, 0.2)


def test_oracle_stops_each_query_at_its_own_best_prefix():
    """Primary weights, beta 2: a hit gains 1/(R N_rel) = 1/2, a false alarm costs
    beta/(Q N_nonrel) = 2/(2*2) = 1/2. q0: hit at 0.9, then a false alarm at 0.8: its best
    prefix is the hit (+1/2). q1: a false alarm at 0.7 before its hit at 0.6: the best prefix
    is empty or whole (0). Oracle = 1 - 1 + 1/2 + 0."""
    q = np.array([0, 0, 1, 1])
    rel = np.array([True, False, False, True])
    conf = np.array([0.9, 0.8, 0.7, 0.6])
    n_rel, n_total = np.array([1, 1]), np.array([3, 3])
    assert oracle_qwv(q, rel, conf, n_rel, n_total, 2.0) == pytest.approx(0.5)
    # a tie inside a query is taken whole: q1's false alarm and hit at one confidence
    conf = np.array([0.9, 0.8, 0.6, 0.6])
    assert oracle_qwv(q, rel, conf, n_rel, n_total, 2.0) == pytest.approx(0.5)
    conf = np.array([0.9, 0.8, 0.5, 0.6])        # q1's hit now comes first: +1/2
    assert oracle_qwv(q, rel, conf, n_rel, n_total, 2.0) == pytest.approx(1.0)


def test_roc_auc_ties_count_half_and_one_class_is_nan():
    assert roc_auc([True, False], [0.5, 0.5]) == 0.5
    assert roc_auc([True, False, False], [0.9, 0.5, 0.9]) == pytest.approx((1 + 0.5) / 2)
    assert roc_auc([True, True, False, False], [0.1, 0.2, 0.3, 0.4]) == 0.0
    assert math.isnan(silent(roc_auc, [True, True], [0.1, 0.2]))
    assert math.isnan(silent(roc_auc, [False], [0.1]))
    assert math.isnan(silent(roc_auc, [], []))


def test_variants_from_query_values_nan_when_nothing_to_average():
    got = silent(variants_from_query_values, [], [], [], 20.0)
    assert all(math.isnan(v) for v in got.values()) and set(got) == set(VARIANTS)
    got = silent(variants_from_query_values, [0.0, 0.0], [0.1, 0.3], [False, False], 10.0)
    assert got["all"] == pytest.approx(1 - 10 * 0.2)
    assert math.isnan(got["with_relevant"]) and math.isnan(got["primary"])
    # primary: P_miss over queries with relevant documents, P_FA over all queries
    got = variants_from_query_values([0.5, 0.0, 1.0], [0.1, 0.3, 0.2], [True, False, True], 10.0)
    assert got["primary"] == pytest.approx(1 - ((0.5 + 1.0) / 2 + 10 * (0.1 + 0.3 + 0.2) / 3))
    assert got["with_relevant"] == pytest.approx(((1 - 0.5 - 1) + (1 - 1 - 2)) / 2)
    assert got["all"] == pytest.approx(((1 - 0.5 - 1) + (1 - 3) + (1 - 1 - 2)) / 3)


def test_grid_ticks_are_exact_multiples_of_1e5_in_zero_one():
    assert GRID == 100_000
    assert grid_ticks(np.array([0.0, 1e-5, 0.99999, 1.0])).tolist() == [0, 1, 99999, 100000]
    assert grid_ticks(np.array([0.5])).dtype == np.int64
    assert grid_ticks(np.array([], dtype=float)) is None
    assert grid_ticks(np.array([0.5, -1e-5])) is None             # below 0
    assert grid_ticks(np.array([0.5, 1.00001])) is None           # above 1
    assert grid_ticks(np.array([0.5, 0.000015])) is None          # between two ticks


def test_grid_statistics_by_hand_in_every_chunking():
    """Two queries over three documents; q0 relevant {d0}, q1 relevant {d1, d2}.
    Primary weights: w_miss = 1/(2*1), 1/(2*2); w_fa = 1/(2*2), 1/(2*1); beta 1.
    Ticks (odd and even, 1e-5 apart): q0 (0.9, 0.50001, 0.50001), q1 (0.50001, 0.9, 0.1)."""
    rel = np.array([[True, False, False], [False, True, True]])
    ticks = np.array([[90000, 50001, 50001], [50001, 90000, 10000]])
    for beta in (1.0, 0.0):
        for chunk in (1, 2, 16):
            g = grid_statistics(rel, ticks, np.array([3, 3]), beta, chunk=chunk)
            # t = 0.9: hits q0 d0 (+1/2) and q1 d1 (+1/4): P_miss 1 - 3/4
            # t = 0.50001: false alarms q0 d1, d2 (2 * 1/4) and q1 d0 (1/2): P_FA 1
            # t = 0.1: q1 d2 hit (+1/4): P_miss 0
            assert g.sweep.thresholds.tolist() == [math.inf, 0.9, 0.50001, 0.1]
            assert g.sweep.p_miss.tolist() == pytest.approx([1.0, 0.25, 0.25, 0.0])
            assert g.sweep.p_fa.tolist() == pytest.approx([0.0, 0.0, 1.0, 1.0])
            assert g.sweep.qwv.tolist() == pytest.approx(
                [0.0, 0.75, 0.75 - beta, 1 - beta])
            # oracle: q0 stops at 0.9 (+1/2); q1 stops at 0.9 (+1/4) when beta = 1, takes all
            # (+1/4 + 1/4) when beta = 0
            assert g.oracle_qwv == pytest.approx(0.75 if beta else 1.0)
            # AUC: positives 0.9, 0.9, 0.1 against negatives 0.5, 0.5, 0.5
            assert g.roc_auc == pytest.approx((3 + 3 + 0) / 9)
    none = silent(grid_statistics, np.zeros((1, 2), bool), np.array([[1, 2]]), np.array([2]),
                  1.0, "all")
    assert math.isnan(none.roc_auc)
