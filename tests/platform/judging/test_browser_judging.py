"""Browser: judges work each design with the keyboard, the manager adjudicates a
disagreement, and the leaderboard shows the judged precision with its interval."""
from __future__ import annotations

import base64
import io
import json
import re

import pytest
from playwright.sync_api import expect

from ..factories import make_bundle
from .. import test_browser
from ..test_browser import login

pytestmark = test_browser.pytestmark


def png() -> str:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = plt.figure(figsize=(4, 1))
    fig.text(0.1, 0.5, "summary: elections 2019 results")
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def create(org, stack, tmp_path, title, design, judges, k=1, items=None, n=None, config=""):
    org.goto(stack.url + "/c/tiny/organize/campaigns/")
    org.fill("input[name=title]", title)
    org.select_option("select[name=design]", design)
    org.fill("input[name=k]", str(k))
    org.fill("input[name=judges]", judges)
    org.fill("textarea[name=config]", config)
    if items:
        f = tmp_path / f"{design}.jsonl"
        f.write_text("\n".join(json.dumps(i) for i in items))
        org.set_input_files("input[name=items]", str(f))
    else:
        org.fill("input[name=n]", str(n))
    org.click("#create-campaign")
    org.wait_for_selector(f"text=Campaign '{title}'")


def open_campaign(page, stack, title):
    page.goto(stack.url + "/judging/")
    page.click(f"text={title}")
    page.wait_for_selector("#ui, #start")
    if page.locator("#start").count():          # opening the page takes no item
        with page.expect_navigation():
            page.click("#start")
    page.wait_for_selector("#ui")


@pytest.mark.stack(users=("org", "j1", "j2"), bundle=lambda tmp: make_bundle(tmp / "bundle"),
                   start=True)
def test_judging_with_the_keyboard_adjudication_and_leaderboard(browser, stack, tmp_path):
    org = login(browser, stack, "org")
    create(org, stack, tmp_path, "Chains", "question_chain", "j1 j2", k=2, n=4,
           config="gold_every: 0\nchains:\n  default:\n  - {id: correct, text: 'Is {text} right?'}")
    systems = [{"team": "Team X", "output": ["ALLBUS 2010", "a survey"]},
               {"team": "Team Y", "output": ["noise"]}]
    create(org, stack, tmp_path, "Side", "side_by_side", "j1",
           items=[{"key": "p1", "payload": {"text": "Publication 1", "systems": systems,
                                            "doc_url": "https://example.org/p1.pdf"}}])
    create(org, stack, tmp_path, "Related", "related_to", "j1",
           items=[{"key": "p2", "payload": {"text": "Publication 2", "systems": systems}}])
    create(org, stack, tmp_path, "Summaries", "summary_relevance", "j1",
           items=[{"key": "q1|d1", "payload": {"query": "elections", "image": png()},
                   "submissions": ["Team X"]}])

    j1, j2 = login(browser, stack, "j1"), login(browser, stack, "j2")
    # question chains: j1 answers yes to everything, j2 no to the first item
    for page, first in ((j1, "n"), (j2, "y")):
        open_campaign(page, stack, "Chains")
        answered = 0
        while page.locator("#question").count():
            assert "Team" not in page.content() and "Baseline" not in page.content()
            with page.expect_navigation():
                page.keyboard.press("y" if answered else first)
            answered += 1
        assert answered >= 4 and page.locator("#all-done").count() == 1, page.inner_text("main")

    open_campaign(j1, stack, "Side")
    body = j1.inner_text("#ui")
    assert "System A" in body and "System B" in body and "Team X" not in j1.content()
    j1.keyboard.press("3")
    j1.keyboard.press("1")
    j1.keyboard.press("Enter")
    j1.wait_for_selector("#all-done")

    open_campaign(j1, stack, "Related")
    j1.fill("#reference", "ALLBUS")
    j1.press("#reference", "Enter")
    order = j1.locator("#ref-0 label").all_inner_texts()
    allbus = next(i for i, t in enumerate(order) if "ALLBUS 2010" in t)
    j1.keyboard.press(str(allbus + 1))
    j1.keyboard.press("s")
    j1.wait_for_selector("#all-done")

    open_campaign(j1, stack, "Summaries")
    assert j1.locator("#summary-image").count() == 1 and "elections" in j1.inner_text("#query")
    j1.keyboard.press("y")
    j1.wait_for_selector("#all-done")

    # the manager sees results, agreement and the disagreement, and adjudicates it
    org.goto(stack.url + "/c/tiny/organize/campaigns/")
    org.click("text=Side")
    expect(org.locator("#results")).to_contain_text(re.compile(r"Team X\s+sum of scores\s+1\.000"),
                                                  use_inner_text=True)
    org.goto(stack.url + "/c/tiny/organize/campaigns/")
    org.click("text=Related")
    expect(org.locator("#results")).to_contain_text("Team X")
    org.goto(stack.url + "/c/tiny/organize/campaigns/")
    org.click("text=Chains")
    expect(org.locator("#agreement")).to_contain_text("Krippendorff")
    org.click("#adjudicate")
    card = org.locator(".adjudication").first
    card.locator("input[name=note]").first.fill("j2 is right: checked the gold")
    card.locator("button.accept").first.click()
    org.wait_for_selector("text=Decision recorded")
    assert "j2 is right" in org.inner_text(".adjudication >> nth=0")

    anon = browser.new_context().new_page()
    anon.goto(stack.url + "/c/tiny/leaderboard/dev/dev/")
    head = anon.inner_text("#leaderboard thead")
    assert "precision (judged: Chains)" in head
    cell = anon.locator("#leaderboard td.human").first.inner_text()
    assert re.match(r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] n=\d+", cell), cell
    anon.screenshot(path=str(tmp_path / "judged-leaderboard.png"), full_page=True)
