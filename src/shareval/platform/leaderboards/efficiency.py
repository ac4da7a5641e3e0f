"""Leaderboard efficiency columns: the resources of the final run whose output
a leaderboard row shows (None for rows from uploaded files).

The three columns are named like metrics (``runtime_s``, ``cpu_s``, ``peak_mb``)
so that a dataset's ``board: columns:`` can choose them like any metric column
(``boards.shape``): with ``columns:`` given, only the efficiency
columns it names are shown, rounded to its precision; without it, all three are
shown whenever a row comes from a code run (pages show 2, 2 and 0 digits).

The numbers are part of the cached board rows (``cache.py``), so every write
of a code run that can change them gives its output run's dataset's team a new
board mark (``submissions.models.mark_runs``): the runner's final UPDATE
linking the output (``coderuns/runner.py``'s ``_finish``), and any save or
delete of a run that has an output (signals connected in this app's
``apps.py``: admin edits; a code submission deleted with its runs gives the
dataset a new token).
"""
from __future__ import annotations

from django.db.models import Q
from django.db.models.signals import post_delete, post_save

from shareval.platform.coderuns.models import CodeRun
from shareval.platform.competitions import board_marks
from shareval.platform.submissions.models import mark_runs

# column key -> (header, tooltip, default digits)
COLUMNS = {"runtime_s": ("Runtime (s)", "code submissions: the final run's wall time", 2),
           "cpu_s": ("CPU (s)", "code submissions: the final run's CPU time", 2),
           "peak_mb": ("Peak memory (MB)", "code submissions: the final run's peak memory", 0)}


def efficiency(submission_ids: list) -> dict:
    """{submission id: {"runtime_s", "cpu_s", "peak_mb"}} for outputs of code runs."""
    out = {}
    for sub, wall, cpu, peak in CodeRun.objects.filter(
            output_submission_id__in=submission_ids, state=CodeRun.OK) \
            .order_by("finished").values_list("output_submission_id", "wall_seconds",
                                              "cpu_seconds", "peak_mb"):
        out[sub] = {"runtime_s": wall, "cpu_s": cpu, "peak_mb": peak}
    return out


def attach(rows: list[dict], submission_ids: list) -> None:
    """Set each row's ``efficiency`` (None for uploaded files); one query."""
    eff = efficiency(submission_ids)
    for row, sub in zip(rows, submission_ids):
        row["efficiency"] = eff.get(sub)


def columns(board: dict, rows: list[dict]) -> list[dict]:
    """The efficiency columns a board shows (see the module doc); rounds the rows'
    values to the chosen precision and drops the values of columns not shown."""
    chosen = [c for c in (board.get("columns") or []) if c["metric"] in COLUMNS]
    if board.get("columns"):
        keys = [(c["metric"], c.get("precision")) for c in chosen]
    elif any(r.get("efficiency") for r in rows):
        keys = [(k, None) for k in COLUMNS]
    else:
        keys = []
    out = []
    for key, p in keys:
        head, title, digits = COLUMNS[key]
        out.append({"key": key, "label": head, "title": title,
                    "digits": digits if p is None else p})
    shown = {key: p for key, p in keys}
    for r in rows:
        e = r.get("efficiency")
        if e:        # as metric columns: rounded only to a precision the board gives
            r["efficiency"] = {k: (round(v, shown[k]) if isinstance(v, float) and
                                   shown[k] is not None else v)
                               for k, v in e.items() if k in shown} or None
    return out


def _run_written(sender, instance: CodeRun, **kw):
    mark_runs([instance.output_submission_id])


def _run_deleted(sender, instance: CodeRun, **kw):
    # deletes rebuild whole boards (see cache._deleted)
    if instance.output_submission_id:
        board_marks.bump(Q(submissions__pk=instance.output_submission_id))


def connect() -> None:
    post_save.connect(_run_written, sender=CodeRun, dispatch_uid="boards-coderun-save")
    post_delete.connect(_run_deleted, sender=CodeRun, dispatch_uid="boards-coderun-delete")
