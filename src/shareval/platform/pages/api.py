"""Competition, leaderboard and organizer endpoints of the REST API."""
from __future__ import annotations

from django.http import Http404
from django.shortcuts import get_object_or_404
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from shareval.platform.access import eligibility
from shareval.platform.access import visibility as access
from shareval.platform.access.api import OrganizerView
from shareval.platform.competitions.models import CompetitionTask, Phase
from shareval.platform.leaderboards import export
from shareval.platform.leaderboards.payloads import get_dataset, leaderboard_payload
from shareval.platform.notifications import mail
from shareval.platform.pages.payloads import competition_summary
from shareval.platform.submissions.service import rescore


class CompetitionList(APIView):
    def get(self, request):
        return Response([{"slug": c.slug, "title": c.title}
                         for c in eligibility.listed(request.user)])


class CompetitionDetail(APIView):
    def get(self, request, c):
        return Response(competition_summary(eligibility.visible(request, c), request.user))


class Leaderboard(APIView):
    def get(self, request, c, p, d):
        ds = get_dataset(request, c, p, d)
        if not access.can_view_leaderboard(request.user, ds):
            raise Http404("no such leaderboard")   # hidden boards look like missing ones
        return Response(leaderboard_payload(ds, request.user, request.query_params.get("part")))


class Release(OrganizerView):
    def post(self, request, c, p):
        comp = self.competition(request, c)
        phase = get_object_or_404(Phase, competition=comp, slug=p)
        level = request.data.get("level", Phase.TOP)
        if level not in (Phase.HIDDEN, Phase.TOP, Phase.DETAILED):
            return Response({"error": "level must be hidden, top or detailed"},
                            status=status.HTTP_400_BAD_REQUEST)
        phase.released = level
        phase.save(update_fields=["released"])
        mail.results_released(phase, phase.released_at())
        return Response({"phase": phase.slug, "released": level})


class Rescore(OrganizerView):
    def post(self, request, c, t):
        comp = self.competition(request, c)
        task = get_object_or_404(CompetitionTask, competition=comp, slug=t)
        return Response({"task": task.slug, "queued": rescore(task)})


class ExportCsv(OrganizerView):
    def get(self, request, c):
        comp = self.competition(request, c)
        return export.csv_response(comp)
