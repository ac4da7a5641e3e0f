"""*Forgot your password?*: reset mails are limited per address and per client in
an hour; a known address, an unknown one and a refused request get the same
answer after the same database work, and the mail goes out after the response
(``accounts/background.py``; the tests run its jobs with ``run_pending``)."""
from __future__ import annotations

import datetime as dt
import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail as outbox
from django.db import connection
from django.test.signals import template_rendered
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from shareval.platform.accounts import background
from shareval.platform.accounts.addresses import mark_verified
from shareval.platform.accounts.models import MailRequest, VerifiedAddress

URL = "/accounts/password-reset/"
# what differs between two requests' queries: the address's keyed hash, the time
VARYING = re.compile(r"'[0-9a-f]{64}'|'\d{4}-\d\d-\d\d[ T][\d:.]+(\+00:00)?'")


@pytest.fixture
def kim(db):
    return get_user_model().objects.create_user("kim", email="kim@lab.example",
                                                password="Kim-pass-4711")


def ask(client, address: str, client_ip: str = "10.0.0.1"):
    """Ask for a reset; returns the answer (status, where to, page) and its SQL."""
    with CaptureQueriesContext(connection) as q:
        r = client.post(URL, {"email": address}, REMOTE_ADDR=client_ip)
    page = client.get(r["Location"]).content if r.status_code == 302 else r.content
    page = re.sub(rb'nonce="[^"]*"', b"", page)
    return (r.status_code, r.get("Location"), page), [VARYING.sub("X", x["sql"])
                                                      for x in q.captured_queries]


def test_known_and_unknown_addresses_get_the_same_answer_and_work(kim, client):
    answers, asked, later, rendered = [], [], [], []
    for address in ("kim@lab.example", "nobody@lab.example"):
        answer, sql = ask(client, address)
        assert not any("auth_user" in x for x in sql)            # nobody looked up yet
        assert outbox.outbox[len(answers):] == []                 # nothing mailed yet
        templates = []
        note = lambda sender, template, **kw: templates.append(template.name)  # noqa: E731
        template_rendered.connect(note)
        with CaptureQueriesContext(connection) as q:              # after the response
            assert background.run_pending() == 1
        template_rendered.disconnect(note)
        answers.append(answer)
        asked.append(sql)
        later.append([x["sql"].replace(address.split("@")[0], "X") for x in q.captured_queries])
        rendered.append(templates)
    assert answers[0] == answers[1] and answers[0][1].endswith("/accounts/password-reset/sent/")
    assert asked[0] == asked[1]
    assert later[0] == later[1] and any("auth_user" in x for x in later[0])
    assert rendered[0] == rendered[1] and "shareval/password_reset_email.txt" in rendered[0]
    assert [m.to for m in outbox.outbox] == [["kim@lab.example"]]
    assert "/accounts/reset/" in outbox.outbox[0].body


def test_the_fourth_request_for_an_address_in_an_hour_mails_nothing(kim, client, settings):
    assert settings.MAIL_REQUESTS_PER_ADDRESS == 3
    # from four clients: only the address's limit applies
    answers = [ask(client, "kim@lab.example", f"10.0.1.{n}")[0] for n in range(4)]
    assert background.run_pending() == 3
    assert len(outbox.outbox) == 3
    assert len(set(answers)) == 1                               # the refusal looks the same
    # an hour later the address may ask again
    MailRequest.objects.update(at=timezone.now() - dt.timedelta(minutes=61))
    ask(client, "kim@lab.example")
    assert background.run_pending() == 1 and len(outbox.outbox) == 4


def test_the_eleventh_request_from_a_client_in_an_hour_mails_nothing(kim, client, settings):
    assert settings.MAIL_REQUESTS_PER_CLIENT == 10
    first = ask(client, "kim@lab.example")[0]
    for n in range(9):
        ask(client, f"guess{n}@lab.example")
    background.run_pending()
    assert len(outbox.outbox) == 1
    # the 11th: refused, whatever X-Forwarded-For says (the client address is taken
    # as django-axes takes it: REMOTE_ADDR, which only a trusted proxy sets)
    r = client.post(URL, {"email": "kim@lab.example"}, REMOTE_ADDR="10.0.0.1",
                    HTTP_X_FORWARDED_FOR="192.0.2.77")
    assert (r.status_code, r["Location"]) == first[:2]
    assert background.run_pending() == 0 and len(outbox.outbox) == 1
    ask(client, "kim@lab.example", "10.0.0.2")                   # another client may
    assert background.run_pending() == 1 and len(outbox.outbox) == 2


def test_requests_are_counted_without_keeping_the_address(kim, client):
    ask(client, "kim@lab.example")
    row = MailRequest.objects.get()
    assert (row.purpose, row.client) == (MailRequest.RESET, "10.0.0.1")
    assert "kim" not in row.address_key and len(row.address_key) == 64


def test_a_verified_address_gets_links_for_the_accounts_that_verified_it(kim, client):
    """Someone else typing kim's address on their account gets no link for it once
    kim verified it; an address nobody verified gets links for every account."""
    other = get_user_model().objects.create_user("kip", email="KIM@lab.example",
                                                 password="Kip-pass-4711")
    ask(client, "kim@lab.example")
    background.run_pending()
    assert sorted(re.search(r"account (\w+)", m.body).group(1) for m in outbox.outbox) == \
        ["kim", "kip"]
    outbox.outbox.clear()
    mark_verified(kim, VerifiedAddress.LINK)
    ask(client, "kim@lab.example")
    background.run_pending()
    assert [re.search(r"account (\w+)", m.body).group(1) for m in outbox.outbox] == ["kim"]
    assert other.email == "KIM@lab.example"


def test_a_live_server_mails_the_link_after_answering(stack, tmp_path):
    """``shareval server run`` (either mode) starts the thread that mails the link."""
    import http.cookiejar
    import time
    import urllib.parse
    import urllib.request

    from ..access.test_browser_access import mails
    mail_dir = tmp_path / "mail"
    stack.env.update(SHAREVAL_EMAIL="file", SHAREVAL_EMAIL_DIR=str(mail_dir))
    stack.cli("server", "add-user", "kim", "--password", "Kim-pass-4711", "--email",
              "kim@lab.example")
    stack.start()
    browser = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    answers = []
    for address in ("nobody@lab.example", "kim@lab.example"):
        form = browser.open(stack.url + URL).read().decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
        data = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "email": address})
        with browser.open(stack.url + URL, data.encode()) as r:
            answers.append((r.status, r.url, re.sub(r'nonce="[^"]*"', "", r.read().decode())))
    assert answers[0] == answers[1] and answers[0][1].endswith("/accounts/password-reset/sent/")
    for _ in range(100):                     # the jobs run in order: kim's is the last
        if mails(mail_dir):
            break
        time.sleep(0.1)
    got = mails(mail_dir)
    assert [m["To"] for m in got] == ["kim@lab.example"], stack.logs()
    assert f"{stack.url}/accounts/reset/" in got[0].get_payload()
