"""What the workbench's pages and commands do: projects, assignments, the unit
page's state and its edits (saved as you go, one request an action), families and
the trail. Views and the CLI call these; nothing here renders a page."""
from __future__ import annotations

import re

from django.db import transaction
from django.db.models import Count, Q
from django.urls import reverse
from django.utils import timezone

from shareval.platform.competitions.models import Membership

from .models import (ANNOTATOR, ANSWER, CURATED, CURATOR, DONE, FAMILY, MANUAL, NEW, PROGRESS,
                     RELATION, SPAN, STATUSES, SUGGESTED, Annotation, Assignment, Entry,
                     Event, Project, Verdict)

PAGE_CHARS = 12000          # a long publication is shown a page at a time

DEFAULT_SCHEMAS = {
    "rcc-pairs": {"labels": ["dataset"], "link": "catalog",
                  "questions": [{"key": "cited", "text": "Does the publication use this data set?"}]},
    "rcc-publications": {"labels": ["dataset"], "link": "catalog", "questions": []},
    "svident": {"labels": ["variable"], "link": "vocabulary",
                "questions": [{"key": "is_variable",
                               "text": "Does the sentence mention a survey variable?"}]},
    "kbp": {"labels": ["PER", "ORG", "LOC", "TIME", "NUM", "MISC"], "link": "",
            "questions": [], "relations": []},
    "text": {"labels": ["mention"], "link": "", "questions": []},
}
ANSWERS = ("yes", "no", "")


class Conflict(Exception):
    """The assignment was saved since the page loaded it (another window, another
    curator): nothing of this request is applied."""
    def __init__(self, message: str, version: int):
        super().__init__(message)
        self.version = version


class BadOp(Exception):
    def __init__(self, index: int, field: str, message: str):
        super().__init__(f"action {index + 1}, {field}: {message}")
        self.index, self.field = index, field


def log(project, action: str, unit=None, user=None, **detail) -> None:
    Event.objects.create(project=project, unit=unit, user=user, action=action, detail=detail)


# ---------------------------------------------------------------------------
# who may do what

def in_a_team(project: Project, user) -> bool:
    """Participants never annotate their own competition's gold (checked on every
    request, so joining a team ends access at once)."""
    return Membership.objects.filter(team__competition=project.competition, user=user,
                                     team__is_baseline=False).exists()


def assignment_for(project: Project, unit_id: int, user, role: str = ANNOTATOR):
    """The user's assignment of the unit in that role, or None (the view answers 404)."""
    if not user.is_authenticated or not user.is_active or in_a_team(project, user):
        return None
    return (Assignment.objects.select_related("unit__project__competition", "user")
            .filter(unit_id=unit_id, unit__project=project, user=user, role=role).first())


def may_organize(project: Project, user) -> bool:
    return user.is_authenticated and project.competition.is_organizer(user)


def curate_as_organizer(project: Project, unit_id: int, user):
    """An organizer opening a unit's curation page becomes its curator."""
    unit = project.units.filter(pk=unit_id).first()
    if unit is None:
        return None
    a, new = Assignment.objects.get_or_create(unit=unit, user=user, role=CURATOR)
    if new:
        log(project, "curator", unit=unit, user=user, curator=user.username, units=1)
    return Assignment.objects.select_related("unit__project__competition", "user").get(pk=a.pk)


# ---------------------------------------------------------------------------
# projects and assignments

def create_project(competition, slug: str, title: str, kind: str, creator, schema=None,
                   codebook: str = "", per_unit: int = 1, suggestions: bool = True) -> Project:
    if kind not in DEFAULT_SCHEMAS:
        raise ValueError(f"unknown project kind {kind!r} (use one of {', '.join(DEFAULT_SCHEMAS)})")
    if Project.objects.filter(competition=competition, slug=slug).exists():
        raise ValueError(f"the competition already has a project {slug!r}")
    p = Project.objects.create(competition=competition, slug=slug, title=title, kind=kind,
                               schema=schema or DEFAULT_SCHEMAS[kind], codebook=codebook,
                               per_unit=max(1, per_unit), suggestions=suggestions,
                               created_by=creator)
    log(p, "create", user=creator, kind=kind, per_unit=p.per_unit)
    return p


