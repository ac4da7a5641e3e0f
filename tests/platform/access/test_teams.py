"""Teams: one per person and competition; under team approval a new team cannot
submit until an organizer approves it (issue 20, finding 13)."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from shareval.platform.competitions.models import Membership, Team
from shareval.platform.submissions import service

from ..factories import Upload, run_with_accuracy


@pytest.fixture
def approval(world):
    comp = world["comp"]
    comp.team_approval = True
    comp.save()
    User = get_user_model()
    world["users"].update({n: User.objects.create_user(n, password=f"{n}-pass-123")
                           for n in ("erin", "frank", "mallory")})
    world["users"]["mallory"].is_staff = True
    world["users"]["mallory"].save()
    return world


def create(client, comp, name):
    return client.post(f"/c/{comp.slug}/team/", {"action": "create", "name": name}, follow=True)


def test_a_new_team_is_pending_and_cannot_submit_until_approved(approval, client):
    w = approval
    comp, erin = w["comp"], w["users"]["erin"]
    client.force_login(erin)
    r = create(client, comp, "Erin's team")
    assert b"organizers must approve" in r.content
    team = Team.objects.get(competition=comp, name="Erin's team")
    assert team.status == Team.PENDING
    page = client.get(f"/c/{comp.slug}/").content.decode()
    assert "waiting for the organizers" in page
    assert client.get(f"/api/competitions/{comp.slug}/").json()["team_status"] == "pending"
    # the page, the API and the service all refuse, with the reason
    r = client.post(f"/c/{comp.slug}/submit/", {"dataset": w["ds"]["dev"].pk,
                                                "file": _file()})
    assert r.status_code == 200 and "waiting for the organizers" in r.content.decode()
    r = client.post("/api/submissions/", {"competition": comp.slug, "phase": "dev",
                                          "task": "labels", "file": _file()})
    assert r.status_code == 403 and "waiting for the organizers" in r.json()["error"]
    with pytest.raises(service.SubmissionError) as e:
        service.submit(erin, team, w["ds"]["dev"], Upload("a.tsv", run_with_accuracy(12)))
    assert e.value.status == 403
    assert not team.submissions.exists()
    # the organizer sees it and approves it in the browser pages
    client.force_login(w["org"])
    assert "Erin&#x27;s team" in client.get(f"/c/{comp.slug}/organize/").content.decode()
    r = client.post(f"/c/{comp.slug}/organize/teams/{team.pk}/", {"action": "approve"})
    assert r.status_code == 302
    team.refresh_from_db()
    assert team.status == Team.APPROVED
    sub = service.submit(erin, team, w["ds"]["dev"], Upload("a.tsv", run_with_accuracy(12)))
    assert sub.state != "rejected" and sub.team == team


def _file():
    from django.core.files.uploadedfile import SimpleUploadedFile
    return SimpleUploadedFile("run.tsv", run_with_accuracy(12).encode())


def test_a_rejected_team_cannot_submit_nor_its_lead_start_another(approval, client):
    w = approval
    comp, frank = w["comp"], w["users"]["frank"]
    client.force_login(frank)
    create(client, comp, "Frank 1")
    team = Team.objects.get(name="Frank 1")
    client.force_login(w["org"])
    client.post(f"/c/{comp.slug}/organize/teams/{team.pk}/", {"action": "reject"})
    team.refresh_from_db()
    assert team.status == Team.REJECTED
    with pytest.raises(service.SubmissionError) as e:
        service.submit(frank, team, w["ds"]["dev"], Upload("a.tsv", run_with_accuracy(12)))
    assert "not approved" in e.value.message
    client.force_login(frank)
    r = create(client, comp, "Frank 2")
    assert not Team.objects.filter(name="Frank 2").exists()
    assert "did not approve" in client.get(f"/c/{comp.slug}/team/").content.decode()


@pytest.mark.parametrize("who", ["erin", "alice", "mallory"])
def test_only_the_competitions_organizers_review_teams(approval, client, who):
    w = approval
    team = Team.objects.create(competition=w["comp"], name="T", lead=w["users"]["frank"],
                               status=Team.PENDING)
    client.force_login(w["users"][who])
    r = client.post(f"/c/{w['comp'].slug}/organize/teams/{team.pk}/", {"action": "approve"})
    assert r.status_code == 404
    team.refresh_from_db()
    assert team.status == Team.PENDING


def test_without_team_approval_a_new_team_submits_at_once(world, client):
    comp = world["comp"]
    assert comp.team_approval is False
    dave = world["users"]["dave"]
    client.force_login(dave)
    create(client, comp, "Dave's")
    team = Team.objects.get(name="Dave's")
    assert team.status == Team.APPROVED
    assert service.submit(dave, team, world["ds"]["dev"],
                          Upload("a.tsv", run_with_accuracy(12))).state != "rejected"


def test_one_person_is_in_one_team_per_competition(world, client):
    w = world
    comp, alice, dave = w["comp"], w["users"]["alice"], w["users"]["dave"]
    client.force_login(alice)                   # lead of Team A
    r = create(client, comp, "Second")
    assert not Team.objects.filter(name="Second").exists()
    client.post(f"/c/{comp.slug}/team/", {"action": "join", "name": "Team B"})
    assert not Membership.objects.filter(team=w["teams"]["Team B"], user=alice).exists()
    # dave asks to join both teams, and both leads would let him in: only one does
    client.force_login(dave)
    client.post(f"/c/{comp.slug}/team/", {"action": "join", "name": "Team A"})
    m_a = Membership.objects.get(team=w["teams"]["Team A"], user=dave)
    Membership.objects.create(team=w["teams"]["Team B"], user=dave)   # a stale request
    client.force_login(alice)
    client.post(f"/c/{comp.slug}/team/", {"action": "approve", "membership": m_a.pk})
    m_b = Membership.objects.get(team=w["teams"]["Team B"], user=dave)
    client.force_login(w["users"]["bob"])
    r = client.post(f"/c/{comp.slug}/team/", {"action": "approve", "membership": m_b.pk},
                    follow=True)
    assert b"already in a team" in r.content
    assert Membership.objects.filter(team__competition=comp, user=dave,
                                     status=Membership.APPROVED).count() == 1


def test_joining_offers_the_teams_to_choose_from(world, client):
    """Nobody has to type a team's exact name: the team page lists the teams."""
    dave = world["users"]["dave"]
    client.force_login(dave)
    page = client.get("/c/tiny/team/").content.decode()
    options = page.split('id="team-join-name"')[1].split("</select>")[0]
    assert '<option value="Team A">Team A (2 members)</option>' in options
    assert '<option value="Team B">Team B (1 member)</option>' in options
    assert "Baseline" not in options                      # organizers' baselines: not joinable
    client.post("/c/tiny/team/", {"action": "join", "name": "Team B"})
    assert Membership.objects.get(user=dave).team.name == "Team B"


