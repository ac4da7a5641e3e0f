"""All results of a competition as CSV: one row per score (history included).
Text cells that a spreadsheet would run as a formula are escaped (``formats.spreadsheet``)."""
from __future__ import annotations

import csv
import io

from django.http import HttpResponse

from shareval.formats.spreadsheet import escape_formula
from shareval.platform.submissions.models import Submission

from shareval.platform.leaderboards.rows import scalar_metrics
from shareval.platform.competitions.models import Competition

FIXED = ["phase", "dataset", "task", "task_name", "team", "baseline", "submission", "kind",
         "state", "disqualified", "on_board", "method", "submitted", "file", "scorer_version",
         "reference_digest", "current", "scored_at"]


def results_csv(comp: Competition) -> str:
    subs = (Submission.objects.filter(dataset__phase__competition=comp)
            .select_related("team", "dataset__phase", "dataset__task")
            .prefetch_related("scores").order_by("dataset__phase__start", "created"))
    rows, metrics = [], []
    for s in subs:
        base = {"phase": s.dataset.phase.slug, "dataset": s.dataset.slug,
                "task": s.dataset.task.slug, "task_name": s.dataset.task.task_name,
                "team": s.team.name, "baseline": int(s.team.is_baseline), "submission": s.pk,
                "kind": s.kind, "state": s.state, "disqualified": s.disqualified,
                "on_board": int(s.on_board), "method": s.factsheet.get("method", ""),
                "submitted": s.created.isoformat(),
                "file": s.original_name}
        scores = list(s.scores.all()) or [None]
        for sc in scores:
            row = dict(base)
            if sc is not None:
                m = scalar_metrics(sc.result)
                if sc.private_result:          # organizers only: this file never reaches teams
                    m.update({f"private_{k}": v
                              for k, v in scalar_metrics(sc.private_result).items()})
                for k in m:
                    if k not in metrics:
                        metrics.append(k)
                row.update(scorer_version=sc.scorer_version, reference_digest=sc.reference_digest,
                           current=int(sc.current), scored_at=sc.created.isoformat(), **m)
            rows.append(row)
    out = io.StringIO()
    # \r\n (RFC 4180): the csv module quotes a field only if it holds a character of
    # the line terminator, so with "\n" a file name holding "\r" would split a row
    w = csv.DictWriter(out, fieldnames=FIXED + metrics, extrasaction="ignore",
                       lineterminator="\r\n")
    w.writeheader()
    w.writerows({k: escape_formula(v) for k, v in row.items()} for row in rows)
    return out.getvalue()


def csv_response(comp: Competition) -> HttpResponse:
    resp = HttpResponse(results_csv(comp), content_type="text/csv; charset=utf-8")
    resp["Content-Disposition"] = f'attachment; filename="{comp.slug}-results.csv"'
    return resp
