"""The annotation workbench: gold data made where it is scored.

A :class:`Project` of a competition holds a corpus cut into :class:`Unit` rows
(a publication, a publication–dataset pair, a sentence, a document), the
:class:`Entry` rows spans can link to (a data set catalog or a variable
vocabulary, grouped into families), and the reference systems'
:class:`Suggestion` rows. Each annotator (and each curator) works in an
:class:`Assignment` of a unit; their spans, answers and relations are
:class:`Annotation` rows, their decisions on suggestions :class:`Verdict` rows.
Every change is an :class:`Event` (append-only, as the RCC phase-2 trail).
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from shareval.platform.appendonly import AppendOnlyModel
from shareval.platform.competitions.models import Competition

KINDS = (("rcc-pairs", "RCC publication–dataset pairs"),
         ("rcc-publications", "RCC publications"),
         ("svident", "SV-Ident sentences"),
         ("kbp", "Re-DocRED documents"),
         ("text", "plain texts"))
ANNOTATOR, CURATOR = "annotator", "curator"
NEW, PROGRESS, DONE = "new", "progress", "done"
STATUSES = ((NEW, "new"), (PROGRESS, "in progress"), (DONE, "done"))
SPAN, ANSWER, RELATION = "span", "answer", "relation"
MANUAL, SUGGESTED, FAMILY, IMPORTED, CURATED = "manual", "suggestion", "family", "import", "curated"


class Project(models.Model):
    competition = models.ForeignKey(Competition, on_delete=models.CASCADE,
                                    related_name="workbench_projects")
    slug = models.SlugField()
    title = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, choices=KINDS)
    # {"labels": [...], "link": "catalog"|"vocabulary"|"", "questions": [{"key", "text"}],
    #  "relations": [...]}
    schema = models.JSONField(default=dict)
    codebook = models.TextField(blank=True)          # markdown, shown beside every unit
    per_unit = models.PositiveSmallIntegerField(default=1)   # annotators per regular unit
    suggestions = models.BooleanField(default=True)   # show the reference systems' proposals
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                                   related_name="workbench_projects")
    created = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["competition", "slug"],
                                               name="workbench_project_slug")]

    def __str__(self):
        return self.title


class Entry(models.Model):
    """A catalog data set or a survey variable a span or a sentence can link to."""
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="entries")
    key = models.CharField(max_length=200)
    title = models.CharField(max_length=500)
    text = models.TextField(blank=True)           # searched: title, label, question, mentions
    family = models.CharField(max_length=200, blank=True, db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "key"],
                                               name="workbench_entry_key")]


class Unit(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="units")
    key = models.CharField(max_length=300)        # publication id, "pub|dataset", uuid, title
    title = models.CharField(max_length=500)
    text = models.TextField()
    # publication_id, data_set_id, doc_id, lang, uuid, sentence offsets, cited entries
    meta = models.JSONField(default=dict, blank=True)
    position = models.PositiveIntegerField(default=0)
    round = models.PositiveSmallIntegerField(default=0)   # 0 regular, n calibration round n
    version = models.PositiveIntegerField(default=0)      # curation saves (conflicts)

    class Meta:
        ordering = ["position", "pk"]
        constraints = [models.UniqueConstraint(fields=["project", "key"],
                                               name="workbench_unit_key")]


class Suggestion(models.Model):
    unit = models.ForeignKey(Unit, on_delete=models.CASCADE, related_name="suggestions")
    kind = models.CharField(max_length=10, default=SPAN)     # span or answer (a link)
    begin = models.IntegerField(null=True, blank=True)
    end = models.IntegerField(null=True, blank=True)
    label = models.CharField(max_length=100, blank=True)
    target = models.CharField(max_length=200, blank=True)
    score = models.FloatField(default=0.0)
    source = models.CharField(max_length=40)                # "rcc-linker", "svident"

    class Meta:
        ordering = ["begin", "-score", "pk"]


class Assignment(models.Model):
    unit = models.ForeignKey(Unit, on_delete=models.CASCADE, related_name="assignments")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                             related_name="workbench_assignments")
    role = models.CharField(max_length=10, default=ANNOTATOR)
    status = models.CharField(max_length=10, choices=STATUSES, default=NEW)
    version = models.PositiveIntegerField(default=0)      # every save adds one
    updated = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["unit__position", "unit_id", "pk"]
        constraints = [models.UniqueConstraint(fields=["unit", "user", "role"],
                                               name="workbench_one_assignment")]


class Annotation(models.Model):
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE,
                                   related_name="annotations")
    kind = models.CharField(max_length=10, default=SPAN)     # span, answer, relation
    begin = models.IntegerField(null=True, blank=True)
    end = models.IntegerField(null=True, blank=True)
    label = models.CharField(max_length=100, blank=True)     # span label, question key
    target = models.CharField(max_length=200, blank=True)    # linked entry key
    value = models.CharField(max_length=200, blank=True)     # an answer ("yes"/"no")
    head = models.ForeignKey("self", on_delete=models.CASCADE, null=True, blank=True,
                             related_name="+")                # relation arguments
    tail = models.ForeignKey("self", on_delete=models.CASCADE, null=True, blank=True,
                             related_name="+")
    origin = models.CharField(max_length=12, default=MANUAL)
    suggestion = models.ForeignKey(Suggestion, on_delete=models.SET_NULL, null=True,
                                   blank=True, related_name="+")
    source = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True,
                               related_name="copies")        # family or curated-from
    created = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["begin", "end", "pk"]


class Verdict(models.Model):
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE,
                                   related_name="verdicts")
    suggestion = models.ForeignKey(Suggestion, on_delete=models.CASCADE, related_name="+")
    accepted = models.BooleanField()
    created = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["assignment", "suggestion"],
                                               name="workbench_one_verdict")]


class Event(AppendOnlyModel):
    """One change: who did what to which unit, with the state it left. Rows are only
    added; deleting the project removes its trail with it."""
    TRAIL = "the workbench's trail is append-only"
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="events")
    unit = models.ForeignKey(Unit, on_delete=models.CASCADE, null=True, blank=True,
                             related_name="events")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                             null=True, blank=True)
    action = models.CharField(max_length=20)
    detail = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["created", "pk"]
