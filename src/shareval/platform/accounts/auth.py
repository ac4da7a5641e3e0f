"""DRF authentication by ``Authorization: Token <key>`` against hashed ApiTokens."""
from __future__ import annotations

from django.utils import timezone
from rest_framework import authentication, exceptions

from .models import ApiToken, digest


class ApiTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Token"

    def authenticate(self, request):
        parts = authentication.get_authorization_header(request).split()
        if not parts or parts[0].lower() != self.keyword.lower().encode():
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("malformed Authorization header: "
                                                  "expected 'Token <key>'")
        key = parts[1].decode("ascii", "replace")
        tok = ApiToken.objects.select_related("user").filter(key_digest=digest(key)).first()
        if tok is None or not tok.active or not tok.user.is_active:
            raise exceptions.AuthenticationFailed("invalid or revoked token")
        ApiToken.objects.filter(pk=tok.pk).update(last_used=timezone.now())
        return tok.user, tok

    def authenticate_header(self, request):
        return self.keyword
