"""The coder's capture page in chromium: a reference selected with the mouse on a
later page of a long text (astral characters before it, so offsets must count
code points), another with the keyboard only (n, Shift+Ctrl+arrows, Enter, Tab);
both saved with their passage and the selection marked. With ../shared/data, the
longest shared RCC publication is a second publication of the study. With
SHAREVAL_SCREENS=DIR, screenshots go to DIR/capture-*.png.
"""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from .. import test_browser
from ..factories import live_stack
from ..test_browser import login
from .test_annotation import rcc_bundle, run

pytestmark = test_browser.pytestmark
SCREENS = os.environ.get("SHAREVAL_SCREENS")
NAME = "Panel Study of Income Dynamics"
SENTENCE = f"Our estimates use the {NAME} (PSID), waves 1990 to 2000."
LONGEST = "3362"            # the longest shared RCC publication (about 200k characters)


def shot(page, name):
    if SCREENS:
        Path(SCREENS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENS) / f"capture-{name}.png"), full_page=False)


def texts(root: Path) -> Path:
    d = root / "texts"
    d.mkdir()
    body = ("We use survey data on bank lending 𝛽 and 𝑥 credit. " * 3 + "\n\n" +
            ("Filler words about loans and credit 𝛾 lines. " * 25 + "\n\n") * 30 + SENTENCE +
            " Results follow in Fig. 2 below.")
    (d / "0.json").write_text(json.dumps({"abstract": "Bank lending and credit.",
                                          "reduced_content": body}))
    shared = Path(__file__).resolve().parents[3].parent / "shared/data/rcc/train/texts"
    if (shared / f"{LONGEST}.json").exists():
        (d / "2.json").write_text((shared / f"{LONGEST}.json").read_text())
    return d


def select_phrase(page, phrase):
    """Drag the mouse over the phrase's first and last characters in #pub-text."""
    rects = page.evaluate("""phrase => {
      const box = document.getElementById("pub-text");
      const w = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
      const nodes = []; let all = "";
      for (let n; (n = w.nextNode());) { nodes.push([n, all.length]); all += n.data; }
      const at = i => { const [n, s] = nodes.filter(([n, s]) => s <= i).pop(); return [n, i - s]; };
      const i = all.indexOf(phrase);
      const r = document.createRange();
      r.setStart(...at(i)); r.setEnd(...at(i + phrase.length - 1));
      r.startContainer.parentElement.scrollIntoView({block: "center"});
      const rs = r.getClientRects(); const a = rs[0], b = rs[rs.length - 1];
      const last = document.createRange(); last.setStart(...at(i + phrase.length - 1));
      last.setEnd(...at(i + phrase.length - 1)); last.setEnd(last.startContainer,
        last.startOffset + 1);
      const z = last.getBoundingClientRect();
      return {x0: a.left + 1, y0: a.top + a.height / 2, x1: z.right - 1, y1: z.top + z.height / 2};
    }""", phrase)
    page.mouse.move(rects["x0"], rects["y0"])
    page.mouse.down()
    page.mouse.move(rects["x1"], rects["y1"], steps=8)
    page.mouse.up()


