"""Pages: competitions, teams, leaderboards, released files, organizer tools."""
from __future__ import annotations

import datetime as dt
import heapq
import tempfile
import uuid
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Case, IntegerField, Q, Value, When, prefetch_related_objects
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from shareval.formats.errors import InvalidInput
from shareval.platform import work as site_work
from shareval.platform.accounts.auth import token_or_session
from shareval.platform.labels import label
from shareval.platform.notifications import mail

from shareval.platform.competitions import phase_status
from shareval.platform.access import visibility as access
from shareval.platform.leaderboards import html as board_html
from shareval.platform.access import eligibility
from shareval.platform.leaderboards import export
from shareval.platform.access import teams
from shareval.platform.leaderboards import unranked
from shareval.platform.leaderboards.payloads import get_dataset, leaderboard_payload
from shareval.platform.pages.payloads import competition_summary
from shareval.platform.submissions import deadline
from shareval.platform.bundles.loader import load_bundle_archive
from shareval.platform.competitions.models import (
    Competition, CompetitionTask, Dataset, Membership, Phase, PublicFile, Team
)
from shareval.platform.access.views import refused, token_user


def home(request):
    return render(request, "shareval/home.html",
                  {"cards": phase_status.cards(eligibility.listed(request.user))})


def competition(request, c):
    comp = eligibility.visible(request, c)
    team = comp.team_of(request.user)
    pending = None
    if request.user.is_authenticated and team is None:
        pending = Membership.objects.filter(team__competition=comp, user=request.user,
                                            status=Membership.PENDING).select_related("team").first()
    summary = competition_summary(comp, request.user)
    for ph in summary["phases"]:          # the dates in the competition's zone, as on home
        for k in ("start", "end"):
            ph[k + "_local"] = dt.datetime.fromisoformat(ph[k]).astimezone(comp.tz)
    return render(request, "shareval/competition.html", {
        "comp": comp, "summary": summary, "team": team,
        "pending": pending, "organizer": comp.is_organizer(request.user),
        # pages, announcements, registration
        "pages": comp.pages.all(), "announcements": comp.announcements.all()[:20],
        "refusal": eligibility.participation_refusal(request.user, comp),
        "registration": eligibility.registration(request.user, comp),
        "has_data": comp.data_files.exists(), "terms_page": eligibility.page(comp, "terms"),
        "takes_code": Dataset.objects.filter(phase__competition=comp,
                                             code__isnull=False).exists(),
        "my_work": site_work.for_user(request.user, comp.slug),
        "no_primary": deadline.team_notices(team, timezone.now()) if team else []})


@login_required
def team(request, c):
    comp = eligibility.visible(request, c)
    my_team = comp.team_of(request.user)
    if request.method == "POST":
        action = request.POST.get("action")
        try:
            if action == "create" and my_team is None:
                t = teams.create(comp, request.user, request.POST.get("name", ""))
                messages.success(request, f"{t.name} created; you are its lead." + (
                    " The organizers must approve it before it can submit."
                    if t.status == Team.PENDING else ""))
            elif action == "join" and my_team is None:
                t = teams.ask_to_join(comp, request.user, request.POST.get("name", ""))
                messages.success(request, f"Asked to join {t.name}; its lead must approve.")
            elif action in ("approve", "reject") and my_team and \
                    my_team.lead_id == request.user.pk:
                m = get_object_or_404(Membership, pk=request.POST.get("membership"),
                                      team=my_team)
                if action == "approve":
                    teams.let_in(m, request.user)
                    messages.success(request, f"{m.user.username} joined the team.")
                else:
                    teams.refuse(m, request.user)
            elif action == "hand-lead" and my_team:
                t = teams.hand_lead(my_team, request.user, request.POST.get("user", ""))
                if t.proposed_lead_id:
                    mail.lead_proposed(t)
                    messages.success(request, f"{t.proposed_lead.username} is proposed as lead; "
                                              f"the organizers must approve the change.")
                else:
                    mail.lead_changed(t)
                    messages.success(request, f"{t.lead.username} now leads {t.name}.")
        except teams.TeamError as e:
            messages.error(request, str(e))
        return redirect("team", c=comp.slug)
    return render(request, "shareval/team.html", {
        "comp": comp, "team": my_team,
        "members": my_team.memberships.select_related("user") if my_team else [],
        "is_lead": bool(my_team and my_team.lead_id == request.user.pk),
        "history": my_team.events.select_related("actor") if my_team else [],
        "joinable": [] if my_team else teams.joinable(comp)})


