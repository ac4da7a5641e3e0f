"""The workbench's unit page in chromium (issue 39): a span marked by selecting text and
linked by search, suggestions accepted and rejected by key, undo, a reload that shows
everything saved, a 409 from a second window that loses nothing, paging a long text, the
SV-Ident question and ranked variables, the curator taking one annotator's span, no CSP
violation anywhere, and the key presses to code a unit with suggestions and without.
The world is made up (tests/platform/workbench_world.py), so no shared data is needed.
Screenshots go to $SHAREVAL_SCREENS (default /tmp/i39-shots)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from . import test_browser
from .factories import live_stack, make_bundle
from .workbench_world import BUILD, SHORT

pytestmark = test_browser.pytestmark
ROOT = Path(__file__).resolve().parents[2]
CSP_WATCH = """window.__csp = [];
document.addEventListener("securitypolicyviolation",
  e => window.__csp.push(e.violatedDirective + " " + e.blockedURI));"""


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wb")
    s = live_stack(tmp, users=("org", "ann1", "ann2", "alice"), bundle=make_bundle)
    s.cli("server", "add-user", "alice", "--password", "alice-pass-123",
          "--competition", "tiny", "--team", "Team A")
    env = dict(s.env, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]))
    subprocess.run([sys.executable, "-c", BUILD], env=env, cwd=ROOT, check=True, timeout=300)
    s.start()
    yield s
    s.stop()


def shots() -> Path:
    p = Path(os.environ.get("SHAREVAL_SCREENS") or "/tmp/i39-shots")
    p.mkdir(parents=True, exist_ok=True)
    return p


class Page:
    """A logged-in page that counts its key presses and watches for CSP violations."""

    def __init__(self, browser, stack, user):
        self.ctx = browser.new_context(viewport={"width": 1400, "height": 950})
        self.ctx.add_init_script(CSP_WATCH)
        self.p = self.ctx.new_page()
        self.p.set_default_timeout(20_000)
        self.console = []
        self.p.on("console", lambda m: self.console.append(m.text))
        self.p.on("pageerror", lambda e: self.console.append(f"page error: {e}"))
        self.url, self.keys, self.selections = stack.url, 0, 0
        self.p.goto(stack.url + "/accounts/login/")
        self.p.fill("#id_username", user)
        self.p.fill("#id_password", f"{user}-pass-123")
        self.p.click("#login-submit")
        self.p.wait_for_url(stack.url + "/")

    def open_unit(self, project, k=0):
        self.p.goto(f"{self.url}/c/tiny/workbench/{project}/")
        self.p.click(f"a.open-unit >> nth={k}")
        self.p.wait_for_selector("#wb-text.r6o-annotatable")
        self.p.wait_for_function("document.querySelector('#wb-ann-count').textContent !== ''")

    def press(self, key):
        self.keys += 1
        version = self.version()
        self.p.keyboard.press(key)
        return version

    def saved(self, after):
        """Wait until the page holds a version newer than ``after`` (the save came back)."""
        self.p.wait_for_function("v => window.workbench.state().version > v", arg=after)

    def version(self):
        return self.p.evaluate("window.workbench.state().version")

    def select(self, words, nth=0):
        """Drag the mouse over ``words`` (the nth occurrence) in the unit's text."""
        self.selections += 1
        xy = self.p.evaluate("""([w, nth]) => {
          const box = document.getElementById("wb-text"), node = box.firstChild;
          let i = -1; for (let k = 0; k <= nth; k++) i = node.data.indexOf(w, i + 1);
          const r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + 1);
          box.scrollTop += r.getBoundingClientRect().top - box.getBoundingClientRect().top - 60;
          const a = r.getBoundingClientRect();
          r.setStart(node, i + w.length - 1); r.setEnd(node, i + w.length);
          const b = r.getBoundingClientRect();
          return [a.left + 1, a.top + a.height / 2, b.right - 1, b.top + b.height / 2]; }""",
                             [words, nth])
        self.p.mouse.move(xy[0], xy[1])
        self.p.mouse.down()
        self.p.mouse.move(xy[2], xy[3], steps=6)
        self.p.mouse.up()

    def state(self):
        return self.p.evaluate("""async () => {
          const u = new URL(document.getElementById("wb").dataset.state, location.href);
          u.searchParams.set("page", new URL(location.href).searchParams.get("page") || 0);
          return (await fetch(u, {credentials: "same-origin"})).json(); }""")

    def spans(self):
        st = self.state()
        return sorted((a["begin"], a["end"], a["target"], a["origin"])
                      for a in st["annotations"] if a["kind"] == "span")

    def no_csp_violation(self):
        assert self.p.evaluate("window.__csp") == []
        assert not [m for m in self.console if "Content Security Policy" in m or
                    m.startswith("page error")], self.console


