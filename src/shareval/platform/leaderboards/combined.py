"""Combined boards: columns that combine a phase's datasets (bundle ``boards:``,
``bundles/boards_section.py``), as Codabench's computed columns do.

One row per team with a scored primary run on at least one of the board's
datasets; as in the official tables (``official.py``), only primary runs count.
For each column:

- ``mean``: the mean of the team's values of the metric over the board's datasets;
- ``mean_rank``: on each dataset, the teams with a value of the metric are ranked
  (best = 1; tied teams get the mean of the ranks they span: 1.5, 1.5); a team's
  value is the mean of its ranks over the datasets (lower is better).

A team without a scored primary run, or without a value of the metric, on one of
the datasets gets no combined value (never a partial mean) and a note naming the
dataset. Rows are ranked by the first column; ties share a rank (1, 1, 3); rows
without a value come last, by team name, without a rank.

Who sees what: a board never shows more than its datasets' boards show the same
viewer. Organizers see everything. Others see nothing of a phase whose leaderboard
is hidden; they see the values only when every dataset of the board shows them
scores (a blind phase before release, or one ``feedback: false`` dataset, hides the
whole board); a split dataset counts with the part its board shows them; and a
primary run its team took off the board is not read for them.
"""
from __future__ import annotations

import math

from shareval.platform.access import visibility as access
from shareval.platform.competitions.models import Dataset, Phase
from shareval.platform.leaderboards.rows import PARTS
from shareval.platform.submissions.models import Score, Submission

HIDDEN = ("Scores are hidden until the organizers release the results of every dataset "
          "of this board.")
DIGITS = 12          # combined values equal to 12 digits are a tie (float sums differ by order)


def combined_boards(phase: Phase, user=None, now=None) -> list[dict]:
    """The phase's combined boards as ``user`` may see them; ``user=None`` is the
    organizers' view (the report). Each board::

        {"slug", "title", "datasets": [slug...], "shown": bool,
         "columns": [{"key", "label"}],
         "rows": [{"team", "baseline", "values": {key: float|None}, "rank": int|None,
                   "notes": [str], "per_dataset": {dataset: {metric: float|None} | None},
                   "cells": [the values in column order]}],
         "notes": [str]}
    """
    organizer = user is None or phase.competition.is_organizer(user)
    if not organizer and not phase.leaderboard_public:
        return []
    out = []
    for spec in phase.combined_boards or []:
        out.append(board(phase, spec, user, organizer, now))
    return out


def board(phase: Phase, spec: dict, user, organizer: bool, now=None) -> dict:
    """One combined board (see :func:`combined_boards`)."""
    by_slug = {d.slug: d for d in Dataset.objects.filter(phase=phase, slug__in=spec["datasets"])
               .select_related("task", "phase__competition")}
    datasets = [by_slug[s] for s in spec["datasets"] if s in by_slug]
    columns = spec["columns"]
    out = {"slug": spec["slug"], "title": spec.get("title") or spec["slug"],
           "datasets": [d.slug for d in datasets],
           "columns": [{"key": c["key"], "label": c["label"]} for c in columns],
           "rows": [], "notes": [], "shown": True}
    gone = [s for s in spec["datasets"] if s not in by_slug]
    if gone:
        out["notes"].append(f"No longer in this phase: {', '.join(gone)}; the board "
                            f"combines the others only.")
    if not organizer and not all(access.leaderboard_shows_scores(user, d, now)
                                 for d in datasets):
        out["shown"] = False
        out["notes"].append(HIDDEN)
        return out
    metrics = list(dict.fromkeys(c["metric"] for c in columns))
    values, teams = {}, {}          # values[team][dataset slug][metric]
    for d in datasets:
        part = access.board_part(user, d, None, now)      # the part its board shows them
        if d.split:
            out["notes"].append(f"{d.slug}: the {part} part of the reference.")
        for team, name, baseline, m in _primaries(d, PARTS[part][1], organizer):
            teams[team] = (name, baseline)
            values.setdefault(team, {})[d.slug] = {k: _number((m or {}).get(k))
                                                   for k in metrics}
    rows = []
    for team, (name, baseline) in teams.items():
        per = values[team]
        notes = [f"no scored primary run on {d.slug}" for d in datasets if d.slug not in per]
        rows.append({"team": name, "baseline": baseline, "values": {}, "rank": None,
                     "notes": notes, "per_dataset": {d.slug: per.get(d.slug) for d in datasets}})
    for c in columns:
        _fill(rows, c, [d.slug for d in datasets])
    for c in columns:
        if rows and not any(v.get(c["metric"]) is not None for r in rows
                            for v in r["per_dataset"].values() if v):
            out["notes"].append(f"No primary run has a value of {c['metric']}: is it a metric "
                                f"of these datasets' tasks?")
    if any(c["combine"] == "mean_rank" for c in columns):
        out["notes"].append("Mean rank: on each dataset the teams with a value are ranked "
                            "(best = 1; tied teams share the mean of their ranks), then each "
                            "team's ranks are averaged over the datasets.")
    out["rows"] = _ranked(rows, columns[0] if columns else None)
    for r in out["rows"]:                        # the page's cells, in column order
        r["cells"] = [r["values"][c["key"]] for c in columns]
    return out


