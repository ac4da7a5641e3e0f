"""Code-submission endpoints: upload a bundle (what ``shareval submit --code``
calls), see it with its runs, and (organizers) run a stage again."""
from __future__ import annotations

import json

from django.http import Http404
from rest_framework import status
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from shareval.platform.access import eligibility
from shareval.platform.submissions.api import (
    _team, error_response, resolve_dataset, upload_request, wants_primary
)
from shareval.platform.submissions.service import SubmissionError
from shareval.platform.coderuns import service
from shareval.platform.coderuns.models import CodeSubmission


def visible_code(request, pk) -> tuple[CodeSubmission, bool]:
    """The code submission and whether the user organizes its competition; 404
    unless the user is on its team or an organizer."""
    cs = CodeSubmission.objects.select_related("team", "dataset__phase__competition",
                                               "dataset__task").filter(pk=pk).first()
    if cs is None:
        raise Http404("no such code submission")
    comp = cs.dataset.phase.competition
    organizer = comp.is_organizer(request.user)
    if not organizer and comp.team_of(request.user) != cs.team:
        raise Http404("no such code submission")
    if not eligibility.can_see(request, comp):
        raise Http404("no such code submission")
    return cs, organizer


def payload(cs: CodeSubmission, organizer: bool) -> dict:
    return {"id": str(cs.pk), "team": cs.team.name, "dataset": str(cs.dataset),
            "name": cs.original_name, "size": cs.size, "primary": cs.primary,
            "created": cs.created.isoformat(), "command": cs.manifest.get("command"),
            "page": f"/code/{cs.pk}/",
            "runs": [service.run_view(r, organizer) for r in cs.runs.order_by("created", "id")]}


class CodeSubmissionList(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser, FormParser]

    def post(self, request):
        data = request.data
        comp, upload, refused = upload_request(request, "the bundle")
        if refused is not None:
            return refused
        try:
            ds = resolve_dataset(comp, data.get("phase", ""), data.get("task", ""),
                                 data.get("dataset"))
            team = _team(request, comp, data.get("team"))
            cs = service.submit_code(request.user, team, ds, upload,
                                     primary=wants_primary(data),
                                     description=str(data.get("description", "")))
        except SubmissionError as e:
            return error_response(e)
        return Response(payload(cs, comp.is_organizer(request.user)),
                        status=status.HTTP_201_CREATED)


class CodeSubmissionDetail(APIView):
    permission_classes = [IsAuthenticated]

    def get(self, request, s):
        cs, organizer = visible_code(request, s)
        return Response(payload(cs, organizer))


class Rerun(APIView):
    """Organizers: {"stage": "test"|"final", "limits": {"wall_seconds": 7200, ...}}."""
    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser, FormParser, MultiPartParser]

    def post(self, request, s):
        cs, organizer = visible_code(request, s)
        if not organizer:
            return Response({"error": "only organizers can re-run a code submission"},
                            status=status.HTTP_403_FORBIDDEN)
        limits = request.data.get("limits") or {}
        if isinstance(limits, str):
            try:
                limits = json.loads(limits)
            except ValueError:
                return Response({"error": "limits: not JSON"}, status=400)
        try:
            run = service.rerun(cs, request.user, str(request.data.get("stage", "final")),
                                limits if isinstance(limits, dict) else {})
        except SubmissionError as e:
            return error_response(e)
        return Response(service.run_view(run, organizer), status=status.HTTP_201_CREATED)
