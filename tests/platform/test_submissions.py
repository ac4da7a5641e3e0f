"""Uploads, validation, quotas, primary runs, scoring, blind phases, re-scoring, CSV."""
from __future__ import annotations

import csv
import datetime as dt
import io
import re
from html import unescape

import pytest

from shareval.platform.competitions import access, leaderboard
from shareval.platform.competitions.models import Phase, Quota
from shareval.platform.submissions import queue, service
from shareval.platform.submissions.models import Job, Score, Submission

from .conftest import Upload, run_with_accuracy


def submit(w, user, team, ds, correct=15, name="run.tsv", **kw):
    return service.submit(w["users"][user], w["teams"][team], w["ds"][ds],
                          Upload(name, run_with_accuracy(correct)), **kw)


def test_valid_upload_is_stored_by_uuid_scored_and_timestamped(world):
    sub = submit(world, "alice", "Team A", "dev", 15, name="../../etc/passwd.tsv")
    assert sub.stored_name != "passwd.tsv" and len(sub.stored_name) == 32 + 4
    assert sub.path.parent.name == "uploads" and sub.path.exists()
    assert sub.original_name == "passwd.tsv"
    assert sub.state == Submission.QUEUED
    assert queue.drain() == 1
    sub.refresh_from_db()
    assert sub.state == Submission.SCORED
    states = [e.state for e in sub.events.all()]
    assert states == ["submitted", "validated", "queued", "running", "scored"]
    times = [e.at for e in sub.events.all()]
    assert times == sorted(times)
    score = sub.current_score
    assert score.result["metrics"]["accuracy"] == pytest.approx(15 / 20)


def test_invalid_upload_lists_problems_with_lines_and_is_not_counted(world):
    bad = "item\tlabel\ni00\tpos\ni00\tneg\nzz\tpos\n"
    with pytest.raises(service.SubmissionError) as e:
        service.submit(world["users"]["alice"], world["teams"]["Team A"], world["ds"]["dev"],
                       Upload("mine.tsv", bad))
    assert e.value.status == 400
    text = "\n".join(e.value.problems)
    assert "mine.tsv:3" in text                            # duplicate item, with its line
    assert "uploads" not in text and "private" not in text  # no server paths
    rejected = e.value.submission
    assert rejected.state == Submission.REJECTED and rejected.stored_name == ""
    states = service.quota_states(world["teams"]["Team A"], world["ds"]["dev"])
    assert states[0].used == 0


@pytest.mark.parametrize("name, body, expected", [
    ("mine.json", '{"i00": "pos",\n "i01": "neg"\n "i02": "pos"}',
     ["mine.json:3:2: json: expected ',' or '}'"]),
    ("mine.tsv", "item\tlabel\n" + "".join(f"i{k:02d}\tpos\n" for k in range(5)),
     ["mine.tsv: item: 15 items have no prediction, first: 'i05', 'i06', 'i07'"]),
])
def test_rejected_upload_page_shows_the_root_cause_alone(world, client, name, body, expected):
    """A syntax error is not followed by one "no prediction" per unread item, and
    missing items are one summarized line, on the service and on the page."""
    with pytest.raises(service.SubmissionError) as e:
        service.submit(world["users"]["alice"], world["teams"]["Team A"], world["ds"]["dev"],
                       Upload(name, body))
    assert e.value.problems == expected
    client.force_login(world["users"]["alice"])
    html = client.get(f"/s/{e.value.submission.pk}/").content.decode()
    items = re.findall(r"<li>(.*?)</li>", html.split('id="problems"')[1].split("</ol>")[0])
    assert [unescape(x) for x in items] == expected


def test_quota_counts_cancelled_runs_and_says_when_the_next_slot_opens(world):
    ds = world["ds"]["eval"]               # 5 per phase
    subs = [submit(world, "alice", "Team A", "eval", 10 + k) for k in range(5)]
    service.cancel(subs[0], world["users"]["alice"])
    with pytest.raises(service.SubmissionError) as e:
        submit(world, "alice", "Team A", "eval", 19)
    assert e.value.status == 429 and "no more submissions in this phase" in e.value.message
    # the other team is not affected
    submit(world, "bob", "Team B", "eval", 12)
    q = ds.quotas.get()
    q.window, q.limit = Quota.WEEK, 5
    q.save()
    with pytest.raises(service.SubmissionError) as e:
        submit(world, "alice", "Team A", "eval", 19)
    nxt = e.value.next_slot
    assert nxt.weekday() == 0 and (nxt.hour, nxt.minute) == (0, 0)
    assert str(nxt.tzinfo) == "Europe/Berlin"


