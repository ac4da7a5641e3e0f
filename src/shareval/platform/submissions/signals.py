"""Run results are mailed whichever worker (thread, process, Celery) scored them."""
from __future__ import annotations

from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import receiver

from shareval.platform.notifications import mail
from shareval.platform.submissions.models import Submission, SubmissionEvent


@receiver(post_save, sender=SubmissionEvent, dispatch_uid="notifications-run-finished")
def run_finished(sender, instance: SubmissionEvent, created: bool, **kwargs):
    if not created or instance.state not in (Submission.SCORED, Submission.FAILED):
        return
    sub = instance.submission
    if sub.state != instance.state:           # e.g. scored while cancelled: no news
        return
    pk = instance.pk
    transaction.on_commit(lambda: mail.run_finished(sub, pk))
