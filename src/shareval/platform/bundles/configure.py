"""Organizers' changes to a competition's settings from the browser, each
recorded as a ``SettingChange`` (who, when, what).

The forms (``forms.py``) check the values with the bundle's checks
(``checks.py``); these functions write them with the bundle loader's writers
(``access_section.save_page``, ``save_data_file``, ``catalogs.store``), so a
setting means the same whether it came from ``bundle.yaml`` or from the Settings
page. Reloading the bundle writes the bundle's values again.

Boards: none of these settings enters a leaderboard's cached rows (they are
built from runs, scores, teams, tasks, the phase's release and the dataset's
board options: ``leaderboards/cache.py``); who may open a board (visibility, finalist
phases) is decided on every request. So nothing here bumps a board token.
"""
from __future__ import annotations

import hashlib
import secrets
import shutil
import tempfile
from pathlib import Path

from django.conf import settings
from django.db import transaction

from shareval.platform.competitions import catalogs
from shareval.platform.competitions.models.access import (
    LICENCE, TERMS, Catalog, Page, PhaseCatalog, SettingChange
)
from shareval.platform.bundles.loader import _copy
from shareval.platform.bundles.access_section import save_data_file, save_page
from shareval.platform.competitions.models import Competition

DEFAULT_TITLES = {TERMS: "Terms of participation", LICENCE: "Data licence"}


def record(comp: Competition, user, setting: str, change: str) -> SettingChange:
    return SettingChange.objects.create(competition=comp, user=user, setting=setting[:40],
                                        change=change[:500])


# field -> (the setting's name in the record, its values in words)
FIELDS = {"visibility": ("visibility", {}),
          "registration_approval": ("registration", {True: "approval by the organizers",
                                                     False: "open"}),
          "team_approval": ("team approval", {True: "required", False: "not required"}),
          "max_team_size": ("team size", {None: "no limit"}),
          "downloads": ("downloads", {"participants": "approved participants with the "
                                                      "licence"})}


def _shown(name: str, value) -> str:
    return str(FIELDS[name][1].get(value, value))


@transaction.atomic
def set_fields(comp: Competition, user, **values) -> list[str]:
    """Set plain fields of the competition; one record per changed field. Returns
    the changed fields' names."""
    changed = []
    for name, value in values.items():
        old = getattr(comp, name)
        if old == value:
            continue
        setattr(comp, name, value)
        changed.append(name)
        record(comp, user, FIELDS[name][0], f"{_shown(name, old)} → {_shown(name, value)}")
    if changed:
        comp.save(update_fields=changed)
    if comp.visibility == Competition.UNLISTED and not comp.secret:
        new_secret(comp, user, first=True)
    return changed


def new_secret(comp: Competition, user, first: bool = False) -> str:
    """A new key for the unlisted link: the old link stops working (sessions that
    opened the competition with it keep it until they end)."""
    comp.secret = secrets.token_urlsafe(18)
    comp.save(update_fields=["secret"])
    record(comp, user, "secret link", "link created" if first else
           "new link (the previous one no longer opens the competition)")
    return comp.secret


@transaction.atomic
def set_document(comp: Competition, user, slug: str, title: str, body: str) -> str:
    """The terms or the licence page: written like any page; an empty text removes
    it (nothing left to accept). Returns what happened, in words."""
    page = Page.objects.filter(competition=comp, slug=slug).first()
    if not body.strip():
        if page is None:
            return ""
        page.delete()
        record(comp, user, f"page {slug}", f"{page.title} removed (version {page.version})")
        return f"{page.title} removed: nothing to accept any more"
    return save_document(comp, user, slug, title or DEFAULT_TITLES.get(slug, slug), body)


def save_document(comp: Competition, user, slug: str, title: str, body: str) -> str:
    old = Page.objects.filter(competition=comp, slug=slug).first()
    page, grew = save_page(comp, slug, title, body)
    if old is None:
        what = f"{page.title} created (version 1)"
    elif grew:
        what = f"{old.title}: text changed, version {old.version} → {page.version}"
        if old.title != page.title:
            what += f"; title now {page.title}"
    elif old.title != page.title:
        what = f"{old.title}: title now {page.title}"
    else:
        return ""
    record(comp, user, f"page {slug}", what)
    return what


@transaction.atomic
def delete_page(page: Page, user) -> None:
    record(page.competition, user, f"page {page.slug}",
           f"{page.title} deleted (version {page.version})")
    page.delete()


def _spooled(upload, name: str, tmp: str) -> Path:
    """The uploaded file written to a temporary folder under its own name."""
    path = Path(tmp) / name
    with open(path, "wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)
    return path


def upload_to_temp(upload, name: str) -> tuple[Path, str]:
    """(path, folder to remove) of the upload in a fresh temporary folder."""
    tmp = tempfile.mkdtemp(prefix="upload-")
    return _spooled(upload, name, tmp), tmp


def remove_temp(tmp: str) -> None:
    shutil.rmtree(tmp, ignore_errors=True)


@transaction.atomic
def add_data_file(comp: Competition, user, name: str, src: Path, description: str) -> str:
    replaced = comp.data_files.filter(name=name).exists()
    f = save_data_file(comp, name, src, description, _copy)
    what = f"{'replaced' if replaced else 'added'} {name} ({f.size} bytes)"
    record(comp, user, f"data file {name}", what)
    return what


@transaction.atomic
def add_catalog_version(comp: Competition, user, slug: str, kind: str, src: Path,
                        move_phases: bool, phases=()) -> tuple[Catalog, str]:
    """A new version of the catalog ``slug`` (or the newest one unchanged, when the
    file is the same); with ``move_phases`` the phases that check an earlier
    version of it check the new one, and ``phases`` (checked by the form) check it
    from now on."""
    newest = Catalog.objects.filter(competition=comp, slug=slug).order_by("-version").first()
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    private = Path(settings.PRIVATE_DIR)
    cat = catalogs.store(comp, slug, kind, src, digest, lambda s, rel: _copy(s, private, rel))
    same = newest is not None and cat.pk == newest.pk
    what = (f"{slug}: the file is the same as version {cat.version}" if same
            else f"{slug}: version {cat.version} ({cat.count} {cat.get_kind_display()})")
    moved = []
    uses = PhaseCatalog.objects.filter(catalog__competition=comp, catalog__slug=slug) \
        .exclude(catalog=cat).select_related("phase") if move_phases else []
    for use in uses:
        use.catalog = cat
        use.save(update_fields=["catalog"])
        moved.append(use.phase.title)
    for phase in phases:
        use, created = PhaseCatalog.objects.get_or_create(phase=phase,
                                                          defaults={"catalog": cat})
        if not created and use.catalog_id == cat.pk:
            continue                                  # moved above, or already on it
        if not created:
            use.catalog = cat
            use.save(update_fields=["catalog"])
        moved.append(phase.title)
    if moved:
        what += f"; now checks {', '.join(dict.fromkeys(moved))}"
    elif same:
        return cat, what + "; nothing changed"
    record(comp, user, f"catalog {slug}", what)
    return cat, what
