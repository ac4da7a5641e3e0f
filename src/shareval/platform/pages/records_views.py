"""Organizer downloads: overview-paper tables, bulk submissions, the competition archive."""
from __future__ import annotations

import tempfile

from django.http import FileResponse, Http404, HttpResponse
from django.utils import timezone

from shareval.platform.accounts.auth import token_or_session

from shareval.platform.bundles import archive
from shareval.platform.leaderboards import records
from shareval.platform.pages.views import _organizer_comp

FILTERS = ("phase", "task", "team", "dataset")


def _filters(request) -> dict:
    f = {k: request.GET.get(k, "") for k in FILTERS if request.GET.get(k)}
    f["primary_only"] = request.GET.get("runs") == "primary"
    return f


@token_or_session
def factsheet_table(request, c, fmt):
    """``factsheets.csv`` or ``factsheets.tex``; ``?phase=&dataset=&task=&team=&runs=primary``."""
    comp = _organizer_comp(request, c)
    if fmt not in ("csv", "tex"):
        raise Http404("no such format")
    header, rows = records.factsheet_table(comp, **_filters(request))
    if fmt == "csv":
        body, ctype = records.table_csv(header, rows), "text/csv; charset=utf-8"
    else:
        caption = f"{comp.title}: runs and their scores" + (
            f" ({request.GET['phase']})" if request.GET.get("phase") else "")
        body, ctype = records.table_latex(header, rows, caption), "text/x-tex; charset=utf-8"
    resp = HttpResponse(body, content_type=ctype)
    resp["Content-Disposition"] = f'attachment; filename="{comp.slug}-runs.{fmt}"'
    return resp


@token_or_session
def bulk_download(request, c):
    """The submitted files as a zip with a manifest; ``?phase=&task=&team=&runs=primary``."""
    comp = _organizer_comp(request, c)
    tmp = tempfile.TemporaryFile()
    records.bulk_zip(comp, tmp, **_filters(request))
    tmp.seek(0)
    return FileResponse(tmp, as_attachment=True, content_type="application/zip",
                        filename=f"{comp.slug}-submissions.zip")


@token_or_session
def export_archive(request, c):
    comp = _organizer_comp(request, c)
    tmp = tempfile.TemporaryFile()
    archive.export_competition(comp, tmp)
    tmp.seek(0)
    stamp = timezone.now().strftime("%Y%m%d-%H%M")
    return FileResponse(tmp, as_attachment=True, content_type="application/gzip",
                        filename=f"{comp.slug}-{stamp}.tgz")
