"""What a given user may see of a submission, as one dict (API and pages share it)."""
from __future__ import annotations

import uuid

from django.db.models import Prefetch
from django.urls import reverse

from shareval.platform.access import visibility as access
from shareval.platform.labels import label, number, ordered, scalar_metrics
from shareval.platform.submissions import hooks, result_cache
from shareval.platform.submissions.models import Score, Submission
from shareval.platform.submissions.scoring import NON_FINITE_NAMES

ZERO = uuid.UUID(int=0)


def score_payload(sub: Submission, user, level: str | None = None) -> dict | None:
    level = level or access.score_level(user, sub)
    score = sub.current_score
    if score is None:
        return None
    if level == access.NONE:
        return {"hidden": "scores of this phase are not released yet"}
    out = {"scorer_version": score.scorer_version, "scored_at": score.created.isoformat(),
           "primary_metric": sub.dataset.task.metric, "metrics": shown_metrics(score.result),
           # where the number comes from (a judged E2E score names its campaign and rule)
           "official": (score.result.get("conventions") or {}).get("official", "")}
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
    m = result.get("metrics") or {}
    return {k: m[k] for k in ordered(m) if k in numbers or m[k] in NON_FINITE_NAMES}


def submission_payload(sub: Submission, user, organizer: bool | None = None,
                       level: str | None = None, assessment: bool = True) -> dict:
    """``organizer`` and ``level`` (:func:`access.score_level`) may be given when
    known, as for a list of many runs of one competition (:func:`list_payload`,
    which leaves out the ``assessment`` that apps above add: :func:`assessment_of`)."""
    ds = sub.dataset
    if organizer is None:
        organizer = ds.phase.competition.is_organizer(user)
    # a code run's output on hidden data: its team sees that it exists and its score
    # under the release rules, not its size, warnings, problems or the events' words
    # (all are read off hidden data: a scorer's message may quote the output)
    hidden = not organizer and from_code_run(sub)
    events = [{"state": e.state, "at": e.at.isoformat(),
               "message": HIDDEN_MESSAGE if hidden and e.message else e.message,
               **({"log": e.log} if organizer and e.log else {}),
               **({"organizer_only": True} if e.organizer_only else {})}
              for e in _listed(sub, "event_list", "events") if organizer or not e.organizer_only]
    d = {"id": str(sub.pk), "page": reverse("submission", args=[sub.pk]),
         "team": sub.team.name, "competition": ds.phase.competition.slug,
         "phase": ds.phase.slug, "dataset": ds.slug, "task": ds.task.slug,
         "task_name": ds.task.task_name, "kind": sub.kind, "state": sub.state,
         "file": sub.original_name, "size": None if hidden else sub.size,
         "description": sub.description, "created": sub.created.isoformat(),
         "problems": [] if hidden else sub.problems,
         "warnings": [] if hidden else sub.warnings,
         "events": events, "score": score_payload(sub, user, level),
         "factsheet": sub.factsheet, "on_board": sub.on_board,
         "disqualified": sub.disqualified or None}
    if organizer:
        d["history"] = [{"scorer_version": s.scorer_version, "reference": s.reference_digest[:12],
                         "current": s.current, "created": s.created.isoformat(),
                         "metrics": scalar_metrics(s.result),
                         **({"private_metrics": scalar_metrics(s.private_result)}
                            if s.private_result else {})}
                        for s in _listed(sub, "score_list", "scores")]
    if assessment:
        found = assessment_of(sub, level or access.score_level(user, sub))
        if found is not None:
            d["assessment"] = found
    return d


def assessment_of(sub: Submission, level: str) -> dict | None:
    """The run's assessment by judges (``hooks.run_assessment``: its estimates and its
    cost) under the rules of its scores: hidden while they are (a blind phase)."""
    for fn in hooks.run_assessment:
        found = fn(sub)
        if found is not None:
            return found if access.at_least(level, access.TOP) else {
                "hidden": "the assessment by judges is shown once scores are released"}
    return None


HIDDEN_MESSAGE = "(details are shown to the organizers: this output was made from hidden data)"


def from_code_run(sub: Submission) -> bool:
    """Whether ``sub`` is the output of a code submission's final run."""
    cached = getattr(sub, "code_run_list", None)
    return bool(cached) if cached is not None else sub.code_runs.exists()


