"""Judging campaign pages: create (organizers), judge, manage, adjudicate, export."""
from __future__ import annotations

import datetime as dt

import json
import time

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from shareval.formats.errors import InvalidInput
from shareval.platform.accounts.auth import token_or_session
from shareval.platform.access import eligibility
from shareval.platform.competitions.models import Competition, Dataset
from shareval.platform.submissions.models import Submission

from shareval.platform.judging import (
    auto, build, content, costs, crowd, designs, e2e_items, e2e_publish, help, kbp_items,
    ondemand, results, service
)
from shareval.platform.judging.forms import CampaignForm
from shareval.platform.judging.models import Assignment, Campaign, Item


def _comp(request, c) -> Competition:
    return eligibility.organized(request, c)


def _campaign(comp, j) -> Campaign:
    return get_object_or_404(Campaign, pk=j, dataset__phase__competition=comp)


@login_required
def campaigns(request, c):
    comp = _comp(request, c)
    datasets = Dataset.objects.filter(phase__competition=comp).select_related("phase", "task")
    errors: list[str] = []
    form = CampaignForm(comp, datasets, initial={"k": 2, "timeout": 30, "n": 50, "docs": 0,
                                                 "seed": 0, "on_leaderboard": True})
    if request.method == "POST":
        form = CampaignForm(comp, datasets, request.POST, request.FILES)
        errors = _create(request, form)
        if not errors:
            return redirect("campaigns", c=comp.slug)
    return render(request, "shareval/campaigns.html", {
        "comp": comp, "datasets": datasets, "errors": errors, "designs": Campaign.DESIGNS,
        "form": form, "campaigns": Campaign.objects.filter(dataset__phase__competition=comp)
        .select_related("dataset__phase", "dataset__task")})


def _create(request, form: CampaignForm) -> list[str]:
    """Problems, or [] once the campaign and its items exist (the form keeps what
    was typed when there are problems; an uploaded file must be chosen again)."""
    if not form.is_valid():
        return form.problems()
    d = form.cleaned_data
    try:
        campaign = service.create_campaign(
            d["dataset"], d["title"].strip(), d["design"], d["k"], d["timeout"], d["config"],
            d["judges"], d["on_leaderboard"], d.get("hourly_rate"), d.get("seconds_per_judgment"),
            upload=d.get("items"), n=d.get("n") or 50, docs=d.get("docs") or 0,
            seed=d.get("seed") or 0)
    except (InvalidInput, ValueError) as e:
        return [str(p) for p in getattr(e, "problems", [e])]
    messages.success(request, f"Campaign {campaign.title!r}: {campaign.items.count()} items, "
                              f"{len(d['judges'])} judges.")
    return []


@login_required
def manage(request, c, j):
    comp = _comp(request, c)
    camp = _campaign(comp, j)
    late = list(camp.late.select_related("output").order_by("pk"))
    taken = set(camp.outputs.values_list("name", flat=True))
    runs_known = taken or "sizes" in camp.config            # built from runs: outputs known
    # an automatic campaign draws every leaderboard run itself (judging/auto.py)
    candidates = [s for t, s in sorted(build.team_runs(camp.dataset).items()) if t not in taken] \
        if ondemand.precision_design(camp) and runs_known and not auto.is_auto(camp) else []
    return render(request, "shareval/campaign.html", {
        "comp": comp, "camp": camp, "progress": service.progress(camp),
        "agreement": service.agreement_stats(camp), "gold": service.gold_accuracy(camp),
        "agreement_types": _typed(service.agreement_by_type(camp)),
        "controls": service.control_report(camp),
        "results": sorted(results.team_results(camp).items(), key=_best_first),
        "disagreements": len(service.disagreements(camp)), "late": [
            {"ev": ev, "pilot": ev.draws.filter(stage="pilot").count(),
             "main": ev.draws.filter(stage="main").count(),
             "reused": ev.draws.filter(reused=True).values("item").distinct().count(),
             "half": None if ev.high is None else (ev.high - ev.low) / 2} for ev in late],
        "candidates": candidates, "costs": costs.campaign_costs(camp), "e2e": _e2e_state(camp),
        "crowd": camp.design != designs.RELATED,
        "recall": _recall_summary(camp)})


def _recall_summary(camp) -> dict | None:
    """An exhaustive campaign's finished and pending documents (judging/recall.py)."""
    from shareval.platform.judging import recall
    return recall.campaign_summary(camp) if camp.design == designs.EXHAUSTIVE else None