def assign(project: Project, users: list, per_unit: int | None = None, calibration: int = 0,
           by=None) -> dict:
    """Give every unit not yet assigned to annotators ``per_unit`` annotators, the least
    loaded first; the first ``calibration`` of them go to every user (a calibration round,
    for agreement). Returns counts."""
    if not users:
        raise ValueError("no annotators given")
    for u in users:
        if in_a_team(project, u):
            raise ValueError(f"{u.username} is in a team of this competition: participants "
                             f"cannot make its gold data")
    k = max(1, min(per_unit or project.per_unit, len(users)))
    units = list(project.units.annotate(n=Count("assignments", filter=Q(
        assignments__role=ANNOTATOR))).filter(n=0).order_by("position", "pk"))
    load = {u.pk: Assignment.objects.filter(unit__project=project, user=u,
                                            role=ANNOTATOR).count() for u in users}
    rnd = (project.units.order_by("-round").values_list("round", flat=True).first() or 0) + 1
    made, shared = [], 0
    with transaction.atomic():
        for i, unit in enumerate(units):
            if i < calibration:
                chosen = users
                unit.round = rnd
                unit.save(update_fields=["round"])
                shared += 1
            else:
                chosen = sorted(users, key=lambda u: (load[u.pk], users.index(u)))[:k]
            for u in chosen:
                load[u.pk] += 1
                made.append(Assignment(unit=unit, user=u, role=ANNOTATOR))
        Assignment.objects.bulk_create(made)
        log(project, "assign", user=by, users=[u.username for u in users], per_unit=k,
            calibration=shared, assignments=len(made))
    return {"units": len(units), "assignments": len(made), "calibration": shared}


def add_curator(project: Project, user, units=None, by=None) -> int:
    """A curator's assignment on each unit that two or more annotators finished (or the
    given units); their annotations are the unit's gold."""
    if in_a_team(project, user):
        raise ValueError(f"{user.username} is in a team of this competition: participants "
                         f"cannot make its gold data")
    if units is None:
        units = project.units.annotate(n=Count("assignments", filter=Q(
            assignments__role=ANNOTATOR, assignments__status=DONE))).filter(n__gte=2)
    made = 0
    for unit in units:
        _, new = Assignment.objects.get_or_create(unit=unit, user=user, role=CURATOR)
        made += new
    log(project, "curator", user=by, curator=user.username, units=made)
    return made


def progress(project: Project) -> list[dict]:
    """Per annotator (and curator): assigned, new, in progress, done."""
    rows = (Assignment.objects.filter(unit__project=project)
            .values("user__username", "role", "status").annotate(n=Count("pk")))
    out: dict = {}
    for r in rows:
        d = out.setdefault((r["user__username"], r["role"]),
                           {"user": r["user__username"], "role": r["role"], "assigned": 0,
                            **{s: 0 for s, _ in STATUSES}})
        d[r["status"]] += r["n"]
        d["assigned"] += r["n"]
    return sorted(out.values(), key=lambda d: (d["role"] != ANNOTATOR, d["user"]))


# ---------------------------------------------------------------------------
# the unit page

