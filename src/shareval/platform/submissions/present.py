"""What a given user may see of a submission, as one dict (API and pages share it)."""
from __future__ import annotations

from django.urls import reverse

from ..competitions import access
from ..competitions.leaderboard import scalar_metrics
from .models import Submission
from .scoring import NON_FINITE_NAMES


def score_payload(sub: Submission, user, level: str | None = None) -> dict | None:
    level = level or access.score_level(user, sub)
    score = sub.current_score
    if score is None:
        return None
    if level == access.NONE:
        return {"hidden": "scores of this phase are not released yet"}
    out = {"scorer_version": score.scorer_version, "scored_at": score.created.isoformat(),
           "primary_metric": sub.dataset.task.metric, "metrics": shown_metrics(score.result)}
    if access.at_least(level, access.DETAILED):
        r = score.result
        out.update(breakdowns=r.get("breakdowns", {}), counts=r.get("counts", {}),
                   conventions=r.get("conventions", {}), warnings=r.get("warnings", []),
                   comparison=score.comparison,
                   plots=[reverse("submission-plot", args=[sub.pk, p]) for p in score.plots])
    else:
        out["detail"] = "detailed results are not released yet"
    if sub.dataset.split:
        out["part"] = "public"
        if access.at_least(level, access.TOP) and (
                access.private_released(sub.dataset) or
                sub.dataset.phase.competition.is_organizer(user)) and score.private_result:
            out["private"] = {"metrics": shown_metrics(score.private_result),
                              "conventions": score.private_result.get("conventions", {})}
        else:
            out["private"] = {"hidden": "scored; shown once the organizers release the results"}
    return out


def shown_metrics(result: dict) -> dict:
    """The numeric metrics, non-finite ones included (as their strings), in order."""
    numbers = scalar_metrics(result)
    return {k: v for k, v in (result.get("metrics") or {}).items()
            if k in numbers or v in NON_FINITE_NAMES}


def submission_payload(sub: Submission, user) -> dict:
    ds = sub.dataset
    organizer = ds.phase.competition.is_organizer(user)
    events = [{"state": e.state, "at": e.at.isoformat(), "message": e.message,
               **({"log": e.log} if organizer and e.log else {}),
               **({"organizer_only": True} if e.organizer_only else {})}
              for e in sub.events.all() if organizer or not e.organizer_only]
    d = {"id": str(sub.pk), "page": reverse("submission", args=[sub.pk]),
         "team": sub.team.name, "competition": ds.phase.competition.slug,
         "phase": ds.phase.slug, "dataset": ds.slug, "task": ds.task.slug,
         "task_name": ds.task.task_name, "kind": sub.kind, "state": sub.state,
         "file": sub.original_name, "size": sub.size, "description": sub.description,
         "created": sub.created.isoformat(), "problems": sub.problems, "warnings": sub.warnings,
         "events": events, "score": score_payload(sub, user),
         "factsheet": sub.factsheet, "on_board": sub.on_board,
         "disqualified": sub.disqualified or None}
    if organizer:
        d["history"] = [{"scorer_version": s.scorer_version, "reference": s.reference_digest[:12],
                         "current": s.current, "created": s.created.isoformat(),
                         "metrics": scalar_metrics(s.result),
                         **({"private_metrics": scalar_metrics(s.private_result)}
                            if s.private_result else {})} for s in sub.scores.all()]
    return d
