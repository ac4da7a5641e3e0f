"""Judging campaigns: items shown to judges, their assignments, answers and
the manager's adjudications (an append-only audit trail)."""
from __future__ import annotations

from django.conf import settings
from django.db import models

from shareval.platform.competitions.models import Dataset


class Campaign(models.Model):
    SIDE_BY_SIDE, CHAIN, RELATED, RELEVANCE = "side_by_side", "question_chain", "related_to", \
        "summary_relevance"
    EXHAUSTIVE = "exhaustive"
    DESIGNS = [(SIDE_BY_SIDE, "side-by-side comparison (-1/0/1)"),
               (CHAIN, "question chains (yes/no with skip rules)"),
               (RELATED, "related-to coding of data references"),
               (RELEVANCE, "summary relevance (MATERIAL E2E)"),
               (EXHAUSTIVE, "exhaustive relation annotation (recall)")]
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="campaigns")
    slug = models.SlugField()
    title = models.CharField(max_length=200)
    design = models.CharField(max_length=20, choices=DESIGNS)
    judges_per_item = models.PositiveSmallIntegerField(default=2)
    timeout_minutes = models.PositiveIntegerField(default=30)
    config = models.JSONField(default=dict, blank=True)    # question chains, instructions
    judges = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="judging", blank=True)
    on_leaderboard = models.BooleanField(default=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["dataset", "slug"], name="campaign_slug")]

    def __str__(self):
        return f"{self.dataset} / {self.slug}"

    @property
    def competition(self):
        return self.dataset.phase.competition


class Item(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="items")
    key = models.CharField(max_length=500)
    doc = models.CharField(max_length=200, blank=True)
    payload = models.JSONField()           # what judges see, plus team mapping (never sent raw)
    gold = models.JSONField(null=True, blank=True)   # known answer: a gold item
    drawn_for = models.CharField(max_length=10, default="precision")
    inclusion = models.FloatField(default=1.0)
    submissions = models.JSONField(default=list)    # team names whose output holds the item
    drawn_by = models.JSONField(default=list)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "key", "drawn_for"],
                                               name="item_key")]


class Assignment(models.Model):
    ASSIGNED, STARTED, DONE, EXPIRED = "assigned", "in_progress", "done", "expired"
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    judge = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                              related_name="assignments")
    status = models.CharField(max_length=12, default=ASSIGNED)
    assigned = models.DateTimeField(auto_now_add=True)
    deadline = models.DateTimeField()
    done = models.DateTimeField(null=True, blank=True)
    answer = models.JSONField(null=True, blank=True)
    seconds = models.FloatField(null=True, blank=True)

    class Meta:
        constraints = [
            # never the same item twice to one judge (an expired assignment stays, too)
            models.UniqueConstraint(fields=["item", "judge"], name="one_assignment_per_judge"),
        ]


class Adjudication(models.Model):
    """Final decisions; the latest per item counts, earlier ones stay as the audit trail."""
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="adjudications")
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    decision = models.JSONField()
    note = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created", "pk"]


class RunOutput(models.Model):
    """The units of one team's run in a campaign (what its precision is over):
    the importance estimator's X_j. Stored when items are drawn from runs."""
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="outputs")
    name = models.CharField(max_length=200)            # the team name
    submission = models.ForeignKey("submissions.Submission", null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    keys = models.JSONField(default=list)
    late = models.BooleanField(default=False)
    added = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "name"], name="output_name")]


class LateEvaluation(models.Model):
    """On-demand evaluation of a submission added to an existing campaign
    (judging/ondemand.py): a pilot stage, then the main draws, then the estimate."""
    PILOT, MAIN, DONE = "pilot", "main", "done"
    REACHED, BUDGET = "reached", "budget"
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="late")
    output = models.OneToOneField(RunOutput, on_delete=models.CASCADE, related_name="evaluation")
    half_width = models.FloatField(default=0.05)
    confidence = models.FloatField(default=0.95)
    pilot = models.PositiveIntegerField(default=50)
    budget = models.FloatField(null=True, blank=True)     # money, at the campaign's rate
    seed = models.IntegerField(default=0)
    stage = models.CharField(max_length=8, default=PILOT)
    outcome = models.CharField(max_length=8, blank=True)
    planned = models.PositiveIntegerField(null=True, blank=True)   # stage-2 draws chosen
    estimate = models.FloatField(null=True, blank=True)
    low = models.FloatField(null=True, blank=True)
    high = models.FloatField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)


class Draw(models.Model):
    """One uniform draw from a late submission's output, and whether its item
    was already in the campaign (its judgments reused) when drawn."""
    evaluation = models.ForeignKey(LateEvaluation, on_delete=models.CASCADE,
                                   related_name="draws")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="draws")
    stage = models.CharField(max_length=8)
    seq = models.PositiveIntegerField()
    reused = models.BooleanField(default=False)

    class Meta:
        ordering = ["evaluation", "stage", "seq"]
