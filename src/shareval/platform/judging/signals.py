"""Judges lose access to a competition's campaigns the moment they create or ask
to join one of its teams, whichever code path made the membership; the periodic
``send-reminders`` run builds E2E campaigns due after a phase's end."""
from __future__ import annotations

from django.db.models.signals import post_save
from django.dispatch import receiver

from shareval.platform.competitions.models import Membership
from shareval.platform.competitions.reminders import periodic

from shareval.platform.judging.service import end_judge_access


@receiver(post_save, sender=Membership, dispatch_uid="judging-end-access-on-membership")
def membership_ends_judging(sender, instance: Membership, created: bool, **kwargs):
    team = instance.team
    if not team.is_baseline:
        end_judge_access(team.competition_id, instance.user)


@receiver(periodic, dispatch_uid="judging-build-due-e2e-campaigns")
def build_due_campaigns(sender, now, **kwargs) -> dict:
    """After a phase's end, campaigns set to build from primary E2E runs are built."""
    from shareval.platform.judging.e2e_items import build_due, report
    built = build_due(now)
    if not built:
        return {}
    return {"campaigns_built": len(built),
            "lines": [f"campaign {c.title!r}: {line}" for c, b in built for line in report(b)]}
