"""Execute one claimed code run: unpack, sandbox, then the output's way on.

Test run: the output is validated and scored against the public sample's
reference in the limited child process uploads are validated in
(``submissions/isolate.py``), and the score is kept on the run (the team sees
it). A successful test run queues the final run. Final run: the output becomes
an ordinary Submission of the team (validated like an upload, then queued for
scoring), so release rules, leaderboards and rescoring apply unchanged. The
bundle is unpacked into the run's folder by the same child.
"""
from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from shareval.sandbox.bundle import Manifest
from shareval.sandbox.run import Limits
from shareval.sandbox.workspace import Workspace

from shareval.platform.access import visibility as access
from shareval.platform.competitions.models import Phase
from shareval.platform.notifications import mail
from shareval.platform.submissions import isolate, queue as scoring_queue, service as subs
from shareval.platform.submissions.models import Submission, SubmissionEvent, mark_runs
from shareval.platform.submissions.scoring import json_safe
from shareval.platform.coderuns.models import CodeDataset, CodeRun
from shareval.platform.coderuns.service import (
    queue_run, sandbox_problem, sandbox_user, unpack_bundle)

log = logging.getLogger("shareval.coderuns")
LOG_CHARS = 60_000
INTERNAL_ERROR = ("the server failed while running the code (not a fault of the system); "
                  "the organizers can see what went wrong and run it again")


def worker_limits() -> isolate.Limits:
    """The child's limits in a code worker: as for uploads, but a busy moment is
    waited out (nobody waits for an answer)."""
    return subs.validation_limits(slot_wait=settings.VALIDATION_WALL_SECONDS * 4)


def execute(run: CodeRun) -> None:
    """Run ``run`` (already marked running by the queue) and record its outcome."""
    cs = run.code_submission
    cd = CodeDataset.objects.get(dataset=cs.dataset)
    problem = sandbox_problem()
    if problem:
        _finish(run, "error", problem)
        return
    ws = Workspace(Path(settings.CODERUN_DIR), sandbox_user())
    try:
        code = ws.prepare_code(lambda dest: unpack_bundle(cs.path, cs.original_name, dest,
                                                          worker_limits()))
    except subs.SubmissionError as e:
        _finish(run, "error", "the stored bundle can no longer be unpacked:\n" +
                "\n".join(e.problems or [e.message]))
        return
    try:
        rel = cd.sample_input_path if run.stage == CodeRun.TEST else cd.input_path
        digest = cd.sample_digest if run.stage == CodeRun.TEST else cd.input_digest
        input_dir = ws.stage(Path(settings.PRIVATE_DIR) / rel, digest[:32] or "input")
        m = cs.manifest
        manifest = Manifest(list(m["command"]), m.get("requirements", ""), m.get("limits", {}))
        limits = Limits.from_dict(run.limits)
        rep = ws.execute(code, manifest, input_dir, limits)
        r = rep.result
        text = ""
        if rep.env_log and not rep.env_cached:
            text += "--- environment build ---\n" + rep.env_log[-10000:] + "\n"
        text += "--- stdout ---\n" + r.stdout + "\n--- stderr ---\n" + r.stderr
        if rep.output and rep.output.notes:
            text += "\n--- output ---\n" + "\n".join(rep.output.notes)
        fields = dict(env_seconds=rep.env_seconds, env_cached=rep.env_cached,
                      wall_seconds=r.wall_seconds, cpu_seconds=r.cpu_seconds,
                      peak_mb=r.peak_mb, output_bytes=r.output_bytes, log=text[-LOG_CHARS:])
        if r.survivors:
            log.error("code run %s: %d processes outlived the run", run.pk, r.survivors)
        if r.state != "ok":
            _finish(run, r.state, r.message, **fields)
            return
        if run.stage == CodeRun.TEST:
            _finish_test(run, cd, rep.output.path, fields)
        else:
            _finish_final(run, rep.output.path, fields)
    finally:
        Workspace.remove(code.parent)


def _finish(run: CodeRun, state: str, message: str, **fields) -> None:
    CodeRun.objects.filter(pk=run.pk).update(state=state, message=message[:5000],
                                             finished=timezone.now(), **fields)
    out = fields.get("output_submission")
    if out is not None:              # its resources join the board (no signal for update)
        mark_runs([out.pk])
    if state != CodeRun.OK:          # no output to score: mailed like a failed upload
        pk = run.pk
        transaction.on_commit(lambda: mail.code_run_failed(
            CodeRun.objects.select_related("code_submission__team",
                                           "code_submission__dataset__phase__competition")
            .get(pk=pk)))