def span(words, nth=0):
    b = -1
    for _ in range(nth + 1):
        b = SHORT.index(words, b + 1)
    return b, b + len(words)


def test_annotate_link_accept_reject_undo_reload_and_conflict(browser, world):
    ann = Page(browser, world, "ann1")
    ann.open_unit("mentions")
    p = ann.p
    assert p.locator("#wb-suggestions li.open").count() == 3
    assert "score 0.93" in p.inner_text("#wb-current")

    # the first suggestion is current: a accepts it (family member allbus-2008 copied), r
    # rejects the next after moving past SOEP with j
    v = ann.press("a")
    ann.saved(v)
    assert p.locator("#wb-suggestions li.accepted").count() == 1
    v = ann.press("j")
    v = ann.press("r")
    ann.saved(v)
    assert p.locator("#wb-suggestions li.rejected").count() == 1
    got = ann.spans()
    assert (*span("ALLBUS 2010"), "allbus-2010", "suggestion") in got
    assert (*span("ALLBUS 2010"), "allbus-2008", "family") in got
    assert p.locator("#wb-annotations li.origin-family .note").inner_text().startswith(
        "coded for family member ALLBUS 2010")

    # a span by selection: after the emoji (two UTF-16 units per code point) the offsets
    # are still the server's; the search box opens with the words, Enter links it
    v = ann.version()
    ann.select("ALLBUS 2008")
    ann.saved(v)
    p.wait_for_selector("#wb-results li.now")
    assert p.evaluate("document.activeElement.id") == "wb-search"
    assert "ALLBUS 2008" in p.inner_text("#wb-results li.now")
    v = ann.press("Enter")
    ann.saved(v)
    assert (*span("ALLBUS 2008"), "allbus-2008", "manual") in ann.spans()
    p.screenshot(path=str(shots() / "wb-unit-annotated.png"), full_page=True)

    # undo the link, then the span itself (u and Ctrl+Z)
    v = ann.press("u")
    ann.saved(v)
    assert (*span("ALLBUS 2008"), "", "manual") in ann.spans()
    v = ann.press("Control+z")
    ann.saved(v)
    assert not [s for s in ann.spans() if s[:2] == span("ALLBUS 2008")]

    # link by searching: "/" focuses the search, arrows pick, Enter links the current span
    v = ann.version()
    ann.select("German Socio-Economic Panel (SOEP)")
    ann.saved(v)
    p.fill("#wb-search", "")
    p.keyboard.press("Escape")
    ann.press("/")
    p.keyboard.type("panel")
    p.wait_for_selector("#wb-results li.now >> text=German Socio-Economic Panel")
    v = ann.press("Enter")
    ann.saved(v)
    manual = [s for s in ann.spans() if s[3] == "manual"]
    assert manual == [(*span("German Socio-Economic Panel (SOEP)"), "soep", "manual")]

    # Delete removes the current annotation, u brings it back (a new row, same span)
    v = ann.press("Delete")
    ann.saved(v)
    assert not [s for s in ann.spans() if s[3] == "manual"]
    v = ann.press("u")
    ann.saved(v)
    assert [s[:3] for s in ann.spans() if s[3] == "manual"] == [
        (*span("German Socio-Economic Panel (SOEP)"), "soep")]

    # reload: everything is there
    before = ann.spans()
    p.reload()
    p.wait_for_selector("#wb-annotations li")
    assert ann.spans() == before
    assert p.locator("#wb-suggestions li.accepted").count() == 1
    assert p.locator("#wb-suggestions li.rejected").count() == 1
    assert p.locator("#wb-annotations li").count() == len(before)
    assert p.locator("#wb-text .r6o-annotation").count() >= len(before)

    # a second window saves first: this one gets the conflict banner and changes nothing
    other = Page(browser, world, "ann1")
    other.open_unit("mentions")
    v = other.version()
    other.p.click("#wb-suggestions li.open button:text-is('accept')")
    other.saved(v)
    saved = other.spans()
    p.click("#wb-annotations li >> nth=0")
    p.keyboard.press("Delete")
    p.wait_for_selector("#wb-banner.conflict")
    banner = p.inner_text("#wb-banner")
    assert "saved elsewhere" in banner and "Reload" in banner
    assert other.spans() == saved
    p.screenshot(path=str(shots() / "wb-unit-conflict.png"), full_page=True)
    p.click("#wb-reload")
    p.wait_for_selector("#wb-annotations li")
    assert ann.spans() == saved
    ann.no_csp_violation()
    other.no_csp_violation()


