"""Accepting uploads: size check, UUID storage, validation, quota, primary flag.

Quotas and the primary flag follow the dataset's run group when it has one
(``competitions.models.groups``): runs of all its datasets count, one primary per
team in the group, only its ``from`` datasets may hold it. A canonical MATERIAL
archive name sets the kind (``chosen_kind``).

The order matters: the file is validated before any lock is taken (validation
may read a large reference); the quota is then checked and the submission
created in one transaction that locks the team row (PostgreSQL) or holds
SQLite's write lock (IMMEDIATE transactions), so concurrent uploads from one
team can never exceed the quota. Rejected files are deleted and do not count
against the quota, but a team may have at most MAX_REJECTED_PER_HOUR of them
in an hour. Validation runs in a limited child process (``isolate``), so a
hostile file costs the web process nothing but the wait.
"""
from __future__ import annotations

import datetime as dt
import logging
import uuid
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from shareval.platform import transient
from shareval.platform.competitions import catalogs
from shareval.platform.access import visibility as access
from shareval.platform.access import eligibility
from shareval.formats.archive import parse_archive_name
from shareval.platform.competitions.models import Dataset, Quota, RunGroup, Team, quotas_of
from shareval.platform.submissions import factsheets, hooks, isolate, queue
from shareval.platform.submissions.models import Submission, SubmissionEvent
from shareval.platform.submissions.scoring import rename_paths

log = logging.getLogger("shareval.submissions")

# Suffixes kept on stored files, since loaders dispatch on them; anything else
# is stored without a suffix. The original name is kept only as a label.
SUFFIXES = (".tar.gz", ".tgz", ".json", ".jsonl", ".tsv", ".csv", ".txt", ".trec", ".run",
            ".qrels", ".zip")


class SubmissionError(Exception):
    """A refusal with a status code and a list of problems for the participant."""

    def __init__(self, status: int, message: str, problems: list[str] | None = None,
                 next_slot: dt.datetime | None = None, submission=None):
        super().__init__(message)
        self.status, self.message = status, message
        self.problems = problems or []
        self.next_slot = next_slot
        self.submission = submission


@dataclass
class QuotaState:
    quota: Quota
    used: int
    window_start: dt.datetime
    next_slot: dt.datetime | None      # when one more submission becomes possible

    @property
    def left(self) -> int:
        return max(0, self.quota.limit - self.used)

    def describe(self) -> str:
        s = used_words(self.quota, self.used)
        if self.left == 0:
            s += (f"; next slot opens {self.next_slot:%Y-%m-%d %H:%M %Z}" if self.next_slot
                  else "; no more submissions in this phase")
        return s


def used_words(q: Quota, used: int) -> str:
    """'3 of 5 per calendar week used', or for a run group's quota
    '5 of 5 runs used for Language 1A (e2e-1a-eval, clir-1a-eval) in this phase'."""
    if q.group_id:
        return f"{used} of {q.limit} runs used {q.group_words()} {q.window_words()}"
    return f"{used} of {q.describe()} used"


def quota_states(team: Team, dataset: Dataset, now=None) -> list[QuotaState]:
    now = now or timezone.now()
    out = []
    for q in quotas_of(dataset):      # the dataset's own and its run group's
        start, reset = q.bounds(now)
        # a run leaves a rolling window at the instant its next slot names (made exactly
        # ``days`` ago: out); a calendar week or the phase includes its first instant
        since = {"created__gt" if q.window == Quota.ROLLING else "created__gte": start}
        counted = Submission.objects.filter(team=team, **q.counted_datasets(),
                                            **since, state__in=Submission.COUNTED)
        others = 0
        for runs in hooks.quota_runs:           # code bundles, counted as code runs count them
            n, stand_for = runs(team, q.counted_datasets(), since)
            others += n
            counted = counted.exclude(pk__in=stand_for)
        used = counted.count() + others
        nxt = None
        if used >= q.limit:
            if q.window == Quota.WEEK:
                nxt = reset
            elif q.window == Quota.ROLLING:
                # the (used - limit + 1)-th oldest counted run leaves the window first
                oldest = list(counted.order_by("created").values_list("created", flat=True)
                              [:used - q.limit + 1])
                nxt = oldest[-1] + dt.timedelta(days=q.days)
        if nxt is not None:
            nxt = nxt.astimezone(dataset.phase.competition.tz)
        out.append(QuotaState(q, used, start, nxt))
    return out


def _exhausted(states: list[QuotaState]) -> QuotaState | None:
    full = [s for s in states if s.left == 0]
    if not full:
        return None
    # report the quota that frees up last: that is when a submission is possible
    return max(full, key=lambda s: s.next_slot or dt.datetime.max.replace(tzinfo=dt.timezone.utc))


