"""REST endpoints of access and teams, under the same rules as the pages:

- ``GET  /api/competitions/<c>/registrations/`` and ``POST .../registrations/<id>/``
  (``{"action": "approve"|"reject"}``): organizers only; others get 404, as
  for every organizer endpoint. The decision is mailed as from the page.
- ``GET  /api/competitions/<c>/announcements/``: whoever may see the competition
  (its page shows them to the same people).
- ``GET  /api/competitions/<c>/data/``: the data files (``data:``) and released
  files (``public:``) of a competition one may see, with whether the caller may
  download them right now and, if not, why (registration, approval, licence),
  exactly as the download views decide; each file also gives its ``release_at``,
  ``audience`` and its own ``allowed``/``refusal`` (the date, or the competition-wide
  reason); files outside the caller's audience are left out (``access/releases.py``).
  The files themselves come from the download URLs, which apply the rules again
  and log each download.
- ``GET  /api/competitions/<c>/team/``: the caller's team, members, lead, a
  proposed lead and the team's history.
- ``POST /api/competitions/<c>/team/lead/`` (``{"user": name}``): the lead hands
  the lead role over (a proposal under ``team_approval``).
- ``POST /api/competitions/<c>/teams/<id>/lead/`` (``{"action": "approve"|"refuse"}``):
  an organizer decides a proposed lead.
"""
from __future__ import annotations

from django.http import Http404
from django.shortcuts import get_object_or_404
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from shareval.platform.accounts import addresses
from shareval.platform.notifications import mail

from shareval.platform.access import eligibility
from shareval.platform.access import releases
from shareval.platform.access import teams
from shareval.platform.competitions.models.access import Registration
from shareval.platform.competitions.models import Competition, PublicFile, Team


def _when(t):
    return t.isoformat() if t else None


def _error(msg: str, code=status.HTTP_400_BAD_REQUEST) -> Response:
    return Response({"error": msg}, status=code)



class OrganizerView(APIView):
    def competition(self, request, c) -> Competition:
        return eligibility.organized(request, c)


class Registrations(OrganizerView):
    def get(self, request, c):
        comp = self.competition(request, c)
        return Response([{"id": r.pk, "user": r.user.username, "email": r.user.email,
                          "email_verified": bool(addresses.verified_email(r.user)),
                          "status": r.status, "created": _when(r.created),
                          "decided": _when(r.decided),
                          "decided_by": r.decided_by.username if r.decided_by else None}
                         for r in comp.registrations.select_related("user__verified_address",
                                                                     "decided_by")])


class RegistrationDecision(OrganizerView):
    def post(self, request, c, reg):
        comp = self.competition(request, c)
        r = get_object_or_404(Registration, competition=comp, pk=reg)
        action = request.data.get("action")
        if action not in ("approve", "reject"):
            return _error("action must be approve or reject")
        eligibility.decide(r, action == "approve", request.user)
        mail.registration_decided(r)
        return Response({"id": r.pk, "user": r.user.username, "status": r.status,
                         "decided": _when(r.decided)})


class Announcements(APIView):
    def get(self, request, c):
        comp = eligibility.visible(request, c)
        return Response([{"title": a.title, "body": a.body, "published": _when(a.published)}
                         for a in comp.announcements.all()])


def _file_state(f, access) -> dict:
    return {"release_at": _when(f.release_at), "audience": f.audience,
            "allowed": access.allowed, "refusal": access.refusal}


def _content(f, access) -> dict:
    """Size and digest say something of a file's content (a guess confirmed, how many
    lines a key holds): none before its release date."""
    if access.kind == releases.DATE:
        return {"size": None, "sha256": None}
    return {"size": f.size, "sha256": f.digest}


class DataFiles(APIView):
    def get(self, request, c):
        comp = eligibility.visible(request, c)
        viewer = releases.Viewer(request.user, comp)
        licence = eligibility.page(comp, "licence")
        base = f"/c/{comp.slug}"
        released = PublicFile.objects.filter(dataset__phase__competition=comp) \
            .select_related("dataset__phase").order_by("pk")
        return Response({
            "downloads": comp.downloads, "allowed": viewer.general is None,
            "refusal": viewer.general,
            "licence": None if licence is None else {
                "title": licence.title, "version": licence.version,
                "accepted": eligibility.accepted(request.user, comp, "licence")},
            "data": [{"name": f.name, "description": f.description, **_content(f, a),
                      "url": f"{base}/data/{f.name}", **_file_state(f, a)}
                     for f in comp.data_files.all() if (a := viewer.of(f)).listed],
            "released": [{"phase": f.dataset.phase.slug, "dataset": f.dataset.slug,
                          "name": f.name,
                          "url": f"{base}/files/{f.dataset.phase.slug}/{f.dataset.slug}/{f.name}",
                          **_file_state(f, a)}
                         for f in released if (a := viewer.of(f)).listed]})


def team_payload(team: Team) -> dict:
    return {"name": team.name, "status": team.status, "lead": team.lead.username,
            "proposed_lead": team.proposed_lead.username if team.proposed_lead else None,
            "members": [{"user": m.user.username, "status": m.status}
                        for m in team.memberships.select_related("user").order_by("created")],
            "history": [{"at": _when(e.created), "actor": e.actor.username if e.actor else None,
                         "action": e.action, "detail": e.detail}
                        for e in team.events.select_related("actor")]}


def _my_team(request, c):
    """The caller's team in a competition they may see, else 404."""
    comp = eligibility.visible(request, c)
    team = comp.team_of(request.user) if request.user.is_authenticated else None
    if team is None:
        raise Http404("you are not in a team of this competition")
    return team


class MyTeam(APIView):
    def get(self, request, c):
        team = _my_team(request, c)
        return Response(team_payload(team))


class HandLead(APIView):
    def post(self, request, c):
        team = _my_team(request, c)
        if team.lead_id != request.user.pk:
            return _error("only the team's lead can hand over the lead role",
                          status.HTTP_403_FORBIDDEN)
        try:
            team = teams.hand_lead(team, request.user, str(request.data.get("user", "")))
        except teams.TeamError as e:
            return _error(str(e))
        if team.proposed_lead_id:
            mail.lead_proposed(team)
        else:
            mail.lead_changed(team)
        return Response(team_payload(team))


class DecideLead(OrganizerView):
    def post(self, request, c, team):
        comp = self.competition(request, c)
        t = get_object_or_404(Team, competition=comp, pk=team, is_baseline=False)
        action = request.data.get("action")
        if action not in ("approve", "refuse"):
            return _error("action must be approve or refuse")
        try:
            t = teams.decide_lead(t, request.user, action == "approve")
        except teams.TeamError as e:
            return _error(str(e))
        mail.lead_changed(t, refused=action == "refuse")
        return Response(team_payload(t))