def test_long_text_is_paged_with_document_offsets(browser, world):
    ann = Page(browser, world, "ann2")
    ann.open_unit("mentions", 1)
    p = ann.p
    st = ann.state()
    assert st["unit"]["pages"] >= 2 and p.is_visible("#wb-pager")
    assert not p.locator("#wb-suggestions li").count()           # its suggestion is later
    for _ in range(st["unit"]["pages"]):
        if p.locator("#wb-suggestions li").count():
            break
        ann.press("]")
        p.wait_for_timeout(300)
    assert p.locator("#wb-text .r6o-annotation").count() == 1
    v = ann.press("a")
    ann.saved(v)
    st = ann.state()
    got = [a for a in st["annotations"] if a["origin"] == "suggestion"]
    sugg = [s for s in st["suggestions"] if s["verdict"] is True]
    assert got and got[0]["begin"] == sugg[0]["begin"] > st["unit"]["page_begin"] > 0
    text = st["unit"]["text"]
    b = got[0]["begin"] - st["unit"]["page_begin"]
    assert text[b:b + 4] == "SOEP"
    assert "page=" in p.url
    p.screenshot(path=str(shots() / "wb-unit-page2.png"), full_page=True)
    ann.no_csp_violation()


def test_key_presses_with_suggestions_and_without(browser, world):
    """ann2 codes the short publication twice: suggestions on (accept two, reject one,
    done) and off (select each mention, Enter on the search's first hit, done). One
    selection by mouse counts as one action, as a key does."""
    counts = {}
    for project in ("mentions", "mentions-plain"):
        ann = Page(browser, world, "ann2")
        ann.open_unit(project)
        if project == "mentions":
            for key in ("a", "a", "r"):
                ann.saved(ann.press(key))
        else:
            for words in ("ALLBUS 2010", "German Socio-Economic Panel (SOEP)"):
                v = ann.version()
                ann.select(words)
                ann.saved(v)
                ann.p.wait_for_selector("#wb-results li.now")
                ann.saved(ann.press("Enter"))
        ann.saved(ann.press("d"))
        assert ann.state()["status"] == "done"
        got = {(b, e, t) for b, e, t, _ in ann.spans()}
        assert {(*span("ALLBUS 2010"), "allbus-2010"),
                (*span("German Socio-Economic Panel (SOEP)"), "soep")} <= got
        counts[project] = (ann.keys, ann.selections)
        ann.no_csp_violation()
    with_s, without = counts["mentions"], counts["mentions-plain"]
    print(f"\nkeys to code one unit: with suggestions {with_s[0]} keys + {with_s[1]} "
          f"selections = {sum(with_s)}; without {without[0]} keys + {without[1]} "
          f"selections = {sum(without)}")
    assert sum(with_s) < sum(without)
    assert with_s[1] == 0


