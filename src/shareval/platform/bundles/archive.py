"""A whole competition as one archive, and loading it into another server.

``export_competition`` writes a ``.tgz`` holding ``competition.json`` (the
configuration a bundle gives: tasks, phases, datasets with their board, split,
quotas, run groups and fact-sheet schema; then teams and members, every submission with
its fact sheet, history, scores and scoring jobs, and the judging campaigns
with their items, assignments and adjudications; since format 2 also the
access features' rows (``access/archive.py``), RCC phase-2 studies
(``annotation/archive.py``), code submissions (``coderuns/archive.py``) and
the users' e-mail addresses) and ``files/`` (hidden references, released
files, data files, catalogs, code inputs, submitted files and bundles, result
plots).

``import_competition`` (``shareval server import-competition FILE``) loads it
into a server that has no competition of that slug, so that its leaderboards
are identical (tested by comparing the board API's JSON). Submission ids are
kept, so links to runs keep working; users are matched by user name and
created (without a usable password: they reset it or an operator sets it with
``shareval server add-user``) when missing. The archive is read with the same
hostile-archive checks as uploads. Every path it names, and every file it
carries, must belong to the new competition (``archive_io``'s path rule: its
own ``<slug>/`` folders, its own runs' uploads and results; a scoring
program's folder is one of its private files), so an archive cannot read or
write another competition's files; uploads get fresh names on this server.
Options that name a file elsewhere (``compare``, ``judgments``) are refused.
Data files and catalogs must match their recorded digests, and an unknown
format version is refused. Nothing is stored unless everything is: the rows
are written in one transaction, and the files written before a failure are
removed again.
"""
from __future__ import annotations

import io
import json
import tarfile
import tempfile
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from shareval.formats.archive import Limits, iter_tgz
from shareval.formats.errors import InvalidInput, Problems

from shareval.platform.access.archive import check_access_paths, export_access, import_access
from shareval.platform.competitions.archive_io import (
    Files, OwnFolders, Users, dump as _dump, load as _load, own_folder, plain_name, profile
)
from shareval.platform.competitions.archive_io import user_name as _user
from shareval.platform.bundles.loader import _p, inside
from shareval.platform.competitions.models import (
    Competition, CompetitionTask, Dataset, Membership, Phase, PublicFile, Quota, RunGroup, Team,
    TeamEvent
)

FORMAT = "shareval-competition/2"
READS = ("shareval-competition/1", FORMAT)     # version 1 archives still import


# ---------------------------------------------------------------------------
# Export

def competition_document(comp: Competition) -> tuple[dict, list[tuple[str, Path]]]:
    """(competition.json, [(name in the archive, file on disk)])."""
    from shareval.platform.judging.models import Campaign
    from shareval.platform.annotation.archive import export_studies
    from shareval.platform.coderuns.archive import export_code
    files = Files(comp.slug)
    doc = {"format": FORMAT, "competition": _dump(comp),
           "organizers": [_user(u) for u in comp.organizers.all()], "tasks": [],
           "phases": [], "teams": [], "submissions": [], "campaigns": []}
    for t in comp.tasks.all():
        doc["tasks"].append(_task_row(t, files))
    for ph in comp.phases.all():
        p = _dump(ph)
        p["datasets"] = []
        for ds in ph.datasets.select_related("task"):
            d = _dump(ds)
            d["task"] = ds.task.slug
            d["quotas"] = [_dump(q) for q in ds.quotas.all()]
            d["public_files"] = [_dump(f) for f in ds.public_files.all()]
            files.private(ds.reference_path)
            for f in ds.public_files.all():
                files.public(f.path)
            p["datasets"].append(d)
        p["groups"] = [{**_dump(g), "datasets": g.dataset_slugs(),
                        "from": list(g.primary_from.order_by("id").values_list("slug", flat=True)),
                        "quotas": [_dump(q) for q in g.quotas.all()]}
                       for g in ph.run_groups.all()]
        doc["phases"].append(p)
    for t in comp.teams.select_related("lead"):
        doc["teams"].append({**_dump(t), "lead": _user(t.lead), "members": [
            {**_dump(m), "user": _user(m.user)} for m in t.memberships.select_related("user")],
            "proposed_lead": _user(t.proposed_lead),
            "events": [{**_dump(e), "actor": _user(e.actor)}
                       for e in t.events.select_related("actor")]})
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
            files.upload(s.stored_name)
        res = Path(settings.RESULTS_DIR) / str(s.pk)
        for x in s.scores.all():
            for plot in x.plots:
                if Path(plot).name == plot and (res / plot).is_file():
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
    doc["access"] = export_access(comp, files)
    doc["studies"] = export_studies(comp)
    doc["code"] = export_code(comp, files)
    doc["users"] = {u.get_username(): profile(u) for u in get_user_model().objects.filter(
        username__in=_names(doc)).order_by("username")}
    return doc, files