def known_suffix(name: str) -> str:
    """The suffix loaders dispatch on, if ``name`` has one of SUFFIXES; else ''."""
    low = name.lower()
    return next((s for s in SUFFIXES if low.endswith(s)), "")


def stored_name(original: str) -> str:
    return uuid.uuid4().hex + known_suffix(original)


def _save(upload, name: str) -> int:
    path = Path(settings.UPLOAD_DIR) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    size = 0
    with open(path, "xb") as f:
        for chunk in upload.chunks():
            size += len(chunk)
            if size > settings.MAX_UPLOAD_BYTES:
                break
            f.write(chunk)
    path.chmod(0o600)
    if size > settings.MAX_UPLOAD_BYTES:
        path.unlink()
        raise SubmissionError(413, f"file too large: the limit is "
                                   f"{settings.MAX_UPLOAD_BYTES // 2**20} MB")
    return size


def _check_allowed(user, team: Team, dataset: Dataset, now) -> None:
    comp = dataset.phase.competition
    if team.competition_id != comp.pk:
        raise SubmissionError(400, "team and dataset belong to different competitions")
    organizer = comp.is_organizer(user)
    if team.is_baseline:
        if not organizer:
            raise SubmissionError(403, "only organizers submit baselines")
        return
    if comp.team_of(user) != team:
        raise SubmissionError(403, "you are not an approved member of this team")
    if team.status != Team.APPROVED:
        raise SubmissionError(403, team_refusal(team))
    if not dataset.phase.is_open(now):
        raise SubmissionError(403, f"phase {dataset.phase.slug} is not open for submissions "
                                   f"({dataset.phase.start:%Y-%m-%d %H:%M} to "
                                   f"{dataset.phase.end:%Y-%m-%d %H:%M} UTC)")
    if access.frozen(dataset.phase, now):      # a blind phase whose results are out
        raise SubmissionError(403, f"phase {dataset.phase.slug}: results are released, "
                                   f"its runs are final")
    # registration, terms and finalist-only phases
    why = eligibility.participation_refusal(user, comp) or \
        eligibility.phase_refusal(team, dataset.phase)
    if why:
        raise SubmissionError(403, why)


def team_refusal(team: Team) -> str:
    if team.status == Team.PENDING:
        return (f"team {team.name} is waiting for the organizers' approval; it can submit "
                f"once they approve it")
    return f"team {team.name} was not approved by the organizers and cannot submit"


def chosen_kind(original: str, primary: bool | None) -> bool:
    """Whether the upload is primary: a canonical archive name (plan 8.2.1.2) says so by
    its SubmissionType; ``primary`` is the uploader's choice (None: none made), refused
    when it contradicts the name."""
    fields = parse_archive_name(original)
    named = fields.get("type") if isinstance(fields, dict) else None
    if named is None:
        return bool(primary)
    if primary is not None and primary != (named == Submission.PRIMARY):
        chose = Submission.PRIMARY if primary else Submission.CONTRASTIVE
        raise SubmissionError(400, f"{original}: the file name says {named} but the upload "
                                   f"was marked {chose}: rename the file or change the choice")
    return named == Submission.PRIMARY


def named_training(original: str, factsheet: dict | None) -> dict | None:
    """The fact sheet with the training condition a canonical archive name gives
    (plan 8.2.1.2 ``<TrainingCondition>``) when the sheet leaves it out; a sheet
    that says otherwise is refused, so the name and the sheet never disagree."""
    fields = parse_archive_name(original)
    named = fields.get("condition") if isinstance(fields, dict) else None
    if named is None:
        return factsheet
    given = str((factsheet or {}).get("training") or "").strip()
    if given and given != named:
        raise SubmissionError(400, f"{original}: the file name says training condition "
                                   f"{named} but the fact sheet says {given}: rename the file "
                                   f"or change the sheet")
    return {**(factsheet or {}), "training": named}


def primary_refusal(dataset: Dataset) -> str:
    """Why a run of ``dataset`` cannot be primary (its run group's ``from``), or ''."""
    group = RunGroup.objects.for_dataset(dataset)
    return group.contrastive_only(dataset) if group else ""


