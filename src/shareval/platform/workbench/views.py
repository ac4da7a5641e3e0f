"""The workbench's pages: the projects of a competition, a project's page (the
organizer's overview, or the annotator's own list), its codebook and its trail."""
from __future__ import annotations

import csv
import json
import shutil
import tempfile
from pathlib import Path

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from shareval.platform.access import eligibility

from . import service
from .models import CURATOR, DONE, Assignment, Project
from .views_unit import project_of


@login_required
def home(request, c):
    comp = eligibility.visible(request, c)
    organizer = comp.is_organizer(request.user)
    if request.method == "POST":
        if not organizer:
            raise Http404("no such page")
        from .create import CreateRefused, create_from_uploads
        try:
            pr, n = create_from_uploads(comp, request.user, request.POST, request.FILES)
        except (CreateRefused, ValueError) as e:
            messages.error(request, f"no project made: {e}")
            return redirect("workbench-home", c=comp.slug)
        messages.success(request, f"project {pr.title}: {n['units']} units, {n['suggestions']} "
                                  f"suggestions, {n['entries']} entries in {n['families']} "
                                  f"families. Assign them below.")
        return redirect("workbench-project", c=comp.slug, p=pr.slug)
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
                   events=pr.events.count(), agreement=_agreement(pr),
                   formats=_formats(pr), gold=_gold_summary(pr),
                   phases=pr.competition.phases.all(), tasks=pr.competition.tasks.all())
    return render(request, "workbench/project.html", ctx)


def _formats(pr):
    from . import exports
    return exports.formats_of(pr)


def _gold_summary(pr) -> dict:
    from . import transfer
    ready, waiting = 0, {}
    for unit in pr.units.all():
        anns, why = transfer.unit_gold(unit)
        if anns is None:
            waiting[why.split(" (")[0]] = waiting.get(why.split(" (")[0], 0) + 1
        else:
            ready += 1
    return {"ready": ready, "waiting": sorted(waiting.items())}


def _agreement(pr):
    try:
        from .agreement import project_agreement
    except ImportError:            # the agreement module arrives with its own commit
        return None
    return project_agreement(pr)


def _organizer_post(request, pr):
    User = get_user_model()
    what = request.POST.get("what")
    if what == "import":
        _import(request, pr)
        return redirect("workbench-project", c=pr.competition.slug, p=pr.slug)
    if what == "dataset":
        _dataset(request, pr)
        return redirect("workbench-project", c=pr.competition.slug, p=pr.slug)
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


@login_required
@require_GET
def export(request, c, p, fmt):
    """The gold (``?who=USER``: that annotator's work) as a download."""
    from . import exports, transfer
    pr = project_of(request, c, p)
    if not service.may_organize(pr, request.user) or fmt not in exports.OF_KIND[pr.kind]:
        raise Http404("no such export")
    who = request.GET.get("who")
    if who:
        user = get_user_model().objects.filter(username=who).first()
        if user is None:
            raise Http404("no such annotator")
        docs = transfer.annotator_docs(pr, user)
    else:
        docs, _ = transfer.gold_docs(pr)
    tmp, out = exports.export_archive(pr, docs, fmt)
    data = out.read_bytes()
    shutil.rmtree(tmp, ignore_errors=True)
    resp = HttpResponse(data, content_type="application/zip" if out.suffix == ".zip"
                        else "application/octet-stream")
    resp["Content-Disposition"] = f'attachment; filename="{out.name}"'
    return resp


def _import(request, pr):
    from shareval.formats.errors import InvalidInput

    from . import exports, transfer
    from .create import upload_name, without
    f = request.FILES.get("file")
    fmt = request.POST.get("format", "")
    who = request.POST.get("as") or request.user.username
    user = get_user_model().objects.filter(username=who, is_active=True).first()
    if f is None or user is None:
        messages.error(request, "choose a file" if f is None else f"no such user: {who}")
        return
    if service.in_a_team(pr, user):
        messages.error(request, f"{who} is in a team of this competition: participants cannot "
                                f"make its gold data")
        return
    tmp = Path(tempfile.mkdtemp(prefix="wb-import-"))
    try:
        path = tmp / upload_name(f.name)
        with path.open("wb") as out:
            for chunk in f.chunks():
                out.write(chunk)
        docs = exports.read_format(pr, path, fmt)
        rep = transfer.import_docs(pr, docs, user, f.name,
                                   create_units=request.POST.get("create") == "on")
        messages.success(request, f"imported {rep.units} units as {who}'s annotations"
                         + (f"; kept {len(rep.skipped)} units that already had "
                            f"annotations: " + "; ".join(rep.lines()[:5]) if rep.skipped else ""))
    except InvalidInput as e:
        messages.error(request, "nothing imported: " + without(tmp, "; ".join(
            str(x) for x in e.problems[:8])))
    except (ValueError, transfer.ImportRefused) as e:
        messages.error(request, f"nothing imported: {without(tmp, str(e))}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _dataset(request, pr):
    from . import transfer
    try:
        ds, rep = transfer.make_dataset(pr, request.POST.get("phase", ""),
                                        request.POST.get("slug", ""), request.user,
                                        request.POST.get("task") or None)
        messages.success(request, f"dataset {ds} made from the gold of {rep.units} units"
                         + (f" ({len(rep.skipped)} left out: "
                            + "; ".join(rep.lines()[:5]) + ")" if rep.skipped else ""))
    except ValueError as e:
        messages.error(request, str(e))
