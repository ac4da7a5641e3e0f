"""The submission rules of ``submissions/service.py`` (docs/platform.md and
docs/organizers.md: quotas, rejected uploads, concurrent runs, primary and
contrastive runs, final runs, who may submit), checked on counts, timestamps,
states, the history and the exact refusal.

Validation runs in a child process in production (``isolate``); here a stand-in
records what it was asked and answers a chosen verdict, so each test costs a
few inserts: this is the file that owns ``service.py`` in ``bench/mutate.py``.
One test validates for real.
"""
from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from shareval.platform.competitions.access_models import PhaseLimit, Registration
from shareval.platform.competitions.models import Phase, Quota, Team
from shareval.platform.submissions import isolate, queue, service
from shareval.platform.submissions.models import Job, Submission, SubmissionEvent
from shareval.platform.submissions.service import SubmissionError

from .conftest import Upload
from .rules_world import H, T0, rw, run, scored  # noqa: F401  (rw: fixture)

BODY = "item\tlabel\ni00\tpos\n"


@pytest.fixture
def val(monkeypatch):
    """The validator stand-in: ``val.verdict`` is what it answers, ``val.calls`` what
    it was asked (with the stored file's bytes)."""
    class V:
        verdict = isolate.Verdict()
        calls: list[dict] = []

    def fake(task, path, reference, limits, catalog=None):
        V.calls.append({"task": task, "path": path, "reference": reference,
                        "limits": limits, "catalog": catalog,
                        "data": Path(path).read_bytes()})
        return V.verdict
    monkeypatch.setattr(service.isolate, "validate", fake)
    V.calls = []
    return V


def up(name="run.tsv", body=BODY):
    return Upload(name, body)


def submit(w, user="alice", team="Team A", ds="dev", at=T0, **kw):
    return service.submit(w["users"][user] if user != "org" else w["org"], w["teams"][team],
                          w["ds"][ds], kw.pop("upload", None) or up(), now=at, **kw)


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


# --- who may submit -----------------------------------------------------------

def test_who_may_submit(rw, val):
    w = rw
    e = refusal(submit, w, user="bob", team="Team A")
    assert (e.status, e.message) == (403, "you are not an approved member of this team")
    e = refusal(submit, w, user="dave")
    assert e.status == 403
    e = refusal(submit, w, user="alice", team="Baseline")
    assert (e.status, e.message) == (403, "only organizers submit baselines")
    e = refusal(submit, w, user="org")                    # organizers are not team members
    assert e.status == 403
    other = Team.objects.create(competition=w["comp"], name="Elsewhere", lead=w["org"])
    from shareval.platform.competitions.models import Competition
    other.competition = Competition.objects.create(slug="other", title="Other")
    other.save()
    w["teams"]["Elsewhere"] = other
    e = refusal(submit, w, user="org", team="Elsewhere")
    assert (e.status, e.message) == (400, "team and dataset belong to different competitions")
    assert not Submission.objects.exists()


def test_pending_and_rejected_teams_cannot_submit(rw, val):
    w = rw
    t = w["teams"]["Team A"]
    for status, text in ((Team.PENDING, "team Team A is waiting for the organizers' approval; "
                                         "it can submit once they approve it"),
                         (Team.REJECTED, "team Team A was not approved by the organizers and "
                                         "cannot submit")):
        t.status = status
        t.save()
        e = refusal(submit, w)
        assert (e.status, e.message) == (403, text)
    assert not Submission.objects.exists()


def test_phase_open_from_start_until_before_end(rw, val):
    w = rw
    ph = w["ds"]["eval"].phase
    assert submit(w, ds="eval", at=ph.start).state == Submission.QUEUED
    e = refusal(submit, w, ds="eval", at=ph.end)
    assert e.status == 403
    assert e.message == ("phase eval is not open for submissions (2001-01-14 12:00 to "
                         "2001-01-22 12:00 UTC)")
    assert refusal(submit, w, ds="eval", at=ph.start - dt.timedelta(seconds=1)).status == 403


def test_a_released_blind_phase_takes_no_more_runs(rw, val):
    w = rw
    ph = w["ds"]["eval"].phase
    ph.release_top_at = T0
    ph.save()
    assert submit(w, ds="eval", at=T0 - H).state == Submission.QUEUED
    e = refusal(submit, w, ds="eval", at=T0)
    assert (e.status, e.message) == (403, "phase eval: results are released, its runs are final")
    # an open phase's release does not close it
    dev = w["ds"]["dev"].phase
    dev.released = Phase.DETAILED
    dev.save()
    assert submit(w, at=T0).state == Submission.QUEUED


