"""A lead hands the lead role to another approved member, in
the browser and the API; under team approval the organizers approve the change;
every step is in the team's history."""
from __future__ import annotations

import pytest
from django.core import mail as outbox

from shareval.platform.competitions.models import Membership, Team, TeamEvent

from .test_teams import approval  # noqa: F401 -- the fixture


def team_a(w):
    return Team.objects.get(pk=w["teams"]["Team A"].pk)


def with_addresses(w):
    for name, u in w["users"].items():
        u.email = f"{name}@lab.example"
        u.save()
    w["org"].email = "org@host.example"
    w["org"].save()


def test_the_lead_hands_over_in_the_browser_and_it_is_in_the_history(world, client):
    w = world
    with_addresses(w)
    comp, alice, carol = w["comp"], w["users"]["alice"], w["users"]["carol"]
    client.force_login(carol)                         # a member, not the lead: no form
    page = client.get(f"/c/{comp.slug}/team/").content.decode()
    assert 'id="hand-lead"' not in page
    client.post(f"/c/{comp.slug}/team/", {"action": "hand-lead", "user": "carol"})
    assert team_a(w).lead == alice                   # refused
    client.force_login(alice)
    page = client.get(f"/c/{comp.slug}/team/").content.decode()
    assert 'id="hand-lead-user"' in page and "<option>carol</option>" in page
    assert "<option>alice</option>" not in page       # not oneself
    r = client.post(f"/c/{comp.slug}/team/", {"action": "hand-lead", "user": "carol"},
                    follow=True)
    assert b"carol now leads Team A" in r.content
    t = team_a(w)
    assert t.lead == carol and t.proposed_lead is None
    ev = TeamEvent.objects.get(team=t)
    assert (ev.actor, ev.action, ev.detail) == (alice, "lead handed", "alice -> carol")
    assert "lead handed" in r.content.decode() and 'id="team-history"' in r.content.decode()
    assert sorted(x for m in outbox.outbox for x in m.to) == ["alice@lab.example",
                                                              "carol@lab.example"]
    assert "carol now leads Team A" in outbox.outbox[0].body
    # alice is no longer lead: she cannot take it back herself
    r = client.post(f"/c/{comp.slug}/team/", {"action": "hand-lead", "user": "alice"},
                    follow=True)
    assert b"Only the team&#x27;s lead" in r.content and team_a(w).lead == carol


@pytest.mark.parametrize("who, why", [("bob", "not an approved member"),
                                      ("dave", "not an approved member"),
                                      ("pending", "not an approved member")])
def test_only_approved_members_can_become_lead(world, client, who, why):
    w = world
    comp, alice = w["comp"], w["users"]["alice"]
    if who == "pending":
        Membership.objects.create(team=w["teams"]["Team A"], user=w["users"]["dave"])
        who = "dave"
    client.force_login(alice)
    r = client.post(f"/api/competitions/{comp.slug}/team/lead/", {"user": who},
                    content_type="application/json")
    assert r.status_code == 400 and why in r.json()["error"]
    assert team_a(w).lead == alice and not TeamEvent.objects.filter(action__startswith="lead")


def test_under_team_approval_the_organizers_approve_the_new_lead(approval, client):  # noqa: F811
    w = approval
    with_addresses(w)
    comp, alice, carol = w["comp"], w["users"]["alice"], w["users"]["carol"]
    client.force_login(alice)
    r = client.post(f"/c/{comp.slug}/team/", {"action": "hand-lead", "user": "carol"},
                    follow=True)
    assert b"the organizers must approve the change" in r.content
    t = team_a(w)
    assert t.lead == alice and t.proposed_lead == carol       # alice leads until approved
    assert outbox.outbox[-1].to == ["org@host.example"]
    assert "/organize/#teams" in outbox.outbox[-1].body
    # another organizer's competition's staff, and the members, cannot decide
    for who in ("mallory", "carol", "alice"):
        client.force_login(w["users"][who])
        client.post(f"/c/{comp.slug}/organize/teams/{t.pk}/", {"action": "approve-lead"})
        r = client.post(f"/api/competitions/{comp.slug}/teams/{t.pk}/lead/",
                        {"action": "approve"}, content_type="application/json")
        assert r.status_code == 404
    assert team_a(w).lead == alice
    client.force_login(w["org"])
    page = client.get(f"/c/{comp.slug}/organize/").content.decode()
    assert f'id="approve-lead-{t.pk}"' in page and "new lead proposed: <b>carol</b>" in page
    r = client.post(f"/c/{comp.slug}/organize/teams/{t.pk}/", {"action": "approve-lead"},
                    follow=True)
    t = team_a(w)
    assert t.lead == carol and t.proposed_lead is None and t.status == Team.APPROVED
    steps = list(TeamEvent.objects.filter(team=t).values_list("actor__username", "action"))
    assert steps == [("alice", "lead proposed"), ("org", "lead approved")]
    # refused through the API: carol proposes alice back, the organizer refuses
    client.force_login(carol)
    r = client.post(f"/api/competitions/{comp.slug}/team/lead/", {"user": "alice"},
                    content_type="application/json")
    assert r.status_code == 200 and r.json()["proposed_lead"] == "alice"
    client.force_login(w["org"])
    r = client.post(f"/api/competitions/{comp.slug}/teams/{t.pk}/lead/", {"action": "refuse"},
                    content_type="application/json")
    body = r.json()
    assert r.status_code == 200 and body["lead"] == "carol" and body["proposed_lead"] is None
    assert [h["action"] for h in body["history"]][-2:] == ["lead proposed", "lead refused"]
    assert "did not approve the change of lead" in outbox.outbox[-1].body
    r = client.post(f"/api/competitions/{comp.slug}/teams/{t.pk}/lead/", {"action": "approve"},
                    content_type="application/json")
    assert r.status_code == 400 and "no lead change waiting" in r.json()["error"]


def test_a_proposal_lapses_when_the_member_may_no_longer_take_part(approval):  # noqa: F811
    from shareval.platform.access import teams
    w = approval
    comp, alice, carol = w["comp"], w["users"]["alice"], w["users"]["carol"]
    teams.hand_lead(team_a(w), alice, "carol")
    Membership.objects.filter(user=carol).delete()              # carol left meanwhile
    with pytest.raises(teams.TeamError, match="no longer an approved member"):
        teams.decide_lead(team_a(w), w["org"], True)
    t = team_a(w)
    assert t.lead == alice and t.proposed_lead is None
    assert comp.teams.get(pk=t.pk).events.last().action == "lead refused"


def test_team_api_shows_members_and_history_to_members_only(world, client):
    w = world
    comp = w["comp"]
    url = f"/api/competitions/{comp.slug}/team/"
    assert client.get(url).status_code == 404                    # anonymous
    client.force_login(w["users"]["dave"])                        # in no team
    assert client.get(url).status_code == 404
    client.force_login(w["users"]["carol"])
    body = client.get(url).json()
    assert body["name"] == "Team A" and body["lead"] == "alice"
    assert {m["user"] for m in body["members"]} == {"alice", "carol"}
    r = client.post(f"{url}lead/", {"user": "carol"}, content_type="application/json")
    assert r.status_code == 403                                   # not the lead
    client.logout()
    assert client.post(f"{url}lead/", {"user": "carol"},
                       content_type="application/json").status_code == 404
