"""The deadline check of run groups with ``primary: {required: true}``: the teams with
runs in the group but no primary one. The organizer's dashboard and the competition
API list them per group; ``shareval server send-reminders`` mails each such team's
members once while the phase is open and closes within the reminder window
(registered in ``competitions.reminders`` by this app's ``ready``)."""
from __future__ import annotations

from shareval.platform.competitions.models import Membership, Phase, RunGroup, Team
from shareval.platform.notifications import mail
from shareval.platform.submissions.models import Submission

# runs that make a team a participant of a group (cancelled and rejected ones do not)
TAKING_PART = (Submission.VALIDATED, Submission.QUEUED, Submission.RUNNING, Submission.SCORED,
               Submission.FAILED)


def teams_without_primary(group: RunGroup) -> list[Team]:
    """The (non-baseline) teams with runs in ``group`` and no primary run there, by name."""
    runs = Submission.objects.filter(dataset__in=group.datasets.all())
    with_runs = runs.filter(state__in=TAKING_PART).values("team_id")
    with_primary = runs.filter(kind=Submission.PRIMARY).values("team_id")
    return list(Team.objects.filter(pk__in=with_runs, is_baseline=False)
                .exclude(pk__in=with_primary).order_by("name"))


def missing_primaries(phase: Phase) -> list[tuple[RunGroup, list[Team]]]:
    """(group, teams without a primary) for each group of ``phase`` that requires one."""
    return [(g, teams_without_primary(g))
            for g in phase.run_groups.filter(primary_required=True)]


def _once_key(group: RunGroup, team: Team) -> str:
    return f"primary:{group.pk}:{group.phase.end.isoformat()}:{team.pk}"


def remind(phase: Phase, now, claim_only: bool = False) -> int:
    """Mail each team without a primary in a group of ``phase`` (once per person, group
    and deadline); ``claim_only``: mark as sent without mailing (after an import)."""
    comp = phase.competition
    n = 0
    for group, teams in missing_primaries(phase):
        for team in teams:
            members = [m.user for m in Membership.objects.filter(
                team=team, status=Membership.APPROVED).select_related("user")]
            key = _once_key(group, team)
            if claim_only:
                n += sum(mail._once(f"{key}:{u.pk}") for u in members)
                continue
            n += mail.send(
                members, f"{comp.title}: no primary run for {group.name}",
                f"Your team, {team.name}, has no primary run for {group.name} "
                f"({', '.join(group.dataset_slugs())}) in {phase.title} of {comp.title}, "
                f"which closes {phase.end.astimezone(comp.tz):%Y-%m-%d %H:%M %Z}. Teams are "
                f"compared on their primary runs: flag one of your runs of "
                f"{_primary_datasets(group)} primary on its page.\n\n"
                f"{mail.link(f'/c/{comp.slug}/submissions/')}",
                once=key)
    return n


def _primary_datasets(group: RunGroup) -> str:
    allowed = list(group.primary_from.order_by("id").values_list("slug", flat=True))
    return " or ".join(allowed or group.dataset_slugs())


def team_notices(team: Team, now) -> list[str]:
    """What the team's own pages say while a phase with a required primary is open:
    one sentence per group where the team has runs but no primary."""
    out = []
    for group in RunGroup.objects.filter(phase__competition=team.competition,
                                         primary_required=True, phase__start__lte=now,
                                         phase__end__gt=now).select_related("phase"):
        if team in teams_without_primary(group):
            allowed = [d.title or d.slug for d in group.primary_from.order_by("id")] or \
                [d.title or d.slug for d in group.datasets.order_by("id")]
            out.append(f"{team.name} has no primary run for {group.name} in "
                       f"{group.phase.title}: teams are compared on their primary runs. Flag "
                       f"one of your {' or '.join(allowed)} runs primary on its page before "
                       f"the phase closes.")
    return out


def organizer_rows(phases) -> list[dict]:
    """For the dashboard and the API: one row per group requiring a primary."""
    return [{"phase": ph.slug, "phase_title": ph.title, "group": g.slug, "title": g.name,
             "teams": [t.name for t in teams]}
            for ph in phases for g, teams in missing_primaries(ph)]
