"""Hands a queued code run to a worker: a Celery message by name on
``CODERUN_QUEUE``, or a wake-up of this process's code workers. Both the
service that queues runs and the worker loop that runs them (``queue.py``)
import it, so neither imports the other."""
from __future__ import annotations

import threading

from django.conf import settings

from shareval.platform import broker

wake = threading.Event()        # the in-process workers wait on it between polls


def dispatch(run_id: int) -> None:
    if settings.BROKER_URL:
        broker.send(broker.CODE_RUN, run_id, queue=settings.CODERUN_QUEUE)
    else:
        wake.set()
