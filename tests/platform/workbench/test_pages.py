"""The workbench's pages: who sees what, the organizer's forms, the header's work."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from shareval.platform import work as site_work
from shareval.platform.workbench import service
from shareval.platform.workbench.models import Assignment, Entry, Unit
from tests.platform.factories import make_world


@pytest.fixture
def world(db, tmp_path):
    w = make_world(tmp_path)
    w["comp"].organizers.add(w["org"])
    User = get_user_model()
    w["ann"] = [User.objects.create_user(n, password=f"{n}-pass-123") for n in ("ann1", "ann2")]
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
