"""A whole competition as one archive, and loading it into another server.

``export_competition`` writes a ``.tgz`` holding ``competition.json`` (the
configuration a bundle gives: tasks, phases, datasets with their board, split,
quotas and fact-sheet schema; then teams and members, every submission with
its fact sheet, history, scores and scoring jobs, and the judging campaigns
with their items, assignments and adjudications) and ``files/`` (hidden
references, released files, submitted files, result plots).

``import_competition`` (``shareval server import-competition FILE``) loads it
into a server that has no competition of that slug, so that its leaderboards
are identical (tested by comparing the board API's JSON). Submission ids are
kept, so links to runs keep working; users are matched by user name and
created (without a usable password: they reset it or an operator sets it with
``shareval server add-user``) when missing. The archive is read with the same
hostile-archive checks as uploads.
"""
from __future__ import annotations

import io
import json
import tarfile
import tempfile
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models, transaction

from shareval.formats.archive import Limits, iter_tgz
from shareval.formats.errors import InvalidInput, Problems

from .bundle import _p, inside
from .models import (Competition, CompetitionTask, Dataset, Membership, Phase, PublicFile, Quota,
                     Team)

FORMAT = "shareval-competition/1"


def _dump(obj, skip=()) -> dict:
    out = {}
    for f in obj._meta.concrete_fields:
        if f.primary_key or f.is_relation or f.name in skip:
            continue
        v = getattr(obj, f.name)
        out[f.name] = v.isoformat() if hasattr(v, "isoformat") else v
    return out


def _load(model, data: dict) -> dict:
    """Field values from a dump, converted by each field (dates, UUIDs)."""
    out = {}
    for f in model._meta.concrete_fields:
        if f.name in data and not f.is_relation and not f.primary_key:
            out[f.name] = f.to_python(data[f.name]) if not isinstance(f, models.JSONField) \
                else data[f.name]
    return out


def _user(u):
    return u.get_username() if u is not None else None


# ---------------------------------------------------------------------------
# Export

def competition_document(comp: Competition) -> tuple[dict, list[tuple[str, Path]]]:
    """(competition.json, [(name in the archive, file on disk)])."""
    from shareval.platform.judging.models import Campaign
    files: list[tuple[str, Path]] = []
    doc = {"format": FORMAT, "competition": _dump(comp),
           "organizers": [_user(u) for u in comp.organizers.all()], "tasks": [],
           "phases": [], "teams": [], "submissions": [], "campaigns": []}
    for t in comp.tasks.all():
        doc["tasks"].append(_dump(t))
    for ph in comp.phases.all():
        p = _dump(ph)
        p["datasets"] = []
        for ds in ph.datasets.select_related("task"):
            d = _dump(ds)
            d["task"] = ds.task.slug
            d["quotas"] = [_dump(q) for q in ds.quotas.all()]
            d["public_files"] = [_dump(f) for f in ds.public_files.all()]
            if ds.reference_path:
                files.append((f"files/private/{ds.reference_path}",
                              Path(settings.PRIVATE_DIR) / ds.reference_path))
            for f in ds.public_files.all():
                files.append((f"files/public/{f.path}", Path(settings.PUBLIC_DIR) / f.path))
            p["datasets"].append(d)
        doc["phases"].append(p)
    for t in comp.teams.select_related("lead"):
        doc["teams"].append({**_dump(t), "lead": _user(t.lead), "members": [
            {**_dump(m), "user": _user(m.user)} for m in t.memberships.select_related("user")]})
    from shareval.platform.submissions.models import Submission
    subs = (Submission.objects.filter(dataset__phase__competition=comp)
            .select_related("team", "user", "dataset__phase")
            .prefetch_related("events", "scores", "jobs").order_by("created"))
    for s in subs:
        doc["submissions"].append({
            "id": str(s.pk), **_dump(s), "team": s.team.name, "user": _user(s.user),
            "phase": s.dataset.phase.slug, "dataset": s.dataset.slug,
            "events": [_dump(e) for e in s.events.all()],
            "scores": [_dump(x) for x in s.scores.all()],
            "jobs": [_dump(j, skip=("token", "lease_until", "heartbeat", "worker"))
                     for j in s.jobs.all()]})
        if s.stored_name and s.path.is_file():
            files.append((f"files/uploads/{s.stored_name}", s.path))
        res = Path(settings.RESULTS_DIR) / str(s.pk)
        for x in s.scores.all():
            for plot in x.plots:
                if (res / plot).is_file():
                    files.append((f"files/results/{s.pk}/{plot}", res / plot))
    for camp in Campaign.objects.filter(dataset__phase__competition=comp).select_related(
            "dataset__phase"):
        c = {**_dump(camp), "phase": camp.dataset.phase.slug, "dataset": camp.dataset.slug,
             "judges": [_user(u) for u in camp.judges.all()], "items": []}
        for it in camp.items.prefetch_related("assignments__judge", "adjudications__decided_by"):
            c["items"].append({**_dump(it),
                               "assignments": [{**_dump(a), "judge": _user(a.judge)}
                                               for a in it.assignments.all()],
                               "adjudications": [{**_dump(a), "decided_by": _user(a.decided_by)}
                                                 for a in it.adjudications.all()]})
        doc["campaigns"].append(c)
    return doc, files


