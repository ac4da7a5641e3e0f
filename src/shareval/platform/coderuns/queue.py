"""The code-run queue: its own workers, so long model runs never delay scoring.

The CodeRun rows are the queue of record. A worker claims the oldest queued
run with one conditional UPDATE (so two workers never take the same run) and
holds a lease long enough for the run's wall-time limit plus the environment
build; a run whose lease expired (its worker died) is queued again by
:func:`sweep`. In the PostgreSQL + Redis mode a Celery message on the queue
``CODERUN_QUEUE`` wakes a code worker (``shareval server worker --code``);
in the embedded default ``CODERUN_WORKERS`` threads of the server run them.
"""
from __future__ import annotations

import datetime as dt
import logging
import os
import socket
import threading
import traceback

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from shareval.platform.coderuns import runner
from shareval.platform.coderuns.dispatch import wake
from shareval.platform.coderuns.models import CodeRun

log = logging.getLogger("shareval.coderuns")
WORKER_ID = f"{socket.gethostname()}:{os.getpid()}"
BUILD_SECONDS = 900           # the environment build's own wall-time limit
_threads: list[threading.Thread] = []


def claim() -> CodeRun | None:
    now = timezone.now()
    for pk, limits in CodeRun.objects.filter(state=CodeRun.QUEUED).order_by("created", "id") \
            .values_list("pk", "limits")[:10]:
        lease = now + dt.timedelta(seconds=float(limits.get("wall_seconds", 600)) +
                                   BUILD_SECONDS + 60)
        n = CodeRun.objects.filter(pk=pk, state=CodeRun.QUEUED).update(
            state=CodeRun.RUNNING, worker=f"{WORKER_ID}:{threading.get_ident()}",
            started=now, lease_until=lease)
        if n == 1:
            return CodeRun.objects.select_related(
                "code_submission__dataset__task", "code_submission__team").get(pk=pk)
    return None


def run_next() -> bool:
    """Claim and execute one queued run; True if one was run."""
    run = claim()
    if run is None:
        return False
    try:
        runner.execute(run)
    except Exception:                                         # noqa: BLE001
        # the traceback names server paths: organizers and the log see it, the team not
        log.exception("code run %s failed", run.pk)
        runner._finish(run, "error", runner.INTERNAL_ERROR, internal_error=traceback.format_exc()[-20000:])
    return True


def sweep() -> int:
    """Queue again the runs whose worker stopped (lease expired); how many."""
    return CodeRun.objects.filter(state=CodeRun.RUNNING, lease_until__lt=timezone.now()) \
        .update(state=CodeRun.QUEUED, worker="", message="re-queued: the worker stopped")


def drain(limit: int = 1000) -> int:
    """Run queued code runs in this thread until none is left (tests, the demo)."""
    n = 0
    while n < limit and run_next():
        n += 1
    return n


def worker_loop(stop: threading.Event | None = None, poll: float = 2.0) -> None:
    stop = stop or threading.Event()
    while not stop.is_set():
        try:
            sweep()
            while run_next():
                if stop.is_set():
                    return
        except Exception:                                     # noqa: BLE001
            log.exception("code worker loop error")
        finally:
            close_old_connections()
        wake.wait(poll)
        wake.clear()


def start_inprocess_workers() -> None:
    """The embedded default: CODERUN_WORKERS threads in the server process."""
    if settings.BROKER_URL or _threads:
        return
    for i in range(settings.CODERUN_WORKERS):
        t = threading.Thread(target=worker_loop, daemon=True, name=f"shareval-coderun-{i}")
        t.start()
        _threads.append(t)
