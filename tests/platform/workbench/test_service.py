"""The workbench's service: assignments, edits saved as you go, conflicts, families,
suggestions, access and the append-only trail."""
from __future__ import annotations

import json

import pytest

from shareval.platform.workbench import service
from shareval.platform.workbench.models import (CURATOR, DONE, FAMILY, PROGRESS, SUGGESTED,
                                                Annotation, Assignment, Entry, Event,
                                                Suggestion, Unit)

TEXT = "We use the ANES 1952 Time Series Study and the ANES 1956 survey. Nothing else."


@pytest.fixture
def world(people):
    return people


def pairs_project(w):
    pr = service.create_project(w["comp"], "gold", "Gold", "rcc-pairs", w["org"])
    Entry.objects.bulk_create([Entry(project=pr, key="1", title="ANES 1952", family="anes"),
                               Entry(project=pr, key="2", title="ANES 1956", family="anes"),
                               Entry(project=pr, key="9", title="Other survey")])
    for i, ds in enumerate(("1", "2")):
        Unit.objects.create(project=pr, key=f"p1|{ds}", title=f"p1 {ds}", text=TEXT, position=i,
                            meta={"publication_id": "p1", "data_set_id": ds, "cited": ["1", "2"]})
    Unit.objects.create(project=pr, key="p2|9", title="p2", text="The other survey.", position=2,
                        meta={"publication_id": "p2", "data_set_id": "9"})
    return pr


def test_assign_balances_and_shares_calibration_units(world):
    pr = pairs_project(world)
    n = service.assign(pr, world["ann"], per_unit=1, calibration=1)
    assert n == {"units": 3, "assignments": 4, "calibration": 1}
    first = pr.units.get(position=0)
    assert first.round == 1 and first.assignments.count() == 2
    loads = sorted(Assignment.objects.filter(user=u).count() for u in world["ann"])
    assert loads == [2, 2]
    # nothing left to assign: a second call assigns nothing
    assert service.assign(pr, world["ann"])["assignments"] == 0


def test_participants_cannot_be_assigned_nor_see_units(world):
    pr = pairs_project(world)
    with pytest.raises(ValueError, match="alice is in a team"):
        service.assign(pr, [world["users"]["alice"]])
    unit = pr.units.first()
    Assignment.objects.create(unit=unit, user=world["users"]["alice"])   # made before joining
    assert service.assignment_for(pr, unit.pk, world["users"]["alice"]) is None


def _a(pr, user, key):
    return Assignment.objects.get_or_create(unit=pr.units.get(key=key), user=user)[0]


def test_add_link_delete_and_versions(world):
    pr = pairs_project(world)
    a = _a(pr, world["ann"][0], "p1|9") if False else _a(pr, world["ann"][0], "p2|9")
    out = service.apply_ops(a, a.user, 0, [{"op": "add", "kind": "span", "begin": 4, "end": 16,
                                            "target": "9"}])
    assert out["version"] == 1 and out["status"] == PROGRESS
    (span,) = out["annotations"]
    assert (span["begin"], span["end"], span["label"], span["target"]) == (4, 16, "dataset", "9")
    assert span["target_title"] == "Other survey" and out["created"] == [span["id"]]
    out = service.apply_ops(a, a.user, 1, [{"op": "link", "id": span["id"], "target": ""},
                                           {"op": "status", "value": "done"}])
    assert out["annotations"][0]["target"] == "" and out["status"] == DONE
    out = service.apply_ops(a, a.user, 2, [{"op": "delete", "id": span["id"]}])
    assert out["annotations"] == [] and out["status"] == DONE and out["version"] == 3


def test_a_stale_version_is_a_conflict_and_changes_nothing(world):
    pr = pairs_project(world)
    a = _a(pr, world["ann"][0], "p2|9")
    service.apply_ops(a, a.user, 0, [{"op": "add", "kind": "span", "begin": 0, "end": 3}])
    with pytest.raises(service.Conflict, match="saved elsewhere") as e:
        service.apply_ops(a, a.user, 0, [{"op": "add", "kind": "span", "begin": 4, "end": 9}])
    assert e.value.version == 1
    assert a.annotations.count() == 1


