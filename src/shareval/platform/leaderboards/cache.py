"""Leaderboard rows cached per dataset, patched team by team.

What is cached is the board as ``boards.board_rows`` builds it and
``boards.shape`` trims it (one or several runs per team, the chosen columns,
their precision): the pages and the API read it through :func:`board`.

At 500 teams x 100,000 runs, choosing every team's row reads 100,000 narrow
score tuples (0.7-1.4 s); a team's rows change only when its runs, their
scores or the team change, and a new score changes one team. So two kinds of
random tokens are written in the same transaction as the write:

- a team's change gives its (dataset, team) a new ``BoardMark`` token
  (``competitions/board_marks.py``'s ``mark``): ``Submission`` and ``Score``
  saves (signals below) and their
  queryset ``update`` / ``bulk_create`` / ``bulk_update``
  (``submissions.models.BoardQuerySet``), which send no signals: scoring (the
  public and the private part of a split), a state change, a primary flag, a
  cancellation, a re-score, a disqualification or reinstatement, a team taking
  a run off the board or putting it back, a fact-sheet edit (its method is a
  column of several-runs boards); the events of the organizers' and teams' run
  actions (``SubmissionEvent`` with state disqualified, reinstated, note,
  shown, hidden, factsheet; a note changes no row, but marking on it too keeps
  the rule simple: "any run action"); ``Team`` saves (name, baseline), for
  every dataset of its competition; code runs with an output (their resources
  are efficiency columns: ``leaderboards/efficiency.py``);
- a delete gives ``Dataset.board_token`` a new value (``bump``): deletes of
  runs, scores, code runs, teams, tasks and phases (a mark written in the
  middle of a cascade could name a team about to be deleted), and queryset
  updates that move runs between datasets or teams. ``Dataset.save`` never
  writes the token, so an instance loaded before a bump cannot restore it.

The other dataset-wide changes write no token: ``CompetitionTask`` (primary
metric, direction), ``Phase`` (release, blind) and ``Dataset`` saves (board
options). What a team's entries read besides its runs and name (the task, its
direction, runs per team, ``max_runs``) is in the entries' key, what only
ranking and shaping read (the metric's name, all board options) in the rows'
key, and what a release changes (part, scores shown) is decided per request
and in both keys; so no row built under other settings answers, and entries
built before are re-ranked rather than rebuilt. These saves and ``bump``
build the boards the next requests will ask for once they commit
(``warm.py``).

The cache holds, under (dataset, token, part, shown or hidden, what entries
read), each team's entries (``boards.entries``) with the marks they were built
under; the shaped rows are cached under that key plus what ranking and
shaping read and a digest of the marks. When
marks differ, only those teams' entries are rebuilt (``boards.entries(...,
teams=changed)``), and ``boards.assemble`` ranks and orders all entries again:
a team's entry depends on its own runs and name only, ranks and columns on all
of them, and are always recomputed. More changed teams than
``REBUILD_SHARE`` of the board rebuild it whole.

The key also holds everything decided per request that changes the rows: the
part of a split dataset (``public`` or ``private``; the private part is chosen
only once the phase is released, or by an organizer: ``access.board_part``),
whether scores are shown, and digests of the task's settings and the dataset's
``board`` options (runs per team, ``max_runs``, columns, precision), so rows built for one never
answer for another: before release, a participant's request is keyed
``public`` and cannot be answered with private rows.

A reader takes the token and the marks *before* building the rows, so a write
that commits in between can only leave newer rows under an older token or mark,
never older rows under the newest one. What a user may see is not cached: whether scores are
shown (blind phase, release state and schedule, ``feedback``, organizer) is
decided on every request, and the two kinds of rows are built by different
functions (``leaderboard.rows`` / ``boards.all_rows`` with scores,
``leaderboard.blind_rows`` / ``boards.all_rows`` without) and cached under
different keys, so a hidden board never holds a score. A random token
rather than a counter: a database rebuilt or rolled back (tests) cannot bring
back a value whose rows are still cached.

The cache is Django's ``boards`` cache (``settings.CACHES``; in-process by
default, so each server process patches its own copy once per change).
"""
from __future__ import annotations

import hashlib
import json

from django.conf import settings
from django.core.cache import caches
from django.db.models import Q
from django.db.models.signals import post_delete, post_save

from shareval.platform.competitions.board_marks import bump, mark
from shareval.platform.competitions.models import BoardMark, CompetitionTask, Dataset, Phase, Team
from shareval.platform.leaderboards import boards
from shareval.platform.submissions.models import Score, Submission, SubmissionEvent, mark_runs

TIMEOUT = 24 * 3600
# run actions (submissions/runs.py) whose events give their team a new mark
RUN_ACTIONS = ("disqualified", "reinstated", "note", "shown", "hidden", "factsheet")
# more changed teams than this share of the board: rebuild it whole
REBUILD_SHARE = 0.5


