"""Automatic assessment of every run (docs/kbp-assessment.md), at the service level:
a kbp-relations dataset with an automatic question-chain campaign; teams upload,
their items appear for the judges without any organizer form (also the very first
run), simulated judges answer from the gold, and the estimates become the run's
score; a late team reuses judgments; runs still waiting are marked and unranked."""
from __future__ import annotations

import pytest
from django.core.cache import caches

from shareval.platform.judging import auto, estimates, ondemand, service
from shareval.platform.judging.models import Campaign, Item, LateEvaluation, RunOutput
from shareval.platform.leaderboards.html import page_rows
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
    # ranked by judged F1, a run without recall yet is marked and has no rank
    row = leaderboard_payload(kbp["ds"]["dev"], kbp["org"])["rows"][0]
    assert row["rank"] is None and row["note"] == "no recall documents yet"


def test_a_run_is_drawn_with_the_documented_defaults(kbp, scored):
    """half_width 0.05, pilot 50, no budget when the campaign's settings leave them out."""
    camp = kbp["camp"]
    camp.config = {k: v for k, v in camp.config.items()
                   if k not in ("half_width", "pilot", "budget")}
    camp.save()
    upload(kbp, "Team A", run(4, 1))
    scored()
    ev = RunOutput.objects.get(campaign=camp).evaluation
    assert (ev.half_width, ev.pilot, ev.budget) == (0.05, 50, None)


def test_a_precision_over_1_is_clipped_in_the_estimates_not_in_the_evaluation(kbp, scored):
    """Importance sampling can overshoot 1 in a finite sample; the campaign page keeps
    the raw value, the run's estimates are clipped to [0, 1]."""
    upload(kbp, "Team A", run(4, 1))
    scored()
    judge_all(kbp["camp"], kbp["judge"])
    out = RunOutput.objects.get(campaign=kbp["camp"])
    LateEvaluation.objects.filter(pk=out.evaluation.pk).update(estimate=1.04, low=0.97,
                                                               high=1.11)
    caches["boards"].clear()
    row = estimates.dataset_estimates(kbp["ds"]["dev"])[out.name]
    assert (row["precision"], row["precision_low"], row["precision_high"]) == (1.0, 0.97, 1.0)
    assert LateEvaluation.objects.get(pk=out.evaluation.pk).estimate == 1.04


def fake_recall(monkeypatch, table: dict[str, float]):
    """Recall per team (by output name prefix) as judging/recall.py would give it."""
    def recall(dataset, outputs):
        out = {}
        for name in outputs:
            r = next(v for t, v in table.items() if name.startswith(t))
            out[name] = {"recall": r, "recall_low": r - 0.1, "recall_high": r + 0.05,
                         "found": 0, "true": 0, "documents": 4}
        return out, 0
    monkeypatch.setattr(estimates, "_recall", recall)
    caches["boards"].clear()          # the rows are cached by what the database holds


def test_two_teams_ranked_by_judged_f1_with_intervals(kbp, scored, monkeypatch):
    fake_recall(monkeypatch, {"Team A": 0.9, "Team B": 0.5})
    a = upload(kbp, "Team A", run(4, 1))
    b = upload(kbp, "Team B", run(2, 2))
    scored()
    assert RunOutput.objects.filter(campaign=kbp["camp"]).count() == 2
    judge_all(kbp["camp"], kbp["judge"])
    ma, mb = current(a), current(b)
    for m in (ma, mb):
        assert m["judged_f1_low"] <= m["judged_f1"] <= m["judged_f1_high"]
        assert 0 <= m["judged_f1_low"] and m["judged_f1_high"] <= 1
        assert m["judged_recall"] in (0.9, 0.5)
    assert a.current_score.primary == ma["judged_f1"]          # the dataset's metric
    board = leaderboard_payload(kbp["ds"]["dev"], kbp["org"])
    rows = {r["team"]: r for r in board["rows"]}
    assert board["primary_metric"] == "judged_f1"
    assert (rows["Team A"]["rank"], rows["Team B"]["rank"]) == (1, 2)
    assert board["rows"][0]["team"] == "Team A"
    # intervals: in the judged metrics' cells, not columns of their own, and no
    # second copy of the estimates as judged columns
    assert "judged_f1_low" not in board["columns"] and "judged_f1" in board["columns"]
    assert board["human"] == []
    cells = dict(zip(board["columns"], page_rows(board)[0]["values"]))
    assert cells["judged_f1"][1] == f"{ma['judged_f1']:.4f} [{ma['judged_f1_low']:.3f}, " \
                                    f"{ma['judged_f1_high']:.3f}]"
    assert "note" not in rows["Team A"]


