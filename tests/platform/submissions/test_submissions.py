"""Uploads, validation, quotas, primary runs, scoring, blind phases, re-scoring, CSV."""
from __future__ import annotations

import csv
import datetime as dt
import io
import re
from html import unescape

import pytest

from shareval.platform.access import visibility as access
from shareval.platform.leaderboards import rows as leaderboard
from shareval.platform.competitions.models import Phase, Quota
from shareval.platform.submissions import queue, service
from shareval.platform.submissions.models import Job, Score, Submission

from ..factories import Upload, submit


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
    from shareval.platform.leaderboards.export import results_csv
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


def _with_extra_metrics(monkeypatch, reg, **extra):
    """The task's real scorer, with extra metric values added to its result."""
    real = type(reg).score

    def score(self, *a, **k):
        r = real(self, *a, **k)
        r.metrics.update(extra)
        return r
    monkeypatch.setattr(type(reg), "score", score)


def test_non_finite_metric_values_are_stored_as_strings_and_scored(world, monkeypatch):
    # issue 20.11: MATERIAL's mqwv_threshold is Infinity when nothing is detected
    import json
    import math
    sub = submit(world, "alice", "Team A", "dev", 14)
    _with_extra_metrics(monkeypatch, world["ds"]["dev"].task.registry_task,
                        mqwv_threshold=math.inf, low=-math.inf)
    queue.drain()
    sub.refresh_from_db()
    assert sub.state == "scored", [e.message for e in sub.events.all()]
    metrics = sub.current_score.result["metrics"]
    assert metrics["mqwv_threshold"] == "Infinity" and metrics["low"] == "-Infinity"
    assert metrics["accuracy"] == pytest.approx(0.7)
    from shareval.platform.submissions.present import submission_payload
    shown = submission_payload(sub, world["users"]["alice"])
    json.dumps(shown, allow_nan=False)
    assert shown["score"]["metrics"]["mqwv_threshold"] == "Infinity"     # shown, as text


def test_json_safe_turns_every_non_finite_float_into_a_string():
    import math

    import numpy as np

    from shareval.platform.submissions.scoring import json_safe
    given = {"a": [1.5, math.nan, (np.float64(-math.inf),)], "b": {"c": math.inf, "d": 2},
             "e": None, "f": "x"}
    assert json_safe(given) == {"a": [1.5, "NaN", ["-Infinity"]],
                                "b": {"c": "Infinity", "d": 2}, "e": None, "f": "x"}


def test_a_score_that_cannot_be_stored_fails_at_once_with_the_real_error(world, monkeypatch):
    sub = submit(world, "alice", "Team A", "dev", 14)

    def refuse(*a, **k):
        raise ValueError("Out of range float values are not JSON compliant")
    monkeypatch.setattr(Score.objects, "create", refuse)
    queue.drain()
    sub.refresh_from_db()
    job = Job.objects.get(submission=sub)
    assert sub.state == "failed" and job.status == Job.FAILED and job.attempts == 1
    ev = sub.events.last()
    assert "storing the score" in ev.message
    assert "Out of range float values" in ev.log
    assert not any("stopped responding" in e.message for e in sub.events.all())


# --- issue 20.4: validation in a limited child process -----------------------

def _tgz(members: dict[str, int]) -> bytes:
    """A gzip'd tar whose members are runs of zeros of the given sizes (tiny packed)."""
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, size in members.items():
            info = tarfile.TarInfo(name)
            info.size = size
            tar.addfile(info, io.BytesIO(bytes(size)))
    return buf.getvalue()


def test_an_archive_bomb_is_refused_from_its_headers(world, settings):
    settings.MAX_UNPACKED_MB = 1
    data = _tgz({"query1.tsv": 2 ** 20, "query2.tsv": 2 ** 20})
    assert len(data) < 20_000
    with pytest.raises(service.SubmissionError) as e:
        service.submit(world["users"]["alice"], world["teams"]["Team A"], world["ds"]["dev"],
                       Upload("run.tgz", data))
    assert e.value.status == 400
    assert e.value.problems == ["run.tgz: archive: unpacks to more than 1 MB (the server's "
                                "limit)"]


@pytest.mark.parametrize("knob, value, message", [
    ("VALIDATION_MEMORY_MB", 30, "run.tsv: file: validation needed more than 30 MB of memory"),
    ("VALIDATION_WALL_SECONDS", 0.05, "run.tsv: file: validation did not finish within 0 s"),
    ("VALIDATION_CPU_SECONDS", 1, "run.tsv: file: validation needed more than 1 s of CPU time"),
])
def test_validation_over_its_limits_is_a_clear_rejection(world, settings, knob, value, message):
    setattr(settings, knob, value)
    big = "item\tlabel\n" + "".join(f"x{k:07d}\tpos\n" for k in range(1_000_000))
    before = set(settings.UPLOAD_DIR.iterdir())
    with pytest.raises(service.SubmissionError) as e:
        service.submit(world["users"]["alice"], world["teams"]["Team A"], world["ds"]["dev"],
                       Upload("run.tsv", big))
    assert e.value.status == 400 and e.value.problems[0].startswith(message), e.value.problems
    assert set(settings.UPLOAD_DIR.iterdir()) == before          # not kept


def test_validation_happens_outside_the_web_process(world, monkeypatch):
    # a validator called in this process would raise; the child's does not see the patch
    reg = world["ds"]["dev"].task.registry_task

    def in_process(*a, **k):
        raise AssertionError("validated inside the web process")
    monkeypatch.setattr(type(reg), "validate", in_process)
    sub = submit(world, "alice", "Team A", "dev", 14)
    assert sub.state == Submission.QUEUED


