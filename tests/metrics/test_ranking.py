"""Ranking measures equal pytrec_eval-terrier's (trec_eval, ties included) and ranx's."""
import numpy as np
import pytest
import pytrec_eval
from hypothesis import given, settings, strategies as st
from ranx import Qrels, Run, evaluate as ranx_evaluate

from shareval.metrics.ranking import evaluate, parse_measure

TREC_NAMES = {"map": "map", "map@5": "map_cut_5", "map@10": "map_cut_10", "p@5": "P_5",
              "p@10": "P_10", "recall@10": "recall_10", "r_precision": "Rprec",
              "ndcg@10": "ndcg_cut_10", "ndcg": "ndcg", "mrr": "recip_rank"}
TREC_MEASURES = {"map", "map_cut", "P", "recall", "Rprec", "ndcg_cut", "ndcg", "recip_rank"}


@st.composite
def collections(draw, ties=True):
    n_q = draw(st.integers(1, 6))
    qrels, run = {}, {}
    score = st.sampled_from([0.0, 0.5, 1.0, 2.0]) if ties else \
        st.floats(0, 100, allow_nan=False)
    for q in range(n_q):
        docs = [f"d{i:02d}" for i in range(draw(st.integers(1, 25)))]
        judged = draw(st.lists(st.sampled_from(docs), unique=True, max_size=len(docs)))
        qrels[f"q{q}"] = {d: draw(st.integers(0, 3)) for d in judged}
        retrieved = draw(st.lists(st.sampled_from(docs), unique=True, max_size=len(docs)))
        if retrieved:
            run[f"q{q}"] = {d: draw(score) for d in retrieved}
    return qrels, run


def trec_reference(qrels, run):
    # pytrec_eval wants qrels with at least one judgment per query
    q = {k: v for k, v in qrels.items() if v}
    return pytrec_eval.RelevanceEvaluator(q, TREC_MEASURES).evaluate(run)


@settings(max_examples=400, deadline=None)
@given(collections(ties=True))
def test_equals_pytrec_eval_with_ties(data):
    qrels, run = data
    ours = evaluate(qrels, run, list(TREC_NAMES))
    ref = trec_reference(qrels, run)
    for qid, values in ref.items():
        for ours_name, trec_name in TREC_NAMES.items():
            assert ours[ours_name][qid] == pytest.approx(values[trec_name], abs=1e-9), \
                (qid, ours_name)


def _trec_order_scores(run):
    """Replace scores by strictly decreasing ones in trec_eval's order (ties: docno desc)."""
    out = {}
    for q, docs in run.items():
        ranked = sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        out[q] = {d: float(len(ranked) - i) for i, (d, _) in enumerate(ranked)}
    return out


RANX_NAMES = {"map": "map", "map@10": "map@10", "p@5": "precision@5", "recall@10": "recall@10",
              "r_precision": "r-precision", "ndcg@10": "ndcg@10", "mrr": "mrr"}


@settings(max_examples=150, deadline=None)
@given(collections(ties=True))
def test_equals_ranx(data):
    """ranx breaks score ties in an unspecified order (numba argsort), so it is given
    the trec_eval order as strictly decreasing scores; ties are covered above."""
    qrels, run = data
    qrels = {q: v for q, v in qrels.items() if any(r >= 1 for r in v.values()) and q in run}
    run = {q: run[q] for q in qrels}
    if not qrels:
        return
    run = _trec_order_scores(run)
    ours = evaluate(qrels, run, list(RANX_NAMES))
    ref = ranx_evaluate(Qrels(qrels), Run(run), list(RANX_NAMES.values()),
                        return_mean=False, make_comparable=True)
    qids = sorted(qrels)
    for ours_name, ranx_name in RANX_NAMES.items():
        got = [ours[ours_name][q] for q in qids]
        np.testing.assert_allclose(got, ref[ranx_name], atol=1e-9, err_msg=ours_name)


def test_trec_eval_tie_break_is_docno_descending():
    # usnistgov/trec_eval#22: equal scores are ranked by docno descending
    qrels = {"1": {"a": 0, "b": 1, "c": 0}}
    assert evaluate(qrels, {"1": {"b": 1.0, "a": 1.0}}, ["ndcg"])["ndcg"]["1"] == 1.0
    assert evaluate(qrels, {"1": {"b": 1.0, "c": 1.0}}, ["ndcg"])["ndcg"]["1"] == \
        pytest.approx(1 / np.log2(3))


def test_empty_query_scores_zero_and_missing_run_query_scores_zero():
    qrels = {"q1": {"a": 1}, "q2": {"b": 0}, "q3": {"c": 1}}
    run = {"q1": {"a": 1.0}, "q2": {"b": 1.0}}
    out = evaluate(qrels, run, ["map", "mrr", "ndcg@10"])
    assert out["map"] == {"q1": 1.0, "q2": 0.0, "q3": 0.0}
    assert out["num_rel"]["q2"] == 0 and out["num_ret"]["q3"] == 0


def test_ap_at_k_divides_by_all_relevant():
    qrels = {"q": {f"d{i}": 1 for i in range(20)}}
    run = {"q": {"d0": 2.0, "x": 1.0}}
    # one relevant in the top 10 at rank 1: AP@10 = 1/20, not 1/10
    assert evaluate(qrels, run, ["map@10"])["map@10"]["q"] == pytest.approx(1 / 20)


@pytest.mark.parametrize("bad", ["p", "recall", "mrr@5", "foo", "map@0", "ndcg@x"])
def test_parse_measure_rejects(bad):
    with pytest.raises(ValueError):
        parse_measure(bad)
