"""Per-run actions (``runs.py``) as a page form and an API endpoint."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect
from django.views.decorators.http import require_POST
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from shareval.platform.submissions import factsheets, runs
from shareval.platform.submissions.api import error_response, sheet_from_request, visible_submission
from shareval.platform.submissions.present import submission_payload
from shareval.platform.submissions.service import SubmissionError


def _apply(sub, user, action: str, data, sheet: dict | None) -> str:
    if action == "rescore":
        runs.rescore(sub, user)
        return "Queued for re-scoring."
    if action == "disqualify":
        runs.disqualify(sub, user, str(data.get("reason", "")))
        return "Run disqualified."
    if action == "reinstate":
        runs.reinstate(sub, user, str(data.get("reason", "")))
        return "Run reinstated."
    if action == "annotate":
        runs.annotate(sub, user, str(data.get("note", "")),
                      team_sees=str(data.get("team_sees", "")).lower() in ("1", "true", "on",
                                                                           "yes"))
        return "Note added."
    if action in ("hide", "show"):
        runs.set_on_board(sub, user, action == "show", str(data.get("reason", "")))
        return "Shown on the leaderboard." if action == "show" else "Taken off the leaderboard."
    if action == "factsheet":
        runs.edit_factsheet(sub, user, sheet or {}, str(data.get("reason", "")))
        return "Fact sheet updated."
    raise Http404("no such action")


@login_required
@require_POST
def run_action(request, s, action):
    sub = visible_submission(request, s)
    sheet = None
    if action == "factsheet":
        sheet = factsheets.from_post(sub.dataset.phase.competition.factsheet, request.POST)
    try:
        messages.success(request, _apply(sub, request.user, action, request.POST, sheet))
    except SubmissionError as e:
        messages.error(request, e.message + (": " + "; ".join(e.problems) if e.problems else ""))
    return redirect("submission", s=sub.pk)


class RunAction(APIView):
    """POST /api/submissions/<id>/run/<action>/: rescore, disqualify (reason), reinstate,
    annotate (note, team_sees), hide, show, factsheet (a JSON object body)."""
    permission_classes = [IsAuthenticated]

    def post(self, request, s, action):
        sub = visible_submission(request, s)
        data = request.data
        sheet = None
        if action == "factsheet":
            try:
                sheet = sheet_from_request(data)
            except SubmissionError as e:
                return error_response(e)
        try:
            _apply(sub, request.user, action, data, sheet)
        except SubmissionError as e:
            return error_response(e)
        sub.refresh_from_db()
        return Response(submission_payload(sub, request.user))
