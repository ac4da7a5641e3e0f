"""Celery workers (when SHAREVAL_BROKER_URL is set).

Start one with ``shareval server worker`` (which runs
``celery -A shareval.platform.celery_app worker``). The database stays the
queue of record: a task carries only a job id, and each worker also sweeps
expired leases, so a job whose worker died is re-sent even if the broker lost
the message.
"""
from __future__ import annotations

import os
import threading

from celery.signals import worker_ready, worker_shutting_down

from shareval.platform.home import private_umask

private_umask()                  # a worker started by celery itself keeps the data private
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shareval.platform.settings")
import django  # noqa: E402

django.setup()
from django.conf import settings  # noqa: E402

from shareval.platform import broker  # noqa: E402

app = broker.app()
_stop = threading.Event()


@app.task(name=broker.SCORE_JOB)
def score_job(job_id: int) -> bool:
    """A message per queued job; the worker runs the fairest claimable job, which
    may be another team's (the named one is then run by a later message)."""
    from django.db import close_old_connections
    from shareval.platform.submissions.queue import run_job
    try:
        return run_job()
    finally:
        close_old_connections()


@app.task(name=broker.CODE_RUN)
def code_run(run_id: int) -> bool:
    """A message per queued code run (queue CODERUN_QUEUE); the worker runs the
    oldest queued run."""
    from django.db import close_old_connections
    from shareval.platform.coderuns.queue import run_next
    try:
        return run_next()
    finally:
        close_old_connections()


@app.task(name=broker.ASSESS_RUN)
def assess_run(submission_id: str) -> int:
    """A run made primary, or whose team's primary was cancelled: draw it for the
    dataset's automatic assessment campaign (judging/auto.py)."""
    from django.db import close_old_connections
    from shareval.platform.judging.auto import assess_run as draw
    try:
        return draw(submission_id)
    finally:
        close_old_connections()


def _resend_code_runs() -> None:
    """A message for every queued code run (their workers listen on CODERUN_QUEUE)."""
    from shareval.platform.coderuns.models import CodeRun
    for pk in CodeRun.objects.filter(state=CodeRun.QUEUED).values_list("pk", flat=True):
        code_run.apply_async((pk,), queue=settings.CODERUN_QUEUE)


def _sweeper():
    from django.db import close_old_connections
    from shareval.platform.submissions.queue import sweep, Job
    # jobs queued while no worker was up (or whose message was lost) are re-sent too
    first = True
    while not _stop.wait(1 if first else max(1.0, settings.LEASE_SECONDS / 3)):
        try:
            if first:
                for pk in Job.objects.filter(status=Job.QUEUED).values_list("pk", flat=True):
                    score_job.delay(pk)
                _resend_code_runs()
                first = False
            sweep()
            from shareval.platform.coderuns.queue import sweep as sweep_code_runs
            if sweep_code_runs():         # runs whose code worker died: queued again
                _resend_code_runs()
        except Exception:                       # database not reachable yet
            pass
        finally:
            close_old_connections()


@worker_ready.connect
def _start_sweeper(**_):
    from shareval.platform.submissions.queue import start_small_lane
    threading.Thread(target=_sweeper, daemon=True, name="shareval-sweeper").start()
    start_small_lane(poll=1.0)


@worker_shutting_down.connect
def _stop_sweeper(**_):
    _stop.set()
