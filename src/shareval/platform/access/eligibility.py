"""Who may see a competition, take part in it, download its data, submit to a phase.

Visibility (``Competition.visibility``):

- public: listed and readable by anyone;
- unlisted: not listed; readable with the secret link (``/c/<slug>/?key=…``,
  remembered in the session) and by everyone who registered or is in a team;
- private: not listed to others; readable only by invited users (username, or a
  verified e-mail address or its domain) and by those who registered or are in a team.

Organizers and superusers see everything. A competition a person may not see
answers 404 everywhere (pages, API, files), exactly like a missing one, after
the same queries (:func:`find_visible`, :func:`organized`), so neither the
answer nor its timing tells that it exists.

Taking part (forming or joining a team, submitting) needs, on top of seeing:
an approved registration when the competition has ``registration_approval``,
and acceptance of the current version of its ``terms`` page when it has one.
Downloads under ``downloads: participants`` also need a signed-in participant
and acceptance of the current ``licence`` page. Every download is logged.
"""
from __future__ import annotations

import secrets

from django.db.models import Exists, Q
from django.http import Http404
from django.utils import timezone

from shareval.platform.accounts.addresses import normalized
from shareval.platform.accounts.models import VerifiedAddress

from shareval.platform.competitions.models.access import (
    LICENCE, TERMS, Agreement, Download, Invitation, Page, PhaseLimit, Registration
)
from shareval.platform.competitions.models import Competition, Membership

SESSION_KEYS = "sv_competition_keys"


class NotEligible(Exception):
    """A refusal shown to the person as it is."""


def ensure_secret(comp: Competition) -> str:
    if not comp.secret:
        comp.secret = secrets.token_urlsafe(18)
        comp.save(update_fields=["secret"])
    return comp.secret


def invitations_of(user):
    """The invitations that name ``user``: by username, or by their e-mail address
    or its domain once that address is verified (``accounts.addresses``)."""
    q = Q(kind=Invitation.USER, value=user.get_username().lower())
    email = normalized(user.email)
    if email:
        verified = Exists(VerifiedAddress.objects.filter(user=user.pk, address=email))
        q |= (Q(kind=Invitation.EMAIL, value=email)
              | Q(kind=Invitation.DOMAIN, value=email.rsplit("@", 1)[-1])) & verified
    return Invitation.objects.filter(q)


def invited(user, comp: Competition) -> bool:
    if not user.is_authenticated:
        return False
    return invitations_of(user).filter(competition=comp).exists()


class Reach:
    """The hidden competitions ``user`` may reach, whichever one is asked about:
    those they organize, registered for (not rejected) or are in a team of
    (``involved``), and those they are invited to (``invited``, which counts for
    private ones only). Four small queries for a signed-in person, none for
    others: the same work for any competition, existing or not."""

    def __init__(self, user):
        self.everything = user.is_authenticated and user.is_superuser
        self.involved: set[int] = set()
        self.invited: set[int] = set()
        if user.is_authenticated and not self.everything:
            through = Competition.organizers.through.objects
            self.involved.update(through.filter(user=user.pk)
                                 .values_list("competition", flat=True))
            self.involved.update(Registration.objects.filter(user=user.pk)
                                 .exclude(status=Registration.REJECTED)
                                 .values_list("competition", flat=True))
            self.involved.update(Membership.objects.filter(user=user.pk)
                                 .values_list("team__competition", flat=True))
            self.invited.update(invitations_of(user).values_list("competition", flat=True))

    def sees(self, comp: Competition, keys=(), key: str | None = None) -> bool:
        """``keys``: unlisted competitions opened with their secret link in this
        session; ``key``: the secret key this request carries."""
        if comp.visibility == Competition.PUBLIC or self.everything or comp.pk in self.involved:
            return True
        if comp.visibility == Competition.UNLISTED:
            return comp.pk in keys or bool(key and comp.secret and
                                           secrets.compare_digest(key, comp.secret))
        return comp.pk in self.invited


def can_see(request_or_user, comp: Competition) -> bool:
    request = request_or_user if hasattr(request_or_user, "user") else None
    user = request.user if request is not None else request_or_user
    if comp.visibility == Competition.PUBLIC:
        return True
    keys = request.session.get(SESSION_KEYS, []) if request is not None else ()
    return Reach(user).sees(comp, keys)


def remember_key(request, comp: Competition) -> None:
    """A visit with the unlisted competition's secret key opens it for this session."""
    key = request.GET.get("key")
    if comp.visibility == Competition.UNLISTED and key and comp.secret and \
            secrets.compare_digest(key, comp.secret):
        keys = request.session.get(SESSION_KEYS, [])
        if comp.pk not in keys:
            request.session[SESSION_KEYS] = keys + [comp.pk]


def find_visible(request, slug: str) -> Competition | None:
    """The competition ``slug`` if the requester may see it, else None. A public one
    is there for everyone; otherwise the same queries run whether the slug is a
    hidden competition or none at all, so neither the answer nor its timing
    tells them apart."""
    comp = Competition.objects.filter(slug=slug).first()
    if comp is not None and comp.visibility == Competition.PUBLIC:
        return comp
    # all of it before looking at whether comp exists
    reach, keys, key = Reach(request.user), request.session.get(SESSION_KEYS, []), \
        request.GET.get("key")
    if comp is None or not reach.sees(comp, keys, key):
        return None
    remember_key(request, comp)
    return comp


