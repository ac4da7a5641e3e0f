"""Ranking rules that the main comparison (tests/metrics/test_ranking.py, judgments
0..3) cannot see: negative judgments, which count as judged, non-relevant, gain 0."""
import numpy as np
import pytest
import pytrec_eval
from hypothesis import given, settings, strategies as st

from shareval.metrics import ranking
from shareval.metrics.ranking import DEFAULT_MEASURES, evaluate, parse_measure

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


# --- rel_level, score precision, measure names (docs/conventions.md, metrics/ranking.py) ---

@settings(max_examples=100, deadline=None)
@given(with_negatives(), st.integers(2, 3))
def test_rel_level_is_a_threshold_on_the_judgments(data, level):
    """A document is relevant when its judgment is >= rel_level (trec_eval -l): the binary
    measures equal trec_eval's on judgments binarized at that level; nDCG keeps the judgment
    as its gain whatever the level. (pytrec_eval's own relevance_level hangs on some of
    these inputs, so the level is applied to the judgments instead; it is fed 0..3 only,
    see above.)"""
    qrels, run = data
    binary = {"map": "map", "map@5": "map_cut_5", "p@5": "P_5", "recall@5": "recall_5",
              "mrr": "recip_rank", "r_precision": "Rprec"}
    ours = evaluate(qrels, run, list(binary) + ["ndcg", "ndcg@5"], rel_level=level)
    cut = {k: {d: int(v >= level) for d, v in j.items()} for k, j in qrels.items() if j}
    ref = pytrec_eval.RelevanceEvaluator(cut, {"map", "map_cut", "P", "recall", "recip_rank",
                                               "Rprec"}).evaluate(run)
    graded = {k: {d: max(v, 0) for d, v in j.items()} for k, j in qrels.items() if j}
    ref_ndcg = pytrec_eval.RelevanceEvaluator(graded, {"ndcg", "ndcg_cut"}).evaluate(run)
    for qid in ref:
        for m, t in binary.items():
            assert ours[m][qid] == pytest.approx(ref[qid][t], abs=1e-9), (m, qid, level)
        assert ours["ndcg"][qid] == pytest.approx(ref_ndcg[qid]["ndcg"], abs=1e-9)
        assert ours["ndcg@5"][qid] == pytest.approx(ref_ndcg[qid]["ndcg_cut_5"], abs=1e-9)
        assert ours["num_rel"][qid] == sum(v >= level for v in qrels[qid].values())