def test_runs_still_waiting_are_marked_and_never_ranked_above_estimates(kbp, scored,
                                                                        monkeypatch):
    fake_recall(monkeypatch, {"Team A": 0.9, "Team B": 0.9})
    upload(kbp, "Team A", run(2, 2))
    scored()
    judge_all(kbp["camp"], kbp["judge"])
    b = upload(kbp, "Team B", run(4, 0))            # better, but not judged yet
    scored()
    row = estimates.by_run(kbp["ds"]["dev"])[str(b.pk)]
    board = leaderboard_payload(kbp["ds"]["dev"], kbp["org"])
    rows = {r["team"]: r for r in board["rows"]}
    assert rows["Team A"]["rank"] == 1 and rows["Team B"]["rank"] is None
    assert [r["team"] for r in board["rows"]] == ["Team A", "Team B"]
    # items Team A's run shares are judged already (reused), the others wait
    assert 0 < row["judged"] < row["items"]
    assert rows["Team B"]["note"] == row["note"] == \
        f"waiting for judgments: {row['judged']} of {row['items']} items judged"
    assert rows["Team B"]["metrics"]["judged_f1"] is None          # no estimate yet
    before = row["judged"]
    judge_all(kbp["camp"], kbp["judge"], limit=1)
    assert estimates.by_run(kbp["ds"]["dev"])[str(b.pk)]["judged"] == before + 1


def test_a_late_team_reuses_judgments_and_its_cost_shows(kbp, scored, client):
    upload(kbp, "Team A", run(4, 1))
    upload(kbp, "Team B", run(2, 2))
    scored()
    judge_all(kbp["camp"], kbp["judge"])
    before = set(Item.objects.filter(campaign=kbp["camp"]).values_list("key", flat=True))
    c = upload(kbp, "Team C", run(3, 1))
    scored()
    ev = RunOutput.objects.get(submission=c).evaluation
    assert ev.draws.filter(reused=True).exists()
    new = judge_all(kbp["camp"], kbp["judge"])
    ev.refresh_from_db()
    assert ev.stage == LateEvaluation.DONE
    drawn = set(ev.draws.values_list("item__key", flat=True))
    assert new < len(drawn)                              # reuse: fewer judgments than items
    assert new == len(drawn - before)
    row = estimates.by_run(kbp["ds"]["dev"])[str(c.pk)]
    cost = row["cost"]
    assert cost["new_judgments"] == new == cost["new_items"]
    assert cost["reused_items"] == len(drawn & before) > 0
    assert cost["money"] == pytest.approx(new * 6.0 / 3600 * 12.0)
    client.force_login(kbp["users"]["dave"])
    html = client.get(f"/s/{c.pk}/").content.decode()
    assert 'id="assessment-cost"' in html and 'id="assessment-estimates"' in html
    assert f"<td class=\"num\">{new}</td>" in html
    api = client.get(f"/api/submissions/{c.pk}/").json()
    assert api["assessment"]["cost"]["new_judgments"] == new
    assert api["assessment"]["status"] == "estimated"
    listed = client.get("/api/submissions/").json()
    listed = listed.get("results", listed) if isinstance(listed, dict) else listed
    assert listed and all("assessment" not in r for r in listed)      # lists leave it out
    # another team never sees the run, its cost or its estimate
    client.force_login(kbp["users"]["alice"])
    assert client.get(f"/s/{c.pk}/").status_code == 404
    assert client.get(f"/api/submissions/{c.pk}/").status_code == 404


def test_a_blind_phase_hides_the_assessment_from_the_team(kbp, scored, client):
    ds = kbp["ds"]["eval"]
    camp = service.create_campaign(ds, "Assess eval", Campaign.CHAIN, 1, 30, CHAIN,
                                   [kbp["judge"]])
    a = upload(kbp, "Team A", run(4, 1), ds="eval")
    scored()
    judge_all(camp, kbp["judge"])
    assert "judged_precision" in current(a)
    client.force_login(kbp["users"]["alice"])
    html = client.get(f"/s/{a.pk}/").content.decode()
    assert 'id="assessment-hidden"' in html and 'id="assessment-cost"' not in html
    assert "judged_precision" not in html
    api = client.get(f"/api/submissions/{a.pk}/").json()
    assert set(api["assessment"]) == {"hidden"}
    board = leaderboard_payload(ds, kbp["users"]["alice"])
    assert board["human"] == [] and all("note" not in r for r in board["rows"])
    client.force_login(kbp["org"])
    assert 'id="assessment-estimates"' in client.get(f"/s/{a.pk}/").content.decode()


