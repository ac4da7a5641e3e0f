"""Pages of access and communication: registration and terms, organizer pages,
data downloads with the licence, and the organizers' access dashboard."""
from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import FileResponse, Http404, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from shareval.platform.accounts.auth import token_or_session
from shareval.platform.accounts.views import RegisterForm, offer_verification
from shareval.platform.notifications import mail

from shareval.platform.access import eligibility
from shareval.platform.access import invitations
from shareval.platform.access import releases
from shareval.platform.competitions.models.access import (
    LICENCE, TERMS, Agreement, Announcement, DataFile, Download, Invitation, Page, PhaseLimit,
    Registration
)
from shareval.platform.competitions.models import Competition, Phase, Team


def _organizer_comp(request, c) -> Competition:
    return eligibility.organized(request, c)


def register(request, c):
    """The terms (when there are any) and the request to take part."""
    comp = eligibility.visible(request, c)
    terms = eligibility.page(comp, TERMS)
    if request.method == "POST":
        if not request.user.is_authenticated:
            return redirect_to_login(request.path)
        existed = eligibility.registration(request.user, comp) is not None
        if terms is not None and not request.POST.get("accept"):
            messages.error(request, f"Tick the box to accept the {terms.title}.")
            return redirect("register-competition", c=comp.slug)
        try:
            reg = eligibility.register(request.user, comp, int(request.POST.get("version", 0))
                                       if terms is not None else None)
        except (eligibility.NotEligible, ValueError) as e:
            messages.error(request, str(e))
            return redirect("register-competition", c=comp.slug)
        if reg.status == Registration.PENDING:
            messages.success(request, "Registered; the organizers will review your request "
                                      "(you get an e-mail when they decide).")
            if not existed:
                mail.registration_requested(reg)
        else:
            messages.success(request, "You are registered: form or join a team.")
        return redirect("competition", c=comp.slug)
    return render(request, "shareval/register_competition.html", {
        "comp": comp, "terms": terms, "reg": eligibility.registration(request.user, comp),
        "terms_ok": eligibility.accepted(request.user, comp, TERMS)})


@require_GET
def page(request, c, page):
    comp = eligibility.visible(request, c)
    p = get_object_or_404(Page, competition=comp, slug=page)
    return render(request, "shareval/page.html", {"comp": comp, "page": p})


def data(request, c):
    """The competition's data files and, under ``downloads: participants``, the licence."""
    comp = eligibility.visible(request, c)
    licence = eligibility.page(comp, LICENCE)
    if request.method == "POST":
        if not request.user.is_authenticated:
            raise Http404("no such page")
        try:
            if not request.POST.get("accept"):
                raise eligibility.NotEligible(f"Tick the box to accept the {licence.title}."
                                              if licence else "nothing to accept")
            eligibility.accept(request.user, comp, LICENCE, int(request.POST.get("version", 0)))
            messages.success(request, f"{licence.title} accepted.")
        except (eligibility.NotEligible, ValueError) as e:
            messages.error(request, str(e))
        return redirect("data", c=comp.slug)
    viewer = releases.Viewer(request.user, comp)
    files = [(f, a) for f in comp.data_files.all() if (a := viewer.of(f)).listed]
    return render(request, "shareval/data.html", {
        "comp": comp, "licence": licence, "files": files, "refusal": viewer.general,
        "licence_ok": eligibility.accepted(request.user, comp, LICENCE)})


def token_user(request) -> None:
    """Scripts download with ``Authorization: Token <key>`` (an API token), as they submit."""
    from rest_framework.exceptions import AuthenticationFailed

    from shareval.platform.accounts.auth import ApiTokenAuthentication
    if request.user.is_authenticated or "HTTP_AUTHORIZATION" not in request.META:
        return
    try:
        found = ApiTokenAuthentication().authenticate(request)
    except AuthenticationFailed:
        found = None
    if found is not None:
        request.user = found[0]


def refused(request, comp, f):
    """The answer to a download of ``f`` the rules refuse (releases.Viewer), else None:
    anonymous people are sent to log in unless only the date stands in the way."""
    access = releases.Viewer(request.user, comp).of(f)
    if access.allowed:
        return None
    if not request.user.is_authenticated and access.kind != releases.DATE:
        return redirect_to_login(request.path)
    return HttpResponseForbidden(f"Download refused: {access.refusal}.",
                                 content_type="text/plain")


@require_GET
def data_file(request, c, name):
    token_user(request)
    comp = eligibility.visible(request, c)
    f = get_object_or_404(DataFile, competition=comp, name=name)
    if (answer := refused(request, comp, f)) is not None:
        return answer
    base = Path(settings.PRIVATE_DIR).resolve()
    path = (base / f.path).resolve()
    if not path.is_relative_to(base) or not path.is_file():
        raise Http404("no such file")
    eligibility.log_download(request, comp, f"data/{f.name}")
    return FileResponse(open(path, "rb"), as_attachment=True, filename=f.name)


# ---------------------------------------------------------------------------
# Organizers

