"""RCC phase-2 human evaluation (spec 000): a study samples publications of an
rcc-citations dataset; one coder captures their data references; topic experts
code which team outputs are "related to" each reference; a reviewer revises,
flags or removes; the designer makes the final pass. Phase-1 style rankings of
the teams per publication sit beside them. Every decision is a
:class:`Decision` row, which can be added but never changed or deleted.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from shareval.assessment.rcc_phase2 import NONE, TITLED, UNTITLED
from shareval.platform.appendonly import AppendOnlyModel, AppendOnlyQuerySet
from shareval.platform.competitions.models import Dataset


class Study(models.Model):
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE,
                                related_name="annotation_studies")
    slug = models.SlugField()
    title = models.CharField(max_length=200)
    designer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                                 related_name="designed_studies",
                                 help_text="makes the final pass (an organizer)")
    # sampling settings and report, rankers per publication, instructions
    config = models.JSONField(default=dict, blank=True)
    teams = models.JSONField(default=list)          # teams whose runs were taken
    on_leaderboard = models.BooleanField(default=True)
    closed = models.DateTimeField(null=True, blank=True)    # the designer's final pass
    created = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["dataset", "slug"], name="study_slug")]

    def __str__(self):
        return self.title

    @property
    def competition(self):
        return self.dataset.phase.competition


class Member(models.Model):
    CODER, JUDGE, REVIEWER = "coder", "judge", "reviewer"
    ROLES = [(CODER, "reference coder"), (JUDGE, "topic judge"), (REVIEWER, "reviewer")]
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="annotation_roles")
    role = models.CharField(max_length=10, choices=ROLES)
    topics = models.JSONField(default=list, blank=True)     # declared by the judge; [] = none

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "user", "role"],
                                               name="one_role_per_user")]


class Publication(models.Model):
    REFERENCES, QUALITATIVE = "references", "qualitative"
    STRATA = [(TITLED, "titled data"), (UNTITLED, "untitled data"), (NONE, "no data")]
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="publications")
    publication_id = models.CharField(max_length=200)
    purpose = models.CharField(max_length=12, default=REFERENCES)
    title = models.CharField(max_length=1000, blank=True)
    topic = models.CharField(max_length=100)
    stratum = models.CharField(max_length=10, choices=STRATA, blank=True)
    payload = models.JSONField(default=dict, blank=True)    # passages, doc_url
    outputs = models.JSONField(default=dict)     # team -> [{"id", "label"}], taken at sampling
    captured = models.DateTimeField(null=True, blank=True)
    coded = models.DateTimeField(null=True, blank=True)
    reviewed = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "publication_id", "purpose"],
                                               name="publication_once")]
        ordering = ["topic", "pk"]

    @property
    def stage(self) -> str:
        if self.purpose == self.QUALITATIVE:
            return "ranking"
        if self.captured is None:
            return "capture"
        if self.coded is None:
            return "related"
        if self.reviewed is None:
            return "review"
        return "final" if self.study.closed is None else "done"


class FullText(models.Model):
    """A sampled publication's whole text (``--texts``), kept apart from
    :class:`Publication` so lists of publications never load it (up to 200k
    characters each). Reference offsets index into it (Python str indices)."""
    publication = models.OneToOneField(Publication, on_delete=models.CASCADE,
                                       primary_key=True, related_name="full_text")
    text = models.TextField()


class Reference(models.Model):
    OWN = "own"
    KINDS = [(TITLED, "titled data set"), (UNTITLED, "untitled data"),
             (OWN, "data created by the authors")]
    ACTIVE, UNSURE, REMOVED = "active", "unsure", "removed"
    publication = models.ForeignKey(Publication, on_delete=models.CASCADE,
                                    related_name="references")
    kind = models.CharField(max_length=10, choices=KINDS)
    name = models.CharField(max_length=500)
    context = models.TextField()            # the passage it is read from
    # the coder's selection in FullText.text (end exclusive); null when typed
    begin = models.PositiveIntegerField(null=True, blank=True)
    end = models.PositiveIntegerField(null=True, blank=True)
    status = models.CharField(max_length=10, default=ACTIVE)
    note = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    created = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["pk"]

    def state(self) -> dict:
        return {"kind": self.kind, "name": self.name, "context": self.context,
                "begin": self.begin, "end": self.end, "status": self.status, "note": self.note}


class Coding(models.Model):
    """Which outputs of each team are related to which reference; the latest row
    of a publication counts (a reviewer's revision is a newer row)."""
    publication = models.ForeignKey(Publication, on_delete=models.CASCADE,
                                    related_name="codings")
    coder = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    related = models.JSONField()     # team -> {reference pk (str): [output id]}
    created = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["created", "pk"]


class Ranking(models.Model):
    """A judge's phase-1 verdict on one publication: good/bad notes per team and
    the teams in order, best first."""
    publication = models.ForeignKey(Publication, on_delete=models.CASCADE,
                                    related_name="rankings")
    judge = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    order = models.JSONField()
    notes = models.JSONField(default=dict)       # team -> {"good": text, "bad": text}
    created = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["publication", "judge"],
                                               name="one_ranking_per_judge")]


class AppendOnly(AppendOnlyQuerySet):
    def restore(self, rows: list) -> list:
        """Load a trail from a competition archive: new rows only, inserted in the
        given order (so primary keys follow it) with their recorded times."""
        if any(not r._state.adding or r.pk is not None for r in rows):
            raise PermissionError("decisions are an audit trail: only new rows are restored")
        return self.bulk_create(rows, batch_size=500)


class Decision(AppendOnlyModel):
    """One step of the audit trail: who did what to which publication or
    reference, the state before and after, and why. Rows are only ever added
    (``save`` of an existing row, ``delete`` and queryset updates raise);
    deleting the whole study removes its trail with it."""
    TRAIL = "decisions are an audit trail"
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="decisions")
    publication = models.ForeignKey(Publication, on_delete=models.CASCADE, null=True,
                                    related_name="decisions")
    reference = models.ForeignKey(Reference, on_delete=models.CASCADE, null=True, blank=True,
                                  related_name="decisions")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    stage = models.CharField(max_length=10)       # sample capture related review final rank
    action = models.CharField(max_length=20)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    note = models.TextField(blank=True)
    created = models.DateTimeField(default=timezone.now, editable=False)

    objects = AppendOnly.as_manager()

    class Meta:
        ordering = ["created", "pk"]

