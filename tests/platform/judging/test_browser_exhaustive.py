"""The annotation page in chromium: mentions picked by clicks and by dragging, a
relation found by typing, suggestions accepted and rejected with the keyboard,
and the posted answer is what the server stores. The page is the server's own
HTML and script, served to the browser through Playwright's routing (no live
server needed); the posted form is checked by designs.clean_answer."""
from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from django.contrib.auth import get_user_model
from django.contrib.staticfiles import finders

from shareval.formats.kbp_runs import item_key
from shareval.platform.judging import designs
from shareval.platform.judging.models import Assignment

from .exhaustive_world import BIRTH, RESID, campaign, kbp_world, submit_runs

CHROMIUM = os.environ.get("SHAREVAL_CHROMIUM", "/usr/bin/chromium")
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                 reason=f"Debian chromium not found at {CHROMIUM}")]
SITE = "http://annotate.test"


@pytest.fixture
def anna_berg(db, tmp_path, client):
    w = kbp_world(tmp_path)
    submit_runs(w)
    ann = get_user_model().objects.create_user("ann1", password="ann1-pass-123")
    camp = campaign(w, [ann], n=3, seed=0)
    camp.items.exclude(doc="Anna Berg").delete()
    client.force_login(ann)
    client.post(f"/judging/{camp.pk}/")
    a = Assignment.objects.get(judge=ann)
    html = client.get(f"/judging/{camp.pk}/").content.decode()
    return {"camp": camp, "item": a.item, "html": html,
            "js": Path(finders.find("shareval/judge_exhaustive.js")).read_text()}


def _serve(page, p, posted):
    def handle(route):
        req = route.request
        if req.url.endswith("judge_exhaustive.js"):
            route.fulfill(body=p["js"], content_type="text/javascript")
        elif req.method == "POST":
            posted.append(parse_qs(req.post_data))
            route.fulfill(body="stored", content_type="text/plain")
        elif req.url.startswith(SITE + "/judging/"):
            route.fulfill(body=p["html"], content_type="text/html")
        else:
            route.fulfill(body="", content_type="text/plain")
    page.route("**/*", handle)


# anna_berg before browser: the database work is done before Playwright's loop starts
def test_pick_add_and_decide_by_keyboard_then_submit(anna_berg, browser, tmp_path):
    p, posted = anna_berg, []
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    _serve(page, p, posted)
    page.goto(f"{SITE}/judging/{p['camp'].pk}/")
    page.wait_for_selector("#doc-text .tok")
    assert page.inner_text("#doc-text").split() == \
        "1 Anna Berg was born in Oslo . 2 Berg lives in Paris .".split()
    assert page.is_disabled("#submit")                 # two suggestions undecided
    # subject "Anna Berg": click its first and its last word
    page.click("#doc-text .tok[data-i='0']")
    page.click("#doc-text .tok[data-i='1']")
    assert page.inner_text("#pick-subject") == "“Anna Berg”"
    # object: drag from "lives" to "Paris", then pick again with one word clicked twice
    page.hover("#doc-text .tok[data-i='8']")
    page.mouse.down()
    page.hover("#doc-text .tok[data-i='9']")
    page.hover("#doc-text .tok[data-i='10']")
    page.mouse.up()
    assert page.inner_text("#pick-object") == "“lives in Paris”"
    page.click("#change-object")
    page.click("#doc-text .tok[data-i='10']")
    page.click("#doc-text .tok[data-i='10']")
    assert page.inner_text("#pick-object") == "“Paris”"
    page.fill("#rel-search", "resid")
    page.press("#rel-search", "Enter")
    assert page.inner_text("#added li .words") == "“Anna Berg” — residence — “Paris”"
    # suggestions by keyboard: focus the first, accept (a), the focus moves on, reject (r)
    page.focus("#suggestion-0")
    assert "m-subj" in page.get_attribute("#doc-text .tok[data-i='0']", "class")
    page.keyboard.press("a")
    assert page.evaluate("document.activeElement.id") == "suggestion-1"
    page.keyboard.press("r")
    assert "accepted" in page.get_attribute("#suggestion-0", "class")
    assert "rejected" in page.get_attribute("#suggestion-1", "class")
    assert page.inner_text("#tally") == "Every suggestion is decided."
    page.screenshot(path=str(tmp_path / "annotate.png"), full_page=True)
    page.click("#submit")
    page.wait_for_function("document.body.innerText.includes('stored')")
    assert not errors
    answer = json.loads(posted[0]["answer"][0])
    assert answer == {"accepted": [BIRTH], "rejected": [RESID], "added": [
        {"subject": [0, 9], "relation": "P551", "object": [43, 48]}]}
    stored = designs.clean_answer(p["camp"], p["item"], answer)
    assert stored == {"relations": sorted([BIRTH, item_key("Anna Berg", (0, 9), "P551",
                                                           (43, 48))])}