def test_rolling_window_next_slot_is_when_the_oldest_run_leaves(world):
    ds = world["ds"]["dev"]
    q = ds.quotas.get()
    q.window, q.limit, q.days = Quota.ROLLING, 2, 1
    q.save()
    now = dt.datetime.now(dt.timezone.utc)
    a = submit(world, "alice", "Team A", "dev", 10, now=now - dt.timedelta(hours=20))
    submit(world, "alice", "Team A", "dev", 11, now=now - dt.timedelta(hours=2))
    with pytest.raises(service.SubmissionError) as e:
        submit(world, "alice", "Team A", "dev", 12, now=now)
    assert abs(e.value.next_slot - (a.created + dt.timedelta(days=1))) < dt.timedelta(seconds=1)
    submit(world, "alice", "Team A", "dev", 12, now=now + dt.timedelta(hours=5))


def test_one_primary_per_team_and_dataset(world):
    a = submit(world, "alice", "Team A", "dev", 10, primary=True)
    b = submit(world, "carol", "Team A", "dev", 12, primary=True)
    a.refresh_from_db()
    assert (a.kind, b.kind) == ("contrastive", "primary")
    service.make_primary(a, world["users"]["alice"])
    b.refresh_from_db()
    assert (a.kind, b.kind) == ("primary", "contrastive")
    assert Submission.objects.filter(team=world["teams"]["Team A"], kind="primary").count() == 1
    from django.db import IntegrityError, transaction
    with pytest.raises(IntegrityError), transaction.atomic():
        Submission.objects.filter(pk=b.pk).update(kind="primary")


def test_leaderboard_order_primary_and_baseline(world):
    submit(world, "alice", "Team A", "dev", 18)
    submit(world, "alice", "Team A", "dev", 12, primary=True)   # primary decides, not best
    submit(world, "bob", "Team B", "dev", 16)
    queue.drain()
    cols, rows = leaderboard.rows(world["ds"]["dev"])
    assert cols[0] == "f1_macro"
    assert [r["team"] for r in rows] == ["Team B", "Team A", "Baseline"]
    assert [r["run"] for r in rows] == ["best", "primary", "primary"]
    assert rows[-1]["baseline"] is True
    assert rows[0]["metrics"]["accuracy"] == pytest.approx(0.8)


def test_blind_phase_hides_scores_until_release_then_top_then_detailed(world, client):
    from shareval.platform.submissions.present import submission_payload
    sub = submit(world, "alice", "Team A", "eval", 17)
    queue.drain()
    alice = world["users"]["alice"]
    sub.refresh_from_db()
    assert access.score_level(alice, sub) == access.NONE
    assert submission_payload(sub, alice)["score"] == {
        "hidden": "scores of this phase are not released yet"}
    assert submission_payload(sub, world["org"])["score"]["metrics"]["accuracy"] == 0.85
    phase = world["ds"]["eval"].phase
    phase.released = Phase.TOP
    phase.save()
    sub = Submission.objects.get(pk=sub.pk)
    p = submission_payload(sub, alice)["score"]
    assert p["metrics"]["accuracy"] == 0.85 and "breakdowns" not in p
    phase.released = Phase.DETAILED
    phase.save()
    sub = Submission.objects.get(pk=sub.pk)
    assert "breakdowns" in submission_payload(sub, alice)["score"]


def test_scheduled_release(world):
    phase = world["ds"]["eval"].phase
    now = dt.datetime.now(dt.timezone.utc)
    phase.release_top_at = now + dt.timedelta(hours=1)
    phase.release_detailed_at = now + dt.timedelta(hours=2)
    assert phase.release_level(now) == Phase.HIDDEN
    assert phase.release_level(now + dt.timedelta(minutes=61)) == Phase.TOP
    assert phase.release_level(now + dt.timedelta(minutes=121)) == Phase.DETAILED


def test_rescore_keeps_history_and_scores_once_per_version(world, monkeypatch):
    sub = submit(world, "alice", "Team A", "dev", 14)
    queue.drain()
    task = world["ds"]["dev"].task
    assert service.rescore(task) == 0                      # nothing changed: nothing queued
    reg = task.registry_task
    monkeypatch.setattr(type(reg), "version", "2-test")
    assert service.rescore(task) == 2                      # this run and the baseline
    assert service.rescore(task) == 0                      # queued once only
    queue.drain()
    scores = list(Score.objects.filter(submission=sub).order_by("created"))
    assert [s.current for s in scores] == [False, True]
    assert scores[1].scorer_version.startswith("classification/2-test")
    with pytest.raises(Exception):
        Score.objects.create(submission=sub, scorer_version=scores[1].scorer_version,
                             reference_digest=scores[1].reference_digest, result={})


