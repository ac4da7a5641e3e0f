"""Boards built right after a dataset-wide change commits, so no viewer pays it.

A team's change patches that team's entries at the next request (a few ms,
``board_cache.py``); a change of the whole dataset does not: a release makes
requests ask for another part or for scores (never built before, or not since
the last bump), a new direction picks other runs, new board options (runs per
team) other entries, a delete gives the dataset a new token. Each of these
writes calls :func:`soon`, which, once the transaction commits
(``transaction.on_commit``), builds in the same process the boards the next
requests will ask for: the anonymous visitor's (scores shown or hidden, the
public or private part, as ``access`` decides now) and the organizer's (scores
shown), rows and the page's table body. So the organizer's save or the
worker's write pays the rebuild (about 0.75 s of CPU at 100,000 runs on
SQLite) and viewers get a cache hit.

The ``boards`` cache is in-process by default (``settings.CACHES``): with
several server processes only the one that made the change is warmed; each
other one rebuilds at its first request after the change, as before (the key
still holds everything the rows depend on, so nothing stale is served), unless
``SHAREVAL_BOARD_CACHE_URL`` puts the boards in Redis, shared by all
processes. A release by schedule (``release_top_at``) writes nothing, so
nothing is warmed: the first request after that time builds the released
board. ``SHAREVAL_BOARD_WARM=0`` turns warming off.
"""
from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.db import transaction

log = logging.getLogger(__name__)


def soon(ids) -> None:
    """Warm the boards of these datasets once the current transaction commits; one
    warm-up per transaction (a cascade deleting 200 runs bumps 200 times)."""
    ids = set(ids)
    if not (ids and settings.BOARD_CACHE and settings.BOARD_WARM):
        return
    conn = transaction.get_connection()
    pending = getattr(conn, "_board_warm", None)
    if pending and any(entry[1] is pending[1] for entry in conn.run_on_commit):
        pending[0].update(ids)         # already scheduled in this transaction
        return

    def run():
        conn._board_warm = None
        warm(sorted(ids))
    conn._board_warm = (ids, run)
    transaction.on_commit(run)


def warm(ids) -> None:
    """Build (or find cached) the boards of these datasets that requests will ask for."""
    try:
        _warm(ids)
    except Exception:       # a failed warm-up leaves the build to the next request
        log.exception("building the boards of datasets %s after a change", ids)


def _warm(ids) -> None:
    from . import access, api, board_html
    from .models import Dataset
    anon = AnonymousUser()
    for ds in Dataset.objects.filter(pk__in=ids).select_related("phase__competition", "task"):
        part = access.board_part(anon, ds)
        shown = [True]                  # the organizers' board
        if access.can_view_leaderboard(anon, ds):
            shown.insert(0, access.leaderboard_shows_scores(anon, ds))
        for scores in dict.fromkeys(shown):
            key: list = []
            board = api.board_payload(ds, scores, part, key)
            if key[0]:
                board_html.body(board_html.page_rows(board), key[0], board["ranked"])
