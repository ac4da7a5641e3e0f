"""Competitions from a YAML bundle: ``bundle.yaml`` plus the files it names.

A bundle is a folder (``shareval server load-bundle DIR``) or a ``.tgz`` of one
(uploaded on the organizer page; read with the same hostile-archive checks as
submissions). Loading the same slug again updates the competition in place:
changed references get a new digest, so ``rescore`` knows what to re-score.
The full format is documented in docs/platform.md.
"""
from __future__ import annotations

import datetime as dt
import shutil
import tempfile
import zoneinfo
from pathlib import Path

import yaml
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from shareval import tasks as registry
from shareval.formats.archive import Limits, iter_tgz, parse_archive_name
from shareval.formats.errors import InvalidInput, Problems

from shareval.platform.competitions import checks
from shareval.platform.bundles import dataset_section as bundle_runs
from shareval.platform.bundles import release_section as releases
from shareval.platform.bundles.access_section import load_access, read_access
from shareval.platform.bundles.boards_section import read_boards
from shareval.platform.bundles.groups_section import read_groups, save_groups
from shareval.platform.competitions.models.access import SettingChange
from shareval.platform.competitions.checks import SLUG  # noqa: F401  (archive.py reads it from here)
from shareval.platform.competitions.digests import tree_digest
from shareval.platform.competitions.models import (
    Competition, CompetitionTask, Dataset, Phase, PublicFile, Quota, Team
)

LINE = "__line__"


class _Loader(yaml.SafeLoader):
    """Records each mapping's line so problems can name it."""


def _construct_mapping(loader, node, deep=False):
    mapping = loader.construct_mapping(node, deep=deep)
    mapping[LINE] = node.start_mark.line + 1
    return mapping


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def inside(base: Path, rel: str | Path) -> Path:
    """``base / rel`` resolved, refused unless strictly inside ``base``: every path
    the server writes or deletes goes through here."""
    base = Path(base).resolve()
    target = (base / rel).resolve()
    if target == base or not target.is_relative_to(base):
        raise InvalidInput([_p(str(rel), None, "path", f"leaves its folder {base.name}/")])
    return target


