"""Browser walk-through of spec 002's monthly KBP protocol (issue 38), on the
``kbp-demo`` competition of `make demo` built alone in a live server from Re-DocRED
(skipped without ../shared/data/kbp): the judge answers relation items reading the
document, the annotator completes the last recall document with the pooled
suggestions, the board shows judged P, R and F1 with intervals, alice sends a new
primary run whose items go to the judges while its row waits, and carol's late run
shows its on-demand cost. Screenshots go to $SHAREVAL_SCREENS when set."""
from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from . import test_browser
from .factories import build_demo, live_stack

pytestmark = test_browser.pytestmark

# what judges and annotators must never see: teams, control items as such (and judges,
# who read one relation in words, no relation id; the annotators' relation list has both)
HIDDEN = re.compile(r"Team (Alpha|Beta|Gamma)|\|control")
IDS = re.compile(r"\bP\d{1,4}\b")
BOARD = "/c/kbp-demo/leaderboard/month-1/redocred-month/"


@pytest.fixture
def month(tmp_path, shared_data):
    kbp = shared_data / "kbp"
    if not (kbp / "re-docred-dev.json").is_file():
        pytest.skip(f"Re-DocRED is not in {kbp}")
    s = live_stack(tmp_path)
    build_demo(s, "shareval.platform.demo_kbp.server",
               ("organizer", "alice", "bob", "carol", "judge", "annotator"), (kbp,))
    s.start()
    yield s
    s.stop()


def _shots(tmp_path) -> Path:
    p = Path(os.environ.get("SHAREVAL_SCREENS") or tmp_path / "shots")
    p.mkdir(parents=True, exist_ok=True)
    return p


def _answer_chain(page) -> None:
    """Yes to each question until the page moves on to another item (or ends)."""
    before = page.get_attribute("input[name=assignment]", "value")
    for _ in range(4):
        question = page.inner_text("#question")
        page.keyboard.press("y")
        end = time.monotonic() + 15
        while time.monotonic() < end:
            page.wait_for_timeout(200)
            try:
                if page.locator("#all-done").count():
                    return
                field = page.locator("input[name=assignment]")
                if field.count() and field.get_attribute("value", timeout=1000) != before:
                    return
                if page.locator("#question").count() and \
                        page.inner_text("#question", timeout=1000) != question:
                    break
            except Exception:       # noqa: BLE001  (the page is navigating)
                continue
        else:
            raise AssertionError("the chain did not move on")
    raise AssertionError("the chain did not finish")


def _board(page) -> list[dict]:
    heads = page.locator("#leaderboard thead th").all_inner_texts()
    return [dict(zip(heads, r.locator("td").all_inner_texts()))
            for r in page.locator("#leaderboard tbody tr").all()]


def test_a_month_judged_annotated_and_evaluated_on_demand(browser, month, tmp_path):
    s, shots = month, _shots(tmp_path)

    # the judge finds the relation items from the header and answers them
    judge = test_browser.login(browser, s, "judge")
    judge.click("#work-link")
    judge.click("a:text-is('Relation mentions (precision)')")
    with judge.expect_navigation():
        judge.click("#start")
    for n in range(4):
        judge.wait_for_selector("#question")
        assert judge.inner_text("#doc-title").strip()
        assert judge.locator("#provenance mark.subject").count() >= 1
        assert judge.locator("#provenance mark.object").count() >= 1
        assert judge.inner_text("#relation-words").strip()
        assert not HIDDEN.search(judge.content()) and not IDS.search(judge.inner_text("body"))
        if n == 0:
            judge.screenshot(path=str(shots / "kbp-judge.png"), full_page=True)
            judge.click("#whole-document summary")
            judge.screenshot(path=str(shots / "kbp-judge-document.png"), full_page=True)
        _answer_chain(judge)
    judge.wait_for_selector("#all-done")

    # the annotator completes the last recall document with the suggestions
    ann = test_browser.login(browser, s, "annotator")
    ann.set_viewport_size({"width": 1366, "height": 900})
    ann.click("#work-link")
    ann.click("a:text-is('Recall documents')")
    with ann.expect_navigation():
        ann.click("#start")
    ann.wait_for_selector("#doc-text .tok")
    assert not HIDDEN.search(ann.content())
    n = ann.locator("[id^=suggestion-]").count()
    assert n > 0
    ann.focus("#suggestion-0")
    for _ in range(n):
        ann.keyboard.press("a")
    assert ann.inner_text("#tally") == "Every suggestion is decided."
    ann.screenshot(path=str(shots / "kbp-annotate.png"), full_page=True)
    ann.click("#submit")
    ann.wait_for_selector("#all-done")

    # the board: judged precision, recall and F1 with intervals, ranked by judged F1
    anon = browser.new_context(viewport={"width": 1366, "height": 900}).new_page()
    anon.goto(s.url + BOARD)
    anon.screenshot(path=str(shots / "kbp-board.png"), full_page=True)
    rows = _board(anon)
    assert sorted(r["Team"] for r in rows) == ["Team Alpha", "Team Beta", "Team Gamma"]
    text = anon.inner_text("#leaderboard")
    assert re.search(r"\[0\.\d{3}, 0\.\d{3}\]", text), text[:500]

    # alice sends a better run as her primary: its items go to the judges
    alice = test_browser.login(browser, s, "alice")
    alice.goto(s.url + "/c/kbp-demo/submit/")
    alice.set_input_files("#file", str(s.home / "kbp-demo" / "runs" / "alpha-2.tsv"))
    alice.check("#primary")
    alice.click("#submit-button")
    assert test_browser.wait_scored(alice) == "scored"
    alice.screenshot(path=str(shots / "kbp-new-run.png"), full_page=True)
    end = time.monotonic() + 60               # drawn by the scoring worker's commit hook
    while time.monotonic() < end:
        judge.goto(s.url + "/work/")
        if judge.locator("#work-link").count():
            break
        judge.wait_for_timeout(500)
    assert int(re.search(r"(\d+) left", judge.inner_text("#work-link")).group(1)) > 0
    judge.screenshot(path=str(shots / "kbp-judge-work.png"), full_page=True)
    anon.goto(s.url + BOARD)
    assert "waiting for judgments" in anon.inner_text("#leaderboard")
    anon.screenshot(path=str(shots / "kbp-board-waiting.png"), full_page=True)

    # carol's late run: evaluated on demand, its cost on its page
    carol = test_browser.login(browser, s, "carol")
    carol.goto(s.url + "/c/kbp-demo/submissions/")
    carol.click("table tbody tr td a >> nth=0")
    expect(carol.locator("body")).to_contain_text("Assessment by judges")   # the new page
    body = carol.inner_text("body")
    assert "reused" in body and "Assessment by judges" in body
    carol.screenshot(path=str(shots / "kbp-late-run.png"), full_page=True)

    # the organizer's campaign page: agreement per relation, controls per judge, cost
    org = test_browser.login(browser, s, "organizer")
    org.goto(s.url + "/c/kbp-demo/organize/campaigns/")
    org.click("a:text-is('Relation mentions (precision)')")
    org.wait_for_selector("#agreement-types")
    assert org.locator("#controls tr").count() >= 2
    org.screenshot(path=str(shots / "kbp-campaign.png"), full_page=True)