def test_csv_export_has_every_score_with_history(world, monkeypatch):
    submit(world, "alice", "Team A", "dev", 14)
    queue.drain()
    monkeypatch.setattr(type(world["ds"]["dev"].task.registry_task), "version", "9")
    service.rescore(world["ds"]["dev"].task)
    queue.drain()
    from shareval.platform.competitions.export import results_csv
    rows = list(csv.DictReader(io.StringIO(results_csv(world["comp"]))))
    mine = [r for r in rows if r["team"] == "Team A"]
    assert len(mine) == 2 and {r["current"] for r in mine} == {"0", "1"}
    assert float(mine[0]["accuracy"]) == pytest.approx(0.7)


def test_failure_shows_participant_message_and_organizer_log(world, monkeypatch):
    sub = submit(world, "alice", "Team A", "dev", 14)
    reg = world["ds"]["dev"].task.registry_task

    def boom(*a, **k):
        raise RuntimeError("secret internal detail")
    monkeypatch.setattr(type(reg), "score", boom)
    queue.drain()
    sub.refresh_from_db()
    assert sub.state == "failed"
    ev = sub.events.last()
    assert "internal scoring error" in ev.message and "secret" not in ev.message
    assert "secret internal detail" in ev.log
    from shareval.platform.submissions.present import submission_payload
    assert "secret" not in str(submission_payload(sub, world["users"]["alice"]))
    assert "secret internal detail" in str(submission_payload(sub, world["org"])["events"])


def test_lease_expiry_requeues_and_token_fences_the_dead_worker(world, settings):
    sub = submit(world, "alice", "Team A", "dev", 14)
    job = queue.claim()
    assert job is not None and job.attempts == 1
    assert queue.claim() is None                          # leased: nobody else gets it
    Job.objects.filter(pk=job.pk).update(lease_until=dt.datetime.now(dt.timezone.utc)
                                         - dt.timedelta(seconds=1))
    assert queue.sweep() == 1
    assert queue.drain() == 1                             # a live worker scores it
    from shareval.platform.submissions.scoring import score_submission
    queue._finish(job, score_submission(sub))            # the "dead" worker comes back
    assert Score.objects.filter(submission=sub).count() == 1
    sub.refresh_from_db()
    assert sub.state == "scored"
    assert "re-queued" in " ".join(e.message for e in sub.events.all())


def test_a_job_taken_over_before_the_sweep_records_the_requeue(world):
    # under load a free worker may claim an expired lease before sweep() re-queues it
    sub = submit(world, "alice", "Team A", "dev", 14)
    job = queue.claim()
    Job.objects.filter(pk=job.pk).update(lease_until=dt.datetime.now(dt.timezone.utc)
                                         - dt.timedelta(seconds=1))
    again = queue.claim()
    assert again.pk == job.pk and again.attempts == 2 and again.token != job.token
    messages = [e.message for e in sub.events.all()]
    assert messages[-1] == "re-queued: the worker stopped responding"
    assert queue.sweep() == 0                             # nothing left to re-queue
    assert queue.claim() is None


def test_phase_closed_and_non_members_are_refused(world):
    with pytest.raises(service.SubmissionError) as e:
        submit(world, "dave", "Team A", "dev", 10)
    assert e.value.status == 403
    phase = world["ds"]["dev"].phase
    phase.end = dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=1)
    phase.save()
    world["ds"]["dev"].refresh_from_db()
    with pytest.raises(service.SubmissionError) as e:
        submit(world, "alice", "Team A", "dev", 10)
    assert e.value.status == 403 and "not open" in e.value.message


def test_upload_size_limit(world, settings):
    settings.MAX_UPLOAD_BYTES = 100
    before = set(settings.UPLOAD_DIR.iterdir())
    with pytest.raises(service.SubmissionError) as e:
        submit(world, "alice", "Team A", "dev", 10)
    assert e.value.status == 413 and "too large" in e.value.message
    assert set(settings.UPLOAD_DIR.iterdir()) == before        # the partial file is gone
    assert not Submission.objects.filter(team=world["teams"]["Team A"]).exists()


def _close(phase, **kw):
    phase.end = dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=1)
    for k, v in kw.items():
        setattr(phase, k, v)
    phase.save()


