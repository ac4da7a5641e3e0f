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

from shareval.platform.leaderboards import efficiency
from shareval.platform.submissions.models import Score, Submission

from shareval.platform.leaderboards import rows as leaderboard
from shareval.platform.leaderboards import unranked
from shareval.platform.leaderboards.rows import PARTS, _current_scored, _row, scalar_metrics
from shareval.platform.competitions.models import Dataset


def several(dataset: Dataset) -> bool:
    return (dataset.board or {}).get("runs") == "all"


def board_rows(dataset: Dataset, scores: bool, part: str = "public"):
    """(columns, rows) of the dataset's board: one row per team (``leaderboard.rows``)
    or, with ``runs: all``, several (:func:`all_rows`)."""
    return assemble(dataset, scores, entries(dataset, scores, part))


def entries(dataset: Dataset, scores: bool, part: str = "public", teams=None) -> dict:
    """{team id: [entries of its rows]} of the board's teams (of ``teams`` only, if
    given): a team's rows depend on its own runs and name only."""
    if several(dataset):
        return all_entries(dataset, scores, part, teams)
    return leaderboard.entries(dataset, scores, part, teams)


def assemble(dataset: Dataset, scores: bool, entries: dict) -> tuple[list[str], list[dict]]:
    """(columns, rows) from every team's :func:`entries`: ranks and columns."""
    if several(dataset):
        return all_assemble(dataset, scores, entries)
    return leaderboard.assemble(dataset, scores, entries)


def all_rows(dataset: Dataset, scores: bool, part: str = "public") -> tuple[list[str], list[dict]]:
    return all_assemble(dataset, scores, all_entries(dataset, scores, part))


def all_entries(dataset: Dataset, scores: bool, part: str = "public", teams=None) -> dict:
    """{team: its kept runs, in the team's order}; see the module doc."""
    limit = (dataset.board or {}).get("max_runs") or 10 ** 6
    task = dataset.task.task_name
    sign = 1 if dataset.task.lower_is_better else -1
    primary_field, metrics_field = PARTS[part]
    fields = ["pk", "submission__team_id", "submission__kind", "submission__created",
              "submission__factsheet__method", "submission_id", "submission__original_name"]
    if scores:
        fields.append(primary_field)
    by_team: dict[int, list[tuple]] = {}
    for row in _current_scored(dataset, teams).values_list(*fields):
        by_team.setdefault(row[1], []).append(row)
    names = leaderboard._teams(by_team)
    out: dict[int, list[dict]] = {}
    for team, runs in by_team.items():
        if scores:
            runs.sort(key=lambda r: (r[2] != Submission.PRIMARY, r[7] is None,
                                     sign * (r[7] or 0), r[3]))
        else:       # primary first, then latest: no score is read
            runs.sort(key=lambda r: r[3], reverse=True)
            runs.sort(key=lambda r: r[2] != Submission.PRIMARY)
        out[team] = [{"team": team, "kind": r[2], "runs": len(runs), "created": r[3],
                      "method": str(r[4]) if r[4] else "", "score": r[7] if scores else None,
                      "pk": r[0], "sub": r[5], "sid": str(r[5]),
                      **leaderboard.run_names(task, r[6]), **names[team]}
                     for r in runs[:limit]]
    if scores:
        kept = [e for es in out.values() for e in es]
        results = dict(Score.objects.filter(pk__in=[e["pk"] for e in kept])
                       .values_list("pk", metrics_field))
        eff = efficiency.efficiency([e["sub"] for e in kept])   # code runs' resources
        for e in kept:
            e["metrics"] = scalar_metrics({"metrics": results.get(e["pk"]) or {}})
            e["efficiency"] = eff.get(e["sub"])
        if not dataset.task.metric:        # no ranks: the board shows the runs' values
            unranked.add_values(out, dict(Score.objects.filter(pk__in=results).values_list(
                "pk", "result__breakdowns__value_counts")))
    return out


def all_assemble(dataset: Dataset, scores: bool, entries: dict) -> tuple[list[str], list[dict]]:
    kept = [e for es in entries.values() for e in es]
    metric = dataset.task.metric
    if not scores or not metric:       # by team, primary first, then latest: no ranks
        kept.sort(key=lambda e: (e["name"], e["kind"] != Submission.PRIMARY,
                                 -e["created"].timestamp()))
    if not scores:
        return [], [_with_method(_row(e, None, {}, "contrastive"), e["method"]) for e in kept]
    if metric:
        sign = 1 if dataset.task.lower_is_better else -1
        kept.sort(key=lambda e: (e["score"] is None, sign * (e["score"] or 0), e["name"],
                                 e["created"]))
    columns = leaderboard.metric_columns(metric, kept)
    out, rank, prev = [], 0, object()
    for i, e in enumerate(kept, 1):
        if e["score"] != prev:
            rank, prev = i, e["score"]
        row = _with_method(_row(e, rank if metric else None,
                                leaderboard.row_metrics(e["metrics"], columns), "contrastive"),
                           e["method"])
        row["efficiency"] = e["efficiency"]
        out.append(row)
    if not metric:            # each run's values; teams overlap on one-row boards only
        unranked.describe(out, kept, overlap=False)
    return columns, out


def _with_method(row: dict, method) -> dict:
    row["method"] = str(method) if method else ""
    return row


def shape(dataset: Dataset, columns: list[str], rows: list[dict]) -> tuple[list[str], dict]:
    """Apply the board's ``columns``: keep and order the chosen metric columns (the
    primary metric first), round each to its precision; returns (columns, precision)."""
    chosen = [c for c in (dataset.board or {}).get("columns") or []
              if c["metric"] not in efficiency.COLUMNS]     # those: efficiency.columns
    precision = {c["metric"]: c["precision"] for c in chosen if c.get("precision") is not None}
    if (dataset.board or {}).get("columns") and columns:
        primary = dataset.task.metric
        names = [primary] + [c["metric"] for c in chosen if c["metric"] != primary]
        columns[:] = names
        for r in rows:
            r["metrics"] = leaderboard.row_metrics(r["metrics"], names)
    for r in rows:
        for k, p in precision.items():
            v = r["metrics"].get(k)
            if isinstance(v, float):
                r["metrics"][k] = round(v, p)
    return columns, precision


def rule(ds: Dataset, shown: bool, several: bool) -> str:
    """The board's rule in words (pages and API)."""
    m = ds.task.metric
    if not m:
        runs = "several runs per team, its primary run first, then the latest" if several \
            else "its primary run if flagged, else its latest scored run"
        return (f"{runs}; by team name, not ranked: the task has no gold and no primary "
                f"metric, so the board shows what each run holds and how the teams overlap")
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