@pytest.mark.parametrize("op,field,message", [
    ({"op": "add", "kind": "span", "begin": 5, "end": 999}, "begin", "outside the text"),
    ({"op": "add", "kind": "span", "begin": 5, "end": 5}, "begin", "outside the text"),
    ({"op": "add", "kind": "span", "begin": 0, "end": 3, "target": "404"}, "target",
     "no entry '404' in the catalog"),
    ({"op": "add", "kind": "span", "begin": 0, "end": 3, "label": "person"}, "label",
     "not a label"),
    ({"op": "delete", "id": 12345}, "id", "no such annotation"),
    ({"op": "verdict", "suggestion": 12345, "accepted": True}, "suggestion", "no such"),
    ({"op": "answer", "key": "nope", "value": "yes"}, "key", "is not one of"),
    ({"op": "explode"}, "op", "is not one of"),
])
def test_bad_actions_name_the_field_and_save_nothing(world, op, field, message):
    pr = pairs_project(world)
    a = _a(pr, world["ann"][0], "p2|9")
    good = {"op": "add", "kind": "span", "begin": 0, "end": 3}
    with pytest.raises(service.BadOp, match=message) as e:
        service.apply_ops(a, a.user, 0, [good, op])
    assert (e.value.index, e.value.field) == (1, field)
    a.refresh_from_db()
    assert a.annotations.count() == 0 and a.version == 0      # all or nothing


def test_family_member_coded_once_for_all_pairs_of_the_publication(world):
    pr = pairs_project(world)
    u = world["ann"][0]
    a1, a2 = _a(pr, u, "p1|1"), _a(pr, u, "p1|2")
    out = service.apply_ops(a1, u, 0, [{"op": "add", "kind": "span", "begin": 11, "end": 41,
                                        "target": "1"}])
    (copy,) = a2.annotations.all()
    assert (copy.begin, copy.end, copy.target, copy.origin) == (11, 41, "2", FAMILY)
    a2.refresh_from_db()
    assert a2.version == 1 and a2.status == PROGRESS
    state = service.unit_state(a2)
    assert state["annotations"][0]["note"] == "coded for family member ANES 1952"
    # deleting the original takes its copies with it
    service.apply_ops(a1, u, 1, [{"op": "delete", "id": out["created"][0]}])
    assert not a2.annotations.exists()
    # another annotator's pairs are not touched
    other = _a(pr, world["ann"][1], "p1|2")
    service.apply_ops(a1, u, 2, [{"op": "add", "kind": "span", "begin": 11, "end": 41,
                                  "target": "1"}])
    assert not other.annotations.exists()


def test_family_in_a_publication_unit_copies_to_cited_members(world):
    pr = service.create_project(world["comp"], "pubs", "Pubs", "rcc-publications", world["org"])
    Entry.objects.bulk_create([Entry(project=pr, key="1", title="A 1", family="f"),
                               Entry(project=pr, key="2", title="A 2", family="f"),
                               Entry(project=pr, key="3", title="A 3", family="f")])
    unit = Unit.objects.create(project=pr, key="p1", title="p1", text=TEXT,
                               meta={"cited": ["1", "2"]})
    a = Assignment.objects.create(unit=unit, user=world["ann"][0])
    service.apply_ops(a, a.user, 0, [{"op": "add", "kind": "span", "begin": 11, "end": 41,
                                      "target": "1"}])
    assert sorted(a.annotations.values_list("target", "origin")) == [("1", "manual"),
                                                                      ("2", FAMILY)]


