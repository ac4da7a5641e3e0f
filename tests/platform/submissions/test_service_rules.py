"""The submission rules of ``submissions/service.py`` (docs/platform.md and
docs/organizers.md: quotas, rejected uploads, concurrent runs, primary and
contrastive runs, final runs, who may submit), checked on counts, timestamps,
states, the history and the exact refusal. This file: uploads, rejections,
limits and quotas; ``test_service_refusal_rules.py``: who may submit, flags,
cancellation, final runs.

Validation runs in a child process in production (``isolate``); here a stand-in
records what it was asked and answers a chosen verdict, so each test costs a
few inserts: with its second part, the file that owns ``service.py`` in
``bench/mutate.py``. One test (in the second part) validates for real.
"""
from __future__ import annotations

import datetime as dt
import re
from functools import partial
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from shareval.platform.competitions.models import Quota, Team
from shareval.platform.submissions import isolate, service
from shareval.platform.submissions.models import Job, Submission, SubmissionEvent
from shareval.platform.submissions.service import SubmissionError

from .. import factories
from ..factories import Upload
from ..rules_world import H, T0, rw, run  # noqa: F401  (rw: fixture)

BODY = "item\tlabel\ni00\tpos\n"


@pytest.fixture
def val(monkeypatch):
    """The validator stand-in: ``val.verdict`` is what it answers, ``val.calls`` what
    it was asked (with the stored file's bytes)."""
    class V:
        verdict = isolate.Verdict()
        calls: list[dict] = []

    def fake(task, path, reference, limits, catalog=None, name=None):
        V.calls.append({"task": task, "path": path, "reference": reference,
                        "limits": limits, "catalog": catalog, "name": name,
                        "data": Path(path).read_bytes()})
        return V.verdict
    monkeypatch.setattr(service.isolate, "validate", fake)
    V.calls = []
    return V


def up(name="run.tsv", body=BODY):
    return Upload(name, body)


# the rule tests' runs: at T0, the one-line BODY unless a test uploads another file
submit = partial(factories.submit, at=T0, upload=up())


def refusal(fn, *a, **kw) -> SubmissionError:
    with pytest.raises(SubmissionError) as e:
        fn(*a, **kw)
    return e.value


def stored() -> set:
    d = Path(django_settings.UPLOAD_DIR)
    return set(d.iterdir()) if d.exists() else set()


# --- an accepted upload -------------------------------------------------------

def test_accepted_upload_is_stored_validated_queued_and_timestamped(rw, val):
    w = rw
    before = stored()
    assert submit(w, at=T0 - H).description == ""
    sub = submit(w, description="d" * 6000, upload=up("dir/My.Run.TSV"))
    assert sub.state == Submission.QUEUED and sub.kind == Submission.CONTRASTIVE
    assert sub.created == T0 and sub.user == w["users"]["alice"]
    assert sub.original_name == "My.Run.TSV" and sub.size == len(BODY)
    assert len(sub.description) == 5000
    assert re.fullmatch(r"[0-9a-f]{32}\.tsv", sub.stored_name)
    (new,) = {p for p in stored() - before if p.name == sub.stored_name}
    assert new.name == sub.stored_name and new.read_text() == BODY
    assert new.stat().st_mode & 0o777 == 0o600
    call = val.calls[-1]
    assert call["task"] == "classification" and call["reference"] is None
    assert call["data"] == BODY.encode() and call["path"] == str(new)
    assert call["name"] == "My.Run.TSV"           # its own name, checked as the CLI checks it
    assert call["limits"].memory_mb == django_settings.VALIDATION_MEMORY_MB
    assert call["limits"].cpu_seconds == django_settings.VALIDATION_CPU_SECONDS
    assert call["limits"].wall_seconds == django_settings.VALIDATION_WALL_SECONDS
    assert call["limits"].unpacked_mb == django_settings.MAX_UNPACKED_MB
    assert call["limits"].slots == django_settings.VALIDATION_SLOTS
    events = [(e.state, e.message) for e in SubmissionEvent.objects.filter(submission=sub)]
    assert events[:2] == [("submitted", f"My.Run.TSV ({len(BODY)} bytes) uploaded"),
                          ("validated", "passed validation")]
    assert events[2][0] == "queued"
    assert SubmissionEvent.objects.get(submission=sub, state="submitted").at == T0
    assert Job.objects.filter(submission=sub).count() == 1


