"""KBP relation mentions as judged items: units and keys, the document view with
subject and object marked by offsets, chains worded from entity types, guidance,
and control items (kbp_world.py's three documents, checked by hand)."""
from __future__ import annotations

import json

import pytest

from shareval.formats.kbp import Document, KbpReference
from shareval.formats.kbp_runs import item_key
from shareval.platform.judging import content, designs, kbp_items, kbp_words, service
from shareval.platform.judging.models import Assignment, Campaign

from .kbp_world import RUN_A, make_kbp_world, run_text, write_reference

P19_ANNA = item_key("Anna Berg", (0, 9), "P19", (22, 26))


def _res(folder) -> content.Resources:
    res = content.Resources()
    res.reference, res.task = write_reference(folder), "kbp-relations"
    return res


def _positions(sentences) -> list[tuple[int, int, str]]:
    """(start, end, mark) of every marked segment, counted from each sentence's start."""
    out = []
    for s in sentences:
        at = s["start"]
        for g in s["segments"]:
            if g["m"]:
                out.append((at, at + len(g["t"]), g["m"]))
            at += len(g["t"])
    return out


def test_a_run_is_relation_mentions_keyed_by_spans_and_relation_id(tmp_path):
    res = _res(tmp_path / "ref")
    (tmp_path / "a.tsv").write_text(run_text(RUN_A))
    units = content.run_units("kbp-relations", tmp_path / "a.tsv", res)
    residence = item_key("Anna Berg", (83, 87), "P551", (103, 108))   # given by its label
    assert set(units) == {P19_ANNA, residence, item_key("Oslo", (0, 4), "P17", (23, 29)),
                          item_key("Karl Lund", (0, 9), "P20", (22, 28)),
                          item_key("Anna Berg", (83, 87), "P19", (22, 26))}
    u = units[P19_ANNA]
    assert (u.doc, u.group, u.mentions) == ("Anna Berg", "Anna Berg", ("Anna Berg", "Oslo"))
    assert u.text == "“Anna Berg” — place of birth — “Oslo”"
    assert units[residence].evidence == (2,)


def test_the_view_marks_exactly_the_offsets_and_shows_provenance_first(tmp_path):
    res = _res(tmp_path / "ref")
    v = kbp_items.kbp_view(res, P19_ANNA)
    doc_text = res.kbp.documents["Anna Berg"].text
    assert (v["kind"], v["title"], v["relation"]) == ("relation_doc", "Anna Berg",
                                                      "place of birth")
    # only 0-9 and 22-26: not the other "Oslo" (University of Oslo), not "Berg" at 83
    assert _positions(v["sentences"]) == [(0, 9, "subject"), (22, 26, "object")]
    assert " ".join("".join(g["t"] for g in s["segments"]) for s in v["sentences"]) == doc_text
    assert [s["n"] for s in v["provenance"]] == [0]
    assert [s["provenance"] for s in v["sentences"]] == [True, False, False]
    # the run's evidence adds its sentences; a sentence not next to the previous is a gap
    v = kbp_items.kbp_view(res, P19_ANNA, evidence=(2,))
    assert [(s["n"], s["gap"]) for s in v["provenance"]] == [(0, False), (2, True)]
    # spans across sentences and overlapping spans
    assert kbp_items.plain_provenance(v) == "[subject: Anna Berg] was born in [object: Oslo] " \
                                            "on 3 May 1950 . … Berg later lived in Paris ."
    v = kbp_items.kbp_view(res, item_key("Anna Berg", (0, 9), "P551", (5, 9)))
    assert _positions(v["sentences"]) == [(0, 5, "subject"), (5, 9, "both")]
    assert kbp_items.plain_provenance(v).startswith("[subject: Anna ][subject and object: Berg]")
    v = kbp_items.kbp_view(res, item_key("Anna Berg", (30, 46), "P551", (103, 108)))
    assert _positions(v["sentences"]) == [(30, 42, "subject"), (43, 46, "subject"),
                                          (103, 108, "object")]
    assert [s["n"] for s in v["provenance"]] == [0, 1, 2]
    assert kbp_items.plain_provenance(kbp_items.kbp_view(res, P19_ANNA)) == \
        "[subject: Anna Berg] was born in [object: Oslo] on 3 May 1950 ."


