"""The organizers' Settings page edits what the bundle sets (visibility,
registration and terms, teams, downloads and licence, pages, data files, catalog
versions): organizers only, the bundle's checks beside the fields, every change
recorded, and the effect the bundle key has."""
from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from shareval.formats.errors import InvalidInput
from shareval.platform.access import eligibility
from shareval.platform.competitions.models.access import (Agreement, Catalog, DataFile, Page,
                                                          PhaseCatalog, SettingChange)
from shareval.platform.bundles.loader import load_bundle, read_bundle
from shareval.platform.submissions import queue

from ..factories import Upload, make_bundle
from ..access.test_competition_access import rcc_bundle


def url(comp, what):
    return f"/c/{comp.slug}/organize/{what}"


def text(resp) -> str:
    return html.unescape(resp.content.decode())


def bundle_problem(tmp_path, **keys) -> str:
    """The message the bundle reader gives for ``keys`` (to compare with the form's)."""
    root = make_bundle(tmp_path / "probe", "probe", baseline=False)
    doc = yaml.safe_load((root / "bundle.yaml").read_text())
    doc.update(keys)
    (root / "bundle.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(InvalidInput) as e:
        read_bundle(root)
    assert len(e.value.problems) == 1, e.value.problems
    return e.value.problems[0].message


FORMS = [("settings/visibility/", {"visibility": "private"}),
         ("settings/secret-link/", {}),
         ("settings/registration/", {"registration": "approval", "text": "x"}),
         ("settings/teams/", {"max_team_size": "1"}),
         ("settings/downloads/", {"downloads": "participants", "text": "x"}),
         ("settings/data/", {"file": None}),
         ("settings/catalog/", {"slug": "c", "kind": "dataset", "file": None}),
         ("new-page/", {"slug": "new", "title": "New", "body": "x"}),
         ("pages/rules/", {"title": "Changed", "body": "changed"}),
         ("pages/rules/delete/", {})]


def test_only_organizers_reach_the_settings(world, client):
    comp = world["comp"]
    Page.objects.create(competition=comp, slug="rules", title="Rules", body="Be nice.")
    assert client.get(url(comp, "settings/")).status_code == 302          # to the log-in
    for who in ("alice", "dave"):                 # a participant, a user with no team
        client.force_login(world["users"][who])
        assert client.get(url(comp, "settings/")).status_code == 404
        assert client.get(url(comp, "pages/rules/")).status_code == 404
        for path, data in FORMS:
            data = {k: (Upload("f.txt", "a\n").as_file() if v is None else v)
                    for k, v in data.items()}
            assert client.post(url(comp, path), data).status_code == 404, (who, path)
    comp.refresh_from_db()
    assert comp.visibility == "public" and comp.max_team_size is None
    assert Page.objects.get(competition=comp, slug="rules").title == "Rules"
    assert not SettingChange.objects.filter(competition=comp).exclude(setting="bundle").exists()
    assert not DataFile.objects.filter(competition=comp).exists()
    client.force_login(world["org"])
    r = client.get(url(comp, "settings/"))
    assert r.status_code == 200 and "Who can see the competition" in text(r)
    assert client.get(url(comp, "settings/visibility/")).status_code == 405


def test_visibility_private_hides_even_a_cached_board_and_is_recorded(world, client):
    comp, ds = world["comp"], world["ds"]["dev"]
    board = f"/c/{comp.slug}/leaderboard/dev/dev/"
    assert client.get(board).status_code == 200            # rows now cached for anyone
    client.force_login(world["org"])
    r = client.post(url(comp, "settings/visibility/"), {"visibility": "private"})
    assert r.status_code == 302 and r["Location"].endswith("/organize/settings/#visibility")
    comp.refresh_from_db()
    assert comp.visibility == "private"
    ch = SettingChange.objects.filter(competition=comp).first()          # the newest
    assert (ch.user, ch.setting, ch.change) == (world["org"], "visibility",
                                                "public → private")
    assert client.get(board).status_code == 200            # organizers still see it
    client.logout()
    assert client.get(board).status_code == 404
    assert client.get(f"/c/{comp.slug}/").status_code == 404
    client.force_login(world["users"]["dave"])             # no team, not invited
    assert client.get(board).status_code == 404
    client.force_login(world["users"]["alice"])            # in a team: still sees it
    assert client.get(board).status_code == 200
    ds.refresh_from_db()


def test_unlisted_link_is_shown_and_a_new_one_shuts_the_old(world, client, tmp_path):
    comp = world["comp"]
    client.force_login(world["org"])
    client.post(url(comp, "settings/secret-link/"))            # public: no link to make
    comp.refresh_from_db()
    assert not comp.secret
    client.post(url(comp, "settings/visibility/"), {"visibility": "unlisted"})
    comp.refresh_from_db()
    old = comp.secret
    assert old and f"?key={old}" in text(client.get(url(comp, "settings/")))
    client.post(url(comp, "settings/secret-link/"))
    comp.refresh_from_db()
    assert comp.secret and comp.secret != old
    assert [c.setting for c in SettingChange.objects.filter(competition=comp)] == \
        ["secret link", "secret link", "visibility", "bundle"]
    client.logout()
    assert client.get(f"/c/{comp.slug}/?key={old}").status_code == 404
    assert client.get(f"/c/{comp.slug}/?key={comp.secret}").status_code == 200


def test_a_refused_value_shows_the_bundles_words_beside_the_field(world, client, tmp_path):
    comp = world["comp"]
    client.force_login(world["org"])
    r = client.post(url(comp, "settings/visibility/"), {"visibility": "secretive"})
    assert r.status_code == 400
    want = bundle_problem(tmp_path, visibility="secretive")
    assert want == "public or unlisted or private"
    assert re.search(r'<ul class="errorlist"[^>]*><li>' + re.escape(want) + "</li></ul>",
                     r.content.decode())
    r = client.post(url(comp, "settings/teams/"), {"max_team_size": "0",
                                                   "team_approval": "on"})
    assert r.status_code == 400
    page = r.content.decode()
    assert bundle_problem(tmp_path / "2", max_team_size=0) in page
    assert 'id="max-team-size" size="6" value="0"' in page            # kept as typed
    assert 'id="team-approval" checked' in page
    r = client.post(url(comp, "settings/registration/"),
                    {"registration": "maybe", "title": "Terms", "text": "Cite *us*."})
    assert r.status_code == 400
    assert bundle_problem(tmp_path / "3", registration="maybe") in text(r)
    assert "Cite *us*.</textarea>" in text(r)
    comp.refresh_from_db()
    assert (comp.visibility, comp.max_team_size, comp.team_approval,
            comp.registration_approval) == ("public", None, False, False)
    assert not Page.objects.filter(competition=comp).exists()
    assert not SettingChange.objects.filter(competition=comp).exclude(setting="bundle").exists()


def test_teams_form_sets_approval_and_size(world, client):
    comp = world["comp"]
    client.force_login(world["org"])
    client.post(url(comp, "settings/teams/"), {"max_team_size": " 3 ", "team_approval": "on"})
    comp.refresh_from_db()
    assert (comp.max_team_size, comp.team_approval) == (3, True)
    client.post(url(comp, "settings/teams/"), {"max_team_size": ""})
    comp.refresh_from_db()
    assert (comp.max_team_size, comp.team_approval) == (None, False)
    assert [(c.setting, c.change) for c in SettingChange.objects.filter(competition=comp)
            .exclude(setting="bundle").order_by("id")] == [
        ("team approval", "not required → required"), ("team size", "no limit → 3"),
        ("team approval", "required → not required"), ("team size", "3 → no limit")]


def test_new_terms_text_is_a_new_version_and_acceptances_keep_theirs(world, client):
    comp, dave = world["comp"], world["users"]["dave"]
    client.force_login(world["org"])
    client.post(url(comp, "settings/registration/"),
                {"registration": "approval", "title": "", "text": "Cite the overview."})
    comp.refresh_from_db()
    terms = Page.objects.get(competition=comp, slug="terms")
    assert comp.registration_approval and (terms.title, terms.version) == \
        ("Terms of participation", 1)
    eligibility.register(dave, comp, 1)
    assert eligibility.accepted(dave, comp, "terms")
    # the same text again: nothing changes
    client.post(url(comp, "settings/registration/"),
                {"registration": "approval", "title": "Terms of participation",
                 "text": "Cite the overview."})
    assert Page.objects.get(pk=terms.pk).version == 1
    client.post(url(comp, "settings/registration/"),
                {"registration": "approval", "title": "Terms of participation",
                 "text": "Cite the overview and share your code."})
    terms.refresh_from_db()
    assert terms.version == 2 and "share your code" in terms.body
    assert list(Agreement.objects.filter(user=dave).values_list("version", flat=True)) == [1]
    assert not eligibility.accepted(dave, comp, "terms")
    assert "version 1 → 2" in SettingChange.objects.filter(setting="page terms").first().change
    r = client.get(url(comp, "settings/"))
    assert "now version 2" in text(r)
    # an empty text: no terms any more
    client.post(url(comp, "settings/registration/"), {"registration": "open", "text": " "})
    comp.refresh_from_db()
    assert not comp.registration_approval
    assert not Page.objects.filter(competition=comp, slug="terms").exists()


def test_downloads_for_participants_with_a_licence(world, client):
    comp, dave = world["comp"], world["users"]["dave"]
    client.force_login(world["org"])
    client.post(url(comp, "settings/downloads/"),
                {"downloads": "participants", "title": "Data licence",
                 "text": "No distribution outside the program."})
    comp.refresh_from_db()
    assert comp.downloads == "participants"
    assert Page.objects.get(competition=comp, slug="licence").version == 1
    eligibility.register(dave, comp)
    assert "Data licence" in eligibility.download_refusal(dave, comp)
    eligibility.accept(dave, comp, "licence", 1)
    assert eligibility.download_refusal(dave, comp) is None
    client.post(url(comp, "settings/downloads/"),
                {"downloads": "participants", "title": "Data licence",
                 "text": "No distribution at all."})
    assert "version 2" in eligibility.download_refusal(dave, comp)
    client.post(url(comp, "settings/downloads/"), {"downloads": "open",
                                                   "title": "Data licence",
                                                   "text": "No distribution at all."})
    comp.refresh_from_db()
    assert comp.downloads == "open" and eligibility.download_refusal(None, comp) is None


def test_pages_are_created_edited_and_deleted(world, client):
    comp = world["comp"]
    client.force_login(world["org"])
    assert client.get(url(comp, "new-page/")).status_code == 200
    r = client.post(url(comp, "new-page/"), {"slug": "Rules!", "title": "Rules",
                                             "body": "One *primary* run."})
    assert r.status_code == 400
    assert "'Rules!' is not a slug" in text(r) and "One *primary* run.</textarea>" in text(r)
    r = client.post(url(comp, "new-page/"), {"slug": "rules", "title": "Rules",
                                             "body": "One *primary* run."})
    assert r.status_code == 302
    shown = client.get(f"/c/{comp.slug}/pages/rules/")
    assert "<em>primary</em>" in shown.content.decode()
    r = client.post(url(comp, "new-page/"), {"slug": "rules", "title": "Again", "body": ""})
    assert r.status_code == 400 and "already a page" in text(r)
    r = client.post(url(comp, "pages/rules/"), {"title": "", "body": "x"})
    assert r.status_code == 400 and "This field is required." in text(r)
    client.post(url(comp, "pages/rules/"), {"title": "Rules of play",
                                            "body": "Two runs."})
    p = Page.objects.get(competition=comp, slug="rules")
    assert (p.title, p.body, p.version) == ("Rules of play", "Two runs.", 2)
    assert client.get(f"/c/{comp.slug}/").content.decode().count("Rules of play") >= 1
    client.post(url(comp, "pages/rules/delete/"))
    assert client.get(f"/c/{comp.slug}/pages/rules/").status_code == 404
    assert [c.change for c in SettingChange.objects.filter(competition=comp)
            .exclude(setting="bundle").order_by("id")] == ["Rules created (version 1)",
                                 "Rules: text changed, version 1 → 2; title now Rules of play",
                                 "Rules of play deleted (version 2)"]


def test_data_file_upload_is_stored_privately_and_served_checked(world, client):
    comp = world["comp"]
    client.force_login(world["org"])
    r = client.post(url(comp, "settings/data/"),
                    {"file": Upload("texts.txt", "TEXT-ONE\n").as_file(),
                     "name": ".hidden", "description": "publication texts"})
    assert r.status_code == 400 and "'.hidden' is not a file name" in text(r)
    assert 'value="publication texts"' in r.content.decode()
    assert client.post(url(comp, "settings/data/"), {"description": "x"}).status_code == 400
    r = client.post(url(comp, "settings/data/"),
                    {"file": Upload("texts.txt", "TEXT-ONE\n").as_file(),
                     "description": "publication texts"})
    assert r.status_code == 302
    f = DataFile.objects.get(competition=comp)
    assert (f.name, f.size, f.description) == ("texts.txt", 9, "publication texts")
    stored = Path(settings.PRIVATE_DIR) / f.path
    assert stored.read_text() == "TEXT-ONE\n"
    assert not str(stored.resolve()).startswith(str(Path(settings.PUBLIC_DIR).resolve()))
    got = client.get(f"/c/{comp.slug}/data/texts.txt")
    assert b"".join(got.streaming_content) == b"TEXT-ONE\n"
    client.post(url(comp, "settings/data/"), {"file": Upload("texts.txt", "TWO\n").as_file()})
    assert stored.read_text() == "TWO\n" and DataFile.objects.filter(competition=comp).count() == 1
    assert [c.change for c in SettingChange.objects.filter(setting="data file texts.txt")
            .order_by("id")] == ["added texts.txt (9 bytes)", "replaced texts.txt (4 bytes)"]


def test_catalog_upload_adds_a_version_and_moves_the_phases(world, client, tmp_path):
    comp, _ = load_bundle(rcc_bundle(tmp_path / "rcc", ["ds-a", "ds-b", "ds-c"]), world["org"])
    phase = comp.phases.get()
    client.force_login(world["org"])
    r = client.post(url(comp, "settings/catalog/"),
                    {"slug": "datasets", "kind": "dataset", "move_phases": "on",
                     "file": Upload("catalog.txt", "# nothing\n\n").as_file()})
    assert r.status_code == 400 and "holds no ids" in text(r)
    assert 'value="datasets"' in r.content.decode()
    r = client.post(url(comp, "settings/catalog/"),
                    {"slug": "datasets", "kind": "words",
                     "file": Upload("catalog.txt", "ds-a\n").as_file()})
    assert r.status_code == 400 and "dataset or variable" in text(r)
    r = client.post(url(comp, "settings/catalog/"),
                    {"slug": "datasets", "kind": "dataset", "move_phases": "on",
                     "file": Upload("catalog.json", '[{"id": "ds-a"}, {"id": "ds-d"}]')
                     .as_file()})
    assert r.status_code == 302
    v2 = Catalog.objects.get(competition=comp, slug="datasets", version=2)
    assert v2.count == 2 and PhaseCatalog.objects.get(phase=phase).catalog == v2
    assert Catalog.objects.filter(competition=comp).count() == 2          # v1 kept
    # without moving: the phase stays on v2; the same file again adds nothing
    client.post(url(comp, "settings/catalog/"),
                {"slug": "datasets", "kind": "dataset",
                 "file": Upload("c.txt", "ds-e\n").as_file()})
    assert PhaseCatalog.objects.get(phase=phase).catalog == v2
    client.post(url(comp, "settings/catalog/"),
                {"slug": "datasets", "kind": "dataset",
                 "file": Upload("c.txt", "ds-e\n").as_file()})
    assert sorted(Catalog.objects.filter(competition=comp).values_list("version", flat=True)) \
        == [1, 2, 3]
    # a phase that checks no catalog yet is chosen in the form
    PhaseCatalog.objects.filter(phase=phase).delete()
    client.post(url(comp, "settings/catalog/"),
                {"slug": "datasets", "kind": "dataset", "phases": ["p1"],
                 "file": Upload("c.txt", "ds-e\n").as_file()})
    assert PhaseCatalog.objects.get(phase=phase).catalog.version == 3
    assert [c.change for c in SettingChange.objects.filter(competition=comp)
            .exclude(setting="bundle").order_by("id")] \
        == ["datasets: version 2 (2 dataset ids); now checks Phase 1",
            "datasets: version 3 (1 dataset ids)",
            "datasets: the file is the same as version 3; now checks Phase 1"]
    page = text(client.get(url(comp, "settings/")))
    assert "datasets" in page and "Phase 1" in page
    queue.drain()


def test_a_phase_without_catalog_ids_cannot_check_a_catalog(world, client, tmp_path):
    comp = world["comp"]                               # classification tasks only
    client.force_login(world["org"])
    r = client.post(url(comp, "settings/catalog/"),
                    {"slug": "c", "kind": "dataset", "phases": ["dev"],
                     "file": Upload("c.txt", "x\n").as_file()})
    assert r.status_code == 400
    root = make_bundle(tmp_path / "b", "cat", baseline=False)
    doc = yaml.safe_load((root / "bundle.yaml").read_text())
    (root / "c.txt").write_text("x\n")
    doc["catalogs"] = [{"slug": "c", "file": "c.txt"}]
    doc["phases"][0]["catalog"] = "c"
    (root / "bundle.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(InvalidInput) as e:
        read_bundle(root)
    assert f"Development: {e.value.problems[0].message}" in text(r)
    assert not Catalog.objects.filter(competition=comp).exists()
    assert client.post(url(comp, "settings/catalog/"),
                       {"slug": "c", "kind": "dataset", "phases": ["nope"],
                        "file": Upload("c.txt", "x\n").as_file()}).status_code == 400


def test_the_bundle_and_the_forms_share_their_checks(tmp_path):
    """A data file name the browser refuses is refused in bundle.yaml too."""
    root = make_bundle(tmp_path / "b", "names", baseline=False)
    doc = yaml.safe_load((root / "bundle.yaml").read_text())
    (root / "t.txt").write_text("x")
    doc["data"] = [{"file": "t.txt", "name": "../escape.txt"}]
    (root / "bundle.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(InvalidInput, match="is not a file name"):
        read_bundle(root)


def test_reloading_the_bundle_writes_its_settings_again_and_is_recorded(world, client,
                                                                          tmp_path):
    comp = world["comp"]
    client.force_login(world["org"])
    client.post(url(comp, "settings/visibility/"), {"visibility": "private"})
    client.post(url(comp, "settings/teams/"), {"max_team_size": "2"})
    load_bundle(tmp_path / "bundle", world["org"])        # the world's own bundle again
    comp.refresh_from_db()
    assert (comp.visibility, comp.max_team_size) == ("public", None)
    newest = SettingChange.objects.filter(competition=comp).first()
    assert (newest.setting, newest.user) == ("bundle", world["org"])
    assert SettingChange.objects.filter(competition=comp, setting="bundle").count() == 2
    log = text(client.get(url(comp, "settings/")))
    assert "bundle loaded: every setting as in bundle.yaml" in log


def test_the_forms_need_the_csrf_token(world):
    from django.test import Client
    comp = world["comp"]
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(world["org"])
    assert strict.post(url(comp, "settings/visibility/"),
                       {"visibility": "private"}).status_code == 403
    page = strict.get(url(comp, "settings/")).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    assert strict.post(url(comp, "settings/visibility/"),
                       {"visibility": "private", "csrfmiddlewaretoken": token}).status_code == 302
    comp.refresh_from_db()
    assert comp.visibility == "private"
