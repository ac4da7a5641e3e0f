"""All results of a competition as CSV: one row per score (history included)."""
from __future__ import annotations

import csv
import io

from django.http import HttpResponse

from shareval.platform.submissions.models import Submission

from .leaderboard import scalar_metrics
from .models import Competition

FIXED = ["phase", "dataset", "task", "task_name", "team", "baseline", "submission", "kind",
         "state", "submitted", "file", "scorer_version", "reference_digest", "current",
         "scored_at"]


def results_csv(comp: Competition) -> str:
    subs = (Submission.objects.filter(dataset__phase__competition=comp)
            .select_related("team", "dataset__phase", "dataset__task")
            .prefetch_related("scores").order_by("dataset__phase__start", "created"))
    rows, metrics = [], []
    for s in subs:
        base = {"phase": s.dataset.phase.slug, "dataset": s.dataset.slug,
                "task": s.dataset.task.slug, "task_name": s.dataset.task.task_name,
                "team": s.team.name, "baseline": int(s.team.is_baseline), "submission": s.pk,
                "kind": s.kind, "state": s.state, "submitted": s.created.isoformat(),
                "file": s.original_name}
        scores = list(s.scores.all()) or [None]
        for sc in scores:
            row = dict(base)
            if sc is not None:
                m = scalar_metrics(sc.result)
                for k in m:
                    if k not in metrics:
                        metrics.append(k)
                row.update(scorer_version=sc.scorer_version, reference_digest=sc.reference_digest,
                           current=int(sc.current), scored_at=sc.created.isoformat(), **m)
            rows.append(row)
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=FIXED + metrics, extrasaction="ignore",
                       lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return out.getvalue()


def csv_response(comp: Competition) -> HttpResponse:
    resp = HttpResponse(results_csv(comp), content_type="text/csv; charset=utf-8")
    resp["Content-Disposition"] = f'attachment; filename="{comp.slug}-results.csv"'
    return resp
