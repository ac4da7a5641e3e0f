"""Exhaustive (recall) campaigns: documents drawn from the whole reference, the
pooled suggestions (never who output them), the design refused off KBP, and the
annotation page an annotator gets."""
from __future__ import annotations

import json

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.contrib.staticfiles import finders

from shareval.formats.errors import InvalidInput
from shareval.platform.judging import build, service
from shareval.platform.judging.forms import CampaignForm
from shareval.platform.judging.models import Assignment, Campaign

from .exhaustive_world import (BERLIN2_DE, BERLIN_DE, BIRTH, DOCS, OSLO, RESID, campaign,
                               kbp_world, submit_runs)

PARIS = {"title": "Paris", "sents": [["Paris", "is", "in", "France", "."]],
         "vertexSet": [[{"sent_id": 0, "pos": [0, 1], "type": "LOC"}],
                       [{"sent_id": 0, "pos": [3, 4], "type": "LOC"}]],
         "labels": [{"h": 0, "t": 1, "r": "P17"}]}


@pytest.fixture
def kbp(db, tmp_path):
    w = kbp_world(tmp_path, DOCS + [PARIS])
    submit_runs(w)
    ann = get_user_model().objects.create_user("ann1", password="ann1-pass-123")
    return {**w, "ann": ann}


def _items(camp):
    return {it.key: it for it in camp.items.all()}


def test_every_document_of_the_reference_may_be_drawn_with_its_pooled_suggestions(kbp):
    camp = campaign(kbp, [kbp["ann"]], n=4)
    items = _items(camp)
    # Paris: no team output anything there, drawn all the same (spec 002 samples the corpus)
    assert set(items) == {"Anna Berg", "Oslo", "Berlin", "Paris"}
    assert all(it.drawn_for == "recall" and it.doc == it.key and it.inclusion == 1.0
               for it in items.values())
    assert items["Paris"].payload["suggestions"] == [] and items["Paris"].submissions == []
    # BIRTH is in both runs: one suggestion; the pool is every team's mentions there
    sugg = items["Anna Berg"].payload["suggestions"]
    assert [s["key"] for s in sugg] == [BIRTH, RESID]
    assert sugg[0] == {"key": BIRTH, "subject": [0, 9], "subject_text": "Anna Berg",
                       "relation": "P19", "label": "place of birth", "object": [22, 26],
                       "object_text": "Oslo"}
    assert [s["key"] for s in items["Berlin"].payload["suggestions"]] == [BERLIN_DE, BERLIN2_DE]
    assert items["Oslo"].payload["suggestions"][0]["key"] == OSLO      # run gave "country"
    assert items["Anna Berg"].submissions == ["Team A", "Team B"]
    p = items["Berlin"].payload
    assert p["sentences"][1] == ["Anna", "Berg", "visited", "Berlin", "."]
    assert p["starts"][1] == [35, 40, 45, 53, 60]
    assert p["relations"]["P36"] == "capital"
    assert not any("Team" in json.dumps(it.payload) for it in items.values())


def test_documents_are_drawn_uniformly_with_the_seed(kbp):
    titles = sorted(d["title"] for d in DOCS + [PARIS])
    for seed in (0, 1, 2):
        camp = campaign(kbp, [kbp["ann"]], n=2, seed=seed)
        want = {titles[i] for i in np.random.default_rng(seed).choice(4, 2, replace=False)}
        assert set(_items(camp)) == want
        assert all(it.inclusion == 0.5 for it in camp.items.all())
    # `docs` counts documents when given (the form's recall field), else `n`
    camp = service.create_campaign(kbp["ds"]["dev"], "Docs", "exhaustive", 1, 30, {},
                                   [kbp["ann"]], n=50, docs=3)
    assert camp.items.count() == 3


def test_the_design_is_refused_off_kbp_and_with_an_items_file(world):
    w = world
    with pytest.raises(ValueError) as e:
        service.create_campaign(w["ds"]["dev"], "Recall", "exhaustive", 1, 30, {}, [])
    assert str(e.value) == ("exhaustive relation annotation needs a kbp-relations dataset "
                            "(documents and a relation inventory); 'dev' is a classification "
                            "dataset")
    assert not Campaign.objects.exists()                     # nothing half-made
    datasets = w["ds"]["dev"].phase.datasets.all()
    form = CampaignForm(w["comp"], datasets, {"title": "R", "dataset": w["ds"]["dev"].pk,
                                              "design": "exhaustive", "k": 1, "timeout": 30})
    assert not form.is_valid()
    assert form.problems() == ["design: " + str(e.value)]
    camp = Campaign.objects.create(dataset=w["ds"]["dev"], slug="r", title="R",
                                   design=Campaign.EXHAUSTIVE)
    with pytest.raises(InvalidInput) as e:
        build.parse_items(camp, '{"key": "a", "payload": {}}\n', "items.jsonl")
    assert [str(p) for p in e.value.problems] == [
        "items.jsonl: items: an exhaustive campaign annotates documents of the reference: "
        "build it from the runs, without a file"]


def _start(client, camp, user):
    client.force_login(user)
    client.post(f"/judging/{camp.pk}/")
    return Assignment.objects.get(item__campaign=camp, judge=user)


def test_the_annotation_page_shows_the_document_and_suggestions_never_teams(kbp, client):
    camp = campaign(kbp, [kbp["ann"]], n=4)
    a = _start(client, camp, kbp["ann"])
    html = client.get(f"/judging/{camp.pk}/").content.decode()
    assert "shareval/judge_exhaustive.js" in html and 'id="doc-text"' in html
    assert "Team A" not in html and "Team B" not in html
    ctx = json.loads(html.split('id="ctx" type="application/json">')[1].split("</script>")[0])
    doc = ctx["document"]
    assert doc["title"] == a.item.doc and doc["sentences"] == a.item.payload["sentences"]
    assert [s["key"] for s in doc["suggestions"]] == \
        [s["key"] for s in a.item.payload["suggestions"]]
    assert doc["relations"]["P19"] == "place of birth"
    assert "Mark every relation the document states" in html           # the ? help
    assert finders.find("shareval/judge_exhaustive.js")                 # served as static


def test_an_answer_posted_by_the_page_is_stored_and_a_bad_one_is_not(kbp, client):
    camp = campaign(kbp, [kbp["ann"]], n=4)
    a = _start(client, camp, kbp["ann"])
    keys = [s["key"] for s in a.item.payload["suggestions"]]
    bad = {"accepted": keys, "rejected": [], "added": [
        {"subject": [0, 2], "relation": "P17", "object": [3, 5]}]}
    r = client.post(f"/judging/{camp.pk}/", {"assignment": a.pk, "answer": json.dumps(bad)},
                    follow=True)
    assert "Not saved: added relation 1: subject: characters 0-2" in r.content.decode()
    a.refresh_from_db()
    assert a.status == Assignment.STARTED
    good = {"accepted": keys, "rejected": [], "added": []}
    client.post(f"/judging/{camp.pk}/", {"assignment": a.pk, "answer": json.dumps(good)})
    a.refresh_from_db()
    assert (a.status, a.answer) == (Assignment.DONE, {"relations": sorted(keys)})


def test_the_annotators_work_page_counts_documents(kbp, client):
    campaign(kbp, [kbp["ann"]], n=4)
    client.force_login(kbp["ann"])
    html = client.get("/work/").content.decode()
    assert "Annotate documents" in html and "<b>4</b> documents" in html
