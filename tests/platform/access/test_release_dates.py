"""Data files and released files with a release time and an audience
(access/releases.py, bundles/release_section.py): listed with their date and no
link before it, refused with the date; outside the audience not listed and
refused naming the phase; organizers see and download everything; the pages,
the API and the download URLs agree."""
from __future__ import annotations

import datetime as dt

import pytest
import yaml
from django.utils import timezone

from shareval.formats.errors import InvalidInput
from shareval.platform.access import releases
from shareval.platform.accounts.models import ApiToken
from shareval.platform.bundles.loader import load_bundle
from shareval.platform.competitions.models import DataFile, PublicFile
from shareval.platform.competitions.models.access import Download, PhaseLimit
from shareval.platform.submissions import samples

from ..factories import make_world

FAR = "2099-05-14T00:00"                # Europe/Berlin (the tiny bundle's zone): CEST
FAR_SAID = "available from 2099-05-14 00:00 CEST (Europe/Berlin)"
FILES = ("later.txt", "dated.txt", "own.txt", "finalists.txt",
         "holdout.txt", "texts.txt", "final-texts.txt")


def release_options():
    """The tiny bundle's datasets with dated and audience-limited files; the eval
    phase (title Evaluation) is for Team A only, as RCC's phase 2 for its finalists."""
    return {"dev": {"public": [
        "items.txt",
        {"file": "later.txt", "release": FAR},
        {"file": "dated.txt", "release": "2099-08-14"},
        {"file": "own.txt", "audience": "phase"},
        {"file": "finalists.txt", "audience": {"phase": "eval"}}]},
        "eval": {"public": [{"file": "holdout.txt", "audience": "phase"}]}}


@pytest.fixture
def rel(db, tmp_path):
    root = tmp_path / "bundle"
    root.mkdir()
    for name in FILES:
        (root / name).write_text(f"CONTENT OF {name}\n")
    w = make_world(tmp_path, baseline=False, options=release_options(), extra={"data": [
        "texts.txt",
        {"file": "final-texts.txt", "description": "finalists only", "audience": "phase:eval",
         "release": "2099-05-14T00:00+00:00"}]})
    limit = PhaseLimit.objects.create(phase=w["comp"].phases.get(slug="eval"))
    limit.teams.set([w["teams"]["Team A"]])
    w["root"] = root
    return w


def pf(name) -> PublicFile:
    return PublicFile.objects.get(name=name)


def url(f) -> str:
    if isinstance(f, DataFile):
        return f"/c/tiny/data/{f.name}"
    return f"/c/tiny/files/{f.dataset.phase.slug}/{f.dataset.slug}/{f.name}"


def get(client, user, address, **headers):
    client.logout()
    if user is not None:
        client.force_login(user)
    r = client.get(address, **headers)
    body = b"".join(r.streaming_content) if r.streaming else r.content
    return r.status_code, body.decode()


def test_the_bundle_stores_dates_in_the_competition_zone_and_audiences(rel):
    berlin = rel["comp"].tz
    assert pf("items.txt").release_at is None and pf("items.txt").audience == "registered"
    assert pf("later.txt").release_at == dt.datetime(2099, 5, 14, tzinfo=berlin)
    assert pf("dated.txt").release_at == dt.datetime(2099, 8, 14, tzinfo=berlin)
    assert pf("own.txt").audience == "phase" and pf("holdout.txt").audience == "phase"
    assert pf("finalists.txt").audience == "phase:eval"
    texts, final = DataFile.objects.get(name="texts.txt"), DataFile.objects.get(
        name="final-texts.txt")
    assert (texts.release_at, texts.audience) == (None, "registered")
    assert final.audience == "phase:eval" and final.description == "finalists only"
    assert final.release_at == dt.datetime(2099, 5, 14, tzinfo=dt.timezone.utc)   # its offset


