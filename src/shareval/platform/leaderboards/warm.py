"""Boards built right after a dataset-wide change commits, so no viewer pays it.

A team's change patches that team's entries at the next request (a few ms,
``leaderboards/cache.py``); a change of the whole dataset does not: a release makes
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
from django.db.models import Q
from django.db.models.signals import post_save

from shareval.platform.competitions import board_marks
from shareval.platform.access import visibility as access
from shareval.platform.competitions.models import CompetitionTask, Dataset, Phase
from shareval.platform.leaderboards import html as board_html
from shareval.platform.leaderboards.payloads import board_payload

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
    anon = AnonymousUser()
    for ds in Dataset.objects.filter(pk__in=ids).select_related("phase__competition", "task"):
        part = access.board_part(anon, ds)
        shown = [True]                  # the organizers' board
        if access.can_view_leaderboard(anon, ds):
            shown.insert(0, access.leaderboard_shows_scores(anon, ds))
        for scores in dict.fromkeys(shown):
            key: list = []
            board = board_payload(ds, scores, part, key)
            if key[0]:
                board_html.body(board_html.page_rows(board), key[0], board["ranked"])


def _task_saved(sender, instance, **kw):
    """A task's metric or direction is in the cache keys (``cache.board``): no token,
    the boards under the new key are built once the change commits."""
    _warm_where(Q(task_id=instance.pk))


def _phase_saved(sender, instance, **kw):
    """A release changes which rows a request asks for (part, scores shown), both in
    the key, not the rows: the boards now asked for are built once it commits."""
    _warm_where(Q(phase_id=instance.pk))


def _warm_where(where: Q) -> None:
    soon(list(Dataset.objects.filter(where).values_list("pk", flat=True)))


def _dataset_saved(sender, instance, **kw):
    # its options are in the key; a save leaves the token alone (``Dataset.save``)
    if not kw.get("created"):
        soon([instance.pk])


def _stale(sender, ids, **kw):
    soon(ids)


def connect() -> None:
    """Build the boards again once these commit: a new token (``board_marks.stale``),
    and the saves that change which boards requests ask for (their keys)."""
    board_marks.stale.connect(_stale, dispatch_uid="boards-stale")
    for model, receiver in ((CompetitionTask, _task_saved), (Phase, _phase_saved),
                            (Dataset, _dataset_saved)):
        post_save.connect(receiver, sender=model, dispatch_uid=f"boards-{model.__name__}-save")
