"""The organizers' Settings page: visibility and the secret link, registration and
terms, teams, downloads and the licence, pages, data files and catalog versions.

Organizers only (anyone else gets 404, as for a competition that does not
exist). Each form posts to its own address; a valid one is written by
``configure.py`` and recorded, then the page is shown again (GET); a refused
one is shown at once with the problems beside its fields (status 400).
"""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from shareval.platform.bundles import configure
from shareval.platform.competitions.models.access import LICENCE, TERMS, Page, SettingChange
from shareval.platform.bundles.forms import (
    CatalogForm, DataFileForm, DownloadsForm, PageForm, RegistrationForm, TeamsForm,
    VisibilityForm
)
from shareval.platform.competitions.models import Competition
from shareval.platform.access.views import _organizer_comp

CHANGES_SHOWN = 200


def _document(comp, slug):
    page = Page.objects.filter(competition=comp, slug=slug).first()
    return {"title": page.title if page else configure.DEFAULT_TITLES[slug],
            "text": page.body if page else ""}


def _forms(comp: Competition) -> dict:
    return {
        "visibility": VisibilityForm(initial={"visibility": comp.visibility}),
        "registration": RegistrationForm(initial={
            "registration": "approval" if comp.registration_approval else "open",
            **_document(comp, TERMS)}),
        "teams": TeamsForm(initial={"team_approval": comp.team_approval,
                                    "max_team_size": comp.max_team_size or ""}),
        "downloads": DownloadsForm(initial={"downloads": comp.downloads,
                                            **_document(comp, LICENCE)}),
        "data": DataFileForm(),
        "catalog": CatalogForm(comp, initial={"kind": "dataset", "move_phases": True}),
    }


def _page(request, comp, status=200, **bound):
    forms = _forms(comp)
    forms.update(bound)
    link = None
    if comp.visibility == Competition.UNLISTED and comp.secret:
        link = request.build_absolute_uri(f"/c/{comp.slug}/?key={comp.secret}")
    return render(request, "shareval/organize_settings.html", {
        "comp": comp, "forms": forms, "link": link, "pages": comp.pages.all(),
        "terms": Page.objects.filter(competition=comp, slug=TERMS).first(),
        "licence": Page.objects.filter(competition=comp, slug=LICENCE).first(),
        "data_files": comp.data_files.all(),
        "catalogs": comp.catalogs.prefetch_related("uses__phase"),
        "visibility_choices": Competition.VISIBILITY,
        "changes": SettingChange.objects.filter(competition=comp)
        .select_related("user")[:CHANGES_SHOWN]}, status=status)


def _done(request, comp, anchor: str, text: str):
    if text:
        messages.success(request, text)
    else:
        messages.info(request, "Nothing changed.")
    return redirect(reverse("organize-settings", kwargs={"c": comp.slug}) + f"#{anchor}")


@login_required
@require_GET
def settings_page(request, c):
    return _page(request, _organizer_comp(request, c))


@login_required
@require_POST
def visibility(request, c):
    comp = _organizer_comp(request, c)
    form = VisibilityForm(request.POST)
    if not form.is_valid():
        return _page(request, comp, 400, visibility=form)
    changed = configure.set_fields(comp, request.user, visibility=form.cleaned_data["visibility"])
    return _done(request, comp, "visibility",
                 f"Visibility: {comp.get_visibility_display()}." if changed else "")


@login_required
@require_POST
def secret_link(request, c):
    comp = _organizer_comp(request, c)
    if comp.visibility != Competition.UNLISTED:
        messages.error(request, "Only an unlisted competition has a secret link.")
        return redirect("organize-settings", c=comp.slug)
    configure.new_secret(comp, request.user)
    return _done(request, comp, "visibility",
                 "New secret link: the previous one no longer opens the competition.")


@login_required
@require_POST
def registration(request, c):
    comp = _organizer_comp(request, c)
    return _mode_and_document(
        request, comp, "registration", RegistrationForm(request.POST), TERMS,
        lambda d: {"registration_approval": d["registration"] == "approval"},
        lambda: "Registration: " + ("approved by the organizers."
                                    if comp.registration_approval else "open."))


def _mode_and_document(request, comp, key: str, form, kind, fields, said):
    """The registration and downloads forms: a mode and a versioned document
    (terms, licence); the message says what changed."""
    if not form.is_valid():
        return _page(request, comp, 400, **{key: form})
    d = form.cleaned_data
    done = []
    if configure.set_fields(comp, request.user, **fields(d)):
        done.append(said())
    what = configure.set_document(comp, request.user, kind, d["title"].strip(), d["text"])
    if what:
        done.append(what[0].upper() + what[1:] + ".")
    return _done(request, comp, key, " ".join(done))


@login_required
@require_POST
def teams(request, c):
    comp = _organizer_comp(request, c)
    form = TeamsForm(request.POST)
    if not form.is_valid():
        return _page(request, comp, 400, teams=form)
    changed = configure.set_fields(comp, request.user, **form.cleaned_data)
    return _done(request, comp, "teams", "Team settings saved." if changed else "")


@login_required
@require_POST
def downloads(request, c):
    comp = _organizer_comp(request, c)
    return _mode_and_document(
        request, comp, "downloads", DownloadsForm(request.POST), LICENCE,
        lambda d: {"downloads": d["downloads"]},
        lambda: "Downloads: " + ("approved participants who accepted the licence."
                                 if comp.downloads == Competition.PARTICIPANTS
                                 else "open to everyone who may see the competition."))


@login_required
@require_POST
def data_file(request, c):
    comp = _organizer_comp(request, c)
    form = DataFileForm(request.POST, request.FILES)
    try:
        if not form.is_valid():
            return _page(request, comp, 400, data=form)
        d = form.cleaned_data
        what = configure.add_data_file(comp, request.user, d["name"], form.path,
                                       d["description"])
    finally:
        form.cleanup()
    return _done(request, comp, "data", f"Data file {what}.")


@login_required
@require_POST
def catalog(request, c):
    comp = _organizer_comp(request, c)
    form = CatalogForm(comp, request.POST, request.FILES)
    try:
        if not form.is_valid():
            return _page(request, comp, 400, catalog=form)
        d = form.cleaned_data
        _, what = configure.add_catalog_version(comp, request.user, d["slug"], d["kind"],
                                                form.path, d["move_phases"], d["phases"])
    finally:
        form.cleanup()
    return _done(request, comp, "catalogs", f"Catalog {what}.")


@login_required
def edit_page(request, c, page=None):
    """Create (``page`` None) or edit an organizer page."""
    comp = _organizer_comp(request, c)
    p = get_object_or_404(Page, competition=comp, slug=page) if page else None
    status = 200
    if request.method == "POST":
        form = PageForm(comp, p, request.POST)
        if form.is_valid():
            d = form.cleaned_data
            what = configure.save_document(comp, request.user, d["slug"], d["title"].strip(),
                                           d["body"])
            return _done(request, comp, "pages", what[0].upper() + what[1:] + "." if what
                         else "")
        status = 400
    else:
        form = PageForm(comp, p, initial={"slug": p.slug, "title": p.title, "body": p.body}
                        if p else {})
    return render(request, "shareval/organize_page.html",
                  {"comp": comp, "page": p, "form": form}, status=status)


@login_required
@require_POST
def delete_page(request, c, page):
    comp = _organizer_comp(request, c)
    p = get_object_or_404(Page, competition=comp, slug=page)
    configure.delete_page(p, request.user)
    return _done(request, comp, "pages", f"Page {p.title} deleted.")
