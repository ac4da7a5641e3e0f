"""Ranking rules that the main comparison (tests/metrics/test_ranking.py, judgments
0..3) cannot see: negative judgments, which count as judged, non-relevant, gain 0."""
import numpy as np
import pytest
import pytrec_eval
from hypothesis import given, settings, strategies as st

from shareval.metrics.ranking import evaluate

TREC = {"ndcg": "ndcg", "ndcg@5": "ndcg_cut_5", "map": "map", "p@5": "P_5", "mrr": "recip_rank",
        "r_precision": "Rprec"}


@st.composite
def with_negatives(draw):
    """One query per collection at least has a negative judgment on a retrieved document."""
    qrels, run = {}, {}
    for q in range(draw(st.integers(1, 4))):
        docs = [f"d{i:02d}" for i in range(draw(st.integers(2, 12)))]
        judged = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1))
        qrels[f"q{q}"] = {d: draw(st.integers(-3, 3)) for d in judged}
        retrieved = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1))
        run[f"q{q}"] = {d: draw(st.sampled_from([0.0, 0.5, 1.0, 2.0])) for d in retrieved}
    neg = draw(st.sampled_from(sorted(run["q0"])))
    qrels["q0"][neg] = draw(st.integers(-3, -1))
    return qrels, run


@settings(max_examples=300, deadline=None)
@given(with_negatives())
def test_a_negative_judgment_counts_as_zero_and_equals_pytrec_eval(data):
    """Rule: a negative judgment is a judged non-relevant document with gain 0. So the
    values equal those with every negative judgment replaced by 0, which are compared
    with pytrec_eval (fed only 0..3: it can crash on some negative judgments)."""
    qrels, run = data
    zeroed = {q: {d: max(r, 0) for d, r in v.items()} for q, v in qrels.items()}
    ours = evaluate(qrels, run, list(TREC))
    assert ours == evaluate(zeroed, run, list(TREC))
    ref = pytrec_eval.RelevanceEvaluator(zeroed, {"ndcg", "ndcg_cut", "map", "P", "recip_rank",
                                                  "Rprec"}).evaluate(run)
    for q, values in ref.items():
        for name, trec in TREC.items():
            assert ours[name][q] == pytest.approx(values[trec], abs=1e-9), (q, name)


def test_negative_judgment_has_gain_zero_in_dcg_and_in_the_ideal_ranking():
    qrels = {"q": {"a": -2, "b": 1, "c": -1, "d": 2}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.5, "d": 1.0}}
    dcg = 1 / np.log2(3) + 2 / np.log2(5)          # a and c add nothing, nor subtract
    idcg = 2 / np.log2(2) + 1 / np.log2(3)         # negatives rank last with gain 0
    out = evaluate(qrels, run, ["ndcg", "ndcg@2"])
    assert out["ndcg"]["q"] == pytest.approx(dcg / idcg)
    assert out["ndcg@2"]["q"] == pytest.approx((1 / np.log2(3)) / idcg)
