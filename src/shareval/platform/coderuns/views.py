"""Pages: upload a code bundle, one code submission with its runs, organizers' re-run."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from shareval.platform.access import visibility as access
from shareval.platform.access import eligibility
from shareval.platform.submissions.service import SubmissionError
from shareval.platform.coderuns import service
from shareval.platform.coderuns.api import visible_code
from shareval.platform.coderuns.models import CodeDataset, CodeSubmission


@login_required
def submit_code(request, c):
    comp = eligibility.visible(request, c)             # hidden ones look missing
    team = comp.team_of(request.user)
    if team is None:
        messages.error(request, "Join or create a team first.")
        return redirect("team", c=comp.slug)
    code_sets = list(CodeDataset.objects.filter(dataset__phase__competition=comp)
                     .select_related("dataset__phase", "dataset__task"))
    error, problems = service.sandbox_problem() or None, []
    if request.method == "POST" and not error:
        cd = next((x for x in code_sets if str(x.dataset.pk) == request.POST.get("dataset")),
                  None)
        upload = request.FILES.get("file")
        if cd is None or upload is None:
            error = "Choose a dataset and a bundle (.tgz or .zip)."
        else:
            try:
                cs = service.submit_code(request.user, team, cd.dataset, upload,
                                         primary=bool(request.POST.get("primary")),
                                         description=request.POST.get("description", ""))
            except SubmissionError as e:
                error, problems = e.message, e.problems
            else:
                messages.success(request, "Bundle accepted; its test run is queued.")
                return redirect("code-submission", s=cs.pk)
    mine = CodeSubmission.objects.filter(team=team, dataset__phase__competition=comp) \
        .select_related("dataset__phase")[:50]
    return render(request, "shareval/code_submit.html",
                  {"comp": comp, "team": team, "code_sets": code_sets, "error": error,
                   "problems": problems, "mine": mine,
                   "server": request.build_absolute_uri("/").rstrip("/")})


@login_required
def code_submission(request, s):
    cs, organizer = visible_code(request, s)
    runs = [service.run_view(r, organizer) for r in cs.runs.order_by("created", "id")]
    comp = cs.dataset.phase.competition
    return render(request, "shareval/code_submission.html",
                  {"cs": cs, "comp": comp, "runs": runs, "organizer": organizer,
                   "member": comp.team_of(request.user) == cs.team,
                   "board_link": access.can_view_leaderboard(request.user, cs.dataset)})


@login_required
@require_POST
def rerun(request, s):
    cs, organizer = visible_code(request, s)
    if not organizer:
        raise PermissionDenied("only organizers can re-run a code submission")
    limits = {}
    for k in ("wall_seconds", "cpu_seconds", "memory_mb", "processes", "output_mb"):
        v = request.POST.get(k, "").strip()
        if v:
            try:
                limits[k] = float(v)
            except ValueError:
                messages.error(request, f"{k}: not a number")
                return redirect("code-submission", s=cs.pk)
    try:
        service.rerun(cs, request.user, request.POST.get("stage", "final"), limits)
    except SubmissionError as e:
        messages.error(request, e.message)
    else:
        messages.success(request, "Re-run queued.")
    return redirect("code-submission", s=cs.pk)
