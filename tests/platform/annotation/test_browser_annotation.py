"""Browser walk-through of the RCC phase-2 study on the demo competition's RCC
data: sampling (`shareval server rcc-study`), capture, topic declaration,
related-to coding, review, the designer's final pass, phase-1 rankings,
results and the leaderboard's related-to F1 column.

Needs ../shared/data (skips without it). Team runs: with SHAREVAL_RCC_RUN set
to a reference-system output (``shareval run rcc ... --threshold 0.1``), Team
Alpha is its citations scoring at least 0.302 (the model's threshold) and
Team Beta all of them; otherwise two runs derived from the held-out gold (a
cheap stand-in). The coder and judges are simulated from the catalog citations
(documented below); what is tested is the server's workflow and arithmetic.
With SHAREVAL_SCREENS=DIR, screenshots go to DIR.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path

import pytest

from shareval.assessment import rcc_phase2 as r2

from .. import test_browser
from ..stack import Stack
from ..test_browser import login

pytestmark = test_browser.pytestmark
TOPICS = ("Finance", "Education")
SCREENS = os.environ.get("SHAREVAL_SCREENS")


def shot(page, name, full=True):
    if SCREENS:
        Path(SCREENS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENS) / f"{name}.png"), full_page=full)


def data_dir():
    from shareval.demo import find_data
    return find_data(None)


def team_runs(gold: list[dict], dev_ids: list[str]) -> dict[str, list[dict]]:
    path = os.environ.get("SHAREVAL_RCC_RUN")
    if path:
        recs = json.loads(Path(path).read_text())
        return {"Team Alpha": [r for r in recs if r["score"] >= 0.302], "Team Beta": recs}
    alpha = [dict(g, score=0.9) for g in gold if int(g["publication_id"]) % 2 == 0]
    beta = [dict(g, score=0.8) for g in gold if int(g["publication_id"]) % 3 == 0] + [
        {"publication_id": int(p), "data_set_id": 1, "score": 0.5, "mention_list": []}
        for p in dev_ids[::4]]
    return {"Team Alpha": alpha, "Team Beta": beta}


@pytest.fixture
def demo_stack(tmp_path, demo_detection_model):
    data = data_dir()
    if data is None:
        pytest.skip("../shared/data not found")
    from shareval.platform.demo import build_bundle
    bundle = build_bundle(data, tmp_path / "bundle", dt.datetime.now(dt.timezone.utc),
                          demo_detection_model)
    (tmp_path / "home").mkdir()
    s = Stack(tmp_path / "home")
    s.cli("server", "add-user", "org", "--password", "org-pass-123", "--organizer")
    for u in ("coder", "judge1", "judge2", "rev"):
        s.cli("server", "add-user", u, "--password", f"{u}-pass-123")
    s.cli("server", "load-bundle", bundle, "--organizer", "org", "--wait")
    for u, team in (("alice", "Team Alpha"), ("bob", "Team Beta")):
        s.cli("server", "add-user", u, "--password", f"{u}-pass-123", "--competition", "demo",
              "--team", team)
    s.start()
    yield s, data, bundle
    s.stop()


def submit_runs(stack, tmp_path, bundle):
    from shareval.client import submit
    gold = json.loads((bundle / "rcc-dev-reference/data_set_citations.json").read_text())
    dev = [str(p["publication_id"]) for p in
           json.loads((bundle / "rcc-dev-publications.json").read_text())]
    runs = team_runs(gold, dev)
    for user, team in (("alice", "Team Alpha"), ("bob", "Team Beta")):
        token = stack.cli("server", "token", user).stdout.strip().splitlines()[-1]
        f = tmp_path / f"{user}.json"
        f.write_text(json.dumps(runs[team]))
        code, body = submit(stack.url, token, f, "demo", "development", "rcc-citations",
                            "rcc-dev", primary=True)
        assert code in (200, 201, 202), body
        assert stack.wait_state(body["id"], token, timeout=300)["state"] == "scored"
    return gold


def test_rcc_phase2_walkthrough_from_sampling_to_f1(browser, demo_stack, tmp_path):
    stack, data, bundle = demo_stack
    gold = submit_runs(stack, tmp_path, bundle)
    cited: dict[str, set[str]] = {}
    for g in gold:
        cited.setdefault(str(g["publication_id"]), set()).add(str(g["data_set_id"]))
    out = stack.cli("server", "rcc-study", "demo", "development", "rcc-dev", "--designer", "org",
                    "--per-topic", "10", "--topics", ",".join(TOPICS), "--qualitative", "2",
                    "--texts", data / "rcc/train/texts",
                    "--catalog", data / "rcc/catalog/dataset_text_dict.json",
                    "--coder", "coder", "--reviewer", "rev", "--judge", "judge1",
                    "--judge", "judge2").stdout
    study = re.search(r"study (\d+)", out).group(1)
    base = f"{stack.url}/c/demo/annotation/{study}/"

    org = login(browser, stack, "org")
    org.set_viewport_size({"width": 1280, "height": 900})
    org.goto(base)
    assert org.inner_text("#sample tbody").count("/ 5") == len(TOPICS)    # titled wanted: 5
    shot(org, "01-sample")

    # capture: the study stores the texts, so the simulated coder selects each catalog
    # citation's first gold mention found in the text (typing its offsets, the page's
    # keyboard fallback; test_browser_capture.py drives the mouse and the keys) as a
    # titled reference and, where the text speaks of a survey but the catalog has
    # nothing, the word "survey" as an untitled one
    from shareval.platform.annotation.sources import full_text
    mentions: dict[tuple[str, str], list[str]] = {}
    for g in gold:
        mentions[(str(g["publication_id"]), str(g["data_set_id"]))] = g.get("mention_list") or []
    coder = login(browser, stack, "coder")
    coder.goto(base + "work/")
    shot(coder, "02-coder-work")
    links = [a.get_attribute("href") for a in coder.query_selector_all("#work-capture a")]
    assert len(links) == 10 * len(TOPICS)
    pub_of, shots, ref_ds = {}, {}, {}
    for k, href in enumerate(links):
        coder.goto(stack.url + href)
        pid = re.search(r"publication (\S+)", coder.inner_text("#publication")).group(1)
        pub_of[href.rstrip("/").split("/")[-1]] = pid
        text = full_text(data / "rcc/train/texts", pid)
        assert coder.query_selector("#pub-text") and not coder.query_selector("#id_context")
        refs = []
        for d in sorted(cited.get(pid, ())):
            at = [(text.find(m), m) for m in mentions.get((pid, d), []) if m and m in text]
            if at:
                refs.append(("titled", *min(at), d))
        if not refs and "survey" in text:
            refs = [("untitled", text.index("survey"), "survey", None)]
        for kind, begin, words, ds in refs:
            coder.select_option("#id_kind", kind)
            coder.fill("#id_begin", str(begin))
            coder.fill("#id_end", str(begin + len(words)))
            coder.click("#add-ref")
            coder.wait_for_selector("text=Reference recorded.")
            if ds:
                ref_ds[(pid, " ".join(words.split()))] = ds
        if refs and not shots.get("capture"):
            shot(coder, "03-capture")
            shots["capture"] = True
        coder.click("#finish-capture")
        coder.wait_for_selector("text=Capture of publication")
    assert ref_ds, "no gold mention found in the texts"

    # topic routing: each judge declares one topic and gets only its publications
    judges = {}
    for j, topic in zip(("judge1", "judge2"), TOPICS):
        page = login(browser, stack, j)
        page.goto(base + "work/")
        assert "Nothing waiting in your topic areas" in page.inner_text("#work-related")
        page.check(f"input[name=topics][value='{topic}']")
        page.click("#save-topics")
        page.wait_for_selector("text=Your topic areas are saved.")
        judges[topic] = page
    shot(judges[TOPICS[0]], "04-judge-topics")
    # related-to: the simulated judge ticks an output under a titled reference when
    # it is the very data set the coder named it after
    title_ids = {}
    shots["related"] = False
    for topic, page in judges.items():
        page.goto(base + "work/")
        hrefs = [a.get_attribute("href") for a in page.query_selector_all("#work-related a")]
        assert len(hrefs) == 10
        for k, href in enumerate(hrefs):
            page.goto(stack.url + href)
            pid = pub_of[href.rstrip("/").split("/")[-1]]
            for row in page.query_selector_all("#refs tbody tr"):
                cells = row.query_selector_all("td")
                if len(cells) < 3:
                    continue
                ref = cells[0].inner_text().strip()[1:]
                ds = ref_ds.get((pid, cells[2].inner_text().strip()))
                if ds is None:
                    continue
                title_ids[ref] = ds
                for box in page.query_selector_all(f"input[name^='rel-{ref}-'][value='{ds}']"):
                    box.check()
            if page.query_selector("input[type=checkbox]:checked") and not shots["related"]:
                shot(page, "05-related")
                shots["related"] = True
            page.click("#save-related")
            page.wait_for_selector("text=Coding of publication")

    # review: remove, unsure and revise one reference each; finish every publication
    rev = login(browser, stack, "rev")
    rev.goto(base + "work/")
    hrefs = [a.get_attribute("href") for a in rev.query_selector_all("#work-review a")]
    assert len(hrefs) == 10 * len(TOPICS)
    acted = []
    for href in hrefs:
        rev.goto(stack.url + href)
        forms = rev.query_selector_all("form.review-form")
        if forms and len(acted) < 3:
            action = ("remove", "unsure", "revise")[len(acted)]
            f = forms[0]
            f.query_selector("select[name=action]").select_option(action)
            if action != "revise":
                f.query_selector("textarea[name=note]").fill(
                    "not data: a method" if action == "remove" else "a family of surveys?")
            else:
                f.query_selector("summary").click()
                f.query_selector("input[name=name]").fill("revised by the reviewer")
            f.query_selector("button").click()
            rev.wait_for_selector(f"text=: {action} recorded")
            acted.append(action)
            if action == "unsure":
                shot(rev, "06-review")
        rev.click("#finish-review")
        rev.wait_for_selector("text=Review of publication")
    assert acted == ["remove", "unsure", "revise"]

    # the designer: closing is refused while a reference is unsure; keep it; close
    org.goto(base + "final/")
    shot(org, "07-final")
    org.click("#close-study")
    org.wait_for_selector("text=still marked unsure")
    card = org.query_selector(".card.st-unsure")
    card.query_selector("select[name=keep]").select_option("1")
    card.query_selector("input[name=note]").fill("kept: the survey is the data")
    card.query_selector("button").click()
    org.wait_for_selector("text=decided")
    org.click("#close-study")
    org.wait_for_selector("text=Final pass closed")

    # phase-1 rankings: both judges now declare both topics and rank the
    # qualitative publications with notes
    for topic, page in judges.items():
        page.goto(base + "work/")
        for t in TOPICS:
            page.check(f"input[name=topics][value='{t}']")
        page.click("#save-topics")
        page.wait_for_selector("text=Your topic areas are saved.")
        for href in [a.get_attribute("href") for a in page.query_selector_all("#work-rank a")]:
            page.goto(stack.url + href)
            boxes = page.query_selector_all("#rank-form .card")
            pid = re.search(r"publication (\d+)", page.inner_text("main p.muted")).group(1)
            ids = [re.findall(r"\(id (\d+)\)", c.inner_text()) for c in boxes]
            found = [len(x) for x in ids]
            right = [sum(d in cited.get(pid, ()) for d in x) for x in ids]
            # simulated judges: judge1 weighs right against wrong outputs, judge2 counts
            # the right ones only (ties: page order)
            order = sorted(range(len(boxes)), key=lambda i: (-(2 * right[i] - found[i]), i)) \
                if topic == TOPICS[0] else sorted(range(len(boxes)), key=lambda i: (-right[i], i))
            for i, card in enumerate(boxes):
                card.query_selector("textarea[name^=good]").fill(
                    f"{found[i]} data sets found" if found[i] else "")
                card.query_selector("textarea[name^=bad]").fill("" if found[i] else
                                                                "nothing found")
                card.query_selector("select").select_option(str(order.index(i) + 1))
            shot(page, "08-rank")
            page.click("#save-ranking")
            page.wait_for_selector("text=Ranking of publication")

    # results and leaderboard
    org.goto(base + "results/")
    org.set_viewport_size({"width": 1280, "height": 1500})
    shot(org, "09-results", full=False)
    shot(org, "09-results-full")
    f1 = {r.query_selector_all("td")[0].inner_text(): r.query_selector_all("td")[6].inner_text()
          for r in org.query_selector_all("#f1 tbody tr")}
    assert set(f1) == {"Team Alpha", "Team Beta", "Baseline: most cited datasets"}
    assert "Borda" in org.inner_text("#consensus") and "Kendall" in org.inner_text("#agreement")
    org.goto(f"{stack.url}/c/demo/leaderboard/development/rcc-dev/")
    shot(org, "10-leaderboard")
    assert "related-to F1" in org.inner_text("#leaderboard thead")
    board = stack.api("GET", "/api/competitions/demo/leaderboard/development/rcc-dev/")[1]
    col = [h["measure"] for h in board["human"]].index("related-to F1")
    shown = {r["team"]: r["human"][col]["estimate"] for r in board["rows"] if r["human"][col]}
    for team, text in f1.items():
        if text.strip() not in ("", "–", "nan"):
            assert shown[team] == pytest.approx(float(text), abs=5e-4)
    with open(tmp_path / "walkthrough.json", "w") as fh:
        json.dump({"f1": f1, "acted": acted}, fh)
    if SCREENS:
        (Path(SCREENS) / "walkthrough.json").write_text(json.dumps(
            {"f1": f1, "leaderboard": shown, "rcc_run": os.environ.get("SHAREVAL_RCC_RUN")},
            indent=1))
    assert r2.MIX == {"titled": 5, "untitled": 4, "none": 1}
