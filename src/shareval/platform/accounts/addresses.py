"""Verified e-mail addresses.

An account's address counts for anything that trusts it (invitations by
address or ``@domain``) only once its owner opened a link mailed to it. The
link carries a token of Django's password-reset machinery with a salt and a
hash of its own: it names the account, the address and the address verified
before, so it works once, only for the address it was mailed to (changing the
address voids it), never as a password-reset token (nor a reset token as this
one), and expires with reset links (``PASSWORD_RESET_TIMEOUT``, three days).
"""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_decode, urlsafe_base64_encode

from shareval.platform.notifications import mail

from shareval.platform.accounts import mail_limits
from shareval.platform.accounts.models import MailRequest, VerifiedAddress


def normalized(address: str | None) -> str:
    return (address or "").strip().lower()


def _verified_row(user) -> VerifiedAddress | None:
    try:
        return user.verified_address
    except VerifiedAddress.DoesNotExist:
        return None


def verified_email(user) -> str:
    """The account's address (lower case) if it is verified, else ``""``."""
    if not getattr(user, "is_authenticated", False):
        return ""
    row, email = _verified_row(user), normalized(user.email)
    return email if email and row is not None and row.address == email else ""


def mark_verified(user, how: str) -> None:
    """The account's current address is verified (``how``: VerifiedAddress.LINK, …)."""
    row, _ = VerifiedAddress.objects.update_or_create(
        user=user, defaults={"address": normalized(user.email), "verified": timezone.now(),
                             "how": how})
    user.verified_address = row


class AddressTokenGenerator(PasswordResetTokenGenerator):
    key_salt = "shareval.platform.accounts.addresses.AddressTokenGenerator"

    def _make_hash_value(self, user, timestamp):
        row = _verified_row(user)
        return (f"{user.pk}|{normalized(user.email)}|{row.address if row else ''}|"
                f"{timestamp}")


tokens = AddressTokenGenerator()


def lifetime() -> str:
    hours = settings.PASSWORD_RESET_TIMEOUT // 3600
    return f"{hours // 24} days" if hours % 24 == 0 and hours > 24 else f"{hours} hours"


def link_path(user) -> str:
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    return f"/accounts/verify/{uid}/{tokens.make_token(user)}/"


def user_of_link(uidb64: str, token: str):
    """The account a verification link is for, or None if the link is not valid
    (now): wrong, expired, used, or the account's address changed since."""
    try:
        pk = urlsafe_base64_decode(uidb64).decode()
        user = get_user_model()._default_manager.get(pk=pk)
    except (TypeError, ValueError, OverflowError, get_user_model().DoesNotExist):
        return None
    if not normalized(user.email) or not tokens.check_token(user, token):
        return None
    return user


def send_link(user, client: str | None) -> bool:
    """Mail the account's address a verification link; False when refused by the
    limits on such mails (per address and per client, ``mail_limits``)."""
    if not mail_limits.allow(MailRequest.VERIFY, normalized(user.email), client):
        return False
    body = (f"Someone (hopefully you) gave this address to the account {user.username}. "
            f"Open this link to verify it; invitations to competitions by e-mail address "
            f"or domain count only once the address is verified:\n\n"
            f"{mail.link(link_path(user))}\n\n"
            f"The link works once, for this address only, and expires in "
            f"{lifetime()}. If you did not expect this mail, ignore it: the address stays "
            f"unverified.")
    return mail.send([user], "Verify your e-mail address", body, essential=True) == 1
