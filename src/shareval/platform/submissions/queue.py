"""The scoring queue: jobs in the database, run by an in-process thread or Celery.

Fair order: a free worker takes the job of the team with the fewest jobs running,
then of the team served least recently, and within a team the smallest file
first; so one team's pile of large runs delays another team's run by at most
the jobs already running. Small files (up to SMALL_JOB_BYTES) also have a lane
of their own, a thread that scores nothing else. A Celery message only wakes a
worker: it claims the fairest job, not necessarily the one the message names.

Claiming is one conditional UPDATE (queued, or running with an expired lease),
so two workers never run the same job at once; a heartbeat thread renews the
lease while scoring; :func:`sweep` puts jobs whose worker died back in the queue
(up to MAX_ATTEMPTS). The score and the job's completion are written in one
transaction, fenced by the claim token, so each (submission, scorer version,
reference) is scored exactly once.
"""
from __future__ import annotations

import datetime as dt
import logging
import os
import secrets
import socket
import threading
import time
import traceback

from django.conf import settings
from django.db import close_old_connections, transaction
from django.db.models import F, Max, Q
from django.utils import timezone

from shareval.platform import broker, transient
from shareval.platform.labels import scorer_label
from shareval.platform.submissions.models import Job, Score, Submission, SubmissionEvent

log = logging.getLogger("shareval.queue")
_wake = threading.Event()
_wake_small = threading.Event()
_worker_thread: threading.Thread | None = None
_small_thread: threading.Thread | None = None


def _namespace() -> str | None:
    """This machine's boot and process namespace, or None where /proc does not tell:
    two worker ids with the same prefix see each other's process ids."""
    try:
        boot = open("/proc/sys/kernel/random/boot_id").read().strip()
        return f"{socket.gethostname()}/{boot[:8]}-{os.stat('/proc/self/ns/pid').st_ino}"
    except OSError:
        return None


_HERE = _namespace()


def worker_id() -> str:
    """Who runs a job: the machine (and namespace) and the process, computed when
    claiming, since a prefork pool's children share their parent's modules."""
    return f"{_HERE or socket.gethostname()}:{os.getpid()}"


WORKER_ID = worker_id()


def worker_gone(worker: str) -> bool:
    """True if ``worker`` ran in this machine's process namespace and its process has
    ended (killed, out of memory): its job need not wait for the lease to run out. A
    process that cannot be checked, or a reused pid, counts as alive: the lease decides."""
    host, _, pid = worker.rpartition(":")
    if _HERE is None or host != _HERE or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


# ---------------------------------------------------------------------------
# Enqueueing

def scorer_key(submission: Submission) -> tuple[str, str]:
    return submission.dataset.task.registry_task.scorer_version, submission.scoring_digest


def enqueue(submission: Submission) -> Job | None:
    """Queue a scoring for the current scorer version and reference; None if it exists."""
    version, digest = scorer_key(submission)
    job, created = Job.objects.get_or_create(submission=submission, scorer_version=version,
                                             reference_digest=digest)
    if not created:
        return None
    submission.record(Submission.QUEUED, f"queued for scoring by {scorer_label(version)}")
    transaction.on_commit(lambda: dispatch(job.pk))
    return job


def dispatch(job_id: int) -> None:
    _wake_small.set()                   # the small lane runs in every worker mode
    if settings.BROKER_URL:
        broker.send(broker.SCORE_JOB, job_id)
    else:
        _wake.set()


# ---------------------------------------------------------------------------
# Claiming and running

REQUEUED = "re-queued: the worker stopped responding"


def _claimable(now):
    return Q(status=Job.QUEUED) | Q(status=Job.RUNNING, lease_until__lt=now)


def fair_order(now, small_only: bool = False, teams_tried: int = 5) -> list[int]:
    """Claimable job ids, the fairest first (see the module's docstring): the two
    smallest of each of the ``teams_tried`` teams that come first."""
    jobs = Job.objects.filter(_claimable(now))
    if small_only:
        jobs = jobs.filter(submission__size__lte=settings.SMALL_JOB_BYTES)
    teams = set(jobs.values_list("submission__team_id", flat=True).distinct())
    if not teams:
        return []
    busy: dict[int, int] = {}
    for team in Job.objects.filter(status=Job.RUNNING, lease_until__gte=now,
                                   submission__team_id__in=teams) \
            .values_list("submission__team_id", flat=True):
        busy[team] = busy.get(team, 0) + 1
    # when each team was last served: its latest claim or heartbeat
    served = dict(Job.objects.filter(submission__team_id__in=teams, heartbeat__isnull=False)
                  .values("submission__team_id").annotate(last=Max("heartbeat"))
                  .values_list("submission__team_id", "last"))
    never = dt.datetime.min.replace(tzinfo=dt.timezone.utc)
    ranked = sorted(teams, key=lambda t: (busy.get(t, 0), served.get(t) or never, t))
    out: list[int] = []
    for team in ranked[:teams_tried]:
        out += jobs.filter(submission__team_id=team).order_by(
            "submission__size", "created", "id").values_list("pk", flat=True)[:2]
    return out


