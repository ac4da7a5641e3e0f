"""Leaderboard rows cached per dataset, keyed by the dataset's ``board_token``.

At 500 teams x 100,000 runs, choosing each team's row reads 100,000 narrow
score tuples (about a second); the rows change only when a run, a score or a
team changes. So ``Dataset.board_token`` gets a new random value whenever
anything the rows are built from is written, in the same transaction as the
write, and the rows are cached under (dataset, token, shown or hidden):

- ``Submission`` and ``Score`` saves and deletes (signals below), and their
  queryset ``update`` / ``bulk_create`` / ``bulk_update``
  (``submissions.models.BoardQuerySet``), which send no signals: scoring, a
  state change, a primary flag, a cancellation, a re-score;
- ``Team`` (name, baseline), ``CompetitionTask`` (primary metric, direction),
  ``Phase`` (release) and ``Dataset`` saves and deletes: the datasets they hold.

A reader takes the token *before* building the rows, so a write that commits
in between can only leave newer rows under an older token, never older rows
under the newest one. What a user may see is not cached: whether scores are
shown (blind phase, release state and schedule, ``feedback``, organizer) is
decided on every request, and the two kinds of rows are built by different
functions (``leaderboard.rows`` and ``leaderboard.blind_rows``) and cached
under different keys, so a hidden board never holds a score. A random token
rather than a counter: a database rebuilt or rolled back (tests) cannot bring
back a value whose rows are still cached.

The cache is Django's ``boards`` cache (``settings.CACHES``; in-process by
default, so each server process builds its own copy once per change).
"""
from __future__ import annotations

from django.conf import settings
from django.core.cache import caches
from django.db.models import Q
from django.db.models.signals import post_delete, post_save

from . import leaderboard
from .models import CompetitionTask, Dataset, Phase, Team, new_board_token

TIMEOUT = 24 * 3600


def bump(where: Q) -> None:
    """A new token for every dataset matching ``where``: their cached rows are stale."""
    Dataset.objects.filter(where).update(board_token=new_board_token())


def rows(dataset: Dataset, scores: bool = True) -> tuple[list[str], list[dict]]:
    """``leaderboard.rows(dataset, scores)``, from the cache when nothing changed since."""
    return rows_and_key(dataset, scores)[:2]


def rows_and_key(dataset: Dataset, scores: bool = True) -> tuple[list[str], list[dict], str | None]:
    """(columns, rows, key): ``key`` names these rows until the next change (None:
    not cached); the leaderboard page caches its rendered table body under it."""
    token = Dataset.objects.filter(pk=dataset.pk).values_list("board_token", flat=True).first()
    if token is None or not settings.BOARD_CACHE:
        return (*leaderboard.rows(dataset, scores=scores), None)
    key = f"board:{dataset.pk}:{token}:{'shown' if scores else 'hidden'}"
    cache = caches["boards"]
    hit = cache.get(key)
    if hit is None:
        hit = leaderboard.rows(dataset, scores=scores)
        cache.set(key, hit, TIMEOUT)
    return (*hit, key)


def _submission_saved(sender, instance, **kw):
    bump(Q(pk=instance.dataset_id))


def _score_saved(sender, instance, **kw):
    bump(Q(submissions__pk=instance.submission_id))


def _team_saved(sender, instance, **kw):
    bump(Q(phase__competition_id=instance.competition_id))


def _task_saved(sender, instance, **kw):
    bump(Q(task_id=instance.pk))


def _phase_saved(sender, instance, **kw):
    bump(Q(phase_id=instance.pk))


def _dataset_saved(sender, instance, **kw):
    # a save writes back the token the instance was loaded with: replace it
    if not kw.get("created"):
        bump(Q(pk=instance.pk))


def connect() -> None:
    from shareval.platform.submissions.models import Score, Submission
    for model, receiver in ((Submission, _submission_saved), (Score, _score_saved),
                            (Team, _team_saved), (CompetitionTask, _task_saved),
                            (Phase, _phase_saved), (Dataset, _dataset_saved)):
        uid = f"boards-{model.__name__}"
        post_save.connect(receiver, sender=model, dispatch_uid=uid + "-save")
        if model is not Dataset:
            post_delete.connect(receiver, sender=model, dispatch_uid=uid + "-delete")