def test_svident_question_and_ranked_variables(browser, world):
    ann = Page(browser, world, "ann1")
    ann.open_unit("variables")
    p = ann.p
    assert "Does the sentence mention a survey variable?" in p.inner_text("#wb-questions")
    scores = [float(x.split()[1]) for x in
              p.locator("#wb-suggestions li .score").all_inner_texts()]
    assert scores == sorted(scores, reverse=True) and len(scores) == 3
    ann.saved(ann.press("y"))
    ann.saved(ann.press("a"))                   # the best variable
    ann.saved(ann.press("r"))                   # the next
    v = ann.press("u")                          # undone: undecided again (two saves)
    p.wait_for_function("v => window.workbench.state().version > v + 1", arg=v)
    assert p.locator("#wb-suggestions li.rejected").count() == 0
    p.click("#wb-suggestions li.open >> nth=0")
    ann.saved(ann.press("r"))
    st = ann.state()
    answers = {(a["label"], a["value"], a["target"]) for a in st["annotations"]}
    assert ("is_variable", "yes", "") in answers
    assert ("variable", "yes", "v-life") in answers
    assert p.is_checked("#wb-q0-yes")
    assert "Life satisfaction" in p.inner_text("#wb-annotations")
    ann.press("/")                               # a variable no system proposed
    p.keyboard.type("work")
    p.wait_for_selector("#wb-results li.now >> text=Satisfaction with work")
    ann.saved(ann.press("Enter"))
    answers = {(a["label"], a["target"], a["origin"]) for a in ann.state()["annotations"]}
    assert ("variable", "v-work", "manual") in answers
    p.screenshot(path=str(shots() / "wb-svident.png"), full_page=True)
    ann.no_csp_violation()


def test_curator_takes_one_annotators_span_and_strangers_get_404(browser, world):
    # ann1 and ann2 coded pub-1 in the tests above (this one runs last in the file); make
    # sure they differ: ann2 adds a span ann1 does not have
    ann = Page(browser, world, "ann2")
    ann.open_unit("mentions")
    v = ann.version()
    ann.select("ALLBUS 2008")
    ann.saved(v)
    ann.p.keyboard.press("Escape")

    org = Page(browser, world, "org")
    org.p.goto(ann.p.url.replace("/u/", "/curate/").split("?")[0])
    p = org.p
    p.wait_for_selector("#cur-grid li.differs")
    cols = p.locator("#cur-grid .cur-col h3").all_inner_texts()
    assert [c.split(" ·")[0] for c in cols] == ["ann1", "ann2"]
    n_gold = len(org.spans())
    p.keyboard.press(".")
    row = p.locator("#cur-grid li.now")
    words = row.inner_text()
    v = org.version()
    p.keyboard.press("t")
    org.saved(v)
    assert len(org.spans()) == n_gold + 1
    p.wait_for_selector("#cur-grid li.in-gold")
    st = org.state()
    assert st["role"] == "curator"
    p.screenshot(path=str(shots() / "wb-curate.png"), full_page=True)
    assert words
    org.no_csp_violation()

    # a participant (alice, in Team A) and a stranger see nothing of it
    alice = Page(browser, world, "alice")
    unit = ann.p.url.split("?")[0]
    for path in (unit, unit.replace("/u/", "/curate/"), unit + "state",
                 world.url + ann.state()["nav"]["list"],
                 f"{world.url}/c/tiny/workbench/mentions/entries?q=allbus"):
        assert alice.p.request.get(path).status == 404, path
    r = alice.p.request.post(unit + "ops", data=json.dumps({"version": 0, "ops": []}),
                             headers={"Content-Type": "application/json"})
    assert r.status in (403, 404)          # no CSRF token, and no assignment either way
