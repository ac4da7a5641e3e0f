"""Browser walk-through of a MATERIAL evaluation period (issue 37), on the
``material-demo`` competition of `make demo` built alone in a live server: the week
has closed, the judge account finishes both summary campaigns from *Your work* in
the header, the organizer scores E2E from the judgments and releases the results,
and an anonymous visitor reads the official tables. Their numbers are checked
against AQWV computed here from the files alone (plan sections 3 and 4), not by
shareval's scorer. Screenshots go to $SHAREVAL_SCREENS when set."""
from __future__ import annotations

import csv
import io
import os
import re
import tarfile
from collections import defaultdict
from pathlib import Path

import pytest

from . import test_browser
from .factories import build_demo, live_stack

pytestmark = test_browser.pytestmark

BETA = {"e2e": 59.9, "clir": 20.0}            # plan Table 1, languages 1A and 1B
# what the judge must never see: teams, systems, document ids
HIDDEN = re.compile(r"Team (Alpha|Beta|Gamma)|\b(Alpha|Beta|Gamma)\.|MATERIAL_BASE-1[AB]_\d{8}")


@pytest.fixture
def period(tmp_path):
    """The material-demo competition in a live server, its week closed and judged by
    the simulated crowd but for four answers per campaign."""
    s = live_stack(tmp_path)
    build_demo(s, "shareval.platform.demo_material.server",
               ("organizer", "alice", "bob", "carol", "judge"), timeout=300)
    s.start()
    yield s
    s.stop()


def _pack(root: Path) -> dict:
    docs = [line.split("\t")[0] for line in
            (root / "documents.tsv").read_text().splitlines()[1:] if line]
    queries = list(csv.DictReader(io.StringIO((root / "queries.tsv").read_text()),
                                  delimiter="\t"))
    relevant = defaultdict(set)
    for f in (root / "clir").glob("*.tsv"):
        for line in f.read_text().splitlines():
            doc, _, y = line.partition("\t")
            if y.strip() == "Y":
                relevant[f.stem].add(doc)
    return {"n": len(docs), "status": {q["query_id"]: q["status"] or "closed" for q in queries},
            "relevant": relevant}


def _retrieved(run: Path) -> tuple[str, dict]:
    """The run's system (TeamID.SysLabel) and its Y documents per query."""
    ys, system = defaultdict(set), ""
    with tarfile.open(run) as t:
        for m in t.getmembers():
            if m.name.endswith(".tsv"):
                for line in t.extractfile(m).read().decode().splitlines():
                    f = line.split("\t")
                    if f[1] == "Y":
                        ys[Path(m.name).stem].add(f[0])
                        system = ".".join(f[3].split(".")[:2])
    return system, ys


def aqwv(pack: dict, ys: dict, beta: float, status: str = "closed", kept=None) -> float:
    """1 - mean P_miss (queries of ``status`` with relevant documents) - beta * mean P_FA
    (all queries of ``status``), over the Y documents ``kept`` keeps (E2E: those whose
    summary a strict majority of judges found relevant)."""
    misses, false_alarms = [], []
    for q, st in pack["status"].items():
        if st != status:
            continue
        found = {d for d in ys.get(q, ()) if kept is None or kept(q, d)}
        rel = pack["relevant"].get(q, set())
        false_alarms.append(len(found - rel) / (pack["n"] - len(rel)))
        if rel:
            misses.append(len(rel - found) / len(rel))
    return 1 - sum(misses) / len(misses) - beta * sum(false_alarms) / len(false_alarms)


def by_hand(home: Path, lang: str, judgments: str) -> dict:
    """Team -> (E2E AQWV, CLIR AQWV at the CLIR beta, open queries' E2E AQWV) of its
    primary E2E run, from the pack, the archive and the exported judgments."""
    pack = _pack(home / "material-demo" / "packs" / f"{lang}-eval")
    votes = defaultdict(list)
    for row in csv.DictReader(io.StringIO(judgments), delimiter="\t"):
        votes[(row["system"], row["query_id"], row["doc_id"])].append(row["relevant"] == "Y")
    out = {}
    for run in (home / "material-demo" / "runs").glob(f"*_E2E-primary-*_BASE-{lang}-EVAL*"):
        system, ys = _retrieved(run)

        def kept(q, d, system=system):
            v = votes[(system, q, d)]
            assert v, f"no judgment for {system} {q} {d}"
            return 2 * sum(v) > len(v)
        out["Team " + run.name.split("_")[0]] = (
            aqwv(pack, ys, BETA["e2e"], kept=kept), aqwv(pack, ys, BETA["clir"]),
            aqwv(pack, ys, BETA["e2e"], "open", kept))
    return out


