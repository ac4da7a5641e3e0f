"""Teams: create, ask to join, let in, and the organizers' approval.

One person is in at most one team per competition. Each action that could add
a second locks the person's user row first (SQLite: the IMMEDIATE transaction's
write lock), so two requests at once cannot both pass the check.
Under ``Competition.team_approval`` a new team starts ``pending``: it may form
and gather members but not submit until an organizer approves it.

The lead may hand the lead role to another approved member who may take part
(registered, terms accepted). Under ``team_approval`` the organizers approve
teams *with their lead*, so the new lead is only proposed (``proposed_lead``)
until an organizer approves the change; the old lead stays lead meanwhile.
Every step is a :class:`TeamEvent` in the team's history.
"""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Count, Q

from shareval.platform.access.eligibility import participation_refusal
from shareval.platform.competitions.models import Competition, Membership, Team, TeamEvent


class TeamError(Exception):
    """A refusal shown to the person as it is."""


def _lock(user) -> None:
    get_user_model().objects.select_for_update(no_key=True).filter(pk=user.pk).first()


def _eligible(comp: Competition, user) -> None:
    """Registration and terms come before any team."""
    why = participation_refusal(user, comp)
    if why:
        raise TeamError(why[0].upper() + why[1:] + ".")


def _check_size(team: Team) -> None:
    """``max_team_size`` counts approved members."""
    limit = team.competition.max_team_size
    if limit and team.memberships.filter(status=Membership.APPROVED).count() >= limit:
        raise TeamError(f"{team.name} is full: teams have at most {limit} members.")


def create(comp: Competition, user, name: str) -> Team:
    _eligible(comp, user)
    name = name.strip()[:100]
    if not name:
        raise TeamError("A team needs a name.")
    try:
        with transaction.atomic():
            _lock(user)
            if comp.team_of(user) is not None:
                raise TeamError("You are already in a team of this competition.")
            Membership.objects.filter(team__competition=comp, user=user).delete()
            team = Team.objects.create(
                competition=comp, name=name, lead=user,
                status=Team.PENDING if comp.team_approval else Team.APPROVED)
            Membership.objects.create(team=team, user=user, status=Membership.APPROVED)
            log(team, user, "created", f"lead {user.get_username()}")
    except IntegrityError:
        raise TeamError(f"The name {name} is taken.") from None
    return team


def ask_to_join(comp: Competition, user, name: str) -> Team:
    team = Team.objects.filter(competition=comp, name=name, is_baseline=False).first()
    if team is None:
        raise TeamError("No such team.")
    _eligible(comp, user)
    _check_size(team)
    with transaction.atomic():
        _lock(user)
        if comp.team_of(user) is not None:
            raise TeamError("You are already in a team of this competition.")
        Membership.objects.filter(team__competition=comp, user=user).delete()
        Membership.objects.create(team=team, user=user)
        log(team, user, "asked to join")
    return team


def joinable(comp: Competition) -> list[dict]:
    """The teams one may ask to join (not baselines, not refused by the organizers),
    by name, with their approved members and whether they are full."""
    cap = comp.max_team_size
    teams = (Team.objects.filter(competition=comp, is_baseline=False)
             .exclude(status=Team.REJECTED)
             .annotate(members=Count("memberships",
                                     filter=Q(memberships__status=Membership.APPROVED)))
             .order_by("name"))
    return [{"name": t.name, "members": t.members, "full": bool(cap and t.members >= cap)}
            for t in teams]


def log(team: Team, actor, action: str, detail: str = "") -> TeamEvent:
    return TeamEvent.objects.create(team=team, actor=actor, action=action, detail=detail[:300])


def let_in(membership: Membership, by=None) -> None:
    """The lead approves a request to join."""
    with transaction.atomic():
        _lock(membership.user)
        if membership.team.competition.team_of(membership.user) is not None:
            raise TeamError("That user is already in a team.")
        Team.objects.select_for_update(no_key=True).filter(pk=membership.team_id).first()
        _check_size(membership.team)
        membership.status = Membership.APPROVED
        membership.save(update_fields=["status"])
        log(membership.team, by, "let in", membership.user.get_username())


def refuse(membership: Membership, by=None) -> None:
    """The lead turns down a request to join."""
    with transaction.atomic():
        log(membership.team, by, "refused", membership.user.get_username())
        membership.delete()


def review(team: Team, approve: bool, by=None) -> None:
    """An organizer's decision on a team (approval can also be withdrawn later)."""
    team.status = Team.APPROVED if approve else Team.REJECTED
    team.save(update_fields=["status"])
    log(team, by, f"team {team.status}")


def hand_lead(team: Team, by, username: str) -> Team:
    """The lead names another approved member as lead: at once, or (under
    ``team_approval``) as a proposal an organizer decides with :func:`decide_lead`."""
    comp = team.competition
    with transaction.atomic():
        team = Team.objects.select_for_update(no_key=True).get(pk=team.pk)
        if by is None or team.lead_id != by.pk:
            raise TeamError("Only the team's lead can hand over the lead role.")
        m = team.memberships.select_related("user").filter(
            user__username=(username or "").strip()).first()
        if m is None or m.status != Membership.APPROVED:
            raise TeamError(f"{username} is not an approved member of {team.name}.")
        new = m.user
        if new.pk == team.lead_id:
            raise TeamError(f"{username} already leads {team.name}.")
        why = participation_refusal(new, comp)
        if why:
            raise TeamError(f"{username} cannot lead the team: {why}.")
        if comp.team_approval and not team.is_baseline:
            team.proposed_lead = new
            team.save(update_fields=["proposed_lead"])
            log(team, by, "lead proposed", f"{by.get_username()} -> {new.get_username()}, "
                                          f"waiting for the organizers")
        else:
            old = team.lead
            team.lead, team.proposed_lead = new, None
            team.save(update_fields=["lead", "proposed_lead"])
            log(team, by, "lead handed", f"{old.get_username()} -> {new.get_username()}")
    return team


def decide_lead(team: Team, by, approve: bool) -> Team:
    """An organizer approves or refuses the proposed lead. The proposal lapses if
    the person is no longer an approved member who may take part."""
    lapsed = None
    with transaction.atomic():
        team = Team.objects.select_for_update(no_key=True).get(pk=team.pk)
        new = team.proposed_lead
        if new is None:
            raise TeamError(f"{team.name} has no lead change waiting.")
        team.proposed_lead = None
        if approve and (not team.memberships.filter(user=new, status=Membership.APPROVED)
                        .exists() or participation_refusal(new, team.competition)):
            team.save(update_fields=["proposed_lead"])
            log(team, by, "lead refused", f"{new.get_username()} may no longer lead")
            lapsed = new
        elif approve:
            old = team.lead
            team.lead = new
            team.save(update_fields=["lead", "proposed_lead"])
            log(team, by, "lead approved", f"{old.get_username()} -> {new.get_username()}")
        else:
            team.save(update_fields=["proposed_lead"])
            log(team, by, "lead refused", f"{new.get_username()} stays a member")
    if lapsed is not None:
        raise TeamError(f"{lapsed.get_username()} is no longer an approved member who may "
                        f"take part; the change was dropped.")
    return team