def test_validation_slots_are_the_servers_setting(rw, val, settings):
    settings.VALIDATION_SLOTS = 3                 # not the Limits default (2)
    submit(rw)
    assert val.calls[-1]["limits"].slots == 3


def test_names_are_cut_and_a_nameless_upload_is_called_upload(rw, val):
    sub = submit(rw, upload=up("n" * 300 + ".tsv"))
    assert sub.original_name == "n" * 255
    nameless = Upload("", BODY)
    sub = submit(rw, upload=nameless, at=T0 + H)
    assert sub.original_name == "upload" and "." not in sub.stored_name


def test_the_reference_and_the_catalog_are_given_to_the_validator(rw, val, monkeypatch):
    from shareval.platform.competitions import catalogs
    ds = rw["ds"]["dev"]
    ds.reference_path = "gold/dev.tsv"
    ds.save()
    monkeypatch.setattr(catalogs, "phase_catalog", lambda d: ("cat.txt", f"{d.slug} v1"))
    ref = str(Path(django_settings.PRIVATE_DIR) / "gold/dev.tsv")
    val.verdict = isolate.Verdict(problems=[f"{ref}:3: unknown item"])
    e = refusal(submit, rw)
    assert e.problems == ["<reference>:3: unknown item"]
    (call,) = val.calls
    assert call["reference"] == ref and call["catalog"] == ("cat.txt", "dev v1")


def test_warnings_are_kept_with_their_count_and_paths_renamed(rw, val):
    val.verdict = isolate.Verdict(warnings=[f"{django_settings.UPLOAD_DIR}/x: w1", "w2"])
    sub = submit(rw, upload=up("a.json"))
    assert sub.warnings == ["<server>/x: w1", "w2"]
    assert sub.stored_name.endswith(".json")
    assert SubmissionEvent.objects.get(submission=sub, state="validated").message == \
        "passed validation with 2 warnings"


def test_one_warning_is_counted_in_the_singular(rw, val):
    val.verdict = isolate.Verdict(warnings=["w1"])
    sub = submit(rw, upload=up("a.json"))
    assert SubmissionEvent.objects.get(submission=sub, state="validated").message == \
        "passed validation with 1 warning"


def test_stored_name_keeps_known_suffixes_only():
    assert service.stored_name("A.TAR.GZ").endswith(".tar.gz")
    assert service.stored_name("a.trec").endswith(".trec")
    assert re.fullmatch(r"[0-9a-f]{32}", service.stored_name("evil.sh"))
    assert service.stored_name("x") != service.stored_name("x")


def test_primary_flag_demotes_the_earlier_primary_with_a_history(rw, val):
    w = rw
    first = submit(w, primary=True)
    assert first.kind == Submission.PRIMARY
    second = submit(w, user="carol", primary=True, at=T0 + H)
    first.refresh_from_db()
    assert (first.kind, second.kind) == (Submission.CONTRASTIVE, Submission.PRIMARY)
    assert SubmissionEvent.objects.get(submission=first, state="contrastive").message == \
        "no longer primary: another run was made primary"
    third = submit(w, at=T0 + 2 * H)
    second.refresh_from_db()
    assert (second.kind, third.kind) == (Submission.PRIMARY, Submission.CONTRASTIVE)
    # another team's primary is untouched
    b = submit(w, user="bob", team="Team B", primary=True)
    second.refresh_from_db()
    assert second.kind == b.kind == Submission.PRIMARY


