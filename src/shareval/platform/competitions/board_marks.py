"""The two tokens that say a leaderboard changed, written in the transaction of
the change (why two: ``leaderboards/cache.py``). They live here, beside the
datasets and teams they mark, so the apps that write runs (submissions, code
runs) mark boards without importing the leaderboards; the leaderboards app
listens to :data:`stale` to build the new boards once the change commits."""
from __future__ import annotations

from django.db.models import Q
from django.dispatch import Signal

from shareval.platform.competitions.models import BoardMark, Dataset, new_board_token

# sent by :func:`bump` with ``ids``: the datasets whose cached rows are stale
stale = Signal()


def bump(where: Q) -> None:
    """A new token for every dataset matching ``where``: their cached rows are stale;
    rebuilt once the transaction commits (the leaderboards app hears :data:`stale`)."""
    ids = list(Dataset.objects.filter(where).values_list("pk", flat=True))
    if ids:
        Dataset.objects.filter(pk__in=ids).update(board_token=new_board_token())
        stale.send(sender=Dataset, ids=ids)


def mark(pairs) -> None:
    """A new mark for each (dataset id, team id): only those teams' rows are rebuilt."""
    pairs = {(d, t) for d, t in pairs if d and t}
    if pairs:
        token = new_board_token()
        BoardMark.objects.bulk_create(
            [BoardMark(dataset_id=d, team_id=t, token=token) for d, t in sorted(pairs)],
            update_conflicts=True, unique_fields=["dataset", "team"], update_fields=["token"])
