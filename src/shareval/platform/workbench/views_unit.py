"""The unit pages of the workbench: the annotate page and its JSON (state, ops — one
request an action, saved as you go — and the entry search), and the curator's page.
Only the unit's assignee in that role sees or changes it, and organizers curate;
everyone else gets 404, as for a unit that does not exist (participants never learn
that a project or someone's work is there)."""
from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from shareval.platform.access import eligibility

from . import service
from .models import ANNOTATOR, CURATOR, RELATION, Annotation, Assignment, Project, Unit


def project_of(request, c, p) -> Project:
    """The project, for those who may see its competition or hold an assignment in it
    (gold is often made while the competition is still private)."""
    comp = eligibility.find_visible(request, c)
    if comp is None:
        pr = Project.objects.select_related("competition").filter(
            competition__slug=c, slug=p, units__assignments__user_id=request.user.pk).first()
        if pr is None or service.in_a_team(pr, request.user):
            raise Http404("no such project")
        return pr
    return get_object_or_404(Project.objects.select_related("competition"), competition=comp,
                             slug=p)


def assignment(request, c, p, unit, role: str | None = None) -> Assignment:
    project = project_of(request, c, p)
    role = role or (CURATOR if request.GET.get("as") == CURATOR else ANNOTATOR)
    a = service.assignment_for(project, unit, request.user, role)
    if a is None and role == CURATOR and service.may_organize(project, request.user):
        a = service.curate_as_organizer(project, unit, request.user)
    if a is None:
        raise Http404("no such unit")
    return a


def _page(request) -> int:
    try:
        return max(0, int(request.GET.get("page", "0")))
    except ValueError:
        return 0


@login_required
@require_GET
def state(request, c, p, unit):
    return JsonResponse(service.unit_state(assignment(request, c, p, unit), _page(request)))


@login_required
@require_POST
def ops(request, c, p, unit):
    a = assignment(request, c, p, unit)
    try:
        body = json.loads(request.body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        return JsonResponse({"error": f"the request is not JSON ({e})", "op": None,
                             "field": "body"}, status=400)
    if not isinstance(body, dict):
        return JsonResponse({"error": "expected an object {version, ops}", "op": None,
                             "field": "body"}, status=400)
    try:
        out = service.apply_ops(a, request.user, body.get("version"), body.get("ops"),
                                _page(request))
    except service.Conflict as e:
        return JsonResponse({"error": str(e), "version": e.version}, status=409)
    except service.BadOp as e:
        return JsonResponse({"error": str(e), "op": e.index, "field": e.field}, status=400)
    return JsonResponse(out)


@login_required
@require_GET
def entries(request, c, p):
    project = project_of(request, c, p)
    if not (service.may_organize(project, request.user)
            or (not service.in_a_team(project, request.user)
                and project.units.filter(assignments__user=request.user).exists())):
        raise Http404("no such project")
    return JsonResponse({"entries": service.search_entries(project, request.GET.get("q", "")[:200])})


def _urls(a: Assignment) -> dict:
    u, pr = a.unit, a.unit.project
    args = [pr.competition.slug, pr.slug, u.pk]
    role = "?as=curator" if a.role == CURATOR else ""
    return {"state": reverse("workbench-state", args=args) + role,
            "ops": reverse("workbench-ops", args=args) + role,
            "entries": reverse("workbench-entries", args=args[:2]),
            "project": reverse("workbench-project", args=args[:2])}


def _context(request, a: Assignment) -> dict:
    pr = a.unit.project
    mine = list(Assignment.objects.filter(user=a.user, role=a.role, unit__project=pr)
                .values_list("unit_id", flat=True))
    return {"comp": pr.competition, "project": pr, "pr": pr, "a": a, "assignment": a,
            "unit": a.unit, "urls": _urls(a), "start_page": _page(request),
            "at": mine.index(a.unit_id) + 1, "of": len(mine), "curator": a.role == CURATOR}


@login_required
@require_GET
def page(request, c, p, unit):
    """The unit's annotation page (its text, suggestions and tools: static/workbench/).
    An organizer without an assignment of the unit lands on its curator's page."""
    try:
        a = assignment(request, c, p, unit)
    except Http404:
        pr = project_of(request, c, p)
        if service.may_organize(pr, request.user) and pr.units.filter(pk=unit).exists():
            return redirect("workbench-curate", c=c, p=p, unit=unit)
        raise
    if a.role == CURATOR:
        return _curate_page(request, a)
    return render(request, "workbench/unit.html", _context(request, a))


def _annotators(u: Unit) -> list[dict]:
    """Each annotator's work on ``u``, the whole unit (the curator compares lists; the
    text shows the gold being made a page at a time)."""
    out = []
    for a in (Assignment.objects.filter(unit=u, role=ANNOTATOR).select_related("user")
              .order_by("user__username")):
        rows = [{"id": x.pk, "kind": x.kind, "begin": x.begin, "end": x.end, "label": x.label,
                 "target": x.target, "value": x.value, "origin": x.origin,
                 "quote": u.text[x.begin:x.end] if x.begin is not None else ""}
                for x in Annotation.objects.filter(assignment=a).exclude(kind=RELATION)]
        out.append({"user": a.user.username, "status": a.status, "annotations": rows})
    return out


@login_required
@require_GET
def curate(request, c, p, unit):
    """The curator's page: the annotators side by side and the gold. The unit's curator,
    or an organizer (whose curator assignment is made on first visit)."""
    pr = project_of(request, c, p)
    u = get_object_or_404(Unit, pk=unit, project=pr)
    if service.may_organize(pr, request.user) and not service.in_a_team(pr, request.user):
        Assignment.objects.get_or_create(unit=u, user=request.user, role=CURATOR)
    return _curate_page(request, assignment(request, c, p, unit, role=CURATOR))


def _curate_page(request, a: Assignment):
    ctx = _context(request, a)
    ctx["annotators"] = _annotators(a.unit)
    return render(request, "workbench/curate.html", ctx)
