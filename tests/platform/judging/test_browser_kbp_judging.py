"""Browser: a judge reads a relation mention in its document (provenance first,
subject and object marked, the whole document one click away) and answers its
question chain with the keyboard, one question at a time."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from shareval.platform.judging import designs, service
from shareval.platform.judging.models import Assignment, Campaign

from .. import test_browser
from ..test_browser import login
from .kbp_world import make_kbp_world

pytestmark = test_browser.pytestmark


@pytest.mark.django_db(transaction=True)
def test_a_judge_reads_the_document_and_answers_the_chain(browser, live_server, tmp_path,
                                                          monkeypatch):
    # the ORM here runs beside Playwright's event loop (in this thread, not in it)
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    w = make_kbp_world(tmp_path)
    camp = service.create_campaign(w["ds"], "Relations", Campaign.CHAIN, 1, 30,
                                   {"gold_every": 0, "guidance": {"P19": "A village counts."}},
                                   w["judges"][:1], n=50, seed=3)
    judge = login(browser, SimpleNamespace(url=live_server.url), "judge0")
    judge.goto(f"{live_server.url}/judging/{camp.pk}/")
    with judge.expect_navigation():
        judge.click("#start")
    a = Assignment.objects.get(judge=w["judges"][0], item__campaign=camp)
    view = a.item.payload["view"]
    assert judge.inner_text("#doc-title") == view["title"]
    assert judge.locator("#provenance mark.subject").all_inner_texts() == [view["subject"]]
    assert judge.locator("#provenance mark.object").all_inner_texts() == [view["object"]]
    assert judge.is_visible("#legend")
    assert not judge.is_visible("#whole-document .document")
    judge.click("#whole-document summary")
    assert judge.is_visible("#whole-document .document")
    whole = judge.inner_text("#whole-document .document")
    doc_text = " ".join("".join(g["t"] for g in s["segments"]) for s in view["sentences"])
    assert " ".join(whole.split()) == " ".join(doc_text.split())
    assert judge.inner_text("#relation-words") == view["relation"]
    questions = []
    for _ in range(3):
        questions.append(judge.inner_text("#question"))
        if len(questions) < 3:
            judge.keyboard.press("y")
    with judge.expect_navigation():
        judge.keyboard.press("y")
    chain = camp.config["chains"][a.item.payload["type"]]
    assert questions == [designs.fill(q["text"], a.item.payload) for q in chain]
    assert questions[2].startswith("Does the text say that ")
    a.refresh_from_db()
    assert a.status == "done" and a.answer == {
        "answers": {"subject": "yes", "object": "yes", "relation": "yes"}, "correct": True}
