"""DRF authentication by ``Authorization: Token <key>`` against hashed ApiTokens, and
the same tokens for the pages scripts download from (``token_or_session``)."""
from __future__ import annotations

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.utils import timezone
from rest_framework import authentication, exceptions

from shareval.platform.accounts.models import ApiToken, digest


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


def token_or_session(view):
    """For files scripts fetch (the organizers' exports): a request with
    ``Authorization: Token <key>`` is the token's user for that request, a wrong
    or revoked token is answered 401 in one line; without a token the browser's
    session counts (else the log-in page, as ``login_required``)."""
    session_view = login_required(view)

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not request.user.is_authenticated and "HTTP_AUTHORIZATION" in request.META:
            try:
                found = ApiTokenAuthentication().authenticate(request)
            except exceptions.AuthenticationFailed as e:
                return HttpResponse(f"{e.detail}\n", status=401, content_type="text/plain")
            if found is not None:
                request.user = found[0]
        return session_view(request, *args, **kwargs)
    return wrapped