def _shots(tmp_path) -> Path:
    p = Path(os.environ.get("SHAREVAL_SCREENS") or tmp_path / "shots")
    p.mkdir(parents=True, exist_ok=True)
    return p


def test_judged_week_to_official_tables(browser, period, tmp_path):
    s, shots = period, _shots(tmp_path)
    c = f"{s.url}/c/material-demo"

    # the judge finds the work from the header and answers the last summaries
    judge = test_browser.login(browser, s, "judge")
    judge.click("#work-link")
    for lang in ("1A", "1B"):
        judge.goto(s.url + "/work/")
        judge.click(f"a:text-is('Summaries {lang}')")
        judge.wait_for_selector("#start")
        assert "4 items waiting for a judge" in judge.inner_text("#start-form")
        with judge.expect_navigation():
            judge.click("#start")
        for n in range(4):
            judge.wait_for_selector("#ui")
            assert judge.inner_text("#query").strip() and judge.is_visible("#summary-image")
            assert len(judge.inner_text("#summary").split()) >= 5
            assert "judge the summary" in judge.inner_text("#campaign-instructions")
            assert not HIDDEN.search(judge.content())
            if n == 0:
                judge.screenshot(path=str(shots / f"judge-{lang}.png"), full_page=True)
            with judge.expect_navigation():
                judge.keyboard.press("y" if n % 2 else "n")
        judge.wait_for_selector("#all-done")

    # the organizer scores E2E from each campaign's judgments, then releases the week
    org = test_browser.login(browser, s, "organizer")
    judgments = {}
    for lang in ("1A", "1B"):
        org.goto(c + "/organize/campaigns/")
        org.click(f"a:text-is('Summaries {lang}')")
        org.wait_for_selector("#publish-e2e")
        with org.expect_navigation():
            org.click("#publish-e2e button")
        said = org.locator(".msg").all_inner_texts()
        assert sorted(m.split(":")[0] for m in said if "from its judgments" in m) == \
            ["Team Alpha", "Team Beta"]
        href = org.get_attribute("a:text('E2E judgments')", "href")
        judgments[lang] = org.context.request.get(s.url + href).text()
    org.screenshot(path=str(shots / "published.png"), full_page=True)
    org.goto(c + "/organize/")
    with org.expect_navigation():
        org.click("text=Release top-level scores")
    org.goto(c + "/organize/")
    with org.expect_navigation():
        org.click("text=Release detailed results")

    # anyone reads the tables: each team's primary, E2E from its own judgments
    anon = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    anon.goto(c + "/results/evaluation-week/")
    anon.screenshot(path=str(shots / "official.png"), full_page=True)
    for lang in ("1A", "1B"):
        table = anon.locator(f"#set-lang-{lang.lower()}")
        heads = table.locator(".official-table th").all_inner_texts()
        col = {h: i for i, h in enumerate(heads)}
        rows = [r.locator("td").all_inner_texts()
                for r in table.locator(".official-table tbody tr").all()]
        hand = by_hand(s.home, lang, judgments[lang])
        assert sorted(r[1] for r in rows) == sorted(hand) == ["Team Alpha", "Team Beta"]
        expected_order = sorted(hand, key=lambda t: -hand[t][0])
        assert [r[1] for r in rows] == expected_order and [r[0] for r in rows] == ["1", "2"]
        for r in rows:
            e2e, clir, open_e2e = hand[r[1]]
            assert "judged" in r[col["Primary run"]]
            assert r[col["E2E AQWV"]] == f"{e2e:.4f}"
            assert r[col["CLIR AQWV"]] == f"{clir:.4f}"
            assert r[col["open queries: E2E AQWV"]] == f"{open_e2e:.4f}"
        assert "Without a primary run (not ranked): Team Gamma." in \
            table.locator(".without-primary").inner_text()
        assert table.locator("h3", has_text="E2E AQWV by domain").count() == 1
        assert table.locator("img.plot").count() == 1
        text = anon.context.request.get(f"{c}/results/evaluation-week/lang-{lang.lower()}.csv") \
            .text()
        lines = list(csv.reader(io.StringIO(text)))
        assert lines[0][:5] == ["rank", "team", "run", "judged", "E2E AQWV"]
        assert {r[1]: r[4] for r in lines[1:3]} == {t: f"{v[0]:.4f}" for t, v in hand.items()}
        assert lines[3][1:3] == ["Team Gamma", "(no primary run)"]
