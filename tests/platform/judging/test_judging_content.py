"""What judges see, per task family, and the crowdsourcing batch CSV."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.contrib.auth import get_user_model

from shareval.formats.errors import InvalidInput
from shareval.platform.judging import build, content, crowd, designs, service
from shareval.platform.judging.models import Assignment, Campaign
from shareval.platform.submissions import queue
from shareval.platform.submissions import service as subs

from ..factories import Upload, gold, run_with_accuracy

VOCAB = "id\tlabel\ttopic\tquestion\tanswer\nv16\tSATISFACTION WITH GOVERNMENT\tPolitics\t" \
        "How satisfied are you with the government?\tvery;not\n"
SENTENCES = "uuid\tdoc_id\tlang\tsentence\n" + "".join(
    f"u{i}\td1\ten\tSentence number {i}.\n" for i in range(6))


class _Res(content.Resources):
    def __init__(self, root):
        self.roots = [root]


def test_svident_units_and_views_speak_in_sentences_and_vocabulary_labels(tmp_path):
    (tmp_path / "sentences.tsv").write_text(SENTENCES)
    (tmp_path / "vocabulary_en.tsv").write_text(VOCAB)
    res = _Res(tmp_path)
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"u3": {"v16": 2.0, "v99": 1.0}}))
    units = content.run_units("svident-disambiguation", run, res)
    assert units["u3|v16"].text == ("SATISFACTION WITH GOVERNMENT — asked: “How satisfied are "
                                    "you with the government?”")
    assert "not in the vocabulary" in units["u3|v99"].text and units["u3|v16"].doc == "d1"
    v = content.view_for("svident-disambiguation", res, "u3", [units["u3|v16"]])
    assert v["sentence"] == "Sentence number 3." and v["before"] == [
        "Sentence number 1.", "Sentence number 2."] and v["after"] == [
        "Sentence number 4.", "Sentence number 5."]


def test_rcc_views_give_titles_passages_with_marks_and_catalog_titles(tmp_path):
    (tmp_path / "publications.json").write_text(json.dumps(
        [{"publication_id": 7, "title": "Health of children"}]))
    (tmp_path / "dataset_text_dict.json").write_text(json.dumps(
        {"12": "National Health Interview Survey NHIS health interviews"}))
    (tmp_path / "texts").mkdir()
    body = "x " * 300 + "We use the National Health\nInterview Survey for this." + " y" * 300
    (tmp_path / "texts/7.json").write_text(json.dumps({"abstract": "A.", "reduced_content": body}))
    res = _Res(tmp_path)
    run = tmp_path / "run.json"
    run.write_text(json.dumps([{"publication_id": 7, "data_set_id": 12, "score": 1,
                                "mention_list": ["National Health Interview Survey"]}]))
    units = content.run_units("rcc-citations", run, res)
    u = units["7|12"]
    assert u.text.startswith("National Health Interview Survey") and "12" not in u.text
    v = content.view_for("rcc-citations", res, "7", [u])
    assert v["title"] == "Health of children" and v["has_text"]
    (p,) = v["passages"]
    marks = [s["t"] for s in p["segments"] if s["m"]]
    assert marks == ["National Health Interview Survey"]       # across the line break
    assert p["cut_start"] and p["cut_end"]
    assert content.dataset_title(res, "999").endswith("(id 999)")


def test_items_files_show_relations_and_summaries_with_instructions():
    rel = content.item_view(designs.CHAIN, {
        "relation": {"subject": "Wahid", "relation": "per:alternate_names",
                     "object": "Gus Dur"}, "provenance": "Wahid, also known as Gus Dur, said"})
    assert [s["t"] for s in rel["provenance"] if s["m"]] == ["Wahid", "Gus Dur"]
    summ = content.item_view(designs.RELEVANCE, {"query": "floods", "summary": ["rain", "river"],
                                                 "instructions": "words are translations"})
    assert summ["kind"] == "summary" and summ["summary"] == ["rain", "river"]


@pytest.fixture
def chain(world):
    w = world
    for user, team, k in (("alice", "Team A", 15), ("bob", "Team B", 8)):
        subs.submit(w["users"][user], w["teams"][team], w["ds"]["dev"],
                    Upload(f"{k}.tsv", run_with_accuracy(k)))
    queue.drain()
    camp = Campaign.objects.create(dataset=w["ds"]["dev"], slug="c", title="C",
                                   design=Campaign.CHAIN, judges_per_item=2,
                                   config={"gold_every": 0})
    build.build_from_runs(camp, n=4, seed=0)
    return camp


def test_crowd_batch_round_trip_and_problems_name_file_line_field(chain):
    camp = chain
    text = crowd.export_batch(camp)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == camp.items.count()
    assert {"HITId", "Input.text", "Answer.correct"} <= set(rows[0])
    assert not any("Team" in v for r in rows for v in r.values())      # never team names
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=["HITId", "WorkerId", "WorkTimeInSeconds",
                                        "Answer.correct"], lineterminator="\n")
    w.writeheader()
    for r in rows:
        item_id, label = r["Input.item"].split("|")
        for worker in ("W1", "W2"):
            w.writerow({"HITId": r["HITId"], "WorkerId": worker, "WorkTimeInSeconds": "7",
                        "Answer.correct": "yes" if gold()[item_id] == label else "no"})
    assert crowd.import_results(camp, out.getvalue()) == 2 * len(rows)
    assert service.progress(camp)["complete"] == camp.items.count()
    assert crowd.export_batch(camp).count("\n") == 1                     # nothing open
    bad = "HITId,WorkerId,Answer.correct\nshareval-0-1,W1,yes\n" \
          f"{rows[0]['HITId']},W 3,yes\n{rows[0]['HITId']},W4,maybe\n"
    with pytest.raises(InvalidInput) as e:
        crowd.import_results(camp, bad, "batch.csv")
    assert [str(p) for p in e.value.problems] == [
        "batch.csv:2: HITId: 'shareval-0-1' is not a task of this campaign",
        "batch.csv:3: WorkerId: letters, digits and _.@+- (at most 120)",
        "batch.csv:4: Answer.correct: yes or no, found 'maybe'"]
    assert Assignment.objects.filter(judge__username="crowd-W4").count() == 0


def test_the_campaign_form_keeps_what_was_typed(world, client):
    w = world
    client.force_login(w["org"])
    html = client.post("/c/tiny/organize/campaigns/", {
        "title": "My campaign", "dataset": w["ds"]["dev"].pk, "design": "question_chain",
        "k": "3", "timeout": "45", "judges": "nobody-here", "n": "12", "docs": "1",
        "seed": "5", "config": "instructions: read carefully"}).content.decode()
    assert "judges: no such user(s) [&#x27;nobody-here&#x27;]" in html
    for shown in ('value="My campaign"', 'value="3"', 'value="45"', 'value="nobody-here"',
                  'value="12"', 'value="5"', "instructions: read carefully",
                  '<option value="question_chain" selected>'):
        assert shown in html, shown
    assert not Campaign.objects.exists()


def test_the_judging_page_shows_instructions_help_and_the_full_text_link(world, client):
    w = world
    judge = get_user_model().objects.create_user("j", password="x-pass-123")
    camp = Campaign.objects.create(dataset=w["ds"]["dev"], slug="s", title="S",
                                   design=Campaign.RELEVANCE,
                                   config={"instructions": "Judge from the summary only."})
    camp.judges.set([judge])
    build.load_items(camp, json.dumps({"key": "q1|d1", "payload": {
        "query": "floods", "summary": ["heavy", "rain"],
        "instructions": "The words are machine translations."}}))
    client.force_login(judge)
    client.post(f"/judging/{camp.pk}/")
    html = client.get(f"/judging/{camp.pk}/").content.decode()
    assert "Judge from the summary only." in html and "machine translations" in html
    assert 'id="help"' in html and "From the query and the summary alone" in html
    assert "heavy · rain" in html


def test_the_adjudication_page_names_items_by_their_content(chain, world, client):
    camp = chain
    judges = [get_user_model().objects.create_user(f"a{i}", password="x-pass-123")
              for i in range(2)]
    camp.judges.set(judges)
    for j, verdict in zip(judges, ("yes", "no")):
        while (a := service.next_assignment(camp, j)) is not None:
            assert service.submit(a, {"answers": {"correct": verdict}})
    client.force_login(world["org"])
    html = client.get(f"/c/tiny/organize/campaigns/{camp.pk}/adjudicate/").content.decode()
    item = camp.items.first()
    assert f"output: {item.payload['text']}" in html


def test_full_texts_read_as_paragraphs():
    text = "A first line of a para-\ngraph goes on\nhere.\n\nSecond block. " + "Words go on. " * 200
    ps = content.paragraphs(text, size=300)
    assert ps[0] == "A first line of a paragraph goes on here."
    assert len(ps) > 3 and all(p.endswith(".") for p in ps[1:-1])
    assert " ".join(ps[1:]) == " ".join(("Second block. " + "Words go on. " * 200).split())