@login_required
@require_GET
def organize_access(request, c):
    comp = _organizer_comp(request, c)
    if comp.visibility == Competition.UNLISTED:
        eligibility.ensure_secret(comp)
    link = request.build_absolute_uri(f"/c/{comp.slug}/?key={comp.secret}") \
        if comp.visibility == Competition.UNLISTED else None
    limits = {pl.phase_id: set(pl.teams.values_list("pk", flat=True))
              for pl in PhaseLimit.objects.filter(phase__competition=comp)}
    phases = [(ph, ph.pk in limits, limits.get(ph.pk, set())) for ph in comp.phases.all()]
    return render(request, "shareval/organize_access.html", {
        "comp": comp, "link": link, "invitations": comp.invitations.all(),
        "registrations": comp.registrations.select_related("user__verified_address",
                                                            "decided_by"),
        "agreements": Agreement.objects.filter(competition=comp).select_related("user")[:500],
        "downloads": Download.objects.filter(competition=comp).select_related("user")[:500],
        "announcements": comp.announcements.all(), "pages": comp.pages.all(),
        "catalogs": comp.catalogs.prefetch_related("uses__phase"),
        "teams": comp.teams.filter(is_baseline=False).order_by("name"), "phases": phases})


@login_required
@require_POST
def decide_registration(request, c, reg):
    comp = _organizer_comp(request, c)
    r = get_object_or_404(Registration, competition=comp, pk=reg)
    action = request.POST.get("action")
    if action in ("approve", "reject"):
        eligibility.decide(r, action == "approve", request.user)
        mail.registration_decided(r)
        messages.success(request, f"{r.user.username}: registration {r.status}.")
    return redirect("organize-access", c=comp.slug)


@login_required
@require_POST
def invite(request, c):
    comp = _organizer_comp(request, c)
    if request.POST.get("remove"):
        Invitation.objects.filter(competition=comp, pk=request.POST["remove"]).delete()
    else:
        added, mailed = [], 0
        for text in request.POST.get("invite", "").replace(",", " ").split():
            kind, value = Invitation.parse(text)
            inv, _ = Invitation.objects.get_or_create(competition=comp, kind=kind,
                                                      value=value[:254])
            added.append(text)
            if kind == Invitation.EMAIL:        # a sign-up link by mail
                mailed += mail.invitation(inv, invitations.issue(inv, request.user))
        if added:
            messages.success(request, f"Invited: {', '.join(added)}." + (
                f" Sign-up links mailed to {mailed} addresses." if mailed else ""))
    return redirect("organize-access", c=comp.slug)


@login_required
@require_POST
def announce(request, c):
    comp = _organizer_comp(request, c)
    title = request.POST.get("title", "").strip()[:200]
    if not title:
        messages.error(request, "An announcement needs a title.")
        return redirect("organize-access", c=comp.slug)
    ann = Announcement.objects.create(competition=comp, title=title,
                                      body=request.POST.get("body", "")[:20000],
                                      author=request.user)
    n = mail.announcement(ann)
    messages.success(request, f"Announcement published and mailed to {n} participants.")
    return redirect("organize-access", c=comp.slug)


@login_required
@require_POST
def phase_teams(request, c, p):
    """Limit a phase to the ticked teams, or lift the limit."""
    comp = _organizer_comp(request, c)
    phase = get_object_or_404(Phase, competition=comp, slug=p)
    if request.POST.get("limited"):
        limit, _ = PhaseLimit.objects.get_or_create(phase=phase)
        chosen = Team.objects.filter(competition=comp, is_baseline=False,
                                     pk__in=request.POST.getlist("team"))
        limit.teams.set(chosen)
        messages.success(request, f"{phase.title}: only {', '.join(t.name for t in chosen) or 'no team'} "
                                  f"may submit.")
    else:
        PhaseLimit.objects.filter(phase=phase).delete()
        messages.success(request, f"{phase.title}: open to every approved team.")
    return redirect("organize-access", c=comp.slug)


@token_or_session
@require_GET
def downloads_csv(request, c):
    """The download log as CSV (who, what, when, from where)."""
    import csv

    from django.http import HttpResponse

    from shareval.formats.spreadsheet import escape_formula
    comp = _organizer_comp(request, c)
    resp = HttpResponse(content_type="text/csv; charset=utf-8")
    resp["Content-Disposition"] = f'attachment; filename="{comp.slug}-downloads.csv"'
    w = csv.writer(resp)
    w.writerow(["at", "user", "email", "what", "address"])
    for d in Download.objects.filter(competition=comp).select_related("user").order_by("at"):
        w.writerow([d.at.isoformat(), escape_formula(d.user.username if d.user else ""),
                    escape_formula(d.user.email if d.user else ""), escape_formula(d.what),
                    d.address or ""])
    return resp


# ---------------------------------------------------------------------------
# the mailed invitation link

def join(request, c, token):
    """Sign up (or log in) and register with a mailed invitation link."""
    try:
        inv = invitations.find(c, token)
    except invitations.InvitationError as e:
        return render(request, "shareval/join.html", {"error": str(e)}, status=e.status)
    comp = inv.competition
    terms = eligibility.page(comp, TERMS)
    form = None
    if not request.user.is_authenticated:
        form = RegisterForm(request.POST or None, initial={"email": inv.value})
    if request.method == "POST":
        if terms is not None and not request.POST.get("accept"):
            messages.error(request, f"Tick the box to accept the {terms.title}.")
        elif form is None or form.is_valid():
            try:
                with transaction.atomic():
                    user = request.user if form is None else form.save()
                    invitations.use(c, token, user, int(request.POST.get("version", 0) or 0)
                                    if terms is not None else None)
            except invitations.InvitationError as e:
                return render(request, "shareval/join.html", {"error": str(e)},
                              status=e.status)
            if form is not None:
                login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, f"You are registered for {comp.title}: form or join "
                                      f"a team.")
            offer_verification(request, user)      # when another address was typed
            return redirect("competition", c=comp.slug)
    return render(request, "shareval/join.html", {"comp": comp, "inv": inv, "form": form,
                                                  "terms": terms})
