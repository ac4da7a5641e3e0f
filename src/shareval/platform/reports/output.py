"""Write a report to a folder: ``index.html`` (every table and figure, the page shows
the same), ``report.tex`` (every paper-sized table in one compilable document),
``tables/<slug>.csv`` and ``.tex``, ``figures/<slug>.png`` and ``.pdf``."""
from __future__ import annotations

import html
import io
import shutil
import zipfile
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from shareval.overview.report import Figure
from shareval.overview.tables import latex_document, to_csv, to_html, to_latex

BODY = "body.html"               # the page's fragment (figures as figures/<slug>.png)
MARKER = ".shareval-report"      # a folder holding it is a report: a build may replace it


class NotAReportFolder(Exception):
    """--out names a folder that holds other files: replacing it would lose them."""


def check_out(out: Path) -> None:
    out = Path(out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir())
                                              and not (out / MARKER).is_file())):
        raise NotAReportFolder(
            f"{out} exists and is not a report folder (it has no {MARKER}): a build "
            f"replaces its folder whole, so give a new or empty folder")


def report_dir(comp_slug: str, phase: str | None, runs: str) -> Path:
    return Path(settings.PRIVATE_DIR) / "reports" / comp_slug / "built" / \
        f"{phase or 'all-phases'}--{runs}"


def draw(fig: Figure):
    from shareval import plots
    d = fig.data
    if fig.kind == "pr":
        return plots.plot_pr_points(d["points"], fig.title, d["x"], d["y"], d.get("iso_f1", True))
    if fig.kind == "bars":
        return plots.plot_grouped_bars(d["groups"], d["series"], fig.title, d["ylabel"])
    if fig.kind == "det":
        return plots.plot_det_curves([(label, c["p_miss"], c["p_fa"], c.get("actual"))
                                      for label, c in d["curves"]], fig.title)
    if fig.kind == "values":
        from shareval.overview.figures_values import plot_value_distributions
        return plot_value_distributions(d["distributions"], fig.title)
    raise ValueError(fig.kind)


def write(report, out: Path) -> dict:
    """Everything into ``out`` (replaced whole, so no file of an older build stays);
    returns counts."""
    import uuid

    import matplotlib.pyplot as plt
    out = Path(out)
    check_out(out)
    # a name of its own: two builds at once never delete each other's files
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex[:12]}.building")
    (tmp / "tables").mkdir(parents=True)
    (tmp / "figures").mkdir()
    paper, n_fig = [], 0
    body = [f"<p class=\"muted\" id=\"report-built\">Built {timezone.now():%Y-%m-%d %H:%M} "
            f"UTC · {'every run' if report.runs == 'all' else 'primary runs'} · "
            f"<a href=\"report.zip\">all files (zip)</a></p>"]
    toc = ['<nav class="report-toc"><ol>']
    for sec in report.sections:
        toc.append(f'<li><a href="#{html.escape(sec.slug)}">{html.escape(sec.title)}</a></li>')
        body.append(f'<section class="report-section" id="{html.escape(sec.slug)}">'
                    f'<h2>{html.escape(sec.title)}</h2>')
        if sec.notes:
            body.append('<ul class="notes">' + "".join(f"<li>{html.escape(n)}</li>"
                                                     for n in sec.notes) + "</ul>")
        for t in sec.tables:
            (tmp / "tables" / f"{t.slug}.csv").write_text(to_csv(t))
            links = [f'<a href="tables/{html.escape(t.slug)}.csv">CSV</a>']
            if t.paper:
                (tmp / "tables" / f"{t.slug}.tex").write_text(to_latex(t))
                links.append(f'<a href="tables/{html.escape(t.slug)}.tex">LaTeX</a>')
                paper.append(t)
                body.append(f'<div class="report-table">{to_html(t)}'
                            f'<p class="dl">{" · ".join(links)}</p></div>')
            else:
                body.append(f'<div class="report-table"><p><strong>{html.escape(t.title)}'
                            f'</strong>: {len(t.rows):,} rows, CSV only. '
                            f'{" · ".join(links)}</p></div>')
        for f in sec.figures:
            fig = draw(f)
            for ext in ("png", "pdf"):
                fig.savefig(tmp / "figures" / f"{f.slug}.{ext}", dpi=110)
            plt.close(fig)
            n_fig += 1
            s = html.escape(f.slug)
            body.append(f'<figure class="report-figure"><img src="figures/{s}.png" '
                        f'alt="{html.escape(f.title)}"><figcaption>{html.escape(f.title)} · '
                        f'<a href="figures/{s}.pdf">PDF</a></figcaption></figure>')
        body.append("</section>")
    toc.append("</ol></nav>")
    fragment = "".join(toc + body)
    (tmp / BODY).write_text(fragment)
    (tmp / "report.tex").write_text(latex_document(paper, report.title))
    (tmp / "index.html").write_text(
        "<!doctype html><meta charset=\"utf-8\"><title>" + html.escape(report.title)
        + "</title><style>" + CSS + "</style><h1>" + html.escape(report.title) + "</h1>"
        + fragment)
    _zip(tmp)
    (tmp / MARKER).write_text("a shareval report; a new build replaces this folder\n")
    old = out.with_name(f".{out.name}.{uuid.uuid4().hex[:12]}.old")
    if out.exists():
        out.replace(old)
    tmp.replace(out)
    shutil.rmtree(old, ignore_errors=True)
    return {"sections": len(report.sections), "tables": sum(len(s.tables) for s in report.sections),
            "figures": n_fig}


def _zip(folder: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(folder.rglob("*")):
            if p.is_file() and p.name not in (BODY, "report.zip", MARKER):
                z.write(p, p.relative_to(folder).as_posix())
    (folder / "report.zip").write_bytes(buf.getvalue())


CSS = """body{font-family:sans-serif;margin:2em;color:#222}table.report{border-collapse:collapse;
margin:1em 0;font-size:13px}table.report caption{text-align:left;font-weight:bold;padding:4px 0}
table.report th,table.report td{padding:3px 8px;border-bottom:1px solid #ddd}
table.report th{border-bottom:2px solid #444}td.num,th.num{text-align:right;
font-variant-numeric:tabular-nums}tr.group-start td{border-top:2px solid #999}
.notes{font-size:12px;color:#555}figure img{max-width:100%}.muted{color:#666}"""
