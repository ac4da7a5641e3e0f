"""Teams: create, ask to join, let in, and the organizers' approval.

One person is in at most one team per competition. Each action that could add
a second locks the person's user row first (SQLite: the IMMEDIATE transaction's
write lock), so two requests at once cannot both pass the check.
Under ``Competition.team_approval`` a new team starts ``pending``: it may form
and gather members but not submit until an organizer approves it.
"""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from .eligibility import participation_refusal
from .models import Competition, Membership, Team


class TeamError(Exception):
    """A refusal shown to the person as it is."""


def _lock(user) -> None:
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()


def _eligible(comp: Competition, user) -> None:
    """access24: registration and terms come before any team."""
    why = participation_refusal(user, comp)
    if why:
        raise TeamError(why[0].upper() + why[1:] + ".")


def _check_size(team: Team) -> None:
    """access24: ``max_team_size`` counts approved members."""
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
    return team


def let_in(membership: Membership) -> None:
    """The lead approves a request to join."""
    with transaction.atomic():
        _lock(membership.user)
        if membership.team.competition.team_of(membership.user) is not None:
            raise TeamError("That user is already in a team.")
        Team.objects.select_for_update().filter(pk=membership.team_id).first()
        _check_size(membership.team)
        membership.status = Membership.APPROVED
        membership.save(update_fields=["status"])


def review(team: Team, approve: bool) -> None:
    """An organizer's decision on a team (approval can also be withdrawn later)."""
    team.status = Team.APPROVED if approve else Team.REJECTED
    team.save(update_fields=["status"])
