"""Leaderboard rows for one dataset (phase x task x pack).

One row per team: its primary run if it flagged one and it is scored, else
its best scored run by the primary metric. Baseline teams are rows too,
marked ``baseline``. Cancelled, rejected and failed runs never appear. Ranks
are competition ranks (ties share a rank: 1, 2, 2, 4).
"""
from __future__ import annotations

from collections import defaultdict

from shareval.platform.submissions.models import Score, Submission

from .models import Dataset


def scalar_metrics(result: dict) -> dict[str, float]:
    return {k: v for k, v in (result.get("metrics") or {}).items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}


def rows(dataset: Dataset) -> tuple[list[str], list[dict]]:
    """(metric columns with the primary metric first, rows in rank order)."""
    ct = dataset.task
    metric = ct.metric
    scores = (Score.objects.filter(submission__dataset=dataset, current=True,
                                   submission__state=Submission.SCORED)
              .select_related("submission__team")
              .only("primary", "result", "submission__id", "submission__kind",
                    "submission__created", "submission__team__name",
                    "submission__team__is_baseline", "submission__description"))
    by_team = defaultdict(list)
    for s in scores:
        by_team[s.submission.team_id].append(s)
    sign = 1 if ct.lower_is_better else -1
    chosen = []
    for team_scores in by_team.values():
        primary = [s for s in team_scores if s.submission.kind == Submission.PRIMARY]
        if primary:
            pick, how = primary[0], "primary"
        else:
            pick = min(team_scores, key=lambda s: (s.primary is None,
                                                   sign * (s.primary or 0), s.submission.created))
            how = "best"
        chosen.append((pick, how, len(team_scores)))
    chosen.sort(key=lambda c: (c[0].primary is None, sign * (c[0].primary or 0),
                               c[0].submission.team.name))
    columns: list[str] = [metric]
    for c in chosen:
        for k in scalar_metrics(c[0].result):
            if k not in columns:
                columns.append(k)
    out, rank, prev = [], 0, object()
    for i, (s, how, n) in enumerate(chosen, 1):
        if s.primary != prev:
            rank, prev = i, s.primary
        m = scalar_metrics(s.result)
        out.append({"rank": rank, "team": s.submission.team.name,
                    "baseline": s.submission.team.is_baseline, "run": how, "runs": n,
                    "submitted": s.submission.created.isoformat(),
                    "metrics": {k: m.get(k) for k in columns}})
    return columns, out
