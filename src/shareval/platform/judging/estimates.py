"""Each assessed run's precision, recall and F1 estimates, its status and its cost:
what the leaderboard, the run page and the benchmark read (docs/kbp-assessment.md).

A dataset's assessment campaign is its automatic question-chain campaign
(``auto: true``; at most one per dataset: judging/auto.py). Per output (one
per assessed run):

* precision: the run's on-demand importance estimate (judging/ondemand.py) once
  its main draws are all labelled, clipped to [0, 1] (importance sampling may
  overshoot in a finite sample; the raw value stays on the campaign page); until then the run is ``waiting``, with how
  many of the items drawn for it so far have their final label;
* recall: the share of the true relations of the finished exhaustively
  annotated documents that the run output (judging/recall.py), with its
  interval; None ("no recall documents yet") until a document is finished;
* F1: from the two independent estimates (assessment/combine.py: split
  normals fitted to both intervals, Monte Carlo, clipped to [0, 1]);
* cost: new judgments its own items took and their money at the campaign's
  rate, the items and judgments it reused (judging/costs.py).
"""
from __future__ import annotations

import hashlib
import math

from django.core.cache import caches
from django.db.models import Count, Max, Q

from shareval.assessment.combine import clipped, f1_interval

from shareval.platform.judging import costs, designs, ondemand, recall
from shareval.platform.judging.models import (
    Adjudication, Assignment, Campaign, Draw, Item, LateEvaluation, RunOutput
)

ESTIMATED, WAITING, NOT_ASSESSED = "estimated", "waiting", "not assessed"
MEASURES = ("precision", "recall", "f1")
NO_RECALL = "no recall documents yet"
ONE_DOCUMENT = "recall once two recall documents are finished (one so far)"


def assessment_campaign(dataset) -> Campaign | None:
    """The dataset's automatic campaign (the oldest, should there be several)."""
    for camp in Campaign.objects.filter(dataset=dataset, design=designs.CHAIN).order_by("pk"):
        if camp.config.get("auto") is True:
            return camp
    return None


def _recall(dataset, outputs: dict[str, set[str]]) -> tuple[dict[str, dict], int]:
    """(recall_table, documents still being annotated) from the recall campaigns."""
    return recall.recall_table(dataset, outputs), recall.pending_documents(dataset)


def waiting_note(judged: int, items: int) -> str:
    return f"waiting for judgments: {judged} of {items} item{'s' if items != 1 else ''} judged"


def dataset_estimates(dataset, confidence: float = 0.95) -> dict[str, dict]:
    """Output name -> row (see the module doc); {} without an automatic campaign.

    Kept in the ``boards`` cache under a fingerprint of everything the rows read
    (the board asks twice per request, the run page once): a judgment, an
    adjudication, a draw, a finished evaluation, a new output, a campaign's
    settings or a team's name give another fingerprint."""
    camp = assessment_campaign(dataset)
    if camp is None:
        return {}
    key = f"estimates:{dataset.pk}:{confidence}:{_fingerprint(dataset)}"
    cache = caches["boards"]
    rows = cache.get(key)
    if rows is None:
        rows = _estimates(dataset, camp, confidence)
        cache.set(key, rows, CACHED)
    return rows


CACHED = 3600


def _fingerprint(dataset) -> str:
    live = Q(item__campaign__dataset=dataset)
    state = [
        list(Campaign.objects.filter(dataset=dataset).order_by("pk").values_list(
            "pk", "created", "config", "judges_per_item", "title", "on_leaderboard")),
        Assignment.objects.filter(live, status=Assignment.DONE).aggregate(
            n=Count("pk"), last=Max("done"), top=Max("pk")),
        Adjudication.objects.filter(live).aggregate(n=Count("pk"), top=Max("pk")),
        Item.objects.filter(campaign__dataset=dataset).aggregate(n=Count("pk"), top=Max("pk")),
        list(LateEvaluation.objects.filter(campaign__dataset=dataset).order_by("pk")
             .values_list("pk", "stage", "estimate", "low", "high")),
        list(RunOutput.objects.filter(campaign__dataset=dataset).order_by("pk").values_list(
            "pk", "name", "submission_id", "submission__team__name")),
    ]
    return hashlib.sha256(repr(state).encode()).hexdigest()[:24]


