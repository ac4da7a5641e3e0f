"""On-demand evaluation in the server: a late submission joins a campaign
(spec 002's monthly protocol; Chaganty, Paranjape, Liang and Manning 2017).

The campaign's precision items were drawn per team (``drawn_by``): those are
the earlier submissions' draws. A late submission's output X_new is added to
the mixture; its draws are uniform (with replacement) from X_new and go
through ``assessment.ondemand.OnDemand``'s two stages, asynchronously:

1. pilot: ``pilot`` draws. An item the campaign already holds keeps its
   judgments (reused, no new work); a new one becomes an item for the judges.
2. once every pilot item has its final label, the pilot predicts the variance
   and fixes n, the main draws (at least ``pilot``); they become items too,
   except that a budget stops adding *new* items once the next one's
   judgments would exceed it (the outcome is then ``budget``).
3. once every main item has its label, the importance estimate over every
   labelled draw (earlier teams' and the late main draws; the pilot only chose
   n) gives the precision and its interval (outcome ``reached`` when the
   half-width is at most the target, else ``short``). There is no third
   stage: redrawing when a main stage falls short accepts or rejects stages by
   their own interval, a stopping rule that biases the estimate (measured:
   -0.0067, 4 s.e., over 200 late evaluations on the demo data). Instead n is
   planned for ``PLAN`` times the target half-width.

An item's label is the mean of its judges' verdicts (or the adjudicated
one) once it has ``k`` judgments or an adjudication; draws of items not
labelled yet (an earlier team's item still waiting) are left out, which does
not depend on the labels. Late items have ``drawn_for = "ondemand"``: the
design (Hajek) estimator of the other teams never counts them.
"""
from __future__ import annotations

import numpy as np
from django.db import transaction
from django.utils import timezone

from shareval.assessment.ondemand import OnDemand

from shareval.platform.judging import content, designs
from shareval.platform.judging.build import team_runs, unit_payload
from shareval.platform.judging.models import (
    Assignment, Campaign, Draw, Item, LateEvaluation, RunOutput
)
from shareval.platform.judging.service import final_answers

ONDEMAND = "ondemand"
MAX_DRAWS = 10_000
PLAN = 0.85              # stage 2 is planned for 85% of the target half-width (measured:
                         # the pilot's variance prediction is optimistic; bench/judging_ondemand)


class LateError(ValueError):
    pass


def precision_design(campaign: Campaign) -> bool:
    return campaign.design in (designs.CHAIN, designs.RELEVANCE)


# outputs and labels --------------------------------------------------------------------

def _units(campaign: Campaign, submission) -> dict[str, content.Unit]:
    res = content.Resources(campaign.dataset)
    return content.run_units(campaign.dataset.task.task_name, submission.path, res)


def ensure_outputs(campaign: Campaign) -> None:
    """The earlier teams' outputs, from their runs, for campaigns built before outputs
    were stored (an items-file campaign has none: on-demand needs runs)."""
    if campaign.outputs.exists():
        return
    runs = team_runs(campaign.dataset)
    for team in campaign.config.get("sizes", {}):
        if team in runs:
            RunOutput.objects.get_or_create(campaign=campaign, name=team, defaults={
                "submission": runs[team], "keys": sorted(_units(campaign, runs[team]))})


def label_map(campaign: Campaign) -> dict[str, float]:
    """item key -> final label in [0, 1], for items judged k times or adjudicated."""
    out: dict[str, list[float]] = {}
    for e in final_answers(campaign).values():
        item = e["item"]
        if item.gold is not None:
            continue
        adj = e["adjudication"]
        votes = [adj.decision] if adj is not None else list(e["answers"].values())
        if adj is None and len(votes) < campaign.judges_per_item:
            continue
        field = "correct" if campaign.design == designs.CHAIN else "relevant"
        out.setdefault(item.key, []).append(float(np.mean([bool(v[field]) for v in votes])))
    return {k: float(np.mean(v)) for k, v in out.items()}


