"""Communication: mail through Django's framework, opt-outs, idempotent
reminders and release notices, password reset, organizer pages and announcements."""
from __future__ import annotations

import datetime as dt
import re

import pytest
from django.core import mail as outbox
from django.utils import timezone

from shareval.platform.accounts import background
from shareval.platform.access import eligibility
from shareval.platform.competitions.models.access import Page, Registration
from shareval.platform.notifications import mail
from shareval.platform.notifications.models import MailPreference
from shareval.platform.competitions.reminders import send_due
from shareval.platform.submissions import queue, service

from ..factories import Upload, run_with_accuracy


@pytest.fixture
def addressed(world):
    for name, u in world["users"].items():
        u.email = f"{name}@lab.example"
        u.save()
    return world


def to(*names):
    return sorted(f"{n}@lab.example" for n in names)


def recipients(messages):
    return sorted(a for m in messages for a in m.to)


def test_a_scored_run_is_mailed_to_its_team_without_scores(addressed,
                                                           django_capture_on_commit_callbacks):
    w = addressed
    outbox.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        sub = service.submit(w["users"]["alice"], w["teams"]["Team A"], w["ds"]["eval"],
                             Upload("blind-run.tsv", run_with_accuracy(17)))
        queue.drain()
    sub.refresh_from_db()
    assert sub.state == "scored"
    scored = [m for m in outbox.outbox if "blind-run.tsv" in m.subject]
    assert recipients(scored) == to("alice", "carol")            # the team, not bob
    assert "was scored" in scored[0].subject and f"/s/{sub.pk}/" in scored[0].body
    f1 = sub.current_score.result["metrics"]["f1_macro"]
    assert f"{f1:.4f}" not in scored[0].body and "0.85" not in scored[0].body   # blind phase
    assert "/accounts/profile/" in scored[0].body               # how to stop it


def test_opting_out_stops_non_essential_mail_only(addressed, client,
                                                  django_capture_on_commit_callbacks):
    w = addressed
    client.force_login(w["users"]["carol"])
    r = client.post("/accounts/profile/", {"email": "carol@lab.example", "opt_out": "on"})
    assert r.status_code == 302 and MailPreference.objects.get(user=w["users"]["carol"]).opt_out
    outbox.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        service.submit(w["users"]["alice"], w["teams"]["Team A"], w["ds"]["dev"],
                       Upload("r.tsv", run_with_accuracy(12)))
        queue.drain()
    assert recipients(outbox.outbox) == to("alice")
    # essential: a decision on one's own registration still comes
    reg = Registration.objects.create(competition=w["comp"], user=w["users"]["carol"])
    eligibility.decide(reg, True, w["org"])
    outbox.outbox.clear()
    assert mail.registration_decided(reg) == 1
    assert recipients(outbox.outbox) == to("carol") and "approved" in outbox.outbox[0].subject


def test_a_failed_run_says_so(addressed, django_capture_on_commit_callbacks):
    w = addressed
    sub = service.submit(w["users"]["bob"], w["teams"]["Team B"], w["ds"]["dev"],
                         Upload("f.tsv", run_with_accuracy(3)))
    outbox.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        sub.record("failed", "the scorer crashed")
    assert recipients(outbox.outbox) == to("bob")
    assert "could not be scored" in outbox.outbox[0].subject
    queue.drain()


def test_release_and_team_decisions_are_mailed_once(addressed, client):
    w = addressed
    comp = w["comp"]
    client.force_login(w["org"])
    outbox.outbox.clear()
    client.post(f"/c/{comp.slug}/organize/release/eval/", {"level": "top"})
    released = [m for m in outbox.outbox if "released" in m.subject]
    assert recipients(released) == to("alice", "bob", "carol")   # not the organizer
    client.post(f"/api/competitions/{comp.slug}/release/eval/", {"level": "top"})
    assert send_due()["releases"] == 0                           # already told
    assert len([m for m in outbox.outbox if "released" in m.subject]) == 3
    client.post(f"/c/{comp.slug}/organize/release/eval/", {"level": "detailed"})
    assert len([m for m in outbox.outbox if "detailed results released" in m.subject]) == 3
    outbox.outbox.clear()
    client.post(f"/c/{comp.slug}/organize/teams/{w['teams']['Team B'].pk}/",
                {"action": "reject"})
    assert recipients(outbox.outbox) == to("bob") and "not approved" in outbox.outbox[0].subject