# --- rejected uploads ---------------------------------------------------------

def test_a_rejected_upload_is_kept_without_its_file_and_not_counted(rw, val):
    w = rw
    before = stored()
    val.verdict = isolate.Verdict(problems=[f"{django_settings.UPLOAD_DIR}/f.tsv:2: bad",
                                            "other"])
    e = refusal(submit, w, upload=up("mine.tsv"), description="why" + "y" * 6000)
    assert (e.status, e.message) == (400, "the file did not pass validation")
    assert e.problems == ["<server>/f.tsv:2: bad", "other"]
    sub = e.submission
    assert sub.state == Submission.REJECTED and sub.problems == e.problems
    assert sub.stored_name == "" and sub.created == T0 and len(sub.description) == 5000
    assert sub.description.startswith("whyy") and sub.user == w["users"]["alice"]
    assert sub.original_name == "mine.tsv" and sub.size == len(BODY)
    assert stored() == before
    assert [(x.state, x.message) for x in sub.events.all()] == [
        ("rejected", "did not pass validation; not counted against the quota")]
    assert not Job.objects.exists()
    (st,) = service.quota_states(w["teams"]["Team A"], w["ds"]["dev"], T0)
    assert st.used == 0


@pytest.mark.parametrize("limit,text", [
    ("memory", "run.tsv: file: validation needed more than 3 MB of memory (the server's limit)"),
    ("cpu", "run.tsv: file: validation needed more than 4 s of CPU time (the server's limit)"),
    ("time", "run.tsv: file: validation did not finish within 5 s (the server's limit)")])
def test_validation_limits_are_named_in_the_rejection(rw, val, settings, limit, text):
    settings.VALIDATION_MEMORY_MB, settings.VALIDATION_CPU_SECONDS = 3, 4
    settings.VALIDATION_WALL_SECONDS = 5.4
    val.verdict = isolate.Verdict(limit=limit)
    e = refusal(submit, rw)
    assert e.status == 400 and e.problems == [text]


def test_a_validator_crash_is_a_rejection_and_busy_is_503(rw, val, caplog):
    val.verdict = isolate.Verdict(crash="Traceback ...")
    before = stored()
    with caplog.at_level("ERROR", logger="shareval.submissions"):
        e = refusal(submit, rw)
    assert [r.getMessage().startswith("validator crashed on ") and
            r.getMessage().endswith(":\nTraceback ...") for r in caplog.records] == [True]
    assert e.problems == ["run.tsv: file: could not be read as a classification submission"]
    val.verdict = isolate.Verdict(limit="busy")
    e = refusal(submit, rw)
    assert (e.status, e.submission) == (503, None)
    assert e.message == ("the server is busy validating other uploads; try again in a few "
                         "minutes")
    assert stored() == before
    assert Submission.objects.filter(state=Submission.REJECTED).count() == 1


def test_upload_size_limit_is_inclusive(rw, val, settings):
    settings.MAX_UPLOAD_BYTES = len(BODY)
    before = stored()
    assert submit(rw).size == len(BODY)                        # exactly the limit: kept
    settings.MAX_UPLOAD_BYTES = 3 * 2 ** 20 - 1
    big = Upload("big.tsv", b"")
    big.chunks = lambda: iter([b"x" * 2 ** 20] * 3)
    e = refusal(submit, rw, upload=big)
    assert (e.status, e.message) == (413, "file too large: the limit is 2 MB")
    assert len(stored() - before) == 1                         # the partial file is gone


