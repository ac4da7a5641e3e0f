"""Recall from exhaustive campaigns, by hand: finished documents (k annotations or
an adjudication), true mentions as the mean over annotators, Wilson intervals;
the campaign page, the board column and the exports read back by estimate_all."""
from __future__ import annotations

import io
import json
import math

import pytest
from scipy.stats import t as student_t
from django.contrib.auth import get_user_model

from shareval.assessment.estimate import estimate_all
from shareval.assessment.judgments import read_judgments
from shareval.formats.errors import Problems
from shareval.formats.kbp_runs import item_key
from shareval.platform.judging import recall, results, service

from .exhaustive_world import (BERLIN2_DE, BERLIN_DE, BIRTH, OSLO, OUTPUTS, RESID, campaign,
                               kbp_world, submit_runs)

PARIS_RES = item_key("Anna Berg", (0, 9), "P551", (43, 48))   # Anna Berg lives in Paris
ANSWERS = {   # doc -> annotator -> (accepted, added)
    "Anna Berg": {"ann1": ([BIRTH], [PARIS_RES]), "ann2": ([BIRTH], [])},
    "Berlin": {"ann1": ([BERLIN_DE, BERLIN2_DE], []), "ann2": ([BERLIN_DE], [])},
    "Oslo": {"ann1": ([OSLO], [])},                       # one of k=2: not finished
}


def _wilson(p, n, z=1.959963984540054):
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return c - h, c + h


def _documents(found, true):
    """Korn and Graubard's interval by hand: Wilson on R(1-R)/var items, t for D'-1."""
    d, r = len(found), sum(found) / sum(true)
    var = sum((f - r * t) ** 2 for f, t in zip(found, true)) / (d - 1) / d / \
        (sum(true) / d) ** 2
    n = sum(true) if var == 0 else r * (1 - r) / var
    lo, hi = _wilson(r, n, student_t.ppf(0.975, d - 1))
    return max(0.0, lo), min(1.0, hi)


@pytest.fixture
def annotated(db, tmp_path):
    w = kbp_world(tmp_path)
    submit_runs(w)
    User = get_user_model()
    anns = {n: User.objects.create_user(n, password=f"{n}-pass-123") for n in ("ann1", "ann2")}
    camp = campaign(w, list(anns.values()), k=2, n=3)
    ds = w["ds"]["dev"]
    assert recall.recall_table(ds, OUTPUTS) == {} and recall.pending_documents(ds) == 3
    for name, user in anns.items():
        while (a := service.next_assignment(camp, user)) is not None:
            if name not in ANSWERS[a.item.doc]:
                break
            accepted, added = ANSWERS[a.item.doc][name]
            sugg = [s["key"] for s in a.item.payload["suggestions"]]
            assert service.submit(a, {"accepted": accepted,
                                      "rejected": [k for k in sugg if k not in accepted],
                                      "added": [_span_form(k) for k in added]})
    return {**w, "camp": camp, "ds": ds, "anns": anns}


def _span_form(key):
    _, s, r, o = key.rsplit("|", 3)
    return {"subject": [int(x) for x in s.split("-")], "relation": r,
            "object": [int(x) for x in o.split("-")]}


def test_recall_by_hand_over_finished_documents(annotated):
    ds = annotated["ds"]
    # finished: Anna Berg and Berlin. True mass: BIRTH 1, PARIS_RES 1/2, RESID 0,
    # BERLIN_DE 1, BERLIN2_DE 1/2 = 3. Team A: BIRTH + BERLIN_DE = 2; Team B: BIRTH +
    # BERLIN2_DE (1/2) = 1.5 (RESID is false, OSLO's document is not finished)
    table = recall.recall_table(ds, OUTPUTS)
    a, b = table["Team A"], table["Team B"]
    assert (a["found"], a["true"], a["documents"]) == (2, 3, 2)
    assert (b["found"], b["true"], b["documents"]) == (1.5, 3, 2)
    assert a["recall"] == pytest.approx(2 / 3) and b["recall"] == pytest.approx(0.5)
    # per document (Anna Berg, Berlin): A found 1 of 1.5 and 1 of 1.5, B 1 and 1/2
    assert (a["recall_low"], a["recall_high"]) == pytest.approx(_documents([1, 1], [1.5, 1.5]))
    assert (b["recall_low"], b["recall_high"]) == pytest.approx(
        _documents([1, 0.5], [1.5, 1.5]))
    assert (a["recall_item_low"], a["recall_item_high"]) == pytest.approx(_wilson(2 / 3, 3))
    assert a["recall_boot_low"] <= a["recall"] <= a["recall_boot_high"]
    assert recall.pending_documents(ds) == 1
    # an output with nothing true: recall 0, not missing
    assert recall.recall_table(ds, {"none": {RESID}})["none"]["recall"] == 0.0