def _task_row(t: CompetitionTask, files: Files) -> dict:
    """A task's row; a scoring program's folder travels as one of the competition's
    private files, and the row names it relative to the private folder."""
    row = _dump(t)
    scorer = (t.options or {}).get("scorer")
    if t.task_name == "program" and isinstance(scorer, str) and scorer:
        try:
            rel = Path(scorer).resolve().relative_to(Path(settings.PRIVATE_DIR).resolve())
        except ValueError:
            return row
        files.private(rel.as_posix())
        row["options"] = {**row["options"], "scorer": rel.as_posix()}
    return row


def _names(doc) -> set[str]:
    """Every user name the document mentions (the keys that hold one)."""
    keys = {"user", "lead", "proposed_lead", "used_by", "invited_by", "judge", "decided_by", "author", "designer", "created_by", "coder",
            "actor", "requested_by"}
    found: set[str] = set()

    def walk(x, key=None):
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, k)
        elif isinstance(x, list):
            for v in x:
                walk(v, key if key in ("organizers", "judges") else None)
        elif isinstance(x, str) and key in keys | {"organizers", "judges"}:
            found.add(x)
    walk({k: v for k, v in doc.items() if k != "users"})
    return found


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
    name = Path(archive).name
    with tempfile.TemporaryDirectory(prefix="import-") as tmp:
        doc = None
        for member, data in iter_tgz(Path(archive), problems, LIMITS):
            if member == "competition.json":
                try:
                    doc = json.loads(data)
                except ValueError as e:
                    problems.add(name, None, "competition.json", f"not JSON ({e})")
            elif member.startswith("files/"):
                target = inside(Path(tmp), member)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        problems.raise_if_any()
        if not isinstance(doc, dict) or not str(doc.get("format", "")).startswith(
                "shareval-competition/"):
            raise InvalidInput([_p(name, None, "competition.json",
                                   f"not a shareval competition archive ({FORMAT})")])
        if doc["format"] not in READS:
            raise InvalidInput([_p(name, None, "competition.json.format",
                                   f"unknown archive version {doc['format']!r}: this server "
                                   f"reads {', '.join(READS)}")])
        try:
            slug = doc["competition"]["slug"]
            _check_paths(doc)
            _check_members(doc, Path(tmp), name)
            _check_files(doc, Path(tmp))
            renamed = _place(doc)
        except (KeyError, TypeError, AttributeError) as e:
            raise _malformed(name, e) from None
        if Competition.objects.filter(slug=slug).exists():
            raise InvalidInput([_p(name, None, "competition.slug",
                                   f"this server already has a competition {slug!r}")])
        written: list[Path] = []
        try:
            with transaction.atomic():
                try:
                    comp, created = _create(doc)
                except (KeyError, TypeError, AttributeError, ValueError, ValidationError,
                        IntegrityError) as e:
                    raise _malformed(name, e) from None
                _copy_files(Path(tmp), written, renamed)
        except BaseException:
            for f in written:            # store nothing half: the rows rolled back
                f.unlink(missing_ok=True)
            raise
    return comp, created


LIMITS = Limits(max_bytes=16 * 1024 ** 3, max_files=500_000,
                nested_ok=True)     # submitted bundles and archives are plain files here


def _malformed(name: str, e: Exception) -> InvalidInput:
    what = f"missing {e}" if isinstance(e, KeyError) else str(e)
    return InvalidInput([_p(name, None, "competition.json",
                            f"malformed archive ({type(e).__name__}: {what}); nothing was "
                            f"imported")])