def claim(job_id: int | None = None, small_only: bool = False) -> Job | None:
    """Claim one job (a given one, or the fairest claimable); None if none is free."""
    now = timezone.now()
    ids = [job_id] if job_id is not None else fair_order(now, small_only)
    for pk in ids:
        job = _take(pk, Q(status=Job.QUEUED), now)
        if job is not None:
            return job
        # a job whose worker stopped renewing its lease, taken over before sweep()
        # re-queued it: the re-queue is recorded here instead
        expired = Q(status=Job.RUNNING, lease_until__lt=now)
        lost = Job.objects.filter(expired, pk=pk).values_list("worker", "lease_until").first()
        if lost is not None:
            job = _take(pk, expired, now, lost)
            if job is not None:
                return job
    return None


def _take(pk: int, claimable: Q, now, lost: tuple | None = None) -> Job | None:
    """Lease job ``pk`` to this worker if it is still ``claimable``; ``lost`` (worker,
    lease end) records that it is taken over from a worker that stopped responding."""
    with transaction.atomic():
        n = Job.objects.filter(claimable, pk=pk).update(
            status=Job.RUNNING, token=secrets.token_hex(8), worker=worker_id(), heartbeat=now,
            attempts=F("attempts") + 1,
            lease_until=now + dt.timedelta(seconds=settings.LEASE_SECONDS))
        if n != 1:
            return None
        job = Job.objects.select_related("submission__dataset__task",
                                         "submission__dataset__phase").get(pk=pk)
        if lost is not None:
            _record(job.submission, Submission.QUEUED, REQUEUED,
                    log=f"lease of {lost[0]} expired at {lost[1]}; taken over by {worker_id()}")
        return job


class _Heartbeat(threading.Thread):
    def __init__(self, job: Job):
        super().__init__(daemon=True, name=f"heartbeat-{job.pk}")
        self.job, self.stop = job, threading.Event()
        self.started = time.monotonic()

    def run(self):
        while not self.stop.wait(settings.HEARTBEAT_SECONDS):
            if time.monotonic() - self.started > settings.SCORING_TIMEOUT:
                return           # stop renewing: the lease runs out, sweep takes over
            now = timezone.now()
            try:
                Job.objects.filter(pk=self.job.pk, token=self.job.token).update(
                    heartbeat=now, lease_until=now + dt.timedelta(seconds=settings.LEASE_SECONDS))
            except Exception:                         # database briefly unavailable
                log.exception("heartbeat failed for job %s", self.job.pk)
            finally:
                close_old_connections()


def run_job(job_id: int | None = None, small_only: bool = False) -> bool:
    """Claim and run one job; True if a job was run (whatever its outcome)."""
    job = claim(job_id, small_only)
    if job is None:
        return False
    sub = job.submission
    if job.attempts > settings.MAX_ATTEMPTS:
        _fail(job, f"scoring did not finish after {settings.MAX_ATTEMPTS} attempts",
              "worker lost or timed out on every attempt")
        return True
    _record(sub, Submission.RUNNING, f"scoring started (attempt {job.attempts})",
            log=f"worker {worker_id()}")
    hb = _Heartbeat(job)
    hb.start()
    try:
        if settings.SCORING_DELAY:
            time.sleep(settings.SCORING_DELAY)
        from shareval.platform.submissions.scoring import score_submission
        outcome = score_submission(sub)
    except Exception as e:                                   # noqa: BLE001
        from shareval.platform.submissions.scoring import participant_message
        outcome = None
        message, trace = participant_message(sub, e), traceback.format_exc()
    finally:
        hb.stop.set()
    if outcome is not None:
        try:
            transient.retry(lambda: _finish(job, outcome))
            return True
        except Exception:                                    # noqa: BLE001
            # record why, now: left unhandled, the lease would expire and the run
            # end as "worker stopped responding" after MAX_ATTEMPTS
            from shareval.platform.submissions.scoring import storing_message
            message, trace = storing_message(sub), traceback.format_exc()
            log.exception("job %s: storing the score failed", job.pk)
    _fail(job, message, trace)
    return True


