"""API tokens: many per user, stored only as a SHA-256 digest, revocable."""
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

    class Meta:
        ordering = ["-created"]

    @classmethod
    def issue(cls, user, name: str) -> tuple["ApiToken", str]:
        """Create a token; the clear key is returned once and never stored."""
        key = PREFIX + secrets.token_urlsafe(32)
        tok = cls.objects.create(user=user, name=name[:100] or "token", key_digest=digest(key),
                                 hint=key[:10])
        return tok, key

    @property
    def active(self) -> bool:
        return self.revoked is None

    def __str__(self):
        return f"{self.name} ({self.hint}…)"
