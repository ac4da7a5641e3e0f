"""Concurrency: the team lock taken for quota checks must not deadlock with a
worker storing a score (PostgreSQL checks foreign keys at commit, taking a
KEY SHARE lock on the team row), and transactions PostgreSQL aborts as deadlock
victims are run again instead of failing a run or answering 500."""
from __future__ import annotations

import threading

import pytest
from django.db import OperationalError, connection, transaction

from shareval.platform import transient
from shareval.platform.leaderboards import cache as board_cache
from shareval.platform.competitions.models import Team
from shareval.platform.submissions import isolate, queue, service
from shareval.platform.submissions.models import Submission

from ..factories import Upload, make_world, run_with_accuracy
from ..rules_world import H, T0, build, run

pg_only = pytest.mark.skipif(connection.vendor != "postgresql",
                             reason="row locks exist in PostgreSQL mode only (SQLite takes "
                                    "the database's write lock for each transaction)")


class FakeCause(Exception):
    def __init__(self, sqlstate):
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


def aborted(sqlstate: str) -> OperationalError:
    e = OperationalError(f"aborted {sqlstate}")
    e.__cause__ = FakeCause(sqlstate)
    return e


@pytest.mark.parametrize("sqlstate", ["40P01", "40001"])
def test_deadlock_victims_and_serialization_failures_are_run_again(sqlstate, monkeypatch):
    monkeypatch.setattr(transient.time, "sleep", lambda s: None)
    calls = []

    def fn():
        calls.append(1)
        if len(calls) < 3:
            raise aborted(sqlstate)
        return "done"
    assert transient.retry(fn) == "done" and len(calls) == 3


def test_other_database_errors_and_the_last_attempt_pass_through(monkeypatch):
    monkeypatch.setattr(transient.time, "sleep", lambda s: None)
    calls = []

    def lost_connection():
        calls.append(1)
        raise aborted("08006")
    with pytest.raises(OperationalError):
        transient.retry(lost_connection)
    assert len(calls) == 1                 # not transient: no second attempt
    calls.clear()

    def always():
        calls.append(1)
        raise aborted("40P01")
    with pytest.raises(OperationalError):
        transient.retry(always, attempts=3)
    assert len(calls) == 3


def test_a_score_whose_storing_was_a_deadlock_victim_is_stored_on_the_next_try(
        world, monkeypatch):
    monkeypatch.setattr(transient.time, "sleep", lambda s: None)
    sub = service.submit(world["users"]["alice"], world["teams"]["Team A"], world["ds"]["dev"],
                         Upload("run.tsv", run_with_accuracy(15)))
    real, tries = queue._finish, []

    def finish_once_aborted(job, outcome):
        tries.append(1)
        if len(tries) == 1:
            raise aborted("40P01")
        return real(job, outcome)
    monkeypatch.setattr(queue, "_finish", finish_once_aborted)
    assert queue.drain() == 1
    sub.refresh_from_db()
    assert sub.state == Submission.SCORED and len(tries) == 2
    assert sub.current_score.result["metrics"]["accuracy"] == pytest.approx(15 / 20)


def test_an_upload_whose_insert_was_a_deadlock_victim_is_stored_on_the_next_try(
        db, monkeypatch):
    """The quota check and the insert run again when PostgreSQL aborted them as a deadlock
    victim (any mode: the abort is raised by hand): one run stored, counted once."""
    monkeypatch.setattr(transient.time, "sleep", lambda s: None)
    monkeypatch.setattr(service.isolate, "validate", lambda *a, **kw: isolate.Verdict())
    w = build()
    real, tries = service.lock_team, []

    def lock_once_aborted(team_id):
        tries.append(team_id)
        real(team_id)
        if len(tries) == 1:
            raise aborted("40P01")
    monkeypatch.setattr(service, "lock_team", lock_once_aborted)
    team = w["teams"]["Team A"]
    sub = service.submit(w["users"]["alice"], team, w["ds"]["dev"], Upload("r.tsv", "x"),
                         now=T0)
    assert tries == [team.pk, team.pk] and sub.state == Submission.QUEUED
    assert list(Submission.objects.filter(team=team)) == [sub]
    assert [e.state for e in sub.events.all()] == ["submitted", "validated", "queued"]
    (st,) = service.quota_states(team, w["ds"]["dev"], T0)
    assert st.used == 1