def board(dataset: Dataset, scores: bool = True, part: str = "public"):
    """(columns, rows, precision, key) of the dataset's board: ``boards.board_rows``
    shaped by ``boards.shape``, from the cache when nothing changed since, else
    with only the changed teams' rows rebuilt. ``key`` names these rows until the
    next change (None: not cached); the leaderboard page caches its rendered table
    body under it."""
    token = Dataset.objects.filter(pk=dataset.pk).values_list("board_token", flat=True).first()
    if token is None or not settings.BOARD_CACHE:
        return (*_build(dataset, scores, part), None)
    # read before the rows are built: a write committing meanwhile leaves a newer mark
    marks = dict(BoardMark.objects.filter(dataset=dataset).values_list("team_id", "token"))
    opts, task = dataset.board or {}, dataset.task
    # what each team's entries read besides its runs and name: the entries' key ...
    build = _hash([dataset.task_id, task.lower_is_better, opts.get("runs"), opts.get("max_runs")])
    # ... and what only ranking and shaping read: the rows' key
    look = _hash([task.metric, opts])
    base = f"board:{dataset.pk}:{token}:{part}:{'shown' if scores else 'hidden'}:{build}"
    key = f"{base}:{look}:{digest(marks)}"
    cache = caches["boards"]
    hit = cache.get(key)
    if hit is None:
        state = cache.get(base)
        entries = _patched(dataset, scores, part, state, marks) if state else None
        if entries is None:
            entries = boards.entries(dataset, scores, part)
        cache.set(base, {"marks": marks, "entries": entries}, TIMEOUT)
        columns, rows = boards.assemble(dataset, scores, entries)
        columns, precision = boards.shape(dataset, columns, rows)
        hit = (columns, rows, precision)
        cache.set(key, hit, TIMEOUT)
    return (*hit, key)


def digest(marks: dict) -> str:
    return hashlib.sha256(repr(sorted(marks.items())).encode()).hexdigest()[:16]


def _hash(values) -> str:
    return hashlib.sha256(json.dumps(values, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _patched(dataset: Dataset, scores: bool, part: str, state: dict, marks: dict):
    """The cached entries with the teams whose mark changed rebuilt; None when so many
    changed that a whole rebuild is cheaper."""
    old, entries = state["marks"], state["entries"]
    changed = {t for t in old.keys() | marks.keys() if old.get(t) != marks.get(t)}
    if len(changed) > max(8, REBUILD_SHARE * len(entries)):
        return None
    if changed:
        fresh = boards.entries(dataset, scores, part, teams=changed)
        for t in changed:
            entries.pop(t, None)
            if t in fresh:
                entries[t] = fresh[t]
    return entries


def rows(dataset: Dataset, scores: bool = True, part: str = "public"):
    """(columns, rows) of :func:`board`."""
    return board(dataset, scores, part)[:2]


def _build(dataset: Dataset, scores: bool, part: str):
    columns, rows = boards.board_rows(dataset, scores=scores, part=part)
    columns, precision = boards.shape(dataset, columns, rows)
    return columns, rows, precision


def _submission_saved(sender, instance, **kw):
    mark([(instance.dataset_id, instance.team_id)])


def _score_saved(sender, instance, **kw):
    mark_runs([instance.submission_id])


def _team_saved(sender, instance, **kw):
    mark((d, instance.pk) for d in Dataset.objects.filter(
        phase__competition_id=instance.competition_id).values_list("pk", flat=True))


def _deleted(sender, instance, **kw):
    """Deletes (rare: admin, a team or competition deleted with its runs) rebuild
    whole boards: a mark written in the middle of a cascade could name a team
    about to be deleted."""
    if isinstance(instance, Team):
        bump(Q(phase__competition_id=instance.competition_id))
    elif hasattr(instance, "dataset_id"):
        bump(Q(pk=instance.dataset_id))
    else:
        bump(Q(submissions__pk=instance.submission_id))


def _parent_deleted(sender, instance, **kw):
    bump(Q(task_id=instance.pk) if isinstance(instance, CompetitionTask)
         else Q(phase_id=instance.pk))


def _event_saved(sender, instance, created=False, **kw):
    if created and instance.state in RUN_ACTIONS:
        mark_runs([instance.submission_id])


def connect() -> None:
    """The writes that give a board a new mark or token (the saves that only change
    which boards are asked for warm them: ``warm.connect``)."""
    post_save.connect(_event_saved, sender=SubmissionEvent, dispatch_uid="boards-event-save")
    for model, receiver in ((Submission, _submission_saved), (Score, _score_saved),
                            (Team, _team_saved)):
        post_save.connect(receiver, sender=model, dispatch_uid=f"boards-{model.__name__}-save")
    for model in (Submission, Score, Team, CompetitionTask, Phase):
        post_delete.connect(_deleted if model in (Submission, Score, Team) else _parent_deleted,
                            sender=model, dispatch_uid=f"boards-{model.__name__}-delete")
