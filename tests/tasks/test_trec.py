"""The trec task from files: conventions for empty and missing queries, pytrec_eval equality."""
import random

import pytest
import pytrec_eval

from shareval.formats.trec import write_qrels, write_run
from shareval.tasks import get


def files(tmp_path, qrels, run):
    write_qrels(tmp_path / "qrels", qrels)
    write_run(tmp_path / "run", run)
    return tmp_path / "qrels", tmp_path / "run"


def test_conventions_missing_and_empty_queries(tmp_path):
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 0}, "q3": {"d": 2}}
    run = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}, "q9": {"z": 1.0}}
    q, r = files(tmp_path, qrels, run)
    res = get("trec").score(q, r, measures="map,p@1")
    assert res.metrics == {"map": 0.5, "p@1": 0.5}          # q1 = 1, q3 missing = 0; q2 excluded
    assert res.counts["queries_evaluated"] == 2
    assert res.counts["queries_without_relevant"] == 1
    assert res.counts["queries_missing_from_run"] == 1
    assert res.counts["run_queries_not_in_qrels"] == 1
    assert set(res.breakdowns["per_query"]) == {"q1", "q3"}
    assert len(res.warnings) == 3
    inc = get("trec").score(q, r, measures="map", include_empty=True)
    assert inc.metrics["map"] == pytest.approx(1 / 3)
    assert inc.conventions["include_empty"] is True


def test_file_scoring_equals_pytrec_eval(tmp_path):
    rng = random.Random(5)
    qrels, run = {}, {}
    for q in range(60):
        docs = [f"D{rng.randint(0, 400)}" for _ in range(40)]
        qrels[f"{q}"] = {d: rng.choice([0, 0, 1, 2]) for d in docs[:15]}
        run[f"{q}"] = {d: rng.choice([0.1, 0.2, 0.3, rng.random()]) for d in docs}
    q, r = files(tmp_path, qrels, run)
    res = get("trec").score(q, r, measures="map,map@10,p@10,r_precision,ndcg@10,mrr")
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"map", "map_cut", "P", "Rprec", "ndcg_cut",
                                                "recip_rank"}).evaluate(run)
    names = {"map": "map", "map@10": "map_cut_10", "p@10": "P_10", "r_precision": "Rprec",
             "ndcg@10": "ndcg_cut_10", "mrr": "recip_rank"}
    evaluated = [qid for qid in qrels if any(v >= 1 for v in qrels[qid].values())]
    for ours, theirs in names.items():
        for qid in evaluated:
            assert res.breakdowns["per_query"][qid][ours] == pytest.approx(ev[qid][theirs], abs=1e-9)
        mean = sum(ev[qid][theirs] for qid in evaluated) / len(evaluated)
        assert res.metrics[ours] == pytest.approx(mean, abs=1e-9)
    # only cutoff measures: the scorer skips rows below the deepest cutoff
    cut = get("trec").score(q, r, measures="map@10,p@10,ndcg@10,r_precision")
    for m in ("map@10", "p@10", "ndcg@10", "r_precision"):
        assert cut.metrics[m] == pytest.approx(res.metrics[m], abs=1e-12)


def test_unsorted_run_is_ranked_by_score(tmp_path):
    (tmp_path / "qrels").write_text("q 0 a 1\nq 0 b 0\n")
    (tmp_path / "run").write_text("q Q0 b 1 0.1 t\nq Q0 a 2 0.9 t\n")
    res = get("trec").score(tmp_path / "qrels", tmp_path / "run", measures="mrr")
    assert res.metrics["mrr"] == 1.0


def test_unit_stats_for_compare(tmp_path):
    q, r = files(tmp_path, {"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}})
    u = get("trec").unit_stats(q, r)
    assert u.units == ["q1", "q2"] and u.stats[:, 0].tolist() == [1.0, 0.0]
