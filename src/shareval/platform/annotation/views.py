"""Pages of the RCC phase-2 study: organizer overview, each member's work list,
related-to coding (topic judges), review (reviewer), final pass (designer),
phase-1 rankings (judges), results; the coder's capture page is in
:mod:`.capture`. Anyone without a role sees 404s, as for a study that does not
exist."""
from __future__ import annotations

import re

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET

from shareval.platform.accounts.auth import token_or_session
from shareval.platform.access import eligibility

from shareval.platform.annotation import results, service, spans
from shareval.platform.annotation.forms import FinalForm, MemberForm, ReviewForm
from shareval.platform.annotation.models import (
    Decision, FullText, Member, Publication, Reference, Study
)
from shareval.platform.annotation.sources import DATA_WORDS


def _study(c, study) -> Study:
    return get_object_or_404(Study.objects.select_related("dataset__phase__competition",
                                                          "designer"),
                             pk=study, dataset__phase__competition__slug=c)


def _pub(st: Study, pub) -> Publication:
    return get_object_or_404(Publication, pk=pub, study=st)


def _organizer(st: Study, user) -> bool:
    return st.competition.is_organizer(user)


def _need(st: Study, user, *wanted) -> set[str]:
    mine = service.roles(st, user)
    if _organizer(st, user):
        mine.add("organizer")
    if not mine & set(wanted):
        raise Http404("no such study")
    return mine


def marked(text: str) -> list[tuple[str, bool]]:
    """Text cut into (piece, is a data word) for <mark> in the template (no HTML built here)."""
    out, at = [], 0
    for m in DATA_WORDS.finditer(text):
        out += [(text[at:m.start()], False), (m.group(0), True)]
        at = m.end()
    return out + [(text[at:], False)]


def _fail(request, e) -> None:
    messages.error(request, str(e))


@login_required
@require_GET
def home(request, c):
    comp = eligibility.visible(request, c)      # a hidden competition is 404, as everywhere
    studies = Study.objects.filter(dataset__phase__competition=comp).order_by("pk")
    if not comp.is_organizer(request.user):
        studies = [s for s in studies if service.roles(s, request.user)]
    return render(request, "annotation/home.html", {"comp": comp, "studies": studies,
                                                    "organizer": comp.is_organizer(request.user)})


@login_required
def overview(request, c, study):
    """The study's address (``rcc-study`` prints it): the organizers' overview; a
    member without the organizer role lands on their own work."""
    st = _study(c, study)
    mine = _need(st, request.user, "organizer", Member.CODER, Member.JUDGE, Member.REVIEWER,
                 "designer")
    if "organizer" not in mine:
        return redirect("annotation-work", c=c, study=st.pk)
    form = MemberForm()
    if request.method == "POST":
        form = MemberForm(request.POST)
        if form.is_valid():
            user = get_user_model().objects.filter(username=form.cleaned_data["username"]).first()
            if user is None:
                form.add_error("username", "no such user")
            else:
                try:
                    service.add_member(st, request.user, user, form.cleaned_data["role"])
                    messages.success(request, f"{user.username} is now a "
                                              f"{form.cleaned_data['role']} of this study.")
                    return redirect("annotation-study", c=c, study=st.pk)
                except (service.BadInput, service.NotAllowed) as e:
                    form.add_error(None, str(e))
    sample = st.config.get("sample", {})
    strata = list(sample.get("mix", {}))
    rows = [{"topic": t, "cells": [(sample["got"][t].get(s, 0), sample["wanted"][t].get(s, 0))
                                   for s in strata]}
            for t in sample.get("got", {})] if sample.get("mode") == "stratified" else []
    return render(request, "annotation/overview.html", {
        "comp": st.competition, "st": st, "form": form, "sample": sample, "strata": strata,
        "rows": rows, "members": st.members.select_related("user").order_by("role", "user"),
        "pubs": st.publications.all(), "status": response_status(st)})


def response_status(st: Study) -> dict:
    pubs = st.publications.filter(purpose=Publication.REFERENCES)
    return {"sampled": pubs.count(), "captured": pubs.exclude(captured=None).count(),
            "coded": pubs.exclude(coded=None).count(),
            "reviewed": pubs.exclude(reviewed=None).count(),
            "references": Reference.objects.filter(publication__study=st)
            .exclude(status=Reference.REMOVED).count(),
            "qualitative": st.publications.filter(purpose=Publication.QUALITATIVE).count(),
            "rankings": st.publications.filter(purpose=Publication.QUALITATIVE)
            .values("rankings").exclude(rankings=None).count(),
            "decisions": st.decisions.count()}