@pytest.fixture
def live_world(transactional_db, tmp_path):
    return make_world(tmp_path)


@pg_only
def test_the_quota_lock_does_not_block_a_commit_that_names_the_team(live_world):
    """What the worker does when it stores a score (a board mark and rows naming the
    team) must commit while an upload holds the team's lock. Under FOR UPDATE the
    commit's foreign-key check waited for the upload, which waited for the mark:
    a deadlock (seen as HTTP 500s among 50 concurrent uploads)."""
    w = live_world
    team, ds, alice = w["teams"]["Team A"], w["ds"]["dev"], w["users"]["alice"]
    outcome = []

    def worker_like():
        try:
            with transaction.atomic():
                with connection.cursor() as c:
                    c.execute("SET LOCAL lock_timeout = '4s'")
                board_cache.mark([(ds.pk, team.pk)])
                Submission.objects.create(team=team, dataset=ds, user=alice, stored_name="",
                                          original_name="x.tsv", size=0,
                                          state=Submission.REJECTED)
            outcome.append("committed")
        except Exception as e:                               # noqa: BLE001
            outcome.append(repr(e))
        finally:
            connection.close()

    with transaction.atomic():
        service.lock_team(team.pk)
        t = threading.Thread(target=worker_like)
        t.start()
        t.join(20)
        assert outcome == ["committed"], outcome
        board_cache.mark([(ds.pk, team.pk)])               # the upload's own mark


@pg_only
def test_an_upload_and_a_primary_change_wait_for_the_teams_lock(transactional_db, monkeypatch):
    """The quota check and the insert, and a primary flag change, run under the team's
    row lock (docs/platform.md): while another transaction holds it they wait (here
    until a 1 s lock timeout ends them, storing nothing); another team's upload does
    not wait, and once the lock is released the team's upload goes through."""
    w = build()
    monkeypatch.setattr(service.isolate, "validate", lambda *a, **kw: isolate.Verdict())
    team, ds, alice = w["teams"]["Team A"], w["ds"]["dev"], w["users"]["alice"]
    earlier = run(w, "Team A", "dev", T0 - H, state=Submission.SCORED)
    held, release = threading.Event(), threading.Event()

    def holder():
        try:
            with transaction.atomic():
                with connection.cursor() as c:
                    c.execute(f'SELECT id FROM "{Team._meta.db_table}" WHERE id = %s '
                              f"FOR NO KEY UPDATE", [team.pk])
                held.set()
                release.wait(30)
        finally:
            connection.close()

    t = threading.Thread(target=holder)
    t.start()
    try:
        assert held.wait(20)
        with connection.cursor() as c:
            c.execute("SET lock_timeout = '1s'")
        for change in (lambda: service.submit(alice, team, ds, Upload("r.tsv", "x"), now=T0),
                       lambda: service.make_primary(earlier, alice, now=T0)):
            with pytest.raises(OperationalError) as e:
                change()
            assert e.value.__cause__.sqlstate == "55P03"          # lock_not_available
        assert Submission.objects.filter(team=team).count() == 1
        earlier.refresh_from_db()
        assert earlier.kind == Submission.CONTRASTIVE
        other = service.submit(w["users"]["bob"], w["teams"]["Team B"], ds,
                               Upload("r.tsv", "x"), now=T0)
        assert other.state == Submission.QUEUED
    finally:
        release.set()
        t.join(20)
        with connection.cursor() as c:
            c.execute("RESET lock_timeout")
    assert service.submit(alice, team, ds, Upload("r.tsv", "x"), now=T0).state == \
        Submission.QUEUED
