"""Submission endpoints: upload (what ``shareval submit`` calls), list, detail, actions."""
from __future__ import annotations

import json

from django.http import Http404
from rest_framework import status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from shareval.platform.access import visibility as access
from shareval.platform.access import eligibility
from shareval.platform.competitions.models import Competition, Dataset, Team
from shareval.platform.submissions import service
from shareval.platform.submissions.models import Submission
from shareval.platform.submissions.present import list_payload, submission_payload


def resolve_dataset(comp: Competition, phase: str, task: str, dataset: str | None) -> Dataset:
    """The dataset for (phase, task[, dataset]). ``task`` may be the task's slug, its registry
    name, or the dataset's slug (the name the competition pages show, e.g. ``svident-dev``)."""
    qs = Dataset.objects.filter(phase__competition=comp, phase__slug=phase).select_related("task")
    if dataset:
        qs = qs.filter(slug=dataset)
    cands = [d for d in qs if task in (d.slug, d.task.slug, d.task.task_name) or not task]
    if len(cands) == 1:
        return cands[0]
    if not cands:
        raise service.SubmissionError(404, f"no dataset for phase {phase!r} and task {task!r}"
                                           f" in {comp.slug}")
    raise service.SubmissionError(400, "several datasets match; name one with dataset=: " +
                                  ", ".join(d.slug for d in cands))


def sheet_from_request(data) -> dict:
    """The fact sheet of an API request: ``factsheet`` as a JSON object (or a JSON
    string in a multipart upload), plus ``method`` as a shortcut."""
    raw = data.get("factsheet") if hasattr(data, "get") else None
    if raw in (None, ""):
        sheet = {}
    elif isinstance(raw, dict):
        sheet = dict(raw)
    else:
        try:
            sheet = json.loads(str(raw))
        except ValueError:
            sheet = None
        if not isinstance(sheet, dict):
            raise service.SubmissionError(400, "factsheet: send a JSON object")
    if hasattr(data, "get") and str(data.get("method") or "").strip():
        sheet.setdefault("method", str(data.get("method")))
    return sheet


def error_response(e: service.SubmissionError) -> Response:
    body = {"error": e.message, "problems": e.problems}
    if e.next_slot:
        body["next_slot"] = e.next_slot.isoformat()
    if e.submission is not None:
        body["id"] = str(e.submission.pk)
    return Response(body, status=e.status)


def visible_submission(request, pk) -> Submission:
    """The run, if ``request.user`` may see it, with its ``viewer`` roles
    (:func:`access.viewer`: organizer, team member, score level)."""
    sub = Submission.objects.select_related(
        "team", "dataset__phase__competition", "dataset__task").filter(pk=pk).first()
    if sub is None:
        raise Http404("no such submission")
    sub.viewer = access.viewer(request.user, sub)
    if not (sub.viewer[0] or sub.viewer[1]):
        raise Http404("no such submission")      # no hint that it exists
    return sub


LIST, MAX_LIST = 50, 500



def upload_request(request, what: str):
    """(competition, file, None) of a multipart upload, or (.., .., the error response).

    Shared by uploaded runs and code bundles: a hidden competition looks missing.
    """
    data = request.data
    comp = eligibility.find_visible(request, str(data.get("competition", "")))
    if comp is None:
        return None, None, Response({"error": f"no competition {data.get('competition')!r}"},
                                    status=status.HTTP_404_NOT_FOUND)
    upload = request.FILES.get("file")
    if upload is None:
        return comp, None, Response(
            {"error": f"no file: send {what} as the multipart field 'file'"},
            status=status.HTTP_400_BAD_REQUEST)
    return comp, upload, None


def wants_primary(data) -> bool:
    return str(data.get("primary", "")).lower() in ("1", "true", "yes", "on", "primary")


def chosen_kind(data) -> bool | None:
    """The uploader's choice of kind: ``primary=true`` or ``kind=primary`` -> True,
    ``kind=contrastive`` -> False, neither -> None (a canonical archive name decides;
    ``primary=false`` is what older clients send when no choice was made)."""
    kind = str(data.get("kind", "") or "").strip().lower()
    if kind not in ("", "primary", "contrastive"):
        raise service.SubmissionError(400, f"kind: primary or contrastive, not {kind!r}")
    if wants_primary(data) and kind == "contrastive":
        raise service.SubmissionError(400, "primary=true and kind=contrastive contradict "
                                           "each other: send one")
    if wants_primary(data) or kind == "primary":
        return True
    return False if kind == "contrastive" else None

class SubmissionList(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser, FormParser]

    def get(self, request):
        """Your team's submissions (all of a competition's for its organizers), newest
        first; ``?competition=slug`` narrows to one competition; ``?limit=`` (default
        50, at most 500) and ``?offset=`` page through them."""
        from django.db.models import Q

        from shareval.platform.competitions.models import Membership
        # id lists rather than joins in the filter: the newest 500 then come from the
        # (team, -created) index instead of a sort of everything an OR of joins matches
        teams = list(Membership.objects.filter(user=request.user, status=Membership.APPROVED)
                     .values_list("team_id", flat=True))
        organized = list(Dataset.objects.filter(phase__competition__organizers=request.user)
                         .values_list("pk", flat=True))
        visible = Q(team_id__in=teams) | Q(dataset_id__in=organized) if organized else \
            Q(team_id__in=teams)
        if request.user.is_superuser:
            visible = Q()
        subs = Submission.objects.filter(visible)
        if request.query_params.get("competition"):
            subs = subs.filter(dataset__phase__competition__slug=request.query_params["competition"])
        try:
            limit = min(MAX_LIST, max(1, int(request.query_params.get("limit", LIST))))
            offset = max(0, int(request.query_params.get("offset", 0)))
        except ValueError:
            return Response({"error": "limit and offset are whole numbers"},
                            status=status.HTTP_400_BAD_REQUEST)
        return Response(list_payload(subs[offset:offset + limit], request.user))

    def post(self, request):
        data = request.data
        comp, upload, refused = upload_request(request, "it")
        if refused is not None:
            return refused
        try:
            ds = resolve_dataset(comp, data.get("phase", ""), data.get("task", ""),
                                 data.get("dataset"))
            team = _team(request, comp, data.get("team"))
            sub = service.submit(request.user, team, ds, upload,
                                 primary=chosen_kind(data),
                                 description=str(data.get("description", "")),
                                 factsheet=sheet_from_request(data))
        except service.SubmissionError as e:
            return error_response(e)
        return Response(submission_payload(sub, request.user), status=status.HTTP_201_CREATED)


def _team(request, comp, name) -> Team:
    if name and comp.is_organizer(request.user):
        team = Team.objects.filter(competition=comp, name=name).first()
        if team is None:
            raise service.SubmissionError(404, f"no team {name!r}")
        return team
    team = comp.team_of(request.user)
    if team is None:
        raise service.SubmissionError(403, "join or create a team in this competition first")
    return team


class SubmissionDetail(APIView):
    permission_classes = [IsAuthenticated]

    def get(self, request, s):
        sub = visible_submission(request, s)
        organizer, _, level = sub.viewer
        return Response(submission_payload(sub, request.user, organizer, level))


class SubmissionAction(APIView):
    permission_classes = [IsAuthenticated]
    action = ""

    def post(self, request, s):
        sub = visible_submission(request, s)
        try:
            change = service.make_primary if self.action == "primary" else service.cancel
            change(sub, request.user, reason=str(request.data.get("reason", "")))
        except service.SubmissionError as e:
            return error_response(e)
        sub.refresh_from_db()
        return Response(submission_payload(sub, request.user))
