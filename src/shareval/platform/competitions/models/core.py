"""The competition domain.

A Competition has tasks (each a task of the shareval registry with options),
phases (dates, blind or not, leaderboard public or hidden, release state), and
per phase the datasets a team submits to: a dataset names its task, the hidden
reference (a file or folder under PRIVATE_DIR, never served), the files released
to participants, and its quotas. Teams belong to one competition.
"""
from __future__ import annotations

import datetime as dt
import uuid
import zoneinfo

from django.conf import settings
from django.db import models
from django.utils import timezone


class Competition(models.Model):
    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    time_zone = models.CharField(max_length=64, default="UTC",
                                 help_text="calendar-week quotas use this zone")
    organizers = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True,
                                        related_name="organized_competitions")
    team_approval = models.BooleanField(
        default=False, help_text="new teams may submit only once an organizer approves them")
    created = models.DateTimeField(default=timezone.now)
    # the fact sheet every run carries (bundle ``factsheet:``; records.py)
    factsheet = models.JSONField(default=dict, blank=True,
                                 help_text="required standard fields and organizer-defined extras")

    # --- access and eligibility (see access/eligibility.py, models/access.py) ---
    PUBLIC, UNLISTED, PRIVATE = "public", "unlisted", "private"
    VISIBILITY = [(PUBLIC, "public: listed, anyone may read"),
                  (UNLISTED, "unlisted: only with the secret link"),
                  (PRIVATE, "private: invited users and e-mail domains only")]
    OPEN, PARTICIPANTS = "open", "participants"
    visibility = models.CharField(max_length=10, choices=VISIBILITY, default=PUBLIC)
    secret = models.CharField(max_length=40, blank=True,
                              help_text="the key of an unlisted competition's link")
    registration_approval = models.BooleanField(
        default=False, help_text="participants may form or join teams only once an "
                                 "organizer approves their registration")
    max_team_size = models.PositiveIntegerField(null=True, blank=True)
    downloads = models.CharField(
        max_length=12, default=OPEN, choices=[(OPEN, OPEN), (PARTICIPANTS, PARTICIPANTS)],
        help_text="participants: released files only for approved, signed-in participants "
                  "who accepted the data licence")
    # --- end of access and eligibility ---

    class Meta:
        ordering = ["-created"]

    def __str__(self):
        return self.title

    @property
    def tz(self):
        return zoneinfo.ZoneInfo(self.time_zone)

    def is_organizer(self, user) -> bool:
        if not user.is_authenticated:
            return False
        return user.is_superuser or self.organizers.filter(pk=user.pk).exists()

    def team_of(self, user):
        """The participating team ``user`` is an approved member of (baseline teams,
        which organizers submit for, are nobody's team), else None."""
        if not user.is_authenticated:
            return None
        m = Membership.objects.filter(team__competition=self, user=user, team__is_baseline=False,
                                      status=Membership.APPROVED).select_related("team").first()
        return m.team if m else None

    def participants(self):
        """Approved registrants and members of the competition's (non-baseline) teams
        (the people its announcements and results are mailed to)."""
        from django.contrib.auth import get_user_model
        registered = self.registrations.filter(status=self.registrations.model.APPROVED)
        return get_user_model().objects.filter(
            pk__in=list(registered.values_list("user", flat=True)) +
            list(Membership.objects.filter(team__competition=self, status=Membership.APPROVED,
                                           team__is_baseline=False).values_list("user", flat=True)))


class CompetitionTask(models.Model):
    competition = models.ForeignKey(Competition, on_delete=models.CASCADE, related_name="tasks")
    slug = models.SlugField()
    title = models.CharField(max_length=200, blank=True)
    task_name = models.CharField(max_length=64, help_text="a task of the shareval registry")
    options = models.JSONField(default=dict, blank=True)
    primary_metric = models.CharField(max_length=64, blank=True,
                                      help_text="default: the registry task's primary metric")
    lower_is_better = models.BooleanField(default=False)

    class Meta:
        unique_together = [("competition", "slug")]
        ordering = ["id"]

    def __str__(self):
        return self.title or self.slug

    @property
    def registry_task(self):
        from shareval import tasks
        return tasks.get(self.task_name)

    @property
    def metric(self) -> str:
        return self.primary_metric or self.registry_task.primary_metric