def test_a_reload_updates_dates_and_audiences_in_place(rel):
    before = pf("later.txt").pk
    doc = yaml.safe_load((rel["root"] / "bundle.yaml").read_text())
    doc["phases"][0]["datasets"][0]["public"][1] = {"file": "later.txt",
                                                    "audience": "phase:eval"}
    doc["data"][1] = "final-texts.txt"
    (rel["root"] / "bundle.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    load_bundle(rel["root"], rel["org"])
    f = pf("later.txt")
    assert (f.pk, f.release_at, f.audience) == (before, None, "phase:eval")
    final = DataFile.objects.get(name="final-texts.txt")
    assert (final.release_at, final.audience) == (None, "registered")


def test_before_its_time_a_file_is_listed_with_its_date_and_no_link(rel, client):
    alice, later = rel["users"]["alice"], pf("later.txt")
    _, page = get(client, alice, "/c/tiny/")
    assert FAR_SAID in page and url(later) not in page and "later.txt" in page
    assert url(pf("items.txt")) in page                    # released files keep their link
    status, body = get(client, alice, url(later))
    assert status == 403 and FAR_SAID in body
    assert not Download.objects.filter(what__endswith="later.txt").exists()
    # the time comes: the link appears and the download works and is logged
    later.release_at = timezone.now() - dt.timedelta(seconds=1)
    later.save()
    _, page = get(client, alice, "/c/tiny/")
    assert url(later) in page and FAR_SAID not in page
    status, body = get(client, alice, url(later))
    assert status == 200 and body == "CONTENT OF later.txt\n"
    assert Download.objects.get(what="files/dev/dev/later.txt").user == alice


def test_the_rule_turns_at_the_release_time_exactly(rel):
    f = pf("later.txt")
    alice = rel["users"]["alice"]
    just_before = releases.Viewer(alice, rel["comp"], now=f.release_at - dt.timedelta(seconds=1))
    at = releases.Viewer(alice, rel["comp"], now=f.release_at)
    assert just_before.of(f).refusal == FAR_SAID and just_before.of(f).kind == releases.DATE
    assert at.of(f).allowed and at.of(f).listed


def test_a_data_file_before_its_time_on_the_data_page(rel, client):
    final = DataFile.objects.get(name="final-texts.txt")
    final.audience = "registered"
    final.save()
    status, page = get(client, rel["users"]["bob"], "/c/tiny/data/")
    said = "available from 2099-05-14 02:00 CEST (Europe/Berlin)"   # 00:00 UTC, shown in Berlin
    assert said in page and url(final) not in page and url(DataFile.objects.get(
        name="texts.txt")) in page
    # nothing of its content before its date: no size (the released file's is shown)
    row = page.split("final-texts.txt", 1)[1].split("</tr>", 1)[0]
    assert "bytes" not in row and "bytes" in page.split(">texts.txt<", 1)[1].split("</tr>", 1)[0]
    status, body = get(client, rel["users"]["bob"], url(final))
    assert status == 403 and said in body


@pytest.mark.parametrize("name,team_a,team_b,no_team", [
    ("items.txt", True, True, True),          # registered: everyone, as before
    ("own.txt", True, True, False),           # phase: the dev phase admits every team
    ("finalists.txt", True, False, False),    # phase:eval: Team A only
    ("holdout.txt", True, False, False),      # phase on the eval dataset: Team A only
])
def test_each_audience_lists_and_serves_the_file_to_its_teams_only(rel, client, name, team_a,
                                                                   team_b, no_team):
    f = pf(name)
    u = rel["users"]
    phase_title = {"own.txt": "Development"}.get(name, "Evaluation")
    for user, admitted in ((u["carol"], team_a), (u["bob"], team_b), (u["dave"], no_team)):
        _, page = get(client, user, "/c/tiny/")
        assert (f">{name}<" in page) is admitted, (user, name)
        api = client.get("/api/competitions/tiny/data/").json()
        assert (name in [x["name"] for x in api["released"]]) is admitted
        status, body = get(client, user, url(f))
        if admitted:
            assert status == 200 and body == (rel["root"] / name).read_text()
        else:
            assert status == 403 and f"only for the teams of {phase_title}" in body
    status, _ = get(client, None, url(f))                    # anonymous: log in first
    assert status == (200 if no_team else 302)


def test_a_data_file_for_a_phase_follows_its_chosen_teams(rel, client):
    final = DataFile.objects.get(name="final-texts.txt")
    final.release_at = None
    final.save()
    for user, admitted in ((rel["users"]["alice"], True), (rel["users"]["bob"], False)):
        _, page = get(client, user, "/c/tiny/data/")
        assert ("final-texts.txt" in page) is admitted
        status, body = get(client, user, url(final))
        assert status == (200 if admitted else 403)
        if not admitted:
            assert "only for the teams of Evaluation" in body


def test_organizers_see_and_download_everything_with_its_date_and_audience(rel, client):
    org = rel["org"]
    _, page = get(client, org, "/c/tiny/")
    for name in ("later.txt", "finalists.txt", "holdout.txt"):
        assert url(pf(name)) in page
    assert "from 2099-05-14 00:00 CEST (Europe/Berlin)" in page
    assert "for the teams of Evaluation" in page and FAR_SAID not in page
    for f in list(PublicFile.objects.all()) + list(DataFile.objects.all()):
        status, body = get(client, org, url(f))
        assert status == 200 and body == (rel["root"] / f.name).read_text()
    api = client.get("/api/competitions/tiny/data/").json()
    assert all(x["allowed"] for x in api["data"] + api["released"])
    assert len(api["released"]) == PublicFile.objects.count()


def test_the_api_gives_dates_audiences_and_each_files_refusal(rel, client):
    bob = rel["users"]["bob"]
    _, key = ApiToken.issue(bob, "script")
    h = {"HTTP_AUTHORIZATION": f"Token {key}"}
    client.logout()
    api = client.get("/api/competitions/tiny/data/", **h).json()
    rows = {x["name"]: x for x in api["released"] + api["data"]}
    assert set(rows) == {"items.txt", "later.txt", "dated.txt", "own.txt", "texts.txt"}
    assert rows["later.txt"]["release_at"] == "2099-05-13T22:00:00+00:00"
    assert rows["later.txt"]["allowed"] is False and rows["later.txt"]["refusal"] == FAR_SAID
    assert rows["own.txt"]["audience"] == "phase" and rows["own.txt"]["allowed"] is True
    assert rows["items.txt"]["refusal"] is None and rows["items.txt"]["release_at"] is None
    final = DataFile.objects.get(name="final-texts.txt")
    final.audience = "registered"
    final.save()
    data = {x["name"]: x for x in client.get("/api/competitions/tiny/data/", **h).json()["data"]}
    assert data["final-texts.txt"]["size"] is None and data["final-texts.txt"]["sha256"] is None
    assert data["texts.txt"]["size"] > 0 and len(data["texts.txt"]["sha256"]) == 64
    # the script meets the same rule at the URLs, listed or not
    for name, status in (("later.txt", 403), ("finalists.txt", 403), ("items.txt", 200)):
        assert client.get(url(pf(name)), **h).status_code == status
    assert client.get(url(DataFile.objects.get(name="final-texts.txt")), **h).status_code == 403


def test_a_guessed_url_cannot_reach_a_file_by_another_route(rel, client):
    """The file is found by its own dataset and name and checked by the same rule:
    the holdout under the dev dataset's path, or with dots, is no way in."""
    bob = rel["users"]["bob"]
    for address in ("/c/tiny/files/dev/dev/holdout.txt",
                    "/c/tiny/files/dev/eval/holdout.txt",
                    "/c/tiny/files/eval/eval/../../dev/dev/holdout.txt",
                    "/c/tiny/files/eval/eval/holdout.txt%00",
                    "/c/tiny/data/holdout.txt", "/c/tiny/data/../files/eval/eval/holdout.txt"):
        status, body = get(client, bob, address)
        assert status in (403, 404) and "CONTENT OF" not in body, address
    assert not Download.objects.exists()


def test_bundle_problems_name_their_line(db, tmp_path):
    root = tmp_path / "b"
    root.mkdir()
    for name in FILES:
        (root / name).write_text("x\n")
    from ..factories import make_bundle
    make_bundle(root, options={"dev": {"public": [
        {"file": "later.txt", "release": "14 May 2018"},
        {"file": "own.txt", "audience": "phase:finals"},
        {"file": "dated.txt", "audience": "everyone"},
        {"file": "finalists.txt", "when": "2018-05-14"}]}},
        extra={"data": [{"file": "texts.txt", "audience": "phase"}]})
    text = (root / "bundle.yaml").read_text()
    lines = text.splitlines()

    def line_of(needle):
        return next(i for i, ln in enumerate(lines, 1) if needle in ln)
    with pytest.raises(InvalidInput) as e:
        load_bundle(root)
    got = [str(p) for p in e.value.problems]
    expected = [
        (line_of("file: later.txt"), "public[0].release", "not an ISO date: '14 May 2018'"),
        (line_of("file: own.txt"), "public[1].audience", "no phase 'finals' in this bundle"),
        (line_of("file: dated.txt"), "public[2].audience", "unknown audience 'everyone'"),
        (line_of("file: finalists.txt"), "public[3].when", "unknown key"),
        (line_of("file: texts.txt"), "data[0].audience", "phase alone names no phase here")]
    for line, field, message in expected:
        assert any(p.startswith(f"bundle.yaml:{line}: ") and field in p and message in p
                   for p in got), (line, field, got)


def test_the_archive_carries_dates_and_audiences(rel, tmp_path):
    from ..bundles.test_archive import roundtrip
    new = roundtrip(rel["comp"], tmp_path)
    f = PublicFile.objects.get(dataset__phase__competition=new, name="finalists.txt")
    assert f.audience == "phase:eval"
    later = PublicFile.objects.get(dataset__phase__competition=new, name="later.txt")
    assert later.release_at == dt.datetime(2099, 5, 14, tzinfo=new.tz)
    final = new.data_files.get(name="final-texts.txt")
    assert (final.audience, final.release_at) == (
        "phase:eval", dt.datetime(2099, 5, 14, tzinfo=dt.timezone.utc))


def test_upload_samples_take_no_ids_from_a_file_not_out_for_everyone(rel):
    ds = rel["ds"]["dev"]
    assert samples._public(ds, "items.txt") is not None
    for name in ("later.txt", "finalists.txt", "own.txt"):
        assert samples._public(ds, name) is None, name


def test_a_team_waiting_for_approval_is_in_no_phase_audience(rel, client):
    team_b = rel["teams"]["Team B"]
    team_b.status = "pending"
    team_b.save()
    status, body = get(client, rel["users"]["bob"], url(pf("own.txt")))
    assert status == 403 and "only for the teams of Development" in body
    team_b.status = "approved"
    team_b.save()
    assert get(client, rel["users"]["bob"], url(pf("own.txt")))[0] == 200
