"""Work done after the response, by one thread of the server process: a password
reset is answered before anyone is looked up or mailed, so a known address and
an unknown one answer alike, even to a client that times its next request on
the same connection (work done in the response's close(), by waitress's request
thread, would delay that one).

The thread is started with the WSGI application (``wsgi.py``). Without it (tests,
management commands) jobs wait until :func:`run_pending` is called. Jobs live
only in memory: a job queued just before the server stops is lost (the person
asks again). At most ``LIMIT`` jobs wait; more are dropped with a log line.
"""
from __future__ import annotations

import logging
import queue
import threading
from typing import Callable

from django.db import close_old_connections

log = logging.getLogger("shareval.background")
LIMIT = 1000
_jobs: "queue.Queue[tuple[Callable, dict]]" = queue.Queue(maxsize=LIMIT)
_thread: threading.Thread | None = None


def later(fn: Callable, **kwargs) -> None:
    try:
        _jobs.put_nowait((fn, kwargs))
    except queue.Full:
        log.error("background queue full: %s dropped", getattr(fn, "__qualname__", fn))


def after(response, fn: Callable, **kwargs):
    """``response``, queueing ``fn`` when the WSGI server closes it: once the answer
    is written. Queued earlier, the thread would take the interpreter from the
    request's own thread while that still writes the answer (measured: known
    addresses then answered about a millisecond later than unknown ones)."""
    close = response.close

    def close_then_queue():
        close()
        later(fn, **kwargs)

    response.close = close_then_queue
    return response


def _run(fn: Callable, kwargs: dict) -> None:
    try:
        fn(**kwargs)
    except Exception:           # the response is long gone: log, keep the thread alive
        log.exception("background job %s failed", getattr(fn, "__qualname__", fn))


def run_pending() -> int:
    """Run the waiting jobs in this thread; returns how many ran."""
    n = 0
    while True:
        try:
            fn, kwargs = _jobs.get_nowait()
        except queue.Empty:
            return n
        _run(fn, kwargs)
        n += 1


def clear() -> int:
    """Drop the waiting jobs (tests: what one test queued never runs in the next)."""
    n = 0
    while True:
        try:
            _jobs.get_nowait()
        except queue.Empty:
            return n
        n += 1


def _loop() -> None:
    while True:
        fn, kwargs = _jobs.get()
        try:
            _run(fn, kwargs)
        finally:
            close_old_connections()


def start() -> None:
    global _thread
    if _thread is None:
        _thread = threading.Thread(target=_loop, daemon=True, name="shareval-background")
        _thread.start()
