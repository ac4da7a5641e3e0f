"""The per-unit statistics stored with a score are those of the board's number: the
dataset's scoring options and its primary metric reach ``Task.unit_stats``."""
from shareval.platform.submissions.scoring import _unit_stats, unit_stats_options
from shareval.tasks import get


def test_options_the_task_takes_and_the_primary_metric():
    trec = get("trec")
    kw = unit_stats_options(trec, {"score_precision": "double", "not_an_option": 1}, "ndcg")
    assert kw == {"score_precision": "double", "metric": "ndcg"}
    # SV-Ident detection takes neither options nor a metric: nothing is passed
    assert unit_stats_options(get("svident-detection"), {"ties": "id"}, "f1_macro") == {}


def test_the_primary_metric_reaches_the_stored_statistics(tmp_path):
    qrels = tmp_path / "q.txt"
    run = tmp_path / "r.txt"
    qrels.write_text("".join(f"q{i} 0 d{j} {int(j < 2)}\n" for i in range(3) for j in range(4)))
    run.write_text("".join(f"q{i} Q0 d{j} {j + 1} {4 - j} x\n" for i in range(3)
                           for j in range(4)))
    trec = get("trec")
    ref, sub = trec.load(str(qrels), str(run))
    assert _unit_stats(trec, ref, sub, {}, "p@1")["metric"] == "p@1"
    # a metric the task has no units for: the task's default, never a failed scoring
    assert _unit_stats(trec, ref, sub, {}, "no_such_measure")["metric"] == trec.primary_metric