def test_coder_selects_references_with_mouse_and_keyboard(browser, tmp_path):
    from shareval.client import submit
    s = live_stack(tmp_path, users=("org", "coder", "rev", "judge1"),
                   bundle=lambda t: rcc_bundle(t / "b"), start=True)
    try:
        for user, team, pairs in (("alice", "Team A", [(0, 1000), (2, 1002)]),
                                  ("bob", "Team B", [(0, 999)])):
            s.cli("server", "add-user", user, "--password", f"{user}-pass-123",
                  "--competition", "rccdemo", "--team", team)
            token = s.cli("server", "token", user).stdout.strip().splitlines()[-1]
            f = tmp_path / f"{user}.json"
            f.write_text(run(pairs))
            code, body = submit(s.url, token, f, "rccdemo", "dev", "cit", "rcc", primary=True)
            assert code in (200, 201, 202), body
            assert s.wait_state(body["id"], token)["state"] == "scored"
        strata = tmp_path / "strata.csv"
        strata.write_text("publication_id,topic,stratum\n0,Finance,titled\n2,Finance,titled\n")
        out = s.cli("server", "rcc-study", "rccdemo", "dev", "rcc", "--designer", "org",
                    "--per-topic", "2", "--mix", "2:0:0", "--strata", strata,
                    "--texts", texts(tmp_path), "--coder", "coder").stdout
        study = re.search(r"study (\d+)", out).group(1)
        coder = login(browser, s, "coder")
        coder.set_viewport_size({"width": 1400, "height": 950})
        blocked = []
        coder.on("console", lambda m: blocked.append(m.text)
                 if "Content Security Policy" in m.text else None)
        coder.goto(f"{s.url}/c/rccdemo/annotation/{study}/work/")
        hrefs = [a.get_attribute("href") for a in coder.query_selector_all("#work-capture a")]
        href = None
        for h in hrefs:
            coder.goto(s.url + h)
            if re.search(r"publication 0\b", coder.inner_text("#publication")):
                href = h
        assert href, hrefs
        base = s.url + href

        # the mouse: the sentence is on the last page
        coder.goto(base)
        assert "Page 1 of" in coder.inner_text("#pager")
        while coder.query_selector("#next-page"):
            coder.click("#next-page")
        select_phrase(coder, NAME)
        coder.wait_for_function(f"document.getElementById('sel-name').textContent === {NAME!r}")
        shot(coder, "01-mouse-selected")
        coder.select_option("#id_kind", "titled")
        coder.click("#add-ref")
        coder.wait_for_selector("text=Reference recorded.")
        row = coder.query_selector("#refs tbody tr")
        assert row.query_selector(".refname").inner_text() == NAME
        assert row.query_selector("mark.sel").inner_text() == NAME
        assert row.query_selector(".ctx").inner_text() == SENTENCE
        assert "?page=" in coder.url                     # back on the page it was read on
        assert coder.query_selector("#pub-text mark.ref")
        shot(coder, "02-mouse-saved")

        # the keyboard only: page 1, the first data word, two more words, Enter, the
        # type with the arrow key, Tab to the button
        coder.goto(base)
        coder.focus("#pub-text")
        coder.keyboard.press("n")
        coder.keyboard.press("n")
        coder.keyboard.press("Shift+Control+ArrowRight")
        coder.keyboard.press("Shift+Control+ArrowRight")
        picked = coder.inner_text("#sel-name")
        assert picked.startswith("data") and len(picked.split()) >= 2, picked
        shot(coder, "03-keyboard-selected")
        coder.keyboard.press("Enter")
        assert coder.evaluate("document.activeElement.id") == "id_kind"
        coder.keyboard.press("ArrowDown")
        for _ in range(3):
            coder.keyboard.press("Tab")
        assert coder.evaluate("document.activeElement.id") == "add-ref"
        coder.keyboard.press("Enter")
        coder.wait_for_selector("text=Reference recorded.")
        names = [e.inner_text() for e in coder.query_selector_all("#refs .refname")]
        assert names == [NAME, picked], names
        assert "We use survey data" in coder.query_selector_all("#refs .ctx")[1].inner_text()
        shot(coder, "04-keyboard-saved")
        coder.query_selector("#refs").scroll_into_view_if_needed()
        shot(coder, "05-references")

        # a bad offset typed by hand: the form names the field, nothing saved
        coder.fill("#id_begin", "5")
        coder.fill("#id_end", "999999")
        coder.click("#add-ref")
        coder.wait_for_selector("text=end: 999999 is past the end of the text")
        assert len(coder.query_selector_all("#refs .refname")) == 2
        shot(coder, "06-bad-offset")

        # the longest shared publication: opens a page at a time, selection works
        other = [h for h in hrefs if h != href]
        if other and (tmp_path / "texts" / "2.json").exists():
            start = time.monotonic()
            coder.goto(s.url + other[0])
            took = time.monotonic() - start
            pages = int(re.search(r"of (\d+)", coder.inner_text("#pager")).group(1))
            assert pages > 10
            coder.focus("#pub-text")
            coder.keyboard.press("n")
            coder.keyboard.press("Shift+Control+ArrowRight")
            picked = coder.inner_text("#sel-name")
            coder.click("#add-ref")
            coder.wait_for_selector("text=Reference recorded.")
            assert coder.inner_text("#refs .refname") == picked
            shot(coder, "07-longest-publication")
            print(f"longest publication: {pages} pages, opened in {took:.2f} s")
        assert not blocked, blocked
    finally:
        s.stop()
