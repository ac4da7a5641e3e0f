"""An organizer's waiting decisions for the header's *Your work* (``platform/work.py``):
registrations to decide and teams (or team leads) to approve, per competition
they organize. The dashboard has the buttons; this only says that something waits."""
from __future__ import annotations

from django.db.models import Q
from django.urls import reverse

from shareval.platform.work import Work

from shareval.platform.competitions.models import Competition, Team
from shareval.platform.competitions.models.access import Registration


def organized(user):
    """The competitions ``user`` organizes (a superuser: every one)."""
    comps = Competition.objects.all() if user.is_superuser else user.organized_competitions.all()
    return comps.order_by("pk")


def organizer_work(user) -> list[Work]:
    out = []
    for comp in organized(user):
        regs = Registration.objects.filter(competition=comp)
        waiting = regs.filter(status=Registration.PENDING).count()
        if waiting:
            out.append(Work(
                what="Decide registrations", title="Registrations", competition=comp.title,
                slug=comp.slug, url=reverse("organize-access", args=[comp.slug]), left=waiting,
                done=regs.exclude(status=Registration.PENDING).count(), unit="registration",
                anchor=f"registrations-{comp.pk}"))
        teams = comp.teams.filter(is_baseline=False)
        pending = teams.filter(Q(status=Team.PENDING) | Q(proposed_lead__isnull=False)).count()
        if pending:
            out.append(Work(
                what="Approve teams", title="Teams", competition=comp.title, slug=comp.slug,
                url=reverse("organize", args=[comp.slug]), left=pending,
                done=teams.exclude(status=Team.PENDING).count(), unit="team",
                anchor=f"teams-{comp.pk}", note="a team, or a change of its lead, waits"))
    return out
