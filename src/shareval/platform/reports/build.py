"""Gather a competition's stored scores into the report's sections (overview/report.py
makes the tables): per dataset, every team's primary (or every run), with its
per-unit statistics; the phase's combined boards; RCC fields and methods; SV-Ident's
annotator agreement from the reference. No submission file is read.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from shareval.formats.errors import InvalidInput
from shareval.overview.properties import read_properties
from shareval.overview.report import Run, Section, dataset_section
from shareval.overview.tables import COUNT, NUMBER, TEXT, Column, Table
from shareval.platform.competitions.models import Competition, Dataset, Phase
from shareval.platform.leaderboards.official import JUDGED
from shareval.platform.leaderboards.rows import run_names
from shareval.platform.submissions.models import Submission
from shareval.tasks.base import UnitStats

PRIMARY, ALL = "primary", "all"
SVIDENT = ("svident-detection", "svident-disambiguation")
FIELDS_METHODS = "rcc-fields-methods"


@dataclass
class Report:
    competition: Competition
    phases: list[Phase]
    runs: str
    sections: list[Section] = field(default_factory=list)

    @property
    def title(self) -> str:
        which = ", ".join(p.title for p in self.phases)
        return f"{self.competition.title}: {which}" if which else self.competition.title


def properties_dir(comp: Competition) -> Path:
    return Path(settings.PRIVATE_DIR) / "reports" / comp.slug / "properties"


def store_properties(dataset: Dataset, name: str, data: bytes) -> int:
    """Check the organizer's document-properties CSV, then keep it for the dataset's
    report; returns the number of documents. A refused file replaces nothing."""
    text = data.decode("utf-8-sig", errors="strict")
    props = read_properties(name, text=text)
    d = properties_dir(dataset.phase.competition)
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / f".{dataset.phase.slug}--{dataset.slug}.csv.tmp"
    tmp.write_text(text)
    tmp.replace(properties_file(dataset))
    return len(props)


def properties_file(dataset: Dataset) -> Path:
    return properties_dir(dataset.phase.competition) / f"{dataset.phase.slug}--{dataset.slug}.csv"


def stored_properties(dataset: Dataset) -> dict:
    p = properties_file(dataset)
    if not p.is_file():
        return {}
    try:
        return read_properties(p)
    except InvalidInput:                      # checked when stored; never fails the report
        return {}


def _runs(dataset: Dataset, which: str) -> tuple[list[Run], list[str]]:
    qs = (Submission.objects.filter(dataset=dataset, state=Submission.SCORED, disqualified="")
          .select_related("team").prefetch_related("scores").order_by("team__name", "created"))
    if which == PRIMARY:
        qs = qs.filter(kind=Submission.PRIMARY)
    subs = list(qs)
    notes = []
    task_name = dataset.task.task_name
    counter: dict[str, int] = {}
    runs, awaiting = [], set()
    for s in subs:
        sc = s.current_score
        if sc is None:
            continue
        counter[s.team.name] = counter.get(s.team.name, 0) + 1
        result, note = sc.result or {}, ""
        if dataset.split and sc.private_result is not None:
            result, note = sc.private_result, "split dataset: the private part, which keeps " \
                                              "no per-unit statistics"
        name = run_names(task_name, s.original_name)["run_name"]
        run = name or ("primary" if s.kind == Submission.PRIMARY
                       else f"run {counter[s.team.name]}")
        if s.team.is_baseline:
            run += " (baseline)"
        label = s.team.name if which == PRIMARY else f"{s.team.name}: {run}"
        stats = None
        if sc.unit_stats and not (dataset.split and sc.private_result is not None):
            stats = UnitStats.from_dict(sc.unit_stats)
            if stats.metric != dataset.task.metric:       # e.g. judged F1 ranks, not entity F1
                note = (f"its stored per-unit statistics are of {stats.metric}, not of the "
                        f"primary metric {dataset.task.metric}")
                stats = None
        runs.append(Run(label, s.team.name, run, s.kind == Submission.PRIMARY, result, stats,
                        note))
        if JUDGED not in sc.reference_digest:
            awaiting.add(id(runs[-1]))
    labels = [r.label for r in runs]
    for lab in {x for x in labels if labels.count(x) > 1}:     # two primaries of one team
        n = 0
        for r in runs:
            if r.label == lab:
                n += 1
                r.label = f"{lab} ({n})"
    if which == PRIMARY:
        with_runs = set(Submission.objects.filter(dataset=dataset)
                        .exclude(state__in=[Submission.REJECTED, Submission.CANCELLED])
                        .values_list("team__name", flat=True))
        without = sorted(with_runs - {r.team for r in runs})
        if without:
            notes.append(f"submitted runs but no scored primary run: {', '.join(without)} "
                         f"(not ranked; `--runs all` lists every run)")
    waiting = [r.label for r in runs if task_name == "material-e2e" and id(r) in awaiting]
    if waiting:
        notes.append(f"E2E values await the judges' answers on the summaries of "
                     f"{', '.join(waiting)} (docs/e2e-judging.md); until then they are --")
    disq = Submission.objects.filter(dataset=dataset).exclude(disqualified="").count()
    if disq:
        notes.append(f"{disq} disqualified run{'s' if disq != 1 else ''} left out")
    return runs, notes


def dataset_report(dataset: Dataset, which: str = PRIMARY, samples: int = 10_000,
                   seed: int = 0) -> Section:
    runs, notes = _runs(dataset, which)
    ct = dataset.task
    title = f"{dataset.phase.title}: {dataset.title or dataset.slug}"
    slug = f"{dataset.phase.slug}-{dataset.slug}"
    sec = dataset_section(slug, title, runs, ct.metric, ct.lower_is_better,
                          stored_properties(dataset), samples, seed, notes)
    if ct.task_name in SVIDENT:
        t = agreement_table(dataset, slug, title)
        if t is not None:
            sec.tables.append(t)
    return sec


def agreement_table(dataset: Dataset, slug: str, title: str) -> Table | None:
    """SV-Ident Table 2: Cohen's kappa (detection), Krippendorff's alpha over the sets
    of variables (MASI and Jaccard distances), per language; from the reference's
    per-annotator columns (none: no table)."""
    from shareval.tasks.svident import annotator_agreement
    path = dataset.reference_file
    if path is None or not path.exists():
        return None
    try:
        ref = dataset.task.registry_task.reference(str(path))
    except InvalidInput:
        return None
    agreement = annotator_agreement(ref)
    if not agreement:
        return None
    cols = [Column("lang", "Language", TEXT), Column("sentences", "Sentences", COUNT),
            Column("kappa", "Cohen's kappa (Task 1)", NUMBER),
            Column("masi", "alpha, MASI (Task 2)", NUMBER),
            Column("jaccard", "alpha, Jaccard (Task 2)", NUMBER),
            Column("variables", "Variables labelled", COUNT)]
    rows = [{"lang": lang, "sentences": a.get("sentences"), "kappa": a.get("cohen_kappa"),
             "masi": a.get("alpha_masi"), "jaccard": a.get("alpha_jaccard"),
             "variables": a.get("variables_labelled")}
            for lang, a in agreement.items()]
    names = next((a.get("annotators") for a in agreement.values() if a.get("annotators")), [])
    notes = [f"annotators: {', '.join(map(str, names))}" if names else "",
             "kappa on is_variable over the sentences both annotators labelled (the mean "
             "over pairs with more annotators); alpha over the variable sets of the "
             "sentences any annotator marked; -- where agreement is undefined"]
    return Table(f"{slug}-agreement", f"{title}: inter-annotator agreement", cols, rows,
                 [n for n in notes if n])


def build(comp: Competition, phase: str | None = None, runs: str = PRIMARY,
          samples: int = 10_000, seed: int = 0, rule: str = "majority") -> Report:
    phases = list(Phase.objects.filter(competition=comp).order_by("start", "id"))
    if phase:
        phases = [p for p in phases if p.slug == phase]
        if not phases:
            raise LookupError(f"no phase {phase!r} in competition {comp.slug!r}")
    rep = Report(comp, phases, runs)
    for ph in phases:
        for ds in ph.datasets.select_related("task", "phase").order_by("id"):
            if ds.task.task_name == FIELDS_METHODS:
                continue
            rep.sections.append(dataset_report(ds, runs, samples, seed))
        rep.sections += combined_sections(ph)
        rep.sections += fields_methods_sections(ph, rule)
    return rep


def combined_sections(phase: Phase) -> list[Section]:
    """The phase's boards across datasets (Codabench's computed columns)."""
    try:
        from shareval.platform.leaderboards.combined import combined_boards
    except ImportError:                       # not built in this tree
        return []
    out = []
    for b in combined_boards(phase):
        cols = [Column("rank", "Rank", COUNT), Column("team", "Team", TEXT)]
        cols += [Column(c["key"], c["label"], NUMBER,
                        "min" if "rank" in c["key"] else "max") for c in b["columns"]]
        rows = [{"rank": r.get("rank"), "team": r["team"], **r.get("values", {})}
                for r in b["rows"]]
        notes = list(b.get("notes", [])) + [f"{r['team']}: {n}" for r in b["rows"]
                                            for n in r.get("notes", [])]
        slug = f"{phase.slug}-board-{b['slug']}"
        out.append(Section(slug, f"{phase.title}: {b['title']}",
                           tables=[Table(slug, f"{phase.title}: {b['title']}", cols, rows,
                                         notes)]))
    return out


def fields_methods_sections(phase: Phase, rule: str = "majority") -> list[Section]:
    from shareval.overview.report import Figure
    from shareval.platform.reports.rcc_fields import fields_methods
    out = []
    for fm in fields_methods(phase, rule):
        slug = f"{phase.slug}-{fm['dataset']}"
        title = f"{phase.title}: {fm['title']} (research {fm.get('kind') or 'values'})"
        sec = Section(slug, title, notes=list(fm.get("notes", [])))
        teams = fm["teams"]
        dists = fm["distributions"]
        values: list[str] = []
        for t in teams:
            for v in sorted(dists.get(t, {}), key=lambda v: -dists[t][v]):
                if v not in values:
                    values.append(v)
        cols = [Column("value", "Value", TEXT)] + [Column(f"t{i}", t, NUMBER, None, 3)
                                                    for i, t in enumerate(teams)]
        rows = [{"value": v, **{f"t{i}": dists.get(t, {}).get(v, 0.0)
                                for i, t in enumerate(teams)}} for v in values]
        sec.tables.append(Table(f"{slug}-distributions", f"{title}: share of each team's "
                                f"records per value", cols, rows,
                                ["0.000: the team never gives the value"]))
        ocols = [Column("a", "A", TEXT), Column("b", "B", TEXT),
                 Column("jac", "Jaccard of value sets", NUMBER, "max", 3),
                 Column("w", "Weighted overlap", NUMBER, "max", 3)]
        orows = [{"a": a, "b": b, "jac": o.get("value_jaccard"), "w": o.get("weighted_overlap")}
                 for (a, b), o in fm["overlap"].items() if a < b]
        sec.tables.append(Table(f"{slug}-overlap", f"{title}: overlap of each pair of teams",
                                ocols, orows))
        rcols = [Column("rank", "Rank", COUNT), Column("team", "Team", TEXT),
                 Column("score", "Score", NUMBER, "max", 3)]
        sec.tables.append(Table(f"{slug}-ranking", f"{title}: ranking by {fm['rule']}",
                                rcols, list(fm["ranking"]),
                                [fm["rule_text"]] + ([] if fm["ranking"] else
                                                     ["no ranking: see the notes above"])))
        if dists:
            sec.figures.append(Figure(f"{slug}-values", "values", title,
                                      {"distributions": dists}))
        out.append(sec)
    return out