def test_scheduled_release_and_deadline_reminders_are_sent_once(addressed):
    w = addressed
    now = timezone.now()
    eval_phase = w["ds"]["eval"].phase                 # ends in 7 days, blind
    dev_phase = w["ds"]["dev"].phase                   # ends in 30 days
    outbox.outbox.clear()
    assert send_due(now) == {"reminders": 0, "releases": 0, "primaries": 0}
    n = send_due(now, within=dt.timedelta(days=8))
    assert n == {"reminders": 3, "releases": 0, "primaries": 0}
    assert all(eval_phase.title in m.subject for m in outbox.outbox)
    assert send_due(now, within=dt.timedelta(days=8)) == {"reminders": 0, "releases": 0,
                                                      "primaries": 0}
    eval_phase.release_top_at = now - dt.timedelta(minutes=1)
    eval_phase.save()
    assert send_due(now)["releases"] == 3
    assert send_due(now)["releases"] == 0
    # a moved deadline is a new occasion
    dev_phase.end = now + dt.timedelta(hours=5)
    dev_phase.save()
    outbox.outbox.clear()
    assert send_due(now)["reminders"] == 3
    assert "closes in 4 hours" in outbox.outbox[0].subject or \
        "closes in 5 hours" in outbox.outbox[0].subject


def test_password_reset_by_mail(addressed, client):
    outbox.outbox.clear()
    r = client.post("/accounts/password-reset/", {"email": "bob@lab.example"})
    assert r.status_code == 302 and r["Location"].endswith("/accounts/password-reset/sent/")
    assert outbox.outbox == []                          # mailed after the response
    assert background.run_pending() == 1
    assert recipients(outbox.outbox) == to("bob")
    link = re.search(r"https?://[^/\s]+(/accounts/reset/\S+)", outbox.outbox[0].body).group(1)
    r = client.get(link)
    assert r.status_code == 302                        # Django moves the token to the session
    r = client.post(r["Location"], {"new_password1": "Another-pass-987",
                                    "new_password2": "Another-pass-987"})
    assert r.status_code == 302 and r["Location"].endswith("/accounts/reset/done/")
    w_bob = addressed["users"]["bob"]
    w_bob.refresh_from_db()
    assert w_bob.check_password("Another-pass-987")
    assert "Forgot your password" in type(client)().get("/accounts/login/").content.decode()


def test_announcements_and_markdown_pages(addressed, client):
    w = addressed
    comp = w["comp"]
    Page.objects.create(competition=comp, slug="schedule", title="Schedule",
                        body="* **May 1**: eval data\n\n<script>alert(1)</script>")
    client.force_login(w["org"])
    outbox.outbox.clear()
    client.post(f"/c/{comp.slug}/organize/announce/", {"title": "Eval data out",
                                                       "body": "Get it from the *Data* page."})
    assert recipients(outbox.outbox) == to("alice", "bob", "carol")
    client.post(f"/c/{comp.slug}/organize/announce/", {"title": "", "body": "x"})
    assert len(outbox.outbox) == 3
    page = type(client)().get(f"/c/{comp.slug}/").content.decode()
    assert "Eval data out" in page and "<em>Data</em>" in page
    assert f'href="/c/{comp.slug}/pages/schedule/"' in page
    body = client.get(f"/c/{comp.slug}/pages/schedule/").content.decode()
    assert "<strong>May 1</strong>" in body and "<script>alert" not in body


def test_the_time_left_is_said_in_words_with_singulars():
    from shareval.platform.competitions.reminders import _left
    assert [_left(h) for h in (1, 5, 24, 25, 47, 48)] == [
        "1 hour", "5 hours", "1 day", "1 day 1 hour", "1 day 23 hours", "2 days"]