def test_suggestions_accept_reject_and_record_origin(world):
    pr = pairs_project(world)
    unit = pr.units.get(key="p2|9")
    s1 = Suggestion.objects.create(unit=unit, begin=4, end=16, target="9", score=0.9,
                                   source="rcc-linker")
    s2 = Suggestion.objects.create(unit=unit, begin=0, end=3, target="9", score=0.2,
                                   source="rcc-linker")
    a = _a(pr, world["ann"][0], "p2|9")
    out = service.apply_ops(a, a.user, 0, [{"op": "verdict", "suggestion": s1.pk, "accepted": True},
                                           {"op": "verdict", "suggestion": s2.pk, "accepted": False}])
    (ann,) = out["annotations"]
    assert ann["origin"] == SUGGESTED and ann["suggestion"] == s1.pk
    assert {s["id"]: s["verdict"] for s in out["suggestions"]} == {s1.pk: True, s2.pk: False}
    # changing one's mind: rejecting the accepted one removes its annotation
    out = service.apply_ops(a, a.user, 1, [{"op": "verdict", "suggestion": s1.pk,
                                            "accepted": False}])
    assert out["annotations"] == []
    # suggestions off: the page shows none
    pr.suggestions = False
    pr.save()
    assert service.unit_state(a)["suggestions"] == []


def test_answers_replace_each_other(world):
    pr = pairs_project(world)
    a = _a(pr, world["ann"][0], "p2|9")
    service.apply_ops(a, a.user, 0, [{"op": "answer", "key": "cited", "value": "yes"}])
    out = service.apply_ops(a, a.user, 1, [{"op": "answer", "key": "cited", "value": "no"}])
    assert [(x["label"], x["value"]) for x in out["annotations"]] == [("cited", "no")]


def test_pages_cut_long_texts_at_paragraphs_and_cover_them():
    text = ("word " * 300 + "\n\n") * 40
    cuts = service.pages(text, size=4000)
    assert cuts[0][0] == 0 and cuts[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(cuts, cuts[1:]))
    assert all(text[e - 2:e] == "\n\n" for _, e in cuts[:-1])
    assert all(e - b <= 5000 for b, e in cuts)


def test_unit_state_shows_only_the_page(world):
    pr = pairs_project(world)
    long = "x " * 20000
    unit = Unit.objects.create(project=pr, key="long", title="long", text=long, position=9)
    a = Assignment.objects.create(unit=unit, user=world["ann"][0])
    service.apply_ops(a, a.user, 0, [{"op": "add", "kind": "span", "begin": 30000, "end": 30001}])
    s0, s2 = service.unit_state(a, 0), service.unit_state(a, 2)
    assert s0["unit"]["pages"] == 4 and s0["annotations"] == []
    assert s2["unit"]["page_begin"] <= 30000 < s2["unit"]["page_end"]
    assert [x["begin"] for x in s2["annotations"]] == [30000]
    assert s2["unit"]["text"] == long[s2["unit"]["page_begin"]:s2["unit"]["page_end"]]


def test_trail_is_append_only_and_records_each_save(world):
    pr = pairs_project(world)
    a = _a(pr, world["ann"][0], "p2|9")
    service.apply_ops(a, a.user, 0, [{"op": "add", "kind": "span", "begin": 0, "end": 3}])
    e = Event.objects.filter(project=pr, action="edit").get()
    assert e.detail["ops"][0]["add"]["begin"] == 0 and e.user == a.user
    with pytest.raises(PermissionError):
        e.save()
    with pytest.raises(PermissionError):
        Event.objects.filter(project=pr).delete()


def test_curator_gets_units_two_annotators_finished(world):
    pr = pairs_project(world)
    service.assign(pr, world["ann"], per_unit=2)
    Assignment.objects.filter(unit__key="p1|1").update(status=DONE)
    assert service.add_curator(pr, world["org"]) == 1
    assert Assignment.objects.get(role=CURATOR).unit.key == "p1|1"


def test_search_entries_by_title_words_and_key(world):
    pr = pairs_project(world)
    assert [r["key"] for r in service.search_entries(pr, "anes 1956")] == ["2"]
    assert [r["key"] for r in service.search_entries(pr, "9")][0] == "9"
    assert service.search_entries(pr, "   ") == []


