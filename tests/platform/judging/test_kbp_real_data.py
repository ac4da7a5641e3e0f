"""The question chains worded from Re-DocRED's dev set and its 96 relations: every
relation with labels gets the three questions, and they read as English (no raw
relation id, no 'None', no placeholder left), filled with a real mention pair."""
from __future__ import annotations

import re

import pytest

from shareval.formats.errors import Problems
from shareval.formats.kbp import read_reference
from shareval.platform.judging import designs, kbp_items, kbp_words
from tests.conftest import SHARED_DATA

KBP = SHARED_DATA / "kbp"


@pytest.fixture(scope="module")
def reference():
    if not (KBP / "re-docred-dev.json").exists():
        pytest.skip(f"Re-DocRED data not found at {KBP} (set SHAREVAL_SHARED_DATA)")
    problems = Problems()
    ref = read_reference(KBP, problems)
    assert not problems
    return ref


def test_every_relation_with_labels_gets_a_natural_chain(reference):
    chains = kbp_items.kbp_chains(reference, {})
    assert set(chains) == set(reference.relations) and not designs.check_chains(
        {"chains": chains})
    examples = {}
    for doc in reference.documents.values():
        for h, t, rid in sorted(doc.labels):
            s, o = min(doc.entities[h]), min(doc.entities[t])
            examples.setdefault(rid, {"subject": doc.text[s[0]:s[1]],
                                      "object": doc.text[o[0]:o[1]]})
    assert len(examples) == 95
    # the phrase table covers the inventory: no label falls back to the generic wording
    assert {label for label in reference.relations.values()} <= set(kbp_words.PHRASES)
    for rid, example in examples.items():
        chain = chains[rid]
        assert [q["id"] for q in chain] == ["subject", "object", "relation"], rid
        for q in chain:
            text = designs.fill(q["text"], example)
            assert not re.search(r"\bP\d+\b|None|[{}]|  ", text), (rid, text)
            assert text.endswith("?") and text[0].isupper(), (rid, text)
            assert f"“{example['subject']}”" in text or f"“{example['object']}”" in text
    assert designs.fill(chains["P19"][2]["text"], {"subject": "Schneider",
                                                   "object": "Mediaș"}) == \
        "Does the text say that “Schneider” was born in “Mediaș”?"
    assert chains["P19"][0]["text"] == "Is “{subject}” a person?"
    assert chains["P131"][0]["text"] == "Is “{subject}” a place or an organization?"
    # the relation without labels (P1198, unemployment rate) asks only the relation
    (q,) = chains[(set(reference.relations) - set(examples)).pop()]
    assert q["id"] == "relation" and "None" not in q["text"]
