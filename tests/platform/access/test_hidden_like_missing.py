"""A private competition one may not see answers exactly like a slug that does not
exist, on every page and REST endpoint that names a competition: the same status,
the same body and the same database queries (the probe timed 9.3 vs 7.5 ms on
the API and 10.4 vs 7.4 ms on the page, from the extra queries of the hidden
one). Timing itself is measured by bench/enumeration_timing.py, not asserted here."""
from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from shareval.platform.accounts.addresses import mark_verified
from shareval.platform.accounts.models import VerifiedAddress
from shareval.platform.bundles.loader import load_bundle

from .test_competition_access import c_routes, restricted_bundle
from ..test_security import fill

HIDDEN, MISSING = "hidden-task", "absent-task"
VALUES = {"p": "dev", "d": "dev", "t": "labels", "name": "texts.txt", "page": "rules",
          "reg": 1, "team": 1, "j": 1, "item": 1, "kind": "x", "token": "not-a-token",
          "study": 1, "pub": 1, "unit": 1, "fmt": "csv", "s": "dev",
          "key": "all-phases--primary", "path": "index.html"}


@pytest.fixture
def hidden(db, tmp_path):
    User = get_user_model()
    org = User.objects.create_user("org", password="org-pass-123", is_staff=True)
    load_bundle(restricted_bundle(tmp_path / "b", HIDDEN), org)     # invites @uni.example
    typed = User.objects.create_user("una", password="una-pass-123", email="una@uni.example")
    other = User.objects.create_user("oli", password="oli-pass-123", email="oli@else.example")
    mark_verified(other, VerifiedAddress.LINK)
    # una typed an invited address without verifying it; oli is verified, not invited;
    # staff is an organizer of other competitions (may use organizer pages), not of this one
    staff = User.objects.create_user("sid", password="sid-pass-123", is_staff=True)
    return {"anonymous": None, "una": typed, "oli": other, "sid": staff}


# what differs between any two responses: the CSP nonce, the CSRF token; and
# between any two requests' queries: the time (of a session's expiry check)
PER_RESPONSE = re.compile(r'(nonce|name="csrfmiddlewaretoken" value)="[^"]*"')
TIME = re.compile(r"'\d{4}-\d\d-\d\d[ T][\d:.]+(\+00:00)?'")


def answer(client, method: str, url: str, slug: str) -> tuple[int, str, list[str]]:
    """Status, body and SQL of one request, with the slug written as SLUG."""
    with CaptureQueriesContext(connection) as q:
        r = getattr(client, method)(url)
    body = b"".join(r.streaming_content) if r.streaming else r.content
    same = lambda text: text.replace(slug, "SLUG")          # noqa: E731
    return (r.status_code, PER_RESPONSE.sub(r"\1", same(body.decode(errors="replace"))),
            [TIME.sub("TIME", same(x["sql"])) for x in q.captured_queries])


@pytest.mark.parametrize("who", ["anonymous", "una", "oli", "sid"])
def test_every_competition_route_answers_a_hidden_slug_as_a_missing_one(hidden, client, who):
    if hidden[who] is not None:
        client.force_login(hidden[who])
    compared = 0
    for name, pattern in c_routes():
        for method in ("get", "post"):
            got = {slug: answer(client, method, fill(pattern, {**VALUES, "c": slug}), slug)
                   for slug in (HIDDEN, MISSING)}
            status, body, queries = got[HIDDEN]
            assert (status, body) == got[MISSING][:2], (who, method, name)
            assert queries == got[MISSING][2], (who, method, name)
            assert status in (302, 404, 405), (who, method, name, status)
            compared += 1
    assert compared > 80


@pytest.mark.parametrize("who", ["anonymous", "una"])
def test_the_competition_page_and_api_do_the_same_work_for_either(hidden, client, who):
    """The two answers the probe timed, spelled out: a missing slug, too, runs the
    queries that decide whether a hidden competition may be seen."""
    if hidden[who] is not None:
        client.force_login(hidden[who])
    for url in ("/c/{}/", "/api/competitions/{}/"):
        got = {slug: answer(client, "get", url.format(slug), slug) for slug in (HIDDEN, MISSING)}
        assert got[HIDDEN] == got[MISSING]
        assert got[HIDDEN][0] == 404
        asked = [sql for sql in got[MISSING][2] if "competitions_invitation" in sql]
        assert len(asked) == (0 if who == "anonymous" else 1)


def test_an_upload_names_a_hidden_competition_as_a_missing_one(hidden, client):
    from django.core.files.uploadedfile import SimpleUploadedFile
    client.force_login(hidden["una"])
    got = {}
    for slug in (HIDDEN, MISSING):
        with CaptureQueriesContext(connection) as q:
            r = client.post("/api/submissions/", {
                "competition": slug, "phase": "dev", "task": "labels",
                "file": SimpleUploadedFile("run.tsv", b"item\tlabel\n")})
        got[slug] = (r.status_code, r.content.decode().replace(slug, "SLUG"),
                     [TIME.sub("TIME", x["sql"].replace(slug, "SLUG"))
                      for x in q.captured_queries])
    assert got[HIDDEN] == got[MISSING] and got[HIDDEN][0] == 404
