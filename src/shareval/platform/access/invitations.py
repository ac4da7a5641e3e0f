"""Invitation links: an organizer invites an e-mail address from the Access page;
the address gets a mail with a sign-up link ``/c/<slug>/join/<token>/``.

The link is used once: whoever opens it signs up (or logs in) and is registered
for the competition, approved (the organizer chose them), with the terms
accepted when the competition has them. Only the token's SHA-256 is stored; the
link expires after ``SHAREVAL_INVITATION_DAYS`` days (default 14); inviting the
address again sends a new link and voids the old one. A wrong, used or expired
token gets a message saying which. Using the link verifies the account's address
when it is the invited one: the link was mailed there.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import secrets

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from shareval.platform.accounts import addresses
from shareval.platform.accounts.models import VerifiedAddress

from shareval.platform.access import eligibility
from shareval.platform.competitions.models.access import TERMS, Invitation, Registration
from shareval.platform.competitions.models import Competition


class InvitationError(Exception):
    """Shown to the person as it is; ``status`` is the page's HTTP status."""

    def __init__(self, message: str, status: int = 404):
        super().__init__(message)
        self.status = status


def days() -> int:
    return int(getattr(settings, "INVITATION_DAYS", 14))


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def issue(inv: Invitation, by) -> str:
    """A new link for an address invitation (the previous one stops working)."""
    token = secrets.token_urlsafe(24)
    now = timezone.now()
    inv.token_hash, inv.sent, inv.expires = _hash(token), now, now + dt.timedelta(days=days())
    inv.used, inv.used_by, inv.invited_by = None, None, by
    inv.save(update_fields=["token_hash", "sent", "expires", "used", "used_by", "invited_by"])
    return token


NOT_VALID = ("This invitation link is not valid: check that you opened the whole link "
             "from the mail, or ask the organizers for a new one.")


def find(slug: str, token: str, lock: bool = False) -> Invitation:
    """The invitation of this link, or :class:`InvitationError` saying what is wrong."""
    qs = Invitation.objects.select_related("competition")
    if lock:            # only the invitation's row (PostgreSQL: no outer join under FOR UPDATE)
        qs = qs.select_for_update(of=("self",), no_key=True)
    inv = qs.filter(competition__slug=slug, kind=Invitation.EMAIL,
                    token_hash=_hash(token or "")).first() if token else None
    if inv is None:
        raise InvitationError(NOT_VALID)
    if inv.used is not None:
        raise InvitationError(f"This invitation link was already used on "
                              f"{inv.used:%Y-%m-%d %H:%M} UTC; a link works once. Log in, "
                              f"or ask the organizers for a new link.", 410)
    if inv.expires is not None and timezone.now() >= inv.expires:
        raise InvitationError(f"This invitation link expired on {inv.expires:%Y-%m-%d %H:%M} "
                              f"UTC; ask the organizers for a new one.", 410)
    return inv


def use(slug: str, token: str, user, terms_version: int | None = None) -> Registration:
    """Spend the link: ``user`` is registered (approved) for the competition."""
    with transaction.atomic():
        inv = find(slug, token, lock=True)
        comp: Competition = inv.competition
        terms = eligibility.page(comp, TERMS)
        if terms is not None and not eligibility.accepted(user, comp, TERMS):
            if terms_version is None:
                raise InvitationError(f"Accept the {terms.title} to take part.", 400)
            try:
                eligibility.accept(user, comp, TERMS, terms_version)
            except eligibility.NotEligible as e:
                raise InvitationError(str(e), 400) from None
        now = timezone.now()
        reg, _ = Registration.objects.get_or_create(competition=comp, user=user)
        reg.status, reg.decided, reg.decided_by = Registration.APPROVED, now, inv.invited_by
        reg.save(update_fields=["status", "decided", "decided_by"])
        inv.used, inv.used_by = now, user
        inv.save(update_fields=["used", "used_by"])
        if not user.email:
            user.email = inv.value
            user.save(update_fields=["email"])
        if addresses.normalized(user.email) == inv.value:   # the link was mailed to it
            addresses.mark_verified(user, VerifiedAddress.INVITATION)
    return reg