def test_rejected_uploads_are_limited_per_team_and_hour(rw, val, settings):
    w = rw
    settings.MAX_REJECTED_PER_HOUR = 2
    old = run(w, "Team A", "dev", T0 - H + dt.timedelta(seconds=1),
              state=Submission.REJECTED)                                  # just in the hour
    run(w, "Team A", "dev", T0 - H, state=Submission.REJECTED)             # just out
    run(w, "Team B", "eval", T0 - H / 2, state=Submission.REJECTED)        # another team
    assert submit(w).state == Submission.QUEUED                            # 1 of 2
    run(w, "Team A", "eval", T0 - H / 4, state=Submission.REJECTED)
    e = refusal(submit, w)
    assert e.status == 429
    assert e.message == ("too many rejected uploads: 2 in the last hour; check files with "
                         "`shareval validate` before uploading")
    assert e.next_slot == old.created + H
    assert e.next_slot.utcoffset() == dt.timedelta(hours=1)               # Europe/Berlin
    assert refusal(submit, w, at=e.next_slot - dt.timedelta(microseconds=1)).status == 429
    assert submit(w, at=e.next_slot).state == Submission.QUEUED          # the slot it named
    assert submit(w, user="bob", team="Team B").state == Submission.QUEUED
    for k in range(3):                                        # a baseline is never limited
        run(w, "Baseline", "dev", T0 - k * H / 8, state=Submission.REJECTED)
    assert submit(w, user="org", team="Baseline", at=T0).state == Submission.QUEUED


# --- quotas -------------------------------------------------------------------

def test_week_quota_counts_from_monday_midnight_in_the_competition_time_zone(rw, val):
    w = rw
    ds = w["ds"]["dev"]
    ds.quotas.update(limit=3)
    monday = dt.datetime(2001, 1, 14, 23, tzinfo=dt.timezone.utc)        # 00:00 in Berlin
    run(w, "Team A", "dev", monday - dt.timedelta(seconds=1), state=Submission.SCORED)
    counted = [run(w, "Team A", "dev", monday, state=s)
               for s in (Submission.CANCELLED, Submission.FAILED)]
    run(w, "Team A", "dev", T0, state=Submission.REJECTED)                # never counted
    run(w, "Team B", "dev", T0, state=Submission.SCORED)                  # another team
    run(w, "Team A", "eval", T0, state=Submission.SCORED)                 # another dataset
    (st,) = service.quota_states(w["teams"]["Team A"], ds, T0)
    assert (st.used, st.left, st.next_slot) == (2, 1, None)
    assert st.window_start == monday
    assert st.describe() == "2 of 3 per calendar week used"
    assert submit(w).state == Submission.QUEUED
    e = refusal(submit, w, at=T0 + H)
    nxt = monday + 7 * 24 * H
    assert (e.status, e.next_slot) == (429, nxt)
    assert e.message == ("quota reached: 3 of 3 per calendar week used; next slot opens "
                         "2001-01-22 00:00 CET")
    assert len(counted) == 2
    # a new week
    assert submit(w, at=nxt).state == Submission.QUEUED


def test_rolling_quota_frees_a_slot_when_its_oldest_run_leaves(rw, val):
    w = rw
    ds = w["ds"]["dev"]
    ds.quotas.update(limit=2, window=Quota.ROLLING, days=2)
    times = [T0 - 47 * H, T0 - 30 * H, T0 - 10 * H]
    for t in times:
        run(w, "Team A", "dev", t, state=Submission.SCORED)
    run(w, "Team A", "dev", T0 - 48 * H, state=Submission.SCORED)          # just left
    (st,) = service.quota_states(w["teams"]["Team A"], ds, T0)
    assert (st.used, st.left) == (3, 0)
    assert st.window_start == T0 - 48 * H
    # two runs must leave before one is possible: the second oldest decides
    assert st.next_slot == times[1] + 48 * H
    assert str(st.next_slot.tzinfo) == "Europe/Berlin"
    assert st.describe().startswith("3 of 2 per 2 days used; next slot opens 2001-01-16 ")
    e = refusal(submit, w)
    assert e.next_slot == times[1] + 48 * H
    assert refusal(submit, w, at=e.next_slot - dt.timedelta(microseconds=1)).status == 429
    assert submit(w, at=e.next_slot).state == Submission.QUEUED          # the slot it named


