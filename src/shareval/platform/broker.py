"""The Celery app that sends and runs tasks (when SHAREVAL_BROKER_URL is set).

Apps send their tasks by name (:func:`send`), so none imports the workers'
module (``celery_app.py``, which registers the tasks under these names and
starts Django itself)."""
from __future__ import annotations

from functools import cache

from django.conf import settings

SCORE_JOB = "shareval.score_job"
CODE_RUN = "shareval.code_run"
ASSESS_RUN = "shareval.assess_run"       # judging: draw a run for automatic assessment


@cache
def app():
    from celery import Celery          # only servers with a broker need it loaded
    celery = Celery("shareval", broker=settings.BROKER_URL or "memory://")
    celery.conf.update(task_acks_late=True, task_reject_on_worker_lost=True,
                       worker_prefetch_multiplier=1, task_default_queue=settings.SCORING_QUEUE,
                       broker_connection_retry_on_startup=True, worker_hijack_root_logger=False)
    return celery


def send(name: str, *args, queue: str | None = None) -> None:
    """Queue the task ``name`` with ``args`` (on the default scoring queue unless ``queue``)."""
    app().send_task(name, args=args, queue=queue)
