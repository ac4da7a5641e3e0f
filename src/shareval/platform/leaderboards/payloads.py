"""A leaderboard as the pages and the REST API show it: the cached rows, the
efficiency columns of code runs, the columns that people's judgments add
(judging and annotation register them: :func:`add_human_columns`), and the run
ids only where the viewer may open the run."""
from __future__ import annotations

from typing import Callable

from django.shortcuts import get_object_or_404

from shareval.platform.access import eligibility
from shareval.platform.access import visibility as access
from shareval.platform.competitions.models import Dataset
from shareval.platform.leaderboards import boards, efficiency, unranked
from shareval.platform.leaderboards import cache as board_cache

# providers of human-judged columns, in the order their apps start
HUMAN_COLUMNS: list[Callable] = []
# providers of notes on runs beside their scores (judging: an estimate still waiting
# for judgments): provider(dataset) -> {run id: note}
RUN_NOTES: list[Callable] = []


def get_dataset(request, c, p, d) -> Dataset:
    """A dataset of a competition the requester may see (else 404, the same for a
    hidden competition and a missing one)."""
    comp = eligibility.visible(request, c)
    return get_object_or_404(Dataset.objects.select_related("phase__competition", "task"),
                             phase__competition=comp, phase__slug=p, slug=d)


def leaderboard_payload(ds: Dataset, user, part: str | None = None,
                        key: list | None = None) -> dict:
    """The board ``user`` may see. ``key``, if given, receives the cache key of
    its rows (None when they are not cached): the page caches its table body under it."""
    shown = access.leaderboard_shows_scores(user, ds)
    board = board_payload(ds, shown, access.board_part(user, ds, part), key)
    board["rows"] = runs_they_may_open(board["rows"], ds, user)
    return board


def runs_they_may_open(rows: list[dict], ds: Dataset, user) -> list[dict]:
    """The rows with their run's ``id`` kept where ``user`` may open that run (its
    team's members, the organizers) and taken out elsewhere: another team's run
    ids are never shown."""
    comp = ds.phase.competition
    if comp.is_organizer(user):
        return rows
    team = comp.team_of(user)
    mine = team.name if team is not None else None
    return [r if r["team"] == mine else {k: v for k, v in r.items() if k != "id"}
            for r in rows]


def board_payload(ds: Dataset, shown: bool, part: str, key: list | None = None) -> dict:
    """:func:`leaderboard_payload` once the viewer's scores and part are decided."""
    columns, rows, precision, cache_key = board_cache.board(ds, scores=shown, part=part)
    eff_columns = efficiency.columns(ds.board or {}, rows)     # code runs' resources
    human = human_columns(ds, rows) if shown else []
    noted = run_notes(ds, rows) if shown else False
    if key is not None:      # judged columns and notes change without a token
        key.append(None if human or noted else cache_key)
    several = (ds.board or {}).get("runs") == "all"
    return {"human": human, "part": part, "precision": precision,
            "efficiency_columns": eff_columns,
            "runs_per_team": "several" if several else "one",
            "competition": ds.phase.competition.slug, "phase": ds.phase.slug,
            "dataset": ds.slug,
            "task": ds.task.slug, "primary_metric": ds.task.metric or None,
            "ranked": unranked.ranked(ds), "columns": columns,
            "scores": "shown" if shown else "hidden until the organizers release results",
            "rule": boards.rule(ds, shown, several),
            "rows": rows}


def human_columns(ds: Dataset, rows: list[dict]) -> list[dict]:
    """Judging campaigns' estimates (with intervals) and annotation studies' scores
    beside the automatic scores, shown under the same rules as the scores
    themselves; each row gets one value (or None) per column in ``human``."""
    out = []
    for provider in HUMAN_COLUMNS:
        for column, values in provider(ds):
            out.append(column)
            by_run = column.get("by") == "run"        # keyed by run id, else by team name
            for r in rows:
                r.setdefault("human", []).append(values.get(r.get("id") if by_run
                                                            else r["team"]))
    return out


def run_notes(ds: Dataset, rows: list[dict]) -> bool:
    """Each row's note from the providers (``note``); a noted row without a value of
    the board's metric (an estimate still waiting for judgments) gets no rank, so it
    never ranks beside the runs that have one. Whether any row got a note."""
    notes: dict = {}
    for provider in RUN_NOTES:
        notes.update(provider(ds))
    metric = ds.task.metric
    for r in rows:
        note = notes.get(r.get("id"))
        if note:
            r["note"] = note
            if metric and r["metrics"].get(metric) is None:
                r["rank"] = None
    return bool(notes)


def add_run_notes(provider: Callable) -> None:
    """Register ``provider(dataset) -> {run id: note}`` (in its app's ``AppConfig.ready``)."""
    if provider not in RUN_NOTES:
        RUN_NOTES.append(provider)


def add_human_columns(provider: Callable) -> None:
    """Register ``provider(dataset) -> [(column, {team name: value})]`` (in its app's
    ``AppConfig.ready``): a column is ``{"campaign": title, "measure": name}``, with
    ``"by": "run"`` when its values are keyed by run id instead."""
    if provider not in HUMAN_COLUMNS:
        HUMAN_COLUMNS.append(provider)
