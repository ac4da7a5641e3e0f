"""The workbench's pages: who sees what, the organizer's forms, the header's work."""
from __future__ import annotations

import pytest

from shareval.platform import work as site_work
from shareval.platform.workbench import service
from shareval.platform.workbench.models import Assignment, Entry, Unit


@pytest.fixture
def world(people):
    w = people
    pr = service.create_project(w["comp"], "gold", "Gold mentions", "rcc-pairs", w["org"],
                                codebook="# Rules\n\nTag *specific* names.")
    Entry.objects.create(project=pr, key="9", title="Other survey")
    for i in range(3):
        Unit.objects.create(project=pr, key=f"p{i}|9", title=f"Publication {i}",
                            text="The other survey was used.", position=i,
                            meta={"publication_id": f"p{i}", "data_set_id": "9"})
    w["pr"] = pr
    return w


def url(w, rest=""):
    return f"/c/{w['comp'].slug}/workbench/{rest}"


def test_annotator_sees_own_units_with_status_and_the_header_counts_them(world, client):
    service.assign(world["pr"], world["ann"], per_unit=1)
    client.force_login(world["ann"][0])
    page = client.get(url(world, "gold/")).content.decode()
    assert "Your units: 0 of 2 done" in page and "Publication 0" in page
    assert "Publication 1" not in page               # ann2's unit
    assert "Progress" not in page                     # the organizer's part
    work = site_work.for_user(world["ann"][0], world["comp"].slug)
    assert [(w.what, w.left, w.done) for w in work] == [("Annotate units", 2, 0)]
    home = client.get(url(world)).content.decode()
    assert "Gold mentions" in home
    codebook = client.get(url(world, "gold/codebook/")).content.decode()
    assert "<em>specific</em>" in codebook


def test_participants_and_strangers_get_404(world, client):
    service.assign(world["pr"], world["ann"], per_unit=1)
    Assignment.objects.create(unit=world["pr"].units.get(key="p2|9"), user=world["users"]["alice"])
    for who in (world["users"]["alice"], world["users"]["dave"]):
        client.force_login(who)
        for rest in ("gold/", "gold/codebook/", "gold/trail.csv", "gold/entries?q=survey",
                     f"gold/u/{world['pr'].units.first().pk}/state"):
            assert client.get(url(world, rest)).status_code == 404, (who, rest)
        assert "Gold mentions" not in client.get(url(world)).content.decode()


def test_organizer_assigns_adds_a_curator_and_reads_the_trail(world, client):
    client.force_login(world["org"])
    page = client.get(url(world, "gold/")).content.decode()
    assert "No unit is assigned yet" in page
    r = client.post(url(world, "gold/"), {"what": "assign", "users": "ann1, ann2",
                                          "per_unit": "1", "calibration": "1"}, follow=True)
    assert "4 assignments on 3 units (1 shared for calibration)" in r.content.decode()
    r = client.post(url(world, "gold/"), {"what": "assign", "users": "ann1 nobody"}, follow=True)
    assert "no such user: nobody" in r.content.decode()
    r = client.post(url(world, "gold/"), {"what": "assign", "users": "alice"}, follow=True)
    assert "alice is in a team of this competition" in r.content.decode()
    csv = client.get(url(world, "gold/trail.csv")).content.decode()
    assert csv.splitlines()[0] == "time,user,unit,action,detail" and ",assign," in csv


def test_an_annotator_cannot_post_organizer_forms(world, client):
    service.assign(world["pr"], world["ann"], per_unit=1)
    client.force_login(world["ann"][0])
    before = Assignment.objects.count()
    client.post(url(world, "gold/"), {"what": "assign", "users": "ann1", "per_unit": "2"})
    assert Assignment.objects.count() == before


def _upload(name, data: bytes):
    import io
    f = io.BytesIO(data)
    f.name = name
    return f


def _zip(files: dict) -> bytes:
    import io
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n, d in files.items():
            z.writestr(n, d)
    return buf.getvalue()


def test_organizer_creates_a_project_from_uploads(world, client):
    import json
    client.force_login(world["org"])
    texts = _zip({"11.json": json.dumps({"abstract": "A.", "reduced_content": "We use ALLBUS."}),
                  "12.txt": "No data here."})
    catalog = json.dumps({"7": "ALLBUS 2010", "8": "ALLBUS 2012"})
    cites = json.dumps([{"publication_id": 11, "data_set_id": 7}])
    r = client.post(url(world), {"title": "Uploaded", "slug": "up", "kind": "rcc-pairs",
                                 "per_unit": "2", "codebook": "Be *careful*.",
                                 "texts": _upload("t.zip", texts),
                                 "catalog": _upload("c.json", catalog.encode()),
                                 "citations": _upload("d.json", cites.encode())}, follow=True)
    page = r.content.decode()
    assert "project Uploaded: 1 units, 0 suggestions, 2 entries in 1 families" in page
    pr = world["comp"].workbench_projects.get(slug="up")
    (unit,) = pr.units.all()
    assert unit.key == "11|7" and unit.text == "A.\n\nWe use ALLBUS." and pr.per_unit == 2
    assert not pr.suggestions


@pytest.mark.parametrize("fields,files,message", [
    ({"slug": "Bad Slug", "kind": "svident"}, {}, "slug: lower-case"),
    ({"slug": "x", "kind": "rcc-pairs"}, {"catalog": b"{}"}, "needs the file(s): texts"),
    ({"slug": "x", "kind": "rcc-pairs"}, {"texts": {"../evil.txt": "x"}, "catalog": b"{}"},
     "t.zip"),
    ({"slug": "x", "kind": "rcc-pairs"}, {"texts": {"a b.txt": "x"}, "catalog": b"{}"},
     "named by its publication id"),
    ({"slug": "x", "kind": "svident"}, {"sentences": b"sentence\tuuid\nHello\t\n"},
     "sentences.tsv:2: uuid: missing"),
])
def test_bad_uploads_make_no_project(world, client, fields, files, message):
    client.force_login(world["org"])
    data = {"title": "T", **fields}
    for k, v in files.items():
        data[k] = _upload("t.zip" if k == "texts" else f"{k}.bin",
                          _zip(v) if isinstance(v, dict) else v)
    r = client.post(url(world), data, follow=True)
    assert message in r.content.decode()
    assert not world["comp"].workbench_projects.filter(slug="x").exists()


def test_only_organizers_create(world, client):
    client.force_login(world["ann"][0])
    assert client.post(url(world), {"slug": "z", "kind": "svident"}).status_code == 404
