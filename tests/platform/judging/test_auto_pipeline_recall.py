"""The automatic assessment with real recall: documents annotated exhaustively in an
``exhaustive`` campaign (judging/recall.py) give every assessed run its recall; when
a document is finished the stored scores are updated with recall and F1, and the
board ranks by the judged F1 with intervals."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from shareval.formats.errors import Problems
from shareval.formats.kbp_runs import item_key, read_run
from shareval.platform.judging import content, estimates, ondemand, service
from shareval.platform.judging.models import Campaign, LateEvaluation
from shareval.platform.leaderboards.payloads import leaderboard_payload
from shareval.platform.submissions import queue

from .auto_world import CHAIN, TRUTH, answer, make_world, run, upload


@pytest.fixture
def contract_keys(monkeypatch):
    """Relation mentions keyed as the contract says (formats.kbp_runs.item_key), as
    branch judge's content.run_units keys them; a stand-in until it is merged here."""
    if hasattr(content.Resources, "kbp"):
        return
    real = content.run_units

    def units(task_name, path, res=None):
        if task_name != "kbp-relations":
            return real(task_name, path, res)
        got = read_run(path, Problems())
        return {item_key(p.doc, p.subject, p.relation, p.object): content.Unit(
            p.doc, p.doc, f"{p.subject_text} — {p.relation} — {p.object_text}")
            for p in got.predictions}
    monkeypatch.setattr(content, "run_units", units)


def judge_all(camp, judge):
    while (a := service.next_assignment(camp, judge)) is not None:
        assert service.submit(a, answer(a.item), seconds=5.0)
        ondemand.advance_all(camp)


def test_finished_recall_documents_update_the_scores_and_rank_by_f1(
        db, tmp_path, contract_keys, django_capture_on_commit_callbacks):
    w = make_world(tmp_path)
    ds, judge = w["ds"]["dev"], w["users"]["judge"]
    camp = service.create_campaign(ds, "Every run", Campaign.CHAIN, 1, 30, CHAIN, [judge])
    a = upload(w, "Team A", run(2, 1))       # 2 of the 4 true mentions per document
    b = upload(w, "Team B", run(4, 2))       # all 4
    with django_capture_on_commit_callbacks(execute=True):
        queue.drain()
    assert all(k.count("|") == 3 for k in camp.outputs.first().keys)     # item keys
    judge_all(camp, judge)
    assert not LateEvaluation.objects.exclude(stage="done").exists()
    for s in (a, b):
        s.refresh_from_db()
        assert s.current_score.result["metrics"]["judged_recall"] is None
    annotator = get_user_model().objects.create_user("ann", password="ann-pass-123")
    rec = service.create_campaign(ds, "Recall docs", "exhaustive", 1, 30, {"gold_every": 0},
                                  [annotator], docs=4, seed=1)
    docs = sorted(rec.items.values_list("doc", flat=True))
    assert len(docs) == 4 and estimates.dataset_estimates(ds)[
        f"Team A · run {str(a.pk)[:8]}"]["note"] == "no recall documents yet; 4 recall " \
                                                     "documents being annotated"
    done = 0
    while (x := service.next_assignment(rec, annotator)) is not None:
        true = sorted(t for t in (item_key(d, (s0, s1), r, (o0, o1))
                                  for d, s0, s1, r, o0, o1 in TRUTH) if t.startswith(
            x.item.doc + "|"))
        assert service.submit(x, {"relations": true})
        ondemand.advance_all(rec)            # what the judging page does after an answer
        done += 1
        a.refresh_from_db()
        m = a.current_score.result["metrics"]
        if done == 1:           # one document says nothing of the spread between them
            assert m["judged_recall"] is None
            assert estimates.dataset_estimates(ds)[f"Team A · run {str(a.pk)[:8]}"][
                "note"].startswith("recall once two recall documents are finished")
            continue
        assert m["judged_recall"] == pytest.approx(0.5)        # updated at every document
        assert m["judged_recall_low"] < 0.5 < m["judged_recall_high"]
    assert done == 4
    b.refresh_from_db()
    ma, mb = a.current_score.result["metrics"], b.current_score.result["metrics"]
    assert mb["judged_recall"] == pytest.approx(1.0)
    for m in (ma, mb):
        assert m["judged_f1_low"] <= m["judged_f1"] <= m["judged_f1_high"]
    assert a.current_score.result["judged"]["recall_documents"] == 4
    # every earlier judged score stays in the history
    assert a.scores.filter(current=False, reference_digest__contains="+a").count() >= 1
    board = leaderboard_payload(ds, w["org"])
    assert [(r["team"], r["rank"]) for r in board["rows"]] == [("Team B", 1), ("Team A", 2)]
    # the recall campaign's own column is not repeated beside the assessment's
    assert board["human"] == [] and "judged_recall" in board["columns"]
    top = board["rows"][0]["metrics"]
    assert (top["judged_f1_low"], top["judged_f1"], top["judged_f1_high"]) == \
        (mb["judged_f1_low"], mb["judged_f1"], mb["judged_f1_high"])