def test_phase_quota_is_final_and_the_latest_freeing_quota_is_reported(rw, val):
    w = rw
    ds = w["ds"]["eval"]
    for k in range(5):
        run(w, "Team A", "eval", ds.phase.start - 100 * 24 * H + k * H, state=Submission.FAILED)
    Quota.objects.create(dataset=ds, limit=1, window=Quota.WEEK)
    states = service.quota_states(w["teams"]["Team A"], ds, T0)
    assert [(s.used, s.left, s.next_slot) for s in states] == [(5, 0, None), (0, 1, None)]
    assert states[0].describe() == "5 of 5 in this phase used; no more submissions in this phase"
    e = refusal(submit, w, ds="eval")
    assert (e.status, e.next_slot) == (429, None)
    assert e.message.endswith("no more submissions in this phase")
    # both full: the phase quota (never frees) is the one reported
    run(w, "Team A", "eval", T0, state=Submission.SCORED)
    e = refusal(submit, w, ds="eval")
    assert "in this phase" in e.message and e.next_slot is None
    # a baseline is never limited
    assert submit(w, user="org", team="Baseline", ds="eval").state == Submission.QUEUED


def test_the_quota_freeing_last_is_reported(rw, val):
    w = rw
    ds = w["ds"]["dev"]
    ds.quotas.update(limit=1, window=Quota.ROLLING, days=10)
    Quota.objects.create(dataset=ds, limit=1, window=Quota.ROLLING, days=2)
    Quota.objects.create(dataset=ds, limit=5, window=Quota.WEEK)
    run(w, "Team A", "dev", T0 - H, state=Submission.SCORED)
    e = refusal(submit, w)
    assert e.next_slot == T0 - H + 10 * 24 * H
    assert "1 of 1 per 10 days used" in e.message


def test_the_quota_is_checked_again_under_the_lock(rw, val, monkeypatch):
    """Two uploads of one team at once: the second finds the quota full only once it
    holds the lock, after validation."""
    w = rw
    real = service.quota_states
    calls = []

    def racing(team, dataset, now=None):
        calls.append(now)
        if len(calls) == 2:                 # the other upload landed meanwhile
            run(w, "Team A", "dev", T0, state=Submission.QUEUED)
            w["ds"]["dev"].quotas.update(limit=1)
        return real(team, dataset, now)
    monkeypatch.setattr(service, "quota_states", racing)
    before = stored()
    e = refusal(submit, w)
    assert e.status == 429 and e.message.startswith("quota reached: 1 of 1 per calendar week")
    assert e.next_slot == dt.datetime(2001, 1, 21, 23, tzinfo=dt.timezone.utc)
    assert calls == [T0, T0] and stored() == before
    assert not Submission.objects.exists()     # (the racing run too: same rolled-back block)


def locks_of(queries: list[str], team) -> list[int]:
    """Where the statements reading the team's row by its key are (under PostgreSQL
    ``lock_team`` adds FOR NO KEY UPDATE; SQLite has no row locks and drops it)."""
    t = Team._meta.db_table
    return [i for i, q in enumerate(queries)
            if q.startswith(f'SELECT "{t}"."id"') and f'WHERE "{t}"."id" = {team.pk} ' in q]