def leaderboard(request, c, p, d):
    ds = get_dataset(request, c, p, d)
    if not access.can_view_leaderboard(request.user, ds):
        raise Http404("no such leaderboard")
    key: list = []
    board = leaderboard_payload(ds, request.user, request.GET.get("part"), key)
    metric = ds.task.metric           # the rule's text names the metric: say it in words
    if metric:
        board["rule"] = board["rule"].replace(f" by {metric}", f" by {label(metric)}")
    body = board_html.link_runs(board_html.body(board_html.page_rows(board), key[0],
                                                board["ranked"]), board["rows"])
    own = ds.phase.competition.team_of(request.user) if request.user.is_authenticated else None
    if own is not None:              # the cached body is everyone's: mark the viewer's rows here
        attr = f'data-team="{escape(own.name)}"'
        body = mark_safe(body.replace(attr + ">", attr + ' data-own="yes">'))
    return render(request, "shareval/leaderboard.html", {
        "comp": ds.phase.competition, "ds": ds, "board": board, "body": body,
        "overlap": unranked.matrix(board["rows"]),
        "own_team": own, "organizer": ds.phase.competition.is_organizer(request.user)})


def public_file(request, c, p, d, name):
    token_user(request)           # scripts fetch released files as data files
    ds = get_dataset(request, c, p, d)
    comp = ds.phase.competition
    f = get_object_or_404(PublicFile, dataset=ds, name=name)
    if (answer := refused(request, comp, f)) is not None:      # date, audience, licence
        return answer
    path = (Path(settings.PUBLIC_DIR) / f.path).resolve()
    if not path.is_relative_to(Path(settings.PUBLIC_DIR).resolve()) or not path.is_file():
        raise Http404("no such file")
    eligibility.log_download(request, comp, f"files/{ds.phase.slug}/{ds.slug}/{f.name}")
    return FileResponse(open(path, "rb"), as_attachment=True, filename=f.name)


@staff_member_required
def new_competition(request):
    problems = []
    if request.method == "POST" and request.FILES.get("bundle"):
        up = request.FILES["bundle"]
        with tempfile.NamedTemporaryFile(suffix=".tgz") as tmp:
            for chunk in up.chunks():
                tmp.write(chunk)
            tmp.flush()
            try:
                comp, made = load_bundle_archive(Path(tmp.name), organizer=request.user)
            except InvalidInput as e:
                problems = [str(p) for p in e.problems]
            else:
                messages.success(request, f"Competition {comp.title} loaded; "
                                          f"{len(made)} baseline submissions queued.")
                return redirect("organize", c=comp.slug)
    return render(request, "shareval/new_competition.html", {"problems": problems})


def _organizer_comp(request, c) -> Competition:
    return eligibility.organized(request, c)


TEAMS_PAGE, RECENT_RUNS = 50, 100


_ZERO = uuid.UUID(int=0)


def _with_dataset(sub, ds: Dataset):
    sub.dataset = ds
    return sub