def test_failed_and_cancelled_runs_draw_nothing(kbp, scored, monkeypatch):
    from shareval.platform.submissions import scoring
    bad = upload(kbp, "Team A", run(4, 1))
    gone = upload(kbp, "Team B", run(2, 2))
    real = scoring.score_submission

    def failing(sub, *args, **kw):
        if sub.pk == bad.pk:
            raise RuntimeError("the scorer broke")
        subs.cancel(gone, kbp["users"]["bob"])        # cancelled while being scored
        return real(sub, *args, **kw)
    monkeypatch.setattr(scoring, "score_submission", failing)
    scored()
    bad.refresh_from_db(), gone.refresh_from_db()
    assert (bad.state, gone.state) == (Submission.FAILED, Submission.CANCELLED)
    assert gone.events.filter(state="scored", message__contains="stays cancelled").exists()
    assert not RunOutput.objects.exists() and not Item.objects.exists()
    assert auto.sweep() == {}                                # nothing missed either


def test_a_second_run_of_a_team_is_a_new_output(kbp, scored):
    first = upload(kbp, "Team A", run(2, 2))
    scored()
    judge_all(kbp["camp"], kbp["judge"])
    second = upload(kbp, "Team A", run(4, 1))
    scored()
    outs = {o.submission_id: o for o in RunOutput.objects.filter(campaign=kbp["camp"])}
    assert set(outs) == {first.pk, second.pk}
    assert outs[first.pk].name != outs[second.pk].name
    assert outs[first.pk].evaluation.stage == LateEvaluation.DONE
    assert outs[second.pk].evaluation.stage == LateEvaluation.PILOT
    assert "judged_precision" in current(first)
    rows = estimates.by_run(kbp["ds"]["dev"])
    assert rows[str(first.pk)]["status"] == "estimated"
    assert rows[str(second.pk)]["status"] == "waiting"
    assert rows[str(first.pk)]["team"] == rows[str(second.pk)]["team"] == "Team A"


def test_a_run_made_primary_is_drawn_then(kbp, scored, monkeypatch,
                                          django_capture_on_commit_callbacks):
    monkeypatch.setattr(auto, "INLINE", True)
    primary = upload(kbp, "Team A", run(2, 2), primary=True)
    other = upload(kbp, "Team A", run(4, 1), primary=False)
    scored()
    # the team's leaderboard run is its primary: the other run is not drawn
    assert list(RunOutput.objects.values_list("submission_id", flat=True)) == [primary.pk]
    with django_capture_on_commit_callbacks(execute=True):
        subs.make_primary(other, kbp["users"]["alice"])
    assert set(RunOutput.objects.values_list("submission_id", flat=True)) == \
        {primary.pk, other.pk}


def test_a_rescored_run_gets_its_estimates_back(kbp, scored):
    from shareval.platform.submissions import runs
    a = upload(kbp, "Team A", run(4, 1))
    scored()
    judge_all(kbp["camp"], kbp["judge"])
    judged = current(a)["judged_precision"]
    runs.rescore(a, kbp["org"])
    scored()
    assert current(a)["judged_precision"] == judged
    assert a.current_score.reference_digest.startswith(a.scoring_digest + auto.SUFFIX)


def test_new_recall_updates_the_stored_scores_and_keeps_the_history(kbp, scored,
                                                                    monkeypatch):
    a = upload(kbp, "Team A", run(4, 1))
    scored()
    judge_all(kbp["camp"], kbp["judge"])
    assert current(a)["judged_f1"] is None
    fake_recall(monkeypatch, {"Team A": 0.7})
    assert auto.sweep() == {"runs_drawn_for_assessment": 0, "assessments_stored": 1}
    m = current(a)
    assert m["judged_recall"] == 0.7 and m["judged_f1"] is not None
    assert a.scores.count() == 3                  # automatic, precision only, with recall
    assert auto.sweep() == {}                     # nothing changed: nothing stored


def test_automatic_campaign_settings_are_checked(kbp):
    ds = kbp["ds"]["dev"]
    with pytest.raises(ValueError, match="already assessed by campaign 'Assess every run'"):
        service.create_campaign(ds, "Again", Campaign.CHAIN, 1, 30, CHAIN, [])
    problems = auto.check_config(kbp["ds"]["eval"], Campaign.SIDE_BY_SIDE,
                                 {"auto": True, "half_width": 0.7, "pilot": 1, "budget": -2})
    assert [p.split(":")[0] for p in problems] == ["auto", "half_width", "pilot", "budget"]
    assert auto.check_config(ds, Campaign.CHAIN, {"auto": "yes"}) == \
        ["auto: true or false, found 'yes'"]
    assert auto.check_config(ds, Campaign.CHAIN, {"auto": False}) == []


