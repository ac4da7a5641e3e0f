"""Inviting an e-mail address mails a sign-up link (read here
from Django's locmem outbox); the link registers whoever uses it, once, until it
expires; a wrong, used or expired token says so."""
from __future__ import annotations

import datetime as dt
import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail as outbox
from django.utils import timezone

from shareval.platform.access import eligibility
from shareval.platform.competitions.models.access import Invitation, Registration

from .test_competition_access import secret  # noqa: F401 -- the fixture


def invite(client, comp, org, text):
    client.force_login(org)
    r = client.post(f"/c/{comp.slug}/organize/invite/", {"invite": text}, follow=True)
    client.logout()
    return r


def link_in(message) -> str:
    m = re.search(r"http://[^/\s]+(/c/[\w-]+/join/[\w-]+/)", message.body)
    assert m, message.body
    return m.group(1)


def test_an_invited_address_signs_up_with_the_mailed_link(secret, client):  # noqa: F811
    comp, org = secret["comp"], secret["org"]
    r = invite(client, comp, org, "newcomer@lab.example")
    assert b"Sign-up links mailed to 1 addresses" in r.content
    assert len(outbox.outbox) == 1 and outbox.outbox[0].to == ["newcomer@lab.example"]
    msg = outbox.outbox[0]
    assert comp.title in msg.subject and "works once" in msg.body
    url = link_in(msg)
    token = url.rstrip("/").rsplit("/", 1)[1]
    inv = Invitation.objects.get(competition=comp, value="newcomer@lab.example")
    assert token not in inv.token_hash and len(inv.token_hash) == 64     # only its hash
    # the private competition is still closed to this anonymous visitor, the link opens
    assert client.get(f"/c/{comp.slug}/").status_code == 404
    page = client.get(url).content.decode()
    assert "newcomer@lab.example" in page and "Terms of participation" in page
    form = {"username": "newcomer", "email": "newcomer@lab.example",
            "password1": "a-long-pass-123", "password2": "a-long-pass-123", "version": 1}
    r = client.post(url, form, follow=True)                 # terms not ticked: refused
    assert b"Tick the box" in r.content
    assert not get_user_model().objects.filter(username="newcomer").exists()
    r = client.post(url, {**form, "accept": "1"}, follow=True)
    assert r.status_code == 200 and b"You are registered" in r.content
    user = get_user_model().objects.get(username="newcomer")
    reg = Registration.objects.get(competition=comp, user=user)
    assert (reg.status, reg.decided_by) == (Registration.APPROVED, org)
    assert eligibility.participation_refusal(user, comp) is None      # may form a team
    assert client.get(f"/c/{comp.slug}/").status_code == 200
    inv.refresh_from_db()
    assert inv.used is not None and inv.used_by == user
    # single use: a second visit (anyone) is refused with the reason
    client.logout()
    r = client.get(url)
    assert r.status_code == 410 and b"already used" in r.content
    r = client.post(url, {**form, "username": "other", "accept": "1"})
    assert r.status_code == 410
    assert not get_user_model().objects.filter(username="other").exists()


def test_a_signed_in_person_registers_with_the_link(secret, client):  # noqa: F811
    comp, org, olga = secret["comp"], secret["org"], secret["users"]["olga"]
    invite(client, comp, org, "olga.work@elsewhere.example")
    url = link_in(outbox.outbox[-1])
    client.force_login(olga)
    assert client.get(f"/c/{comp.slug}/").status_code == 404          # not invited as olga
    assert b"You will take part as <b>olga</b>" in client.get(url).content
    r = client.post(url, {"accept": "1", "version": 1}, follow=True)
    assert b"You are registered" in r.content
    assert Registration.objects.get(competition=comp, user=olga).status == "approved"
    olga.refresh_from_db()
    assert olga.email == "olga@elsewhere.example"                      # kept her own


@pytest.mark.parametrize("case", ["wrong", "truncated", "expired", "reissued", "other-comp"])
def test_wrong_or_expired_tokens_are_refused_clearly(secret, client, case):  # noqa: F811
    comp, org = secret["comp"], secret["org"]
    invite(client, comp, org, "x@lab.example")
    url = link_in(outbox.outbox[-1])
    if case == "wrong":
        url = url[:-5] + "abcd/"
    elif case == "truncated":
        url = url[:-10] + "/"
    elif case == "expired":
        Invitation.objects.filter(value="x@lab.example").update(
            expires=timezone.now() - dt.timedelta(seconds=1))
    elif case == "reissued":                 # inviting again voids the first link
        invite(client, comp, org, "x@lab.example")
        assert link_in(outbox.outbox[-1]) != url
    elif case == "other-comp":
        url = url.replace(f"/c/{comp.slug}/", "/c/tiny/")
    r = client.get(url)
    text = r.content.decode()
    if case == "expired":
        assert r.status_code == 410 and "expired" in text and "new one" in text
    else:
        assert r.status_code == 404 and "not valid" in text
        assert comp.title not in text                      # says nothing of the competition
    r = client.post(url, {"username": "x", "password1": "a-long-pass-123",
                          "password2": "a-long-pass-123", "accept": "1", "version": 1})
    assert r.status_code in (404, 410)
    assert not Registration.objects.filter(user__username="x").exists()


def test_usernames_and_domains_get_no_mail(secret, client):  # noqa: F811
    comp, org = secret["comp"], secret["org"]
    r = invite(client, comp, org, "someone @uni2.example")
    assert b"Invited: someone, @uni2.example." in r.content
    assert outbox.outbox == []
