"""A project's annotations as documents (``formats.standoff.Doc``) and back: the gold
for export, one annotator's work, imports, and a new dataset made from the gold.

**Which annotations are a unit's gold** (:func:`unit_gold`): a curator's, once the
curator has marked the unit done; else, when every annotator who finished it made the
same annotations, theirs; else (one annotator finished) that annotator's. A unit
whose finished annotators disagree and that no curator has finished is left out and
named in the report ("needs curation"); a unit nobody finished is left out too.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import transaction

from shareval.formats.standoff import LINKS, Doc, Relation, Span

from .models import (ANNOTATOR, ANSWER, CURATOR, DONE, IMPORTED, NEW, RELATION, SPAN,
                     Annotation,
                     Assignment, Entry, Project, Unit)
from .service import log

VARIABLE = "variable"        # SV-Ident: sentence-level links are answers with this label


@dataclass
class Report:
    units: int = 0                        # units exported or imported
    skipped: dict[str, str] = field(default_factory=dict)   # unit key -> why

    def lines(self) -> list[str]:
        return [f"{k}: {why}" for k, why in self.skipped.items()]


def _key(a: Annotation, pair: str = "") -> tuple:
    """What makes two annotators' annotations the same (a pair's span without a link is
    linked to the pair's data set)."""
    if a.kind == RELATION:
        return (a.kind, a.label, _key(a.head, pair), _key(a.tail, pair))
    return (a.kind, a.begin, a.end, a.label, a.target or (pair if a.kind == SPAN else ""),
            a.value)


def unit_gold(unit: Unit) -> tuple[list[Annotation] | None, str]:
    """(annotations, where they come from) or (None, why there is no gold yet)."""
    cur = unit.assignments.filter(role=CURATOR, status=DONE).order_by("-updated").first()
    if cur is not None:
        return list(cur.annotations.select_related("head", "tail")), f"curated by {cur.user}"
    done = list(unit.assignments.filter(role=ANNOTATOR, status=DONE).select_related("user"))
    if not done:
        return None, "not finished by anyone"
    pair = unit.meta.get("data_set_id", "")
    sets = [sorted(_key(a, pair) for a in x.annotations.select_related("head", "tail"))
            for x in done]
    if any(s != sets[0] for s in sets[1:]):
        return None, f"needs curation ({len(done)} annotators disagree)"
    return list(done[0].annotations.select_related("head", "tail")), \
        "agreed" if len(done) > 1 else f"annotated by {done[0].user}"


def to_doc(unit: Unit, anns: list[Annotation]) -> Doc:
    """One unit as a Doc: spans (a pair unit's spans without a link take the pair's data
    set), relations, answers, and sentence links in ``meta["variables"]``."""
    pair = unit.meta.get("data_set_id", "")
    answers = {a.label: a.value for a in anns if a.kind == ANSWER and a.label != VARIABLE}
    spans, ids = [], {}
    if answers.get("cited") != "no":           # a pair coded "not used" cites nothing
        for a in sorted((x for x in anns if x.kind == SPAN), key=lambda x: (x.begin, x.end, x.pk)):
            ids[a.pk] = f"T{len(ids) + 1}"
            spans.append(Span(a.begin, a.end, a.label, a.target or pair, ids[a.pk]))
    relations = [Relation(ids[a.head_id], ids[a.tail_id], a.label) for a in anns
                 if a.kind == RELATION and a.head_id in ids and a.tail_id in ids]
    meta = {k: v for k, v in unit.meta.items() if k not in ("cited", "token_starts")}
    meta[LINKS] = [a.target for a in anns if a.kind == ANSWER and a.label == VARIABLE]
    sentences = []
    if unit.meta.get("sents"):
        at = 0
        for s in unit.meta["sents"]:
            end = at + len(" ".join(s))
            sentences.append((at, end))
            at = end + 1
    return Doc(unit.key, unit.text, spans, relations, sentences, answers, meta)


def gold_docs(project: Project) -> tuple[list[Doc], Report]:
    report, docs = Report(), []
    for unit in project.units.all():
        anns, why = unit_gold(unit)
        if anns is None:
            report.skipped[unit.key] = why
            continue
        docs.append(to_doc(unit, anns))
        report.units += 1
    return docs, report


def annotator_docs(project: Project, user) -> list[Doc]:
    """One person's annotations, finished or not (their own export)."""
    return [to_doc(a.unit, list(a.annotations.select_related("head", "tail")))
            for a in Assignment.objects.filter(unit__project=project, user=user,
                                               role=ANNOTATOR).select_related("unit")]


# ---------------------------------------------------------------------------
# import

class ImportRefused(ValueError):
    """Nothing of the import was stored: the problems name the file and document."""


