"""Mail preferences and the record of sent once-only messages."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class MailPreference(models.Model):
    """A person's choice; without a row, all mail is sent."""
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                related_name="mail_preference")
    opt_out = models.BooleanField(default=False, help_text="no non-essential mail (run "
                                  "results, releases, reminders, announcements)")


class Sent(models.Model):
    """A message that must go out at most once (reminders, release notices): its key
    is written in the same transaction as the decision to send."""
    key = models.CharField(max_length=200, unique=True)
    at = models.DateTimeField(default=timezone.now)