def test_rejected_uploads_are_rate_limited_per_team(world, settings):
    settings.MAX_REJECTED_PER_HOUR = 2
    bad = Upload("bad.tsv", "item\tlabel\nnope\tpos\n")
    users, teams, ds = world["users"], world["teams"], world["ds"]["dev"]
    for _ in range(2):
        with pytest.raises(service.SubmissionError) as e:
            service.submit(users["alice"], teams["Team A"], ds, bad)
        assert e.value.status == 400
    with pytest.raises(service.SubmissionError) as e:           # even a valid file now
        submit(world, "carol", "Team A", "dev", 14)
    assert e.value.status == 429 and "too many rejected uploads" in e.value.message
    assert e.value.next_slot is not None
    assert Submission.objects.filter(team=teams["Team A"]).count() == 2   # nothing stored
    assert submit(world, "bob", "Team B", "dev", 14).state == Submission.QUEUED
    # rejected uploads still do not count against the quota
    states = service.quota_states(teams["Team A"], ds)
    assert all(s.used == 0 for s in states)


# --- issue 20.6: fair scheduling across teams ---------------------------------

def _queued(world, user, team, size):
    sub = submit(world, user, team, "dev", 14)
    Submission.objects.filter(pk=sub.pk).update(size=size)
    return sub


def _done(job):
    Job.objects.filter(pk=job.pk).update(status=Job.DONE, finished=dt.datetime.now(dt.timezone.utc))


def test_a_team_with_many_runs_cannot_starve_another(world, settings):
    settings.SMALL_JOB_BYTES = 0
    big = [_queued(world, "alice", "Team A", 10 ** 8 + k) for k in range(5)]
    first = queue.claim()
    assert first.submission == big[0]
    tiny = _queued(world, "bob", "Team B", 100)             # arrives while A's first runs
    second = queue.claim()
    assert second.submission == tiny                        # A is busy: B goes first
    _done(first)
    _done(second)
    # neither team busy: A was served before B's claim, so A is next ...
    third = queue.claim()
    assert third.submission.team.name == "Team A"
    # ... and within a team the smallest file goes first
    assert third.submission == big[1]
    later = _queued(world, "bob", "Team B", 10 ** 9)
    _done(third)
    assert queue.claim().submission == later               # B was served longer ago


def test_within_a_team_smaller_files_are_scored_first(world, settings):
    settings.SMALL_JOB_BYTES = 0
    large = _queued(world, "alice", "Team A", 10 ** 8)
    small = _queued(world, "alice", "Team A", 10 ** 3)
    assert queue.claim().submission == small
    assert queue.claim().submission == large


def test_the_small_lane_takes_only_small_files(world, settings):
    settings.SMALL_JOB_BYTES = 2 ** 20
    _queued(world, "alice", "Team A", 10 ** 8)
    assert queue.claim(small_only=True) is None
    tiny = _queued(world, "bob", "Team B", 10 ** 3)
    assert queue.claim(small_only=True).submission == tiny


def test_a_bomb_under_the_unpacked_limit_is_refused_by_its_ratio(world, settings, tmp_path):
    # 300 MB of zeros packs to ~0.3 MB: refused at the first header, nothing unpacked
    import tarfile
    path = tmp_path / "bomb.tgz"
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        info = tarfile.TarInfo("query1.tsv")
        info.size = 300 * 2 ** 20
        with open("/dev/zero", "rb") as zeros:
            tar.addfile(info, zeros)
    with pytest.raises(service.SubmissionError) as e:
        service.submit(world["users"]["alice"], world["teams"]["Team A"], world["ds"]["dev"],
                       Upload("bomb.tgz", path.read_bytes()))
    assert e.value.problems == ["bomb.tgz: archive: unpacks to more than 200 times its packed "
                                "size (the server's limit for archives over 256 MB unpacked)"]


def test_a_team_behind_a_pile_of_hundreds_is_still_seen(world, settings):
    settings.SMALL_JOB_BYTES = 0
    a, ds = world["teams"]["Team A"], world["ds"]["dev"]
    version, digest = queue.scorer_key(submit(world, "alice", "Team A", "dev", 14))
    subs = Submission.objects.bulk_create(
        [Submission(team=a, dataset=ds, stored_name=f"x{k}", original_name="r.tsv", size=10 ** 8,
                    state=Submission.QUEUED) for k in range(600)])
    Job.objects.bulk_create([Job(submission=s, scorer_version=version, reference_digest=digest)
                             for s in subs])
    tiny = _queued(world, "bob", "Team B", 100)
    assert queue.claim().submission.team == a               # A's smallest (its first run)
    assert queue.claim().submission == tiny                 # A is busy: B, not A's 601st


def test_a_run_cancelled_while_queued_stays_cancelled_when_its_job_runs(world):
    sub = submit(world, "alice", "Team A", "dev", 15)
    assert sub.state == Submission.QUEUED
    service.cancel(sub, world["users"]["alice"])
    assert queue.drain() == 1
    sub.refresh_from_db()
    assert sub.state == Submission.CANCELLED
    last = list(sub.events.all())[-2:]
    assert [e.state for e in last] == ["running", "scored"]
    assert all(e.message.endswith("stays cancelled") for e in last)
    assert sub.current_score is not None           # scored, kept off the boards
    _, rows = leaderboard.rows(world["ds"]["dev"])
    assert all(r["team"] != "Team A" for r in rows)
