"""The unit page's JSON: its state, its edits (one request an action, saved as you
go) and the entry search. Only the unit's assignee in that role sees or changes it;
everyone else gets 404, as for a unit that does not exist."""
from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET, require_POST

from shareval.platform.access import eligibility

from . import service
from .models import ANNOTATOR, CURATOR, Project


def project_of(request, c, p) -> Project:
    comp = eligibility.visible(request, c)
    return get_object_or_404(Project.objects.select_related("competition"), competition=comp,
                             slug=p)


def assignment(request, c, p, unit):
    project = project_of(request, c, p)
    role = CURATOR if request.GET.get("as") == CURATOR else ANNOTATOR
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
        return JsonResponse({"error": f"the request is not JSON ({e})"}, status=400)
    if not isinstance(body, dict):
        return JsonResponse({"error": "expected an object {version, ops}"}, status=400)
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


@login_required
@require_GET
def page(request, c, p, unit):
    """The unit's annotation page (its text, suggestions and tools: static/workbench/)."""
    a = assignment(request, c, p, unit)
    pr = a.unit.project
    return render(request, "workbench/unit.html", {
        "comp": pr.competition, "pr": pr, "a": a, "unit": a.unit,
        "page": _page(request), "curator": a.role == CURATOR})
