"""The access features' rows in a competition archive (format 2): invitations,
registrations and agreements (with their times and versions), organizer pages,
data files (their bytes travel under ``files/private/``) and the licence page,
versioned catalogs and the version each phase uses, announcements, the download
log and the finalist lists (phases limited to chosen teams)."""
from __future__ import annotations

from shareval.platform.competitions.models.access import (
    Agreement, Announcement, Catalog, DataFile, Download, Invitation, Page, PhaseCatalog,
    PhaseLimit, Registration
)
from shareval.platform.competitions.archive_io import Files, OwnFolders, dump, load, user_name


def export_access(comp, files: Files) -> dict:
    out = {"invitations": [{**dump(i), "used_by": user_name(i.used_by),
                            "invited_by": user_name(i.invited_by)}
                           for i in comp.invitations.select_related("used_by", "invited_by")
                           .order_by("pk")],
           "registrations": [{**dump(r), "user": user_name(r.user),
                              "decided_by": user_name(r.decided_by)}
                             for r in comp.registrations.select_related("user", "decided_by")
                             .order_by("pk")],
           "agreements": [{**dump(a), "user": user_name(a.user)}
                          for a in Agreement.objects.filter(competition=comp)
                          .select_related("user").order_by("accepted", "pk")],
           "pages": [dump(p) for p in comp.pages.order_by("pk")],
           "data_files": [dump(f) for f in comp.data_files.order_by("pk")],
           "catalogs": [dump(c) for c in comp.catalogs.order_by("slug", "version")],
           "phase_catalogs": [{"phase": pc.phase.slug, "catalog": pc.catalog.slug,
                               "version": pc.catalog.version}
                              for pc in PhaseCatalog.objects.filter(phase__competition=comp)
                              .select_related("phase", "catalog")],
           "announcements": [{**dump(a), "author": user_name(a.author)}
                             for a in comp.announcements.select_related("author")
                             .order_by("published", "pk")],
           "downloads": [{**dump(d), "user": user_name(d.user)}
                         for d in Download.objects.filter(competition=comp)
                         .select_related("user").order_by("at", "pk")],
           "phase_limits": [{"phase": pl.phase.slug,
                             "teams": sorted(pl.teams.values_list("name", flat=True))}
                            for pl in PhaseLimit.objects.filter(phase__competition=comp)
                            .select_related("phase")]}
    for f in comp.data_files.all():
        files.private(f.path)
    for c in comp.catalogs.all():
        files.private(c.path)
    return out


def check_access_paths(part: dict, own: OwnFolders) -> None:
    for i, f in enumerate(part.get("data_files", [])):
        own.private(f"access.data_files[{i}].path", f["path"])
    for i, c in enumerate(part.get("catalogs", [])):
        own.private(f"access.catalogs[{i}].path", c["path"])


def import_access(comp, part: dict, users, phases: dict, teams: dict) -> None:
    """``phases``: slug -> Phase; ``teams``: name -> Team, both of the new competition."""
    Invitation.objects.bulk_create([
        Invitation(competition=comp, used_by=users(i.get("used_by")),
                   invited_by=users(i.get("invited_by")), **load(Invitation, i))
        for i in part.get("invitations", [])])
    Registration.objects.bulk_create([
        Registration(competition=comp, user=users(r["user"]), decided_by=users(r["decided_by"]),
                     **load(Registration, r)) for r in part.get("registrations", [])])
    Agreement.objects.bulk_create([Agreement(competition=comp, user=users(a["user"]),
                                             **load(Agreement, a))
                                   for a in part.get("agreements", [])])
    Page.objects.bulk_create([Page(competition=comp, **load(Page, p))
                              for p in part.get("pages", [])])
    DataFile.objects.bulk_create([DataFile(competition=comp, **load(DataFile, f))
                                  for f in part.get("data_files", [])])
    cats = {}
    for c in part.get("catalogs", []):
        cat = Catalog.objects.create(competition=comp, **load(Catalog, c))
        cats[(cat.slug, cat.version)] = cat
    for pc in part.get("phase_catalogs", []):
        PhaseCatalog.objects.create(phase=phases[pc["phase"]],
                                    catalog=cats[(pc["catalog"], pc["version"])])
    Announcement.objects.bulk_create([
        Announcement(competition=comp, author=users(a["author"]), **load(Announcement, a))
        for a in part.get("announcements", [])])
    Download.objects.bulk_create([Download(competition=comp, user=users(d["user"]),
                                           **load(Download, d))
                                  for d in part.get("downloads", [])])
    for pl in part.get("phase_limits", []):
        limit = PhaseLimit.objects.create(phase=phases[pl["phase"]])
        limit.teams.set([teams[name] for name in pl["teams"]])
