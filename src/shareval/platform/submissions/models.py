"""Submissions, their state history, their scores (one per scorer version) and jobs.

States: ``rejected`` (failed validation; kept so the team sees why, never
counted against a quota), ``validated`` -> ``queued`` -> ``running`` ->
``scored`` or ``failed``; ``cancelled`` by the team (still counted).
Every change is a SubmissionEvent with a timestamp.
"""
from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from shareval.platform.competitions import board_marks
from shareval.platform.competitions.models import Dataset, Team


class BoardQuerySet(models.QuerySet):
    """Writes that bypass signals (``update``, ``bulk_create``, ``bulk_update``) also
    give the teams they touch a new leaderboard mark, or the datasets a new token
    when runs move between datasets or teams (leaderboards/cache.py)."""
    prefix = ""

    def _pairs(self, objs=None) -> set:
        """(dataset id, team id) of the runs written."""
        if objs is None:
            return set(self.values_list(self.prefix + "dataset_id", self.prefix + "team_id")
                       .distinct())
        if self.model is Submission:
            return {(o.dataset_id, o.team_id) for o in objs}
        return set(Submission.objects.filter(pk__in={o.submission_id for o in objs})
                   .values_list("dataset_id", "team_id").distinct())

    def _mark(self, pairs: set) -> None:
        board_marks.mark(pairs)

    def update(self, **kwargs):
        pairs = self._pairs()
        n = super().update(**kwargs)
        if {"dataset", "team", "submission"} & {k.removesuffix("_id") for k in kwargs}:
            ids = {d for d, _ in pairs | self._pairs()}
            if ids:
                board_marks.bump(Q(pk__in=ids))
        else:
            self._mark(pairs)
        return n

    def bulk_create(self, objs, *args, **kwargs):
        objs = super().bulk_create(objs, *args, **kwargs)
        self._mark(self._pairs(objs))
        return objs

    def bulk_update(self, objs, *args, **kwargs):
        n = super().bulk_update(objs, *args, **kwargs)
        self._mark(self._pairs(objs))
        return n


class ScoreQuerySet(BoardQuerySet):
    prefix = "submission__"


class Submission(models.Model):
    REJECTED, VALIDATED, QUEUED, RUNNING = "rejected", "validated", "queued", "running"
    SCORED, FAILED, CANCELLED = "scored", "failed", "cancelled"
    STATES = [(s, s) for s in (REJECTED, VALIDATED, QUEUED, RUNNING, SCORED, FAILED, CANCELLED)]
    COUNTED = (VALIDATED, QUEUED, RUNNING, SCORED, FAILED, CANCELLED)
    PRIMARY, CONTRASTIVE = "primary", "contrastive"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="submissions")
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="submissions")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True)
    stored_name = models.CharField(max_length=80, help_text="server-generated, under UPLOAD_DIR")
    original_name = models.CharField(max_length=255)
    size = models.BigIntegerField(default=0)
    description = models.TextField(blank=True, max_length=5000)
    kind = models.CharField(max_length=12, default=CONTRASTIVE,
                            choices=[(PRIMARY, PRIMARY), (CONTRASTIVE, CONTRASTIVE)])
    state = models.CharField(max_length=10, choices=STATES)
    problems = models.JSONField(default=list, blank=True)
    warnings = models.JSONField(default=list, blank=True)
    created = models.DateTimeField(default=timezone.now, db_index=True)
    # the run's fact sheet, the team's board visibility, disqualification
    factsheet = models.JSONField(default=dict, blank=True)
    on_board = models.BooleanField(default=True, help_text="the team shows this run on "
                                   "leaderboards (where the organizers let teams choose)")
    disqualified = models.TextField(blank=True, max_length=2000,
                                    help_text="the organizers' reason; off every leaderboard")
    # options a higher app published for this run's scoring (judging: the MATERIAL E2E
    # judgments file under PRIVATE_DIR and the system), every later scoring keeps them:
    # {"options": {...}, "digest": suffix of the reference digest, "source": who set them}
    score_options = models.JSONField(default=dict, blank=True)

    objects = BoardQuerySet.as_manager()

    class Meta:
        ordering = ["-created"]
        constraints = [
            # MATERIAL 8.1: one primary run per team per phase and task (dataset).
            models.UniqueConstraint(fields=["team", "dataset"], condition=Q(kind="primary"),
                                    name="one_primary_per_team_dataset"),
        ]
        indexes = [models.Index(fields=["team", "dataset", "state"]),
                   models.Index(fields=["dataset", "state"]),
                   # covers the leaderboard's choice of rows (with score_board_idx); only
                   # the runs a board may read (not disqualified, not taken off by the team)
                   models.Index(fields=["dataset", "state", "team", "kind", "created", "id"],
                                condition=Q(disqualified="", on_board=True),
                                name="submission_board_idx"),
                   # newest first: a team's runs, a dataset's runs (organizer dashboard)
                   models.Index(fields=["team", "-created"], name="submission_team_new_idx"),
                   models.Index(fields=["dataset", "-created"], name="submission_ds_new_idx"),
                   # a team's quota window: without it SQLite counts a week of every
                   # team's runs through (dataset, created)
                   models.Index(fields=["team", "dataset", "created"],
                                name="submission_quota_idx")]

    def __str__(self):
        return f"{self.team} {self.dataset} {self.id}"

    @property
    def path(self):
        from pathlib import Path
        return Path(settings.UPLOAD_DIR) / self.stored_name

    @property
    def scoring_digest(self) -> str:
        """The reference digest of this run's scorings: the dataset's, plus the
        published options' own (a judged score is a score of another reference)."""
        return self.dataset.reference_digest + str(self.score_options.get("digest") or "")

    @property
    def current_score(self):
        """The newest current score (from ``prefetch_related("scores")`` or the list
        ``present.list_payload`` prefetches when there)."""
        cached = getattr(self, "score_list", None)
        if cached is None:
            cached = getattr(self, "_prefetched_objects_cache", {}).get("scores")
        if cached is not None:
            return max((s for s in cached if s.current), key=lambda s: s.created, default=None)
        return self.scores.filter(current=True).first()

    def record(self, state: str, message: str = "", log: str = "") -> "SubmissionEvent":
        self.state = state
        Submission.objects.filter(pk=self.pk).update(state=state)
        return SubmissionEvent.objects.create(submission=self, state=state, message=message,
                                              log=log)


