"""Uploads may not take the threads that serve pages.

An upload holds a server thread while its file is parsed and validated, and
validation runs at most VALIDATION_SLOTS at once: in a deadline rush the
uploads waiting for a slot held every thread (waitress's 8), and pages waited
seconds behind them (docs/dev/i41-rush.md). ``shareval server run`` therefore
starts UPLOAD_THREADS threads beyond ``--threads``, and this middleware keeps
uploads (multipart POSTs) to UPLOAD_THREADS at once: one more is answered 503
with Retry-After at once instead of taking a page's thread.
"""
from __future__ import annotations

import threading

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string

_lock = threading.Lock()
_in_flight = 0


def is_upload(request) -> bool:
    return request.method == "POST" and \
        request.META.get("CONTENT_TYPE", "").startswith("multipart/form-data")


class UploadGate:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        global _in_flight
        if not is_upload(request):
            return self.get_response(request)
        limit = settings.UPLOAD_THREADS
        with _lock:
            if _in_flight >= limit:
                busy = True
            else:
                busy, _in_flight = False, _in_flight + 1
        if busy:
            if request.path.startswith("/api/"):
                r = JsonResponse({"error": f"the server is taking {limit} uploads at once; "
                                           f"send this one again in a minute"}, status=503)
            else:                           # a page's form: a page, not JSON
                r = HttpResponse(render_to_string("503_uploads.html", {"limit": limit}), status=503)
            r["Retry-After"] = "60"
            return r
        try:
            return self.get_response(request)
        finally:
            with _lock:
                _in_flight -= 1
