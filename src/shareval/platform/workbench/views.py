"""The workbench's pages: the projects of a competition, a project's page (the
organizer's overview, or the annotator's own list), its codebook and its trail."""
from __future__ import annotations

import csv
import json

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from shareval.platform.access import eligibility

from . import service
from .models import ANNOTATOR, CURATOR, DONE, Assignment, Project
from .views_unit import project_of


@login_required
@require_GET
def home(request, c):
    comp = eligibility.visible(request, c)
    organizer = comp.is_organizer(request.user)
    projects = Project.objects.filter(competition=comp).order_by("pk")
    if not organizer:
        projects = [p for p in projects if not service.in_a_team(p, request.user)
                    and p.units.filter(assignments__user=request.user).exists()]
    return render(request, "workbench/home.html", {"comp": comp, "projects": projects,
                                                   "organizer": organizer})


def _mine(project, user) -> list[dict]:
    rows = (Assignment.objects.filter(unit__project=project, user=user)
            .select_related("unit").order_by("role", "unit__position", "unit_id"))
    out = []
    for a in rows:
        n = a.annotations.count()
        out.append({"a": a, "unit": a.unit, "annotations": n,
                    "url_suffix": "?as=curator" if a.role == CURATOR else ""})
    return out


@login_required
def project(request, c, p):
    """Organizers: progress, members, agreement and the gold's exports; annotators and
    curators: their units with status and progress."""
    pr = project_of(request, c, p)
    organizer = service.may_organize(pr, request.user)
    mine = [] if service.in_a_team(pr, request.user) else _mine(pr, request.user)
    if not organizer and not mine:
        raise Http404("no such project")
    if request.method == "POST" and organizer:
        return _organizer_post(request, pr)
    ctx = {"comp": pr.competition, "pr": pr, "organizer": organizer, "mine": mine,
           "done": sum(r["a"].status == DONE for r in mine)}
    if organizer:
        ctx.update(progress=service.progress(pr), units=pr.units.count(),
                   calibration=pr.units.filter(round__gt=0).count(),
                   entries=pr.entries.count(),
                   families=pr.entries.exclude(family="").values("family").distinct().count(),
                   events=pr.events.count(), agreement=_agreement(pr))
    return render(request, "workbench/project.html", ctx)


def _agreement(pr):
    try:
        from .agreement import project_agreement
    except ImportError:            # the agreement module arrives with its own commit
        return None
    return project_agreement(pr)


def _organizer_post(request, pr):
    User = get_user_model()
    what = request.POST.get("what")
    names = [n.strip() for n in request.POST.get("users", "").replace(",", " ").split() if n.strip()]
    users = list(User.objects.filter(username__in=names, is_active=True))
    missing = sorted(set(names) - {u.username for u in users})
    try:
        if missing:
            raise ValueError(f"no such user: {', '.join(missing)}")
        if what == "assign":
            users.sort(key=lambda u: names.index(u.username))
            n = service.assign(pr, users, int(request.POST.get("per_unit") or pr.per_unit),
                               int(request.POST.get("calibration") or 0), by=request.user)
            messages.success(request, f"{n['assignments']} assignments on {n['units']} units "
                                      f"({n['calibration']} shared for calibration).")
        elif what == "curator" and len(users) == 1:
            n = service.add_curator(pr, users[0], by=request.user)
            messages.success(request, f"{users[0].username} curates {n} more units.")
        else:
            raise ValueError("give one user name for a curator, or annotators to assign")
    except ValueError as e:
        messages.error(request, str(e))
    return redirect("workbench-project", c=pr.competition.slug, p=pr.slug)


@login_required
@require_GET
def codebook(request, c, p):
    pr = project_of(request, c, p)
    if not (service.may_organize(pr, request.user) or _mine(pr, request.user)) \
            or service.in_a_team(pr, request.user):
        raise Http404("no such project")
    return render(request, "workbench/codebook.html", {"comp": pr.competition, "pr": pr})


@login_required
@require_GET
def trail(request, c, p):
    pr = project_of(request, c, p)
    if not service.may_organize(pr, request.user):
        raise Http404("no such project")
    resp = HttpResponse(content_type="text/csv; charset=utf-8")
    resp["Content-Disposition"] = f'attachment; filename="{pr.slug}-trail.csv"'
    w = csv.writer(resp)
    w.writerow(["time", "user", "unit", "action", "detail"])
    for e in pr.events.select_related("user", "unit"):
        w.writerow([e.created.isoformat(), e.user.username if e.user else "",
                    e.unit.key if e.unit else "", e.action,
                    _safe(json.dumps(e.detail, ensure_ascii=False))])
    return resp


def _safe(cell: str) -> str:
    return "'" + cell if cell[:1] in ("=", "+", "-", "@") else cell