def _finish_test(run: CodeRun, cd: CodeDataset, output: Path, fields: dict) -> None:
    ref = Path(settings.PRIVATE_DIR) / cd.sample_reference_path \
        if cd.sample_reference_path else None
    options = {k: v for k, v in cd.dataset.task.options.items() if k != "plot"}
    limits = worker_limits()
    v = isolate.run({"kind": "score", "task": cd.dataset.task.registry_task.name,
                     "submission": str(output), "reference": str(ref) if ref else None,
                     "options": options}, limits, env=_scorer_env())
    if v.crash or v.limit == "busy":
        log.error("checking the output of code run %s failed:\n%s", run.pk, v.crash or "busy")
        _finish(run, "error", INTERNAL_ERROR, internal_error=v.crash or subs.BUSY, **fields)
        return
    if v.limit or v.problems:
        msg = "\n".join(v.problems) if v.problems else \
            "output: file: " + subs.limit_message(v.limit, limits, "checking the output")
        msg = msg.replace(str(output), "output").replace(str(ref), "<sample reference>")
        _finish(run, CodeRun.INVALID, "the output did not pass validation:\n" + msg[:4000],
                **fields)
        return
    score = v.result.get("score")
    _finish(run, CodeRun.OK, "finished; output valid" + ("" if score else " (no sample "
                                                                            "reference)"),
            score=json_safe(score) if score else None, **fields)
    cs = run.code_submission
    if not cs.runs.filter(stage=CodeRun.FINAL).exists():
        with transaction.atomic():
            queue_run(cs, CodeRun.FINAL, Limits.from_dict(run.limits))


def _scorer_env() -> dict[str, str]:
    """What a program task's scorer needs in the child (it runs in the sandbox too)."""
    return {"SHAREVAL_CODERUN_DIR": str(settings.CODERUN_DIR),
            "SHAREVAL_CODERUN_USER": settings.CODERUN_USER}


class _File:
    """An output file handed to the upload path (name + chunks)."""

    def __init__(self, path: Path, name: str):
        self.path, self.name = path, name

    def chunks(self):
        with open(self.path, "rb") as f:
            yield from iter(lambda: f.read(1 << 20), b"")


def _finish_final(run: CodeRun, output: Path, fields: dict) -> None:
    cs = run.code_submission
    # the name the team sees carries nothing the system chose but a format it is read as
    original = f"output-of-{str(cs.pk)[:8]}{subs.known_suffix(output.name)}"
    name = subs.stored_name(original)
    try:
        size = subs._save(_File(output, original), name)
    except subs.SubmissionError:            # scored like an upload: the upload limit holds
        _finish(run, "output", f"stopped: the output is larger than the "
                               f"{settings.MAX_UPLOAD_BYTES // 2 ** 20} MB the server scores "
                               f"(its upload limit, SHAREVAL_MAX_UPLOAD_MB)", **fields)
        return
    path = Path(settings.UPLOAD_DIR) / name
    try:
        problems, warnings = subs._validate(cs.dataset, path, original, worker_limits())
    except subs.SubmissionError as e:
        path.unlink(missing_ok=True)
        _finish(run, CodeRun.INVALID, e.message, **fields)
        return
    if problems:
        path.unlink(missing_ok=True)
        _finish(run, CodeRun.INVALID, "the output did not pass validation:\n" +
                "\n".join(problems[:50]), **fields)
        return
    with transaction.atomic():
        subs.lock_team(cs.team_id)          # one primary per group, as uploads and flags
        # the primary asked for when the bundle came: granted only while the team could
        # still flag it itself (phase open, results unreleased) and the group allows it
        # (read now: a run may take hours, and the phase be released meanwhile)
        frozen = access.frozen(Phase.objects.get(pk=cs.dataset.phase_id))
        refusal = subs.primary_refusal(cs.dataset) if cs.primary else ""
        primary = cs.primary and not frozen and not refusal
        kind = Submission.PRIMARY if primary else Submission.CONTRASTIVE
        if primary:
            subs._demote_primary(cs.team, cs.dataset, " (a code run's output)")
        sub = Submission.objects.create(
            team=cs.team, dataset=cs.dataset, user=cs.user, stored_name=name,
            original_name=original, size=size, kind=kind, state=Submission.VALIDATED,
            description=(f"output of code submission {cs.pk} (final run, attempt "
                         f"{run.attempt})\n{cs.description}")[:5000], warnings=warnings)
        SubmissionEvent.objects.create(submission=sub, state="submitted",
                                       message=f"output of code submission {cs.original_name}")
        sub.record(Submission.VALIDATED, "passed validation")
        if cs.primary and not primary:
            SubmissionEvent.objects.create(
                submission=sub, state="contrastive",
                message="contrastive, not primary: " + (
                    refusal or f"phase {cs.dataset.phase.slug} is closed (or its results "
                               f"are released) and its runs are final"))
        _finish(run, CodeRun.OK, "finished; output valid and queued for scoring",
                output_submission=sub, **fields)
        scoring_queue.enqueue(sub)
