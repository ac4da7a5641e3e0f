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
``leaderboards/cache.py``); ``part`` chooses the public or private part of a split
dataset's scores.

Four queries: the database picks each team's row (a window function over the
team's current scores, ordered by the rule above) and counts its runs, the
teams' names, the metrics of the picked rows only, so the cost grows with the
number of submissions but not with the size of their results, and Python sees
one row per team; then the resources of the code runs behind the picked rows
(``leaderboards/efficiency.py``). They build each team's *entry* (:func:`entries`,
for all teams or only some), and :func:`assemble` ranks the entries: a cached
board rebuilds only the entries of the teams that changed (``leaderboards/cache.py``).
"""
from __future__ import annotations

from django.db.models import Case, Count, F, IntegerField, Value, When, Window
from django.db.models.functions import RowNumber

from shareval.formats.archive import parse_archive_name
from shareval.platform.leaderboards import efficiency
from shareval.platform.labels import interval_bound, ordered, scalar_metrics
from shareval.platform.submissions.models import Score, Submission

from shareval.platform.leaderboards import unranked
from shareval.platform.competitions.models import Dataset, Team


def metric_columns(metric: str, entries) -> list[str]:
    """The board's metric columns: the primary metric (if the task has one) first,
    then every metric of the entries in the declared order. An interval's bounds
    (``x_low``, ``x_high`` beside ``x``: judged estimates) are no columns of their own:
    the judged columns show each estimate with its interval."""
    keys = {k: None for e in entries for k in e["metrics"]}
    keys = [k for k in keys if not interval_bound(k, keys)]
    return ordered(keys + ([metric] if metric else []), first=metric)


def row_metrics(metrics: dict, columns: list[str]) -> dict:
    """A row's values of the board's columns, each with its interval's bounds when it
    has one (``x_low``, ``x_high``: judged estimates, shown in x's cell)."""
    out = {}
    for k in columns:
        out[k] = metrics.get(k)
        for b in (f"{k}_low", f"{k}_high"):
            if b in metrics:
                out[b] = metrics[b]
    return out


def _current_scored(dataset: Dataset, teams=None):
    qs = Score.objects.filter(submission__dataset=dataset, current=True,
                              submission__state=Submission.SCORED,
                              submission__disqualified="", submission__on_board=True)
    return qs if teams is None else qs.filter(submission__team_id__in=list(teams))


# the score fields a board reads: the public part (every dataset) or the private one
PARTS = {"public": ("primary", "result__metrics"),
         "private": ("private_primary", "private_result__metrics")}


def _not_primary():
    return Case(When(submission__kind=Submission.PRIMARY, then=Value(0)), default=Value(1),
                output_field=IntegerField())


def _first_per_team(dataset: Dataset, order: list, teams=None, *fields: str):
    """(team, team's scored runs, kind, created, *fields) of each team's first
    current scored run in ``order`` (of ``teams`` only, if given)."""
    team = [F("submission__team_id")]
    return (_current_scored(dataset, teams)
            .annotate(rn=Window(RowNumber(), partition_by=team, order_by=order),
                      n=Window(Count("pk"), partition_by=team))
            .filter(rn=1).order_by()
            .values_list("submission__team_id", "n", "submission__kind", "submission__created",
                         *fields))


def rows(dataset: Dataset, scores: bool = True,
         part: str = "public") -> tuple[list[str], list[dict]]:
    """(metric columns with the primary metric first, rows); see the module doc.

    ``scores=False`` is the board with scores hidden (:func:`blind_rows`)."""
    return assemble(dataset, scores, entries(dataset, scores, part))


def entries(dataset: Dataset, scores: bool = True, part: str = "public",
            teams=None) -> dict[int, list[dict]]:
    """{team id: [its row's entry]} for every team with a current scored run on
    the board, or for ``teams`` only: what :func:`assemble` ranks. A team's entry
    depends on its own runs and name only, so a cached board replaces the entries
    of the teams that changed (``leaderboards/cache.py``)."""
    if not scores:
        return _blind_entries(dataset, teams)
    ct = dataset.task
    primary_field, metrics_field = PARTS[part]
    score = F(primary_field).asc(nulls_last=True) if ct.lower_is_better else \
        F(primary_field).desc(nulls_last=True)
    order = [_not_primary(), score, F("submission__created").asc(), F("pk").asc()] \
        if ct.metric else [_not_primary(), F("submission__created").desc(), F("pk").desc()]
    picked: dict[int, dict] = {}
    for team, n, kind, created, pk, primary, file in _first_per_team(
            dataset, order, teams, "pk", primary_field, "submission__original_name"):
        picked[pk] = {"team": team, "kind": kind, "runs": n, "created": created,
                      "score": primary, "pk": pk, **run_names(ct.task_name, file)}
    names = _teams(e["team"] for e in picked.values())
    subs = []
    for pk, sub, m in Score.objects.filter(pk__in=picked) \
            .values_list("pk", "submission_id", metrics_field):
        picked[pk]["metrics"] = scalar_metrics({"metrics": m or {}})
        subs.append((picked[pk], sub))
    # code submissions: the resources of the run that produced each row's output
    eff = efficiency.efficiency([sub for _, sub in subs])
    out = {}
    for e, sub in subs:
        e.update(names[e["team"]], efficiency=eff.get(sub), sid=str(sub))
        out[e["team"]] = [e]
    if not ct.metric:                      # no ranks: the board shows the runs' values
        unranked.add_values(out, dict(Score.objects.filter(pk__in=picked).values_list(
            "pk", "result__breakdowns__value_counts")))
    return out


def _blind_entries(dataset: Dataset, teams=None) -> dict[int, list[dict]]:
    task = dataset.task.task_name
    picked = {team: {"team": team, "kind": kind, "runs": n, "created": created,
                     **run_names(task, file), "sid": str(sid)}
              for team, n, kind, created, file, sid in _first_per_team(
                  dataset, [_not_primary(), F("submission__created").desc(), F("pk").desc()],
                  teams, "submission__original_name", "submission_id")}
    names = _teams(picked)
    return {t: [dict(e, **names[t])] for t, e in picked.items()}


def _teams(ids) -> dict[int, dict]:
    return {pk: {"name": name, "baseline": baseline} for pk, name, baseline in
            Team.objects.filter(pk__in=set(ids)).values_list("pk", "name", "is_baseline")}


def assemble(dataset: Dataset, scores: bool, entries: dict) -> tuple[list[str], list[dict]]:
    """(columns, rows) of a one-row-per-team board from its teams' :func:`entries`:
    ranked by score (ties share a rank, then by team name), or by team name when
    scores are hidden."""
    chosen = [e[0] for e in entries.values()]
    if not scores:
        chosen.sort(key=lambda e: e["name"])
        return [], [_row(e, None, {}, "latest") for e in chosen]
    ct = dataset.task
    sign = 1 if ct.lower_is_better else -1
    chosen.sort(key=lambda e: (e["name"],) if not ct.metric else
                (e["score"] is None, sign * (e["score"] or 0), e["name"]))
    columns = metric_columns(ct.metric, chosen)
    out, rank, prev = [], 0, object()
    for i, e in enumerate(chosen, 1):
        if e["score"] != prev:
            rank, prev = i, e["score"]
        row = _row(e, rank if ct.metric else None, row_metrics(e["metrics"], columns),
                   "best" if ct.metric else "latest")
        row["efficiency"] = e["efficiency"]
        out.append(row)
    if not ct.metric:
        unranked.describe(out, chosen)
    return columns, out


def blind_rows(dataset: Dataset) -> list[dict]:
    """Rows by team name, each the team's primary run if scored, else its latest
    scored run; no ranks, no metrics. The query does not even read the scores."""
    return assemble(dataset, False, _blind_entries(dataset))[1]


def _row(e: dict, rank, metrics: dict, fallback: str) -> dict:
    """A board row from an entry (team, name, baseline, kind, runs, created, the
    run's name and id). ``id`` is the run's: the API and the page keep it only
    for viewers who may open that run (``payloads.leaderboard_payload``)."""
    return {"rank": rank, "team": e["name"], "baseline": e["baseline"],
            "run": "primary" if e["kind"] == Submission.PRIMARY else fallback,
            "run_name": e.get("run_name", ""), "run_file": e.get("run_file", ""),
            "id": e.get("sid"),
            "runs": e["runs"], "submitted": e["created"].isoformat(), "metrics": metrics}


def run_names(task_name: str, file: str) -> dict[str, str]:
    """A run's own name on a board (``run_name``) and its canonical file name
    (``run_file``). MATERIAL names its files after the system (plan 8.2.1): a
    canonical ``<TeamID>_<Task>-…-<SysLabel>_…_<Timestamp>.tgz`` gives its SysLabel
    and the whole name, a web upload's ``<SysLabel>.tgz`` its label. Other file
    names stay private to the team and the organizers: empty."""
    fields = parse_archive_name(file or "") if task_name.startswith("material-") else ""
    if isinstance(fields, str):
        return {"run_name": "", "run_file": ""}
    return {"run_name": fields["sys"], "run_file": file if "task" in fields else ""}