def _estimates(dataset, camp, confidence: float) -> dict[str, dict]:
    outputs = list(camp.outputs.select_related("submission__team").order_by("pk"))
    evaluations = {ev.output_id: ev for ev in LateEvaluation.objects.filter(campaign=camp)}
    drawn: dict[int, set[str]] = {}
    for ev_id, key in Draw.objects.filter(evaluation__campaign=camp).values_list(
            "evaluation_id", "item__key"):
        drawn.setdefault(ev_id, set()).add(key)
    labels = ondemand.label_map(camp)
    spent = costs.campaign_costs(camp)
    cost_rows = {r["name"]: r for r in spent["rows"]}
    own_items: dict[str, int] = {}
    for drawn_by in Item.objects.filter(campaign=camp, drawn_for=ondemand.ONDEMAND) \
            .values_list("drawn_by", flat=True):
        for name in drawn_by:
            own_items[name] = own_items.get(name, 0) + 1
    recalls, pending_docs = _recall(dataset, {o.name: set(o.keys) for o in outputs if o.keys})
    out = {}
    for o in outputs:
        sub = o.submission
        row = {"name": o.name, "team": sub.team.name if sub else "",
               "submission": str(sub.pk) if sub else None, "campaign": camp.title,
               "campaign_id": camp.pk, "confidence": confidence, **_empty()}
        ev = evaluations.get(o.pk)
        if ev is None:
            row.update(status=NOT_ASSESSED, note="the run has no relation mentions to judge")
            out[o.name] = row
            continue
        items = drawn.get(ev.pk, set())
        judged = sum(k in labels for k in items)
        row.update(items=len(items), judged=judged, outcome=ev.outcome or None,
                   draws=ev.draws.filter(stage="main").count() if ev.stage == ev.DONE else None)
        if ev.stage != LateEvaluation.DONE:
            row.update(status=WAITING, note=waiting_note(judged, len(items)))
        elif ev.estimate is None:
            row.update(status=NOT_ASSESSED, note="no judged draw: the budget allowed no new "
                                                 "item")
        else:
            # the importance estimate may overshoot [0, 1] in a finite sample; the
            # unclipped value stays in the evaluation (and the campaign page)
            est, low, high = clipped((ev.estimate, ev.low, ev.high), "precision")
            row.update(status=ESTIMATED, precision=est, precision_low=low,
                       precision_high=high)
            _recall_and_f1(row, recalls.get(o.name), pending_docs, confidence)
        c = cost_rows.get(o.name, {})
        row["cost"] = {"new_items": own_items.get(o.name, 0),
                       "new_judgments": round(c.get("judgments", 0.0), 6),
                       "hours": c.get("hours", 0.0), "money": c.get("money", 0.0),
                       "reused_items": c.get("reused_items") or 0,
                       "reused_judgments": c.get("reused_judgments") or 0,
                       "saved": c.get("saved") or 0.0, "rate": spent["rate"]}
        out[o.name] = row
    return out


def _empty() -> dict:
    return {f"{m}{s}": None for m in MEASURES for s in ("", "_low", "_high")} | {
        "recall_documents": None, "note": ""}


def _recall_and_f1(row: dict, rec: dict | None, pending_docs: int, confidence: float) -> None:
    later = f"; {pending_docs} recall document{'s' if pending_docs != 1 else ''} being " \
            f"annotated" if pending_docs else ""
    if not rec or not all(finite(rec.get(k)) for k in ("recall", "recall_low",
                                                          "recall_high")):
        one = rec and finite(rec.get("recall")) and rec.get("documents") == 1
        # documents are the sampling unit: one says nothing of their spread
        row["note"] = (ONE_DOCUMENT if one else NO_RECALL) + later
        return
    row.update(recall=rec["recall"], recall_low=rec["recall_low"],
               recall_high=rec["recall_high"], recall_documents=rec.get("documents"),
               note=later.lstrip("; "))
    p = (row["precision"], row["precision_low"], row["precision_high"])
    r = (rec["recall"], rec["recall_low"], rec["recall_high"])
    try:
        row["f1"], row["f1_low"], row["f1_high"] = f1_interval(p, r, confidence)
    except ValueError as e:           # an interval that is not one (NaN): no F1
        row["note"] = f"F1 not estimated: {e}"


def finite(v) -> bool:
    """A real, finite number (not a bool, None, NaN or infinity)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def by_run(dataset) -> dict[str, dict]:
    """The rows keyed by their run's id (runs deleted since are left out)."""
    return {r["submission"]: r for r in dataset_estimates(dataset).values() if r["submission"]}
