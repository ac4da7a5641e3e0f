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


@st.composite
def ranx_collections(draw):
    """ranx needs every query judged relevant at least once and retrieved: the first
    query is made so (a relevant, retrieved document), then queries failing it dropped."""
    qrels, run = draw(collections(ties=True))
    doc = draw(st.sampled_from([f"d{i:02d}" for i in range(3)]))
    qrels["q0"][doc] = draw(st.integers(1, 3))
    run.setdefault("q0", {})[doc] = draw(st.sampled_from([0.0, 0.5, 1.0, 2.0]))
    qrels = {q: v for q, v in qrels.items() if any(r >= 1 for r in v.values()) and q in run}
    return qrels, {q: run[q] for q in qrels}


@settings(max_examples=150, deadline=None)
@given(ranx_collections())
def test_equals_ranx(data):
    """ranx breaks score ties in an unspecified order (numba argsort), so it is given
    the trec_eval order as strictly decreasing scores; ties are covered above."""
    qrels, run = data
    assert qrels
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


def test_scores_are_compared_in_single_precision_like_trec_eval():
    # trec_eval stores sim as float: these two doubles tie, and the tie goes to docno desc
    hi, lo = 0.9566925804034677, 0.9566925655091452
    assert np.float32(hi) == np.float32(lo)
    qrels = {"q": {"a": 1, "b": 0}}
    ours = evaluate(qrels, {"q": {"a": hi, "b": lo}}, ["mrr"])["mrr"]["q"]
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(
        {"q": {"a": hi, "b": lo}})["q"]["recip_rank"]
    assert ours == ref == 0.5


@settings(max_examples=200, deadline=None)
@given(collections(ties=False))
def test_equals_pytrec_eval_with_close_float_scores(data):
    qrels, run = data
    # squeeze scores so that many differ only beyond single precision
    run = {q: {d: 0.5 + s * 1e-9 for d, s in docs.items()} for q, docs in run.items()}
    ours = evaluate(qrels, run, list(TREC_NAMES))
    for qid, values in trec_reference(qrels, run).items():
        for ours_name, trec_name in TREC_NAMES.items():
            assert ours[ours_name][qid] == pytest.approx(values[trec_name], abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from([0.0, 1.0, 2.0]), st.integers(0, 30)),
                max_size=60, unique_by=lambda r: (r[0], r[2])), st.booleans())
def test_rank_order_equals_brute_force(rows, presort):
    from shareval.metrics.ranking import by_position, rank_order
    if presort:   # grouped and score-sorted, ties in arbitrary order: the fast path
        rows = sorted(rows, key=lambda r: (r[0], -r[1]))
    q = np.array([r[0] for r in rows], dtype=np.int64)
    s = np.array([r[1] for r in rows], dtype=np.float32)
    d = np.array([r[2] for r in rows], dtype=np.int64)
    order = rank_order(q, s, d, by_position(np.arange(31)))
    got = [rows[i] for i in (range(len(rows)) if order is None else order)]
    # within each query: score desc, then doc desc; queries contiguous
    expected = {qq: sorted([r for r in rows if r[0] == qq], key=lambda r: (-r[1], -r[2]))
                for qq in {r[0] for r in rows}}
    seen = []
    for r in got:
        if not seen or seen[-1] != r[0]:
            assert r[0] not in seen
            seen.append(r[0])
    for qq, exp in expected.items():
        assert [r for r in got if r[0] == qq] == exp


CUTOFF_ONLY = {k: v for k, v in TREC_NAMES.items() if "@" in k or k == "r_precision"}


@settings(max_examples=300, deadline=None)
@given(collections(ties=True))
def test_cutoff_only_measures_equal_pytrec_eval(data):
    """With only cutoff measures, rows below the deepest cutoff are skipped: same values."""
    qrels, run = data
    ours = evaluate(qrels, run, list(CUTOFF_ONLY))
    for qid, values in trec_reference(qrels, run).items():
        for ours_name, trec_name in CUTOFF_ONLY.items():
            assert ours[ours_name][qid] == pytest.approx(values[trec_name], abs=1e-9)


@settings(max_examples=150, deadline=None)
@given(collections(ties=True), st.integers(1, 7))
def test_judgments_joined_by_small_blocks_equal_pytrec_eval(data, block):
    """The judgment join runs by blocks of rows (10^6 by default); blocks of a few rows
    cross query boundaries and the cutoff's row selection."""
    from shareval.metrics import ranking
    qrels, run = data
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ranking, "JOIN_BLOCK", block)
        ours = evaluate(qrels, run, list(TREC_NAMES))
        cut = evaluate(qrels, run, ["p@5", "map@10", "ndcg@10"])
    ref = trec_reference(qrels, run)
    for qid, values in ref.items():
        for ours_name, trec_name in TREC_NAMES.items():
            assert ours[ours_name][qid] == pytest.approx(values[trec_name], abs=1e-9), \
                (qid, ours_name)
        for name in cut:
            if name in TREC_NAMES:
                assert cut[name][qid] == pytest.approx(values[TREC_NAMES[name]], abs=1e-9)


def test_judgments_beyond_int32_keep_their_value():
    """judgments_of narrows its column to int32 only when every judgment fits."""
    from shareval.metrics.ranking import Encoded, by_position, judgments_of
    big = 2 ** 40
    e = Encoded(1, 3, np.array([0, 0, 0]), np.array([0, 1, 2]), np.array([3.0, 2.0, 1.0]),
                np.array([0, 0]), np.array([0, 2]), np.array([big, 1]), by_position(np.arange(3)))
    out = judgments_of(e, None, missing=-1)
    assert out.tolist() == [big, -1, 1]
    small = Encoded(1, 3, e.run_q, e.run_doc, e.run_score, e.qrels_q, e.qrels_doc,
                    np.array([2, 1]), e.doc_tiebreak)
    assert judgments_of(small, None).dtype == np.int32