def test_chains_are_worded_from_the_entity_types_with_guidance(tmp_path):
    ref = _res(tmp_path / "ref").kbp
    chains = kbp_items.kbp_chains(ref, {"place of birth": "A hospital's city counts.",
                                        "P570": "Years count."})
    assert chains["P19"] == [
        {"id": "subject", "text": "Is “{subject}” a person?"},
        {"id": "object", "text": "Is “{object}” a place?"},
        {"id": "relation", "guidance": "A hospital's city counts.",
         "text": "Does the text say that “{subject}” was born in “{object}”?"}]
    assert chains["P69"][1]["text"] == "Is “{object}” an organization?"
    assert chains["P570"][1]["text"] == "Is “{object}” a date or time?"
    assert chains["P570"][2]["guidance"] == "Years count."
    assert chains["P17"][0]["text"] == "Is “{subject}” a place?"
    # no labels in the reference: only the relation question
    assert chains["P108"] == [{"id": "relation", "text": "Does the text say that “{subject}"
                                                         "” works or worked for “{object}”?"}]
    assert not designs.check_chains({"chains": chains})
    payload = {"subject": "Anna Berg", "object": "Oslo"}
    assert designs.fill(chains["P19"][2]["text"], payload) == \
        "Does the text say that “Anna Berg” was born in “Oslo”?"


def test_labels_not_in_the_phrase_table_read_as_nouns_or_preposition_phrases():
    assert kbp_words.relation_question("sponsor") == \
        "Does the text say that the sponsor of “{subject}” is “{object}”?"
    assert kbp_words.relation_question("acquired by") == \
        "Does the text say that “{subject}” is acquired by “{object}”?"
    assert designs.fill(kbp_words.relation_question("odd {label}"), {"subject": "S",
                                                                     "object": "O"}) == \
        "Does the text say that the odd {label} of “S” is “O”?"


def _reference(subject_types: list[str]) -> KbpReference:
    """One document per label of relation R, its subject of the given type."""
    docs = {}
    for i, kind in enumerate(subject_types):
        docs[f"d{i}"] = Document(f"d{i}", [["a", "b"]], "a b", [[0, 2]], [{(0, 1)}, {(2, 3)}],
                                 {(0, 1, "R")}, types=[kind, "LOC"])
    return KbpReference("x", docs, {"R": "part of"})


def test_a_side_names_every_type_of_at_least_a_tenth_of_the_labels():
    chains = kbp_items.kbp_chains(_reference(["LOC"] * 8 + ["ORG"] + ["MISC"]))
    assert chains["R"][0]["text"] == ("Is “{subject}” a place, an organization or another "
                                      "named thing (such as a work, an event or a "
                                      "nationality)?")
    chains = kbp_items.kbp_chains(_reference(["LOC"] * 19 + ["ORG"]))
    assert chains["R"][0]["text"] == "Is “{subject}” a place?"
    # untyped mentions: no question about that side
    assert [q["id"] for q in kbp_items.kbp_chains(_reference([""] * 3))["R"]] == \
        ["object", "relation"]


# campaigns -------------------------------------------------------------------------------

@pytest.fixture
def kbp(db, tmp_path):
    return make_kbp_world(tmp_path)


def _campaign(w, config=None, **kw):
    kw = {"n": 50, "seed": 3, **kw}
    return service.create_campaign(w["ds"], "Relations", Campaign.CHAIN, 2, 30,
                                   {"gold_every": 0, **(config or {})}, w["judges"], **kw)


def test_a_chain_campaign_on_kbp_gets_the_chains_and_relation_payloads(kbp):
    camp = _campaign(kbp, {"guidance": {"P19": "Only birth places."}})
    assert camp.config["chains"]["P19"][2]["guidance"] == "Only birth places."
    items = {i.key: i for i in camp.items.all()}
    assert len(items) == 9
    p = items[P19_ANNA].payload
    assert {k: p[k] for k in ("type", "subject", "object", "relation", "doc", "text")} == {
        "type": "P19", "subject": "Anna Berg", "object": "Oslo", "relation": "place of birth",
        "doc": "Anna Berg", "text": "“Anna Berg” — place of birth — “Oslo”"}
    assert p["view"]["kind"] == "relation_doc" and items[P19_ANNA].submissions == \
        ["Team A", "Team B"]
    assert set(camp.outputs.get(name="Team A").keys) == set(items) - {
        k for k, i in items.items() if i.submissions == ["Team B"]}
    assert kbp_items.guidance_for(camp.config, p) == "Only birth places."
    assert kbp_items.guidance_for({"guidance": {"Place of Birth": "x"}}, p) == "x"
    # the organizer's own chains win
    own = {"chains": {"default": [{"id": "relation", "text": "Right?"}]}}
    assert _campaign(kbp, own).config["chains"] == own["chains"]