def test_a_full_team_is_listed_but_cannot_be_chosen(world, client):
    comp = world["comp"]
    comp.max_team_size = 2
    comp.save()
    client.force_login(world["users"]["dave"])
    page = client.get("/c/tiny/team/").content.decode()
    assert '<option value="Team A" disabled>Team A (2 members, full)</option>' in page


def test_the_organizer_is_not_in_the_baseline_team(world, client):
    """Loading a bundle with baselines made its organizer a member of the baseline
    team: their team page offered an empty 'Hand over the lead' list and boards said
    that team's rows were theirs."""
    org, comp = world["org"], world["comp"]
    baseline = Team.objects.get(competition=comp, is_baseline=True)
    assert not baseline.memberships.exists()
    assert comp.team_of(org) is None
    # memberships stored by earlier versions make nobody a baseline's member either
    Membership.objects.create(team=baseline, user=org, status=Membership.APPROVED)
    assert comp.team_of(org) is None
    client.force_login(org)
    assert "Hand over the lead" not in client.get("/c/tiny/team/").content.decode()
    board = client.get("/c/tiny/leaderboard/dev/dev/").content.decode()
    assert "are highlighted" not in board and 'data-own="yes"' not in board


def test_removing_the_stored_baseline_memberships(world):
    """The migration that takes organizers out of baseline teams stored earlier."""
    import importlib

    from django.apps import apps
    org, comp = world["org"], world["comp"]
    baseline = Team.objects.get(competition=comp, is_baseline=True)
    Membership.objects.create(team=baseline, user=org, status=Membership.APPROVED)
    migration = importlib.import_module(
        "shareval.platform.competitions.migrations.0009_baseline_teams_without_members")
    migration.remove_baseline_members(apps, None)
    assert not baseline.memberships.exists() and Membership.objects.filter(
        team__is_baseline=False).count() == 3
