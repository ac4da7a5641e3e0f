"""Organizers' records of the runs: overview-paper tables from the fact sheets,
and bulk downloads of the submitted files.

Both read every run of a competition (or of one phase, task, team), scored or
not, disqualified ones marked; they are organizers-only (see ``pages/records_views.py``).
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import zipfile
from pathlib import Path

from shareval.formats.spreadsheet import escape_formula
from shareval.platform.submissions.factsheets import fields as sheet_fields
from shareval.platform.submissions.models import Submission

from shareval.platform.leaderboards.rows import scalar_metrics
from shareval.platform.competitions.models import Competition


def select_runs(comp: Competition, phase: str = "", task: str = "", team: str = "",
                dataset: str = "", primary_only: bool = False):
    qs = (Submission.objects.filter(dataset__phase__competition=comp)
          .exclude(state=Submission.REJECTED)
          .select_related("team", "dataset__phase", "dataset__task")
          .order_by("dataset__phase__start", "dataset__id", "team__name", "created"))
    if phase:
        qs = qs.filter(dataset__phase__slug=phase)
    if dataset:
        qs = qs.filter(dataset__slug=dataset)
    if task:
        qs = qs.filter(dataset__task__slug=task)
    if team:
        qs = qs.filter(team__name=team)
    if primary_only:
        qs = qs.filter(kind=Submission.PRIMARY)
    return qs


def factsheet_table(comp: Competition, **filters) -> tuple[list[str], list[list]]:
    """(header, rows): one row per scored run with its fact sheet and its scores on the
    shown board columns (private part too for split datasets, as ``private_<metric>``),
    best first per dataset by the primary metric; disqualified runs are left out."""
    runs = [s for s in select_runs(comp, **filters).prefetch_related("scores")
            if s.state == Submission.SCORED and not s.disqualified]
    sheet = [f["name"] for f in sheet_fields(comp.factsheet)]
    metrics: list[str] = []
    table = []
    for s in runs:
        sc = next((x for x in s.scores.all() if x.current), None)
        m = scalar_metrics(sc.result) if sc else {}
        cols = [c["metric"] for c in (s.dataset.board or {}).get("columns", [])]
        names = [s.dataset.task.metric] + [c for c in (cols or m) if c != s.dataset.task.metric]
        values = {k: m.get(k) for k in names}
        if sc is not None and sc.private_result:
            pm = scalar_metrics(sc.private_result)
            values.update({f"private_{k}": pm.get(k) for k in names})
        digits = {c["metric"]: c["precision"] for c in (s.dataset.board or {}).get("columns", [])
                  if c.get("precision") is not None}
        for k, v in list(values.items()):
            d = digits.get(k.removeprefix("private_"))
            if isinstance(v, float) and d is not None:
                values[k] = round(v, d)
        metrics += [k for k in values if k not in metrics]
        sign = 1 if s.dataset.task.lower_is_better else -1
        key = (s.dataset.phase.start, s.dataset_id, sc is None or sc.primary is None,
               sign * ((sc.primary if sc else 0) or 0))
        table.append((key, s, values))
    table.sort(key=lambda t: t[0])
    header = ["phase", "dataset", "team", "run", "submission", *sheet, "description", *metrics]
    rows = []
    for _, s, values in table:
        rows.append([s.dataset.phase.slug, s.dataset.slug, s.team.name, s.kind, str(s.pk),
                     *[s.factsheet.get(f, "") for f in sheet], s.description,
                     *[values.get(k) for k in metrics]])
    return header, rows


def table_csv(header, rows) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\r\n")
    w.writerow(header)
    w.writerows([escape_formula(v) for v in r] for r in rows)
    return out.getvalue()


LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                 "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                 "^": r"\textasciicircum{}"}


def latex_escape(v) -> str:
    return "".join(LATEX_SPECIAL.get(ch, ch) for ch in str(v))


def _cell(v) -> str:
    if v is None:
        return "--"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4f}".rstrip("0").rstrip(".") if abs(v) < 1e6 else f"{v:.3g}"
    return latex_escape(v)


LATEX_COLUMNS = ("team", "run", "method", "training", "resources")


def table_latex(header, rows, caption: str = "") -> str:
    """A booktabs table for an overview paper: team, run, method, training condition,
    resources and the score columns (the full record stays in the CSV)."""
    keep = [i for i, h in enumerate(header) if h in LATEX_COLUMNS or
            i >= header.index("description") + 1]
    heads = [header[i] for i in keep]
    nums = sum(1 for i in keep if i > header.index("description"))
    spec = "l" * (len(keep) - nums) + "r" * nums
    lines = [r"\begin{table}[t]", r"\centering", rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
             " & ".join(latex_escape(h) for h in heads) + r" \\", r"\midrule"]
    prev = None
    for r in rows:
        if prev is not None and (r[0], r[1]) != prev:
            lines.append(r"\midrule")
        prev = (r[0], r[1])
        lines.append(" & ".join(_cell(r[i]) for i in keep) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}",
              rf"\caption{{{latex_escape(caption)}}}" if caption else "", r"\end{table}", ""]
    return "\n".join(x for x in lines if x != "") + "\n"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def bulk_zip(comp: Competition, dest, **filters) -> int:
    """Write the selected runs' files into a zip at ``dest`` (a path or file object)
    with ``manifest.csv`` and ``manifest.json`` (team, phase, dataset, task, run kind,
    state, original name, path in the zip, size, sha256, fact sheet, primary score);
    returns how many files it holds. Files are stored as
    ``phase/dataset/team/<submission id>-<original name>``."""
    entries = []
    with zipfile.ZipFile(dest, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for s in select_runs(comp, **filters).prefetch_related("scores"):
            if not s.stored_name or not s.path.is_file():
                continue
            safe_team = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in s.team.name)
            safe_name = "".join(ch if ch.isalnum() or ch in "-_." else "_"
                                for ch in s.original_name)[:120]
            arc = f"{s.dataset.phase.slug}/{s.dataset.slug}/{safe_team}/{s.pk}-{safe_name}"
            z.write(s.path, arc)
            sc = next((x for x in s.scores.all() if x.current), None)
            entries.append({"submission": str(s.pk), "team": s.team.name,
                            "phase": s.dataset.phase.slug, "dataset": s.dataset.slug,
                            "task": s.dataset.task.slug, "kind": s.kind, "state": s.state,
                            "disqualified": s.disqualified, "file": s.original_name,
                            "path": arc, "size": s.size, "sha256": sha256(s.path),
                            "submitted": s.created.isoformat(),
                            "metric": s.dataset.task.metric,
                            "score": sc.primary if sc else None,
                            "method": s.factsheet.get("method", ""),
                            "factsheet": s.factsheet, "description": s.description})
        z.writestr("manifest.json", json.dumps({"competition": comp.slug, "filters": filters,
                                                "runs": entries}, indent=1))
        header = [k for k in (entries[0] if entries else {"submission": ""}) if k != "factsheet"]
        z.writestr("manifest.csv", table_csv(header, [[e.get(k) for k in header]
                                                      for e in entries]))
    return len(entries)