def _primaries(d: Dataset, field: str, organizer: bool):
    """(team id, name, baseline, metrics) of each team's current scored primary run."""
    qs = Score.objects.filter(submission__dataset=d, current=True,
                              submission__kind=Submission.PRIMARY,
                              submission__state=Submission.SCORED,
                              submission__disqualified="")
    if not organizer:                         # as the dataset's own board: runs off it unread
        qs = qs.filter(submission__on_board=True)
    seen = {}
    for team, name, baseline, m in qs.order_by("submission__created", "pk").values_list(
            "submission__team_id", "submission__team__name", "submission__team__is_baseline",
            field):
        seen[team] = (team, name, baseline, m)          # the latest, if ever several
    return list(seen.values())


def _fill(rows: list[dict], c: dict, datasets: list[str]) -> None:
    """Each row's value of column ``c`` and the notes of the rows without one."""
    metric, key, sign = c["metric"], c["key"], (1 if c["lower_is_better"] else -1)
    per_ds = {}
    for d in datasets:
        have = [(r["team"], v[metric]) for r in rows
                if (v := r["per_dataset"].get(d)) is not None and v.get(metric) is not None]
        per_ds[d] = dict(have)
        if c["combine"] == "mean_rank":
            per_ds[d] = average_ranks({t: sign * x for t, x in have})
    for r in rows:
        got = [per_ds[d].get(r["team"]) for d in datasets]
        if all(x is not None for x in got) and got:
            r["values"][key] = math.fsum(got) / len(got)
            continue
        r["values"][key] = None
        for d, x in zip(datasets, got):
            if x is None and r["per_dataset"].get(d) is not None:
                note = f"no value of {metric} on {d}"
                if note not in r["notes"]:
                    r["notes"].append(note)


def average_ranks(scores: dict) -> dict:
    """{key: rank}: the smallest score ranks 1; tied keys get the mean of the ranks
    they span (two tied for first: 1.5 each)."""
    order = sorted(scores, key=lambda k: scores[k])
    out, i = {}, 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        for k in order[i:j + 1]:
            out[k] = (i + 1 + j + 1) / 2
        i = j + 1
    return out


def _ranked(rows: list[dict], first: dict | None) -> list[dict]:
    """Rows by the first column (its direction; a mean rank: lower first), ties
    sharing a rank; rows without a value last, by name, without a rank."""
    if first is None:
        return sorted(rows, key=lambda r: r["team"].lower())
    lower = first["combine"] == "mean_rank" or first["lower_is_better"]
    sign = 1 if lower else -1

    def value(r):
        v = r["values"].get(first["key"])
        return None if v is None else round(v, DIGITS)

    rows.sort(key=lambda r: (value(r) is None, sign * (value(r) or 0), r["team"].lower()))
    rank, prev = 0, object()
    for i, r in enumerate(rows, 1):
        v = value(r)
        if v is None:
            r["rank"] = None
            continue
        if v != prev:
            rank, prev = i, v
        r["rank"] = rank
    return rows


def _number(v):
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) \
        and math.isfinite(v) else None
