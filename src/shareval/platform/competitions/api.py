"""Competition, leaderboard and organizer endpoints of the REST API."""
from __future__ import annotations

from django.http import Http404
from django.shortcuts import get_object_or_404
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from shareval.platform.coderuns import efficiency
from shareval.platform.submissions import factsheets

from . import access, board_cache, boards, eligibility, export, unranked
from .access_models import PhaseLimit
from .models import Competition, CompetitionTask, Dataset, Phase


def competition_summary(comp: Competition, user) -> dict:
    from shareval.platform.submissions.service import quota_states
    team = comp.team_of(user)
    phases = []
    for ph in comp.phases.all():
        dss = []
        for ds in ph.datasets.select_related("task"):
            d = {"slug": ds.slug, "title": ds.title, "task": ds.task.slug,
                 "task_title": ds.task.title, "task_name": ds.task.task_name, "primary_metric": ds.task.metric,
                 "quotas": [q.describe() for q in ds.quotas.all()],
                 "public_files": [f.name for f in ds.public_files.all()],
                 # runs24: never the split's units or seed, only that there is one
                 "concurrent": ds.concurrent, "split": bool(ds.split),
                 "runs_per_team": "several" if (ds.board or {}).get("runs") == "all"
                 else "one", "team_visibility": bool((ds.board or {}).get("team_visibility"))}
            if team is not None:
                d["quota_state"] = [s.describe() for s in quota_states(team, ds)]
            dss.append(d)
        phases.append({"slug": ph.slug, "title": ph.title, "start": ph.start.isoformat(),
                       "end": ph.end.isoformat(), "blind": ph.blind, "open": ph.is_open(),
                       "leaderboard_public": ph.leaderboard_public,
                       "results": ph.release_level() if ph.blind else "detailed",
                       "chosen_teams_only": PhaseLimit.objects.filter(phase=ph).exists(),
                       "datasets": dss})
    return {"slug": comp.slug, "title": comp.title, "description": comp.description,
            "time_zone": comp.time_zone, "team": team.name if team else None,
            "team_status": team.status if team else None, "team_approval": comp.team_approval,
            "organizer": comp.is_organizer(user), "phases": phases,
            "factsheet": factsheets.fields(comp.factsheet)}


class CompetitionList(APIView):
    def get(self, request):
        return Response([{"slug": c.slug, "title": c.title}
                         for c in eligibility.listed(request.user)])


class CompetitionDetail(APIView):
    def get(self, request, c):
        return Response(competition_summary(eligibility.visible(request, c), request.user))


def get_dataset(request, c, p, d) -> Dataset:
    """A dataset of a competition the requester may see (else 404, the same for a
    hidden competition and a missing one)."""
    comp = eligibility.visible(request, c)
    return get_object_or_404(Dataset.objects.select_related("phase__competition", "task"),
                             phase__competition=comp, phase__slug=p, slug=d)


def leaderboard_payload(ds: Dataset, user, part: str | None = None,
                        key: list | None = None) -> dict:
    """The board ``user`` may see. ``key``, if given, receives the cache key of
    its rows (None when they are not cached): the page caches its table body under it."""
    shown = access.leaderboard_shows_scores(user, ds)
    board = board_payload(ds, shown, access.board_part(user, ds, part), key)
    board["rows"] = runs_they_may_open(board["rows"], ds, user)
    return board


def runs_they_may_open(rows: list[dict], ds: Dataset, user) -> list[dict]:
    """The rows with their run's ``id`` kept where ``user`` may open that run (its
    team's members, the organizers) and taken out elsewhere: another team's run
    ids are never shown."""
    comp = ds.phase.competition
    if comp.is_organizer(user):
        return rows
    team = comp.team_of(user)
    mine = team.name if team is not None else None
    return [r if r["team"] == mine else {k: v for k, v in r.items() if k != "id"}
            for r in rows]


def board_payload(ds: Dataset, shown: bool, part: str, key: list | None = None) -> dict:
    """:func:`leaderboard_payload` once the viewer's scores and part are decided."""
    columns, rows, precision, cache_key = board_cache.board(ds, scores=shown, part=part)
    eff_columns = efficiency.columns(ds.board or {}, rows)     # code runs' resources
    human = human_columns(ds, rows) if shown else []
    if key is not None:
        key.append(None if human else cache_key)    # judged columns change without a token
    several = (ds.board or {}).get("runs") == "all"
    return {"human": human, "part": part, "precision": precision,
            "efficiency_columns": eff_columns,
            "runs_per_team": "several" if several else "one",
            "competition": ds.phase.competition.slug, "phase": ds.phase.slug,
            "dataset": ds.slug,
            "task": ds.task.slug, "primary_metric": ds.task.metric or None,
            "ranked": unranked.ranked(ds), "columns": columns,
            "scores": "shown" if shown else "hidden until the organizers release results",
            "rule": boards.rule(ds, shown, several),
            "rows": rows}


def human_columns(ds: Dataset, rows: list[dict]) -> list[dict]:
    """Judging campaigns' estimates beside the automatic scores, with intervals;
    shown under the same rules as the scores themselves."""
    from shareval.platform.judging.models import Campaign
    from shareval.platform.judging.results import team_results
    out = []
    for camp in Campaign.objects.filter(dataset=ds, on_leaderboard=True).order_by("pk"):
        res = team_results(camp)
        if not res:
            continue
        measure = next(iter(res.values()))["measure"]
        out.append({"campaign": camp.title, "measure": measure})
        for r in rows:
            e = res.get(r["team"])
            r.setdefault("human", []).append(
                None if e is None else {k: e[k] for k in ("estimate", "low", "high", "n")})
    from shareval.platform.annotation.models import Study
    from shareval.platform.annotation.results import leaderboard_column
    for study in Study.objects.filter(dataset=ds, on_leaderboard=True).order_by("pk"):
        res = leaderboard_column(study)     # RCC phase 2: related-to F1 per team
        if not res:
            continue
        out.append({"campaign": study.title + ("" if study.closed else ", provisional"),
                    "measure": "related-to F1"})
        for r in rows:
            r.setdefault("human", []).append(res.get(r["team"]))
    return out


class Leaderboard(APIView):
    def get(self, request, c, p, d):
        ds = get_dataset(request, c, p, d)
        if not access.can_view_leaderboard(request.user, ds):
            raise Http404("no such leaderboard")   # hidden boards look like missing ones
        return Response(leaderboard_payload(ds, request.user, request.query_params.get("part")))


class _OrganizerView(APIView):
    def competition(self, request, c) -> Competition:
        return eligibility.organized(request, c)


class Release(_OrganizerView):
    def post(self, request, c, p):
        comp = self.competition(request, c)
        phase = get_object_or_404(Phase, competition=comp, slug=p)
        level = request.data.get("level", Phase.TOP)
        if level not in (Phase.HIDDEN, Phase.TOP, Phase.DETAILED):
            return Response({"error": "level must be hidden, top or detailed"},
                            status=status.HTTP_400_BAD_REQUEST)
        phase.released = level
        phase.save(update_fields=["released"])
        from shareval.platform.notifications import mail
        mail.results_released(phase, phase.released_at())
        return Response({"phase": phase.slug, "released": level})


class Rescore(_OrganizerView):
    def post(self, request, c, t):
        comp = self.competition(request, c)
        task = get_object_or_404(CompetitionTask, competition=comp, slug=t)
        from shareval.platform.submissions.service import rescore
        return Response({"task": task.slug, "queued": rescore(task)})


class ExportCsv(_OrganizerView):
    def get(self, request, c):
        comp = self.competition(request, c)
        return export.csv_response(comp)