class Phase(models.Model):
    HIDDEN, TOP, DETAILED = "hidden", "top", "detailed"
    RELEASE = [(HIDDEN, "no results released"), (TOP, "top-level results released"),
               (DETAILED, "detailed results released")]
    competition = models.ForeignKey(Competition, on_delete=models.CASCADE, related_name="phases")
    slug = models.SlugField()
    title = models.CharField(max_length=200)
    start = models.DateTimeField()
    end = models.DateTimeField()
    blind = models.BooleanField(default=False, help_text="no score feedback until released")
    leaderboard_public = models.BooleanField(default=True)
    released = models.CharField(max_length=10, choices=RELEASE, default=HIDDEN)
    release_top_at = models.DateTimeField(null=True, blank=True)
    release_detailed_at = models.DateTimeField(null=True, blank=True)
    # boards combining datasets (bundle ``boards:``, bundles/boards_section.py;
    # built by leaderboards/combined.py): [{slug, title, datasets, columns}]
    combined_boards = models.JSONField(default=list, blank=True)

    class Meta:
        unique_together = [("competition", "slug")]
        ordering = ["start", "id"]

    def __str__(self):
        return self.title

    def is_open(self, now=None) -> bool:
        now = now or timezone.now()
        return self.start <= now < self.end

    def release_level(self, now=None) -> str:
        """What participants may see of scores in this phase: hidden, top or detailed."""
        if not self.blind:
            return self.DETAILED
        return self.released_at(now)

    def released_at(self, now=None) -> str:
        """The release state at ``now``: set by hand or by the schedule, whichever is
        further (also what a ``feedback: false`` dataset of an open phase follows)."""
        now = now or timezone.now()
        level = self.released
        if self.release_detailed_at and now >= self.release_detailed_at:
            return self.DETAILED
        if level == self.HIDDEN and self.release_top_at and now >= self.release_top_at:
            return self.TOP
        return level


def new_board_token() -> str:
    return uuid.uuid4().hex


class Dataset(models.Model):
    """What a team submits to: a phase x task x data pack (e.g. DevTest, Eval, a query pack)."""
    phase = models.ForeignKey(Phase, on_delete=models.CASCADE, related_name="datasets")
    task = models.ForeignKey(CompetitionTask, on_delete=models.CASCADE, related_name="datasets")
    slug = models.SlugField()
    title = models.CharField(max_length=200, blank=True)
    reference_path = models.CharField(max_length=500, blank=True,
                                      help_text="relative to PRIVATE_DIR; never served")
    reference_digest = models.CharField(max_length=64, blank=True)
    feedback = models.BooleanField(default=True, help_text="show scores to the team "
                                   "(subject to the phase's blind setting)")
    board_token = models.CharField(
        max_length=32, default=new_board_token, editable=False,
        help_text="a new value whenever anything its leaderboard reads changes (leaderboards/cache.py)")
    # board options (runs per team, columns, team-chosen visibility), the
    # public/private split of the reference, and a limit on runs queued or running
    board = models.JSONField(default=dict, blank=True)
    split = models.JSONField(default=dict, blank=True,
                             help_text="private units: {'units': [...]} or {'fraction', 'seed'}")
    concurrent = models.PositiveIntegerField(null=True, blank=True,
                                             help_text="runs a team may have queued or "
                                                       "running at once")

    class Meta:
        unique_together = [("phase", "slug")]
        ordering = ["id"]

    def __str__(self):
        return f"{self.phase.slug}/{self.slug}"

    def save(self, *args, **kwargs):
        """An update leaves ``board_token`` alone: only ``board_marks.bump`` writes it,
        so an instance loaded before a bump cannot write the old token back."""
        if not self._state.adding and kwargs.get("update_fields") is None \
                and not kwargs.get("force_insert"):
            kwargs["update_fields"] = [f.name for f in self._meta.concrete_fields
                                       if not f.primary_key and f.name != "board_token"]
        super().save(*args, **kwargs)

    @property
    def competition(self):
        return self.phase.competition

    @property
    def reference_file(self):
        from pathlib import Path
        return Path(settings.PRIVATE_DIR) / self.reference_path if self.reference_path else None


# who may download a released or data file (access/releases.py reads them)
AUDIENCE_REGISTERED, AUDIENCE_PHASE = "registered", "phase"
AUDIENCE_HELP = ("registered (every participant, as the competition's downloads rule "
                 "allows), phase (the teams admitted to the file's phase) or phase:<slug>")


class PublicFile(models.Model):
    """A file released to participants with a dataset (inputs, queries, texts),
    from ``release_at`` on (None: at once) to its ``audience``."""
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="public_files")
    name = models.CharField(max_length=200)
    path = models.CharField(max_length=500, help_text="relative to PUBLIC_DIR")
    release_at = models.DateTimeField(null=True, blank=True,
                                      help_text="not downloadable before (None: at once)")
    audience = models.CharField(max_length=80, default=AUDIENCE_REGISTERED,
                                help_text=AUDIENCE_HELP)

    class Meta:
        unique_together = [("dataset", "name")]


