"""Ranking measures against an oracle written from docs/conventions.md's ranking table,
on hand-made collections that each stress one rule and on fixed seeded collections
(no hypothesis: the same cases in every run, also under the mutation profile).

The oracle ranks each query's documents by score (as 32-bit floats unless
``double``) descending, ties by document id descending; a document is relevant when
it is judged and its judgment >= rel_level; AP@k and recall@k divide by R, P@k by k,
R-precision is precision at rank R, MRR is 1 / rank of the first relevant document,
nDCG@k uses max(judgment, 0) as gain, log2(rank + 1) as discount and the ideal
ranking of all judgments of the query; a zero denominator gives 0.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from shareval.metrics import ranking
from shareval.metrics.ranking import evaluate, parse_measure

ALL = ["map", "map@1", "map@3", "map@10", "p@1", "p@3", "p@10", "recall@1", "recall@3",
       "recall@10", "r_precision", "mrr", "ndcg", "ndcg@1", "ndcg@3", "ndcg@10"]


def oracle(qrels, run, measures, rel_level=1, score_precision="float"):
    out = {m: {} for m in list(measures) + ["num_rel", "num_ret"]}
    for q in sorted(set(qrels) | set(run)):
        judged = qrels.get(q, {})
        rel = {d for d, j in judged.items() if j >= rel_level}
        big_r = len(rel)
        cast = np.float32 if score_precision == "float" else float
        ranked = [d for d, _ in sorted(run.get(q, {}).items(),
                                       key=lambda kv: (cast(kv[1]), kv[0]), reverse=True)]
        ideal = sorted((max(j, 0) for j in judged.values()), reverse=True)
        out["num_rel"][q] = float(big_r)
        out["num_ret"][q] = float(len(ranked))
        for m in measures:
            kind, k = parse_measure(m)
            top = ranked if k is None else ranked[:k]
            hits = [d in rel for d in top]
            if kind == "map":
                v = sum(sum(hits[:i + 1]) / (i + 1) for i, h in enumerate(hits) if h)
                v = v / big_r if big_r else 0.0
            elif kind == "p":
                v = sum(hits) / k
            elif kind == "recall":
                v = sum(hits) / big_r if big_r else 0.0
            elif kind == "r_precision":
                v = sum(d in rel for d in ranked[:big_r]) / big_r if big_r else 0.0
            elif kind == "mrr":
                v = next((1 / (i + 1) for i, d in enumerate(ranked) if d in rel), 0.0)
            else:
                dcg = sum(max(judged.get(d, 0), 0) / math.log2(i + 2) for i, d in enumerate(top))
                itop = ideal if k is None else ideal[:k]
                idcg = sum(g / math.log2(i + 2) for i, g in enumerate(itop))
                v = dcg / idcg if idcg else 0.0
            out[m][q] = v
    return out


def assert_equal_oracle(qrels, run, measures=ALL, **kw):
    got = evaluate(qrels, run, measures, **kw)
    want = oracle(qrels, run, measures, **kw)
    assert set(got) == set(want)
    for m in want:
        assert set(got[m]) == set(want[m]), m
        for q, v in want[m].items():
            assert got[m][q] == pytest.approx(v, abs=1e-12), (m, q, kw)


def test_rows_in_any_order_rank_by_score_then_docno_descending():
    """Queries interleaved, scores ascending, ties inside and across queries."""
    qrels = {"q1": {"a": 1, "b": 2, "c": 0, "d": 1}, "q2": {"a": 0, "e": 1, "f": 3}}
    run = {"q2": {"a": 1.0, "e": 1.0, "f": 0.5, "g": 2.0},
           "q1": {"d": 0.1, "c": 0.2, "b": 0.2, "a": 0.2, "x": 0.3}}
    assert_equal_oracle(qrels, run)
    rows = [("q1", "d", 0.1), ("q2", "a", 1.0), ("q1", "c", 0.2), ("q2", "f", 0.5),
            ("q1", "b", 0.2), ("q2", "e", 1.0), ("q1", "a", 0.2), ("q2", "g", 2.0),
            ("q1", "x", 0.3)]
    interleaved: dict = {}
    for q, d, s in rows:
        interleaved.setdefault(q, {})[d] = s
    assert evaluate(qrels, interleaved, ALL) == evaluate(qrels, run, ALL)
    # q1 ranked x, c, b, a, d: first relevant b at rank 3
    assert evaluate(qrels, run, ["mrr"])["mrr"]["q1"] == pytest.approx(1 / 3)


def test_ranked_runs_with_tie_groups_take_the_fast_path_and_the_same_values():
    qrels = {"q": {f"d{i}": i % 4 for i in range(12)}}
    run = {"q": {f"d{i}": float(3 - i // 4) for i in range(12)}}   # written ranked, ties of 4
    assert_equal_oracle(qrels, run)
    reverse = {"q": dict(reversed(list(run["q"].items())))}
    assert evaluate(qrels, reverse, ALL) == evaluate(qrels, run, ALL)


def test_cutoff_only_measures_look_deep_enough_for_r_precision():
    """R = 5 relevant, the deepest cutoff 1: R-precision still counts ranks 2..5."""
    qrels = {"q": {f"r{i}": 1 for i in range(5)}}
    run = {"q": {"x": 9.0, "r0": 8.0, "r1": 7.0, "y": 6.0, "r2": 5.0, "r3": 1.0, "r4": 0.5}}
    got = evaluate(qrels, run, ["p@1", "r_precision"])
    assert got["r_precision"]["q"] == pytest.approx(3 / 5) and got["p@1"]["q"] == 0.0
    assert_equal_oracle(qrels, run, ["p@1", "r_precision", "ndcg@2", "map@3"])
    assert_equal_oracle(qrels, run, ["r_precision"])
    assert_equal_oracle(qrels, run, ["p@3", "mrr"])


def test_unjudged_and_out_of_range_documents_are_not_relevant():
    """A retrieved document sorting after every judged one (its key is past the last
    judgment) and one before: both unjudged, gain 0."""
    qrels = {"q1": {"m": 1}, "q2": {"m": 2}}
    run = {"q1": {"z": 3.0, "a": 2.0, "m": 1.0}, "q2": {"zz": 5.0, "m": 4.0, "a": 3.0}}
    assert_equal_oracle(qrels, run)
    assert evaluate(qrels, run, ["mrr"])["mrr"] == {"q1": 1 / 3, "q2": 1 / 2}


def test_no_judgments_at_all_and_queries_on_one_side_only():
    assert evaluate({}, {}, ["r_precision", "map"]) == {"r_precision": {}, "map": {},
                                                        "num_rel": {}, "num_ret": {}}
    assert_equal_oracle({}, {"q": {"a": 1.0, "b": 2.0}})
    assert_equal_oracle({"q1": {"a": 1}}, {"q2": {"a": 1.0}})
    got = evaluate({"q1": {"a": 1}}, {"q2": {"a": 1.0}}, ["map", "ndcg@10"])
    assert got["map"] == {"q1": 0.0, "q2": 0.0} and got["num_ret"] == {"q1": 0.0, "q2": 1.0}


def test_graded_ndcg_with_negative_and_zero_judgments():
    qrels = {"q": {"a": 3, "b": -1, "c": 0, "d": 2, "e": 1, "f": 3}}
    run = {"q": {"b": 5.0, "c": 4.0, "d": 3.0, "a": 2.0, "x": 1.5, "e": 1.0}}
    assert_equal_oracle(qrels, run)
    dcg = 2 / math.log2(4) + 3 / math.log2(5)
    idcg = 3 / math.log2(2) + 3 / math.log2(3) + 2 / math.log2(4)
    assert evaluate(qrels, run, ["ndcg@3", "ndcg@4"])["ndcg@4"]["q"] == pytest.approx(
        dcg / (idcg + 1 / math.log2(5)))
    assert evaluate(qrels, run, ["ndcg@3"])["ndcg@3"]["q"] == pytest.approx(
        (2 / math.log2(4)) / idcg)


@pytest.mark.parametrize("level", [-1, 0, 2, 3])
def test_rel_level_on_mixed_judgments(level):
    qrels = {"q1": {"a": -1, "b": 0, "c": 1, "d": 2, "e": 3},
             "q2": {"a": 3, "b": 0}, "q3": {"z": -2}}
    run = {"q1": {"x": 9.0, "e": 8.0, "a": 7.0, "b": 6.0, "d": 5.0, "c": 4.0, "y": 3.0},
           "q2": {"b": 2.0, "a": 1.0, "c": 0.5}, "q3": {"z": 1.0, "y": 0.0}}
    assert_equal_oracle(qrels, run, rel_level=level)


def test_single_and_double_precision_rank_near_ties_differently():
    qrels = {"q": {"a": 1, "b": 0, "c": 2}}
    run = {"q": {"a": 0.5 + 1e-9, "b": 0.5 + 2e-9, "c": 0.5}}
    assert_equal_oracle(qrels, run)
    assert_equal_oracle(qrels, run, score_precision="double")
    # as floats the three scores tie: c, b, a (docno descending); as doubles: b, a, c
    assert evaluate(qrels, run, ["mrr"])["mrr"]["q"] == 1.0
    assert evaluate(qrels, run, ["mrr"], score_precision="double")["mrr"]["q"] == 0.5


def random_collection(rng, n_q, graded=(0, 3), ties=True):
    qrels, run = {}, {}
    for q in range(n_q):
        docs = [f"d{i:02d}" for i in range(int(rng.integers(1, 20)))]
        judged = rng.choice(docs, int(rng.integers(0, len(docs) + 1)), replace=False)
        qrels[f"q{q}"] = {str(d): int(rng.integers(graded[0], graded[1] + 1)) for d in judged}
        retrieved = rng.choice(docs, int(rng.integers(0, len(docs) + 1)), replace=False)
        if retrieved.size:
            scores = rng.choice([0.0, 0.5, 1.0, 2.0], retrieved.size) if ties else \
                0.5 + rng.integers(0, 1000, retrieved.size) * 1e-9
            run[f"q{q}"] = {str(d): float(s) for d, s in zip(retrieved, scores)}
    return qrels, run


@pytest.mark.parametrize("seed", range(8))
def test_seeded_collections_equal_the_oracle(seed):
    rng = np.random.default_rng(seed)
    for n in range(25):
        qrels, run = random_collection(rng, int(rng.integers(1, 5)), ties=n % 3 != 2,
                                       graded=(-2, 3) if n % 4 == 3 else (0, 3))
        assert_equal_oracle(qrels, run)
        assert_equal_oracle(qrels, run, ["p@5", "map@10", "ndcg@5", "r_precision"])
        assert_equal_oracle(qrels, run, ["map", "p@3", "mrr"], rel_level=2,
                            score_precision="double")


def test_judgments_joined_in_blocks_of_a_few_rows(monkeypatch):
    rng = np.random.default_rng(11)
    monkeypatch.setattr(ranking, "JOIN_BLOCK", 3)
    for _ in range(20):
        qrels, run = random_collection(rng, 4)
        assert_equal_oracle(qrels, run)
        assert_equal_oracle(qrels, run, ["p@3", "ndcg@3"])


def test_evaluate_encoded_defaults_are_level_one_and_single_precision():
    """The array layer's defaults are the documented ones: rel_level 1 (a judgment of 1
    is relevant) and scores compared as 32-bit floats (near-ties go to the docno)."""
    qrels = {"q": {"a": 1, "b": 0, "c": 2}}
    run = {"q": {"a": 0.5 + 1e-9, "b": 0.5 + 2e-9, "c": 0.5, "d": 0.1}}
    enc, qids = ranking.encode_mappings(qrels, run)
    got = ranking.evaluate_encoded(enc, ["map", "mrr"])
    want = oracle(qrels, run, ["map", "mrr"])
    assert qids == ["q"]
    assert got["map"][0] == pytest.approx(want["map"]["q"]) and got["mrr"][0] == 1.0
    assert got["num_rel"][0] == 2
