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

FORMATS = {"csv": "text/csv; charset=utf-8", "tex": "text/x-tex; charset=utf-8",
           "png": "image/png", "pdf": "application/pdf"}


def _phase_and_level(request, c, p) -> tuple[Phase, str]:
    comp = eligibility.visible(request, c)
    phase = get_object_or_404(Phase.objects.select_related("competition"), competition=comp,
                              slug=p)
    if comp.is_organizer(request.user):
        return phase, access.DETAILED
    if not phase.leaderboard_public:
        raise Http404("no such phase")
    ds = phase.datasets.first()
    return phase, access.dataset_level(ds) if ds is not None else access.NONE


@require_safe
def page(request, c, p):
    phase, level = _phase_and_level(request, c, p)
    shown = access.at_least(level, access.TOP)
    tables = official.tables(phase, access.at_least(level, access.DETAILED)) if shown else []
    return render(request, "shareval/official.html", {
        "comp": phase.competition, "phase": phase, "tables": tables, "shown": shown,
        "detailed": access.at_least(level, access.DETAILED),
        "organizer": phase.competition.is_organizer(request.user),
        # what participants see now: a blind phase's release, else everything
        "public": phase.released_at() if phase.blind else Phase.DETAILED})


@require_safe
def download(request, c, p, s, fmt):
    phase, level = _phase_and_level(request, c, p)
    if fmt not in FORMATS or not access.at_least(level, access.TOP):
        raise Http404("no such table")
    if fmt in ("png", "pdf") and not access.at_least(level, access.DETAILED):
        raise Http404("no such table")
    run_set = next((x for x in official.run_sets(phase) if x.slug == s), None)
    if run_set is None:
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