def test_controls_need_a_kbp_reference_with_labels(tmp_path):
    from .kbp_world import DOCUMENTS
    res = _res(tmp_path / "ref")
    bare = [{**d, "labels": []} for d in DOCUMENTS]
    (res.reference / "documents.json").write_text(json.dumps(bare), encoding="utf-8")
    with pytest.raises(ValueError, match="controls: the reference has no relation labels"):
        kbp_items.campaign_config(res, Campaign.CHAIN, {"controls": 2}, True)
    res = content.Resources()
    res.task = "classification"
    with pytest.raises(ValueError, match="controls: control items are made from a "
                                         "kbp-relations dataset's reference"):
        kbp_items.campaign_config(res, Campaign.CHAIN, {"controls": 2}, True)
    assert kbp_items.campaign_config(res, Campaign.CHAIN, {"guidance": {"x": "y"}}, True) == \
        {"guidance": {"x": "y"}}                    # no reference: no chains to make


def test_campaign_settings_that_cannot_work_are_refused_with_their_reason(kbp):
    with pytest.raises(ValueError, match="guidance: 'born in' is not a relation id or label"):
        _campaign(kbp, {"guidance": {"born in": "x"}})
    with pytest.raises(ValueError, match="controls: a whole number"):
        _campaign(kbp, {"controls": "many"})

    class Items:
        name = "items.jsonl"

        def read(self, n):
            return b""
    with pytest.raises(ValueError, match="an items file gives its own gold items"):
        _campaign(kbp, {"controls": 2}, upload=Items())
    assert not Campaign.objects.exists()


def test_controls_are_gold_items_from_the_reference_half_true_half_false(kbp):
    camp = _campaign(kbp, {"controls": 5})
    controls = list(camp.items.filter(gold__isnull=False).order_by("pk"))
    assert len(controls) == 5
    ref = content.Resources(kbp["ds"]).kbp
    outputs = {k for o in camp.outputs.all() for k in o.keys}
    truth = []
    for c in controls:
        assert c.key.endswith("|control") and c.key.removesuffix("|control") not in outputs
        doc, s, rid, o = c.key.removesuffix("|control").split("|")
        d = ref.documents[doc]
        s, o = (tuple(map(int, x.split("-"))) for x in (s, o))
        h = [e for e, spans in enumerate(d.entities) if s in spans]
        t = [e for e, spans in enumerate(d.entities) if o in spans]
        held = any((a, b, rid) in d.labels for a in h for b in t)
        truth.append(held)
        assert c.gold == ({"answers": {"subject": "yes", "object": "yes", "relation": "yes"},
                           "correct": True} if held else
                          {"answers": {"subject": "yes", "object": "yes", "relation": "no"},
                           "correct": False})
        if not held:      # a false control: a labelled pair, another relation its types fit
            assert any((a, b) == (x, y) for a in h for b in t for x, y, _ in d.labels)
    assert sorted(truth) == [False, False, True, True, True]
    again = _campaign(kbp, {"controls": 5})
    assert [c.key for c in again.items.filter(gold__isnull=False).order_by("pk")] == \
        [c.key for c in controls]                                       # the seed decides
    other = _campaign(kbp, {"controls": 5}, seed=4)
    assert {c.key for c in other.items.filter(gold__isnull=False)} != {c.key for c in controls}


def test_controls_look_like_every_other_item_on_the_judges_page(kbp, client):
    camp = _campaign(kbp, {"controls": 2})
    judge = kbp["judges"][0]
    client.force_login(judge)
    seen = {}
    for item in (camp.items.filter(gold__isnull=False).first(),
                 camp.items.filter(gold__isnull=True).first()):
        Assignment.objects.filter(judge=judge, status__in=("assigned", "in_progress")).update(
            status="done", answer={"answers": {}, "correct": True})
        a = Assignment.objects.create(item=item, judge=judge, deadline="2999-01-01T00:00Z")
        html = client.get(f"/judging/{camp.pk}/").content.decode()
        assert item.payload["view"]["title"] in html
        assert "control" not in html.lower() and "gold" not in html.lower()
        ctx = json.loads(html.split('<script id="ctx" type="application/json">')[1]
                         .split("</script>")[0])
        seen[item.gold is None] = (sorted(ctx), sorted(ctx["view"]), [q["id"] for q in
                                                                       ctx["chain"]],
                                   sorted(item.payload))
        a.delete()
    assert seen[True] == seen[False]