def test_the_quota_check_and_the_insert_hold_the_teams_row_lock(rw, val):
    """docs/platform.md: the check and the insert happen in one transaction that locks
    the team row, so concurrent uploads cannot exceed a quota; the lock is FOR NO KEY
    UPDATE, which leaves a worker storing a score for the team free (test_locks.py).
    A primary flag change takes the same lock before it demotes the team's primary."""
    w, team = rw, rw["teams"]["Team A"]
    sub_table = Submission._meta.db_table
    with CaptureQueriesContext(connection) as c:
        sub = submit(w)
    q = [x["sql"] for x in c.captured_queries]
    (lock,) = locks_of(q, team)
    insert = next(i for i, s in enumerate(q) if s.startswith(f'INSERT INTO "{sub_table}"'))
    counts = [i for i, s in enumerate(q) if s.startswith("SELECT COUNT(*)")
              and f'"{sub_table}"."dataset_id" = {w["ds"]["dev"].pk}' in s]
    assert len(counts) == 2 and counts[0] < lock < counts[1] < insert
    locks = [q[lock]]
    with CaptureQueriesContext(connection) as c:
        service.make_primary(sub, w["users"]["carol"], now=T0)
    q = [x["sql"] for x in c.captured_queries]
    (flag_lock,) = locks_of(q, team)
    demote = next(i for i, s in enumerate(q) if s.startswith(f'SELECT "{sub_table}"."id"')
                  and "'primary'" in s)
    assert flag_lock < demote
    locks.append(q[flag_lock])
    if connection.vendor == "postgresql":
        assert all(s.endswith(" FOR NO KEY UPDATE") for s in locks), locks


def test_concurrent_runs_count_queued_and_running_runs_and_code_runs(rw, val):
    from shareval.platform.coderuns.models import CodeRun, CodeSubmission
    w = rw
    ds = w["ds"]["dev"]
    ds.concurrent = 3
    ds.save()
    for s in (Submission.SCORED, Submission.FAILED, Submission.CANCELLED, Submission.REJECTED):
        run(w, "Team A", "dev", T0 - H, state=s)                  # finished: not counted
    run(w, "Team A", "dev", T0 - H, state=Submission.VALIDATED)
    run(w, "Team B", "dev", T0 - H, state=Submission.QUEUED)      # another team
    run(w, "Team A", "eval", T0 - H, state=Submission.RUNNING)    # another dataset
    code = CodeSubmission.objects.create(team=w["teams"]["Team A"], dataset=ds,
                                         original_name="c.tar.gz", stored_name="c")
    CodeRun.objects.create(code_submission=code, stage=CodeRun.FINAL, state=CodeRun.OK)
    CodeRun.objects.create(code_submission=code, stage=CodeRun.FINAL, state=CodeRun.RUNNING,
                           attempt=2)
    service.check_concurrent(w["teams"]["Team A"], ds)            # 2 of 3
    assert submit(w).state == Submission.QUEUED                   # now 3
    e = refusal(submit, w)
    assert e.status == 429
    assert e.message == ("too many runs at once: 3 of team Team A's runs on dev/dev are still "
                         "queued or being scored (limit 3 at a time); submit again when one "
                         "of them is scored")
    CodeRun.objects.filter(state=CodeRun.RUNNING).update(state=CodeRun.QUEUED)
    assert refusal(service.check_concurrent, w["teams"]["Team A"], ds).status == 429
    CodeRun.objects.filter(state=CodeRun.QUEUED).update(state=CodeRun.OK)
    assert submit(w).state == Submission.QUEUED
    ds.concurrent = None
    ds.save()
    service.check_concurrent(w["teams"]["Team A"], ds)
    # a baseline is never limited
    ds.concurrent = 1
    ds.save()
    run(w, "Baseline", "dev", T0 - H, state=Submission.QUEUED)
    assert submit(w, user="org", team="Baseline").state == Submission.QUEUED


def test_concurrent_limit_is_checked_again_under_the_lock(rw, val, monkeypatch):
    w = rw
    ds = w["ds"]["dev"]
    ds.concurrent = 1
    ds.save()
    real, calls = service.check_concurrent, []

    def racing(team, dataset):
        calls.append(team.name)
        if len(calls) == 2:
            run(w, "Team A", "dev", T0, state=Submission.RUNNING)
        return real(team, dataset)
    monkeypatch.setattr(service, "check_concurrent", racing)
    e = refusal(submit, w)
    assert e.status == 429 and e.message.startswith("too many runs at once: 1 of team")
    assert calls == ["Team A", "Team A"]
