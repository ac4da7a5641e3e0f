"""REST API error shape: {"error": message, "problems": [...]} with the right status."""
from __future__ import annotations

from rest_framework.views import exception_handler as drf_handler


def exception_handler(exc, context):
    resp = drf_handler(exc, context)
    if resp is not None and isinstance(resp.data, dict) and "detail" in resp.data:
        resp.data = {"error": str(resp.data["detail"])}
    return resp