def test_json_views_answer_only_the_assignee(world, client):
    pr = pairs_project(world)
    a = _a(pr, world["ann"][0], "p2|9")
    url = f"/c/{world['comp'].slug}/workbench/gold/u/{a.unit_id}/"
    client.force_login(world["ann"][1])
    assert client.get(url + "state").status_code == 404
    client.force_login(world["ann"][0])
    assert client.get(url + "state").json()["unit"]["key"] == "p2|9"
    r = client.post(url + "ops", json.dumps({"version": 0, "ops": [
        {"op": "add", "kind": "span", "begin": 0, "end": 3}]}), content_type="application/json")
    assert r.status_code == 200 and r.json()["version"] == 1
    r = client.post(url + "ops", json.dumps({"version": 0, "ops": [
        {"op": "add", "kind": "span", "begin": 4, "end": 9}]}), content_type="application/json")
    assert r.status_code == 409 and r.json()["version"] == 1
    r = client.post(url + "ops", "{", content_type="application/json")
    assert r.status_code == 400 and "not JSON" in r.json()["error"]
    r = client.post(url + "ops", json.dumps({"version": 1, "ops": [{"op": "delete", "id": "x"}]}),
                    content_type="application/json")
    assert r.status_code == 400 and r.json()["field"] == "id"
    assert Annotation.objects.filter(assignment=a).count() == 1


def test_withdrawn_verdict_is_as_if_never_decided(world):
    pr = pairs_project(world)
    unit = pr.units.get(key="p2|9")
    s = Suggestion.objects.create(unit=unit, begin=4, end=16, target="9", score=0.9, source="x")
    a = _a(pr, world["ann"][0], "p2|9")
    service.apply_ops(a, a.user, 0, [{"op": "verdict", "suggestion": s.pk, "accepted": True}])
    out = service.apply_ops(a, a.user, 1, [{"op": "verdict", "suggestion": s.pk, "accepted": None}])
    assert out["annotations"] == [] and out["suggestions"][0]["verdict"] is None


def test_curator_sees_annotators_side_by_side_and_takes_with_a_trail(world):
    pr = pairs_project(world)
    a1, a2 = (_a(pr, u, "p2|9") for u in world["ann"])
    x = service.apply_ops(a1, a1.user, 0, [{"op": "add", "kind": "span", "begin": 4,
                                            "end": 16}])["created"][0]
    service.apply_ops(a2, a2.user, 0, [{"op": "add", "kind": "span", "begin": 4, "end": 9}])
    cur = service.curate_as_organizer(pr, a1.unit_id, world["org"])
    state = service.unit_state(cur)
    assert [(o["user"], [(y["begin"], y["end"]) for y in o["annotations"]])
            for o in state["others"]] == [("ann1", [(4, 16)]), ("ann2", [(4, 9)])]
    out = service.apply_ops(cur, world["org"], 0, [{"op": "add", "kind": "span", "begin": 4,
                                                    "end": 16, "source": x}])
    (gold,) = out["annotations"]
    assert gold["origin"] == "curated" and gold["source"] == x
    # an annotator cannot claim to take from others
    with pytest.raises(service.BadOp, match="only a curator"):
        service.apply_ops(a2, a2.user, 1, [{"op": "add", "kind": "span", "begin": 0, "end": 3,
                                            "source": x}])
    assert "others" not in service.unit_state(a1)


def test_accepting_a_suggestion_already_marked_by_hand_keeps_one_annotation(world):
    pr = pairs_project(world)
    unit = pr.units.get(key="p2|9")
    s = Suggestion.objects.create(unit=unit, begin=4, end=16, label="dataset", target="9",
                                  score=0.9, source="x")
    a = _a(pr, world["ann"][0], "p2|9")
    service.apply_ops(a, a.user, 0, [{"op": "add", "kind": "span", "begin": 4, "end": 16,
                                      "target": "9"}])
    out = service.apply_ops(a, a.user, 1, [{"op": "verdict", "suggestion": s.pk,
                                            "accepted": True}])
    (ann,) = out["annotations"]
    assert ann["origin"] == SUGGESTED and ann["suggestion"] == s.pk


def test_a_pair_span_without_link_is_coded_for_the_pair_s_family(world):
    pr = pairs_project(world)
    u = world["ann"][0]
    a1, a2 = _a(pr, u, "p1|1"), _a(pr, u, "p1|2")
    service.apply_ops(a1, u, 0, [{"op": "add", "kind": "span", "begin": 11, "end": 15}])
    (copy,) = a2.annotations.all()
    assert (copy.begin, copy.end, copy.target, copy.origin) == (11, 15, "2", FAMILY)
