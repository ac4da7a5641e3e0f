"""The official tables of a phase (leaderboards/official.py): a page, and each
table as CSV, LaTeX and the DET plot as PNG or PDF.

Who sees what: organizers everything at any time; everyone who may read the
phase's leaderboards sees the top-line tables once the results are released
at the top level, and the breakdowns and DET plots once they are released in
detail (the phase's release buttons or schedule). Nothing of a hidden phase
reaches anyone else: the same 404 as a missing one.
"""
from __future__ import annotations

import io

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_safe

from shareval.platform.access import eligibility
from shareval.platform.access import visibility as access
from shareval.platform.competitions.models import Phase
from shareval.platform.leaderboards import official
from shareval.platform.leaderboards.combined import combined_boards

FORMATS = {"csv": "text/csv; charset=utf-8", "tex": "text/x-tex; charset=utf-8",
           "png": "image/png", "pdf": "application/pdf"}


def _phase(request, c, p) -> tuple[Phase, bool]:
    """The phase, and whether the viewer organizes its competition."""
    comp = eligibility.visible(request, c)
    phase = get_object_or_404(Phase.objects.select_related("competition"), competition=comp,
                              slug=p)
    if comp.is_organizer(request.user):
        return phase, True
    if not phase.leaderboard_public:
        raise Http404("no such phase")
    return phase, False


def _level(run_set: official.RunSet, organizer: bool) -> str:
    """What the viewer may see of one table: the least of its datasets' levels. A
    phase's datasets release differently (a ``feedback: false`` dataset beside one
    with feedback), so one dataset's level never speaks for another's table."""
    if organizer:
        return access.DETAILED
    levels = [access.dataset_level(d) for d in run_set.datasets + run_set.primary_from]
    return min(levels, key=lambda lv: access.at_least(lv, access.DETAILED) * 2
               + access.at_least(lv, access.TOP), default=access.NONE)


@require_safe
def page(request, c, p):
    phase, organizer = _phase(request, c, p)
    tables = []
    for run_set in official.run_sets(phase):
        level = _level(run_set, organizer)
        if access.at_least(level, access.TOP):
            tables.append(official.table(run_set, access.at_least(level, access.DETAILED)))
    return render(request, "shareval/official.html", {
        "comp": phase.competition, "phase": phase, "tables": tables,
        # boards combining datasets: each as its datasets' boards would show this viewer
        "combined": combined_boards(phase, request.user),
        "shown": bool(tables) or organizer,
        # breakdowns and curves are computed only for tables released in detail
        "detailed": any(t.breakdowns or t.curves for t in tables) or organizer,
        "organizer": organizer,
        # what participants see now: a blind phase's release, else everything
        "public": phase.released_at() if phase.blind else Phase.DETAILED})


@require_safe
def download(request, c, p, s, fmt):
    phase, organizer = _phase(request, c, p)
    run_set = next((x for x in official.run_sets(phase) if x.slug == s), None)
    if run_set is None or fmt not in FORMATS:
        raise Http404("no such table")
    level = _level(run_set, organizer)
    if not access.at_least(level, access.TOP):
        raise Http404("no such table")
    if fmt in ("png", "pdf") and not access.at_least(level, access.DETAILED):
        raise Http404("no such table")
    t = official.table(run_set, access.at_least(level, access.DETAILED))
    caption = f"{phase.competition.title}, {phase.title}: {run_set.title} (primary runs)"
    if fmt == "csv":
        body = official.as_csv(t)
    elif fmt == "tex":
        body = official.as_latex(t, caption)
    else:
        fig = official.det_figure(t)
        if fig is None:
            raise Http404("no primary run has a DET curve")
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=110)
        body = buf.getvalue()
    resp = HttpResponse(body, content_type=FORMATS[fmt])
    if fmt in ("csv", "tex"):
        resp["Content-Disposition"] = (f'attachment; filename="{phase.competition.slug}-'
                                       f'{phase.slug}-{run_set.slug}.{fmt}"')
    return resp
