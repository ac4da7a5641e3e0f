"""Pages: submit, the team's submissions, one submission's results, plots."""
from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import FileResponse, Http404
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from shareval.platform.access import visibility as access
from shareval.platform.access import eligibility
from shareval.platform.competitions.models import Dataset
from shareval.platform.competitions.models.groups import group_of
from shareval.platform.submissions import deadline, factsheets, samples, service
from shareval.platform.submissions.api import visible_submission
from shareval.platform.submissions.breakdowns import breakdown_tables
from shareval.platform.submissions.models import Submission
from shareval.platform.submissions.present import comparison_view, run_rows, submission_payload


@login_required
def submit(request, c):
    comp = eligibility.visible(request, c)
    team = comp.team_of(request.user)
    if team is None:
        messages.error(request, "Join or create a team first.")
        return redirect("team", c=comp.slug)
    datasets = list(Dataset.objects.filter(phase__competition=comp)
                    .select_related("phase", "task"))
    choices = [(ds, [s.describe() for s in service.quota_states(team, ds)]) for ds in datasets]
    error, problems = None, []
    if request.method == "POST":
        ds = next((d for d in datasets if str(d.pk) == request.POST.get("dataset")), None)
        upload = request.FILES.get("file")
        if ds is None or upload is None:
            error = "Choose a dataset and a file."
        else:
            try:
                sub = service.submit(request.user, team, ds, upload,
                                     primary=_chosen_kind(request.POST),
                                     description=request.POST.get("description", ""),
                                     factsheet=factsheets.from_post(comp.factsheet, request.POST))
            except service.SubmissionError as e:
                error, problems = e.message, e.problems
                if e.next_slot:
                    error += f" (next slot: {e.next_slot:%Y-%m-%d %H:%M %Z})"
            else:
                messages.success(request, "Submission accepted and queued for scoring.")
                return redirect("submission", s=sub.pk)
    server = request.build_absolute_uri("/").rstrip("/")
    guides = [(ds, samples.guide(ds, server)) for ds, _ in choices]
    return render(request, "shareval/submit.html", {"comp": comp, "team": team,
                                                    "choices": choices, "error": error,
                                                    "problems": problems, "guides": guides,
                                                    "no_primary": deadline.team_notices(
                                                        team, timezone.now()),
                                                    "sheet": _sheet_fields(comp, request.POST)})


def _chosen_kind(post) -> bool | None:
    """The form's two boxes: primary, contrastive, or neither (the file name decides)."""
    primary, contrastive = bool(post.get("primary")), bool(post.get("contrastive"))
    if primary and contrastive:
        raise service.SubmissionError(400, "tick primary or contrastive, not both")
    return True if primary else (False if contrastive else None)


def _sheet_fields(comp, post) -> list[dict]:
    """The fact sheet's fields for a form, with what was typed (kept after a refusal)."""
    return [dict(f, value=post.get("fs_" + f["name"], "")) for f in
            factsheets.fields(comp.factsheet)]


RUNS_PAGE = 50          # newest first; ?page=<n>


@login_required
def my_submissions(request, c):
    comp = eligibility.visible(request, c)
    team = comp.team_of(request.user)
    # the datasets (phase, competition, task) read once and shared by the runs, not
    # joined into each run's row; the runs' messages and fact sheets not read
    subs = (Submission.objects.filter(team=team).defer("problems", "warnings", "factsheet")
            .prefetch_related("dataset__phase__competition", "dataset__task") if team else
            Submission.objects.none())
    page = Paginator(subs, RUNS_PAGE).get_page(request.GET.get("page"))
    return render(request, "shareval/submissions.html", {
        "comp": comp, "team": team, "rows": run_rows(page, request.user), "page": page,
        "no_primary": deadline.team_notices(team, timezone.now()) if team else []})


def _contrastive_only(sub) -> str:
    """The run group's rule when this run's dataset may not hold the primary, else ''."""
    group = group_of(sub.dataset) if sub.kind != Submission.PRIMARY else None
    return group.contrastive_only(sub.dataset) if group else ""


@login_required
def submission(request, s):
    sub = visible_submission(request, s)
    organizer, member, level = sub.viewer
    p = submission_payload(sub, request.user, organizer, level)
    score = p["score"] or {}
    comp = sub.dataset.phase.competition
    return render(request, "shareval/submission.html", {
        "sub": sub, "p": p, "score": score, "comp": comp,
        "sheet": [dict(f, value=sub.factsheet.get(f["name"], ""),
                       shown=factsheets.shown(sub.factsheet.get(f["name"], "")))
                  for f in factsheets.fields(comp.factsheet)],
        "team_visibility": bool((sub.dataset.board or {}).get("team_visibility")),
        "organizer": organizer, "is_member": member,
        "board_link": access.can_view_leaderboard(request.user, sub.dataset),
        "frozen": access.frozen(sub.dataset.phase),
        "contrastive_only": _contrastive_only(sub),
        "breakdowns": breakdown_tables(score.get("breakdowns") or {}, request.GET),
        "comparison": comparison_view(score.get("comparison"))})


@login_required
@require_POST
def submission_action(request, s, action):
    sub = visible_submission(request, s)
    if action not in ("primary", "cancel"):
        raise Http404("no such action")
    try:
        change = service.make_primary if action == "primary" else service.cancel
        change(sub, request.user, reason=request.POST.get("reason", ""))
    except service.SubmissionError as e:
        messages.error(request, e.message)
    return redirect("submission", s=sub.pk)


@login_required
def plot(request, s, name):
    sub = visible_submission(request, s)
    if not access.at_least(access.score_level(request.user, sub), access.DETAILED):
        raise Http404("no such plot")
    score = sub.current_score
    if score is None or name not in score.plots:
        raise Http404("no such plot")
    path = Path(settings.RESULTS_DIR) / str(sub.pk) / name
    if not path.is_file():
        raise Http404("no such plot")
    return FileResponse(open(path, "rb"), content_type="image/png")