def _typed(rows: list[dict]) -> list[dict]:
    """Agreement per item type, shown when items have types (KBP: one per relation)."""
    return rows if any(r["type"] != "default" for r in rows) else []


def _e2e_state(camp) -> dict | None:
    """The E2E loop's buttons: built runs, items lacking judgments, the last publication."""
    try:
        e2e_items.check_campaign(camp)
    except ValueError:
        return None
    published = camp.config.get("published")
    at = None
    if published and published.get("at"):    # stored as ISO; shown in the competition's zone
        at = dt.datetime.fromisoformat(published["at"]).astimezone(
            camp.dataset.phase.competition.tz)
    return {"runs": sorted(camp.outputs.values_list("name", flat=True)),
            "incomplete": e2e_publish.incomplete(camp), "published": published,
            "published_at": at}


@login_required
@require_POST
def add_late(request, c, j):
    """A late submission joins the campaign (on-demand evaluation)."""
    comp = _comp(request, c)
    camp = _campaign(comp, j)
    P = request.POST
    sub = Submission.objects.filter(pk=P.get("submission") or 0, dataset=camp.dataset).first()
    try:
        if sub is None:
            raise ondemand.LateError("choose a submission")
        if auto.is_auto(camp):
            raise ondemand.LateError("this campaign assesses every team's leaderboard run "
                                     "by itself when it is scored")
        budget = float(P["budget"]) if (P.get("budget") or "").strip() else None
        ev = ondemand.add_late(camp, sub, float(P.get("half_width") or 0.05), budget,
                               int(P.get("pilot") or 50), int(P.get("seed") or 0))
    except (ondemand.LateError, ValueError) as e:
        messages.error(request, f"Not added: {e}")
    else:
        messages.success(request, f"{ev.output.name} added: {ev.draws.count()} pilot draws, "
                                  f"{ev.draws.filter(reused=True).count()} of them already "
                                  f"judged.")
    return redirect("campaign", c=comp.slug, j=camp.pk)


@login_required
@require_POST
def build_e2e(request, c, j):
    """Items from every team's primary E2E run (again: adds only what is new)."""
    comp = _comp(request, c)
    camp = _campaign(comp, j)
    try:
        built = e2e_items.build_from_primaries(camp)
    except (ValueError, InvalidInput) as e:
        messages.error(request, f"Not built: {e}")
    else:
        for line in e2e_items.report(built):
            (messages.warning if line.startswith("skipped") else messages.success)(request, line)
    return redirect("campaign", c=comp.slug, j=camp.pk)


@login_required
@require_POST
def publish_e2e(request, c, j):
    """Each judged primary run scored from its own judgments: its current score."""
    comp = _comp(request, c)
    camp = _campaign(comp, j)
    try:
        done = e2e_publish.publish(camp, request.user.get_username(),
                                   (request.POST.get("force") or "")[:1000])
    except (ValueError, InvalidInput) as e:
        messages.error(request, f"Not published: {e}")
        return redirect("campaign", c=comp.slug, j=camp.pk)
    for team, value in sorted(done.scored.items()):
        messages.success(request, f"{team}: E2E AQWV {value if value is None else round(value, 4)}"
                                  f" from its judgments, now its current score")
    if done.unchanged:
        messages.info(request, f"already scored from these judgments: "
                               f"{', '.join(done.unchanged)}")
    for team, why in sorted(done.failed.items()):
        messages.error(request, f"{team}: not scored, nothing stored: {why}")
    return redirect("campaign", c=comp.slug, j=camp.pk)


@login_required
@require_POST
def crowd_import(request, c, j):
    """An MTurk-style results CSV: each row one worker's answer to one task."""
    comp = _comp(request, c)
    camp = _campaign(comp, j)
    up = request.FILES.get("results")
    if up is None:
        messages.error(request, "Not imported: choose a results CSV")
        return redirect("campaign", c=comp.slug, j=camp.pk)
    text = up.read(50 * 1024 * 1024).decode("utf-8-sig", errors="replace")
    try:
        n = crowd.import_results(camp, text, up.name)
    except InvalidInput as e:
        for p in e.problems[:20]:
            messages.error(request, str(p))
        if e.total > 20:
            messages.error(request, f"… and {e.total - 20} more problems; nothing was imported")
        return redirect("campaign", c=comp.slug, j=camp.pk)
    ondemand.advance_all(camp)
    messages.success(request, f"Imported {n} crowd judgments.")
    return redirect("campaign", c=comp.slug, j=camp.pk)


