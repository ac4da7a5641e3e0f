"""Judges lose access to a competition's campaigns the moment they create or ask
to join one of its teams, whichever code path made the membership."""
from __future__ import annotations

from django.db.models.signals import post_save
from django.dispatch import receiver

from shareval.platform.competitions.models import Membership

from shareval.platform.judging.service import end_judge_access


@receiver(post_save, sender=Membership, dispatch_uid="judging-end-access-on-membership")
def membership_ends_judging(sender, instance: Membership, created: bool, **kwargs):
    team = instance.team
    if not team.is_baseline:
        end_judge_access(team.competition_id, instance.user)