def test_registration_approval_and_finalist_phases(rw, val):
    w = rw
    comp = w["comp"]
    comp.registration_approval = True
    comp.save()
    e = refusal(submit, w)
    assert e.status == 403 and e.message.startswith("register for this competition first")
    reg = Registration.objects.create(competition=comp, user=w["users"]["alice"])
    assert refusal(submit, w).message == "your registration is waiting for the organizers' " \
                                         "approval"
    reg.status = Registration.APPROVED
    reg.save()
    assert submit(w).state == Submission.QUEUED
    limit = PhaseLimit.objects.create(phase=w["ds"]["eval"].phase)
    limit.teams.set([w["teams"]["Team B"]])
    e = refusal(submit, w, ds="eval")
    assert e.status == 403 and "team Team A is not one of them" in e.message
    limit.teams.add(w["teams"]["Team A"])
    assert submit(w, ds="eval").state == Submission.QUEUED


def test_factsheet_and_code_only_datasets(rw, val):
    from shareval.platform.coderuns.models import CodeDataset
    w = rw
    comp = w["comp"]
    comp.factsheet = {"required": ["method"]}
    comp.save()
    e = refusal(submit, w)
    assert (e.status, e.message) == (400, "the fact sheet is incomplete or invalid")
    assert e.problems and e.problems[0].startswith("factsheet.method: required")
    sub = submit(w, factsheet={"method": "bm25"})
    assert sub.factsheet == {"method": "bm25"}
    assert submit(w, user="org", team="Baseline").factsheet == {}   # baselines: not required
    cd = CodeDataset.objects.create(dataset=w["ds"]["dev"], input_path="x", input_digest="d")
    e = refusal(submit, w, factsheet={"method": "x"})
    assert e.status == 400 and e.message.startswith("dataset dev/dev takes code, not output")
    cd.mode = CodeDataset.BOTH
    cd.save()
    assert submit(w, factsheet={"method": "x"}).state == Submission.QUEUED


# --- primary flags and cancellation -------------------------------------------

def test_make_primary_and_cancel_while_open(rw, val):
    w = rw
    a, b = scored(w, "Team A", "dev", 0.5, T0 - H), scored(w, "Team A", "dev", 0.7, T0 - 2 * H)
    service.make_primary(a, w["users"]["carol"], now=T0)
    service.make_primary(b, w["users"]["alice"], reason="  better  ", now=T0)
    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.kind, b.kind) == (Submission.CONTRASTIVE, Submission.PRIMARY)
    assert [(e.state, e.message) for e in b.events.all()] == [("primary",
                                                               "made primary (better)")]
    assert [(e.state, e.message) for e in a.events.all()] == [
        ("primary", "made primary"),
        ("contrastive", "no longer primary: another run was made primary (better)")]
    service.cancel(b, w["users"]["alice"], now=T0)
    b.refresh_from_db()
    assert (b.state, b.kind) == (Submission.CANCELLED, Submission.CONTRASTIVE)
    assert b.events.last().message == "cancelled (still counted in the quota)"
    (st,) = service.quota_states(w["teams"]["Team A"], w["ds"]["dev"], T0)
    assert st.used == 2
    e = refusal(service.cancel, b, w["users"]["alice"], now=T0)
    assert (e.status, e.message) == (400, "submission is already cancelled")
    e = refusal(service.make_primary, b, w["users"]["alice"], now=T0)
    assert (e.status, e.message) == (400, "a cancelled submission cannot be primary")
    service.cancel(a, w["users"]["alice"], now=T0)
    a.refresh_from_db()
    assert a.kind == Submission.CONTRASTIVE and a.state == Submission.CANCELLED
    rej = run(w, "Team A", "dev", T0, state=Submission.REJECTED)
    assert refusal(service.make_primary, rej, w["users"]["alice"], now=T0).status == 400
    assert refusal(service.cancel, rej, w["users"]["alice"], now=T0).message == \
        "submission is already rejected"


def test_strangers_cannot_flag_or_cancel(rw):
    w = rw
    a = scored(w, "Team A", "dev", 0.5, T0 - H)
    for user in ("bob", "dave"):
        for fn in (service.make_primary, service.cancel):
            e = refusal(fn, a, w["users"][user], now=T0)
            assert (e.status, e.message) == (403, "you are not an approved member of this team")
    a.refresh_from_db()
    assert (a.kind, a.state) == (Submission.CONTRASTIVE, Submission.SCORED)


