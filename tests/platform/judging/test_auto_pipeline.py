"""Automatic assessment of every run (docs/kbp-assessment.md), at the service level:
a kbp-relations dataset with an automatic question-chain campaign; teams upload,
their items appear for the judges without any organizer form (also the very first
run), simulated judges answer from the gold, and the estimates become the run's
score; a late team reuses judgments; runs still waiting are marked and unranked."""
from __future__ import annotations

import pytest

from shareval.platform.judging import auto, estimates, ondemand, service
from shareval.platform.judging.models import Campaign, Item, LateEvaluation, RunOutput
from shareval.platform.leaderboards.payloads import leaderboard_payload
from shareval.platform.submissions import queue
from shareval.platform.submissions import service as subs
from shareval.platform.submissions.models import Submission

from .auto_world import CHAIN, answer, make_world, run, upload


@pytest.fixture
def kbp(db, tmp_path):
    w = make_world(tmp_path)
    judge = w["users"]["judge"]
    camp = service.create_campaign(w["ds"]["dev"], "Assess every run", Campaign.CHAIN, 1, 30,
                                   CHAIN, [judge])
    return {**w, "camp": camp, "judge": judge}


@pytest.fixture
def scored(django_capture_on_commit_callbacks):
    """``scored()``: score what is queued, running the commit hooks as a worker would."""
    def go():
        with django_capture_on_commit_callbacks(execute=True):
            queue.drain()
    return go


def judge_all(camp, judge, limit: int = 10_000) -> int:
    n = 0
    while n < limit and (a := service.next_assignment(camp, judge)) is not None:
        assert service.submit(a, answer(a.item), seconds=6.0)
        ondemand.advance_all(camp)
        n += 1
    return n


def current(sub):
    sub.refresh_from_db()
    return sub.current_score.result["metrics"]


def test_the_first_run_of_an_empty_campaign_is_drawn_when_scored(kbp, scored):
    camp = kbp["camp"]
    assert not Item.objects.filter(campaign=camp).exists()     # no runs yet: no items
    a = upload(kbp, "Team A", run(4, 1))
    scored()
    out = RunOutput.objects.get(campaign=camp)
    assert out.submission_id == a.pk and out.name == f"Team A · run {str(a.pk)[:8]}"
    ev = out.evaluation
    assert ev.stage == LateEvaluation.PILOT and ev.draws.count() == 12
    assert Item.objects.filter(campaign=camp).count() > 0
    row = estimates.dataset_estimates(kbp["ds"]["dev"])[out.name]
    assert row["status"] == "waiting" and row["judged"] == 0
    assert row["note"] == f"waiting for judgments: 0 of {row['items']} items judged"
    assert a.events.filter(state=auto.EVENT).exists()
    judge_all(camp, kbp["judge"])
    ev.refresh_from_db()
    assert ev.stage == LateEvaluation.DONE
    m = current(a)
    # 4 of 5 mentions per document are true
    assert m["judged_precision_low"] <= 0.8 <= m["judged_precision_high"]
    assert m["judged_recall"] is None and m["judged_f1"] is None      # no recall documents
    # the automatic score stays in the history, not current
    assert a.scores.count() == 2 and a.scores.filter(current=False).first().result[
        "metrics"].get("judged_precision") is None
    assert "no recall documents yet" in a.current_score.result["judged"]["note"]