def import_docs(project: Project, docs: list[Doc], user, source: str,
                create_units: bool = False) -> Report:
    """Store documents as ``user``'s annotations (origin "import"), all or nothing.

    A document matches the unit with its id as key; with ``create_units`` a new unit is
    made for an unknown id (moving a project in), else it is refused. A link to an entry
    the project lacks is refused. A unit where ``user`` already has annotations is left
    as it is and reported: an import never overwrites saved work."""
    units = {u.key: u for u in project.units.filter(key__in=[d.id for d in docs])}
    known = set(Entry.objects.filter(project=project).values_list("key", flat=True))
    problems = []
    for d in docs:
        if d.id not in units and not create_units:
            problems.append(f"{source}: document {d.id!r}: no unit with this id in the project")
        elif d.id in units and units[d.id].text != d.text:
            problems.append(f"{source}: document {d.id!r}: its text differs from the unit's "
                            f"({len(d.text)} characters, the unit has {len(units[d.id].text)})")
        links = [s.target for s in d.spans if s.target] + list(d.meta.get(LINKS) or [])
        if project.schema.get("link"):
            for t in links:
                if t not in known and t != units.get(d.id, Unit()).meta.get("data_set_id"):
                    problems.append(f"{source}: document {d.id!r}: link {t!r}: no such entry "
                                    f"in the project's {project.schema['link']}")
    if problems:
        raise ImportRefused("\n".join(problems[:50]))
    report = Report()
    with transaction.atomic():
        pos = project.units.count()
        for d in docs:
            unit = units.get(d.id)
            if unit is None:
                unit = Unit.objects.create(project=project, key=d.id, title=d.id, text=d.text,
                                           position=pos, meta={k: v for k, v in d.meta.items()
                                                               if k != LINKS})
                pos += 1
            a, _ = Assignment.objects.get_or_create(unit=unit, user=user, role=ANNOTATOR)
            if a.annotations.exists() or a.version or a.status != NEW:
                report.skipped[d.id] = (f"{user} already worked on this unit "
                                        f"({a.annotations.count()} annotations, "
                                        f"{a.get_status_display()}): kept, not imported")
                continue
            _store_doc(a, d)
            report.units += 1
        log(project, "import", user=user, source=Path(source).name, units=report.units,
            skipped=len(report.skipped))
    return report


def _store_doc(a: Assignment, d: Doc) -> None:
    made = {}
    for s in d.spans:
        made[s.id or id(s)] = Annotation.objects.create(
            assignment=a, kind=SPAN, begin=s.begin, end=s.end, label=s.label, target=s.target,
            origin=IMPORTED)
    for r in d.relations:
        if r.head in made and r.tail in made:
            Annotation.objects.create(assignment=a, kind=RELATION, head=made[r.head],
                                      tail=made[r.tail], label=r.label, origin=IMPORTED)
    for k, v in d.answers.items():
        Annotation.objects.create(assignment=a, kind=ANSWER, label=k, value=v, origin=IMPORTED)
    for t in d.meta.get(LINKS) or []:
        Annotation.objects.create(assignment=a, kind=ANSWER, label=VARIABLE, target=t,
                                  value="yes", origin=IMPORTED)
    a.version += 1
    a.status = DONE
    a.save(update_fields=["version", "status"])


# ---------------------------------------------------------------------------
# a new dataset from the gold

DATASET_SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,49}")
TASK_OF_KIND = {"rcc-pairs": ("rcc-mentions", "rcc"), "rcc-publications": ("rcc-mentions", "rcc"),
                "svident": ("svident-detection", "svident"), "kbp": ("kbp-relations", "redocred")}


def make_dataset(project: Project, phase_slug: str, slug: str, by, task_slug: str | None = None,
                 title: str = ""):
    """Write the gold as the reference of a new dataset of ``phase_slug`` (its task: the
    competition's task ``task_slug``, else the first one of the kind's registry task)."""
    from shareval.platform.competitions.digests import tree_digest
    from shareval.platform.competitions.models import CompetitionTask, Dataset, Phase

    from .exports import write_format
    comp = project.competition
    if not DATASET_SLUG.fullmatch(slug or ""):
        raise ValueError(f"dataset name {slug!r}: letters, digits, - and _ only (at most 50)")
    phase = Phase.objects.filter(competition=comp, slug=phase_slug).first()
    if phase is None:
        raise ValueError(f"no phase {phase_slug!r} in {comp.slug}")
    if Dataset.objects.filter(phase=phase, slug=slug).exists():
        raise ValueError(f"phase {phase_slug} already has a dataset {slug!r}")
    if project.kind not in TASK_OF_KIND:
        raise ValueError(f"a {project.get_kind_display()} project has no scorer to load into")
    registry_task, fmt = TASK_OF_KIND[project.kind]
    tasks = CompetitionTask.objects.filter(competition=comp)
    task = (tasks.filter(slug=task_slug) if task_slug
            else tasks.filter(task_name__startswith=registry_task.split("-")[0])).first()
    if task is None:
        raise ValueError(f"no task {task_slug or registry_task!r} in {comp.slug} "
                         f"(give --task, one of: {', '.join(t.slug for t in tasks)})")
    docs, report = gold_docs(project)
    if not docs:
        raise ValueError("no unit has gold yet (finished, agreed or curated)")
    base = (Path(settings.PRIVATE_DIR) / "workbench").resolve()
    folder = (base / comp.slug / project.slug / phase.slug).resolve()
    if not folder.is_relative_to(base):
        raise ValueError(f"no folder for {comp.slug}/{project.slug}/{phase.slug}")
    dest = next(folder / name for name in [slug] + [f"{slug}-{n}" for n in range(2, 1000)]
                if not (folder / name).exists())      # a new folder: never over other files
    dest.mkdir(parents=True)
    ref = write_format(project, docs, fmt, dest / "reference")
    with transaction.atomic():
        ds = Dataset.objects.create(phase=phase, task=task, slug=slug,
                                    title=title or f"{project.title} (gold)",
                                    reference_path=str(ref.relative_to(settings.PRIVATE_DIR)),
                                    reference_digest=tree_digest(ref))
        log(project, "dataset", user=by, dataset=str(ds), units=report.units,
            skipped=len(report.skipped))
    return ds, report
