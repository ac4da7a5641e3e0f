"""Access and eligibility: visibility, registration with versioned terms,
checked and logged downloads, team size, finalist-only phases, versioned catalogs."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import yaml
from django.contrib.auth import get_user_model

from shareval.formats.errors import InvalidInput
from shareval.platform.accounts.addresses import mark_verified
from shareval.platform.accounts.models import VerifiedAddress
from shareval.platform.access import eligibility
from shareval.platform.access import teams
from shareval.platform.competitions.models.access import (Agreement, Catalog, Download,
                                                          PhaseLimit, Registration)
from shareval.platform.bundles.loader import load_bundle
from shareval.platform.competitions.models import Membership, Team
from shareval.platform.submissions import queue, service

from ..factories import Upload, make_bundle, run_with_accuracy
from ..test_security import fill, routes


def restricted_bundle(root: Path, slug="secret", **extra) -> Path:
    """The tiny bundle plus access keys, pages and a data file."""
    make_bundle(root, slug, baseline=False)
    doc = yaml.safe_load((root / "bundle.yaml").read_text())
    (root / "terms.md").write_text("You agree to *cite* the overview paper.")
    (root / "licence.md").write_text("No distribution outside the program.")
    (root / "rules.md").write_text("# Rules\n\nOne primary run per team.")
    (root / "texts.txt").write_text("RESTRICTED-TEXT-MARKER\n")
    doc.update({"visibility": "private", "invite": ["@uni.example", "erin"],
                "registration": "approval", "downloads": "participants", "max_team_size": 2,
                "pages": [{"slug": "rules", "title": "Rules", "file": "rules.md"},
                          {"slug": "terms", "title": "Terms of participation",
                           "file": "terms.md"},
                          {"slug": "licence", "title": "Data licence", "file": "licence.md"}],
                "data": [{"file": "texts.txt", "description": "publication texts"}]})
    doc.update(extra)
    (root / "bundle.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return root


@pytest.fixture
def secret(db, tmp_path):
    User = get_user_model()
    org = User.objects.create_user("org", password="org-pass-123", is_staff=True,
                                   email="org@host.example")
    users = {n: User.objects.create_user(n, password=f"{n}-pass-123", email=e)
             for n, e in (("uma", "uma@uni.example"), ("olga", "olga@elsewhere.example"),
                          ("erin", ""), ("ugo", "ugo@uni.example"),
                          ("ute", "ute@uni.example"))}
    for u in users.values():            # as if each had opened the link mailed to them
        if u.email:
            mark_verified(u, VerifiedAddress.LINK)
    comp, _ = load_bundle(restricted_bundle(tmp_path / "b"), org)
    return {"comp": comp, "org": org, "users": users, "root": tmp_path / "b"}


def c_routes():
    return [(n, p) for n, p in routes() if "<slug:c>" in p and not n.startswith("admin:")]


def test_bundle_writes_the_access_settings(secret):
    comp = secret["comp"]
    assert comp.visibility == "private" and comp.registration_approval
    assert comp.downloads == "participants" and comp.max_team_size == 2
    assert sorted((i.kind, i.value) for i in comp.invitations.all()) == \
        [("domain", "uni.example"), ("user", "erin")]
    assert {p.slug: p.version for p in comp.pages.all()} == {"rules": 1, "terms": 1,
                                                              "licence": 1}
    f = comp.data_files.get()
    assert f.name == "texts.txt" and f.size == len("RESTRICTED-TEXT-MARKER\n")
    assert not (Path(f.path).is_absolute())


def test_bundle_problems_are_listed(db, tmp_path):
    root = restricted_bundle(tmp_path / "b", visibility="secretive", max_team_size=0,
                             registration="maybe")
    doc = yaml.safe_load((root / "bundle.yaml").read_text())
    doc["phases"][0]["catalog"] = "nope"
    (root / "bundle.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(InvalidInput) as e:
        load_bundle(root)
    text = "\n".join(str(p) for p in e.value.problems)
    for needle in ("bundle.visibility", "bundle.max_team_size", "bundle.registration",
                   "phases[0].catalog"):
        assert needle in text, text


@pytest.mark.parametrize("who", [None, "olga"])
def test_a_private_competition_is_404_on_every_route_for_the_uninvited(secret, client, who):
    comp = secret["comp"]
    if who:
        client.force_login(secret["users"][who])
    values = {"c": comp.slug, "p": "dev", "d": "dev", "t": "labels", "name": "items.txt",
              "page": "rules", "reg": 1, "team": 1, "j": 1, "item": 1, "kind": "x",
              "token": "not-a-token",
                  "study": 1, "pub": 1, "unit": 1, "fmt": "csv", "s": "dev",
          "key": "all-phases--primary", "path": "index.html"}
    seen = 0
    for name, pattern in c_routes():
        url = fill(pattern, values)
        for method in ("get", "post"):
            r = getattr(client, method)(url)
            assert r.status_code in (404, 405) or (
                who is None and r.status_code == 302 and "login" in r["Location"]), \
                (who, method, name, r.status_code)
            assert comp.title.encode() not in r.content
            seen += 1
    assert seen > 30
    assert comp.slug not in client.get("/").content.decode()
    assert comp.slug not in json.dumps(client.get("/api/competitions/").json())
    assert client.get(f"/api/competitions/{comp.slug}/").status_code == 404
    assert client.get("/c/no-such-one/").status_code == 404   # the same answer


def test_invited_by_domain_or_username_see_it_listed(secret, client):
    comp = secret["comp"]
    for who in ("uma", "erin"):
        client.force_login(secret["users"][who])
        assert client.get(f"/c/{comp.slug}/").status_code == 200
        assert comp.slug in client.get("/").content.decode()
        assert [c["slug"] for c in client.get("/api/competitions/").json()] == [comp.slug]
    client.force_login(secret["org"])
    assert client.get(f"/c/{comp.slug}/organize/access/").status_code == 200


def test_an_unlisted_competition_opens_with_its_secret_link_only(secret, client):
    comp = secret["comp"]
    comp.visibility = "unlisted"
    comp.save()
    key = eligibility.ensure_secret(comp)
    assert client.get(f"/c/{comp.slug}/").status_code == 404
    assert client.get(f"/c/{comp.slug}/?key=wrong").status_code == 404
    assert client.get(f"/c/{comp.slug}/?key={key}").status_code == 200
    assert client.get(f"/c/{comp.slug}/pages/rules/").status_code == 200   # the session
    assert comp.slug not in client.get("/").content.decode()                # still unlisted
    assert client.get(f"/api/competitions/{comp.slug}/").status_code == 200
    other = type(client)()
    assert other.get(f"/c/{comp.slug}/pages/rules/").status_code == 404


def test_registration_needs_terms_and_approval_then_a_team(secret, client):
    comp, uma = secret["comp"], secret["users"]["uma"]
    with pytest.raises(teams.TeamError, match="Register for this competition first"):
        teams.create(comp, uma, "Uma's team")
    client.force_login(uma)
    url = f"/c/{comp.slug}/register/"
    assert b"cite" in client.get(url).content                            # the terms shown
    client.post(url, {"version": 1})                                      # box not ticked
    assert not Registration.objects.filter(user=uma).exists()
    client.post(url, {"version": 1, "accept": "1"})
    reg = Registration.objects.get(user=uma)
    assert reg.status == "pending"
    ag = Agreement.objects.get(user=uma, document="terms")
    assert ag.version == 1 and (ag.accepted - reg.created) < dt.timedelta(seconds=5)
    with pytest.raises(teams.TeamError, match="waiting for the organizers"):
        teams.create(comp, uma, "Uma's team")
    client.force_login(secret["org"])
    client.post(f"/c/{comp.slug}/organize/registrations/{reg.pk}/", {"action": "approve"})
    reg.refresh_from_db()
    assert reg.status == "approved" and reg.decided_by == secret["org"]
    team = teams.create(comp, uma, "Uma's team")
    assert team.lead == uma
    # a new version of the terms must be accepted again before anything else
    terms = comp.pages.get(slug="terms")
    (secret["root"] / "terms.md").write_text("You agree to cite the paper and the data.")
    load_bundle(secret["root"], secret["org"])
    terms.refresh_from_db()
    assert terms.version == 2
    assert "version 2" in eligibility.participation_refusal(uma, comp)
    client.force_login(uma)
    r = client.post(url, {"version": 1, "accept": "1"})                   # the old text
    assert "version 2" in eligibility.participation_refusal(uma, comp)
    client.post(url, {"version": 2, "accept": "1"})
    assert eligibility.participation_refusal(uma, comp) is None
    assert sorted(Agreement.objects.filter(user=uma).values_list("version", flat=True)) == [1, 2]
    assert r.status_code == 302


def _approved(comp, user, licence=True):
    eligibility.register(user, comp, 1)
    eligibility.decide(Registration.objects.get(competition=comp, user=user), True, None)
    if licence:
        eligibility.accept(user, comp, "licence", 1)


def test_downloads_need_an_approved_participant_with_the_licence_and_are_logged(secret, client):
    comp, uma = secret["comp"], secret["users"]["uma"]
    data_url = f"/c/{comp.slug}/data/texts.txt"
    released = f"/c/{comp.slug}/files/dev/dev/items.txt"
    # anonymous: the competition is private, so it is not there at all
    assert client.get(data_url).status_code == 404
    client.force_login(uma)                                      # invited, not registered
    r = client.get(data_url)
    assert r.status_code == 403 and b"register" in r.content
    _approved(comp, uma, licence=False)
    r = client.get(data_url)
    assert r.status_code == 403 and b"Data licence" in r.content
    assert client.get(released).status_code == 403               # released files too
    client.post(f"/c/{comp.slug}/data/", {"version": 1, "accept": "1"})
    r = client.get(data_url)
    assert r.status_code == 200 and b"".join(r.streaming_content) == b"RESTRICTED-TEXT-MARKER\n"
    assert client.get(released).status_code == 200
    log = list(Download.objects.filter(competition=comp).order_by("at"))
    assert [(d.user, d.what) for d in log] == [(uma, "data/texts.txt"),
                                               (uma, "files/dev/dev/items.txt")]
    assert Download.objects.count() == 2                         # refusals are not downloads
    client.force_login(secret["org"])
    page = client.get(f"/c/{comp.slug}/organize/access/").content.decode()
    assert "data/texts.txt" in page and "uma" in page
    csv_text = client.get(f"/c/{comp.slug}/organize/downloads.csv").content.decode()
    assert csv_text.count("uma@uni.example") == 2


def test_anonymous_downloads_are_refused_on_a_public_competition_too(secret, client):
    comp = secret["comp"]
    comp.visibility = "public"
    comp.save()
    r = client.get(f"/c/{comp.slug}/data/texts.txt")
    assert r.status_code == 302 and "login" in r["Location"]
    r = client.get(f"/c/{comp.slug}/files/dev/dev/items.txt")
    assert r.status_code == 302 and "login" in r["Location"]
    assert not Download.objects.exists()
    comp.downloads = "open"
    comp.save()
    assert client.get(f"/c/{comp.slug}/files/dev/dev/items.txt").status_code == 200
    assert Download.objects.get().user is None                   # open downloads logged too


def test_team_size_limit(secret):
    comp = secret["comp"]
    u = secret["users"]
    for name in ("uma", "ugo", "ute"):
        _approved(comp, u[name])
    team = teams.create(comp, u["uma"], "Full")
    teams.let_in(Membership.objects.get(team=teams.ask_to_join(comp, u["ugo"], "Full"),
                                        user=u["ugo"]))
    with pytest.raises(teams.TeamError, match="at most 2"):
        teams.ask_to_join(comp, u["ute"], "Full")
    assert team.memberships.filter(status="approved").count() == 2


def test_a_phase_for_chosen_teams_refuses_the_others(world, client):
    comp, users, t = world["comp"], world["users"], world["teams"]
    ds = world["ds"]["dev"]
    limit = PhaseLimit.objects.create(phase=ds.phase)
    limit.teams.set([t["Team A"]])
    with pytest.raises(service.SubmissionError) as e:
        service.submit(users["bob"], t["Team B"], ds, Upload("run.tsv", run_with_accuracy(9)))
    assert e.value.status == 403
    assert "limited to the teams the organizers chose (Team A)" in e.value.message
    assert "Team B is not one of them" in e.value.message
    sub = service.submit(users["alice"], t["Team A"], ds, Upload("run.tsv",
                                                                 run_with_accuracy(9)))
    assert sub.state == "queued"
    # the organizer's form: lift, then choose Team B only
    client.force_login(world["org"])
    client.post(f"/c/{comp.slug}/organize/phase-teams/dev/", {"limited": "1",
                                                             "team": [t["Team B"].pk]})
    assert list(PhaseLimit.objects.get(phase=ds.phase).teams.all()) == [t["Team B"]]
    with pytest.raises(service.SubmissionError, match="Team A is not one"):
        service.submit(users["alice"], t["Team A"], ds, Upload("r.tsv", run_with_accuracy(9)))
    client.post(f"/c/{comp.slug}/organize/phase-teams/dev/", {})
    assert not PhaseLimit.objects.filter(phase=ds.phase).exists()
    queue.drain()


def rcc_bundle(root: Path, catalog_ids: list[str]) -> Path:
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    root.mkdir(parents=True, exist_ok=True)
    gold = [{"publication_id": p, "data_set_id": d} for p, d in
            ((1, "ds-a"), (2, "ds-b"), (3, "ds-a"))]
    (root / "gold.json").write_text(json.dumps(gold))
    (root / "catalog.txt").write_text("# the data catalog\n" + "\n".join(catalog_ids) + "\n")
    doc = {"slug": "rcc-mini", "title": "RCC mini",
           "tasks": [{"slug": "citations", "task": "rcc-citations"}],
           "catalogs": [{"slug": "datasets", "kind": "dataset", "file": "catalog.txt"}],
           "phases": [{"slug": "p1", "title": "Phase 1",
                       "start": (now - dt.timedelta(days=1)).isoformat(),
                       "end": (now + dt.timedelta(days=9)).isoformat(), "catalog": "datasets",
                       "datasets": [{"slug": "dev", "task": "citations",
                                     "reference": "gold.json"}]}]}
    (root / "bundle.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return root


def test_submissions_naming_ids_outside_the_phase_catalog_are_refused(world, tmp_path):
    root = rcc_bundle(tmp_path / "rcc", ["ds-a", "ds-b", "ds-c"])
    comp, _ = load_bundle(root, world["org"])
    cat = Catalog.objects.get(competition=comp)
    assert (cat.version, cat.count, cat.kind) == (1, 3, "dataset")
    team = Team.objects.create(competition=comp, name="T", lead=world["users"]["dave"])
    Membership.objects.create(team=team, user=world["users"]["dave"], status="approved")
    ds = comp.phases.get().datasets.get()
    run = [{"publication_id": 1, "data_set_id": d, "score": 0.9, "mention_list": []}
           for d in ("ds-a", "ds-zz", "ds-yy")]
    with pytest.raises(service.SubmissionError) as e:
        service.submit(world["users"]["dave"], team, ds, Upload("run.json", json.dumps(run)))
    assert e.value.status == 400
    assert any("2 dataset ids not in the phase's catalog datasets v1: ds-yy, ds-zz" in p
               for p in e.value.problems), e.value.problems
    good = [dict(r, data_set_id="ds-c") for r in run]
    assert service.submit(world["users"]["dave"], team, ds,
                          Upload("ok.json", json.dumps(good))).state == "queued"
    # a changed catalog file is a new version; the phase moves to it, v1 stays
    rcc_bundle(root, ["ds-a", "ds-b"])
    load_bundle(root, world["org"])
    assert sorted(Catalog.objects.filter(competition=comp).values_list("version", "count")) \
        == [(1, 3), (2, 2)]
    with pytest.raises(service.SubmissionError) as e:
        service.submit(world["users"]["dave"], team, ds, Upload("ok.json", json.dumps(good)))
    assert any("catalog datasets v2: ds-c" in p for p in e.value.problems)
    load_bundle(root, world["org"])                           # unchanged: no new version
    assert Catalog.objects.filter(competition=comp).count() == 2
    queue.drain()


def test_a_catalog_on_a_task_without_catalog_ids_is_refused(world, tmp_path):
    root = make_bundle(tmp_path / "b", "cat", baseline=False)
    doc = yaml.safe_load((root / "bundle.yaml").read_text())
    (root / "c.txt").write_text("x\n")
    doc["catalogs"] = [{"slug": "c", "file": "c.txt"}]
    doc["phases"][0]["catalog"] = "c"
    (root / "bundle.yaml").write_text(yaml.safe_dump(doc))
    with pytest.raises(InvalidInput, match="names catalog ids"):
        load_bundle(root)


def test_scripts_download_with_an_api_token_under_the_same_rules(secret, client):
    from shareval.platform.accounts.models import ApiToken
    comp, uma = secret["comp"], secret["users"]["uma"]
    _, key = ApiToken.issue(uma, "script")
    url = f"/c/{comp.slug}/data/texts.txt"
    h = {"HTTP_AUTHORIZATION": f"Token {key}"}
    assert client.get(url, **h).status_code == 403                 # not yet approved
    _approved(comp, uma)
    r = client.get(url, **h)
    assert r.status_code == 200 and b"".join(r.streaming_content).startswith(b"RESTRICTED")
    assert Download.objects.get().user == uma
    assert client.get(url, HTTP_AUTHORIZATION="Token sv_wrong").status_code == 404
