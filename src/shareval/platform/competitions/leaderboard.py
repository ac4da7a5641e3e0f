"""Leaderboard rows for one dataset (phase x task x pack).

One row per team: its primary run if it flagged one and it is scored, else
its best scored run by the primary metric. Baseline teams are rows too,
marked ``baseline``. Cancelled, rejected and failed runs never appear. Ranks
are competition ranks (ties share a rank: 1, 2, 2, 4).

Two queries: narrow tuples for every current score (to pick each team's row),
then the metrics of the picked rows only, so the cost grows with the number of
submissions but not with the size of their results.
"""
from __future__ import annotations

from shareval.platform.submissions.models import Score, Submission

from .models import Dataset, Team


def scalar_metrics(result: dict) -> dict[str, float]:
    return {k: v for k, v in (result.get("metrics") or {}).items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}


def rows(dataset: Dataset) -> tuple[list[str], list[dict]]:
    """(metric columns with the primary metric first, rows in rank order)."""
    ct = dataset.task
    sign = 1 if ct.lower_is_better else -1
    narrow = (Score.objects.filter(submission__dataset=dataset, current=True,
                                   submission__state=Submission.SCORED)
              .values_list("pk", "submission__team_id", "submission__kind", "primary",
                           "submission__created"))
    picked: dict[int, tuple] = {}
    runs: dict[int, int] = {}
    for pk, team, kind, primary, created in narrow:
        runs[team] = runs.get(team, 0) + 1
        key = (kind != Submission.PRIMARY, primary is None, sign * (primary or 0), created)
        if team not in picked or key < picked[team][0]:
            picked[team] = (key, pk, kind, primary, created)
    teams = {t.pk: t for t in Team.objects.filter(pk__in=picked)}
    results = dict(Score.objects.filter(pk__in=[p[1] for p in picked.values()])
                   .values_list("pk", "result__metrics"))
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
        out.append({"rank": rank, "team": teams[team].name, "baseline": teams[team].is_baseline,
                    "run": "primary" if kind == Submission.PRIMARY else "best",
                    "runs": runs[team], "submitted": created.isoformat(),
                    "metrics": {k: metrics[pk].get(k) for k in columns}})
    return columns, out
