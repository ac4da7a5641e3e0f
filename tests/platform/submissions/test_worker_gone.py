"""A worker killed in the middle of a run (issue 41's deadline rush): on the same
machine its job goes back to the queue at the next sweep, not a lease later, and
the run is still scored exactly once."""
from __future__ import annotations

import subprocess
import sys

from shareval.platform.submissions import queue
from shareval.platform.submissions.models import Job, Score, Submission

from ..factories import submit


def _ended_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_job_whose_worker_process_ended_is_requeued_before_its_lease_runs_out(world):
    assert queue._HERE, "needs /proc (Linux)"
    sub = submit(world, "alice", "Team A", "dev", 14)
    job = queue.claim()
    assert job.worker == f"{queue._HERE}:{queue.os.getpid()}"
    Job.objects.filter(pk=job.pk).update(worker=f"{queue._HERE}:{_ended_pid()}")
    assert queue.sweep() == 1                    # the lease is 30 s away: not waited for
    j = Job.objects.get(pk=job.pk)
    assert j.status == Job.QUEUED and j.token == ""
    sub.refresh_from_db()
    assert sub.state == Submission.QUEUED
    assert [e.log for e in sub.events.all()][-1].startswith(f"process of {queue._HERE}:")
    assert queue.drain() == 1
    from shareval.platform.submissions.scoring import score_submission
    queue._finish(job, score_submission(sub))   # the old claim's result is fenced off
    assert Score.objects.filter(submission=sub).count() == 1
    assert Job.objects.get(pk=job.pk).attempts == 2
    sub.refresh_from_db()
    assert sub.state == Submission.SCORED
    assert sum(e.state == Submission.SCORED for e in sub.events.all()) == 1


def test_a_live_or_unknown_worker_keeps_its_job_until_the_lease_runs_out(world):
    submit(world, "alice", "Team A", "dev", 14)
    job = queue.claim()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for worker in (f"{queue._HERE}:{alive.pid}",            # running on this machine
                       f"{queue._HERE}:{queue.os.getpid()}",     # this very process
                       f"elsewhere/1-2:{_ended_pid()}",          # another machine: unknown
                       f"{queue._HERE}:not-a-pid"):
            Job.objects.filter(pk=job.pk).update(worker=worker)
            assert queue.sweep() == 0, worker
            assert Job.objects.get(pk=job.pk).status == Job.RUNNING
    finally:
        alive.kill()
        alive.wait()


def test_worker_gone_needs_a_readable_namespace(monkeypatch):
    monkeypatch.setattr(queue, "_HERE", None)
    assert not queue.worker_gone(f"None:{_ended_pid()}")
