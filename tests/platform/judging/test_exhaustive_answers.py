"""Answers of the exhaustive design: every rule of exhaustive_answers.py with its
exact message, the stored form, and the labels agreement compares."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from shareval.formats.errors import Problems
from shareval.formats.kbp import read_reference
from shareval.platform.judging import designs
from shareval.platform.judging.exhaustive_build import document_payload

from tests.tasks.kbp_tiny import RELATIONS, write_reference

from .exhaustive_world import BERLIN2_DE, BERLIN_DE, DOCS, OSLO

CAMP = SimpleNamespace(design=designs.EXHAUSTIVE, config={})
CAPITAL = "Berlin|25-32|P36|0-6"              # Germany -capital-> Berlin: not suggested


@pytest.fixture(scope="module")
def item(tmp_path_factory):
    ref = read_reference(write_reference(tmp_path_factory.mktemp("ref"), DOCS, RELATIONS),
                         Problems())
    pooled = {BERLIN_DE: {"subject": [0, 6], "subject_text": "Berlin", "relation": "P17",
                          "object": [25, 32], "object_text": "Germany"},
              BERLIN2_DE: {"subject": [53, 59], "subject_text": "Berlin", "relation": "P17",
                           "object": [25, 32], "object_text": "Germany"}}
    return SimpleNamespace(doc="Berlin", payload=document_payload(ref.documents["Berlin"],
                                                                  RELATIONS, pooled))


def clean(item, raw):
    return designs.clean_answer(CAMP, item, raw)


def bad(item, raw) -> str:
    with pytest.raises(designs.BadAnswer) as e:
        clean(item, raw)
    return str(e.value)


def page(accepted=(), rejected=(), added=()):
    return {"accepted": list(accepted), "rejected": list(rejected), "added": list(added)}


def rel(subject=(25, 32), relation="P36", obj=(0, 6)):
    return {"subject": list(subject), "relation": relation, "object": list(obj)}


def test_accepted_and_added_relations_are_stored_as_sorted_item_keys(item):
    got = clean(item, page([BERLIN2_DE], [BERLIN_DE], [rel()]))
    assert got == {"relations": sorted([BERLIN2_DE, CAPITAL])}
    # a relation by its label (any case) is stored by its id; repeats once
    assert clean(item, page([BERLIN2_DE, BERLIN_DE], [], [rel(relation="Capital"), rel()])) == \
        {"relations": sorted([BERLIN_DE, BERLIN2_DE, CAPITAL])}


def test_without_rejected_the_suggestions_not_accepted_are_rejected(item):
    assert clean(item, {"accepted": [BERLIN_DE]}) == {"relations": [BERLIN_DE]}
    assert clean(item, {"added": []}) == {"relations": []}


def test_the_stored_form_is_checked_and_kept(item):
    assert clean(item, {"relations": [CAPITAL, BERLIN_DE]}) == \
        {"relations": sorted([BERLIN_DE, CAPITAL])}
    assert bad(item, {"relations": [OSLO]}) == \
        f"relations[1]: {OSLO!r} is not a relation mention of this document"
    assert bad(item, {"relations": ["Berlin|0-6|country|25-32"]}) == \
        "relations[1]: relation: 'country' is not a relation of the inventory"
    assert bad(item, {"relations": ["Berlin|0-7|P17|25-32"]}) == \
        "relations[1]: subject: characters 0-7 ('Berlin ') do not fall on token boundaries"
    assert bad(item, {"relations": [CAPITAL], "added": []}) == \
        "give relations, or accepted, rejected and added, not both"


@pytest.mark.parametrize("added, message", [
    (rel(subject=(0,)), "added relation 1: subject: two character offsets [start, end] are needed"),
    (rel(subject=(0, True)), "added relation 1: subject: two character offsets [start, end] "
                             "are needed"),
    (rel(subject=(6, 6)), "added relation 1: subject: empty (start 6 is not before end 6)"),
    (rel(obj=(53, 70)), "added relation 1: object: characters 53-70 are outside the document "
                        "text (0-61)"),
    (rel(subject=(-1, 6)), "added relation 1: subject: characters -1-6 are outside the document "
                           "text (0-61)"),
    (rel(subject=(1, 6)), "added relation 1: subject: characters 1-6 ('erlin') do not fall on "
                          "token boundaries"),
    (rel(obj=(0, 5)), "added relation 1: object: characters 0-5 ('Berli') do not fall on token "
                      "boundaries"),
    (rel(relation="born in"), "added relation 1: relation: 'born in' is not a relation of the "
                              "inventory"),
    (rel(relation=None), "added relation 1: relation: None is not a relation of the inventory"),
    (rel(subject=(0, 6), obj=(0, 6)), "added relation 1: the subject and the object are the "
                                      "same mention (characters 0-6)"),
])
def test_added_relations_follow_every_rule(item, added, message):
    assert bad(item, page([BERLIN_DE, BERLIN2_DE], [], [rel(), added])) == \
        message.replace("relation 1", "relation 2")


def test_suggestion_decisions_are_checked(item):
    assert bad(item, page(["Berlin|0-6|P36|25-32"], [BERLIN_DE, BERLIN2_DE])) == \
        "accepted: 'Berlin|0-6|P36|25-32' is not a suggestion of this document"
    assert bad(item, page([BERLIN_DE], [OSLO])) == \
        f"rejected: {OSLO!r} is not a suggestion of this document"
    assert bad(item, page([BERLIN_DE], [])) == \
        "decide every suggestion: 1 not yet accepted or rejected"
    assert bad(item, page([BERLIN_DE], [BERLIN_DE, BERLIN2_DE])) == \
        "1 suggestion(s) both accepted and rejected"
    assert bad(item, page([BERLIN2_DE], [BERLIN_DE], [rel((0, 6), "P17", (25, 32))])) == \
        "added relation 1: it is a suggestion you rejected"


def test_shapes_and_sizes(item):
    assert bad(item, ["x"]) == "the answer must be an object"
    assert bad(item, {"accepted": "x"}) == "accepted: a list of relation keys is needed"
    assert bad(item, {"added": {"subject": [0, 6]}}) == \
        "added: a list of {subject, relation, object} is needed"
    assert bad(item, {"relations": [CAPITAL] * 2001}) == \
        "relations: at most 2000 relations per document"


def test_labels_say_yes_or_no_per_suggestion_and_yes_per_added_relation(item):
    labels = designs.labels(designs.EXHAUSTIVE, item, {"relations": [BERLIN_DE, CAPITAL]})
    assert labels == {BERLIN_DE: "yes", BERLIN2_DE: "no", CAPITAL: "yes"}
