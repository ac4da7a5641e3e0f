"""Accepting code bundles, re-runs by organizers, and what each party may see.

A bundle is refused before anything is queued when: the dataset takes no
code; the sandbox cannot run on this server (code is never run unsandboxed);
the team may not submit (same rules as file uploads, registration,
terms and finalist phases included); a quota is reached (code submissions count
against the dataset's quotas and its run group's like uploaded files); a primary
is asked for where the run group allows none; the dataset's ``concurrent``
limit is reached (queued or running code runs count like runs being scored);
the archive fails the hostile-archive checks; or the manifest is unusable.
"""
from __future__ import annotations

import functools
import logging
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from shareval.sandbox import bwrap
from shareval.sandbox.run import Limits, run_limits as _limits

from shareval.platform.competitions.models import quotas_of
from shareval.platform.submissions import isolate, service as subs
from shareval.platform.submissions.models import Submission
from shareval.platform.coderuns.dispatch import dispatch
from shareval.platform.coderuns.models import CodeDataset, CodeRun, CodeSubmission

log = logging.getLogger("shareval.coderuns")


@functools.lru_cache(maxsize=1)
def sandbox_problem() -> str:
    """'' when code can run here, else the sentence shown to teams and organizers."""
    try:
        user = bwrap.sandbox_user(settings.CODERUN_USER)
    except RuntimeError as e:
        return f"code submissions are refused: {e}"
    problem = bwrap.probe(user)
    if problem:
        return problem
    root = Path(settings.CODERUN_DIR)
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o711)
    if not bwrap.reachable(root, user, enter=True):
        return (f"code submissions are refused: the sandbox user {settings.CODERUN_USER} "
                f"cannot reach SHAREVAL_CODERUN_DIR ({root}); make its parent folders "
                f"world-executable (chmod o+x) or choose another folder")
    return ""


def sandbox_user():
    return bwrap.sandbox_user(settings.CODERUN_USER)


def code_dataset(dataset) -> CodeDataset | None:
    return CodeDataset.objects.filter(dataset=dataset).first()


def accepts_files(dataset) -> bool:
    cd = code_dataset(dataset)
    return cd is None or cd.mode == CodeDataset.BOTH


def run_limits(cd: CodeDataset, requested: dict | None) -> Limits:
    """The dataset's defaults, raised or lowered by the manifest's requests up to
    the dataset's maximum."""
    return _limits(cd.limits, cd.max_limits, requested)


def _quota_full(team, dataset, now):
    """The first quota reached: the dataset's own or its run group's, counted over the
    group's datasets like uploads are (``submissions.service.quota_states``)."""
    for q in quotas_of(dataset):
        start, reset = q.bounds(now)
        counted = q.counted_datasets()
        used = CodeSubmission.objects.filter(team=team, **counted,
                                             created__gte=start).count() + \
            Submission.objects.filter(team=team, **counted, created__gte=start,
                                      state__in=Submission.COUNTED,
                                      code_runs__isnull=True).count()
        if used >= q.limit:
            return "quota reached: " + subs.used_words(q, used)
    return None


def submit_code(user, team, dataset, upload, *, primary: bool = False, description: str = "",
                now=None) -> CodeSubmission:
    """Store and check a bundle; queue its test run (or its final run when the
    dataset has no sample). Raises SubmissionError on refusal."""
    now = now or timezone.now()
    cd = code_dataset(dataset)
    if cd is None:
        raise subs.SubmissionError(400, f"dataset {dataset} takes output files, not code")
    problem = sandbox_problem()
    if problem:
        raise subs.SubmissionError(503, problem)
    subs._check_allowed(user, team, dataset, now)
    if primary and (why := subs.primary_refusal(dataset)):     # a run group's ``from``
        raise subs.SubmissionError(400, why)
    if not team.is_baseline:
        full = _quota_full(team, dataset, now)
        if full:
            raise subs.SubmissionError(429, full)
        subs.check_concurrent(team, dataset)         # the concurrent limit: code runs count too
    original = Path(getattr(upload, "name", "") or "bundle.tgz").name[:255]
    suffix = ".zip" if original.lower().endswith(".zip") else ".tgz"
    name = subs.stored_name("bundle" + suffix)
    size = subs._save(upload, name)
    path = Path(settings.UPLOAD_DIR) / name
    try:
        manifest = unpack_bundle(path, original)
    except subs.SubmissionError:
        path.unlink(missing_ok=True)
        raise
    try:
        cs = _store(user, team, dataset, cd, name=name, original=original, size=size,
                    description=description, primary=primary, manifest=manifest, now=now)
    except subs.SubmissionError:
        path.unlink(missing_ok=True)
        raise
    return cs


def _store(user, team, dataset, cd, *, name, original, size, description, primary,
           manifest, now) -> CodeSubmission:
    """The quota check again and the insert, under the team's lock (as uploads):
    two bundles sent at once cannot both take the last slot."""
    with transaction.atomic():
        subs.lock_team(team.pk)
        if not team.is_baseline:
            full = _quota_full(team, dataset, now)
            if full:
                raise subs.SubmissionError(429, full)
        if primary:
            CodeSubmission.objects.filter(team=team, dataset=dataset, primary=True) \
                .update(primary=False)
        cs = CodeSubmission.objects.create(
            team=team, dataset=dataset, user=user, stored_name=name, original_name=original,
            size=size, description=description[:5000], primary=primary, created=now,
            manifest=manifest)
        stage = CodeRun.TEST if cd.has_sample else CodeRun.FINAL
        queue_run(cs, stage, run_limits(cd, manifest["limits"]))
    return cs