def export_competition(comp: Competition, dest) -> int:
    """Write the archive to ``dest`` (a path or binary file); returns the number of files."""
    doc, files = competition_document(comp)
    data = json.dumps(doc, indent=1, default=str).encode()
    n = 0
    with tarfile.open(fileobj=dest, mode="w:gz") if hasattr(dest, "write") else \
            tarfile.open(dest, "w:gz") as tar:
        info = tarfile.TarInfo("competition.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        for name, path in files:
            if path.is_dir():
                for f in sorted(p for p in path.rglob("*") if p.is_file()):
                    tar.add(f, f"{name}/{f.relative_to(path)}", recursive=False)
                    n += 1
            elif path.is_file():
                tar.add(path, name, recursive=False)
                n += 1
    return n


# ---------------------------------------------------------------------------
# Import

DIRS = {"private": "PRIVATE_DIR", "public": "PUBLIC_DIR", "uploads": "UPLOAD_DIR",
        "results": "RESULTS_DIR"}


def import_competition(archive: Path) -> tuple[Competition, list[str]]:
    """Load an exported competition; returns it and the user names created."""
    problems = Problems()
    with tempfile.TemporaryDirectory(prefix="import-") as tmp:
        doc = None
        for name, data in iter_tgz(Path(archive), problems, Limits(max_bytes=16 * 1024 ** 3,
                                                                   max_files=500_000)):
            if name == "competition.json":
                doc = json.loads(data)
            elif name.startswith("files/"):
                target = inside(Path(tmp), name)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        problems.raise_if_any()
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise InvalidInput([_p(Path(archive).name, None, "competition.json",
                                   f"not a shareval competition archive ({FORMAT})")])
        slug = doc["competition"]["slug"]
        if Competition.objects.filter(slug=slug).exists():
            raise InvalidInput([_p(Path(archive).name, None, "competition.slug",
                                   f"this server already has a competition {slug!r}")])
        with transaction.atomic():
            comp, created = _create(doc)
        for kind, setting in DIRS.items():
            src = Path(tmp) / "files" / kind
            for f in (p for p in src.rglob("*") if p.is_file()) if src.is_dir() else ():
                target = inside(Path(getattr(settings, setting)), f.relative_to(src))
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(f.read_bytes())
                if kind == "uploads":
                    target.chmod(0o600)
    return comp, created


class _Users:
    def __init__(self):
        self.model, self.cache, self.created = get_user_model(), {}, []

    def __call__(self, name):
        if name is None:
            return None
        if name not in self.cache:
            u = self.model.objects.filter(username=name).first()
            if u is None:
                u = self.model(username=name)
                u.set_unusable_password()
                u.save()
                self.created.append(name)
            self.cache[name] = u
        return self.cache[name]


def _check_paths(doc: dict) -> None:
    """Every path the database will hold stays inside its folder (as bundles' do)."""
    from .bundle import SLUG
    if not SLUG.fullmatch(str(doc["competition"].get("slug", ""))):
        raise InvalidInput([_p("competition.json", None, "competition.slug", "not a slug")])
    for p in doc["phases"]:
        for d in p["datasets"]:
            if d.get("reference_path"):
                inside(Path(settings.PRIVATE_DIR), d["reference_path"])
            for f in d["public_files"]:
                inside(Path(settings.PUBLIC_DIR), f["path"])
    for s in doc["submissions"]:
        if s.get("stored_name") and Path(s["stored_name"]).name != s["stored_name"]:
            raise InvalidInput([_p("competition.json", None, "submissions.stored_name",
                                   f"{s['stored_name']!r} is not a plain file name")])


def _create(doc: dict) -> tuple[Competition, list[str]]:
    from shareval.platform.judging.models import Adjudication, Assignment, Campaign, Item
    from shareval.platform.submissions.models import Job, Score, Submission, SubmissionEvent
    _check_paths(doc)
    users = _Users()
    comp = Competition.objects.create(**_load(Competition, doc["competition"]))
    comp.organizers.set([users(u) for u in doc["organizers"]])
    tasks = {t["slug"]: CompetitionTask.objects.create(competition=comp,
                                                       **_load(CompetitionTask, t))
             for t in doc["tasks"]}
    datasets = {}
    for p in doc["phases"]:
        phase = Phase.objects.create(competition=comp, **_load(Phase, p))
        for d in p["datasets"]:
            ds = Dataset.objects.create(phase=phase, task=tasks[d["task"]], **_load(Dataset, d))
            for q in d["quotas"]:
                Quota.objects.create(dataset=ds, **_load(Quota, q))
            for f in d["public_files"]:
                PublicFile.objects.create(dataset=ds, **_load(PublicFile, f))
            datasets[(phase.slug, ds.slug)] = ds
    teams = {}
    for t in doc["teams"]:
        team = Team.objects.create(competition=comp, lead=users(t["lead"]), **_load(Team, t))
        for m in t["members"]:
            Membership.objects.create(team=team, user=users(m["user"]), **_load(Membership, m))
        teams[team.name] = team
    for s in doc["submissions"]:
        sub = Submission.objects.create(pk=s["id"], team=teams[s["team"]], user=users(s["user"]),
                                        dataset=datasets[(s["phase"], s["dataset"])],
                                        **_load(Submission, s))
        SubmissionEvent.objects.bulk_create([SubmissionEvent(submission=sub,
                                                             **_load(SubmissionEvent, e))
                                             for e in s["events"]])
        Score.objects.bulk_create([Score(submission=sub, **_load(Score, x)) for x in s["scores"]])
        jobs = [Job(submission=sub, **_load(Job, j)) for j in s["jobs"]]
        for j in jobs:                 # an unfinished job is queued again on this server
            if j.status == Job.RUNNING:
                j.status = Job.QUEUED
        Job.objects.bulk_create(jobs)
    for c in doc["campaigns"]:
        camp = Campaign.objects.create(dataset=datasets[(c["phase"], c["dataset"])],
                                       **_load(Campaign, c))
        Campaign.objects.filter(pk=camp.pk).update(created=_load(Campaign, c)["created"])
        camp.judges.set([users(u) for u in c["judges"]])
        for it in c["items"]:
            item = Item.objects.create(campaign=camp, **_load(Item, it))
            for a in it["assignments"]:
                vals = _load(Assignment, a)
                obj = Assignment.objects.create(item=item, judge=users(a["judge"]), **vals)
                Assignment.objects.filter(pk=obj.pk).update(assigned=vals["assigned"])
            for a in it["adjudications"]:
                vals = _load(Adjudication, a)
                obj = Adjudication.objects.create(item=item, decided_by=users(a["decided_by"]),
                                                  **vals)
                Adjudication.objects.filter(pk=obj.pk).update(created=vals["created"])
    return comp, users.created