def test_after_the_end_or_a_blind_release_runs_are_final_for_teams(rw):
    w = rw
    a = scored(w, "Team A", "eval", 0.5, T0 - H)
    ph = w["ds"]["eval"].phase
    for now in (ph.end, T0):
        if now == T0:
            ph.released = Phase.TOP
            ph.save()
        e = refusal(service.make_primary, a, w["users"]["alice"], now=now)
        assert e.status == 403 and e.message.startswith("phase eval is closed (or its results")
        assert refusal(service.cancel, a, w["users"]["alice"], reason="x", now=now).status == 403
    # organizers: only with a reason, kept in the history with their name
    e = refusal(service.make_primary, a, w["org"], reason="   ", now=T0)
    assert (e.status, e.message) == (400, "the phase is closed: an organizer's change needs a "
                                          "reason, recorded in the run's history")
    service.make_primary(a, w["org"], reason="r" * 1200, now=T0)
    assert a.events.last().message == f"made primary (by organizer org: {'r' * 1000})"
    service.cancel(a, w["org"], reason="late", now=T0)
    a.refresh_from_db()
    assert a.state == Submission.CANCELLED and a.kind == Submission.CONTRASTIVE
    assert a.events.last().message == "cancelled (still counted in the quota) (by organizer " \
                                      "org: late)"


def test_organizer_changes_an_open_run_without_a_reason(rw):
    w = rw
    a = scored(w, "Team A", "dev", 0.5, T0 - H)
    service.make_primary(a, w["org"], now=T0)
    assert a.events.last().message == "made primary (by organizer org)"


def test_an_organizer_in_the_team_changes_its_runs_as_a_member(rw):
    from shareval.platform.competitions.models import Membership
    w = rw
    Membership.objects.create(team=w["teams"]["Team A"], user=w["org"],
                              status=Membership.APPROVED)
    a = scored(w, "Team A", "dev", 0.5, T0 - H)
    service.make_primary(a, w["org"], reason="mine", now=T0)
    assert a.events.last().message == "made primary (mine)"


def test_a_primary_flag_is_per_dataset(rw, val):
    w = rw
    ev = scored(w, "Team A", "eval", 0.5, T0 - H, kind=Submission.PRIMARY)
    dev = scored(w, "Team A", "dev", 0.5, T0 - H)
    service.make_primary(dev, w["users"]["alice"], now=T0)
    new = submit(w, primary=True)
    ev.refresh_from_db()
    dev.refresh_from_db()
    assert (ev.kind, dev.kind, new.kind) == (Submission.PRIMARY, Submission.CONTRASTIVE,
                                             Submission.PRIMARY)
    assert not ev.events.exists()


def test_defaults_read_the_clock(rw, val):
    """``now`` omitted: the real clock, which is after the 2001 phases."""
    w = rw
    a = scored(w, "Team A", "dev", 0.5, T0 - H)
    ph = w["ds"]["dev"].phase
    ph.end = dt.datetime.now(dt.timezone.utc) + 24 * H
    ph.save()
    service.make_primary(a, w["users"]["alice"])
    service.cancel(a, w["users"]["alice"])
    b = scored(w, "Team A", "eval", 0.5, T0 - H)
    assert refusal(service.make_primary, b, w["users"]["alice"]).status == 403
    assert refusal(service.cancel, b, w["users"]["alice"]).status == 403
    sub = service.submit(w["users"]["alice"], w["teams"]["Team A"], w["ds"]["dev"], up())
    assert abs(sub.created - dt.datetime.now(dt.timezone.utc)) < dt.timedelta(minutes=5)


def test_rescore_queues_every_valid_run_once(rw):
    w = rw
    runs = [scored(w, "Team A", "dev", 0.5, T0 - H), scored(w, "Team B", "eval", 0.5, T0),
            run(w, "Team A", "dev", T0, state=Submission.FAILED),
            run(w, "Team A", "dev", T0, state=Submission.CANCELLED),
            run(w, "Team A", "dev", T0, state=Submission.REJECTED)]
    assert service.rescore(w["task"]) == 3
    assert sorted(Job.objects.values_list("submission_id", flat=True)) == \
        sorted(r.pk for r in runs[:3])
    assert service.rescore(w["task"]) == 0


def test_a_real_validation_in_the_child_process(rw, settings):
    """The one upload validated for real: a problem line comes back with the
    participant's file name, never the server's path."""
    e = refusal(submit, rw, upload=up("mine.tsv", "item\tlabel\ni00\n"))
    assert e.status == 400 and e.problems
    assert all(p.startswith("mine.tsv") for p in e.problems), e.problems
    assert str(settings.UPLOAD_DIR) not in " ".join(e.problems)
    assert submit(rw).state == Submission.QUEUED
    queue.drain()
