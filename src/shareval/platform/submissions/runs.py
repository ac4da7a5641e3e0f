"""Actions on one run after it is submitted, each written to its history.

Organizers: re-score the run, disqualify it with a reason (off every board,
the reason shown to the team), reinstate it, annotate it (a note for the team
or for organizers only). Teams: take a run off the board or put it back (where
the dataset's ``board.team_visibility`` allows), and correct its fact sheet,
both only until the phase is frozen, like primary flags.

The history (``SubmissionEvent``) is append-only: every action adds an event;
none edits or deletes one.
"""
from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from shareval.platform.submissions import factsheets, queue
from shareval.platform.submissions.models import Job, Submission, SubmissionEvent
from shareval.platform.submissions.service import SubmissionError, _change_note, named_training

ORGANIZER_ACTIONS = ("rescore", "disqualify", "reinstate", "annotate")
TEAM_ACTIONS = ("hide", "show", "factsheet")


def _organizer(sub: Submission, user) -> str:
    if not sub.dataset.phase.competition.is_organizer(user):
        raise SubmissionError(403, "only the competition's organizers can do this")
    return user.get_username()


def disqualify(sub: Submission, user, reason: str) -> None:
    who = _organizer(sub, user)
    reason = (reason or "").strip()[:2000]
    if not reason:
        raise SubmissionError(400, "a disqualification needs a reason (the team sees it)")
    with transaction.atomic():
        Submission.objects.filter(pk=sub.pk).update(disqualified=reason)
        sub.disqualified = reason
        SubmissionEvent.objects.create(submission=sub, state="disqualified",
                                       message=f"disqualified by the organizers ({who}): "
                                               f"{reason}; not shown on leaderboards")


def reinstate(sub: Submission, user, reason: str = "") -> None:
    who = _organizer(sub, user)
    if not sub.disqualified:
        raise SubmissionError(400, "this run is not disqualified")
    with transaction.atomic():
        Submission.objects.filter(pk=sub.pk).update(disqualified="")
        sub.disqualified = ""
        SubmissionEvent.objects.create(submission=sub, state="reinstated",
                                       message=f"reinstated by the organizers ({who})" +
                                               (f": {reason.strip()[:1000]}" if reason.strip()
                                                else ""))


def annotate(sub: Submission, user, note: str, team_sees: bool = False) -> None:
    who = _organizer(sub, user)
    note = (note or "").strip()[:5000]
    if not note:
        raise SubmissionError(400, "an empty note")
    SubmissionEvent.objects.create(submission=sub, state="note", organizer_only=not team_sees,
                                   message=f"note by {who}: {note}")


def rescore(sub: Submission, user) -> None:
    """Score this run again with the current scorer and reference; the new score
    replaces one with the same scorer version and reference (its metrics stay in
    the history's organizer log)."""
    who = _organizer(sub, user)
    if sub.state in (Submission.REJECTED, Submission.CANCELLED):
        raise SubmissionError(400, f"a {sub.state} run is not scored")
    if sub.state in (Submission.VALIDATED, Submission.QUEUED, Submission.RUNNING):
        raise SubmissionError(400, f"this run is {sub.state}: it is being scored already")
    with transaction.atomic():
        if queue.enqueue(sub) is not None:
            return
        version, digest = queue.scorer_key(sub)
        job = Job.objects.get(submission=sub, scorer_version=version, reference_digest=digest)
        Job.objects.filter(pk=job.pk).update(status=Job.QUEUED, token="", attempts=0,
                                             lease_until=None, finished=None)
        old = sub.scores.filter(scorer_version=version, reference_digest=digest).first()
        sub.record(Submission.QUEUED, f"re-scoring requested by the organizers ({who})",
                   log=f"previous score: {old.result.get('metrics') if old else None}")
        transaction.on_commit(lambda: queue.dispatch(job.pk))


def set_on_board(sub: Submission, user, shown: bool, reason: str = "", now=None) -> None:
    now = now or timezone.now()
    comp = sub.dataset.phase.competition
    if not (sub.dataset.board or {}).get("team_visibility") and not comp.is_organizer(user):
        raise SubmissionError(403, "the organizers do not let teams choose which runs this "
                                   "leaderboard shows")
    note = _change_note(sub, user, reason, now)
    with transaction.atomic():
        Submission.objects.filter(pk=sub.pk).update(on_board=shown)
        sub.on_board = shown
        SubmissionEvent.objects.create(
            submission=sub, state="shown" if shown else "hidden",
            message=("put back on the leaderboard" if shown else
                     "taken off the leaderboard by its team") + note)


def edit_factsheet(sub: Submission, user, data: dict, reason: str = "", now=None) -> None:
    now = now or timezone.now()
    note = _change_note(sub, user, reason, now)
    # the canonical file name's training condition holds here as at upload
    data = named_training(sub.original_name, data)
    sheet, problems = factsheets.clean(sub.dataset.phase.competition.factsheet, data,
                                       phase=sub.dataset.phase)
    if problems:
        raise SubmissionError(400, "the fact sheet is incomplete or invalid", problems)
    with transaction.atomic():
        Submission.objects.filter(pk=sub.pk).update(factsheet=sheet)
        sub.factsheet = sheet
        SubmissionEvent.objects.create(submission=sub, state="factsheet",
                                       message="fact sheet updated" + note)