def submit(user, team: Team, dataset: Dataset, upload, *, primary: bool | None = None,
           description: str = "", factsheet: dict | None = None, now=None) -> Submission:
    """Store, validate and queue one upload; raises SubmissionError on refusal.
    ``primary``: True or False when the uploader chose the kind, None when not."""
    now = now or timezone.now()
    _check_allowed(user, team, dataset, now)
    original = Path(getattr(upload, "name", "") or "upload").name[:255]
    primary = chosen_kind(original, primary)
    factsheet = named_training(original, factsheet)
    if primary and (why := primary_refusal(dataset)):
        raise SubmissionError(400, why)
    if not all(accepts(dataset) for accepts in hooks.accepts_files):
        raise SubmissionError(400, f"dataset {dataset} takes code, not output files: upload "
                                   f"a bundle (shareval submit --code DIR)")
    sheet, sheet_problems = factsheets.clean(dataset.phase.competition.factsheet, factsheet,
                                             required=not team.is_baseline, phase=dataset.phase)
    if sheet_problems:
        raise SubmissionError(400, "the fact sheet is incomplete or invalid", sheet_problems)
    full = None if team.is_baseline else _exhausted(quota_states(team, dataset, now))
    if full:                       # early refusal; re-checked under the lock below
        raise SubmissionError(429, "quota reached: " + full.describe(), next_slot=full.next_slot)
    if not team.is_baseline:
        check_concurrent(team, dataset)
    if not team.is_baseline:
        _check_rejection_rate(team, now)
    name = stored_name(original)
    size = _save(upload, name)
    try:
        problems, warnings = _validate(dataset, Path(settings.UPLOAD_DIR) / name, original)
    except SubmissionError:
        (Path(settings.UPLOAD_DIR) / name).unlink(missing_ok=True)
        raise
    if problems:
        (Path(settings.UPLOAD_DIR) / name).unlink(missing_ok=True)
        with transaction.atomic():
            sub = Submission.objects.create(team=team, dataset=dataset, user=user,
                                            stored_name="", original_name=original, size=size,
                                            description=description[:5000],
                                            state=Submission.REJECTED, problems=problems,
                                            created=now)
            SubmissionEvent.objects.create(submission=sub, state=Submission.REJECTED,
                                           message="did not pass validation; not counted "
                                                   "against the quota")
        raise SubmissionError(400, "the file did not pass validation", problems, submission=sub)
    try:
        sub = transient.retry(lambda: _store(
            user, team, dataset, name=name, original=original, size=size,
            description=description, primary=primary, warnings=warnings, sheet=sheet,
            now=now))
    except SubmissionError:
        (Path(settings.UPLOAD_DIR) / name).unlink(missing_ok=True)
        raise
    return sub


def lock_team(team_id: int) -> None:
    """Serialize a team's quota checks and primary changes (inside a transaction).
    FOR NO KEY UPDATE: it must not block the foreign-key checks of transactions
    that insert rows naming the team (a worker storing a score and its board mark),
    or the two deadlock (FOR UPDATE did, under 50 concurrent uploads)."""
    Team.objects.select_for_update(no_key=True).filter(pk=team_id).first()


def _store(user, team: Team, dataset: Dataset, *, name: str, original: str, size: int,
           description: str, primary: bool, warnings: list[str], sheet: dict,
           now) -> Submission:
    """The quota check and the insert, under the team's lock (one transaction)."""
    with transaction.atomic():
        lock_team(team.pk)
        full = None if team.is_baseline else _exhausted(quota_states(team, dataset, now))
        if full:
            raise SubmissionError(429, "quota reached: " + full.describe(),
                                  next_slot=full.next_slot)
        if not team.is_baseline:
            check_concurrent(team, dataset)
        demoted = _demote_primary(team, dataset) if primary else []
        sub = Submission.objects.create(
            team=team, dataset=dataset, user=user, stored_name=name, original_name=original,
            size=size, description=description[:5000], state=Submission.VALIDATED,
            kind=Submission.PRIMARY if primary else Submission.CONTRASTIVE,
            warnings=warnings, created=now, factsheet=sheet)
        SubmissionEvent.objects.create(submission=sub, state="submitted", at=now,
                                       message=f"{original} ({size} bytes) uploaded")
        sub.record(Submission.VALIDATED, "passed validation" +
                   (f" with {len(warnings)} warning{'s' if len(warnings) != 1 else ''}"
                    if warnings else ""))
        _record_replaced(sub, demoted)
        queue.enqueue(sub)
    return sub


PENDING = (Submission.VALIDATED, Submission.QUEUED, Submission.RUNNING)


def check_concurrent(team: Team, dataset: Dataset) -> None:
    """The dataset's ``concurrent`` limit: runs of the team not yet scored or failed,
    uploaded files and code submissions' runs (queued or running) alike."""
    if not dataset.concurrent:
        return
    n = Submission.objects.filter(team=team, dataset=dataset, state__in=PENDING).count() + \
        sum(pending(team, dataset) for pending in hooks.pending_runs)   # code runs too
    if n >= dataset.concurrent:
        raise SubmissionError(429, f"too many runs at once: {n} of team {team.name}'s runs on "
                                   f"{dataset.phase.slug}/{dataset.slug} are still queued or "
                                   f"being scored (limit {dataset.concurrent} at a time); "
                                   f"submit again when one of them is scored")


