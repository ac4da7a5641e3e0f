"""Request-body limits, checked from the headers before any of the body is read.

Only the upload routes accept a body up to the upload limit (plus a margin for
the multipart envelope and form fields); every other request may carry at most
DATA_UPLOAD_MAX_MEMORY_SIZE. waitress buffers a whole body (spooling it to a
temporary file) before the application sees it, so under ``shareval server
run`` the check happens in waitress's header parser (:class:`LimitedChannel`);
:class:`BodyLimitMiddleware` repeats it for any other WSGI server.

A refusal (413) names the limit: as JSON on the API (with ``limit_mb``, what
``shareval submit`` reports), as a page in the site's style elsewhere. A client
that announced its body with ``Expect: 100-continue`` gets the refusal before
sending the body (no "100 Continue" is sent for a refused request).
"""
from __future__ import annotations

import json
import secrets

from django.conf import settings
from django.http import HttpResponse
from django.urls import Resolver404, resolve

# route names (urls.py) whose POST carries a file
UPLOAD_ROUTES = {"submit", "api-submissions", "new-competition", "campaigns",
                 "settings-data", "settings-catalog",         # the settings forms
                 "submit-code", "api-code-submissions"}       # code bundles
MARGIN = 2 ** 20        # multipart boundaries, headers and the other form fields


def body_limit(method: str, path: str) -> int:
    """The largest body accepted for ``method path``, in bytes."""
    if method.upper() == "POST":
        try:
            name = resolve(path).url_name
        except Resolver404:
            name = None
        if name in UPLOAD_ROUTES:
            return settings.MAX_UPLOAD_BYTES + MARGIN
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def too_large(limit: int) -> str:
    return (f"request body too large: at most {limit // 2**20} MB here "
            f"(uploads: {settings.MAX_UPLOAD_BYTES // 2**20} MB)")


def refusal(path: str, limit: int, length: int) -> tuple[list[tuple[str, str]], bytes]:
    """Headers and body of the 413 for a ``length``-byte request to ``path``."""
    upload_mb = settings.MAX_UPLOAD_BYTES // 2 ** 20
    upload_route = limit > settings.MAX_UPLOAD_BYTES
    if path.startswith("/api/"):           # limit_mb: what a file sent here may weigh
        body = json.dumps({"error": too_large(limit),
                           "limit_mb": upload_mb if upload_route else limit // 2 ** 20,
                           "size_mb": round(length / 2 ** 20, 1)})
        return [("Content-Type", "application/json")], body.encode()
    from django.template.loader import render_to_string
    nonce = secrets.token_urlsafe(16)
    # refused before the session is read: the page cannot say who is logged in
    page = render_to_string("413.html", {"CSP_NONCE": nonce, "session_unknown": True,
                                         "upload_mb": upload_mb, "limit_mb": limit // 2 ** 20,
                                         "size_mb": round(length / 2 ** 20, 1),
                                         "upload_route": upload_route})
    policy = (f"default-src 'self'; script-src 'self' 'nonce-{nonce}'; style-src 'self' "
              f"'nonce-{nonce}'; img-src 'self' data:; object-src 'none'; base-uri 'self'; "
              f"form-action 'self'; frame-ancestors 'none'")
    return [("Content-Type", "text/html; charset=utf-8"), ("Content-Security-Policy", policy),
            ("X-Frame-Options", "DENY"), ("X-Content-Type-Options", "nosniff")], page.encode()


class BodyLimitMiddleware:
    """413 for a declared Content-Length above :func:`body_limit`, before reading it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        limit = body_limit(request.method, request.path_info)
        if length > limit:
            headers, body = refusal(request.path_info, limit, length)
            response = HttpResponse(body, status=413)
            for k, v in headers:
                response[k] = v
            return response
        return self.get_response(request)


def waitress_server(application, **kw):
    """A waitress server whose parser applies :func:`body_limit` per request;
    ``max_request_body_size`` stays the overall ceiling."""
    from waitress.channel import HTTPChannel
    from waitress.parser import HTTPRequestParser
    from waitress.server import BaseWSGIServer, create_server
    from waitress.utilities import RequestEntityTooLarge

    class _Adjustments:
        """The server's settings with this request's body limit."""

        def __init__(self, adj, limit):
            # waitress refuses lengths >= max_request_body_size: limit + 1 accepts limit
            self._adj = adj
            self.max_request_body_size = min(limit + 1, adj.max_request_body_size)

        def __getattr__(self, name):
            return getattr(self._adj, name)

    class TooLarge(RequestEntityTooLarge):
        """The middleware's answer, from waitress (its ErrorTask, in a worker thread)."""

        def __init__(self, path: str, limit: int, length: int):
            super().__init__(too_large(limit))
            self.path, self.limit, self.length = path, limit, length

        def to_response(self, ident=None):
            headers, body = refusal(self.path, self.limit, self.length)
            return f"{self.code} {self.reason}", headers, body

    class LimitedParser(HTTPRequestParser):
        limit = None

        def parse_header(self, header_plus):
            super().parse_header(header_plus)
            self.limit = body_limit(self.command or "", self.path or "/")
            self.adj = _Adjustments(self.adj, self.limit)

        def received(self, data):
            n = super().received(data)
            # after waitress's own size check, whose bare text answer this replaces
            if self.limit is not None and self.content_length > self.limit and \
                    not isinstance(self.error, TooLarge):
                self.error = TooLarge(self.path or "/", self.limit, self.content_length)
                self.completed = True
                self.expect_continue = False         # refused before the body is sent
            return n

    class LimitedChannel(HTTPChannel):
        parser_class = LimitedParser

    servers: dict = {}
    server = create_server(application, map=servers, **kw)
    for s in list(servers.values()):
        if isinstance(s, BaseWSGIServer):
            s.channel_class = LimitedChannel
    return server
