"""Request-body limits, checked from the headers before any of the body is read.

Only the upload routes accept a body up to the upload limit (plus a margin for
the multipart envelope and form fields); every other request may carry at most
DATA_UPLOAD_MAX_MEMORY_SIZE. waitress buffers a whole body (spooling it to a
temporary file) before the application sees it, so under ``shareval server
run`` the check happens in waitress's header parser (:class:`LimitedChannel`);
:class:`BodyLimitMiddleware` repeats it for any other WSGI server.
"""
from __future__ import annotations

from django.conf import settings
from django.http import JsonResponse
from django.urls import Resolver404, resolve

# route names (urls.py) whose POST carries a file
UPLOAD_ROUTES = {"submit", "api-submissions", "new-competition", "campaigns",
                 "settings-data", "settings-catalog"}         # forms24
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
            return JsonResponse({"error": too_large(limit)}, status=413)
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

    class LimitedParser(HTTPRequestParser):
        def parse_header(self, header_plus):
            super().parse_header(header_plus)
            limit = body_limit(self.command or "", self.path or "/")
            self.adj = _Adjustments(self.adj, limit)
            if self.content_length > limit:          # with the middleware's message
                self.error = RequestEntityTooLarge(too_large(limit))
                self.completed = True

    class LimitedChannel(HTTPChannel):
        parser_class = LimitedParser

    servers: dict = {}
    server = create_server(application, map=servers, **kw)
    for s in list(servers.values()):
        if isinstance(s, BaseWSGIServer):
            s.channel_class = LimitedChannel
    return server
