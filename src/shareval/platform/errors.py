"""Styled error pages: a page for the empty 405 answers of ``require_POST`` views.

404, 403 and 500 use Django's own handlers, which render templates/404.html,
403.html and 500.html (they extend base.html). Django answers a wrong method
with an empty ``HttpResponseNotAllowed``; a browser shows that as a blank error,
so pages (not the API, whose answers have a body) get templates/405.html.
"""
from __future__ import annotations

from django.http import Http404
from django.template.loader import render_to_string


class NulInPathNotFound:
    """No route has a NUL character in it, and PostgreSQL refuses NUL in text
    parameters (a 500 for ``/c/x/files/p/d/name%00``): such a path is a 404 before
    any view turns its parts into a query."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.path:
            raise Http404("no such page")
        return self.get_response(request)


class MethodNotAllowedPage:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.status_code == 405 and not response.content \
                and not request.path.startswith("/api/"):
            response.content = render_to_string("405.html", {"allowed": response.get("Allow", "")},
                                                request=request)
            response["Content-Type"] = "text/html; charset=utf-8"
        return response