class Quota(models.Model):
    """At most ``limit`` validated submissions per team in a window.

    Windows: ``week`` = calendar week (Monday 00:00) in the competition's time
    zone; ``rolling`` = the last ``days`` days; ``phase`` = the whole phase.
    Every validated submission counts, cancelled ones included; rejected
    (invalid) uploads do not.
    """
    WEEK, ROLLING, PHASE = "week", "rolling", "phase"
    WINDOWS = [(WEEK, "calendar week"), (ROLLING, "rolling window"), (PHASE, "whole phase")]
    # a dataset's own quota, or a run group's (runs over all its datasets count)
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="quotas",
                                null=True, blank=True)
    group = models.ForeignKey("competitions.RunGroup", on_delete=models.CASCADE,
                              related_name="quotas", null=True, blank=True)
    limit = models.PositiveIntegerField()
    window = models.CharField(max_length=10, choices=WINDOWS, default=WEEK)
    days = models.PositiveIntegerField(default=7, help_text="rolling window length")

    class Meta:
        constraints = [models.CheckConstraint(
            condition=models.Q(dataset__isnull=False, group__isnull=True) |
            models.Q(dataset__isnull=True, group__isnull=False),
            name="quota_of_dataset_or_group")]

    @property
    def phase(self):
        return self.dataset.phase if self.dataset_id else self.group.phase

    def counted_datasets(self) -> dict:
        """The filter on runs (and code submissions) that count against this quota: its
        dataset's (an equality, as the quota index expects), or its group's datasets'."""
        if self.dataset_id:
            return {"dataset_id": self.dataset_id}
        return {"dataset__in": list(self.group.datasets.values_list("pk", flat=True))}

    def window_words(self) -> str:
        if self.window == self.WEEK:
            return "per calendar week"
        if self.window == self.ROLLING:
            return f"per {self.days} days"
        return "in this phase"

    def group_words(self) -> str:
        """'for Language 1A (e2e-1a-eval, clir-1a-eval)' for a group's quota, else ''."""
        if not self.group_id:
            return ""
        return f"for {self.group.name} ({', '.join(self.group.dataset_slugs())})"

    def describe(self) -> str:
        words = f"{self.limit} {self.window_words()}"
        return f"{words} {self.group_words()}" if self.group_id else words

    def bounds(self, now: dt.datetime) -> tuple[dt.datetime, dt.datetime | None]:
        """Start of the window containing ``now`` and when it next resets (None: never)."""
        if self.window == self.WEEK:
            tz = self.phase.competition.tz
            local = now.astimezone(tz)
            monday = (local - dt.timedelta(days=local.weekday())).date()
            start = dt.datetime.combine(monday, dt.time(0), tzinfo=tz)
            nxt = dt.datetime.combine(monday + dt.timedelta(days=7), dt.time(0), tzinfo=tz)
            return start, nxt
        if self.window == self.ROLLING:
            return now - dt.timedelta(days=self.days), None
        return self.phase.start - dt.timedelta(days=36500), None


class Team(models.Model):
    """A competition's team. Under ``Competition.team_approval`` a team made on
    the team page starts ``pending`` and may not submit until an organizer
    approves it; a rejected team stays (its members cannot start another)."""
    PENDING, APPROVED, REJECTED = "pending", "approved", "rejected"
    competition = models.ForeignKey(Competition, on_delete=models.CASCADE, related_name="teams")
    name = models.CharField(max_length=100)
    lead = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                             related_name="led_teams")
    is_baseline = models.BooleanField(default=False, help_text="organizers' baselines; "
                                      "highlighted on leaderboards")
    status = models.CharField(max_length=10, default=APPROVED,
                              choices=[(PENDING, PENDING), (APPROVED, APPROVED),
                                       (REJECTED, REJECTED)])
    created = models.DateTimeField(default=timezone.now)
    # a lead handed over under team_approval waits here for an organizer
    proposed_lead = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL,
                                      null=True, blank=True, related_name="+")

    class Meta:
        unique_together = [("competition", "name")]
        ordering = ["name"]

    def __str__(self):
        return self.name


class Membership(models.Model):
    PENDING, APPROVED = "pending", "approved"
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="memberships")
    status = models.CharField(max_length=10, choices=[(PENDING, PENDING), (APPROVED, APPROVED)],
                              default=PENDING)
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        unique_together = [("team", "user")]


class TeamEvent(models.Model):
    """The team's history: created, members let in or refused, the organizers'
    decisions, the lead handed over (proposed, approved, refused). Only added to."""
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="events")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True,
                              blank=True, related_name="+")
    action = models.CharField(max_length=30)
    detail = models.CharField(max_length=300, blank=True)
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created", "pk"]


class BoardMark(models.Model):
    """A new ``token`` whenever anything a team's rows on a dataset's board are
    built from changes (its runs, their scores, the team): a cached board rebuilds
    only the rows of the teams whose mark changed (``leaderboards/cache.py``)."""
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+")
    token = models.CharField(max_length=32, default=new_board_token)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["dataset", "team"],
                                               name="board_mark_once")]