@login_required
def organize(request, c):
    """The dashboard: phases, teams (waiting ones first, ``TEAMS_PAGE`` a page,
    ``?teams=<page>``), tasks, and the ``RECENT_RUNS`` newest runs (all of them
    are in the CSV export). 500 teams and 300 runs as one page took 0.4 s to render."""
    comp = _organizer_comp(request, c)
    from shareval.platform.submissions.models import Submission
    # the newest runs of each dataset from its (dataset, -created) index, then the
    # newest of those: sorting every run of the competition took 100+ ms at 100,000
    # only the columns the table shows, the dataset and team objects shared by the
    # runs (select_related built four objects per run) and the runs' URLs from one
    # reverse: the page's CPU time at 50 teams x 200 runs went from 45 to 32 ms
    recent = Submission.objects.only("pk", "created", "team_id", "dataset_id", "kind", "state",
                                     "disqualified", "factsheet")
    subs = heapq.nlargest(RECENT_RUNS, (
        _with_dataset(s, ds) for ds in Dataset.objects.filter(phase__competition=comp)
        .select_related("phase")
        for s in recent.filter(dataset=ds).order_by("-created")[:RECENT_RUNS]),
        key=lambda s: s.created)
    prefetch_related_objects(subs, "team")
    url = reverse("submission", args=[_ZERO]).replace(str(_ZERO), "{}")
    for s in subs:
        s.url = url.format(s.pk)
    waiting_first = Case(When(Q(status=Team.PENDING) | Q(proposed_lead__isnull=False),
                              then=Value(0)), default=Value(1), output_field=IntegerField())
    teams_qs = (comp.teams.filter(is_baseline=False).select_related("lead", "proposed_lead")
                .order_by(waiting_first, "name"))
    page = Paginator(teams_qs, TEAMS_PAGE).get_page(request.GET.get("teams"))
    from shareval.platform.coderuns.models import CodeSubmission
    code = (CodeSubmission.objects.filter(dataset__phase__competition=comp)
            .select_related("team", "dataset__phase").prefetch_related("runs")[:RECENT_RUNS])
    return render(request, "shareval/organize.html", {
        "comp": comp, "subs": subs, "levels": Phase.RELEASE, "teams": page, "code": code,
        "recent": RECENT_RUNS, "missing_primaries": deadline.organizer_rows(comp.phases.all()),
        # the Method column only when a listed run's fact sheet names one
        "show_method": any((s.factsheet or {}).get("method") for s in subs),
        "team_names": teams_qs.order_by("name").values_list("name", flat=True),
        "split_phases": {d.phase_id for d in Dataset.objects.filter(phase__competition=comp)
                         .only("phase_id", "split") if d.split}})


@login_required
@require_POST
def review_team(request, c, team):
    """An organizer approves or rejects a team (competitions with team approval)."""
    comp = _organizer_comp(request, c)
    t = get_object_or_404(Team, competition=comp, pk=team, is_baseline=False)
    action = request.POST.get("action")
    if action in ("approve", "reject"):
        teams.review(t, approve=action == "approve", by=request.user)
        mail.team_reviewed(t)
        messages.success(request, f"{t.name}: {t.status}.")
    elif action in ("approve-lead", "refuse-lead"):
        try:
            t = teams.decide_lead(t, request.user, action == "approve-lead")
            mail.lead_changed(t, refused=action == "refuse-lead")
            messages.success(request, f"{t.name}: {t.lead.username} leads the team.")
        except teams.TeamError as e:
            messages.error(request, str(e))
    return redirect("organize", c=comp.slug)


@login_required
@require_POST
def release(request, c, p):
    comp = _organizer_comp(request, c)
    phase = get_object_or_404(Phase, competition=comp, slug=p)
    level = request.POST.get("level")
    if level in dict(Phase.RELEASE):
        phase.released = level
        phase.save(update_fields=["released"])
        mail.results_released(phase, phase.released_at())
        messages.success(request, f"{phase.title}: {phase.get_released_display()}.")
    return redirect("organize", c=comp.slug)


@login_required
@require_POST
def rescore(request, c, t):
    comp = _organizer_comp(request, c)
    task = get_object_or_404(CompetitionTask, competition=comp, slug=t)
    from shareval.platform.submissions.service import rescore as do_rescore
    n = do_rescore(task)
    messages.success(request, f"{n} submissions of {task.slug} queued for re-scoring "
                              f"({task.registry_task.scorer_version}).")
    return redirect("organize", c=comp.slug)


@token_or_session
def export_csv(request, c):
    comp = _organizer_comp(request, c)
    return export.csv_response(comp)
