"""Board options of a dataset (bundle ``board:``) beyond one row per team.

``runs: all`` lists several runs per team, as overview papers do: each team's
primary run first, then its other scored runs (best first when scores are
shown, latest first when they are hidden), at most ``max_runs`` per team;
rows are ranked together by the primary metric (ties share a rank). With
scores hidden, the rows go by team name, primary first, then by date: as in
``leaderboard.blind_rows``, nothing about them depends on a score.

``columns`` chooses the metric columns and their order (the primary metric
always comes first) and the digits each shows; a column left out is not sent
at all. Disqualified runs and runs a team took off the board are never read.

Two queries, as in ``leaderboard.rows``: narrow tuples, then the metrics of
the rows kept.
"""
from __future__ import annotations

from shareval.platform.submissions.models import Score, Submission

from . import leaderboard
from .leaderboard import PARTS, _current_scored, _row, scalar_metrics
from .models import Dataset, Team


def board_rows(dataset: Dataset, scores: bool, part: str = "public"):
    """(columns, rows) of the dataset's board: one row per team (``leaderboard.rows``)
    or, with ``runs: all``, several (:func:`all_rows`)."""
    if (dataset.board or {}).get("runs") == "all":
        return all_rows(dataset, scores, part)
    return leaderboard.rows(dataset, scores=scores, part=part)


def all_rows(dataset: Dataset, scores: bool, part: str = "public") -> tuple[list[str], list[dict]]:
    board = dataset.board or {}
    limit = board.get("max_runs") or 10 ** 6
    ct = dataset.task
    sign = 1 if ct.lower_is_better else -1
    primary_field, metrics_field = PARTS[part]
    fields = ["pk", "submission__team_id", "submission__kind", "submission__created",
              "submission__factsheet__method"]
    if scores:
        fields.append(primary_field)
    by_team: dict[int, list[tuple]] = {}
    for row in _current_scored(dataset).values_list(*fields):
        by_team.setdefault(row[1], []).append(row)
    teams = {t.pk: t for t in Team.objects.filter(pk__in=by_team)}
    kept = []
    for team, runs in by_team.items():
        if scores:
            runs.sort(key=lambda r: (r[2] != Submission.PRIMARY, r[5] is None,
                                     sign * (r[5] or 0), r[3]))
        else:       # primary first, then latest: no score is read
            runs.sort(key=lambda r: r[3], reverse=True)
            runs.sort(key=lambda r: r[2] != Submission.PRIMARY)
        kept += [(r, len(runs)) for r in runs[:limit]]
    if not scores:
        kept.sort(key=lambda k: (teams[k[0][1]].name, k[0][2] != Submission.PRIMARY,
                                 -k[0][3].timestamp()))
        return [], [_with_method(_row(teams[r[1]], None, r[2], n, r[3], {}, "contrastive"), r[4])
                    for r, n in kept]
    kept.sort(key=lambda k: (k[0][5] is None, sign * (k[0][5] or 0), teams[k[0][1]].name,
                             k[0][3]))
    results = dict(Score.objects.filter(pk__in=[r[0] for r, _ in kept])
                   .values_list("pk", metrics_field))
    columns = [ct.metric]
    metrics = {}
    for r, _ in kept:
        metrics[r[0]] = scalar_metrics({"metrics": results.get(r[0]) or {}})
        columns += [k for k in metrics[r[0]] if k not in columns]
    out, rank, prev = [], 0, object()
    for i, (r, n) in enumerate(kept, 1):
        if r[5] != prev:
            rank, prev = i, r[5]
        out.append(_with_method(_row(teams[r[1]], rank, r[2], n, r[3],
                                     {k: metrics[r[0]].get(k) for k in columns}, "contrastive"),
                                r[4]))
    return columns, out


def _with_method(row: dict, method) -> dict:
    row["method"] = str(method) if method else ""
    return row


def shape(dataset: Dataset, columns: list[str], rows: list[dict]) -> tuple[list[str], dict]:
    """Apply the board's ``columns``: keep and order the chosen metric columns (the
    primary metric first), round each to its precision; returns (columns, precision)."""
    chosen = (dataset.board or {}).get("columns") or []
    precision = {c["metric"]: c["precision"] for c in chosen if c.get("precision") is not None}
    if chosen and columns:
        primary = dataset.task.metric
        names = [primary] + [c["metric"] for c in chosen if c["metric"] != primary]
        columns[:] = names
        for r in rows:
            r["metrics"] = {k: r["metrics"].get(k) for k in names}
    for r in rows:
        for k, p in precision.items():
            v = r["metrics"].get(k)
            if isinstance(v, float):
                r["metrics"][k] = round(v, p)
    return columns, precision


def rule(ds: Dataset, shown: bool, several: bool) -> str:
    """The board's rule in words (pages and API)."""
    m = ds.task.metric
    if several:
        n = (ds.board or {}).get("max_runs")
        runs = f"up to {n} runs per team" if n else "every scored run of each team"
        return (f"{runs}, its primary run first; ranked by {m}, ties share a rank" if shown else
                f"{runs}, its primary run first, then the latest; by team name, no ranks, "
                f"since nothing may depend on unreleased scores")
    return (f"its primary run if flagged, else its best run by {m}; ranked by {m}, ties "
            f"share a rank") if shown else (
        "its primary run if flagged, else its latest scored run; by team name, no ranks, "
        "since nothing may depend on unreleased scores")
