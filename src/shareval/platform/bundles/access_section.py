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
      - {file: data/holdout.zip, release: 2019-01-10, audience: phase:finalists}
    catalogs:
      - {slug: datasets, kind: dataset, file: catalog.txt}

Per phase: ``teams: [Team A, Team B]`` (only these may submit; ``[]`` = the
organizers choose in the browser) and ``catalog: datasets`` (or ``datasets@2``).
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from django.conf import settings

from shareval.formats.digits import is_digits
from shareval.formats.errors import InvalidInput, Problem

from shareval.platform.bundles.release_section import DATA_KEYS, LINE, read_entry
from shareval.platform.competitions import catalogs, checks
from shareval.platform.competitions.models.access import (
    Catalog, DataFile, Invitation, Page, PhaseCatalog, PhaseLimit
)
from shareval.platform.competitions.checks import CHOICES
from shareval.platform.competitions.models import Competition, Team


def read_access(doc: dict, r, task_slugs: dict, phases: set[str]) -> dict:
    """Check the access keys of a parsed bundle; problems go to ``r`` (bundle._Reader);
    ``phases``: the bundle's phase slugs (a data file's audience names one)."""
    out = {}
    for key, allowed in CHOICES.items():
        v = str(doc.get(key, allowed[0]))
        if why := checks.choice(key, v):
            r.err(doc, f"bundle.{key}", why)
        out[key] = v
    size = doc.get("max_team_size")
    if why := checks.positive_or_none(size):
        r.err(doc, "bundle.max_team_size", why)
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
        if why := checks.positive_or_none(version):
            r.err(p, f"{w}.version", why)
            version = None
        out["pages"].append({"slug": slug, "title": str(p.get("title") or slug or ""),
                             "body": body or "", "version": version})
    out["data"] = []
    names = set()
    for i, entry in enumerate(doc.get("data") or []):
        w = f"data[{i}]"
        d = read_entry(r, entry, w, doc.get(LINE), phases, own_phase=False, keys=DATA_KEYS)
        if d is None:
            continue
        f = r.file(d, "file", w)
        if f is not None and (why := checks.data_file(f)):
            r.err(d, f"{w}.file", why)
            f = None
        name = str(d.get("name") or (f.name if f else ""))
        if name and (why := checks.data_name(name)):
            r.err(d, f"{w}.name", why)
        if name in names:
            r.err(d, f"{w}.name", f"{name!r} is declared twice")
        names.add(name)
        out["data"].append({"name": name, "file": f, "description": str(d.get("description", "")),
                            "release_at": d["release"], "audience": d["audience"]})
    out["catalogs"] = {}
    for i, c in enumerate(doc.get("catalogs") or []):
        w = f"catalogs[{i}]"
        slug, f = r.slug(c, w), r.file(c, "file", w)
        kind = str(c.get("kind", "dataset"))
        if why := checks.catalog_kind(kind):
            r.err(c, f"{w}.kind", why)
        if f is not None and f.is_file() and (why := checks.catalog_file(f)):
            r.err(c, f"{w}.file", why)
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
            if version and not is_digits(version):
                r.err(ph, f"{w}.catalog", "slug or slug@version")
            used = {task_slugs.get(d.get("task")) for d in ph.get("datasets") or []
                    if isinstance(d, dict)}
            if why := checks.phase_catalog(used):
                r.err(ph, f"{w}.catalog", why)
            entry["catalog"] = (slug, int(version) if version else None)
        if isinstance(ph, dict) and ph.get("slug"):
            out["phases"][str(ph["slug"])] = entry
    return out


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def save_page(comp: Competition, slug: str, title: str, body: str,
              version: int | None = None) -> tuple[Page, bool]:
    """Create or update a page; (page, whether its version grew). The version grows
    by one when the text changes, or is raised to ``version`` when given, so
    acceptances of the earlier version stay with the number they accepted."""
    page = Page.objects.filter(competition=comp, slug=slug).first()
    if page is None:
        return Page.objects.create(competition=comp, slug=slug, title=title, body=body,
                                   version=version or 1), False
    before = page.version
    changed = page.body != body
    page.title = title
    if version:
        page.version = max(version, page.version)
    elif changed:
        page.version += 1
    page.body = body
    if changed or page.version != before:
        from django.utils import timezone
        page.updated = timezone.now()
    page.save()
    return page, page.version != before


def save_data_file(comp: Competition, name: str, src: Path, description: str,
                   copy, release: dict | None = None) -> DataFile:
    """Store ``src`` as the data file ``name`` (replacing one of that name);
    ``release``: its ``release_at`` and ``audience`` when the bundle sets them
    (a file added in the browser keeps those of the one it replaces)."""
    rel = f"{comp.slug}/data/{name}"
    copy(src, Path(settings.PRIVATE_DIR), rel)
    return DataFile.objects.update_or_create(
        competition=comp, name=name,
        defaults={"path": rel, "description": description[:500],
                  "size": src.stat().st_size, "digest": _digest(src), **(release or {})})[0]


def load_access(comp: Competition, a: dict, copy) -> None:
    """Write the access settings of a read bundle (inside load_bundle's transaction);
    ``copy(src, base, rel)`` is bundle._copy."""
    comp.visibility, comp.downloads = a["visibility"], a["downloads"]
    comp.registration_approval = a["registration"] == "approval"
    comp.max_team_size = a["max_team_size"]
    comp.save(update_fields=["visibility", "downloads", "registration_approval",
                             "max_team_size"])
    if comp.visibility == Competition.UNLISTED:
        from shareval.platform.access.eligibility import ensure_secret
        ensure_secret(comp)
    comp.invitations.all().delete()
    for text in a["invite"]:
        kind, value = Invitation.parse(text)
        Invitation.objects.get_or_create(competition=comp, kind=kind, value=value)
    for p in a["pages"]:
        save_page(comp, p["slug"], p["title"], p["body"], p["version"])
    private = Path(settings.PRIVATE_DIR)
    for d in a["data"]:
        save_data_file(comp, d["name"], d["file"], d["description"], copy,
                       {"release_at": d["release_at"], "audience": d["audience"]})
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
