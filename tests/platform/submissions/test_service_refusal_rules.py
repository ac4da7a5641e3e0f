"""The submission rules of ``submissions/service.py``, second part (the first is
``test_service_rules.py``, whose validator stand-in and helpers this file uses):
who may submit (teams, phases, registration, finalist phases, fact sheets,
code-only datasets), primary and contrastive flags, cancellation, final runs
and organizers' reasons, re-scoring. With ``test_service_rules.py`` the file
that owns ``service.py`` in ``bench/mutate.py``.
"""
from __future__ import annotations

import datetime as dt

from shareval.platform.competitions.models.access import PhaseLimit, Registration
from shareval.platform.competitions.models import Phase, Team
from shareval.platform.submissions import queue, service
from shareval.platform.submissions.models import Job, Submission

from ..rules_world import H, T0, rw, run, scored  # noqa: F401  (rw: fixture)
from .test_service_rules import refusal, submit, up, val  # noqa: F401  (val: fixture)


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


def test_a_flag_change_or_a_cancellation_keeps_what_landed_meanwhile(rw):
    """A run object read before the worker scored it or an organizer acted on it: a
    primary flag change writes the flag only and a cancellation the flag and its state,
    so the scoring, a disqualification and the board flag stored meanwhile stay."""
    w = rw
    a = run(w, "Team A", "dev", T0 - H, state=Submission.QUEUED)
    Submission.objects.filter(pk=a.pk).update(state=Submission.SCORED, disqualified="late",
                                              on_board=False)
    service.make_primary(a, w["users"]["alice"], now=T0)
    got = Submission.objects.get(pk=a.pk)
    assert (got.kind, got.state, got.disqualified, got.on_board) == \
        (Submission.PRIMARY, Submission.SCORED, "late", False)
    Submission.objects.filter(pk=a.pk).update(disqualified="", on_board=True)
    service.cancel(got, w["users"]["alice"], now=T0)
    got = Submission.objects.get(pk=a.pk)
    assert (got.kind, got.state, got.disqualified, got.on_board) == \
        (Submission.CONTRASTIVE, Submission.CANCELLED, "", True)


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