def visible(request, slug: str) -> Competition:
    comp = find_visible(request, slug)
    if comp is None:
        raise Http404("no such competition")
    return comp


def organized(request, slug: str) -> Competition:
    """The competition ``slug`` if the requester organizes it, else 404, with the
    same queries for a competition they do not organize and a missing one."""
    user = request.user
    if not user.is_authenticated:
        raise Http404("no such page")
    comp = Competition.objects.filter(slug=slug).first()
    mine = user.is_superuser or user.organized_competitions.filter(slug=slug).exists()
    if comp is None or not mine:
        raise Http404("no such page")
    return comp


def listed(user):
    """Competitions shown in lists (home page, API): those ``user`` may see, but
    unlisted ones only to their organizers and participants (not by secret link)."""
    reach = Reach(user)
    if reach.everything:
        return Competition.objects.all()
    return Competition.objects.filter(
        Q(visibility=Competition.PUBLIC) | Q(pk__in=reach.involved)
        | Q(visibility=Competition.PRIVATE, pk__in=reach.invited))


# ---------------------------------------------------------------------------
# Versioned documents and agreements

def page(comp: Competition, slug: str) -> Page | None:
    return comp.pages.filter(slug=slug).first()


def accepted(user, comp: Competition, document: str) -> bool:
    """Whether ``user`` accepted the current version of ``document`` (True if there is
    no such page)."""
    p = page(comp, document)
    if p is None:
        return True
    if not user.is_authenticated:
        return False
    return Agreement.objects.filter(competition=comp, user=user, document=document,
                                    version=p.version).exists()


def accept(user, comp: Competition, document: str, version: int) -> Agreement:
    p = page(comp, document)
    if p is None:
        raise NotEligible(f"this competition has no {document} to accept")
    if int(version) != p.version:
        raise NotEligible(f"the {p.title} changed (now version {p.version}); read it again "
                          f"before accepting")
    return Agreement.objects.create(competition=comp, user=user, document=document,
                                    version=p.version, accepted=timezone.now())


# ---------------------------------------------------------------------------
# Registration

def registration(user, comp: Competition) -> Registration | None:
    if not user.is_authenticated:
        return None
    return Registration.objects.filter(competition=comp, user=user).first()


def register(user, comp: Competition, terms_version: int | None = None) -> Registration:
    """Accept the terms (when the competition has them) and ask to take part:
    approved at once unless the competition requires the organizers' approval."""
    if not can_see(user, comp):
        raise NotEligible("no such competition")
    if page(comp, TERMS) is not None and not accepted(user, comp, TERMS):
        if terms_version is None:
            raise NotEligible("accept the terms of participation first")
        accept(user, comp, TERMS, terms_version)
    reg = registration(user, comp)
    if reg is None:
        reg = Registration.objects.create(
            competition=comp, user=user,
            status=Registration.PENDING if comp.registration_approval else Registration.APPROVED)
    return reg


def decide(reg: Registration, approve: bool, by) -> None:
    reg.status = Registration.APPROVED if approve else Registration.REJECTED
    reg.decided, reg.decided_by = timezone.now(), by
    reg.save(update_fields=["status", "decided", "decided_by"])


def participation_refusal(user, comp: Competition) -> str | None:
    """Why ``user`` may not take part (form or join a team, submit), or None."""
    if comp.is_organizer(user):
        return None
    if not user.is_authenticated:
        return "log in to take part"
    if comp.registration_approval:
        reg = registration(user, comp)
        if reg is None:
            return "register for this competition first (the organizers approve registrations)"
        if reg.status == Registration.PENDING:
            return "your registration is waiting for the organizers' approval"
        if reg.status == Registration.REJECTED:
            return "the organizers did not approve your registration"
    if not accepted(user, comp, TERMS):
        p = page(comp, TERMS)
        return f"accept the current {p.title} (version {p.version}) on the registration page"
    return None


def download_refusal(user, comp: Competition) -> str | None:
    """Why ``user`` may not download released files, or None."""
    if comp.downloads != Competition.PARTICIPANTS or comp.is_organizer(user):
        return None
    if not user.is_authenticated:
        return "log in to download the data"
    why = participation_refusal(user, comp)
    if why:
        return why
    if not accepted(user, comp, LICENCE):
        p = page(comp, LICENCE)
        return f"accept the {p.title} (version {p.version}) before downloading"
    return None


def log_download(request, comp: Competition, what: str) -> Download:
    user = request.user if request.user.is_authenticated else None
    return Download.objects.create(competition=comp, user=user, what=what[:500],
                                   address=request.META.get("REMOTE_ADDR") or None)


# ---------------------------------------------------------------------------
# Phases for chosen teams

def phase_refusal(team, phase) -> str | None:
    limit = PhaseLimit.objects.filter(phase=phase).first()
    if limit is None or team.is_baseline or limit.teams.filter(pk=team.pk).exists():
        return None
    names = sorted(limit.teams.values_list("name", flat=True))
    return (f"{phase.title} is limited to the teams the organizers chose "
            f"({', '.join(names) or 'none yet'}); team {team.name} is not one of them")
