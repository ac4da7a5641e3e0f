"""The official tables of a phase, as an overview paper prints them: per run
group (a MATERIAL language: its E2E and CLIR datasets), each team's primary run
with the task's official columns, ranked by the first; teams without a
primary named below; at the detailed level, the breakdowns of the primaries
(domain, query type, genre, mode, word count, open/closed) and their DET
curves on one plot.

A dataset in no group is a set of its own, so any phase has official tables.
Teams are compared on primaries only (plan 8.1): a team's other runs never
enter these tables.
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field

from shareval.formats.digits import natural_key
from shareval.platform.competitions.models import Dataset, Phase, RunGroup
from shareval.platform.leaderboards.records import latex_escape
from shareval.platform.leaderboards.rows import run_names
from shareval.platform.submissions.models import Submission

# (result metric, column label) per task of the primary run. E2E: the E2E values,
# then the CLIR part of the same archive at the CLIR beta (plan 8.1: "the CLIR
# results will be computed from the E2E primary"), then the open queries apart.
COLUMNS = {
    "material-e2e": [("aqwv", "E2E AQWV"), ("aqwv_raw", "E2E AQWV (raw judgments)"),
                     ("clir_aqwv", "CLIR AQWV"), ("clir_aqwv_all", "CLIR AQWV (all queries)"),
                     ("clir_aqwv_with_relevant", "CLIR AQWV (queries with relevant)"),
                     ("clir_mqwv", "MQWV"), ("clir_roc_auc", "AUC"),
                     ("open_aqwv", "open queries: E2E AQWV")],
    "material-clir": [("aqwv", "CLIR AQWV"), ("aqwv_all", "CLIR AQWV (all queries)"),
                      ("aqwv_with_relevant", "CLIR AQWV (queries with relevant)"),
                      ("mqwv", "MQWV"), ("roc_auc", "AUC"),
                      ("open_aqwv", "open queries: CLIR AQWV")],
}
# the breakdowns a detailed release adds, in the order overview papers give them
BREAKDOWNS = [("per_domain", "domain"), ("per_type", "query type"), ("per_genre", "genre"),
              ("per_mode", "mode"), ("per_word_count", "words in the query"),
              ("per_status", "open or closed query"), ("per_pack", "query pack")]
BREAKDOWN_VALUE = "aqwv"
JUDGED = "+j"                    # a reference digest with judgments folded in (judging app)


@dataclass
class RunSet:
    slug: str
    title: str
    datasets: list[Dataset]
    primary_from: list[Dataset]
    required: bool = False


@dataclass
class Table:
    set: RunSet
    columns: list[tuple[str, str]]
    rows: list[dict]
    without_primary: list[str]
    breakdowns: list[dict] = field(default_factory=list)
    curves: list[tuple] = field(default_factory=list)


def run_sets(phase: Phase) -> list[RunSet]:
    """The phase's groups, then every dataset in no group as a set of its own."""
    sets, grouped = [], set()
    for g in RunGroup.objects.filter(phase=phase).prefetch_related("datasets", "primary_from") \
            .order_by("id"):
        ds = sorted(g.datasets.all(), key=lambda d: d.pk)
        grouped.update(d.pk for d in ds)
        sets.append(RunSet(g.slug, g.title or g.slug, ds,
                           sorted(g.primary_from.all(), key=lambda d: d.pk) or ds,
                           g.primary_required))
    for d in phase.datasets.select_related("task").order_by("id"):
        if d.pk not in grouped:
            sets.append(RunSet(d.slug, d.title or d.slug, [d], [d]))
    return sets


def _columns(task_name: str, metric: str, metrics: dict) -> list[tuple[str, str]]:
    cols = COLUMNS.get(task_name)
    if cols is None:                          # any other task: its metrics, primary first
        names = [metric] if metric else []
        names += sorted(k for k, v in metrics.items()
                        if k != metric and isinstance(v, (int, float)))
        cols = [(n, n) for n in names]
    return cols


def _ranks(values: list) -> list:
    """Competition ranks (1, 1, 3) by value, higher first; no value, no rank."""
    out, prev, rank = [], object(), 0
    for i, v in enumerate(values):
        if v is None:
            out.append(None)
            continue
        if v != prev:
            rank, prev = i + 1, v
        out.append(rank)
    return out