def test_an_adjudication_finishes_a_document_and_counts_alone(annotated):
    ds, camp = annotated["ds"], annotated["camp"]
    oslo = camp.items.get(doc="Oslo")
    service.adjudicate(oslo, annotated["org"], {"relations": [OSLO]})
    table = recall.recall_table(ds, OUTPUTS)
    assert (table["Team A"]["found"], table["Team A"]["true"]) == (3, 4)
    assert table["Team B"]["recall"] == pytest.approx(1.5 / 4)
    assert recall.pending_documents(ds) == 0
    # adjudicating Berlin (both Berlin mentions true) replaces its two annotators
    service.adjudicate(camp.items.get(doc="Berlin"), annotated["org"],
                       {"relations": [BERLIN_DE, BERLIN2_DE]})
    assert recall.recall_table(ds, OUTPUTS)["Team B"]["found"] == 2


def test_the_campaign_page_and_the_board_show_each_teams_recall(annotated, client):
    camp, ds = annotated["camp"], annotated["ds"]
    res = results.team_results(camp)
    assert set(res) == {"Team A", "Team B"}
    assert res["Team A"]["measure"] == "recall" and res["Team A"]["n"] == 2
    assert res["Team A"]["estimate"] == pytest.approx(2 / 3)
    assert (res["Team B"]["low"], res["Team B"]["high"]) == pytest.approx(
        _documents([1, 0.5], [1.5, 1.5]))
    cols = list(results.board_columns(ds))
    assert cols[0][0] == {"campaign": camp.title, "measure": "recall"}
    assert cols[0][1]["Team A"]["estimate"] == pytest.approx(2 / 3)
    client.force_login(annotated["org"])
    html = client.get(f"/c/{annotated['comp'].slug}/organize/campaigns/{camp.pk}/").content.decode()
    assert "2 documents finished" in html and "1 pending" in html
    assert "<td>Team A</td><td>recall</td><td class=\"num\">0.667</td>" in html


def test_the_judgments_export_gives_the_same_recall_to_assess_estimate(annotated, tmp_path,
                                                                       client):
    camp = annotated["camp"]
    client.force_login(annotated["org"])
    r = client.get(f"/c/{annotated['comp'].slug}/organize/campaigns/{camp.pk}/judgments.csv")
    assert r.status_code == 200
    path = tmp_path / "j.csv"
    path.write_bytes(r.content)
    p = Problems()
    table, _ = estimate_all(read_judgments(path, p), bootstrap=0)
    assert not p.items
    assert table["Team A"]["recall"] == pytest.approx(2 / 3)
    assert table["Team B"]["recall"] == pytest.approx(0.5)
    text, unresolved = results.qrels(camp)
    lines = set(io.StringIO(text).read().splitlines())
    assert f"Anna_Berg 0 {BIRTH.replace(' ', '_')} 1" in lines
    assert f"Anna_Berg 0 {RESID.replace(' ', '_')} 0" in lines
    assert set(unresolved) == {PARIS_RES, BERLIN2_DE}              # one of two annotators


def test_disagreements_are_adjudicated_on_the_page_by_accepting_an_answer(annotated, client):
    camp = annotated["camp"]
    client.force_login(annotated["org"])
    base = f"/c/{annotated['comp'].slug}/organize/campaigns/{camp.pk}/adjudicate/"
    html = client.get(base).content.decode()
    # the two documents whose annotators differ, named in words
    assert "every relation stated in “Anna Berg”" in html
    assert "every relation stated in “Berlin”" in html
    berlin = camp.items.get(doc="Berlin")
    client.post(f"{base}{berlin.pk}/", {"answer": json.dumps(
        {"relations": [BERLIN_DE, BERLIN2_DE]}), "note": "both mentions state it"})
    assert berlin.adjudications.get().decision == {"relations": [BERLIN_DE, BERLIN2_DE]}
    assert recall.recall_table(annotated["ds"], OUTPUTS)["Team B"]["found"] == 2