REJECTION_WINDOW = dt.timedelta(hours=1)


def _check_rejection_rate(team: Team, now) -> None:
    """At most MAX_REJECTED_PER_HOUR rejected uploads per team and hour are validated;
    a rejection made exactly an hour ago has left the hour (the slot the refusal names)."""
    since = now - REJECTION_WINDOW
    recent = Submission.objects.filter(team=team, state=Submission.REJECTED, created__gt=since)
    limit = settings.MAX_REJECTED_PER_HOUR
    if recent.count() >= limit:
        oldest = recent.order_by("created").values_list("created", flat=True)[0]
        nxt = (oldest + REJECTION_WINDOW).astimezone(team.competition.tz)
        raise SubmissionError(429, f"too many rejected uploads: {limit} in the last hour; "
                                   f"check files with `shareval validate` before uploading",
                              next_slot=nxt)


LIMIT_MESSAGES = {
    "memory": "{what} needed more than {memory} MB of memory (the server's limit)",
    "cpu": "{what} needed more than {cpu} s of CPU time (the server's limit)",
    "time": "{what} did not finish within {wall:.0f} s (the server's limit)",
}
BUSY = "the server is busy validating other uploads; try again in a few minutes"


def validation_limits(**changes) -> isolate.Limits:
    """The limits of the child that reads participants' files (``changes``: other values)."""
    return isolate.Limits(**{"memory_mb": settings.VALIDATION_MEMORY_MB,
                             "cpu_seconds": settings.VALIDATION_CPU_SECONDS,
                             "wall_seconds": settings.VALIDATION_WALL_SECONDS,
                             "unpacked_mb": settings.MAX_UNPACKED_MB,
                             "slots": settings.VALIDATION_SLOTS,
                             "nice": settings.BACKGROUND_NICE, **changes})


def limit_message(limit: str, limits: isolate.Limits, what: str = "validation") -> str:
    """The sentence for a child that hit ``limit`` ("memory", "cpu" or "time")."""
    return LIMIT_MESSAGES[limit].format(what=what, memory=limits.memory_mb,
                                        cpu=limits.cpu_seconds, wall=limits.wall_seconds)


def _validate(dataset: Dataset, path: Path, original: str,
              limits: isolate.Limits | None = None) -> tuple[list[str], list[str]]:
    task = dataset.task.registry_task
    ref = dataset.reference_file
    limits = limits or validation_limits()

    def named(text):
        return rename_paths(text, path, original, ref)
    v = isolate.validate(task.name, str(path), str(ref) if ref is not None else None, limits,
                         catalog=catalogs.phase_catalog(dataset), name=original)
    if v.limit == "busy":
        raise SubmissionError(503, BUSY)
    if v.limit:
        return [f"{original}: file: " + limit_message(v.limit, limits)], []
    if v.crash:
        log.error("validator crashed on %s:\n%s", path, v.crash)
        return [f"{original}: file: could not be read as a {task.name} submission"], []
    if v.problems:
        return [named(p) for p in v.problems], []
    return [], [named(w) for w in v.warnings]


def group_primary(team: Team, group: RunGroup) -> Submission | None:
    """The team's primary run in ``group`` (one at most, over all its datasets)."""
    return Submission.objects.filter(team=team, dataset__in=group.datasets.all(),
                                     kind=Submission.PRIMARY).first()


def _demote_primary(team: Team, dataset: Dataset, note: str = "") -> list[Submission]:
    """Make the team's primary runs of ``dataset`` (and of the other datasets of its run
    group: one primary per group) contrastive; returns them. Under the team's lock."""
    group = RunGroup.objects.for_dataset(dataset)
    datasets = list(group.datasets.all()) if group else [dataset]
    old_runs = list(Submission.objects.filter(team=team, dataset__in=datasets,
                                              kind=Submission.PRIMARY).select_related("dataset"))
    for old in old_runs:
        old.kind = Submission.CONTRASTIVE
        old.save(update_fields=["kind"])
        where = (f" (a run of {dataset.slug}: one primary per team in {group.name})"
                 if old.dataset_id != dataset.pk else "")
        SubmissionEvent.objects.create(submission=old, state="contrastive",
                                       message="no longer primary: another run was made "
                                               "primary" + where + note)
    return old_runs