def test_after_the_phase_closes_a_team_cannot_change_primary_or_cancel(world, client):
    better = submit(world, "alice", "Team A", "dev", 18)
    worse = submit(world, "alice", "Team A", "dev", 11, primary=True)
    queue.drain()
    board = leaderboard.rows(world["ds"]["dev"])[1]
    _close(world["ds"]["dev"].phase)
    for change in (service.make_primary, service.cancel):
        with pytest.raises(service.SubmissionError) as e:
            change(Submission.objects.get(pk=better.pk), world["users"]["alice"])
        assert e.value.status == 403 and "final" in e.value.message
    client.force_login(world["users"]["carol"])           # the API and the page alike
    for action in ("primary", "cancel"):
        r = client.post(f"/api/submissions/{better.pk}/{action}/")
        assert r.status_code == 403 and "final" in r.json()["error"]
        r = client.post(f"/s/{better.pk}/{action}/", follow=True)
        assert "final" in r.content.decode()
    page = client.get(f"/s/{better.pk}/").content.decode()
    assert "runs-final" in page and "make-primary" not in page and "cancel-run" not in page
    assert leaderboard.rows(world["ds"]["dev"])[1] == board
    assert Submission.objects.get(pk=worse.pk).kind == "primary"
    assert Submission.objects.get(pk=better.pk).state == "scored"


def test_after_release_a_blind_phase_is_final_for_teams_even_while_open(world, client):
    runs = [submit(world, "alice", "Team A", "eval", c) for c in (16, 12)]
    queue.drain()
    phase = world["ds"]["eval"].phase
    phase.released = Phase.TOP
    phase.save()
    client.force_login(world["users"]["alice"])
    r = client.post(f"/api/submissions/{runs[0].pk}/primary/")
    assert r.status_code == 403
    r = client.post(f"/api/submissions/{runs[1].pk}/cancel/")
    assert r.status_code == 403
    assert {s.kind for s in Submission.objects.filter(pk__in=[s.pk for s in runs])} == \
        {"contrastive"}
    with pytest.raises(service.SubmissionError) as e:            # no new runs either
        submit(world, "alice", "Team A", "eval", 19, primary=True)
    assert e.value.status == 403 and "final" in e.value.message
    phase.released, phase.release_top_at = Phase.HIDDEN, \
        dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=1)       # scheduled release
    phase.save()
    assert client.post(f"/api/submissions/{runs[0].pk}/primary/").status_code == 403


def test_organizers_change_closed_runs_only_with_a_reason_kept_in_the_history(world, client):
    a = submit(world, "alice", "Team A", "dev", 18)
    b = submit(world, "alice", "Team A", "dev", 11, primary=True)
    queue.drain()
    _close(world["ds"]["dev"].phase)
    client.force_login(world["org"])
    r = client.post(f"/api/submissions/{a.pk}/primary/")
    assert r.status_code == 400 and "reason" in r.json()["error"]
    assert Submission.objects.get(pk=a.pk).kind == "contrastive"
    r = client.post(f"/api/submissions/{a.pk}/primary/",
                    {"reason": "team mailed the flag before the deadline"})
    assert r.status_code == 200 and r.json()["kind"] == "primary"
    made = Submission.objects.get(pk=a.pk).events.last().message
    assert "by organizer org" in made and "mailed the flag" in made
    demoted = Submission.objects.get(pk=b.pk).events.last()
    assert demoted.state == "contrastive" and "mailed the flag" in demoted.message
    rows = leaderboard.rows(world["ds"]["dev"])[1]
    team_a = next(r for r in rows if r["team"] == "Team A")
    assert team_a["run"] == "primary" and team_a["metrics"]["accuracy"] == pytest.approx(0.9)
    r = client.post(f"/s/{b.pk}/cancel/", {"reason": "duplicate upload"}, follow=True)
    assert Submission.objects.get(pk=b.pk).state == "cancelled"
    assert "duplicate upload" in Submission.objects.get(pk=b.pk).events.last().message


def test_open_phase_team_changes_still_work_and_strangers_are_refused(world):
    a = submit(world, "alice", "Team A", "dev", 18)
    service.make_primary(a, world["users"]["carol"])
    assert Submission.objects.get(pk=a.pk).kind == "primary"
    with pytest.raises(service.SubmissionError) as e:
        service.cancel(a, world["users"]["bob"])
    assert e.value.status == 403
    service.cancel(a, world["users"]["alice"])
    a = Submission.objects.get(pk=a.pk)
    assert (a.state, a.kind) == ("cancelled", "contrastive")     # cancelled: not primary
    assert "cancelled" in a.events.last().message
