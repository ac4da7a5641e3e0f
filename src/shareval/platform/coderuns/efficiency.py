"""Leaderboard efficiency columns: the resources of the final run whose output
a leaderboard row shows (None for rows from uploaded files)."""
from __future__ import annotations

from .models import CodeRun


def efficiency(submission_ids: list) -> dict:
    """{submission id: {"runtime_s", "cpu_s", "peak_mb"}} for outputs of code runs."""
    out = {}
    for sub, wall, cpu, peak in CodeRun.objects.filter(
            output_submission_id__in=submission_ids, state=CodeRun.OK) \
            .order_by("finished").values_list("output_submission_id", "wall_seconds",
                                              "cpu_seconds", "peak_mb"):
        out[sub] = {"runtime_s": wall, "cpu_s": cpu, "peak_mb": peak}
    return out
