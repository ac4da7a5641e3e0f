"""On-demand evaluation in the server: a late submission joins a judged campaign,
reuses the judgments of the items it shares, draws new ones in two stages, and
reaches the target half-width (or stops at its budget); the campaign reports
its cost and the leaderboard the late estimate."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from shareval.platform.competitions.models import Membership, Team
from shareval.platform.judging import build, costs, ondemand, results, service
from shareval.platform.judging.models import Assignment, Campaign, Item, LateEvaluation
from shareval.platform.submissions import queue
from shareval.platform.submissions import service as subs

from ..factories import Upload, gold, run_with_accuracy

CHAIN = {"chains": {"default": [{"id": "correct", "text": "Is {text} right?"}]},
         "gold_every": 0, "hourly_rate": 12.0, "seconds_per_judgment": 5.0}


def truth(item) -> dict:
    item_id, label = item.key.split("|")
    return {"answers": {"correct": "yes" if gold()[item_id] == label else "no"}}


def judge_everything(camp, judges) -> int:
    n = 0
    for j in judges:
        while (a := service.next_assignment(camp, j)) is not None:
            assert service.submit(a, truth(a.item), seconds=6.0)
            n += 1
            ondemand.advance_all(camp)
    return n


@pytest.fixture
def camp(world):
    w = world
    subs.submit(w["users"]["alice"], w["teams"]["Team A"], w["ds"]["dev"],
                Upload("a.tsv", run_with_accuracy(15)))
    subs.submit(w["users"]["bob"], w["teams"]["Team B"], w["ds"]["dev"],
                Upload("b.tsv", run_with_accuracy(8)))
    queue.drain()
    judges = [get_user_model().objects.create_user(f"judge{i}", password="x-pass-123")
              for i in range(2)]
    c = Campaign.objects.create(dataset=w["ds"]["dev"], slug="od", title="On demand",
                                design=Campaign.CHAIN, judges_per_item=1, config=CHAIN)
    c.judges.set(judges)
    build.build_from_runs(c, n=5, seed=2)
    judge_everything(c, judges)
    return {**w, "camp": c, "judges": judges}


def late_run(w, correct: int, name: str = "Team D"):
    team = Team.objects.create(competition=w["comp"], name=name, lead=w["users"]["dave"])
    Membership.objects.create(team=team, user=w["users"]["dave"], status=Membership.APPROVED)
    s = subs.submit(w["users"]["dave"], team, w["ds"]["dev"],
                    Upload("d.tsv", run_with_accuracy(correct)))
    queue.drain()
    s.refresh_from_db()
    return s


def test_a_late_submission_reuses_judgments_and_reaches_the_half_width(camp):
    c = camp["camp"]
    before = set(Item.objects.filter(campaign=c).values_list("key", flat=True))
    assert "Team D" not in results.team_results(c)
    ev = ondemand.add_late(c, late_run(camp, 12), half_width=0.05, pilot=30, seed=4)
    assert ev.draws.filter(stage="pilot").count() == 30
    reused = ev.draws.filter(reused=True)
    # every pilot draw of an item the campaign held is reused, never re-judged
    assert reused.exists() and all(d.item.key in before for d in reused)
    assert "Team D" not in results.team_results(c)          # not before it is reached
    new = judge_everything(c, camp["judges"])
    ev.refresh_from_db()
    assert ev.stage == "done" and ev.outcome == "reached", (ev.outcome, ev.low, ev.high)
    assert (ev.high - ev.low) / 2 <= 0.05
    assert ev.planned >= 30 and ev.draws.filter(stage="main").count() == ev.planned
    # the new judgments are only the items nobody had judged
    od_items = Item.objects.filter(campaign=c, drawn_for="ondemand")
    assert new == od_items.count() > 0
    assert {i.key for i in od_items}.isdisjoint(before)
    row = results.team_results(c)["Team D"]
    assert row["low"] <= 0.6 <= row["high"] and row["ondemand"] == "reached"
    cost = costs.campaign_costs(c)
    d = next(r for r in cost["rows"] if r["name"] == "Team D")
    assert d["judgments"] == new and d["reused_judgments"] == d["reused_items"] > 0
    assert d["money"] == pytest.approx(new * 6.0 / 3600 * 12.0)
    assert cost["saved"] == pytest.approx(d["reused_judgments"] * 6.0 / 3600 * 12.0)
    # the other teams' design estimates never count the late items
    recs = results.judgment_records(c)
    assert not {r.item for r in recs} & {i.key for i in od_items}


def test_a_budget_stops_new_items(camp):
    c = camp["camp"]
    # one judgment costs 6 s at 12/h = 0.02; a budget of 0.05 pays for two new items
    ev = ondemand.add_late(c, late_run(camp, 12), half_width=0.01, budget=0.05, pilot=30,
                           seed=1)
    judge_everything(c, camp["judges"])
    ev.refresh_from_db()
    assert ev.stage == "done" and ev.outcome == "budget"
    assert Item.objects.filter(campaign=c, drawn_for="ondemand").count() <= 2


def test_late_submissions_are_refused_where_they_cannot_be_estimated(camp, world):
    c = camp["camp"]
    s = late_run(camp, 10)
    ondemand.add_late(c, s, pilot=10)
    with pytest.raises(ondemand.LateError, match="already evaluated"):
        ondemand.add_late(c, s)
    side = Campaign.objects.create(dataset=c.dataset, slug="side", title="S",
                                   design=Campaign.SIDE_BY_SIDE)
    with pytest.raises(ondemand.LateError, match="precision"):
        ondemand.add_late(side, s)
    assert LateEvaluation.objects.count() == 1


def test_the_campaign_page_adds_a_late_submission_and_shows_costs(camp, client):
    c, w = camp["camp"], camp
    s = late_run(w, 12)
    client.force_login(w["org"])
    url = f"/c/{w['comp'].slug}/organize/campaigns/{c.pk}/"
    r = client.post(url + "late/", {"submission": s.pk, "half_width": "0.05", "pilot": "20",
                                    "budget": ""})
    assert r.status_code == 302
    assert LateEvaluation.objects.filter(campaign=c, output__name="Team D").exists()
    judge_everything(c, camp["judges"])
    html = client.get(url).content.decode()
    assert "Team D" in html and 'id="costs"' in html and "reached" in html
    assert Assignment.objects.filter(item__campaign=c, status="done").exists()


class _Undo(Exception):
    pass


def test_late_estimates_keep_their_coverage(camp):
    """40 late evaluations (seeds 0-39), each rolled back: the 95% intervals hold the
    true precision (12 of 20 lines right: 0.6) about as often as they should
    (bench/judging_ondemand.py runs 200 on the demo data)."""
    from django.db import transaction
    from django.utils import timezone
    c, judge = camp["camp"], camp["judges"][0]
    s = late_run(camp, 12)
    hits = []
    for seed in range(40):
        try:
            with transaction.atomic():
                ev = ondemand.add_late(c, s, half_width=0.1, pilot=20, seed=seed)
                while ev.stage != "done":
                    now = timezone.now()
                    todo = Item.objects.filter(campaign=c).exclude(assignments__status="done")
                    Assignment.objects.bulk_create([Assignment(
                        item=i, judge=judge, status="done", deadline=now, done=now,
                        answer={**truth(i), "correct": truth(i)["answers"]["correct"] == "yes"})
                        for i in todo])
                    ondemand.advance_all(c)
                    ev.refresh_from_db()
                hits.append(ev.low <= 0.6 <= ev.high)
                raise _Undo
        except _Undo:
            pass
    assert len(hits) == 40 and sum(hits) >= 34, sum(hits)