@login_required
def work(request, c, study):
    st = _study(c, study)
    mine = _need(st, request.user, Member.CODER, Member.JUDGE, Member.REVIEWER, "designer")
    judge = Member.objects.filter(study=st, user=request.user, role=Member.JUDGE).first() \
        if Member.JUDGE in mine else None
    if request.method == "POST":
        if judge is None:
            raise Http404("no such study")
        try:
            service.declare_topics(st, request.user, request.POST.getlist("topics"))
            messages.success(request, "Your topic areas are saved.")
        except (service.BadInput, service.NotAllowed) as e:
            _fail(request, e)
        return redirect("annotation-work", c=c, study=st.pk)
    return render(request, "annotation/work.html", {
        "comp": st.competition, "st": st, "roles": sorted(mine - {"organizer"}),
        "work": service.work_for(st, request.user), "judge": judge,
        "topics": service.study_topics(st)})


def _coding_grid(p: Publication) -> tuple[list[dict], list[Reference]]:
    refs = list(p.references.exclude(status=Reference.REMOVED))
    cur = service.current_coding(p)
    related = cur.related if cur else {}
    grid = []
    for s in service.systems(p):
        mine = related.get(s["team"], {})
        grid.append({**s, "checked": {f"{r.pk}:{o['id']}" for r in refs
                                      for o in s["output"] if o["id"] in mine.get(str(r.pk), [])}})
    return grid, refs


@login_required
def related(request, c, study, pub):
    st = _study(c, study)
    _need(st, request.user, Member.JUDGE, Member.REVIEWER)
    p = _pub(st, pub)
    grid, refs = _coding_grid(p)
    if request.method == "POST":
        raw: dict[str, dict[str, list[str]]] = {}
        for i, s in enumerate(grid):
            raw[s["team"]] = {str(r.pk): request.POST.getlist(f"rel-{r.pk}-{i}") for r in refs}
        revision = p.coded is not None
        try:
            service.code_related(p, request.user, raw)
            messages.success(request, f"Coding of publication {p.publication_id} saved.")
            if revision:
                return redirect("annotation-review", c=c, study=st.pk, pub=p.pk)
            return redirect("annotation-work", c=c, study=st.pk)
        except (service.BadInput, service.NotAllowed) as e:
            _fail(request, e)
    for s in grid:                      # template-friendly: one row per output
        s["rows"] = [{"o": o, "cells": [(r.pk, f"{r.pk}:{o['id']}" in s["checked"]) for r in refs]}
                     for o in s["output"]]
    return render(request, "annotation/related.html", {
        "comp": st.competition, "st": st, "p": p, "grid": grid, "refs": refs})


@login_required
def review(request, c, study, pub):
    st = _study(c, study)
    _need(st, request.user, Member.REVIEWER)
    p = _pub(st, pub)
    bad_form, bad_ref = None, None
    if request.method == "POST":
        try:
            if request.POST.get("action") == "finish":
                service.review_finish(p, request.user)
                messages.success(request, f"Review of publication {p.publication_id} finished.")
                return redirect("annotation-work", c=c, study=st.pk)
            form = ReviewForm(request.POST)
            if form.is_valid():
                d = form.cleaned_data
                ref = get_object_or_404(Reference, pk=d["ref"], publication=p)
                service.review_reference(ref, request.user, d["action"], d["note"],
                                         d["kind"] or None, d["name"] or None,
                                         d["context"] or None)
                messages.success(request, f"Reference {ref.pk}: {d['action']} recorded.")
                return redirect("annotation-review", c=c, study=st.pk, pub=p.pk)
            bad_form, bad_ref = form, form.data.get("ref")
        except (service.BadInput, service.NotAllowed) as e:
            _fail(request, e)
    grid, _ = _coding_grid(p)
    refs = []
    text = service.stored_text(p)
    for r in p.references.all():
        form = bad_form if bad_ref == str(r.pk) else ReviewForm(initial={
            "ref": r.pk, "kind": r.kind, "name": r.name, "context": r.context})
        flagged = [(s["label"], [o for o in s["output"] if f"{r.pk}:{o['id']}" in s["checked"]])
                   for s in grid]
        refs.append({"r": r, "form": form, "flagged": [f for f in flagged if f[1]],
                     "marked": spans.marked(text, r)})
    return render(request, "annotation/review.html", {
        "comp": st.competition, "st": st, "p": p, "refs": refs})


