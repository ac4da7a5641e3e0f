"""REST endpoints for registrations (organizers), announcements
and data files (whoever may see the competition, with the download rules), for
anonymous visitors, non-members, participants and organizers, with API tokens
as scripts use them."""
from __future__ import annotations

import pytest
from django.core import mail as outbox

from shareval.platform.accounts.models import ApiToken
from shareval.platform.access import eligibility
from shareval.platform.competitions.models.access import Announcement, Registration

from .test_competition_access import _approved, secret  # noqa: F401 -- the fixture


def api(client, method, url, token=None, **data):
    headers = {"HTTP_AUTHORIZATION": f"Token {token}"} if token else {}
    if method == "get":
        return client.get(url, **headers)
    return client.post(url, data, content_type="application/json", **headers)


@pytest.fixture
def scene(secret):  # noqa: F811
    comp, u = secret["comp"], secret["users"]
    _approved(comp, u["uma"], licence=False)                     # participant, no licence yet
    eligibility.register(u["ute"], comp, 1)                      # pending
    Announcement.objects.create(competition=comp, title="Kick-off", body="Welcome **all**",
                                author=secret["org"])
    tokens = {n: ApiToken.issue(user, "t")[1] for n, user in
              [("org", secret["org"]), *u.items()]}
    return {**secret, "tokens": tokens}


def test_registrations_are_for_organizers_only(scene, client):
    comp, t = scene["comp"], scene["tokens"]
    url = f"/api/competitions/{comp.slug}/registrations/"
    assert api(client, "get", url).status_code == 404                    # anonymous
    for who in ("olga", "uma", "ute"):                # non-member, participant, pending
        assert api(client, "get", url, t[who]).status_code == 404, who
    r = api(client, "get", url, t["org"])
    assert r.status_code == 200
    rows = {x["user"]: x for x in r.json()}
    assert rows["uma"]["status"] == "approved" and rows["ute"]["status"] == "pending"
    assert rows["ute"]["email"] == "ute@uni.example" and rows["ute"]["decided"] is None
    pending = rows["ute"]["id"]
    for who in ("uma", "ute"):
        r = api(client, "post", f"{url}{pending}/", t[who], action="approve")
        assert r.status_code == 404, who
    assert Registration.objects.get(pk=pending).status == "pending"
    r = api(client, "post", f"{url}{pending}/", t["org"], action="maybe")
    assert r.status_code == 400 and "approve or reject" in r.json()["error"]
    r = api(client, "post", f"{url}{pending}/", t["org"], action="approve")
    assert r.status_code == 200 and r.json()["status"] == "approved"
    reg = Registration.objects.get(pk=pending)
    assert reg.decided_by == scene["org"]
    assert outbox.outbox[-1].to == ["ute@uni.example"] and "approved" in outbox.outbox[-1].subject
    r = api(client, "post", f"{url}{pending}/", t["org"], action="reject")
    assert Registration.objects.get(pk=pending).status == "rejected"


def test_announcements_follow_the_competition_visibility(scene, client):
    comp, t = scene["comp"], scene["tokens"]
    url = f"/api/competitions/{comp.slug}/announcements/"
    assert api(client, "get", url).status_code == 404                    # private: anonymous
    assert api(client, "get", url, t["olga"]).status_code == 404         # not invited
    for who in ("uma", "ute", "ugo", "org"):          # participant, pending, invited, organizer
        r = api(client, "get", url, t[who])
        assert r.status_code == 200, who
        assert [(a["title"], a["body"]) for a in r.json()] == [("Kick-off", "Welcome **all**")]
    comp.visibility = "public"
    comp.save()
    assert [a["title"] for a in api(client, "get", url).json()] == ["Kick-off"]


def test_data_listing_says_who_may_download_and_the_downloads_agree(scene, client):
    comp, t = scene["comp"], scene["tokens"]
    url = f"/api/competitions/{comp.slug}/data/"
    assert api(client, "get", url).status_code == 404
    assert api(client, "get", url, t["olga"]).status_code == 404
    listing = {}
    for who in ("ugo", "ute", "uma", "org"):
        r = api(client, "get", url, t[who])
        assert r.status_code == 200, who
        listing[who] = r.json()
    org = listing["org"]
    assert org["allowed"] and org["downloads"] == "participants"
    assert [f["name"] for f in org["data"]] == ["texts.txt"]
    assert org["data"][0]["url"] == f"/c/{comp.slug}/data/texts.txt"
    assert org["data"][0]["size"] == len("RESTRICTED-TEXT-MARKER\n")
    assert [(f["phase"], f["name"]) for f in org["released"]] == [("dev", "items.txt")]
    assert not listing["ugo"]["allowed"] and "register" in listing["ugo"]["refusal"]
    assert not listing["ute"]["allowed"] and "waiting" in listing["ute"]["refusal"]
    assert not listing["uma"]["allowed"] and "Data licence" in listing["uma"]["refusal"]
    assert listing["uma"]["licence"] == {"title": "Data licence", "version": 1,
                                         "accepted": False}
    # what the listing says is what the download URLs do
    for who in ("ugo", "ute", "uma", "org"):
        for f in listing[who]["data"] + listing[who]["released"]:
            r = client.get(f["url"], HTTP_AUTHORIZATION=f"Token {t[who]}")
            assert (r.status_code == 200) == listing[who]["allowed"], (who, f["url"])
    eligibility.accept(scene["users"]["uma"], comp, "licence", 1)
    r = api(client, "get", url, t["uma"]).json()
    assert r["allowed"] and r["refusal"] is None and r["licence"]["accepted"]
    got = client.get(r["data"][0]["url"], HTTP_AUTHORIZATION=f"Token {t['uma']}")
    assert b"".join(got.streaming_content) == b"RESTRICTED-TEXT-MARKER\n"


def test_open_downloads_are_listed_as_allowed_to_anyone(world, client):
    comp = world["comp"]
    r = client.get(f"/api/competitions/{comp.slug}/data/").json()
    assert r["downloads"] == "anyone" or r["allowed"] is True
    assert r["allowed"] and r["released"]
    for f in r["released"]:
        assert client.get(f["url"]).status_code == 200