def _best_first(kv) -> tuple:
    est = kv[1]["estimate"]
    return (est != est, -est if est == est else 0.0, kv[0])      # NaN last, then by team


def _judge_campaign(request, j) -> Campaign:
    camp = get_object_or_404(Campaign.objects.select_related("dataset__phase"), pk=j)
    if not service.may_judge(camp, request.user):
        raise Http404("no such page")
    return camp


def judge_context(camp, item) -> dict:
    """What a judge may see: never team names, systems, document ids (a MATERIAL
    document id names its source), other judges or gold answers."""
    p = item.payload
    view = content.item_view(camp.design, p)
    ins = str(p.get("instructions") or "")
    ctx = {"text": p.get("text", ""), "doc_url": p.get("doc_url"), "view": view,
           "instructions": "" if ins == _campaign_instructions(camp) else ins}
    if view.get("kind") == "publication" and view.get("has_text"):
        ctx["full_text_url"] = reverse("judge-text", args=[camp.pk, item.pk])
    guidance = kbp_items.guidance_for(camp.config, p)
    if guidance:
        ctx["guidance"] = guidance
    if camp.design in (designs.SIDE_BY_SIDE, designs.RELATED):
        order = designs.system_order(item)
        ctx["systems"] = [{"label": lab, "slot": i, "output": s.get("output", []),
                           "empty": s.get("empty") or "nothing output here"}
                          for i, (lab, s) in enumerate(zip(designs.letters(len(order)), order))]
    if camp.design == designs.CHAIN:
        ctx["chain"] = [{"id": q["id"], "text": designs.fill(q["text"], p),
                         "yes": q.get("yes"), "no": q.get("no")}
                        for q in designs.chain_for(camp.config, p.get("type"))]
    if camp.design == designs.RELEVANCE:
        ctx.update(query=p.get("query"), image=p.get("image"), summary=p.get("summary"))
    if camp.design == designs.EXHAUSTIVE:                     # the payload holds no team
        ctx["document"] = {k: p.get(k) for k in ("title", "sentences", "starts", "suggestions",
                                                  "relations")}
    return ctx


def _campaign_instructions(camp) -> str:
    """The campaign's one instructions text (a mapping is per query: on the items)."""
    ins = camp.config.get("instructions")
    return ins if isinstance(ins, str) else ""


def _decode(camp, item, posted: str) -> dict:
    """Map the page's slot numbers back to team names."""
    raw = json.loads(posted or "{}")
    if camp.design in (designs.SIDE_BY_SIDE, designs.RELATED):
        order = [s["team"] for s in designs.system_order(item)]
        slot = lambda v: order[int(v)]  # noqa: E731
        if camp.design == designs.SIDE_BY_SIDE:
            raw["scores"] = {slot(k): v for k, v in (raw.get("scores") or {}).items()}
        else:
            raw["related"] = {ref: {slot(k): v for k, v in m.items()}
                              for ref, m in (raw.get("related") or {}).items()}
    return raw


@login_required
def judge(request, j):
    """GET shows the judge's open item and changes nothing; taking an item is a POST
    ("Start judging", or answering one, which takes the next)."""
    camp = _judge_campaign(request, j)
    if request.method == "POST":
        if request.POST.get("assignment"):
            if not _answer(request, camp):
                return redirect("judge", j=camp.pk)
        a = service.next_assignment(camp, request.user)
        if a is not None:
            service.start(a)
        return redirect("judge", j=camp.pk)
    a = service.open_assignment(camp, request.user)
    count = Assignment.objects.filter(item__campaign=camp, judge=request.user,
                                      status=Assignment.DONE).count()
    if a is None:
        left = service.items_left(camp, request.user)
        return render(request, "shareval/judge.html", {
            "camp": camp, "done": not left, "left": left, "count": count,
            "help": help.for_design(camp.design)})
    ctx = judge_context(camp, a.item)
    return render(request, "shareval/judge.html", {
        "camp": camp, "a": a, "item": ctx, "help": help.for_design(camp.design),
        "instructions": _campaign_instructions(camp),
        "started": time.time(), "count": count})


