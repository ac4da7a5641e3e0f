"""API tokens (many per user, stored only as a SHA-256 digest, revocable), verified
e-mail addresses and the log of mail requests that rate-limits them."""
from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone

PREFIX = "sv_"


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class ApiToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="api_tokens")
    name = models.CharField(max_length=100)
    key_digest = models.CharField(max_length=64, unique=True)
    hint = models.CharField(max_length=12, help_text="first characters, to recognize a token")
    created = models.DateTimeField(default=timezone.now)
    last_used = models.DateTimeField(null=True, blank=True)
    revoked = models.DateTimeField(null=True, blank=True)
    parent = models.ForeignKey("self", on_delete=models.CASCADE, null=True, blank=True,
                               related_name="children",
                               help_text="the token that created this one over the API; "
                                         "revoking it revokes this one")

    class Meta:
        ordering = ["-created"]

    @classmethod
    def issue(cls, user, name: str, parent: "ApiToken | None" = None) -> tuple["ApiToken", str]:
        """Create a token; the clear key is returned once and never stored."""
        key = PREFIX + secrets.token_urlsafe(32)
        tok = cls.objects.create(user=user, name=name[:100] or "token", key_digest=digest(key),
                                 hint=key[:10], parent=parent)
        return tok, key

    @property
    def active(self) -> bool:
        """Not revoked, nor any token up its chain of parents (checked on every use,
        so a child minted while its parent was being revoked cannot outlive it)."""
        tok, seen = self, set()
        while tok is not None and tok.pk not in seen:
            if tok.revoked is not None:
                return False
            seen.add(tok.pk)
            tok = tok.parent
        return True

    def revoke(self, now=None) -> int:
        """Revoke this token and every token minted from it, at any depth; returns
        how many were newly revoked."""
        now = now or timezone.now()
        n, frontier = 0, [self.pk]
        while frontier:
            n += ApiToken.objects.filter(pk__in=frontier, revoked__isnull=True).update(revoked=now)
            frontier = list(ApiToken.objects.filter(parent__in=frontier)
                            .values_list("pk", flat=True))
        self.refresh_from_db(fields=["revoked"])
        return n

    def __str__(self):
        return f"{self.name} ({self.hint}…)"


class VerifiedAddress(models.Model):
    """The address a user proved to receive mail at. It counts only while it is
    still the account's address (``addresses.verified_email``): a changed address
    is unverified again without this row being touched, whoever changed it."""
    LINK, INVITATION, COMMAND_LINE = "link", "invitation", "command line"
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                related_name="verified_address")
    address = models.CharField(max_length=254, help_text="lower case")
    verified = models.DateTimeField(default=timezone.now)
    how = models.CharField(max_length=12, choices=[(LINK, "a link mailed to it"),
                                                   (INVITATION, "a mailed invitation link"),
                                                   (COMMAND_LINE, "set on the command line")])

    def __str__(self):
        return f"{self.address} ({self.how})"


class MailRequest(models.Model):
    """One request for a password-reset or verification mail, kept for an hour to
    rate-limit them per address and per client. The address is stored only as a
    keyed hash (``mail_limits.address_key``): unknown addresses are asked for too."""
    RESET, VERIFY = "reset", "verify"
    purpose = models.CharField(max_length=8, choices=[(RESET, RESET), (VERIFY, VERIFY)])
    address_key = models.CharField(max_length=64)
    client = models.GenericIPAddressField(null=True, blank=True)
    at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        indexes = [models.Index(fields=["purpose", "address_key"], name="mail_request_address"),
                   models.Index(fields=["purpose", "client"], name="mail_request_client")]