def _listed(sub: Submission, attr: str, related: str):
    """The run's events or scores: the list :func:`list_payload` prefetched (no
    queryset per run: at 50 runs, building them cost more than the queries), else
    the related manager."""
    cached = getattr(sub, attr, None)
    return cached if cached is not None else getattr(sub, related).all()


def list_payload(subs, user) -> list[dict]:
    """:func:`submission_payload` of many runs that ``user`` may see (their team's,
    or as organizer), with scores and events prefetched and the organizer check
    and the visibility level decided once per competition and dataset."""
    # the team, dataset, phase, competition and task read once each and shared by
    # the runs (select_related builds five objects per run), scores and events as lists
    subs = list(subs.select_related(None).prefetch_related(
        "team", "dataset__phase__competition", "dataset__task",
        # results decoded once per process (result_cache.py), per-unit statistics unread
        Prefetch("scores", Score.objects.defer("result", "unit_stats"), to_attr="score_list"),
        Prefetch("events", to_attr="event_list"),
        Prefetch("code_runs", to_attr="code_run_list")))
    result_cache.fill([s for sub in subs for s in sub.score_list])
    roles: dict = {}
    out = []
    for sub in subs:
        level = access.list_level(user, sub, roles)       # fills roles[competition]
        organizer = roles[sub.dataset.phase.competition_id][0]
        out.append(submission_payload(sub, user, organizer, level, assessment=False))
    return out


def run_rows(subs, user) -> list[dict]:
    """The rows of a team's list of runs: each run with its primary metric's value
    as ``user`` may see it (``hidden`` when scored but not released). Three queries
    for any number of runs: the runs, the metrics of their current scores (not the
    whole results), the visibility level once per dataset."""
    subs = list(subs)
    metrics: dict = {}
    for sid, created, m in (Score.objects.filter(submission__in=[s.pk for s in subs],
                                                 current=True)
                            .values_list("submission_id", "created", "result__metrics")):
        if sid not in metrics or created > metrics[sid][0]:        # the newest current one
            metrics[sid] = (created, m or {})
    roles: dict = {}
    rows = []
    url = reverse("submission", args=[ZERO]).replace(str(ZERO), "{}")     # one reverse
    for s in subs:
        metric = s.dataset.task.metric
        value, hidden = None, False
        if s.pk in metrics:
            hidden = access.list_level(user, s, roles) == access.NONE
            if not hidden:
                value = shown_metrics({"metrics": metrics[s.pk][1]}).get(metric)
        rows.append({"sub": s, "value": value, "metric": metric, "hidden": hidden,
                     "url": url.format(s.pk)})
    return rows


def comparison_view(comparison: dict | None) -> dict | None:
    """The stored significance comparison with the team's earlier run, in words: the
    two values, the difference with its interval, both p-values, the number of
    paired units and the decision (``stats.decision``: the randomization test
    decides, and fewer than ``stats.MIN_UNITS`` units decide nothing)."""
    from shareval.stats import ALPHA, MIN_UNITS, decision
    if not comparison or comparison.get("unavailable"):
        return comparison
    m, metric = comparison.get("metrics") or {}, comparison.get("metric") or ""
    units = comparison.get("units")
    rows = [("This run (A)", metric, m.get(f"{metric} A")),
            ("Previous best (B)", metric, m.get(f"{metric} B")),
            ("difference", metric, m.get("difference")),
            ("ci_low", metric, m.get("ci_low")), ("ci_high", metric, m.get("ci_high")),
            ("p_randomization", "p", m.get("p_randomization")),
            ("p_bootstrap", "p", m.get("p_bootstrap"))]
    few = units is not None and units < MIN_UNITS             # the decision says so
    return {"previous": comparison.get("previous"), "metric": metric, "units": units,
            "units_note": "" if units is None or few else
            f"{units} paired unit{'s' if units != 1 else ''}.",
            "rows": [{"key": k, "label": label(k), "value": number(v)} for k, _, v in rows],
            "decision": decision(units, m.get("p_randomization")),
            "rule": f"the paired randomization test decides (p < {ALPHA}, with at least "
                    f"{MIN_UNITS} paired units); the paired bootstrap gives the 95% interval "
                    f"of the difference"}