def _record_replaced(sub: Submission, demoted: list[Submission]) -> None:
    """The new primary's history names the runs of other datasets it replaced."""
    for old in demoted:
        if old.dataset_id != sub.dataset_id:
            SubmissionEvent.objects.create(
                submission=sub, state="primary",
                message=f"primary in place of run {old.pk} of {old.dataset.slug} "
                        f"(one primary per team in the run group)")


def _change_note(sub: Submission, user, reason: str, now) -> str:
    """Who may flag or cancel a run now, and what the history says about it.

    Primary flags and cancellations decide what leaderboards read, so a team
    may change them only until its phase closes (or, blind phases, until
    release); organizers may change them any time, with a reason once closed."""
    phase = sub.dataset.phase
    comp = phase.competition
    organizer = comp.is_organizer(user)
    member = comp.team_of(user) == sub.team
    reason = (reason or "").strip()[:1000]
    if not (organizer or member):
        raise SubmissionError(403, "you are not an approved member of this team")
    if access.frozen(phase, now):
        if not organizer:
            raise SubmissionError(403, f"phase {phase.slug} is closed (or its results are "
                                       f"released): its runs are final; only the organizers "
                                       f"can change them")
        if not reason:
            raise SubmissionError(400, "the phase is closed: an organizer's change needs a "
                                       "reason, recorded in the run's history")
    if organizer and not member:
        return f" (by organizer {user.get_username()}" + (f": {reason})" if reason else ")")
    return f" ({reason})" if reason else ""


def _reread(sub: Submission) -> None:
    """The run's state and kind as stored now (under the team's lock)."""
    sub.state, sub.kind = Submission.objects.values_list("state", "kind").get(pk=sub.pk)


def make_primary(sub: Submission, user, *, reason: str = "", now=None) -> None:
    now = now or timezone.now()
    if sub.state in (Submission.REJECTED, Submission.CANCELLED):
        raise SubmissionError(400, f"a {sub.state} submission cannot be primary")
    note = _change_note(sub, user, reason, now)
    if why := primary_refusal(sub.dataset):
        raise SubmissionError(400, why)
    named = parse_archive_name(sub.original_name)
    if isinstance(named, dict) and named.get("type") == Submission.CONTRASTIVE and \
            not sub.dataset.phase.competition.is_organizer(user):
        # the name is the run's record (plan 8.2.1.2): a team cannot relabel it afterwards
        raise SubmissionError(400, f"{sub.original_name}: the file name says contrastive: a "
                                   f"primary run is uploaded under a name that says primary")
    with transaction.atomic():
        lock_team(sub.team_id)
        _reread(sub)                  # a cancellation may have come in since it was read
        if sub.state in (Submission.REJECTED, Submission.CANCELLED):
            raise SubmissionError(400, f"a {sub.state} submission cannot be primary")
        demoted = [old for old in _demote_primary(sub.team, sub.dataset, note)
                   if old.pk != sub.pk]
        sub.kind = Submission.PRIMARY
        sub.save(update_fields=["kind"])
        SubmissionEvent.objects.create(submission=sub, state="primary",
                                       message="made primary" + note)
        _record_replaced(sub, demoted)


def cancel(sub: Submission, user, *, reason: str = "", now=None) -> None:
    """Withdraw a run from leaderboards; it still counts against the quota."""
    now = now or timezone.now()
    if sub.state in (Submission.REJECTED, Submission.CANCELLED):
        raise SubmissionError(400, f"submission is already {sub.state}")
    note = _change_note(sub, user, reason, now)
    with transaction.atomic():
        lock_team(sub.team_id)
        _reread(sub)                  # flagged primary, or cancelled, since it was read
        if sub.state in (Submission.REJECTED, Submission.CANCELLED):
            raise SubmissionError(400, f"submission is already {sub.state}")
        if sub.kind == Submission.PRIMARY:
            sub.kind = Submission.CONTRASTIVE
            sub.save(update_fields=["kind"])
        sub.record(Submission.CANCELLED, "cancelled (still counted in the quota)" + note)


def rescore(task) -> int:
    """Queue every valid submission of a competition task lacking a score for the
    current scorer version and reference; returns how many jobs were queued.
    Cancelled runs are not re-scored (they are off the leaderboards); the
    earlier scores stay stored, marked not current once the new one lands."""
    n = 0
    subs = Submission.objects.filter(dataset__task=task).exclude(
        state__in=(Submission.REJECTED, Submission.CANCELLED)).select_related("dataset__task")
    for sub in subs:
        with transaction.atomic():
            if queue.enqueue(sub) is not None:
                n += 1
    return n
