"""Boards of tasks with no primary metric (``rcc-fields-methods``: no gold exists).

Nothing ranks such runs, so the board says so and shows what there is: one row
per team (its primary run, else its latest scored run), by team name, no rank;
the task's descriptive metrics (distinct values, values per publication); each
run's most frequent values; and the overlap between teams, the Jaccard index of
their distinct value sets with the number of values they share. The value sets
come from each run's stored ``value_counts`` breakdown (the server scores these
runs with every value listed: ``submissions/scoring.py``), so no submission file
is read again.
"""
from __future__ import annotations

from shareval.platform.competitions.models import Dataset

TOP = 5                       # most frequent values shown per row


def ranked(dataset: Dataset) -> bool:
    return bool(dataset.task.metric)


def add_values(entries: dict, stored: dict) -> None:
    """Each entry's value set with its records, from its score's stored
    ``value_counts`` breakdown (``stored``: score pk -> breakdown)."""
    for es in entries.values():
        for e in es:
            counts = stored.get(e["pk"]) or {}
            e["values"] = {str(v): (r.get("records", 0) if isinstance(r, dict) else r)
                           for v, r in counts.items()}


def describe(rows: list[dict], chosen: list[dict], overlap: bool = True) -> None:
    """Give each row (built from the entry beside it) its most frequent values and,
    with ``overlap`` (one row per team), its overlap with every other row's team."""
    for row, e in zip(rows, chosen):
        values = e.get("values") or {}
        row["distribution"] = sorted(values.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP]
        row["distinct"] = len(values)
        if overlap:
            row["overlap"] = {o["name"]: overlap_of(values, o.get("values") or {})
                              for o in chosen if o is not e}


def overlap_of(a: dict, b: dict) -> dict:
    """Jaccard of two value sets (undefined, None, when both are empty) and the
    number of values they share."""
    union = len(a.keys() | b.keys())
    shared = len(a.keys() & b.keys())
    return {"jaccard": shared / union if union else None, "shared": shared}


def matrix(rows: list[dict]) -> list[dict]:
    """The board's overlap table: per row's team, its overlap with each team in order."""
    names = [r["team"] for r in rows]
    return [{"team": r["team"], "cells": [None if n == r["team"] else r["overlap"].get(n)
                                          for n in names]}
            for r in rows if "overlap" in r]