def extract_tgz(archive: Path, dest: Path) -> Path:
    """Unpack a bundle archive safely; returns the folder holding bundle.yaml."""
    problems = Problems()
    for name, data in iter_tgz(archive, problems, Limits(max_bytes=8 * 1024 ** 3)):
        target = inside(dest, name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    problems.raise_if_any()
    found = sorted(dest.rglob("bundle.yaml"), key=lambda p: len(p.parts))
    if not found:
        raise InvalidInput([_p(archive.name, None, "bundle.yaml", "no bundle.yaml in the archive")])
    return found[0].parent


def _p(file, line, field, msg):
    from shareval.formats.errors import Problem
    return Problem(str(file), line, field, msg)


class _Reader:
    def __init__(self, root: Path):
        self.root, self.problems, self.name = root, Problems(), "bundle.yaml"

    def err(self, node, where, msg):
        self.problems.add(self.name, node.get(LINE) if isinstance(node, dict) else None, where, msg)

    def req(self, node, key, where, kind=str):
        v = node.get(key) if isinstance(node, dict) else None
        if v is None or v == "":
            self.err(node, f"{where}.{key}", "required")
            return None
        if kind is str and not isinstance(v, (str, int, float)):
            self.err(node, f"{where}.{key}", "expected a string")
            return None
        return str(v) if kind is str else v

    def slug(self, node, where):
        v = self.req(node, "slug", where)
        if v is not None and (why := checks.slug(v)):
            self.err(node, f"{where}.slug", why)
            return None
        return v

    def when(self, node, key, where, required=True):
        v = node.get(key)
        if v is None:
            if required:
                self.err(node, f"{where}.{key}", "required (ISO date or date-time)")
            return None
        if isinstance(v, dt.datetime):
            d = v
        elif isinstance(v, dt.date):
            d = dt.datetime.combine(v, dt.time(0))
        else:
            try:
                d = dt.datetime.fromisoformat(str(v))
            except ValueError:
                self.err(node, f"{where}.{key}", f"not an ISO date: {v!r}")
                return None
        return d if d.tzinfo else d.replace(tzinfo=self.tz)

    def file(self, node, key, where, required=True) -> Path | None:
        rel = node.get(key)
        if rel is None:
            if required:
                self.err(node, f"{where}.{key}", "required")
            return None
        p = (self.root / str(rel)).resolve()
        if not p.is_relative_to(self.root.resolve()):
            self.err(node, f"{where}.{key}", f"{rel} points outside the bundle")
            return None
        if not p.exists():
            self.err(node, f"{where}.{key}", f"{rel} not found in the bundle")
            return None
        return p


def read_bundle(root: Path) -> dict:
    """Parse and check a bundle folder; raises InvalidInput listing every problem."""
    root = Path(root)
    path = root / "bundle.yaml"
    if not path.is_file():
        raise InvalidInput([_p(path, None, "file", "bundle.yaml not found")])
    r = _Reader(root)
    try:
        doc = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        mark = getattr(e, "problem_mark", None)
        raise InvalidInput([_p("bundle.yaml", mark.line + 1 if mark else None, "yaml",
                               str(e).splitlines()[0])]) from None
    if not isinstance(doc, dict):
        raise InvalidInput([_p("bundle.yaml", 1, "bundle", "expected a mapping")])
    out = {"slug": r.slug(doc, "bundle"), "title": r.req(doc, "title", "bundle"),
           "description": str(doc.get("description", "")),
           "time_zone": str(doc.get("time_zone", "UTC")), "tasks": [], "phases": [],
           "baselines": [], "organizers": list(doc.get("organizers", []) or []),
           "team_approval": doc.get("team_approval", False) is True, "line": doc.get(LINE)}
    out["factsheet"] = bundle_runs.read_factsheet(r, doc)
    if not isinstance(doc.get("team_approval", False), bool):
        r.err(doc, "bundle.team_approval", "true or false")
    try:
        r.tz = zoneinfo.ZoneInfo(out["time_zone"])
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        r.err(doc, "bundle.time_zone", f"unknown time zone {out['time_zone']!r}")
        r.tz = dt.timezone.utc
    known = registry.names()
    task_slugs = {}
    for i, t in enumerate(doc.get("tasks") or []):
        w = f"tasks[{i}]"
        slug, name = r.slug(t, w), r.req(t, "task", w)
        if name and name not in known:
            r.err(t, f"{w}.task", f"unknown task {name!r}; known: {', '.join(known)}")
            name = None
        if slug:
            task_slugs[slug] = name
        opts = t.get("options") or {}
        if name and isinstance(opts, dict):       # the task's check, as the CLI's and score's
            for k, why in registry.get(name).option_problems(
                    {k: v for k, v in opts.items() if k != LINE}):
                r.err(t, f"{w}.options.{k}", why)
        out["tasks"].append({"slug": slug, "task": name, "title": str(t.get("title", "")),
                             "options": {k: v for k, v in opts.items() if k != LINE},
                             "primary_metric": str(t.get("primary_metric", "")),
                             "lower_is_better": bool(t.get("lower_is_better", False))})
        # organizers' scoring programs (coderuns): task: program with options.scorer
        from shareval.platform.coderuns.bundle import read_program
        read_program(r, t, w, out["tasks"][-1])
    if not out["tasks"]:
        r.err(doc, "bundle.tasks", "at least one task is required")
    phase_slugs = releases.phase_slugs(doc)
    for i, ph in enumerate(doc.get("phases") or []):
        w = f"phases[{i}]"
        lb = str(ph.get("leaderboard", "public"))
        if lb not in ("public", "hidden"):
            r.err(ph, f"{w}.leaderboard", "public or hidden")
        phase = {"slug": r.slug(ph, w), "title": str(ph.get("title") or ph.get("slug")),
                 "start": r.when(ph, "start", w), "end": r.when(ph, "end", w),
                 "blind": bool(ph.get("blind", False)), "leaderboard_public": lb == "public",
                 "release_top_at": r.when(ph, "release_top_at", w, required=False),
                 "release_detailed_at": r.when(ph, "release_detailed_at", w, required=False),
                 "datasets": []}
        if phase["start"] and phase["end"] and phase["end"] <= phase["start"]:
            r.err(ph, f"{w}.end", "must be after start")
        for j, d in enumerate(ph.get("datasets") or []):
            dw = f"{w}.datasets[{j}]"
            tslug = r.req(d, "task", dw)
            if tslug and tslug not in task_slugs:
                r.err(d, f"{dw}.task", f"{tslug!r} is not a task of this bundle")
            tname = task_slugs.get(tslug)
            ref = r.file(d, "reference", dw, required=bool(tname) and
                         registry.get(tname).reference_required)
            if ref is not None and tname:
                try:
                    registry.get(tname).reference(str(ref))
                except InvalidInput as e:
                    for p in e.problems[:10]:
                        r.err(d, f"{dw}.reference", f"does not load as a {tname} reference: "
                                                    f"{str(p).replace(str(root) + '/', '')}")
            public = []
            for k, f in enumerate(d.get("public") or []):      # release_section.py
                e = releases.read_entry(r, f, f"{dw}.public[{k}]", d.get(LINE), phase_slugs,
                                        own_phase=True)
                p = e and r.file(e, "file", f"{dw}.public[{k}]")
                if p is not None:
                    public.append({"path": p, "release_at": e["release"],
                                   "audience": e["audience"]})
            quotas = bundle_runs.read_quotas(r, d, dw)
            phase["datasets"].append({"slug": r.slug(d, dw), "task": tslug,
                                      "title": str(d.get("title", "")), "reference": ref,
                                      "public": public, "quotas": quotas,
                                      "feedback": bool(d.get("feedback", True)),
                                      "board": bundle_runs.read_board(r, d, dw),
                                      "split": bundle_runs.read_split(r, d, dw, tname, ref),
                                      "concurrent": bundle_runs.read_concurrent(r, d, dw)})
            # code submissions (coderuns): submission: code|both and the code: block
            from shareval.platform.coderuns.bundle import read_code
            phase["datasets"][-1]["code"] = read_code(r, d, dw)
        phase["groups"] = read_groups(r, ph, w, [d["slug"] for d in phase["datasets"]])
        phase["combined_boards"] = read_boards(                 # boards_section.py
            r, ph, w, phase["datasets"], {t["slug"]: t for t in out["tasks"] if t["slug"]})
        out["phases"].append(phase)
    if not out["phases"]:
        r.err(doc, "bundle.phases", "at least one phase is required")
    for i, b in enumerate(doc.get("baselines") or []):
        w = f"baselines[{i}]"
        out["baselines"].append({"team": r.req(b, "team", w), "phase": r.req(b, "phase", w),
                                 "dataset": r.req(b, "dataset", w), "file": r.file(b, "file", w),
                                 "description": str(b.get("description", "")),
                                 # default: primary where the dataset's run group allows it
                                 "primary": bool(b["primary"]) if "primary" in b else None,
                                 "factsheet": dict(b.get("factsheet") or {})})
    out["access"] = read_access(doc, r, task_slugs, phase_slugs)   # access_section.py
    r.problems.raise_if_any()
    return out


def _copy(src: Path, base: Path, rel: str) -> Path:
    """Copy ``src`` to ``base/rel``, replacing what is there; both checked to stay in ``base``."""
    dest = inside(base, rel)
    if dest.is_symlink() or dest.is_file():
        dest.unlink()
    elif dest.exists():
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    (shutil.copytree if src.is_dir() else shutil.copyfile)(src, dest)
    return dest


def _claim(b: dict, organizer) -> Competition:
    """Create the competition, or take the existing one if ``organizer`` may update it.

    ``organizer=None`` is the operator's command line, which may update any."""
    comp = Competition.objects.select_for_update(no_key=True).filter(slug=b["slug"]).first()
    if comp is not None and organizer is not None and not comp.is_organizer(organizer):
        raise InvalidInput([_p("bundle.yaml", b["line"], "bundle.slug",
                               f"competition {b['slug']!r} exists and {organizer.username} is "
                               f"not one of its organizers; choose another slug")])
    fields = {"title": b["title"], "description": b["description"],
              "time_zone": b["time_zone"], "team_approval": b["team_approval"],
              "factsheet": b["factsheet"]}
    if comp is None:
        return Competition.objects.create(slug=b["slug"], **fields)
    for k, v in fields.items():
        setattr(comp, k, v)
    comp.save()
    return comp


@transaction.atomic
def load_bundle(root: Path, organizer=None) -> tuple[Competition, list]:
    """Create or update a competition; returns it and the baseline submissions made.

    A bundle given by a user (``organizer``) may only update a competition that
    user already organizes."""
    b = read_bundle(root)
    comp = _claim(b, organizer)
    if organizer is not None:
        comp.organizers.add(organizer)
    from django.contrib.auth import get_user_model
    for name in b["organizers"]:
        u = get_user_model().objects.filter(username=name).first()
        if u:
            comp.organizers.add(u)
    tasks = {}
    for t in b["tasks"]:
        tasks[t["slug"]], _ = CompetitionTask.objects.update_or_create(
            competition=comp, slug=t["slug"],
            defaults={"task_name": t["task"], "title": t["title"], "options": t["options"],
                      "primary_metric": t["primary_metric"],
                      "lower_is_better": t["lower_is_better"]})
    datasets = {}
    for ph in b["phases"]:
        phase, _ = Phase.objects.update_or_create(
            competition=comp, slug=ph["slug"],
            defaults={k: ph[k] for k in ("title", "start", "end", "blind", "leaderboard_public",
                                         "release_top_at", "release_detailed_at",
                                         "combined_boards")})
        for d in ph["datasets"]:
            rel = ""
            digest = ""
            if d["reference"] is not None:
                rel = f"{comp.slug}/{phase.slug}/{d['slug']}/{d['reference'].name}"
                digest = tree_digest(_copy(d["reference"], Path(settings.PRIVATE_DIR), rel))
            digest = bundle_runs.digest_with_split(digest, d["split"])
            ds, _ = Dataset.objects.update_or_create(
                phase=phase, slug=d["slug"],
                defaults={"task": tasks[d["task"]], "title": d["title"], "reference_path": rel,
                          "reference_digest": digest, "feedback": d["feedback"],
                          "board": d["board"], "split": d["split"],
                          "concurrent": d["concurrent"]})
            ds.quotas.all().delete()
            for q in d["quotas"]:
                Quota.objects.create(dataset=ds, **q)
            for f in d["public"]:
                name = f["path"].name
                prel = f"{comp.slug}/{phase.slug}/{d['slug']}/{name}"
                _copy(f["path"], Path(settings.PUBLIC_DIR), prel)
                PublicFile.objects.update_or_create(
                    dataset=ds, name=name, defaults={"path": prel, "release_at": f["release_at"],
                                                     "audience": f["audience"]})
            # code submissions (coderuns): hidden input and sample under PRIVATE_DIR
            from shareval.platform.coderuns.bundle import save_code
            save_code(ds, d["code"], _copy, tree_digest)
            datasets[(phase.slug, d["slug"])] = ds
        save_groups(phase, ph["groups"], {s: d for (p, s), d in datasets.items()
                                          if p == phase.slug})
    # organizers' scoring programs (coderuns): the scorer folders under PRIVATE_DIR
    from shareval.platform.coderuns.bundle import save_programs
    save_programs(comp, b["tasks"], _copy, tree_digest)
    made = []
    load_access(comp, b["access"], _copy)                    # access_section.py
    SettingChange.objects.create(competition=comp, user=organizer, setting="bundle",
                                 change="bundle loaded: every setting as in bundle.yaml")
    if b["baselines"]:
        owner = organizer or comp.organizers.first()
        if owner is None:
            raise InvalidInput([_p("bundle.yaml", None, "baselines",
                                   "baselines need an organizer to submit them")])
        for bl in b["baselines"]:
            ds = datasets.get((bl["phase"], bl["dataset"]))
            if ds is None:
                raise InvalidInput([_p("bundle.yaml", None, "baselines",
                                       f"no dataset {bl['phase']}/{bl['dataset']}")])
            # the organizer submits a baseline without being its member: a member
            # would see the baseline as their team (boards, team page, API)
            team, _ = Team.objects.get_or_create(
                competition=comp, name=bl["team"], defaults={"lead": owner, "is_baseline": True})
            made.append(_submit_file(owner, team, ds, bl))
    return comp, made


def _submit_file(owner, team, ds, bl):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from shareval.platform.submissions.service import SubmissionError, submit
    from shareval.platform.competitions.models import may_be_primary
    up = SimpleUploadedFile(bl["file"].name, bl["file"].read_bytes())
    primary = bl["primary"]
    if primary is None:     # primary as before, unless the run group or a canonical name says not
        named = parse_archive_name(bl["file"].name)
        primary = None if isinstance(named, dict) and "type" in named else may_be_primary(ds)
    try:
        return submit(owner, team, ds, up, primary=primary, description=bl["description"],
                      factsheet={k: v for k, v in bl["factsheet"].items() if k != LINE},
                      now=timezone.now())
    except SubmissionError as e:
        raise InvalidInput([_p("bundle.yaml", None, f"baselines ({bl['file'].name})",
                               f"{e.message}: {'; '.join(e.problems[:5])}")]) from None


def load_bundle_archive(archive: Path, organizer=None):
    with tempfile.TemporaryDirectory(prefix="bundle-") as tmp:
        root = extract_tgz(Path(archive), Path(tmp))
        return load_bundle(root, organizer)