def pages(text: str, size: int = PAGE_CHARS) -> list[tuple[int, int]]:
    """Cut a text into pages of about ``size`` characters at paragraph (else line, else
    word) boundaries, so a span rarely crosses pages."""
    out, start, n = [], 0, len(text)
    while start < n:
        if n - start <= size * 1.25:
            out.append((start, n))
            break
        window = text[start + size // 2:start + size]
        cut = -1
        for sep in ("\n\n", "\n", ". ", " "):
            cut = window.rfind(sep)
            if cut >= 0:
                cut += len(sep)
                break
        end = start + size // 2 + cut if cut >= 0 else start + size
        out.append((start, end))
        start = end
    return out or [(0, 0)]


def _titles(project: Project, keys) -> dict[str, str]:
    keys = {k for k in keys if k}
    return dict(Entry.objects.filter(project=project, key__in=keys).values_list("key", "title"))


def _annotation_json(a: Annotation, titles: dict) -> dict:
    note = ""
    if a.origin == FAMILY and a.source_id:
        src = Annotation.objects.filter(pk=a.source_id).values_list("target", flat=True).first()
        note = f"coded for family member {titles.get(src, src)}" if src else "family copy"
    return {"id": a.pk, "kind": a.kind, "begin": a.begin, "end": a.end, "label": a.label,
            "target": a.target, "target_title": titles.get(a.target, ""), "value": a.value,
            "head": a.head_id, "tail": a.tail_id, "origin": a.origin,
            "suggestion": a.suggestion_id, "source": a.source_id, "note": note}


def _in_page(q, b: int, e: int):
    return q.filter(Q(begin__isnull=True) | Q(begin__lt=e, end__gt=b) | Q(begin=b, end=b))


def _nav(a: Assignment) -> dict:
    p, unit = a.unit.project, a.unit
    mine = list(Assignment.objects.filter(user=a.user, role=a.role, unit__project=p)
                .values_list("unit_id", flat=True))
    i = mine.index(unit.pk)
    c = p.competition.slug
    url = (lambda uid: reverse("workbench-unit", args=[c, p.slug, uid])
           + ("?as=curator" if a.role == CURATOR else ""))
    return {"list": reverse("workbench-project", args=[c, p.slug]),
            "prev": url(mine[i - 1]) if i > 0 else None,
            "next": url(mine[i + 1]) if i + 1 < len(mine) else None,
            "position": i + 1, "of": len(mine)}


def unit_state(a: Assignment, page: int = 0) -> dict:
    unit, project = a.unit, a.unit.project
    cuts = pages(unit.text)
    page = min(max(0, page), len(cuts) - 1)
    b, e = cuts[page]
    anns = list(_in_page(a.annotations.all(), b, e))
    sugg = list(_in_page(unit.suggestions.all(), b, e)) if project.suggestions else []
    verdicts = dict(a.verdicts.values_list("suggestion_id", "accepted"))
    titles = _titles(project, [x.target for x in anns] + [s.target for s in sugg] + [
        t for t in Annotation.objects.filter(copies__in=anns).values_list("target", flat=True)])
    out = {
        "unit": {"id": unit.pk, "key": unit.key, "title": unit.title, "meta": unit.meta,
                 "page": page, "pages": len(cuts), "page_begin": b, "page_end": e,
                 "text": unit.text[b:e], "length": len(unit.text), "round": unit.round},
        "version": a.version, "status": a.status, "role": a.role,
        "schema": project.schema, "suggestions_on": project.suggestions,
        "annotations": [_annotation_json(x, titles) for x in anns],
        "suggestions": [{"id": s.pk, "kind": s.kind, "begin": s.begin, "end": s.end,
                         "label": s.label, "target": s.target,
                         "target_title": titles.get(s.target, ""), "score": s.score,
                         "source": s.source, "verdict": verdicts.get(s.pk)} for s in sugg],
        "nav": _nav(a),
    }
    if a.role == CURATOR:
        out["others"] = others(a, b, e)
    return out


def others(a: Assignment, b: int, e: int) -> list[dict]:
    """For a curator: each annotator's annotations of the unit (this page), side by side."""
    rows = []
    for o in (Assignment.objects.filter(unit=a.unit, role=ANNOTATOR).select_related("user")
              .order_by("user__username")):
        anns = list(_in_page(o.annotations.all(), b, e))
        titles = _titles(a.unit.project, [x.target for x in anns])
        rows.append({"user": o.user.username, "status": o.status,
                     "annotations": [_annotation_json(x, titles) for x in anns]})
    return rows


def search_entries(project: Project, q: str, limit: int = 20) -> list[dict]:
    """Entries whose key, title or text hold every word of ``q`` (case-insensitive),
    titles matching first."""
    words = [w for w in re.split(r"\s+", q.strip()) if w][:8]
    qs = Entry.objects.filter(project=project)
    if not words:
        return []
    for w in words:
        qs = qs.filter(Q(key__iexact=w) | Q(title__icontains=w) | Q(text__icontains=w))
    rows = list(qs.values("key", "title", "family")[:200])
    low = q.strip().lower()
    rows.sort(key=lambda r: (r["key"].lower() != low, low not in r["title"].lower(),
                             len(r["title"]), r["key"]))
    return rows[:limit]


# ---------------------------------------------------------------------------
# edits

def _family_members(project: Project, target: str) -> list[str]:
    fam = Entry.objects.filter(project=project, key=target).values_list("family", flat=True).first()
    if not fam:
        return []
    return list(Entry.objects.filter(project=project, family=fam).exclude(key=target)
                .values_list("key", flat=True))


def _propagate(a: Assignment, ann: Annotation) -> list[Annotation]:
    """RCC coded one member of a data set family for all members cited in the same
    publication: copy a linked span to each other member the publication cites (its
    pair units of this annotator, or the members listed in the unit's ``cited``)."""
    unit, project = a.unit, a.unit.project
    target = ann.target or unit.meta.get("data_set_id", "")   # a pair's span: its data set
    if ann.kind != SPAN or not target or ann.origin == FAMILY:
        return []
    members = _family_members(project, target)
    if not members:
        return []
    copies = []
    if project.kind == "rcc-pairs":
        pub = unit.meta.get("publication_id")
        others = (Assignment.objects.filter(unit__project=project, user=a.user, role=a.role,
                                            unit__meta__publication_id=pub)
                  .exclude(unit=unit).select_related("unit"))
        for o in others:
            ds = o.unit.meta.get("data_set_id")
            if ds in members and o.unit.text == unit.text:
                copies.append(Annotation(assignment=o, kind=SPAN, begin=ann.begin, end=ann.end,
                                         label=ann.label, target=ds, origin=FAMILY, source=ann))
                _touch(o)
    else:
        cited = set(unit.meta.get("cited") or [])
        for m in members:
            if m in cited:
                copies.append(Annotation(assignment=a, kind=SPAN, begin=ann.begin, end=ann.end,
                                         label=ann.label, target=m, origin=FAMILY, source=ann))
    return Annotation.objects.bulk_create(copies) if copies else []


def _touch(a: Assignment) -> None:
    a.version += 1
    if a.status == NEW:
        a.status = PROGRESS
    a.updated = timezone.now()
    a.save(update_fields=["version", "status", "updated"])


def _int(op: dict, i: int, key: str) -> int:
    v = op.get(key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise BadOp(i, key, "expected a whole number")
    return v


def _str(op: dict, i: int, key: str, allowed=None, required=False) -> str:
    v = op.get(key, "")
    if v is None:
        v = ""
    if not isinstance(v, str):
        raise BadOp(i, key, "expected text")
    v = v.strip()
    if required and not v:
        raise BadOp(i, key, "missing")
    if allowed is not None and v not in allowed:
        raise BadOp(i, key, f"{v!r} is not one of {', '.join(map(repr, allowed))}")
    return v


def _check_target(project: Project, i: int, target: str) -> None:
    if target and not Entry.objects.filter(project=project, key=target).exists():
        what = {"catalog": "catalog", "vocabulary": "vocabulary"}.get(
            project.schema.get("link", ""), "project's entries")
        raise BadOp(i, "target", f"no entry {target!r} in the {what}")


def _add(a: Assignment, i: int, op: dict) -> Annotation:
    project, unit = a.unit.project, a.unit
    kind = _str(op, i, "kind", (SPAN, ANSWER, RELATION))
    target = _str(op, i, "target")
    _check_target(project, i, target)
    if kind == SPAN:
        b, e = _int(op, i, "begin"), _int(op, i, "end")
        if not 0 <= b < e <= len(unit.text):
            raise BadOp(i, "begin", f"span {b}-{e} is outside the text (0-{len(unit.text)})")
        label = _str(op, i, "label") or (project.schema.get("labels") or [""])[0]
        if label not in (project.schema.get("labels") or [label]):
            raise BadOp(i, "label", f"{label!r} is not a label of this project")
        if a.annotations.filter(kind=SPAN, begin=b, end=e, label=label, target=target).exists():
            raise BadOp(i, "begin", "this span is already annotated with that label and link")
        return Annotation.objects.create(assignment=a, kind=SPAN, begin=b, end=e, label=label,
                                         target=target, origin=MANUAL)
    if kind == ANSWER:           # a sentence-level link (SV-Ident's variables)
        label = _str(op, i, "label", required=True)
        if not target:
            raise BadOp(i, "target", "missing")
        if a.annotations.filter(kind=ANSWER, label=label, target=target).exists():
            raise BadOp(i, "target", f"{target!r} is already linked")
        return Annotation.objects.create(assignment=a, kind=ANSWER, label=label, target=target,
                                         value="yes", origin=MANUAL)
    label = _str(op, i, "label", project.schema.get("relations") or None, required=True)
    ends = []
    for key in ("head", "tail"):
        x = a.annotations.filter(pk=op.get(key) if isinstance(op.get(key), int) else -1,
                                 kind=SPAN).first()
        if x is None:
            raise BadOp(i, key, "not a span of this unit")
        ends.append(x)
    if ends[0].pk == ends[1].pk:
        raise BadOp(i, "tail", "a relation needs two different spans")
    return Annotation.objects.create(assignment=a, kind=RELATION, head=ends[0], tail=ends[1],
                                     label=label, origin=MANUAL)


def _curated_source(a: Assignment, i: int, op: dict):
    """A curator taking an annotator's annotation into the gold names it in ``source``."""
    if op.get("source") is None:
        return None
    if a.role != CURATOR:
        raise BadOp(i, "source", "only a curator takes annotations from others")
    sid = op.get("source")
    src = Annotation.objects.filter(pk=sid if isinstance(sid, int) else -1,
                                    assignment__unit=a.unit,
                                    assignment__role=ANNOTATOR).first()
    if src is None:
        raise BadOp(i, "source", "not an annotator's annotation of this unit")
    return src


def _family_source(a: Assignment, i: int, op: dict):
    """Undoing the deletion of a family copy names the span it was copied from."""
    if op.get("family_of") is None:
        return None
    sid = op.get("family_of")
    src = Annotation.objects.filter(pk=sid if isinstance(sid, int) else -1, kind=SPAN,
                                    assignment__user=a.user, assignment__role=a.role,
                                    assignment__unit__project=a.unit.project).first()
    if src is None:
        raise BadOp(i, "family_of", "not one of your spans in this project")
    return src


def _drop_copies(a: Assignment, ann: Annotation) -> None:
    """Delete the family copies of ``ann``; a sibling unit's page sees its version move."""
    for copy in Annotation.objects.filter(source=ann, origin=FAMILY).select_related("assignment"):
        if copy.assignment_id != a.pk:
            _touch(copy.assignment)
        copy.delete()


def _apply(a: Assignment, user, i: int, op) -> tuple[int | None, dict]:
    if not isinstance(op, dict):
        raise BadOp(i, "op", "expected an object")
    name = _str(op, i, "op", ("add", "delete", "verdict", "answer", "link", "status"))
    project, unit = a.unit.project, a.unit
    if name == "add":
        src = _curated_source(a, i, op)
        family = _family_source(a, i, op)
        ann = _add(a, i, op)
        if src is not None or family is not None:
            ann.origin, ann.source = (CURATED, src) if src is not None else (FAMILY, family)
            ann.save(update_fields=["origin", "source"])
        if src is None:                 # a curator takes each family copy by itself
            _propagate(a, ann)
        return ann.pk, {"add": _brief(ann)}
    if name == "delete":
        ann = a.annotations.filter(pk=op.get("id") if isinstance(op.get("id"), int) else -1).first()
        if ann is None:
            raise BadOp(i, "id", "no such annotation in this unit (already deleted?)")
        brief = _brief(ann)
        _drop_copies(a, ann)
        if ann.suggestion_id:
            a.verdicts.filter(suggestion_id=ann.suggestion_id).delete()
        ann.delete()
        return None, {"delete": brief}
    if name == "verdict":
        sid = op.get("suggestion")
        s = unit.suggestions.filter(pk=sid if isinstance(sid, int) else -1).first()
        if s is None:
            raise BadOp(i, "suggestion", "no such suggestion for this unit")
        accepted = op.get("accepted")
        if accepted is not None and not isinstance(accepted, bool):
            raise BadOp(i, "accepted", "expected true, false or null (withdraw)")
        old = a.annotations.filter(suggestion=s)
        if accepted is None:                 # undo: as if never decided
            for ann in old:
                _drop_copies(a, ann)
            old.delete()
            a.verdicts.filter(suggestion=s).delete()
            return None, {"verdict": s.pk, "accepted": None}
        Verdict.objects.update_or_create(assignment=a, suggestion=s,
                                         defaults={"accepted": accepted})
        made = None
        same = a.annotations.filter(kind=s.kind, begin=s.begin, end=s.end, target=s.target,
                                    suggestion=None).first() if accepted else None
        if accepted and not old.exists() and same is not None:
            same.origin, same.suggestion = SUGGESTED, s    # marked by hand first: one row
            same.save(update_fields=["origin", "suggestion"])
            made = same.pk
        elif accepted and not old.exists():
            ann = Annotation.objects.create(
                assignment=a, kind=s.kind, begin=s.begin, end=s.end,
                label=s.label or (project.schema.get("labels") or [""])[0], target=s.target,
                value="yes" if s.kind == ANSWER else "", origin=SUGGESTED, suggestion=s)
            _propagate(a, ann)
            made = ann.pk
        elif not accepted:
            for ann in old:
                _drop_copies(a, ann)
            old.delete()
        return made, {"verdict": s.pk, "accepted": accepted}
    if name == "answer":
        keys = [q["key"] for q in project.schema.get("questions") or []]
        key = _str(op, i, "key", keys or None, required=True)
        value = _str(op, i, "value", ANSWERS)
        src = _curated_source(a, i, op)
        a.annotations.filter(kind=ANSWER, label=key).delete()
        made = None
        if value:
            made = Annotation.objects.create(assignment=a, kind=ANSWER, label=key, value=value,
                                             origin=CURATED if src else MANUAL, source=src).pk
        return made, {"answer": key, "value": value}
    if name == "link":
        ann = a.annotations.filter(pk=op.get("id") if isinstance(op.get("id"), int) else -1,
                                   kind=SPAN).first()
        if ann is None:
            raise BadOp(i, "id", "no such span in this unit")
        target = _str(op, i, "target")
        _check_target(project, i, target)
        before = ann.target
        _drop_copies(a, ann)
        ann.target = target
        ann.save(update_fields=["target"])
        _propagate(a, ann)
        return ann.pk, {"link": ann.pk, "before": before, "after": target}
    value = _str(op, i, "value", (PROGRESS, DONE))
    a.status = value
    return None, {"status": value}


def _brief(a: Annotation) -> dict:
    return {"id": a.pk, "kind": a.kind, "begin": a.begin, "end": a.end, "label": a.label,
            "target": a.target, "value": a.value, "origin": a.origin}


def apply_ops(a: Assignment, user, version, ops, page: int = 0) -> dict:
    """Apply a list of edits to an assignment, all or nothing. ``version`` must be the
    assignment's current one (else :class:`Conflict`: another window or person saved
    since); each save adds one to it."""
    if isinstance(version, bool) or not isinstance(version, int):
        raise BadOp(0, "version", "expected the page's version number")
    if not isinstance(ops, list) or not ops:
        raise BadOp(0, "ops", "expected a list of actions")
    if len(ops) > 200:
        raise BadOp(200, "ops", "at most 200 actions a request")
    created, details = [], []
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().get(pk=a.pk)
        if locked.version != version:
            when = timezone.localtime(locked.updated).strftime("%H:%M:%S")
            raise Conflict(f"this unit was saved elsewhere at {when} (version {locked.version}, "
                           f"this page has {version}); reload to see it: nothing was "
                           f"overwritten", locked.version)
        for i, op in enumerate(ops):
            made, detail = _apply(locked, user, i, op)
            created.append(made)
            details.append(detail)
        _touch(locked)                  # a done unit edited stays done
        log(locked.unit.project, "edit", unit=locked.unit, user=user, role=locked.role,
            annotator=locked.user.username, version=locked.version, ops=details)
    out = unit_state(locked, page)
    out["created"] = created
    return out
