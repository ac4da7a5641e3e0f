"""Judging listens to the submissions app's announcements (a run's history events):
a scored run, a run made primary or a cancelled one may change a team's leaderboard
run, which the dataset's automatic campaign then draws (judging/auto.py)."""
from __future__ import annotations

from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import receiver

from shareval.platform.competitions.reminders import periodic
from shareval.platform.submissions.models import Submission, SubmissionEvent

from shareval.platform.judging import auto

# made primary, cancelled: the team's leaderboard run may be another one now
CHANGES = ("primary", Submission.CANCELLED)


@receiver(post_save, sender=SubmissionEvent, dispatch_uid="judging-auto-assessment")
def run_changed(sender, instance: SubmissionEvent, created: bool, **kwargs):
    if not created:
        return
    pk = instance.submission_id
    if instance.state == Submission.SCORED:
        # announced by the scoring worker (thread or Celery): it draws, after the commit
        transaction.on_commit(lambda: auto.assess_run(pk), robust=True)
    elif instance.state in CHANGES:
        # announced in a request: the drawing goes to the background
        transaction.on_commit(lambda: auto.dispatch(pk), robust=True)


@receiver(periodic, dispatch_uid="judging-auto-assessment-sweep")
def sweep_assessments(sender, now, **kwargs) -> dict:
    return auto.sweep()
