"""Browser walk-through of judging on the demo (`make demo`'s data): the judge
account sees each task family in human terms (SV-Ident sentences, RCC
publications, MATERIAL summaries, KBP-style relations), with instructions and
help; the organizer's form keeps what was typed. Screenshots go to
$SHAREVAL_SCREENS when set (else the test's temporary folder)."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from .. import test_browser
from .test_browser_judging import png

pytestmark = [*test_browser.pytestmark, pytest.mark.realdata]

KBP_CHAIN = """gold_every: 0
instructions: Judge the relation from the provenance sentence alone.
chains:
  default:
  - {id: subject, text: 'Does "{subject}" refer to a person?'}
  - {id: object, text: 'Does "{object}" refer to a name?'}
  - {id: relation,
     text: 'Does the sentence justify that "{object}" is another name of "{subject}"?'}
"""
KBP_ITEMS = [
    {"key": "d7|per:alternate_names|Wahid|Gus Dur", "doc": "d7",
     "payload": {"subject": "Wahid", "object": "Gus Dur",
                 "relation": {"subject": "Wahid", "relation": "per:alternate_names",
                              "object": "Gus Dur"},
                 "provenance": "Indonesia's former president Wahid, also known as Gus Dur, "
                               "said on Monday that he would run again.",
                 "source": "newswire, document d7"}, "submissions": ["Team Alpha"]}]


def _login(browser, stack, user, password, width=1100):
    page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    page.set_default_timeout(30_000)
    page.goto(stack.url + "/accounts/login/")
    page.fill("#id_username", user)
    page.fill("#id_password", password)
    page.click("#login-submit")
    page.wait_for_url(stack.url + "/")
    return page


def _create(org, stack, tmp_path, title, design, items, config):
    org.goto(stack.url + "/c/demo/organize/campaigns/")
    org.fill("input[name=title]", title)
    org.select_option("select[name=design]", design)
    org.fill("input[name=k]", "1")
    org.fill("input[name=judges]", "judge")
    org.fill("textarea[name=config]", config)
    f = tmp_path / f"{design}.jsonl"
    f.write_text("\n".join(json.dumps(i) for i in items))
    org.set_input_files("input[name=items]", str(f))
    org.click("#create-campaign")
    org.wait_for_selector(f"text=Campaign '{title}'")


def _open(page, stack, title):
    page.goto(stack.url + "/judging/")
    page.click(f"a[id^=campaign-] >> text={title}")     # a campaign, not an annotation project
    page.wait_for_selector("#ui, #start")
    if page.locator("#start").count():          # opening the page takes no item
        with page.expect_navigation():
            page.click("#start")
    page.wait_for_selector("#ui")


def test_judges_see_each_task_family_in_human_terms(browser, demo, tmp_path):
    stack, acc = demo
    shots = Path(os.environ.get("SHAREVAL_SCREENS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    org = _login(browser, stack, "organizer", acc["organizer"])
    # a form with one error keeps every field
    org.goto(stack.url + "/c/demo/organize/campaigns/")
    org.fill("input[name=title]", "Kept title")
    org.select_option("select[name=design]", "summary_relevance")
    org.fill("input[name=judges]", "judge alice")
    org.fill("textarea[name=config]", "instructions: keep me")
    org.click("#create-campaign")
    org.wait_for_selector(".problems")
    assert "belong to a participating team" in org.inner_text(".problems")
    assert org.input_value("input[name=title]") == "Kept title"
    assert org.input_value("select[name=design]") == "summary_relevance"
    assert org.input_value("textarea[name=config]") == "instructions: keep me"
    org.screenshot(path=str(shots / "form-keeps-values.png"), full_page=True)

    _create(org, stack, tmp_path, "MATERIAL summaries", "summary_relevance", [
        {"key": "query1|doc1", "payload": {
            "query": "flooding in the river delta", "domain": "Government and politics",
            "image": png(), "summary": ["flood", "delta", "evacuation", "rainfall"],
            "instructions": "Words in brackets are uncertain translations."},
         "submissions": ["Team Alpha"]}], "instructions: Decide from the summary alone.")
    _create(org, stack, tmp_path, "KBP relations", "question_chain", KBP_ITEMS, KBP_CHAIN)

    judge = _login(browser, stack, "judge", acc["judge"])
    judge.goto(stack.url + "/judging/")
    # the demo's two, material-demo's two (Summaries 1A, 1B), kbp-demo's relation
    # mentions and the two made here
    assert judge.locator("a[id^=campaign-]").count() == 7

    # opening a campaign shows what waits and takes nothing until "Start judging"
    judge.click("a[id^=campaign-] >> text=SV-Ident")       # not the annotation project
    judge.wait_for_selector("#start")
    assert re.search(r"\d+ items waiting for a judge", judge.inner_text("#start-form"))
    assert judge.inner_text("#start") == "Start judging"
    judge.screenshot(path=str(shots / "judge-start.png"), full_page=True)

    # SV-Ident: the sentence with its neighbours, the output in words, instructions
    _open(judge, stack, "SV-Ident")
    assert len(judge.inner_text("#sentence")) > 20
    assert judge.locator("#content .context").count() >= 1
    assert "mentions a survey variable" in judge.inner_text("#output")
    assert "survey variable is a question" in judge.inner_text("#campaign-instructions")
    assert "Team Alpha" not in judge.content() and "Team Beta" not in judge.content()
    judge.screenshot(path=str(shots / "svident.png"), full_page=True)
    judge.keyboard.press("?")
    assert judge.is_visible("#help") and "Answer the questions" in judge.inner_text("#help")
    judge.keyboard.press("?")
    with judge.expect_navigation():
        judge.keyboard.press("y")

    # RCC: title, passages with the mention marked, full text, catalog titles
    _open(judge, stack, "RCC")
    title = judge.inner_text("#pub-title")
    assert title and not title.startswith("Publication ")
    outputs = judge.locator(".system li").all_inner_texts()
    assert outputs and not any(re.fullmatch(r"\d+", o.strip()) for o in outputs)
    judge.screenshot(path=str(shots / "rcc.png"), full_page=True)
    if judge.locator("#full-text").count():
        href = judge.get_attribute("#full-text", "href")
        text = judge.context.new_page()
        text.goto(stack.url + href)
        assert len(text.inner_text("#full-text")) > 500
        text.screenshot(path=str(shots / "rcc-full-text.png"))
        text.close()
    n = judge.locator(".system").count()
    for _ in range(n):
        judge.keyboard.press("3")
    with judge.expect_navigation():
        judge.keyboard.press("Enter")

    # MATERIAL: query, summary image and words, per-item and campaign instructions
    _open(judge, stack, "MATERIAL summaries")
    assert "flooding" in judge.inner_text("#query")
    assert judge.is_visible("#summary-image") and "evacuation" in judge.inner_text("#summary")
    assert "uncertain translations" in judge.inner_text("#item-instructions")
    assert "summary alone" in judge.inner_text("#campaign-instructions")
    judge.screenshot(path=str(shots / "material.png"), full_page=True)
    with judge.expect_navigation():
        judge.keyboard.press("y")
    judge.wait_for_selector("#all-done")

    # KBP-style relation: the triple, its provenance with subject and object marked
    _open(judge, stack, "KBP relations")
    assert "per:alternate_names" in judge.inner_text("#triple")
    assert judge.locator("#provenance mark").all_inner_texts() == ["Wahid", "Gus Dur"]
    assert 'Does "Wahid" refer to a person?' == judge.inner_text("#question")
    judge.screenshot(path=str(shots / "kbp.png"), full_page=True)
    for _ in range(3):
        with judge.expect_navigation() if _ == 2 else _Nothing():
            judge.keyboard.press("y")
    judge.wait_for_selector("#all-done")


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
