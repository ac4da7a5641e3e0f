"""The organizer's report page: /c/<competition>/report/<phase>--<runs>/ shows the last
build (Build makes it again), its files are served below it; document properties are
uploaded here. Organizers only: everyone else gets 404."""
from __future__ import annotations

import re

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from shareval.formats.errors import InvalidInput
from shareval.platform.access import eligibility
from shareval.platform.competitions.models import Dataset, Phase

from . import build as report_build
from .output import BODY, NotAReportFolder, report_dir, write

KEY = re.compile(r"^(?P<phase>[-a-zA-Z0-9_]+?)--(?P<runs>primary|all)$")
FILE = re.compile(r"^(tables/[-a-zA-Z0-9_.]+\.(csv|tex)|figures/[-a-zA-Z0-9_.]+\.(png|pdf)"
                  r"|report\.(zip|tex)|index\.html)$")
TYPES = {"csv": "text/csv; charset=utf-8", "tex": "text/plain; charset=utf-8",
         "png": "image/png", "pdf": "application/pdf", "zip": "application/zip",
         "html": "text/html; charset=utf-8"}
MAX_PROPERTIES = 5_000_000


def _organizer(request, c):
    comp = eligibility.visible(request, c)
    if not comp.is_organizer(request.user):
        raise Http404("no such page")
    return comp


def _key(comp, key):
    m = KEY.match(key)
    if m is None:
        raise Http404("no such report")
    phase = None if m["phase"] == "all-phases" else m["phase"]
    if phase and not Phase.objects.filter(competition=comp, slug=phase).exists():
        raise Http404("no such phase")
    return phase, m["runs"]


@login_required
def home(request, c):
    comp = _organizer(request, c)
    phase = request.GET.get("phase") or "all-phases"
    runs = request.GET.get("runs") if request.GET.get("runs") in ("primary", "all") else "primary"
    key = f"{phase}--{runs}"
    _key(comp, key)                              # 404 for a phase that does not exist
    return redirect("report", c=comp.slug, key=key)


@login_required
def page(request, c, key):
    comp = _organizer(request, c)
    phase, runs = _key(comp, key)
    folder = report_dir(comp.slug, phase, runs)
    if request.method == "POST":
        if request.POST.get("action") == "properties":
            return _properties(request, comp, key)
        try:
            rep = report_build.build(comp, phase, runs)
            n = write(rep, folder)
        except (LookupError, NotAReportFolder) as e:
            messages.error(request, str(e))
        else:
            messages.success(request, f"report built: {n['sections']} sections, "
                                      f"{n['tables']} tables, {n['figures']} figures")
        return redirect("report", c=comp.slug, key=key)
    body = (folder / BODY).read_text() if (folder / BODY).is_file() else ""
    phases = list(Phase.objects.filter(competition=comp).order_by("start", "id"))
    datasets = list(Dataset.objects.filter(phase__competition=comp)
                    .select_related("phase").order_by("phase__start", "id"))
    for d in datasets:
        d.has_properties = report_build.properties_file(d).is_file()   # stored: checked
    return render(request, "reports/report.html", {
        "comp": comp, "key": key, "phase": phase or "all-phases", "runs": runs, "body": body,
        "phases": phases, "datasets": datasets})


def _properties(request, comp, key):
    d = Dataset.objects.filter(phase__competition=comp, pk=request.POST.get("dataset") or 0) \
        .select_related("phase__competition").first()
    f = request.FILES.get("file")
    if d is None or f is None:
        messages.error(request, "choose a dataset and a CSV file")
    elif f.size > MAX_PROPERTIES:
        messages.error(request, f"{f.name}: larger than {MAX_PROPERTIES:,} bytes")
    else:
        try:
            n = report_build.store_properties(d, f.name, f.read())
        except InvalidInput as e:
            messages.error(request, "properties not stored: " + "; ".join(e.lines()[:5]))
        except UnicodeDecodeError:
            messages.error(request, f"properties not stored: {f.name} is not UTF-8")
        else:
            messages.success(request, f"properties of {n} document{'s' if n != 1 else ''} "
                                      f"stored for {d}; build the report again to use them "
                                      f"(a document id that matches none of the dataset's "
                                      f"is named in the report's notes)")
    return redirect("report", c=comp.slug, key=key)


@login_required
@require_GET
def file(request, c, key, path):
    comp = _organizer(request, c)
    phase, runs = _key(comp, key)
    if not FILE.match(path) or ".." in path:
        raise Http404("no such file")
    p = report_dir(comp.slug, phase, runs) / path
    try:
        found = p.is_file()
    except OSError:                        # a name too long for the file system
        found = False
    if not found:
        raise Http404("no such file")
    ext = p.suffix.lstrip(".")
    resp = FileResponse(open(p, "rb"), content_type=TYPES[ext],
                        as_attachment=ext in ("zip", "csv", "tex"),
                        filename=f"{comp.slug}-{key}.zip" if ext == "zip" else p.name)
    resp["X-Content-Type-Options"] = "nosniff"
    return resp
