"""Leaderboard rows for one dataset (phase x task x pack).

With scores shown: one row per team, its primary run if it flagged one and it
is scored, else its best scored run by the primary metric; rows in rank order
(ties share a rank: 1, 2, 2, 4; equal scores then by team name). Baseline
teams are rows too, marked ``baseline``. Cancelled, rejected and failed runs
never appear.

With scores hidden (blind phase or ``feedback: false`` before release), no
part of a row may depend on a score, or the board would tell a team whether
its new run beat the earlier ones: the row is the primary run if scored, else
the latest scored run; rows are ordered by team name; no ranks; no metrics.

Disqualified runs and runs their team took off the board never appear either.
The dataset's ``board`` options (several runs per team, columns, precision) are
in ``boards.py``, whose ``board_rows`` pages and API call (through
``board_cache.py``); ``part`` chooses the public or private part of a split
dataset's scores.

Three queries: the database picks each team's row (a window function over the
team's current scores, ordered by the rule above) and counts its runs, then
the metrics of the picked rows only, so the cost grows with the number of
submissions but not with the size of their results, and Python sees one row
per team; then the resources of the code runs behind the picked rows
(``coderuns/efficiency.py``). The pages cache the board's rows until something they read changes
(``board_cache.py``).
"""
from __future__ import annotations

from django.db.models import Case, Count, F, IntegerField, Value, When, Window
from django.db.models.functions import RowNumber

from shareval.platform.coderuns import efficiency
from shareval.platform.submissions.models import Score, Submission

from .models import Dataset, Team


def scalar_metrics(result: dict) -> dict[str, float]:
    return {k: v for k, v in (result.get("metrics") or {}).items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _current_scored(dataset: Dataset):
    return Score.objects.filter(submission__dataset=dataset, current=True,
                                submission__state=Submission.SCORED,
                                submission__disqualified="", submission__on_board=True)


# the score fields a board reads: the public part (every dataset) or the private one
PARTS = {"public": ("primary", "result__metrics"),
         "private": ("private_primary", "private_result__metrics")}


def _not_primary():
    return Case(When(submission__kind=Submission.PRIMARY, then=Value(0)), default=Value(1),
                output_field=IntegerField())


def _first_per_team(dataset: Dataset, order: list, *fields: str):
    """(team, team's scored runs, kind, created, *fields) of each team's first
    current scored run in ``order``."""
    team = [F("submission__team_id")]
    return (_current_scored(dataset)
            .annotate(rn=Window(RowNumber(), partition_by=team, order_by=order),
                      n=Window(Count("pk"), partition_by=team))
            .filter(rn=1).order_by()
            .values_list("submission__team_id", "n", "submission__kind", "submission__created",
                         *fields))


def rows(dataset: Dataset, scores: bool = True,
         part: str = "public") -> tuple[list[str], list[dict]]:
    """(metric columns with the primary metric first, rows); see the module doc.

    ``scores=False`` is the board with scores hidden (:func:`blind_rows`)."""
    if not scores:
        return [], blind_rows(dataset)
    ct = dataset.task
    sign = 1 if ct.lower_is_better else -1
    primary_field, metrics_field = PARTS[part]
    score = F(primary_field).asc(nulls_last=True) if ct.lower_is_better else \
        F(primary_field).desc(nulls_last=True)
    picked: dict[int, tuple] = {}
    runs: dict[int, int] = {}
    for team, n, kind, created, pk, primary in _first_per_team(
            dataset, [_not_primary(), score, F("submission__created").asc(), F("pk").asc()],
            "pk", primary_field):
        picked[team], runs[team] = (None, pk, kind, primary, created), n
    teams = {t.pk: t for t in Team.objects.filter(pk__in=picked)}
    results, subs = {}, {}
    for pk, sub, m in Score.objects.filter(pk__in=[p[1] for p in picked.values()]) \
            .values_list("pk", "submission_id", metrics_field):
        results[pk], subs[pk] = m, sub
    chosen = sorted(picked.items(), key=lambda kv: (kv[1][3] is None, sign * (kv[1][3] or 0),
                                                    teams[kv[0]].name))
    columns: list[str] = [ct.metric]
    metrics = {}
    for team, (_, pk, *_rest) in chosen:
        metrics[pk] = scalar_metrics({"metrics": results.get(pk) or {}})
        for k in metrics[pk]:
            if k not in columns:
                columns.append(k)
    out, rank, prev = [], 0, object()
    for i, (team, (_, pk, kind, primary, created)) in enumerate(chosen, 1):
        if primary != prev:
            rank, prev = i, primary
        out.append(_row(teams[team], rank, kind, runs[team], created,
                        {k: metrics[pk].get(k) for k in columns}, "best"))
    # code submissions: the resources of the run that produced each row's output
    efficiency.attach(out, [subs[pk] for _, (_, pk, *_rest) in chosen])
    return columns, out


def blind_rows(dataset: Dataset) -> list[dict]:
    """Rows by team name, each the team's primary run if scored, else its latest
    scored run; no ranks, no metrics. The query does not even read the scores."""
    picked: dict[int, tuple] = {}
    runs: dict[int, int] = {}
    for team, n, kind, created in _first_per_team(
            dataset, [_not_primary(), F("submission__created").desc(), F("pk").desc()]):
        picked[team], runs[team] = (kind, created), n
    teams = {t.pk: t for t in Team.objects.filter(pk__in=picked)}
    return [_row(teams[t], None, kind, runs[t], created, {}, "latest")
            for t, (kind, created) in sorted(picked.items(), key=lambda kv: teams[kv[0]].name)]


def _row(team: Team, rank, kind, runs: int, created, metrics: dict, fallback: str) -> dict:
    return {"rank": rank, "team": team.name, "baseline": team.is_baseline,
            "run": "primary" if kind == Submission.PRIMARY else fallback,
            "runs": runs, "submitted": created.isoformat(), "metrics": metrics}