def _answer(request, camp) -> bool:
    """Store the posted answer; False (with a message) when it was not stored."""
    a = get_object_or_404(Assignment, pk=request.POST.get("assignment") or 0,
                          judge=request.user, item__campaign=camp)
    try:
        started = float(request.POST.get("started") or 0)
        ok = service.submit(a, _decode(camp, a.item, request.POST.get("answer")),
                            time.time() - started if started else None)
    except (designs.BadAnswer, ValueError, KeyError, IndexError, TypeError) as e:
        messages.error(request, f"Not saved: {e}")
        return False
    if not ok:
        messages.error(request, "This assignment expired before you answered; "
                                "it went to another judge.")
        return True
    ondemand.advance_all(camp)       # a late submission may now move on
    return True


@login_required
def judge_text(request, j, item):
    """The full text of the publication of an item the judge holds (open or done)."""
    camp = _judge_campaign(request, j)
    it = get_object_or_404(Item, pk=item, campaign=camp, assignments__judge=request.user)
    view = content.item_view(camp.design, it.payload)
    if view.get("kind") == "relation_doc":          # the document is in the view
        return render(request, "shareval/judge_text.html", {"camp": camp, "view": view,
                                                             "document": view["sentences"]})
    text = content.Resources(camp.dataset).text_of(it.doc) if view.get("kind") == \
        "publication" else None
    if text is None:
        raise Http404("no full text for this item")
    paras = [content.marked(p, view.get("mentions", [])) for p in content.paragraphs(text)]
    return render(request, "shareval/judge_text.html", {"camp": camp, "view": view,
                                                         "paragraphs": paras})


@login_required
def adjudicate(request, c, j):
    comp = _comp(request, c)
    camp = _campaign(comp, j)
    rows = []
    for e in service.disagreements(camp):
        order = [s["team"] for s in designs.system_order(e["item"])]
        rows.append({**e, "answers": [(who, json.dumps(a), a) for who, a in e["answers"].items()],
                     "shown": content.summary_line(content.item_view(camp.design,
                                                                     e["item"].payload)),
                     "output": e["item"].payload.get("text", ""),
                     "order": order,
                     "trail": e["item"].adjudications.select_related("decided_by")})
    return render(request, "shareval/adjudicate.html", {"comp": comp, "camp": camp,
                                                        "rows": rows})


@login_required
@require_GET
def campaign_item(request, c, j, item):
    """One item as its judges see it, with what the organizer may know: its key,
    known answer, judges' answers and decisions (failed controls link here)."""
    comp = _comp(request, c)
    camp = _campaign(comp, j)
    it = get_object_or_404(Item, pk=item, campaign=camp)
    answers = [(a.judge.username, a.status, json.dumps(a.answer) if a.answer else "")
               for a in it.assignments.select_related("judge").order_by("judge__username")]
    return render(request, "shareval/campaign_item.html", {
        "comp": comp, "camp": camp, "it": it, "item": judge_context(camp, it),
        "gold": json.dumps(it.gold) if it.gold is not None else None, "answers": answers,
        "trail": it.adjudications.select_related("decided_by")})


@login_required
@require_POST
def adjudicate_item(request, c, j, item):
    comp = _comp(request, c)
    camp = _campaign(comp, j)
    it = get_object_or_404(Item, pk=item, campaign=camp)
    try:
        # managers see team names: the decision comes keyed by team, not by slot
        service.adjudicate(it, request.user, json.loads(request.POST.get("answer") or "{}"),
                           request.POST.get("note", "")[:2000])
        messages.success(request, f"Decision recorded for {it.key}.")
        ondemand.advance_all(camp)
    except (designs.BadAnswer, ValueError, KeyError, IndexError, TypeError) as e:
        messages.error(request, f"Not saved: {e}")
    return redirect("adjudicate", c=comp.slug, j=camp.pk)


@token_or_session
def export(request, c, j, kind):
    comp = _comp(request, c)
    camp = _campaign(comp, j)
    if kind == "judgments.csv":
        resp = HttpResponse(results.estimate_csv(camp), content_type="text/csv")
    elif kind == "qrels.txt":
        text, unresolved = results.qrels(camp)
        resp = HttpResponse(text, content_type="text/plain")
        resp["X-Unresolved-Items"] = str(len(unresolved))
    elif kind == "crowd-batch.csv" and camp.design != designs.RELATED:
        resp = HttpResponse(crowd.export_batch(camp), content_type="text/csv")
    elif kind == "e2e-judgments.tsv" and camp.design == designs.RELEVANCE:
        resp = HttpResponse(results.e2e_judgments(camp), content_type="text/tab-separated-values")
    else:
        raise Http404("no such export")
    resp["Content-Disposition"] = f'attachment; filename="campaign-{camp.pk}-{kind}"'
    return resp
