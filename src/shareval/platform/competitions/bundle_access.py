"""The bundle keys of access and eligibility (read and loaded beside bundle.py).

Top level::

    visibility: private            # public (default) | unlisted | private
    invite: [alice, bob@lab.example, "@uni.example"]   # private: who may see it
    registration: approval         # open (default) | approval
    max_team_size: 4
    downloads: participants        # open (default) | participants
    pages:                         # Markdown; terms and licence are accepted by version
      - {slug: rules, title: Rules, file: rules.md}
      - {slug: terms, title: Terms of participation, file: terms.md}
      - {slug: licence, title: Data licence, file: licence.md, version: 2}
    data:                          # stored under PRIVATE_DIR, served through a checked view
      - {file: data/texts.zip, description: publication texts}
    catalogs:
      - {slug: datasets, kind: dataset, file: catalog.txt}

Per phase: ``teams: [Team A, Team B]`` (only these may submit; ``[]`` = the
organizers choose in the browser) and ``catalog: datasets`` (or ``datasets@2``).
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from django.conf import settings

from shareval.formats.errors import InvalidInput, Problem
from shareval.tasks.catalogs import CATALOG_KINDS

from . import catalogs
from .access_models import Catalog, DataFile, Invitation, Page, PhaseCatalog, PhaseLimit
from .models import Competition, Team

CHOICES = {"visibility": (Competition.PUBLIC, Competition.UNLISTED, Competition.PRIVATE),
           "registration": ("open", "approval"),
           "downloads": (Competition.OPEN, Competition.PARTICIPANTS)}


def read_access(doc: dict, r, task_slugs: dict) -> dict:
    """Check the access keys of a parsed bundle; problems go to ``r`` (bundle._Reader)."""
    out = {}
    for key, allowed in CHOICES.items():
        v = str(doc.get(key, allowed[0]))
        if v not in allowed:
            r.err(doc, f"bundle.{key}", " or ".join(allowed))
        out[key] = v
    size = doc.get("max_team_size")
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 1):
        r.err(doc, "bundle.max_team_size", "a positive integer")
        size = None
    out["max_team_size"] = size
    invite = doc.get("invite") or []
    if not isinstance(invite, list):
        r.err(doc, "bundle.invite", "a list of usernames, e-mail addresses and @domains")
        invite = []
    out["invite"] = [str(v).strip() for v in invite if str(v).strip()]
    out["pages"] = []
    for i, p in enumerate(doc.get("pages") or []):
        w = f"pages[{i}]"
        slug = r.slug(p, w)
        body = None
        if isinstance(p, dict) and "text" in p:
            body = str(p["text"])
        else:
            f = r.file(p, "file", w)
            body = f.read_text(encoding="utf-8") if f is not None else None
        version = p.get("version") if isinstance(p, dict) else None
        if version is not None and (not isinstance(version, int) or version < 1):
            r.err(p, f"{w}.version", "a positive integer")
            version = None
        out["pages"].append({"slug": slug, "title": str(p.get("title") or slug or ""),
                             "body": body or "", "version": version})
    out["data"] = []
    names = set()
    for i, d in enumerate(doc.get("data") or []):
        w = f"data[{i}]"
        f = r.file(d, "file", w)
        if f is not None and not f.is_file():
            r.err(d, f"{w}.file", "must be a file (pack a folder as .tgz or .zip)")
            f = None
        name = str(d.get("name") or (f.name if f else ""))
        if name in names:
            r.err(d, f"{w}.name", f"{name!r} is declared twice")
        names.add(name)
        out["data"].append({"name": name, "file": f, "description": str(d.get("description", ""))})
    out["catalogs"] = {}
    for i, c in enumerate(doc.get("catalogs") or []):
        w = f"catalogs[{i}]"
        slug, f = r.slug(c, w), r.file(c, "file", w)
        kind = str(c.get("kind", "dataset"))
        if kind not in (Catalog.DATASET, Catalog.VARIABLE):
            r.err(c, f"{w}.kind", "dataset or variable")
        if f is not None and f.is_file():
            from shareval.tasks.catalogs import read_catalog
            try:
                if not read_catalog(f):
                    r.err(c, f"{w}.file", "holds no ids")
            except (ValueError, UnicodeDecodeError) as e:
                r.err(c, f"{w}.file", f"not a list of ids: {e}")
        if slug:
            out["catalogs"][slug] = {"kind": kind, "file": f}
    out["phases"] = {}
    for i, ph in enumerate(doc.get("phases") or []):
        w = f"phases[{i}]"
        entry = {}
        if isinstance(ph, dict) and "teams" in ph:
            teams = ph.get("teams") or []
            if not isinstance(teams, list):
                r.err(ph, f"{w}.teams", "a list of team names")
                teams = []
            entry["teams"] = [str(t) for t in teams]
        if isinstance(ph, dict) and ph.get("catalog"):
            slug, _, version = str(ph["catalog"]).partition("@")
            if slug not in out["catalogs"]:
                r.err(ph, f"{w}.catalog", f"{slug!r} is not under catalogs:")
            if version and not version.isdigit():
                r.err(ph, f"{w}.catalog", "slug or slug@version")
            used = {task_slugs.get(d.get("task")) for d in ph.get("datasets") or []
                    if isinstance(d, dict)}
            kinds = {CATALOG_KINDS.get(t) for t in used if t}
            if kinds == {None}:
                r.err(ph, f"{w}.catalog", "none of this phase's tasks names catalog ids "
                                          f"(tasks that do: {', '.join(sorted(CATALOG_KINDS))})")
            entry["catalog"] = (slug, int(version) if version else None)
        if isinstance(ph, dict) and ph.get("slug"):
            out["phases"][str(ph["slug"])] = entry
    return out


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_access(comp: Competition, a: dict, copy) -> None:
    """Write the access settings of a read bundle (inside load_bundle's transaction);
    ``copy(src, base, rel)`` is bundle._copy."""
    comp.visibility, comp.downloads = a["visibility"], a["downloads"]
    comp.registration_approval = a["registration"] == "approval"
    comp.max_team_size = a["max_team_size"]
    comp.save(update_fields=["visibility", "downloads", "registration_approval",
                             "max_team_size"])
    if comp.visibility == Competition.UNLISTED:
        from .eligibility import ensure_secret
        ensure_secret(comp)
    comp.invitations.all().delete()
    for text in a["invite"]:
        kind, value = Invitation.parse(text)
        Invitation.objects.get_or_create(competition=comp, kind=kind, value=value)
    for p in a["pages"]:
        page = Page.objects.filter(competition=comp, slug=p["slug"]).first()
        if page is None:
            Page.objects.create(competition=comp, slug=p["slug"], title=p["title"],
                                body=p["body"], version=p["version"] or 1)
            continue
        changed = page.body != p["body"]
        page.title = p["title"]
        if p["version"]:
            page.version = max(p["version"], page.version)
        elif changed:
            page.version += 1
        page.body = p["body"]
        page.save()
    private = Path(settings.PRIVATE_DIR)
    for d in a["data"]:
        rel = f"{comp.slug}/data/{d['name']}"
        copy(d["file"], private, rel)
        DataFile.objects.update_or_create(
            competition=comp, name=d["name"],
            defaults={"path": rel, "description": d["description"][:500],
                      "size": d["file"].stat().st_size, "digest": _digest(d["file"])})
    newest = {slug: catalogs.store(comp, slug, c["kind"], c["file"], _digest(c["file"]),
                                   lambda src, rel: copy(src, private, rel))
              for slug, c in a["catalogs"].items()}
    problems = []
    for ph in comp.phases.all():
        entry = a["phases"].get(ph.slug, {})
        if "teams" in entry:
            limit, _ = PhaseLimit.objects.get_or_create(phase=ph)
            teams = list(Team.objects.filter(competition=comp, name__in=entry["teams"]))
            missing = set(entry["teams"]) - {t.name for t in teams}
            if missing:
                problems.append(Problem("bundle.yaml", None, f"phases.{ph.slug}.teams",
                                        f"no team {', '.join(sorted(missing))} in this "
                                        f"competition"))
            limit.teams.set(teams)
        else:
            PhaseLimit.objects.filter(phase=ph).delete()
        if "catalog" in entry:
            slug, version = entry["catalog"]
            cat = newest[slug] if version is None else \
                Catalog.objects.filter(competition=comp, slug=slug, version=version).first()
            if cat is None:
                problems.append(Problem("bundle.yaml", None, f"phases.{ph.slug}.catalog",
                                        f"catalog {slug} has no version {version}"))
                continue
            PhaseCatalog.objects.update_or_create(phase=ph, defaults={"catalog": cat})
        else:
            PhaseCatalog.objects.filter(phase=ph).delete()
    if problems:
        raise InvalidInput(problems)