def table(run_set: RunSet, detailed: bool) -> Table:
    primaries = list(Submission.objects.filter(
        dataset__in=run_set.primary_from, kind=Submission.PRIMARY, disqualified="")
        .exclude(state=Submission.CANCELLED)
        .select_related("team", "dataset__task").prefetch_related("scores"))
    with_runs = set(Submission.objects.filter(dataset__in=run_set.datasets)
                    .exclude(state=Submission.REJECTED)
                    .values_list("team__name", flat=True))
    rows, columns = [], None
    for sub in primaries:
        score = sub.current_score
        result = (score.result if score is not None else None) or {}
        metrics = result.get("metrics") or {}
        task = sub.dataset.task
        if columns is None:
            columns = _columns(task.task_name, task.metric, metrics)
        rows.append({"team": sub.team.name, "baseline": sub.team.is_baseline,
                     **_names(task.task_name, sub.original_name),
                     "dataset": sub.dataset.slug, "id": str(sub.pk), "state": sub.state,
                     "judged": bool(score and JUDGED in score.reference_digest),
                     "result": result})
    columns = columns or []
    for r in rows:                       # the first primary fixed the columns
        r["values"] = {k: _number((r["result"].get("metrics") or {}).get(k))
                       for k, _ in columns}
        r["cells"] = [r["values"][k] for k, _ in columns]
        # an E2E value before judging counts every summary as convincing: say so
        r["awaiting"] = r["result"].get("task") == "material-e2e" and not r["judged"]
    key = columns[0][0] if columns else None
    rows.sort(key=lambda r: (r["values"].get(key) is None, -(r["values"].get(key) or 0),
                             r["team"].lower()))
    for r, rank in zip(rows, _ranks([r["values"].get(key) for r in rows])):
        r["rank"] = rank
    have = {r["team"] for r in rows}
    missing = sorted(t for t in with_runs if t not in have)
    out = Table(run_set, columns, rows, missing)
    if detailed:
        out.breakdowns = _breakdowns(rows, _breakdown_label(columns))
        out.curves = [(r["team"], r["result"]["curve"]) for r in rows
                      if isinstance(r["result"].get("curve"), dict)]
    for r in rows:
        r.pop("result")
    return out


def _names(task_name: str, file: str) -> dict:
    """The run's public name (a MATERIAL SysLabel) and canonical file name; other
    tasks' file names stay private, as on the boards."""
    n = run_names(task_name, file)
    return {"run": n["run_name"] or "primary run", "file": n["run_file"]}


def _number(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) \
        else None


def _breakdown_label(columns: list[tuple[str, str]]) -> str:
    """The breakdowns' value named as the table's column names it ('E2E AQWV')."""
    return next((name for key, name in columns if key == BREAKDOWN_VALUE), "AQWV")


def _breakdowns(rows: list[dict], value: str = "AQWV") -> list[dict]:
    out = []
    for name, words in BREAKDOWNS:
        keys: list[str] = []
        for r in rows:
            for k in (r["result"].get("breakdowns") or {}).get(name, {}):
                if k not in keys:
                    keys.append(k)
        if not keys:
            continue
        keys.sort(key=lambda k: (natural_key(k), k))
        out.append({"name": name, "title": f"{value} by {words}", "keys": keys, "rows": [
            {"team": r["team"], "values": [_number(((r["result"].get("breakdowns") or {})
                                                    .get(name, {}).get(k) or {})
                                                   .get(BREAKDOWN_VALUE)) for k in keys]}
            for r in rows]})
    return out


def tables(phase: Phase, detailed: bool) -> list[Table]:
    return [table(s, detailed) for s in run_sets(phase)]


def as_csv(t: Table) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["rank", "team", "run", "judged"] + [label for _, label in t.columns])
    for r in t.rows:
        w.writerow([r["rank"] or "", r["team"], r["run"], "yes" if r["judged"] else "no"]
                   + ["" if r["values"][k] is None else f"{r['values'][k]:.4f}"
                      for k, _ in t.columns])
    for team in t.without_primary:
        w.writerow(["", team, "(no primary run)", ""] + [""] * len(t.columns))
    for b in t.breakdowns:
        w.writerow([])
        w.writerow([b["title"], "team"] + b["keys"])
        for r in b["rows"]:
            w.writerow(["", r["team"]] + ["" if v is None else f"{v:.4f}" for v in r["values"]])
    return buf.getvalue()


def as_latex(t: Table, caption: str = "") -> str:
    """booktabs, best value per column in bold, ready to paste."""
    best = {k: max((r["values"][k] for r in t.rows if r["values"][k] is not None),
                   default=None) for k, _ in t.columns}

    def cell(k, v):
        if v is None:
            return "--"
        text = f"{v:.4f}"
        return rf"\textbf{{{text}}}" if v == best[k] else text

    spec = "rl" + "r" * len(t.columns)
    lines = [r"\begin{table}[t]", r"\centering", rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
             " & ".join(["", "Team"] + [latex_escape(label) for _, label in t.columns])
             + r" \\", r"\midrule"]
    for r in t.rows:
        lines.append(" & ".join([str(r["rank"] or ""), latex_escape(r["team"])]
                                + [cell(k, r["values"][k]) for k, _ in t.columns]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(rf"\caption{{{latex_escape(caption)}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def det_figure(t: Table):
    """All primaries' DET curves on one plot (None when no primary stored one)."""
    if not t.curves:
        return None
    from shareval.plots import plot_det_curves
    return plot_det_curves([(team, c["p_miss"], c["p_fa"], c.get("actual"))
                            for team, c in t.curves],
                           f"{t.set.title}: DET curves of the primary runs")