def test_rel_level_by_hand():
    qrels = {"q": {"a": 1, "b": 2, "c": 3}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0, "x": 0.5}}
    out = evaluate(qrels, run, ["map", "p@2", "mrr", "r_precision", "recall@2"], rel_level=2)
    # relevant: b (rank 2), c (rank 3); AP = (1/2 + 2/3) / 2
    assert out["map"]["q"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert out["p@2"]["q"] == 0.5 and out["mrr"]["q"] == 0.5
    assert out["r_precision"]["q"] == 0.5 and out["recall@2"]["q"] == 0.5
    assert out["num_rel"]["q"] == 2 and out["num_ret"]["q"] == 4


def test_double_precision_tells_apart_what_float_ties():
    """trec_eval 10.0 compares doubles: the higher double wins instead of the docno tie-break."""
    hi, lo = 0.9566925804034677, 0.9566925655091452
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": hi, "b": lo}}
    assert evaluate(qrels, run, ["mrr"])["mrr"]["q"] == 0.5                 # float: b first
    assert evaluate(qrels, run, ["mrr"], score_precision="double")["mrr"]["q"] == 1.0
    with pytest.raises(ValueError, match=r"^score_precision must be one of \('float', "
                                         r"'double'\), not 'half'$"):
        evaluate(qrels, run, ["mrr"], score_precision="half")


@pytest.mark.parametrize("name,message", [
    ("foo", r"^unknown measure 'foo'; known: map, map@k, p@k, recall@k, r_precision, ndcg, "
            r"ndcg@k, mrr$"),
    ("p", r"^measure 'p' needs a cutoff, e\.g\. p@10$"),
    ("recall", r"^measure 'recall' needs a cutoff, e\.g\. recall@10$"),
    ("mrr@5", r"^measure 'mrr@5' takes no cutoff$"),
    ("r_precision@3", r"^measure 'r_precision@3' takes no cutoff$"),
    ("map@0", r"^measure 'map@0': cutoff must be >= 1$"),
])
def test_measure_name_errors_say_what_is_wrong(name, message):
    with pytest.raises(ValueError, match=message):
        parse_measure(name)


def test_measure_names_are_case_and_space_insensitive():
    assert parse_measure(" MAP@10 ") == ("map", 10)
    assert parse_measure("ndcg") == ("ndcg", None) and parse_measure("map") == ("map", None)
    assert parse_measure("p@1") == ("p", 1) and parse_measure("mrr") == ("mrr", None)


def test_default_measures():
    qrels = {"q": {"a": 1}}
    out = evaluate(qrels, {"q": {"a": 1.0}})
    assert list(out) == list(DEFAULT_MEASURES) + ["num_rel", "num_ret"]
    assert DEFAULT_MEASURES == ("map", "map@10", "p@5", "p@10", "recall@10", "recall@100",
                                "r_precision", "ndcg@10", "mrr")


def test_judgments_of_gives_each_row_its_judgment_and_missing_where_unjudged():
    """The judgment join (metrics/ranking.py: ``missing`` where unjudged, 0 by default):
    rows of two queries, a document judged for one query only, a judgment of 0."""
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"c": 3}}
    run = {"q1": {"a": 1.0, "c": 0.5, "b": 0.2}, "q2": {"a": 2.0, "c": 1.0}}
    enc, _ = ranking.encode_mappings(qrels, run)
    # run rows in mapping order: (q1,a) (q1,c) (q1,b) (q2,a) (q2,c)
    assert ranking.judgments_of(enc, None).tolist() == [2, 0, 0, 0, 3]
    assert ranking.judgments_of(enc, None, missing=-7).tolist() == [2, -7, 0, -7, 3]
    assert ranking.judgments_of(enc, np.array([4, 1, 0]), missing=-1).tolist() == [3, -1, 2]


def _rank(q, score, doc):
    q, doc = np.array(q, dtype=np.int64), np.array(doc, dtype=np.int64)
    return q, doc, ranking.rank_order(q, np.array(score, dtype=np.float32), doc,
                                      ranking.by_position(np.arange(10, dtype=np.int64)))


def test_rank_order_leaves_a_ranked_run_alone_and_moves_only_tied_rows():
    """rank_order's contract (metrics/ranking.py): None when the rows are already ranked
    (each query's rows contiguous, queries in any order, scores decreasing); when only
    some tied rows are out of docno-descending order, those rows move and nothing else;
    rows of a query that are not contiguous are sorted."""
    # ranked: query 1 written before query 0, scores decreasing within each
    assert _rank([1, 1, 1, 0, 0], [3, 2, 1, 5, 4], [0, 1, 2, 3, 4])[2] is None
    assert _rank([0, 0, 0], [3, 2, 1], [2, 0, 1])[2] is None
    # ranked but docs 2 and 5 tie at score 2 in ascending order: only they swap,
    # query 1 stays first
    _, _, order = _rank([1, 1, 1, 0, 0], [3, 2, 2, 5, 4], [0, 2, 5, 3, 4])
    assert order.tolist() == [0, 2, 1, 3, 4]
    # query 0's rows around a row of query 1, scores decreasing in the file: sorted
    q, doc, order = _rank([0, 1, 0], [2, 1, 0], [0, 1, 2])
    assert order is not None
    ranked = list(zip(q[order].tolist(), doc[order].tolist()))
    assert ranked in ([(0, 0), (0, 2), (1, 1)], [(1, 1), (0, 0), (0, 2)])
