"""What the competition's page and the REST API show of a competition: its
phases, datasets, quotas and the viewer's team."""
from __future__ import annotations

from shareval.platform.access import releases
from shareval.platform.competitions.models import Competition, quotas_of
from shareval.platform.competitions.models.access import PhaseLimit
from shareval.platform.submissions import deadline, factsheets
from shareval.platform.submissions.service import quota_states


def _files(ds, viewer: releases.Viewer) -> list[dict]:
    """The dataset's released files this viewer may see (releases.py), with their date."""
    out = []
    for f in ds.public_files.all():
        a = viewer.of(f)
        if a.listed:
            out.append({"name": f.name, "release_at": f.release_at.isoformat()
                        if f.release_at else None, "audience": f.audience,
                        "available_from": a.available_from, "note": a.note})
    return out


def competition_summary(comp: Competition, user) -> dict:
    team = comp.team_of(user)
    viewer = releases.Viewer(user, comp)
    phases = []
    organizer = comp.is_organizer(user)
    for ph in comp.phases.all():
        # run groups: a dataset's group, and whether its runs may be primary
        groups = {ds.pk: {"slug": g.slug, "title": g.name,
                          "primary": g.may_be_primary(ds), "primary_required": g.primary_required}
                  for g in ph.run_groups.prefetch_related("datasets") for ds in g.datasets.all()}
        dss = []
        for ds in ph.datasets.select_related("task", "phase"):
            files = _files(ds, viewer)
            d = {"slug": ds.slug, "title": ds.title, "task": ds.task.slug,
                 "task_title": ds.task.title, "task_name": ds.task.task_name, "primary_metric": ds.task.metric,
                 "quotas": [q.describe() for q in quotas_of(ds)],
                 "group": groups.get(ds.pk),
                 # names as before; ``files`` adds each one's date and audience
                 "public_files": [f["name"] for f in files], "files": files,
                 # never the split's units or seed, only that there is one
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
        if organizer:             # the deadline check: teams without a primary, per group
            phases[-1]["missing_primaries"] = {r["group"]: r["teams"]
                                               for r in deadline.organizer_rows([ph])}
    return {"slug": comp.slug, "title": comp.title, "description": comp.description,
            "time_zone": comp.time_zone, "team": team.name if team else None,
            "team_status": team.status if team else None, "team_approval": comp.team_approval,
            "organizer": organizer, "phases": phases,
            "factsheet": factsheets.fields(comp.factsheet)}
