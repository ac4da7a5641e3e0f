"""Code datasets, code submissions (source bundles) and their runs.

A ``CodeDataset`` marks a dataset (phase x task) as accepting code: its hidden
input (under PRIVATE_DIR, never served), the optional public sample (input and
reference) for test runs, and the default and maximal limits. A
``CodeSubmission`` is one uploaded bundle; each of its ``CodeRun`` rows is one
attempt of one stage: ``test`` (public sample; the team sees logs, score and
resources) or ``final`` (hidden input; the team sees only success or failure,
its score once released through the usual submission; organizers see logs).
An organizer's re-run with other limits is one more attempt; all are kept.
"""
from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from shareval.platform.competitions.models import Dataset, Team


class CodeDataset(models.Model):
    CODE, BOTH = "code", "both"
    dataset = models.OneToOneField(Dataset, on_delete=models.CASCADE, related_name="code")
    mode = models.CharField(max_length=8, default=CODE,
                            choices=[(CODE, "code only"), (BOTH, "code or output files")])
    input_path = models.CharField(max_length=500, help_text="relative to PRIVATE_DIR")
    input_digest = models.CharField(max_length=64)
    sample_input_path = models.CharField(max_length=500, blank=True,
                                         help_text="relative to PRIVATE_DIR")
    sample_reference_path = models.CharField(max_length=500, blank=True)
    sample_digest = models.CharField(max_length=64, blank=True)
    limits = models.JSONField(default=dict, blank=True, help_text="defaults of a run")
    max_limits = models.JSONField(default=dict, blank=True,
                                  help_text="the most a bundle's manifest may request")

    @property
    def has_sample(self) -> bool:
        return bool(self.sample_input_path)


class CodeSubmission(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="code_submissions")
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE,
                                related_name="code_submissions")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True)
    stored_name = models.CharField(max_length=80, help_text="under UPLOAD_DIR")
    original_name = models.CharField(max_length=255)
    size = models.BigIntegerField(default=0)
    description = models.TextField(blank=True, max_length=5000)
    primary = models.BooleanField(default=False)
    manifest = models.JSONField(default=dict)
    created = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created"]

    @property
    def path(self):
        from pathlib import Path
        return Path(settings.UPLOAD_DIR) / self.stored_name

    def latest(self, stage: str):
        return self.runs.filter(stage=stage).order_by("-attempt").first()


class CodeRun(models.Model):
    TEST, FINAL = "test", "final"
    QUEUED, RUNNING = "queued", "running"
    OK, INVALID, SKIPPED = "ok", "invalid", "skipped"
    # what the sandbox reports (sandbox/run.py) plus queued/running/invalid/env/skipped
    code_submission = models.ForeignKey(CodeSubmission, on_delete=models.CASCADE,
                                        related_name="runs")
    stage = models.CharField(max_length=8, choices=[(TEST, TEST), (FINAL, FINAL)])
    attempt = models.PositiveIntegerField(default=1)
    limits = models.JSONField(default=dict)
    state = models.CharField(max_length=12, default=QUEUED, db_index=True)
    message = models.TextField(blank=True)
    log = models.TextField(blank=True, help_text="stdout and stderr (tails)")
    internal_error = models.TextField(blank=True, help_text="organizers only: what failed "
                                                            "inside the server (never shown "
                                                            "to the team)")
    env_seconds = models.FloatField(null=True)
    env_cached = models.BooleanField(null=True)
    wall_seconds = models.FloatField(null=True)
    cpu_seconds = models.FloatField(null=True)
    peak_mb = models.FloatField(null=True)
    output_bytes = models.BigIntegerField(null=True)
    score = models.JSONField(null=True, blank=True, help_text="test runs: the sample's score")
    output_submission = models.ForeignKey("submissions.Submission", on_delete=models.SET_NULL,
                                          null=True, blank=True, related_name="code_runs")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL,
                                     null=True, blank=True, related_name="+")
    worker = models.CharField(max_length=120, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(default=timezone.now)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created", "id"]
        constraints = [models.UniqueConstraint(fields=["code_submission", "stage", "attempt"],
                                               name="coderun_attempt_once")]

    @property
    def done(self) -> bool:
        return self.state not in (self.QUEUED, self.RUNNING)

    @property
    def succeeded(self) -> bool:
        return self.state == self.OK
