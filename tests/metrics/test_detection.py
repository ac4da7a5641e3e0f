"""AQWV family against a brute-force implementation written from the plan's equations."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.metrics import roc_auc_score

from shareval.metrics.detection import (aqwv, document_weighted_value, oracle_qwv,
                                        query_values, roc_auc, sweep, per_query_counts)

BETA = 20.0


GRID_CONF = st.sampled_from([0.0, 0.2, 0.5, 0.8, 1.0])          # also fed to grid_statistics
FREE_CONF = st.sampled_from([0.0, 0.123456789, 0.5, 0.5 + 1e-9, 0.7777777, 1.0])  # off the grid


@st.composite
def packs(draw, conf=None, with_relevant=False):
    """Queries over a small collection: relevance, decisions, confidences per pair.
    `conf` fixes the confidence strategy; `with_relevant` makes one pair relevant, so
    tests that need a relevant document constrain the input instead of returning."""
    if conf is None:               # a strategy is always truthy: test for None explicitly
        conf = draw(st.sampled_from([GRID_CONF, FREE_CONF]))
    n_docs = draw(st.integers(1, 6))
    n_q = draw(st.integers(1, 4))
    rows = []
    for q in range(n_q):
        for d in range(n_docs):
            rows.append((q, draw(st.booleans()), draw(st.booleans()), draw(conf)))
    q, rel, dec, conf = (np.array(x) for x in zip(*rows))
    rel = rel.astype(bool)
    if with_relevant:
        rel[draw(st.integers(0, rel.size - 1))] = True
    return n_q, n_docs, q, rel, dec.astype(bool), conf.astype(float)


def brute_qv(n_docs, rels, decs, beta):
    """Eq. 1 for one query; no relevant: P_miss = 0; P_FA over the non-relevant."""
    n_rel = sum(rels)
    p_miss = (sum(r and not d for r, d in zip(rels, decs)) / n_rel) if n_rel else 0.0
    n_nonrel = n_docs - n_rel
    p_fa = (sum(d and not r for r, d in zip(rels, decs)) / n_nonrel) if n_nonrel else 0.0
    return p_miss, p_fa


def brute_variants(n_q, n_docs, q, rel, dec, beta):
    per = [brute_qv(n_docs, rel[q == i], dec[q == i], beta) for i in range(n_q)]
    has_rel = [rel[q == i].any() for i in range(n_q)]
    qv = [1 - (pm + beta * pf) for pm, pf in per]
    out = {"all": float(np.mean(qv))}
    rel_q = [i for i in range(n_q) if has_rel[i]]
    out["with_relevant"] = float(np.mean([qv[i] for i in rel_q])) if rel_q else None
    out["primary"] = (1 - (np.mean([per[i][0] for i in rel_q]) + beta * np.mean([p[1] for p in per]))
                      if rel_q else None)
    return out


def counts(n_q, n_docs, q, rel):
    n_rel = np.bincount(q, weights=rel, minlength=n_q)
    return n_rel, np.full(n_q, n_docs)


@settings(max_examples=400, deadline=None)
@given(packs())
def test_aqwv_variants_equal_brute_force(pack):
    n_q, n_docs, q, rel, dec, conf = pack
    n_rel, n_total = counts(n_q, n_docs, q, rel)
    expected = brute_variants(n_q, n_docs, q, rel, dec, BETA)
    for variant, value in expected.items():
        if value is None:
            continue
        assert aqwv(q, rel, dec, n_rel, n_total, BETA, variant) == pytest.approx(value, abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(packs())
def test_mqwv_is_the_best_global_threshold(pack):
    n_q, n_docs, q, rel, dec, conf = pack
    n_rel, n_total = counts(n_q, n_docs, q, rel)
    for variant in ("all", "primary"):
        if variant == "primary" and not rel.any():
            continue
        best = max(brute_variants(n_q, n_docs, q, rel, conf >= t, BETA)[variant]
                   for t in list(np.unique(conf)) + [np.inf])
        assert sweep(q, rel, conf, n_rel, n_total, BETA, variant).best()[0] == \
            pytest.approx(best, abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(packs(with_relevant=True))
def test_oracle_equals_enumerating_every_threshold_per_query(pack):
    n_q, n_docs, q, rel, dec, conf = pack
    n_rel, n_total = counts(n_q, n_docs, q, rel)
    options = list(np.unique(conf)) + [np.inf]
    best = -np.inf
    for thresholds in itertools.product(options, repeat=n_q):
        d = conf >= np.array(thresholds)[q]
        best = max(best, brute_variants(n_q, n_docs, q, rel, d, BETA)["primary"])
    assert oracle_qwv(q, rel, conf, n_rel, n_total, BETA) == pytest.approx(best, abs=1e-9)


def test_worked_examples_from_the_plan():
    # 3 queries over 5 documents
    q = np.repeat(np.arange(3), 5)
    rel = np.zeros(15, dtype=bool)
    rel[[0, 1, 5, 12]] = True
    n_rel, n_total = np.bincount(q, weights=rel), np.full(3, 5)
    for variant in ("all", "with_relevant", "primary"):
        # a perfect system: 1; a system that outputs nothing: 0; everything wrong: -beta
        assert aqwv(q, rel, rel, n_rel, n_total, BETA, variant) == pytest.approx(1.0)
        assert aqwv(q, rel, np.zeros(15, bool), n_rel, n_total, BETA, variant) == pytest.approx(0.0)
        assert aqwv(q, rel, ~rel, n_rel, n_total, BETA, variant) == pytest.approx(-BETA)


def test_three_variants_with_a_query_without_relevant_documents():
    # q0: 2 relevant of 4, system finds 1 and one false alarm; q1: none relevant, 1 false alarm
    q = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    rel = np.array([1, 1, 0, 0, 0, 0, 0, 0], bool)
    dec = np.array([1, 0, 1, 0, 1, 0, 0, 0], bool)
    n_rel, n_total = np.array([2, 0]), np.array([4, 4])
    pm, pf, qv = query_values(n_rel, n_total, *per_query_counts(q, rel, dec, 2), beta=BETA)
    assert list(pm) == [0.5, 0.0] and list(pf) == [0.5, 0.25]
    assert aqwv(q, rel, dec, n_rel, n_total, BETA, "all") == pytest.approx((-9.5 + -4.0) / 2)
    assert aqwv(q, rel, dec, n_rel, n_total, BETA, "with_relevant") == pytest.approx(-9.5)
    assert aqwv(q, rel, dec, n_rel, n_total, BETA, "primary") == \
        pytest.approx(1 - (0.5 + BETA * (0.5 + 0.25) / 2))
    # a query without relevant documents that retrieves nothing: P_miss = P_FA = 0, QV = 1
    dec[4] = False
    assert aqwv(q, rel, dec, n_rel, n_total, BETA, "all") == pytest.approx((-9.5 + 1.0) / 2)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0, 0.33333333])),
                min_size=2, max_size=40))
def test_roc_auc_equals_sklearn(rows):
    labels = [a for a, _ in rows]
    scores = [b for _, b in rows]
    if len(set(labels)) < 2:
        assert np.isnan(roc_auc(labels, scores))
    else:
        assert roc_auc(labels, scores) == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)


def test_sweep_det_points():
    q = np.array([0, 0, 0])
    rel = np.array([True, False, True])
    conf = np.array([0.9, 0.5, 0.1])
    s = sweep(q, rel, conf, np.array([2]), np.array([3]), 1.0)
    assert list(s.thresholds) == [np.inf, 0.9, 0.5, 0.1]
    assert list(s.p_miss) == [1.0, 0.5, 0.5, 0.0]
    assert list(s.p_fa) == [0.0, 0.0, 1.0, 1.0]


@settings(max_examples=200, deadline=None)
@given(packs())
def test_variants_from_query_values_agree_with_pair_form(pack):
    from shareval.metrics.detection import variants_from_query_values
    n_q, n_docs, q, rel, dec, conf = pack
    n_rel, n_total = counts(n_q, n_docs, q, rel)
    pm, pf, _ = query_values(n_rel, n_total, *per_query_counts(q, rel, dec, n_q), beta=BETA)
    got = variants_from_query_values(pm, pf, n_rel > 0, BETA)
    for variant, value in got.items():
        if np.isnan(value):
            assert not rel.any() and variant != "all"
        else:
            assert value == pytest.approx(aqwv(q, rel, dec, n_rel, n_total, BETA, variant), abs=1e-9)


def test_grid_detection():
    from shareval.metrics.detection import grid_ticks
    assert grid_ticks(np.array([0.0, 0.84, 0.12345, 1.0])).tolist() == [0, 84000, 12345, 100000]
    assert grid_ticks(np.array([0.123456])) is None and grid_ticks(np.array([1.5])) is None


@settings(max_examples=200, deadline=None)
@given(packs(conf=GRID_CONF), st.integers(1, 3))
def test_grid_statistics_equal_the_pair_functions(pack, chunk):
    from shareval.metrics.detection import grid_statistics, grid_ticks
    n_q, n_docs, q, rel, dec, conf = pack
    ticks = grid_ticks(conf)
    assert ticks is not None, "confidences on the 0.1 grid must take the grid path"
    n_rel, n_total = counts(n_q, n_docs, q, rel)
    variant = "primary" if rel.any() else "all"
    for beta in (BETA, 0.0):     # beta 0 takes the direct false-alarm path
        g = grid_statistics(rel.reshape(n_q, n_docs), ticks.reshape(n_q, n_docs), n_total, beta,
                            variant, chunk=chunk)
        s = sweep(q, rel, conf, n_rel, n_total, beta, variant)
        np.testing.assert_allclose(g.sweep.qwv, s.qwv, atol=1e-9)
        np.testing.assert_allclose(g.sweep.p_fa, s.p_fa, atol=1e-9)
        np.testing.assert_array_equal(g.sweep.thresholds, s.thresholds)
        assert g.oracle_qwv == pytest.approx(
            oracle_qwv(q, rel, conf, n_rel, n_total, beta, variant), abs=1e-9)
    expected_auc = roc_auc(rel, conf)
    assert (np.isnan(g.roc_auc) and np.isnan(expected_auc)) or \
        g.roc_auc == pytest.approx(expected_auc, abs=1e-12)


def brute_adwv(n_docs, q, rel, dec, beta):
    """Document-weighted value: one count per (query, document) pair, pooled."""
    pairs = list(zip(q, rel, dec))
    relevant = [p for p in pairs if p[1]]
    if not relevant:
        return None
    nonrel = [p for p in pairs if not p[1]]
    p_miss = sum(1 for p in relevant if not p[2]) / len(relevant)
    p_fa = sum(1 for p in nonrel if p[2]) / len(nonrel) if nonrel else 0.0
    return 1 - (p_miss + beta * p_fa)


@settings(max_examples=400, deadline=None)
@given(packs(), st.sampled_from([0.0, 20.0, 59.9]))
def test_document_weighted_value_equals_brute_force(pack, beta):
    n_q, n_docs, q, rel, dec, conf = pack
    n_rel, n_total = counts(n_q, n_docs, q, rel)
    hits, fas = per_query_counts(q, rel, dec, n_q)
    got = document_weighted_value(n_rel, n_total, hits, fas, beta)
    want = brute_adwv(n_docs, q, rel, dec, beta)
    if want is None:
        assert np.isnan(got)
    else:
        assert got == pytest.approx(want, abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4), st.integers(2, 6), st.data())
def test_document_weighted_equals_query_weighted_when_queries_are_alike(n_q, n_docs, data):
    """Equal N_relevant (> 0) in every query: pooling and averaging agree."""
    k = data.draw(st.integers(1, n_docs - 1))
    q = np.repeat(np.arange(n_q), n_docs)
    rel = np.tile(np.arange(n_docs) < k, n_q)
    dec = np.array(data.draw(st.lists(st.booleans(), min_size=q.size, max_size=q.size)))
    n_rel, n_total = counts(n_q, n_docs, q, rel)
    hits, fas = per_query_counts(q, rel, dec, n_q)
    adwv = document_weighted_value(n_rel, n_total, hits, fas, BETA)
    assert adwv == pytest.approx(aqwv(q, rel, dec, n_rel, n_total, BETA, "primary"), abs=1e-9)
    assert adwv == pytest.approx(aqwv(q, rel, dec, n_rel, n_total, BETA, "all"), abs=1e-9)


def test_document_weighted_worked_example():
    """Query 1: 1 relevant of 10 docs, found, no false alarm (QV 1); query 2:
    9 relevant of 10, none found (QV 0). Query-weighted: 0.5. Document-weighted:
    P_miss = 9/10 pooled, P_FA = 0: 0.1 -- the big query dominates."""
    n_rel, n_total = np.array([1, 9]), np.array([10, 10])
    hits, fas = np.array([1, 0]), np.array([0, 0])
    assert document_weighted_value(n_rel, n_total, hits, fas, BETA) == pytest.approx(0.1)
    # one false alarm in query 2 (its only non-relevant document): pooled P_FA = 1/10
    assert document_weighted_value(n_rel, n_total, hits, np.array([0, 1]), BETA) == \
        pytest.approx(1 - (0.9 + BETA / 10))
    # fractional E2E credit and no relevant pair at all
    assert document_weighted_value([2], [4], [0.5], [1 / 3], BETA) == \
        pytest.approx(1 - (0.75 + BETA * (1 / 3) / 2))
    assert np.isnan(document_weighted_value([0, 0], [3, 3], [0, 0], [1, 0], BETA))
    with pytest.raises(ValueError, match="same length"):
        document_weighted_value([1], [3, 3], [0], [0], BETA)
