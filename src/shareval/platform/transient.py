"""Retrying a transaction that PostgreSQL aborted to break a deadlock or a
serialization conflict. Both are transient by design: the database picked one of
two waiting transactions and rolled it back, and running it again succeeds. Row
locks are taken ``FOR NO KEY UPDATE`` so that they do not block the foreign-key
checks of other transactions (the usual cause); this is the safety net."""
from __future__ import annotations

import logging
import random
import time

from django.db import OperationalError

log = logging.getLogger(__name__)

# SQLSTATE deadlock_detected and serialization_failure
TRANSIENT = {"40P01", "40001"}


def is_transient(error: BaseException) -> bool:
    cause = error.__cause__ or error
    return getattr(cause, "sqlstate", None) in TRANSIENT


def retry(fn, attempts: int = 4, pause: float = 0.05):
    """``fn()``, run again (after a short random pause) when the database aborted it
    as a deadlock victim or serialization failure; other errors pass through."""
    for attempt in range(1, attempts + 1):
        try:
            return fn()
        except OperationalError as e:
            if attempt == attempts or not is_transient(e):
                raise
            log.warning("transaction aborted (%s); running it again (%d of %d)",
                        getattr(e.__cause__, "sqlstate", "?"), attempt + 1, attempts)
            time.sleep(pause * attempt * (1 + random.random()))