def _copy_files(tmp: Path, written: list[Path], renamed: dict[str, str]) -> None:
    """The archive's files into the server's folders (uploads under the fresh names
    ``renamed`` gives them); an existing file with other bytes is never
    overwritten (it belongs to something else on this server)."""
    for kind, setting in DIRS.items():
        src = tmp / "files" / kind
        for f in sorted(p for p in src.rglob("*") if p.is_file()) if src.is_dir() else ():
            rel = f.relative_to(src)
            if kind == "uploads":
                rel = Path(renamed[rel.as_posix()])
            target = inside(Path(getattr(settings, setting)), rel)
            data = f.read_bytes()
            if target.exists():
                if target.is_file() and target.read_bytes() == data:
                    continue
                raise InvalidInput([_p(f"files/{kind}/{f.relative_to(src)}", None, "path",
                                       "this server already has a different file there; "
                                       "nothing was imported")])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            written.append(target)
            if kind == "uploads":
                target.chmod(0o600)


def _check_files(doc: dict, tmp: Path) -> None:
    """Data files and catalogs must arrive with the bytes their digests name."""
    import hashlib
    rows = [("access.data_files", d) for d in doc.get("access", {}).get("data_files", [])]
    rows += [("access.catalogs", c) for c in doc.get("access", {}).get("catalogs", [])]
    for where, row in rows:
        f = tmp / "files" / "private" / row["path"]
        if not f.is_file():
            raise InvalidInput([_p(f"files/private/{row['path']}", None, where,
                                   "missing from the archive")])
        if row.get("digest") and hashlib.sha256(f.read_bytes()).hexdigest() != row["digest"]:
            raise InvalidInput([_p(f"files/private/{row['path']}", None, where,
                                   "its bytes do not match the recorded digest (corrupt "
                                   "archive)")])


def _check_paths(doc: dict) -> None:
    """Every path the database will hold lies in the new competition's own folders
    (archive_io's path rule), every file name is a plain name."""
    from shareval.platform.coderuns.archive import check_code_paths

    from shareval.platform.bundles.loader import SLUG
    slug = str(doc["competition"].get("slug", ""))
    if not SLUG.fullmatch(slug):
        raise InvalidInput([_p("competition.json", None, "competition.slug", "not a slug")])
    own = OwnFolders(slug)
    for i, p in enumerate(doc["phases"]):
        for j, d in enumerate(p["datasets"]):
            where = f"phases[{i}].datasets[{j}]"
            own.private(f"{where}.reference_path", d.get("reference_path"))
            for k, f in enumerate(d["public_files"]):
                own.public(f"{where}.public_files[{k}].path", f["path"])
    for i, s in enumerate(doc["submissions"]):
        plain_name(f"submissions[{i}].stored_name", s.get("stored_name") or "")
        for k, x in enumerate(s["scores"]):
            for plot in x.get("plots") or []:
                plain_name(f"submissions[{i}].scores[{k}].plots", plot)
    for i, t in enumerate(doc["tasks"]):
        _check_options(f"tasks[{i}]", t, own)
    check_access_paths(doc.get("access", {}), own)
    check_code_paths(doc.get("code", {}), own)


# options that name a file on the exporting server: no archive carries it
FILE_OPTIONS = ("compare", "judgments")


def _check_options(where: str, t: dict, own: OwnFolders) -> None:
    from shareval import tasks as registry
    name, opts = t["task_name"], t.get("options") or {}
    # the task's own check, as the bundle loader and the command line make it
    bad = registry.get(name).option_problems(opts)
    if bad:
        raise InvalidInput([_p("competition.json", None, f"{where}.options.{k}", why)
                            for k, why in bad])
    for k, v in opts.items():
        if k in FILE_OPTIONS and v:
            raise InvalidInput([_p("competition.json", None, f"{where}.options.{k}",
                                   f"{v!r} names a file the archive does not carry; remove "
                                   f"the option and set it again after the import")])
    if name == "program" and opts.get("scorer"):
        own.private(f"{where}.options.scorer", _scorer_folder(t, own.slug))


def _scorer_folder(t: dict, slug: str) -> str:
    """A program task's scorer folder relative to the private folder. Archives
    written before scorers travelled name the exporting server's absolute path,
    which the bundle loader always made ``.../<slug>/scorers/<task>``."""
    scorer = t["options"]["scorer"]
    if not isinstance(scorer, str) or not Path(scorer).is_absolute():
        return scorer
    own = f"{slug}/scorers/{t['slug']}"
    return own if scorer.endswith("/" + own) else scorer