@login_required
def final(request, c, study):
    st = _study(c, study)
    _need(st, request.user, "designer")
    if request.method == "POST":
        try:
            if request.POST.get("action") == "close":
                service.close_study(st, request.user)
                messages.success(request, "Final pass closed: the scores are final.")
                return redirect("annotation-results", c=c, study=st.pk)
            form = FinalForm(request.POST)
            if form.is_valid():
                ref = get_object_or_404(Reference, pk=form.cleaned_data["ref"],
                                        publication__study=st)
                service.final_decide(ref, request.user, form.cleaned_data["keep"] == "1",
                                     form.cleaned_data["note"])
                messages.success(request, f"Reference {ref.pk} decided.")
            return redirect("annotation-final", c=c, study=st.pk)
        except (service.BadInput, service.NotAllowed) as e:
            _fail(request, e)
    items = []
    refs = service.flagged(st)
    texts = dict(FullText.objects.filter(
        publication__in={r.publication_id for r in refs if r.begin is not None})
        .values_list("publication_id", "text"))
    for ref in refs:
        trail = list(Decision.objects.filter(reference=ref).exclude(stage="capture")
                     .select_related("actor"))
        items.append({"r": ref, "trail": trail,
                      "marked": spans.marked(texts.get(ref.publication_id), ref)})
    return render(request, "annotation/final.html", {"comp": st.competition, "st": st,
                                                     "items": items})


@login_required
def rank(request, c, study, pub):
    st = _study(c, study)
    _need(st, request.user, Member.JUDGE)
    p = _pub(st, pub)
    systems = service.systems(p)
    mine = p.rankings.filter(judge=request.user).first()
    typed = {}
    if request.method == "POST":
        typed = request.POST
        try:
            ranks = {i: int(request.POST.get(f"rank-{i}", "")) for i in range(len(systems))}
        except ValueError:
            ranks = None
        if ranks is None or sorted(ranks.values()) != list(range(1, len(systems) + 1)):
            messages.error(request, "Give every system a different rank (1 = best).")
        else:
            order = [systems[i]["team"] for i in sorted(ranks, key=ranks.get)]
            notes = {s["team"]: {"good": request.POST.get(f"good-{i}", ""),
                                 "bad": request.POST.get(f"bad-{i}", "")}
                     for i, s in enumerate(systems)}
            try:
                service.rank(p, request.user, order, notes)
                messages.success(request, f"Ranking of publication {p.publication_id} saved.")
                return redirect("annotation-work", c=c, study=st.pk)
            except (service.BadInput, service.NotAllowed) as e:
                _fail(request, e)
    for i, s in enumerate(systems):
        saved = (mine.notes.get(s["team"], {}) if mine else {})
        s["i"] = i
        s["good"] = typed.get(f"good-{i}", saved.get("good", ""))
        s["bad"] = typed.get(f"bad-{i}", saved.get("bad", ""))
        s["rank"] = str(typed.get(f"rank-{i}", (mine.order.index(s["team"]) + 1) if mine else ""))
    return render(request, "annotation/rank.html", {
        "comp": st.competition, "st": st, "p": p, "systems": systems,
        "choices": [str(k) for k in range(1, len(systems) + 1)]})


@login_required
@require_GET
def results_page(request, c, study):
    st = _study(c, study)
    _need(st, request.user, "organizer", "designer")
    scores = results.team_scores(st)
    cons = results.consensus(st)
    trail = list(st.decisions.select_related("actor", "publication").order_by("-created", "-pk")
                 [:200])
    return render(request, "annotation/results.html", {
        "comp": st.competition, "st": st, "scores": sorted(
            scores.items(), key=lambda kv: (-(kv[1]["f1"] if kv[1]["f1"] == kv[1]["f1"]
                                              else -1), kv[0])),
        "cons": cons, "trail": trail, "status": response_status(st)})


@token_or_session
@require_GET
def audit(request, c, study):
    st = _study(c, study)
    _need(st, request.user, "organizer", "designer")
    resp = HttpResponse(results.audit_csv(st), content_type="text/csv; charset=utf-8")
    name = re.sub(r"[^A-Za-z0-9_-]", "_", st.slug)
    resp["Content-Disposition"] = f'attachment; filename="{name}-audit.csv"'
    return resp
