"""Concurrency: the team lock taken for quota checks must not deadlock with a
worker storing a score (PostgreSQL checks foreign keys at commit, taking a
KEY SHARE lock on the team row), and transactions PostgreSQL aborts as deadlock
victims are run again instead of failing a run or answering 500."""
from __future__ import annotations

import threading

import pytest
from django.db import OperationalError, connection, transaction

from shareval.platform import transient
from shareval.platform.competitions import board_cache
from shareval.platform.submissions import queue, service
from shareval.platform.submissions.models import Submission

from .conftest import Upload, make_world, run_with_accuracy


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


@pytest.fixture
def live_world(transactional_db, tmp_path):
    return make_world(tmp_path)


def test_the_quota_lock_does_not_block_a_commit_that_names_the_team(live_world):
    """What the worker does when it stores a score (a board mark and rows naming the
    team) must commit while an upload holds the team's lock. Under FOR UPDATE the
    commit's foreign-key check waited for the upload, which waited for the mark:
    a deadlock (seen as HTTP 500s among 50 concurrent uploads)."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks exist in PostgreSQL mode only (SQLite takes the database's "
                    "write lock for each transaction)")
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