def test_an_assessed_only_competition_ranks_by_the_estimates(db, tmp_path, scored,
                                                              monkeypatch, client):
    """Documents without relation labels: the automatic metrics are None, the board
    ranks by the judged F1 alone."""
    w = make_world(tmp_path, labels=False)
    camp = service.create_campaign(w["ds"]["dev"], "Assess", Campaign.CHAIN, 1, 30, CHAIN,
                                   [w["users"]["judge"]])
    fake_recall(monkeypatch, {"Team A": 0.6, "Team B": 0.8})
    a = upload(w, "Team A", run(4, 1))
    b = upload(w, "Team B", run(4, 0))
    scored()
    auto_metrics = a.scores.get(current=True).result["metrics"]
    assert auto_metrics["entity_f1"] is None and auto_metrics["mention_precision"] is None
    judge_all(camp, w["users"]["judge"])
    board = leaderboard_payload(w["ds"]["dev"], w["org"])
    assert [r["team"] for r in board["rows"]] == ["Team B", "Team A"]
    assert [r["rank"] for r in board["rows"]] == [1, 2]
    # no automatic metric pretends: none of them is a column
    assert board["columns"] == ["judged_f1", "judged_precision", "judged_recall"]
    client.force_login(w["users"]["alice"])
    page = client.get(f"/c/{w['comp'].slug}/leaderboard/dev/dev/")
    html = page.content.decode()
    assert page.status_code == 200 and "F1 (judged)" in html
    # each judged value with its interval, in its own cell
    f1 = current(b)
    assert f"{f1['judged_f1']:.4f} [{f1['judged_f1_low']:.3f}, {f1['judged_f1_high']:.3f}]" \
        in html
    assert current(a)["judged_f1"] < current(b)["judged_f1"]


def test_cancelling_the_primary_run_draws_the_team_s_latest(kbp, scored, monkeypatch,
                                                            django_capture_on_commit_callbacks):
    monkeypatch.setattr(auto, "INLINE", True)
    other = upload(kbp, "Team A", run(4, 1), primary=False)
    primary = upload(kbp, "Team A", run(2, 2), primary=True)
    scored()
    assert list(RunOutput.objects.values_list("submission_id", flat=True)) == [primary.pk]
    with django_capture_on_commit_callbacks(execute=True):
        subs.cancel(primary, kbp["users"]["alice"])
    assert set(RunOutput.objects.values_list("submission_id", flat=True)) == \
        {primary.pk, other.pk}


def test_creating_the_campaign_draws_the_runs_scored_before(db, tmp_path, scored):
    w = make_world(tmp_path)
    a = upload(w, "Team A", run(4, 1))
    scored()
    camp = service.create_campaign(w["ds"]["dev"], "Late start", Campaign.CHAIN, 1, 30, CHAIN,
                                   [w["users"]["judge"]])
    assert RunOutput.objects.get(campaign=camp).submission_id == a.pk
    assert camp.items.exists()


def test_a_run_with_nothing_to_judge_is_noted_not_drawn(kbp, scored):
    from .auto_world import HEADER
    a = upload(kbp, "Team A", HEADER)
    scored()
    a.refresh_from_db()
    assert a.state == Submission.SCORED
    out = RunOutput.objects.get(submission=a)
    assert out.keys == [] and not LateEvaluation.objects.exists()
    assert a.events.filter(state=auto.EVENT, message__startswith="not assessed: ").count() == 1
    row = estimates.by_run(kbp["ds"]["dev"])[str(a.pk)]
    assert row["status"] == "not assessed"
    auto.sweep()                                   # noted once, not at every sweep
    assert a.events.filter(state=auto.EVENT).count() == 1


def test_the_periodic_sweep_draws_what_a_worker_missed(kbp):
    from shareval.platform.competitions.reminders import send_due
    a = upload(kbp, "Team A", run(4, 1))
    queue.drain()                     # the commit hooks never ran: a worker that stopped
    assert not RunOutput.objects.exists()
    out = send_due()
    assert out["runs_drawn_for_assessment"] == 1
    assert RunOutput.objects.get().submission_id == a.pk


def test_requests_hand_the_drawing_to_celery_when_a_broker_is_set(kbp, settings,
                                                                  monkeypatch):
    from shareval.platform import broker
    sent = []
    monkeypatch.setattr(broker, "send", lambda name, *args, **kw: sent.append((name, args)))
    settings.BROKER_URL = "memory://"
    auto.dispatch("some-run")
    assert sent == [(broker.ASSESS_RUN, ("some-run",))]


def test_an_items_file_is_refused_for_an_automatic_campaign(kbp):
    from .auto_world import Upload
    with pytest.raises(ValueError, match="draws its items from the runs"):
        service.create_campaign(kbp["ds"]["eval"], "File", Campaign.CHAIN, 1, 30, CHAIN, [],
                                upload=Upload("items.jsonl", "{}"))
