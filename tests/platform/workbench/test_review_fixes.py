"""What an attacker's and a new user's review of the workbench found, each pinned."""
from __future__ import annotations

import json

import pytest
from django.conf import settings

from shareval.platform.competitions.models import Competition, CompetitionTask
from shareval.platform.workbench import service, sources, transfer
from shareval.platform.workbench.models import (FAMILY, SUGGESTED, Assignment, Entry,
                                                Suggestion, Unit)

TEXT = "We use the ANES 1952 Time Series Study and the ANES 1956 survey."


@pytest.fixture
def world(people):
    w = people
    pr = service.create_project(w["comp"], "gold", "Gold", "rcc-pairs", w["org"])
    Entry.objects.bulk_create([Entry(project=pr, key="1", title="ANES 1952", family="anes"),
                               Entry(project=pr, key="2", title="ANES 1956", family="anes")])
    for i, ds in enumerate(("1", "2")):
        Unit.objects.create(project=pr, key=f"p1|{ds}", title=ds, text=TEXT, position=i,
                            meta={"publication_id": "p1", "data_set_id": ds})
    w["pr"] = pr
    return w


def _done(w, who=0):
    service.assign(w["pr"], [w["ann"][who]])
    for a in Assignment.objects.filter(unit__project=w["pr"]):
        a.refresh_from_db()
        service.apply_ops(a, a.user, a.version, [{"op": "add", "kind": "span", "begin": 11,
                                                  "end": 15}, {"op": "status", "value": "done"}])


@pytest.mark.parametrize("slug", ["x/../../../victim", "../x", "", "a b", "x" * 51, ".hidden"])
def test_dataset_names_cannot_leave_the_workbench_folder(world, slug, tmp_path):
    _done(world)
    CompetitionTask.objects.create(competition=world["comp"], slug="m", task_name="rcc-mentions")
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("mine")
    with pytest.raises(ValueError, match="letters, digits, - and _ only"):
        transfer.make_dataset(world["pr"], "dev", slug, world["org"])
    assert (victim / "keep.txt").read_text() == "mine"
    assert not world["comp"].phases.get(slug="dev").datasets.filter(slug=slug).exists()


def test_an_existing_folder_is_never_written_over(world):
    _done(world)
    CompetitionTask.objects.create(competition=world["comp"], slug="m", task_name="rcc-mentions")
    folder = settings.PRIVATE_DIR / "workbench" / "tiny" / "gold" / "dev" / "kept"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "other.json").write_text("{}")
    ds, _ = transfer.make_dataset(world["pr"], "dev", "kept", world["org"])
    assert (folder / "other.json").exists() and ds.reference_file.parent != folder
    assert ds.reference_file.parent.name.startswith("kept-")


def test_assignees_reach_their_project_in_a_private_competition(world, client):
    service.assign(world["pr"], world["ann"][:1])
    Competition.objects.filter(pk=world["comp"].pk).update(visibility=Competition.PRIVATE)
    client.force_login(world["ann"][0])
    unit = world["pr"].units.first()
    assert client.get("/c/tiny/workbench/gold/").status_code == 200
    assert client.get(f"/c/tiny/workbench/gold/u/{unit.pk}/state").status_code == 200
    client.force_login(world["ann"][1])            # no assignment: nothing
    assert client.get("/c/tiny/workbench/gold/").status_code == 404


@pytest.mark.parametrize("content,message", [("5", "expected an object"),
                                             ("null", "expected an object")])
def test_catalog_of_the_wrong_shape_is_refused(tmp_path, content, message):
    p = tmp_path / "c.json"
    p.write_text(content)
    with pytest.raises(sources.SourceError, match=message):
        sources.read_catalog(p)


def test_garbage_sentences_and_families_are_refused(tmp_path):
    p = tmp_path / "s.tsv"
    p.write_text("garbage\x00\n")
    with pytest.raises(sources.SourceError, match="s.tsv:1: header: expected the columns"):
        sources.read_sentences(p)
    p.write_bytes(b"key,family\n\xff,x\n")
    with pytest.raises(sources.SourceError, match="s.tsv: not UTF-8"):
        sources.read_families(p)
    p.write_text("sentence\tuuid\n")
    with pytest.raises(sources.SourceError, match="no sentence in it"):
        sources.read_sentences(p)