def _finish(job: Job, outcome) -> None:
    with transaction.atomic():
        n = Job.objects.filter(pk=job.pk, token=job.token, status=Job.RUNNING).update(
            status=Job.DONE, finished=timezone.now())
        if n != 1:
            log.warning("job %s: lease lost before completion; result discarded", job.pk)
            return
        sub = job.submission
        store_score(sub, job.scorer_version, job.reference_digest, outcome)
        _record(sub, Submission.SCORED, f"scored by {scorer_label(job.scorer_version)}")


def _record(sub: Submission, state: str, message: str, log: str = "") -> None:
    """The run's new state, unless it was cancelled meanwhile (queued or running): a
    cancelled run stays cancelled, the event says what happened to it."""
    if Submission.objects.filter(pk=sub.pk, state=Submission.CANCELLED).exists():
        SubmissionEvent.objects.create(submission=sub, state=state, log=log,
                                       message=f"{message}; stays cancelled")
    else:
        sub.record(state, message, log=log)


def store_score(sub: Submission, version: str, digest: str, outcome) -> Score:
    """``outcome`` becomes the run's current score (inside the caller's transaction);
    earlier scores stay, no longer current. An organizer's re-score of one run
    (runs.rescore) replaces the earlier score of the same scorer and reference; the
    history keeps its metrics."""
    Score.objects.filter(submission=sub, current=True).update(current=False)
    Score.objects.filter(submission=sub, scorer_version=version,
                         reference_digest=digest).delete()
    return Score.objects.create(submission=sub, scorer_version=version, reference_digest=digest,
                                result=outcome.result, primary=outcome.primary,
                                comparison=outcome.comparison, plots=outcome.plots,
                                current=True, private_result=outcome.private_result,
                                private_primary=outcome.private_primary,
                                unit_stats=outcome.unit_stats)


def _fail(job: Job, message: str, trace: str) -> None:
    with transaction.atomic():
        n = Job.objects.filter(pk=job.pk, token=job.token).update(
            status=Job.FAILED, finished=timezone.now())
        if n == 1:
            _record(job.submission, Submission.FAILED, message, trace)


def sweep() -> int:
    """Re-queue jobs whose worker stopped renewing the lease, or whose worker's
    process on this machine has ended (at once, not a lease later); returns how many."""
    now = timezone.now()
    mine = Q(worker__startswith=f"{_HERE}:") if _HERE else Q(pk__in=[])
    expired = list(Job.objects.filter(Q(lease_until__lt=now) | mine, status=Job.RUNNING)
                   .select_related("submission"))
    n = 0
    for job in expired:
        gone = not (job.lease_until and job.lease_until < now)
        if gone and not worker_gone(job.worker):
            continue
        # the token fences it: a job claimed again meanwhile is not touched
        fence = Q() if gone else Q(lease_until__lt=now)
        with transaction.atomic():
            if Job.objects.filter(fence, pk=job.pk, token=job.token, status=Job.RUNNING) \
                    .update(status=Job.QUEUED, token="") != 1:
                continue
            _record(job.submission, Submission.QUEUED, REQUEUED,
                    log=f"process of {job.worker} ended" if gone else
                    f"lease of {job.worker} expired at {job.lease_until}")
        dispatch(job.pk)
        n += 1
    return n


def drain(limit: int = 10_000) -> int:
    """Run queued jobs in this thread until none is left (tests, the demo)."""
    n = 0
    while n < limit and run_job():
        n += 1
    return n


# ---------------------------------------------------------------------------
# The in-process worker (embedded default)

def worker_loop(stop: threading.Event | None = None, poll: float = 2.0,
                small_only: bool = False) -> None:
    """Score queued jobs until ``stop``; ``small_only``: the small-job lane (no sweeping)."""
    stop = stop or threading.Event()
    wake = _wake_small if small_only else _wake
    while not stop.is_set():
        try:
            if not small_only:
                sweep()
            while run_job(small_only=small_only):
                if stop.is_set():
                    return
        except Exception:
            log.exception("worker loop error")
        finally:
            close_old_connections()
        wake.wait(poll)
        wake.clear()


def start_small_lane(poll: float = 2.0) -> None:
    """The thread that scores only small files, so they never wait behind large ones."""
    global _small_thread
    if _small_thread is None and settings.SMALL_JOB_BYTES > 0:
        _small_thread = threading.Thread(target=worker_loop, daemon=True,
                                         name="shareval-small-lane",
                                         kwargs={"poll": poll, "small_only": True})
        _small_thread.start()


def start_inprocess_worker() -> None:
    """Started by ``shareval server run`` (after migrating) when no broker is set."""
    global _worker_thread
    if settings.BROKER_URL:
        return
    if _worker_thread is None:
        _worker_thread = threading.Thread(target=worker_loop, daemon=True, name="shareval-worker")
        _worker_thread.start()
    start_small_lane()
