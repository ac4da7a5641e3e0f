"""Exhaustive campaigns on Re-DocRED's dev set: ten documents drawn and built from a
run made from the gold, and the annotation page of the longest document (481 words)."""
from __future__ import annotations

import json
import time

import pytest
from django.contrib.auth import get_user_model

from shareval.formats.errors import Problems
from shareval.formats.kbp import read_reference
from shareval.platform.judging import build, exhaustive_build
from shareval.platform.judging.exhaustive_answers import document_text
from shareval.platform.judging.models import Assignment, Item

from tests.conftest import SHARED_DATA

from .exhaustive_world import campaign, kbp_world, submit_runs

KBP = SHARED_DATA / "kbp"
pytestmark = [pytest.mark.realdata,
              pytest.mark.skipif(not (KBP / "re-docred-dev.json").exists(),
                                 reason=f"Re-DocRED data not found at {KBP} (set "
                                        f"SHAREVAL_SHARED_DATA)")]


def _gold_lines(doc) -> list[str]:
    """Every gold mention pair of a document as TSV run lines (offsets)."""
    lines = set()
    for h, t, r in sorted(doc.labels):
        for s in sorted(doc.entities[h]):
            for o in sorted(doc.entities[t]):
                if s != o:
                    lines.add(f"{doc.title}\t{doc.text[s[0]:s[1]]}\t{s[0]}\t{s[1]}\t{r}\t"
                              f"{doc.text[o[0]:o[1]]}\t{o[0]}\t{o[1]}\t1")
    return sorted(lines)


def test_ten_documents_build_and_the_longest_documents_page_renders(db, tmp_path, client):
    ref = read_reference(KBP, Problems())
    longest = max(ref.documents.values(), key=lambda d: sum(map(len, d.sentences)))
    others = sorted(ref.documents)[:40]
    w = kbp_world(tmp_path, source=KBP)
    submit_runs(w, {"Team A": _gold_lines(longest) + [x for t in others for x in
                                                      _gold_lines(ref.documents[t])],
                    "Team B": _gold_lines(longest)[::2]})
    ann = get_user_model().objects.create_user("ann1", password="ann1-pass-123")
    camp = campaign(w, [ann], n=10, seed=3)
    items = list(camp.items.all())
    assert len(items) == 10 and len({it.doc for it in items}) == 10
    for it in items:
        assert document_text(it.payload) == ref.documents[it.doc].text
        assert not any("Team" in json.dumps(s) for s in it.payload["suggestions"])
    # the longest document, whatever the draw: its page for the annotator
    dataset = w["ds"]["dev"]
    pooled = {}
    for s in build.team_runs(dataset).values():
        pooled.update(exhaustive_build.run_mentions(dataset, s.path).get(longest.title, {}))
    Item.objects.filter(campaign=camp).delete()
    Item.objects.create(campaign=camp, key=longest.title, doc=longest.title, drawn_for="recall",
                        payload=exhaustive_build.document_payload(longest, ref.relations, pooled))
    client.force_login(ann)
    client.post(f"/judging/{camp.pk}/")
    assert Assignment.objects.get(judge=ann).item.doc == longest.title
    t0 = time.perf_counter()
    r = client.get(f"/judging/{camp.pk}/")
    seconds = time.perf_counter() - t0
    html = r.content.decode()
    ctx = json.loads(html.split('id="ctx" type="application/json">')[1].split("</script>")[0])
    assert r.status_code == 200 and longest.title in html
    assert sum(map(len, ctx["document"]["sentences"])) == 481
    assert len(ctx["document"]["suggestions"]) == len(_gold_lines(longest)) > 50
    assert len(ctx["document"]["relations"]) == 96
    assert seconds < 2.0, f"the page took {seconds:.2f} s of server time"