def _state(campaign: Campaign, labels: dict, upto: LateEvaluation | None) -> OnDemand:
    """OnDemand holding every output and every labelled draw so far (earlier teams'
    items, finished late evaluations' main draws); ``upto`` itself records none."""
    od = OnDemand(seed=0, weights=campaign.config.get("weights", "heuristic"))
    for o in campaign.outputs.order_by("pk"):
        if o.keys:
            od.add(o.name, o.keys)
    od.labels = dict(labels)
    names = set(od.outputs)
    for key, drawn_by in Item.objects.filter(campaign=campaign, drawn_for="precision",
                                             gold__isnull=True).values_list("key", "drawn_by"):
        if key in labels:
            od.draws += [(key, j) for j in drawn_by if j in names]
    done = LateEvaluation.objects.filter(campaign=campaign, stage=LateEvaluation.DONE)
    if upto is not None:
        done = done.exclude(pk=upto.pk)
    for d in Draw.objects.filter(evaluation__in=done, stage="main").select_related(
            "item", "evaluation__output"):
        if d.item.key in labels:
            od.draws.append((d.item.key, d.evaluation.output.name))
    return od


# adding a late submission --------------------------------------------------------------

@transaction.atomic
def add_late(campaign: Campaign, submission, half_width: float = 0.05,
             budget: float | None = None, pilot: int = 50, seed: int = 0,
             name: str | None = None) -> LateEvaluation:
    """``name``: the output's name in the campaign (default: the team's; automatic
    assessment names one output per run: judging/auto.py)."""
    if not precision_design(campaign):
        raise LateError("on-demand evaluation estimates precision: question-chain and "
                        "summary-relevance campaigns only")
    if submission.dataset_id != campaign.dataset_id or submission.state != "scored":
        raise LateError("choose a scored submission of the campaign's dataset")
    if not 0 < half_width < 0.5 or pilot < 2 or (budget is not None and budget <= 0):
        raise LateError("half-width in (0, 0.5), pilot at least 2, budget positive")
    ensure_outputs(campaign)
    name = name or submission.team.name
    if campaign.outputs.filter(name=name).exists():
        raise LateError(f"{name} is already evaluated in this campaign")
    units = _units(campaign, submission)
    if not units:
        raise LateError(f"{name}'s run has no items to judge")
    out = RunOutput.objects.create(campaign=campaign, name=name, submission=submission,
                                   keys=sorted(units), late=True)
    ev = LateEvaluation.objects.create(campaign=campaign, output=out, half_width=half_width,
                                       budget=budget, pilot=pilot, seed=seed)
    advance(ev)
    return ev


def rate(campaign: Campaign) -> float:
    return float(campaign.config.get("hourly_rate", 12.0))


def seconds_per_judgment(campaign: Campaign) -> float:
    """Judges' measured mean time in this campaign, else the configured guess."""
    secs = [s for s in Assignment.objects.filter(item__campaign=campaign, status=Assignment.DONE,
                                                 seconds__isnull=False)
            .values_list("seconds", flat=True) if 0 < s < 3600]
    return float(np.mean(secs)) if secs else float(campaign.config.get("seconds_per_judgment",
                                                                       4.5))


def _new_items_allowed(ev: LateEvaluation) -> float:
    """New items the remaining budget pays for (k judgments each); inf without budget."""
    if ev.budget is None:
        return float("inf")
    camp = ev.campaign
    per_item = camp.judges_per_item * seconds_per_judgment(camp) / 3600 * rate(camp)
    spent = Item.objects.filter(campaign=camp, drawn_for=ONDEMAND,
                                draws__evaluation=ev).distinct().count()
    return ev.budget / per_item - spent


def _place(ev: LateEvaluation, xs: list, stage: str, units, cap: float) -> bool:
    """Items and Draw rows for draws ``xs``; False when the budget cut them short."""
    camp = ev.campaign
    existing = {i.key: i for i in Item.objects.filter(campaign=camp, key__in=set(xs))
                .order_by("pk")}
    outputs = {o.name: set(o.keys) for o in camp.outputs.all()}
    res = content.Resources(camp.dataset)
    task = camp.dataset.task.task_name
    kind = camp.config.get("default_type", "default")
    rows, new, complete = [], 0, True
    for seq, x in enumerate(xs):
        item = existing.get(x)
        # judgments someone else's draw paid for; never the items this evaluation added
        reused = item is not None and not (item.drawn_for == ONDEMAND
                                           and item.drawn_by == [ev.output.name])
        if item is None:
            if new + 1 > cap:
                complete = False
                break
            item = Item.objects.create(
                campaign=camp, key=x, doc=units[x].doc, drawn_for=ONDEMAND,
                payload=unit_payload(task, res, x, units[x], kind),
                submissions=sorted(n for n, keys in outputs.items() if x in keys),
                drawn_by=[ev.output.name])
            existing[x] = item
            new += 1
        rows.append(Draw(evaluation=ev, item=item, stage=stage, seq=seq, reused=reused))
    Draw.objects.bulk_create(rows)
    return complete