def _check_members(doc: dict, tmp: Path, archive: str) -> None:
    """Every file the archive carries belongs to the new competition: its own private
    and public folders, its runs' uploads and results."""
    from shareval.platform.coderuns.archive import stored_names
    slug = doc["competition"]["slug"]
    uploads = {s["stored_name"] for s in doc["submissions"] if s.get("stored_name")}
    uploads.update(stored_names(doc.get("code", {})))
    runs = {str(s["id"]) for s in doc["submissions"]}
    root = tmp / "files"
    for f in sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else ():
        kind, *rest = f.relative_to(root).parts
        rel = "/".join(rest)
        if kind in ("private", "public"):
            ok = own_folder(kind, slug, rel)
        elif kind == "uploads":
            ok = len(rest) == 1 and rel in uploads
        else:
            ok = kind == "results" and len(rest) == 2 and rest[0] in runs
        if not ok:
            raise InvalidInput([_p(f"{archive}!files/{kind}/{rel}", None, "member",
                                   f"not a file of competition {slug} (its files are under "
                                   f"files/private/{slug}/, files/public/{slug}/, and its "
                                   f"runs' uploads and results); nothing was imported")])


def _place(doc: dict) -> dict[str, str]:
    """Where the imported rows' files go on this server: uploads get fresh names
    (returned: archive name -> new name), so no row can name a file that was here
    before; a scoring program's folder goes under this server's private folder."""
    from shareval.platform.submissions.service import stored_name
    renamed: dict[str, str] = {}
    for s in [*doc["submissions"], *doc.get("code", {}).get("submissions", [])]:
        if s.get("stored_name"):
            s["stored_name"] = renamed.setdefault(s["stored_name"], stored_name(s["stored_name"]))
    for t in doc["tasks"]:
        if t["task_name"] == "program" and (t.get("options") or {}).get("scorer"):
            t["options"]["scorer"] = str(Path(settings.PRIVATE_DIR) /
                                         _scorer_folder(t, doc["competition"]["slug"]))
    return renamed


def _create_groups(phase: Phase, groups: list[dict], datasets: dict) -> None:
    """A phase's run groups; a dataset slug the archive does not hold is refused."""
    for i, g in enumerate(groups):
        def ds(slug, key):
            if (phase.slug, slug) not in datasets:
                raise InvalidInput([_p("competition.json", None,
                                       f"phases[{phase.slug}].groups[{i}].{key}",
                                       f"no dataset {slug!r} in this phase")])
            return datasets[(phase.slug, slug)]
        group = RunGroup.objects.create(phase=phase, **_load(RunGroup, g))
        group.datasets.set([ds(s, "datasets") for s in g.get("datasets", [])])
        group.primary_from.set([ds(s, "from") for s in g.get("from", [])])
        for q in g.get("quotas", []):
            Quota.objects.create(group=group, **_load(Quota, q))


def _create(doc: dict) -> tuple[Competition, list[str]]:
    from shareval.platform.annotation.archive import import_studies
    from shareval.platform.coderuns.archive import import_code
    from shareval.platform.judging.models import Adjudication, Assignment, Campaign, Item
    from shareval.platform.submissions.models import Job, Score, Submission, SubmissionEvent
    users = Users(doc.get("users"))
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
        _create_groups(phase, p.get("groups", []), datasets)     # archives before 0011: none
    teams = {}
    for t in doc["teams"]:
        team = Team.objects.create(competition=comp, lead=users(t["lead"]),
                                   proposed_lead=users(t.get("proposed_lead")), **_load(Team, t))
        for m in t["members"]:
            Membership.objects.create(team=team, user=users(m["user"]), **_load(Membership, m))
        TeamEvent.objects.bulk_create([TeamEvent(team=team, actor=users(e["actor"]),
                                                 **_load(TeamEvent, e))
                                       for e in t.get("events", [])])
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
    phases = {p.slug: p for p in comp.phases.all()}
    import_access(comp, doc.get("access", {}), users, phases, teams)
    import_studies(doc.get("studies", []), users, datasets)
    import_code(doc.get("code", {}), users, datasets, teams)
    from shareval.platform.competitions.reminders import claim_past
    claim_past(comp)            # what the old server mailed is not mailed again
    return comp, users.created