class SubmissionEvent(models.Model):
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="events")
    state = models.CharField(max_length=20)
    at = models.DateTimeField(default=timezone.now)
    message = models.TextField(blank=True, help_text="shown to the team")
    log = models.TextField(blank=True, help_text="organizers only (tracebacks)")
    organizer_only = models.BooleanField(default=False, help_text="an organizers' note the "
                                         "team does not see")

    class Meta:
        ordering = ["at", "id"]


class Score(models.Model):
    """One scoring of a submission; unique per (scorer version, reference digest)."""
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="scores")
    scorer_version = models.CharField(max_length=120)
    reference_digest = models.CharField(max_length=100)      # Submission.scoring_digest
    result = models.JSONField()
    primary = models.FloatField(null=True)
    comparison = models.JSONField(null=True, blank=True)
    plots = models.JSONField(default=list, blank=True)
    # with a public/private split, ``result``/``primary`` are the public
    # part and these the private part, shown only once the phase is released
    private_result = models.JSONField(null=True, blank=True)
    private_primary = models.FloatField(null=True)
    # the primary metric's per-unit statistics (Task.unit_stats, JSON form): a later run
    # is compared with this one without reading its file again; null for older scores
    unit_stats = models.JSONField(null=True, blank=True)
    current = models.BooleanField(default=True)
    created = models.DateTimeField(default=timezone.now)

    objects = ScoreQuerySet.as_manager()

    class Meta:
        ordering = ["-created"]
        constraints = [models.UniqueConstraint(
            fields=["submission", "scorer_version", "reference_digest"], name="score_once")]
        indexes = [models.Index(fields=["submission", "current"]),
                   # covers the leaderboard's choice of rows: no read of the results
                   models.Index(fields=["submission", "current", "primary"],
                                name="score_board_idx")]


class Job(models.Model):
    """A scoring job; the database row is the queue of record.

    A worker claims a job by setting ``lease_until`` (and a fresh ``token``) and
    renews the lease by heartbeat; a job whose lease ran out is claimable again.
    The score is written only if the worker still holds the token, so a worker
    that was presumed dead cannot score a submission twice.
    """
    QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="jobs")
    scorer_version = models.CharField(max_length=120)
    reference_digest = models.CharField(max_length=100)
    status = models.CharField(max_length=10, default=QUEUED, db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    token = models.CharField(max_length=32, blank=True)
    worker = models.CharField(max_length=120, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    heartbeat = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(default=timezone.now)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created", "id"]
        constraints = [models.UniqueConstraint(
            fields=["submission", "scorer_version", "reference_digest"], name="job_once")]


def mark_runs(submission_ids) -> None:
    """A new board mark for the (dataset, team) of these runs: only those teams'
    rows are rebuilt (``leaderboards/cache.py``)."""
    ids = [s for s in submission_ids if s]
    if ids:
        board_marks.mark(Submission.objects.filter(pk__in=ids)
                         .values_list("dataset_id", "team_id").distinct())
