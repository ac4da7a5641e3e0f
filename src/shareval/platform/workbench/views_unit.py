"""The unit pages of the workbench: the annotate page and its JSON (state, ops, entry
search), and the curator's page. Only the unit's assignees and the competition's
organizers reach them; everyone else gets the same 404 as for a unit that does not
exist (participants never learn that a project or someone's work is there)."""
from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from . import service
from .models import ANNOTATOR, CURATOR, Annotation, Assignment, Project, Unit

MAX_OPS = 200          # one request is one user action (or its undo); more is a mistake


def _project(c, p) -> Project:
    return get_object_or_404(Project.objects.select_related("competition"),
                             slug=p, competition__slug=c)


def _unit(c, p, unit) -> Unit:
    return get_object_or_404(Unit.objects.select_related("project__competition"),
                             pk=unit, project__slug=p, project__competition__slug=c)


def _organizer(project: Project, user) -> bool:
    return project.competition.is_organizer(user)


def _assignment(request, u: Unit, *, create_curator: bool = False) -> Assignment:
    """The requester's own assignment of ``u`` in the role the page asks for (?as=curator),
    else 404. An organizer curates any unit: their curator assignment is made on first use."""
    role = CURATOR if request.GET.get("as") == CURATOR or create_curator else ANNOTATOR
    a = Assignment.objects.filter(unit=u, user=request.user, role=role).first()
    if a is None and role == CURATOR and _organizer(u.project, request.user):
        a, _ = Assignment.objects.get_or_create(unit=u, user=request.user, role=CURATOR)
    if a is None:
        raise Http404("no such unit")
    return a


def _page(request) -> int:
    try:
        return max(0, int(request.GET.get("page", 0)))
    except ValueError:
        return 0


def _progress(a: Assignment) -> tuple[int, int]:
    """("unit k of n") among the user's assignments of the project in the same role."""
    mine = list(Assignment.objects.filter(unit__project=a.unit.project, user=a.user,
                                          role=a.role).values_list("pk", flat=True))
    return (mine.index(a.pk) + 1 if a.pk in mine else 0), len(mine)


def _urls(a: Assignment) -> dict:
    u, p = a.unit, a.unit.project
    args = [p.competition.slug, p.slug, u.pk]
    role = "?as=curator" if a.role == CURATOR else ""
    return {"state": reverse("workbench-state", args=args) + role,
            "ops": reverse("workbench-ops", args=args) + role,
            "entries": reverse("workbench-entries", args=args[:2]),
            "project": reverse("workbench-project", args=args[:2])}


def _context(a: Assignment, request) -> dict:
    u, p = a.unit, a.unit.project
    at, of = _progress(a)
    return {"comp": p.competition, "project": p, "unit": u, "assignment": a,
            "urls": _urls(a), "at": at, "of": of, "start_page": _page(request),
            "organizer": _organizer(p, request.user)}


@login_required
@require_GET
def unit_page(request, c, p, unit):
    u = _unit(c, p, unit)
    try:
        a = _assignment(request, u)
    except Http404:
        if _organizer(u.project, request.user):     # organizers look at a unit as its curator
            return redirect("workbench-curate", c=c, p=p, unit=u.pk)
        raise
    return render(request, "workbench/unit.html", _context(a, request))


@login_required
@require_GET
def unit_state(request, c, p, unit):
    a = _assignment(request, _unit(c, p, unit))
    return JsonResponse(service.unit_state(a, page=_page(request)))


def _bad(message: str, field: str = "body", op=None, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": message, "op": op, "field": field}, status=status)


@login_required
@require_POST
def unit_ops(request, c, p, unit):
    """One save: {"version": n, "ops": [...], "page": k}. 409 when the assignment moved
    on since version n (nothing of this request is applied), 400 naming the bad op."""
    a = _assignment(request, _unit(c, p, unit))
    try:
        body = json.loads(request.body or b"{}")
    except (ValueError, UnicodeDecodeError) as e:
        return _bad(f"the request body is not JSON: {e}")
    if not isinstance(body, dict):
        return _bad("the request body must be a JSON object")
    version, ops = body.get("version"), body.get("ops")
    if not isinstance(version, int) or isinstance(version, bool):
        return _bad("version must be the integer the page loaded", "version")
    if not isinstance(ops, list) or not ops or len(ops) > MAX_OPS:
        return _bad(f"ops must be a list of 1 to {MAX_OPS} operations", "ops")
    try:
        state = service.apply_ops(a, request.user, version, ops, page=_page(request))
    except service.Conflict as e:
        return JsonResponse({"error": str(e), "version": e.version}, status=409)
    except service.BadOp as e:
        return _bad(str(e), e.field, e.index)
    return JsonResponse(state)


@login_required
@require_GET
def entries(request, c, p):
    project = _project(c, p)
    if not (Assignment.objects.filter(unit__project=project, user=request.user).exists()
            or _organizer(project, request.user)):
        raise Http404("no such project")
    q = request.GET.get("q", "").strip()[:200]
    return JsonResponse({"entries": service.search_entries(project, q, limit=20)})


def _annotators(u: Unit) -> list[dict]:
    """Each annotator's work on ``u`` for the side-by-side view (the whole unit, not a page:
    the curator compares lists; the text page shows the gold being made)."""
    out = []
    for a in (Assignment.objects.filter(unit=u, role=ANNOTATOR).select_related("user")
              .order_by("user__username")):
        rows = [{"id": x.pk, "kind": x.kind, "begin": x.begin, "end": x.end, "label": x.label,
                 "target": x.target, "value": x.value, "origin": x.origin,
                 "quote": u.text[x.begin:x.end] if x.begin is not None else ""}
                for x in Annotation.objects.filter(assignment=a).exclude(kind="relation")]
        out.append({"user": a.user.username, "status": a.status, "annotations": rows})
    return out


@login_required
@require_GET
def curate_page(request, c, p, unit):
    u = _unit(c, p, unit)
    a = _assignment(request, u, create_curator=True)
    ctx = _context(a, request)
    ctx["annotators"] = _annotators(u)
    return render(request, "workbench/curate.html", ctx)