def unpack_bundle(path: Path, original: str, dest: Path | None = None,
                  limits: isolate.Limits | None = None) -> dict:
    """Check the bundle at ``path`` in the limited child (hostile-archive checks and
    the manifest) and, with ``dest``, write its files there; returns the manifest
    (``command``, ``requirements``, ``limits``). Raises SubmissionError with every
    problem, named after ``original``."""
    limits = limits or subs.validation_limits()
    v = isolate.run({"kind": "bundle", "archive": str(path),
                     "dest": str(dest) if dest else None}, limits)
    if v.limit == "busy":
        raise subs.SubmissionError(503, subs.BUSY)
    if v.limit:
        problems = [f"{original}: archive: " +
                    subs.limit_message(v.limit, limits, "unpacking the bundle")]
    elif v.crash:
        log.error("unpacking bundle %s crashed:\n%s", path, v.crash)
        problems = [f"{original}: archive: could not be read as a bundle"]
    else:
        problems = [p.replace(str(path), original) for p in v.problems]
    if problems:
        raise subs.SubmissionError(400, "the bundle was refused", problems)
    return v.result


def queue_run(cs: CodeSubmission, stage: str, limits: Limits, by=None) -> CodeRun:
    """Queue an attempt of ``stage``. Its output is scored like an uploaded file, so
    it may not outgrow the upload limit (the run stops at the lower of the two)."""
    from dataclasses import asdict, replace
    limits = replace(limits, output_mb=min(limits.output_mb, scored_output_mb()))
    last = cs.runs.filter(stage=stage).order_by("-attempt").values_list("attempt", flat=True)
    run = CodeRun.objects.create(code_submission=cs, stage=stage,
                                 attempt=(last[0] + 1) if last else 1,
                                 limits=asdict(limits), requested_by=by)
    transaction.on_commit(lambda: dispatch(run.pk))
    return run


def scored_output_mb() -> int:
    """The largest output the server scores, in MB: the upload limit (at least 1)."""
    return max(1, settings.MAX_UPLOAD_BYTES // 2 ** 20)


def rerun(cs: CodeSubmission, user, stage: str, limits: dict | None = None) -> CodeRun:
    """An organizer runs a stage again, with other limits if given (not capped by
    the dataset's maximum: the organizer decides)."""
    if not cs.dataset.phase.competition.is_organizer(user):
        raise subs.SubmissionError(403, "only organizers can re-run a code submission")
    if stage not in (CodeRun.TEST, CodeRun.FINAL):
        raise subs.SubmissionError(400, "stage is test or final")
    cd = code_dataset(cs.dataset)
    if cd is None:
        raise subs.SubmissionError(400, f"dataset {cs.dataset} no longer takes code")
    banned = Submission.objects.filter(code_runs__code_submission=cs).exclude(disqualified="")
    if banned.exists():                  # a new output would escape the decision
        raise subs.SubmissionError(400, f"an output run of this code submission "
                                        f"({banned.first().pk}) is disqualified; reinstate it "
                                        f"before running the code again")
    base = run_limits(cd, cs.manifest.get("limits"))
    with transaction.atomic():
        return queue_run(cs, stage, Limits.from_dict(limits or {}, base), by=user)


# ---------------------------------------------------------------------------
# What each party sees

def run_view(run: CodeRun, organizer: bool) -> dict:
    """A run as shown to a team (``organizer=False``) or to organizers.

    Test runs: everything. Final runs: teams see only whether it succeeded."""
    base = {"id": run.pk, "stage": run.stage, "attempt": run.attempt,
            "created": run.created.isoformat(), "done": run.done}
    if organizer or run.stage == CodeRun.TEST:
        shown = (lambda text: text) if organizer else hide_server_paths
        return {**base, "state": run.state, "message": shown(run.message),
                "log": shown(run.log), "limits": run.limits, "wall_seconds": run.wall_seconds,
                "cpu_seconds": run.cpu_seconds, "peak_mb": run.peak_mb,
                "output_bytes": run.output_bytes, "env_seconds": run.env_seconds,
                "env_cached": run.env_cached, "score": run.score,
                "submission": str(run.output_submission_id or "") or None,
                **({"internal_error": run.internal_error} if organizer else {})}
    outcome = "running" if not run.done else ("succeeded" if run.succeeded else "failed")
    return {**base, "state": outcome,
            "submission": str(run.output_submission_id or "") or None}


def hide_server_paths(text: str) -> str:
    """A team's view of a log or message: the server's folders (which a failing
    sandbox may name) as ``<server>``."""
    for d in sorted({str(settings.CODERUN_DIR), str(settings.UPLOAD_DIR),
                     str(settings.PRIVATE_DIR), str(settings.RESULTS_DIR), str(settings.HOME),
                     str(Path(bwrap.__file__).resolve().parents[2])}, key=len, reverse=True):
        text = text.replace(d, "<server>")
    return text