def test_one_text_file_uploaded_keeps_its_name(world, client):
    import io
    client.force_login(world["org"])
    up = io.BytesIO(b"We use ANES.")
    up.name = "77.txt"
    cat = io.BytesIO(json.dumps({"1": "ANES 1952"}).encode())
    cat.name = "c.json"
    r = client.post("/c/tiny/workbench/", {"title": "T", "slug": "one", "kind":
                                           "rcc-publications", "texts": up, "catalog": cat},
                    follow=True)
    assert "project T: 1 units" in r.content.decode()
    assert world["comp"].workbench_projects.get(slug="one").units.get().key == "77"


def test_undo_of_deletes_brings_back_origin(world):
    pr, u = world["pr"], world["ann"][0]
    s = Suggestion.objects.create(unit=pr.units.get(key="p1|1"), begin=11, end=41, target="1",
                                  score=0.9, source="x", label="dataset")
    a1 = Assignment.objects.create(unit=s.unit, user=u)
    a2 = Assignment.objects.create(unit=pr.units.get(key="p1|2"), user=u)
    made = service.apply_ops(a1, u, 0, [{"op": "verdict", "suggestion": s.pk,
                                         "accepted": True}])["created"][0]
    service.apply_ops(a1, u, 1, [{"op": "delete", "id": made}])
    out = service.apply_ops(a1, u, 2, [{"op": "verdict", "suggestion": s.pk, "accepted": True}])
    assert [x["origin"] for x in out["annotations"]] == [SUGGESTED]
    a2.refresh_from_db()
    (copy,) = a2.annotations.all()
    service.apply_ops(a2, u, a2.version, [{"op": "delete", "id": copy.pk}])
    a2.refresh_from_db()
    out = service.apply_ops(a2, u, a2.version, [
        {"op": "add", "kind": "span", "begin": 11, "end": 41, "target": "2",
         "family_of": copy.source_id}])
    assert [(x["origin"], x["source"]) for x in out["annotations"]] == [(FAMILY, copy.source_id)]
    assert a1.annotations.count() == 1                    # nothing propagated back
    with pytest.raises(service.BadOp, match="not one of your spans"):
        other = Assignment.objects.create(unit=s.unit, user=world["ann"][1])
        service.apply_ops(other, other.user, 0, [{"op": "add", "kind": "span", "begin": 0,
                                                  "end": 2, "family_of": copy.source_id}])


def test_relinking_moves_the_sibling_s_version(world):
    pr, u = world["pr"], world["ann"][0]
    a1 = Assignment.objects.create(unit=pr.units.get(key="p1|1"), user=u)
    a2 = Assignment.objects.create(unit=pr.units.get(key="p1|2"), user=u)
    x = service.apply_ops(a1, u, 0, [{"op": "add", "kind": "span", "begin": 11, "end": 15,
                                      "target": "1"}])["created"][0]
    a2.refresh_from_db()
    before = a2.version
    service.apply_ops(a1, u, 1, [{"op": "link", "id": x, "target": ""}])
    a2.refresh_from_db()
    assert a2.version > before


def test_import_keeps_a_unit_finished_with_nothing_in_it(world):
    service.assign(world["pr"], world["ann"][:1])
    a = Assignment.objects.filter(unit__key="p1|2").get()
    service.apply_ops(a, a.user, 0, [{"op": "status", "value": "done"}])
    docs = [transfer.to_doc(a.unit, [])]
    from shareval.formats.standoff import Span
    docs[0].spans = [Span(11, 15, "dataset", "2", "T1")]
    rep = transfer.import_docs(world["pr"], docs, a.user, "x.zip")
    assert rep.units == 0 and "already worked on this unit" in rep.skipped["p1|2"]
    assert not a.annotations.exists()


def test_per_unit_below_one_is_one_and_curators_cannot_be_participants(world):
    assert service.assign(world["pr"], world["ann"], per_unit=-1)["assignments"] == 2
    with pytest.raises(ValueError, match="alice is in a team"):
        service.add_curator(world["pr"], world["users"]["alice"])
