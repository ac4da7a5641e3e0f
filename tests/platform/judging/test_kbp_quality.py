"""Judging relation mentions: the judge's page, agreement per relation (numbers
computed by hand), control failures per judge, the organizer's pages and the
crowd batch round trip (kbp_world.py's competition)."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.utils import timezone

from shareval.formats.kbp_runs import item_key
from shareval.platform.judging import crowd, results, service
from shareval.platform.judging.models import Assignment, Campaign

from .kbp_world import make_kbp_world

P19 = [item_key("Anna Berg", (0, 9), "P19", (22, 26)),
       item_key("Anna Berg", (83, 87), "P19", (22, 26)),
       item_key("Karl Lund", (0, 9), "P19", (22, 28))]
P17 = item_key("Oslo", (0, 4), "P17", (23, 29))
YES = {"subject": "yes", "object": "yes", "relation": "yes"}
NO = {"subject": "yes", "object": "yes", "relation": "no"}


@pytest.fixture
def kbp(db, tmp_path):
    return make_kbp_world(tmp_path)


def _campaign(w, **config):
    return service.create_campaign(w["ds"], "Relations", Campaign.CHAIN, 2, 30,
                                   {"gold_every": 0, **config}, w["judges"], n=50, seed=3)


def _answer(item, judge, answers):
    a = Assignment.objects.create(item=item, judge=judge, deadline=timezone.now())
    assert service.submit(a, {"answers": answers}, now=timezone.now().replace(year=2000))


def test_agreement_per_relation_equals_the_hand_computation(kbp):
    camp = _campaign(kbp)
    j0, j1, _ = kbp["judges"]
    items = {i.key: i for i in camp.items.all()}
    for key, a0, a1 in ((P19[0], YES, YES), (P19[1], YES, NO), (P19[2], NO, NO),
                        (P17, YES, YES)):
        _answer(items[key], j0, a0)
        _answer(items[key], j1, a1)
    rows = {r["type"]: r for r in service.agreement_by_type(camp)}
    assert set(rows) == {"P19", "P17"}
    p19 = rows["P19"]
    assert (p19["label"], p19["units"], p19["pairable_units"]) == ("place of birth", 3, 3)
    # Cohen: observed 2/3; j0 says correct 2/3, j1 1/3: expected 2/3*1/3 + 1/3*2/3 = 4/9
    assert p19["cohen_kappa"] == pytest.approx((2 / 3 - 4 / 9) / (1 - 4 / 9))
    # Fleiss: unit agreement 1, 0, 1 (mean 2/3); categories 1/2 each (expected 1/2)
    assert p19["fleiss_kappa"] == pytest.approx((2 / 3 - 1 / 2) / (1 - 1 / 2))
    # Krippendorff: disagreeing pairs 2 of 6 values; expected 2*3*3 / (6*5)
    assert p19["krippendorff_alpha"] == pytest.approx(1 - (2 / 6) / (18 / 30))
    # one unit, one category: kappa and alpha undefined
    assert (rows["P17"]["units"], rows["P17"]["cohen_kappa"],
            rows["P17"]["krippendorff_alpha"]) == (1, None, None)
    whole = service.agreement_stats(camp)                   # campaign-wide: as before
    assert (whole["units"], whole["pairable_units"]) == (4, 4)


def test_control_failures_are_reported_per_judge_and_link_to_the_item(kbp, client):
    camp = _campaign(kbp, controls=4)
    j0, j1, j2 = kbp["judges"]
    controls = list(camp.items.filter(gold__isnull=False).order_by("pk"))
    true = [c for c in controls if c.gold["correct"]]
    false = [c for c in controls if not c.gold["correct"]]
    assert len(true) == len(false) == 2
    for c in controls:
        _answer(c, j0, YES if c.gold["correct"] else NO)                 # all right
    _answer(true[0], j1, NO)                                             # fails
    _answer(true[1], j1, YES)
    _answer(false[0], j1, YES)                                           # fails
    _answer(false[1], j2, {"subject": "no"})           # the verdict, for a wrong reason
    _answer(true[0], j2, YES)
    report = {r["judge"]: r for r in service.control_report(camp)}
    assert {j: (r["answered"], r["failed"], r["accuracy"]) for j, r in report.items()} == {
        "judge0": (4, 0, 1.0), "judge1": (3, 2, 1 / 3), "judge2": (2, 1, 0.5)}
    failed = report["judge1"]["failures"]
    assert [(f["item"].pk, f["expected"], f["answered"]) for f in failed] == [
        (true[0].pk, "correct (subject yes, object yes, relation yes)",
         "incorrect (subject yes, object yes, relation no)"),
        (false[0].pk, "incorrect (subject yes, object yes, relation no)",
         "correct (subject yes, object yes, relation yes)")]
    assert [f["item"].pk for f in report["judge2"]["failures"]] == [false[1].pk]
    # the campaign-wide gold accuracy stays by verdict; controls are in no estimate
    assert service.gold_accuracy(camp)["judge2"]["accuracy"] == 1.0
    assert not {r.item for r in results.judgment_records(camp)} & {c.key for c in controls}
    client.force_login(kbp["org"])
    base = f"/c/kbp/organize/campaigns/{camp.pk}/"
    html = client.get(base).content.decode()
    assert 'id="controls"' in html
    for f in failed:
        assert f'href="{base}items/{f["item"].pk}/"' in html
    page = client.get(f"{base}items/{true[0].pk}/").content.decode()
    assert true[0].key in page and 'id="control"' in page and "judge1" in page
    assert true[0].payload["view"]["title"] in page


def test_the_manage_page_shows_agreement_per_relation_label(kbp, client):
    camp = _campaign(kbp)
    j0, j1, _ = kbp["judges"]
    items = {i.key: i for i in camp.items.all()}
    for key, a0, a1 in ((P19[0], YES, YES), (P19[1], YES, NO), (P19[2], NO, NO)):
        _answer(items[key], j0, a0)
        _answer(items[key], j1, a1)
    client.force_login(kbp["org"])
    html = client.get(f"/c/kbp/organize/campaigns/{camp.pk}/").content.decode()
    table = html.split('id="agreement-types"')[1].split("</table>")[0]
    assert "<td>place of birth</td>" in table and "0.400" in table and "P19" not in table
    adj = client.get(f"/c/kbp/organize/campaigns/{camp.pk}/adjudicate/").content.decode()
    assert "“Berg” — place of birth — “Oslo” (in Anna Berg)" in adj


def test_the_judge_reads_the_document_with_marks_questions_and_guidance(kbp, client):
    camp = _campaign(kbp, guidance={"place of birth": "A city or a village counts."})
    judge = kbp["judges"][0]
    item = camp.items.get(key=P19[0])
    Assignment.objects.create(item=item, judge=judge, deadline="2999-01-01T00:00Z")
    client.force_login(judge)
    html = client.get(f"/judging/{camp.pk}/").content.decode()
    assert '<h2 id="doc-title">Anna Berg</h2>' in html
    prov = html.split('id="provenance">')[1].split("</blockquote>")[0]
    assert prov == ('<mark class="subject" title="subject">Anna Berg</mark> was born in '
                    '<mark class="object" title="object">Oslo</mark> on 3 May 1950 .')
    whole = html.split('id="whole-document">')[1].split("</details>")[0]
    assert "<summary>Show the whole document</summary>" in whole
    assert "She studied at the University of Oslo ." in whole and "Berg later lived in Paris" \
        in whole
    assert 'id="legend"' in html and '<b id="relation-words">place of birth</b>' in html
    assert "A city or a village counts." in html.split('id="guidance"')[1]
    ctx = json.loads(html.split('<script id="ctx" type="application/json">')[1]
                     .split("</script>")[0])
    assert [q["text"] for q in ctx["chain"]] == [
        "Is “Anna Berg” a person?", "Is “Oslo” a place?",
        "Does the text say that “Anna Berg” was born in “Oslo”?"]
    for secret in ("Team A", "Team B", "alice", "bob", "P19", P19[0]):
        assert secret not in html, secret
    assert 'id="output"' not in html                       # the relation is in the view
    # the whole document on its own page too, for a judge who holds the item
    text = client.get(f"/judging/{camp.pk}/text/{item.pk}/").content.decode()
    assert '<mark class="object" title="object">Oslo</mark>' in text and "Paris" in text


def test_crowd_batch_exports_relation_items_and_imports_chain_answers(kbp):
    camp = _campaign(kbp, controls=2, guidance={"P19": "Birth only."})
    rows = list(csv.DictReader(io.StringIO(crowd.export_batch(camp))))
    assert len(rows) == camp.items.count() == 11
    by_doc = {(r["Input.document"], r["Input.subject"], r["Input.object"]): r for r in rows}
    r = by_doc[("Anna Berg", "Anna Berg", "Oslo")]
    assert (r["Input.relation"], r["Input.guidance"]) == ("place of birth", "Birth only.")
    assert r["Input.sentence"] == "[subject: Anna Berg] was born in [object: Oslo] on 3 May " \
                                  "1950 ."
    assert r["Input.question_subject"] == "Is “Anna Berg” a person?"
    assert r["Input.question_relation"] == \
        "Does the text say that “Anna Berg” was born in “Oslo”?"
    assert {"Answer.subject", "Answer.object", "Answer.relation"} <= set(r)
    assert "Input.item" not in r                      # a key would tell controls apart
    text = "\n".join(",".join(x.values()) for x in rows)
    assert not any(s in text for s in ("Team A", "Team B", "alice", "bob", "control"))
    out = io.StringIO()
    w = csv.DictWriter(out, ["HITId", "WorkerId", "Answer.subject", "Answer.object",
                             "Answer.relation"], lineterminator="\n")
    w.writeheader()
    # every documented spelling: yes/no, y/n, true/false, 1/0, in any case
    yes, no = ["yes", "Y", "True", "1", " y"], ["no", "N", "FALSE", "0", "n "]
    for i, x in enumerate(rows):
        w.writerow({"HITId": x["HITId"], "WorkerId": "W1", "Answer.subject": yes[i % 5],
                    "Answer.object": yes[(i + 1) % 5], "Answer.relation": yes[(i + 2) % 5]})
        w.writerow({"HITId": x["HITId"], "WorkerId": "W2", "Answer.subject": no[i % 5]})
    assert crowd.import_results(camp, out.getvalue()) == 2 * len(rows)
    got = {(a.judge.username, a.answer["correct"]) for a in
           Assignment.objects.filter(item__campaign=camp, status="done")}
    assert got == {("crowd-W1", True), ("crowd-W2", False)}
    w2 = Assignment.objects.filter(judge__username="crowd-W2").first()
    assert w2.answer == {"answers": {"subject": "no"}, "correct": False}


def test_the_campaign_form_finalises_kbp_chains_and_controls(kbp, client):
    client.force_login(kbp["org"])
    resp = client.post("/c/kbp/organize/campaigns/", {
        "title": "Form", "dataset": kbp["ds"].pk, "design": "question_chain", "k": "2",
        "timeout": "30", "judges": "judge0 judge1", "n": "50", "docs": "0", "seed": "1",
        "config": "controls: 2\nguidance:\n  P20: Death place only.\n"})
    assert resp.status_code == 302
    camp = Campaign.objects.get(title="Form")
    assert camp.config["chains"]["P20"][2]["guidance"] == "Death place only."
    assert camp.items.filter(gold__isnull=False).count() == 2
    html = client.post("/c/kbp/organize/campaigns/", {
        "title": "Bad", "dataset": kbp["ds"].pk, "design": "question_chain", "k": "2",
        "timeout": "30", "judges": "", "n": "5", "config": "guidance:\n  born: x\n"}
    ).content.decode()
    assert "guidance: &#x27;born&#x27; is not a relation id or label" in html
    assert not Campaign.objects.filter(title="Bad").exists()


def test_a_late_submission_gets_relation_items_and_never_a_control_as_its_item(kbp):
    from django.contrib.auth import get_user_model

    from shareval.platform.competitions.models import Membership, Team
    from shareval.platform.judging import content, ondemand
    from shareval.platform.submissions import queue
    from shareval.platform.submissions import service as subs

    from ..factories import Upload
    from .kbp_world import run_text
    camp = _campaign(kbp, controls=2)
    control = camp.items.filter(gold__isnull=False, gold__correct=True).get()
    doc, s, rid, o = control.key.removesuffix("|control").split("|")
    (s0, s1), (o0, o1) = (map(int, x.split("-")) for x in (s, o))
    text = content.Resources(kbp["ds"]).kbp.documents[doc].text
    lines = [f"{doc}\t{text[s0:s1]}\t{s0}\t{s1}\t{rid}\t{text[o0:o1]}\t{o0}\t{o1}\t",
             "Karl Lund\tKarl Lund\t0\t9\tP19\tOslo\t42\t46\t"]
    carol = get_user_model().objects.create_user("carol", password="carol-pass-123")
    team = Team.objects.create(competition=kbp["comp"], name="Team C", lead=carol)
    Membership.objects.create(team=team, user=carol, status=Membership.APPROVED)
    sub = subs.submit(carol, team, kbp["ds"], Upload("c.tsv", run_text(lines)))
    queue.drain()
    sub.refresh_from_db()
    ev = ondemand.add_late(camp, sub, pilot=4, seed=1)
    drawn = {d.item for d in ev.draws.select_related("item")}
    assert {i.key for i in drawn} == {control.key.removesuffix("|control"),
                                      item_key("Karl Lund", (0, 9), "P19", (42, 46))}
    for item in drawn:
        assert item.gold is None and item.drawn_for == "ondemand"
        assert item.payload["type"] in ("P19", rid)
        assert item.payload["view"]["kind"] == "relation_doc"