@transaction.atomic
def advance(ev: LateEvaluation) -> bool:
    """Move one late evaluation on as far as the labels allow; True if it moved."""
    ev = LateEvaluation.objects.select_for_update(no_key=True).get(pk=ev.pk)
    if ev.stage == LateEvaluation.DONE:
        return False
    camp, name = ev.campaign, ev.output.name
    labels = label_map(camp)
    moved = False
    pilot = list(ev.draws.filter(stage="pilot").values_list("item__key", flat=True))
    units = None
    if ev.stage == LateEvaluation.PILOT and not pilot:
        od = _state(camp, labels, ev)
        od.rng = np.random.default_rng([ev.seed, ev.pk, 1])
        units = _units(camp, ev.output.submission)
        complete = _place(ev, od.draw(name, ev.pilot), "pilot", units, _new_items_allowed(ev))
        if not complete:
            return _finish(ev, od, labels, LateEvaluation.BUDGET)
        pilot = list(ev.draws.filter(stage="pilot").values_list("item__key", flat=True))
        moved = True
    if ev.stage == LateEvaluation.PILOT and all(k in labels for k in pilot):
        od = _state(camp, labels, ev)
        n = od.sample_size(name, pilot, PLAN * ev.half_width, ev.confidence, ev.pilot,
                           MAX_DRAWS)
        od.rng = np.random.default_rng([ev.seed, ev.pk, 2])
        units = units or _units(camp, ev.output.submission)
        complete = _place(ev, od.draw(name, n), "main", units, _new_items_allowed(ev))
        ev.planned, ev.stage = n, LateEvaluation.MAIN
        ev.outcome = "" if complete else LateEvaluation.BUDGET
        ev.save(update_fields=["planned", "stage", "outcome"])
        moved = True
    if ev.stage == LateEvaluation.MAIN:
        main = list(ev.draws.filter(stage="main").values_list("item__key", flat=True))
        if all(k in labels for k in main):
            od = _state(camp, labels, ev)
            od.record(name, main)
            return _finish(ev, od, labels, ev.outcome or None) or True
    return moved


def _finish(ev: LateEvaluation, od: OnDemand, labels, outcome: str | None) -> bool:
    est, low, high, _ = od.precision(ev.output.name, ev.confidence) if any(
        j == ev.output.name for _, j in od.draws) else (float("nan"),) * 4
    ev.estimate, ev.low, ev.high = (None if v != v else float(v) for v in (est, low, high))
    hw = (high - low) / 2 if high == high else float("inf")
    ev.outcome = outcome or (LateEvaluation.REACHED if hw <= ev.half_width + 1e-12 else "short")
    ev.stage, ev.finished = LateEvaluation.DONE, timezone.now()
    ev.save()
    return True


def advance_all(campaign: Campaign) -> int:
    """Advance every open late evaluation (after a judgment); returns how many moved."""
    moved = 0
    for ev in LateEvaluation.objects.filter(campaign=campaign).exclude(
            stage=LateEvaluation.DONE):
        while advance(ev):
            moved += 1
            ev.refresh_from_db()
            if ev.stage == LateEvaluation.DONE:
                break
    from shareval.platform.judging import auto       # it builds on this module
    auto.after_judgment(campaign, moved)
    return moved


def late_results(campaign: Campaign) -> dict[str, dict]:
    """Finished late evaluations as team_results rows (the leaderboard's column)."""
    out = {}
    for ev in LateEvaluation.objects.filter(campaign=campaign, stage=LateEvaluation.DONE,
                                            estimate__isnull=False).select_related("output"):
        out[ev.output.name] = {"measure": "precision", "estimate": ev.estimate, "low": ev.low,
                               "high": ev.high, "n": ev.draws.filter(stage="main").count(),
                               "ondemand": ev.outcome}
    return out
