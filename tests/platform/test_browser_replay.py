"""Browser walk-through of what a new user met replaying the four design sources
on `make demo`'s data (RCC, SV-Ident, KBP-style judging, MATERIAL): work found
from the header, the RCC study address, an unranked research-methods board,
MATERIAL boards with named runs and misnamed archives, the comparison with an
earlier run, result pages that lead back, choosing a team to join, and the
organizer outside the baseline team. Screenshots go to $SHAREVAL_SCREENS when
set (else the test's temporary folder)."""
from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

import pytest
import yaml

from . import test_browser
from .judging.test_browser_judging_demo import _login
from .submissions.test_material_runs import CANONICAL, archive
from .test_webui import material_bundle

pytestmark = [*test_browser.pytestmark, pytest.mark.realdata]

METHOD_WORDS = {   # research methods read off RCC publication titles, two teams' rules
    "Team Alpha": {"regression": r"\beffect|impact|determinant", "survey": r"survey|poll",
                   "panel data": r"panel|longitudinal|cohort", "experiment": r"trial|experiment"},
    "Team Beta": {"regression": r"\beffect|association", "survey": r"survey",
                  "case study": r"case|evidence from", "panel data": r"longitudinal"},
}


def shots(tmp_path) -> Path:
    d = Path(os.environ.get("SHAREVAL_SCREENS") or tmp_path)
    d.mkdir(parents=True, exist_ok=True)
    return d


def login(browser, stack, user, password):
    return _login(browser, stack, user, password, width=1200)


def token(stack, user) -> str:
    return stack.cli("server", "token", user).stdout.strip().splitlines()[-1]


def submit(stack, user, path, comp, phase, task, dataset, primary=False) -> str:
    from shareval.client import submit as post
    code, body = post(stack.url, token(stack, user), path, comp, phase, task, dataset,
                      primary=primary)
    assert code in (200, 201, 202), body
    assert stack.wait_state(body["id"], token(stack, user), timeout=300)["state"] == "scored"
    return body["id"]


def methods_bundle(root: Path, home: Path) -> Path:
    """RCC research methods (no gold) on the demo's held-out publications."""
    import datetime as dt
    root.mkdir(parents=True)
    now = dt.datetime.now(dt.timezone.utc)
    (root / "bundle.yaml").write_text(yaml.safe_dump({
        "slug": "rcc-methods", "title": "Rich Context: research methods",
        "tasks": [{"slug": "methods", "task": "rcc-fields-methods",
                   "title": "Research methods"}],
        "phases": [{"slug": "phase1", "title": "Phase 1",
                    "start": (now - dt.timedelta(days=1)).isoformat(),
                    "end": (now + dt.timedelta(days=9)).isoformat(), "leaderboard": "public",
                    "datasets": [{"slug": "methods", "task": "methods",
                                  "title": "Methods of the held-out publications"}]}]}))
    pubs = json.loads((home / "demo-bundle/rcc-dev-publications.json").read_text())
    for team, words in METHOD_WORDS.items():
        recs = [{"publication_id": p["publication_id"], "method": m}
                for p in pubs for m, rx in words.items() if re.search(rx, p["title"], re.I)]
        (root / f"{team.split()[1].lower()}.json").write_text(json.dumps(recs))
    return root


def sv_trial_bundle(root: Path) -> Path:
    """SV-Ident Task 2 on the trial data: each variable sentence's variables ranked
    after a wrong one (so MAP@1 is 0 and MAP@10 is not)."""
    import datetime as dt
    import shutil

    from shareval.demo import find_data
    root.mkdir(parents=True)
    ref = find_data(None) / "sv-ident/trial/train/en.tsv"
    shutil.copyfile(ref, root / "en.tsv")
    run = {}
    for r in csv.DictReader(open(ref, encoding="utf-8"), delimiter="\t"):
        ids = [v.split("-")[0] for v in r["variable"].split(",") if v.endswith("-Yes")]
        if r["is_variable"] == "1" and ids:
            run[r["uuid"]] = {"1": 1.0, **{i: 0.9 - 0.1 * k for k, i in enumerate(ids)}}
    (root / "run.json").write_text(json.dumps(run))
    now = dt.datetime.now(dt.timezone.utc)
    (root / "bundle.yaml").write_text(yaml.safe_dump({
        "slug": "sv-trial", "title": "SV-Ident trial: variable disambiguation",
        "tasks": [{"slug": "disambiguation", "task": "svident-disambiguation"}],
        "phases": [{"slug": "trial", "title": "Trial",
                    "start": (now - dt.timedelta(days=1)).isoformat(),
                    "end": (now + dt.timedelta(days=9)).isoformat(), "leaderboard": "public",
                    "datasets": [{"slug": "trial-en", "task": "disambiguation",
                                  "title": "Trial (English)", "reference": "en.tsv"}]}]}))
    return root


def test_replaying_the_design_sources_on_the_demo(browser, demo, tmp_path):
    stack, acc = demo
    out = shots(tmp_path)
    home = stack.home

    # 1. work from the header: the judge, then the RCC study's coder
    judge = login(browser, stack, "judge", acc["judge"])
    assert re.fullmatch(r"Your work \d+ left", judge.inner_text("#work-link"))
    judge.click("#work-link")
    judge.wait_for_selector("#work")
    # demo's 2, material-demo's 2, kbp-demo's relation mentions, the demo's two annotation
    # projects (docs/workbench.md)
    assert judge.locator("#work tbody tr").count() == 7
    judge.screenshot(path=str(out / "replay-01-work-judge.png"), full_page=True)
    alice = login(browser, stack, "alice", acc["alice"])
    assert alice.locator("#work-link").count() == 0
    org = login(browser, stack, "organizer", acc["organizer"])
    org.goto(stack.url + "/c/demo/annotation/")
    assert "shareval server rcc-study demo PHASE DATASET" in org.inner_text("#no-studies")
    org.screenshot(path=str(out / "replay-02a-no-study-yet.png"))
    for u in ("coder", "reviewer"):
        stack.cli("server", "add-user", u, "--password", f"{u}-pass-123")
    printed = stack.cli("server", "rcc-study", "demo", "development", "rcc-dev",
                        "--designer", "organizer", "--per-topic", "3", "--qualitative", "2",
                        "--coder", "coder", "--reviewer", "reviewer", "--judge", "judge").stdout
    address = re.search(r"pages: (/c/demo/annotation/\d+/)", printed).group(1)
    coder = login(browser, stack, "coder", "coder-pass-123")
    coder.goto(stack.url + address)
    assert coder.url.endswith(address + "work/") and "Capture data references" in coder.content()
    coder.screenshot(path=str(out / "replay-02-study-address-coder.png"), full_page=True)
    coder.goto(stack.url + "/c/demo/")
    assert "Capture data references" in coder.inner_text("#your-work")
    coder.screenshot(path=str(out / "replay-03-competition-your-work.png"))
    judge.reload()
    assert "Choose your topic areas" in judge.inner_text("#work")
    # the judge ranks one phase-1 publication alone: Kendall's W is undefined, not "nan"
    judge.click("tr[id$=-topics] a.open-work")          # "Start" on the topics row
    judge.wait_for_selector("input[name=topics]")       # .all() below does not wait
    for box in judge.locator("input[name=topics]").all():
        box.check()
    judge.click("#save-topics")
    judge.wait_for_selector("text=Your topic areas are saved.")
    judge.click("#work-rank a")
    judge.wait_for_selector("select[name=rank-0]")      # .count() below does not wait
    for i in range(judge.locator("select[name^=rank-]").count()):
        judge.select_option(f"select[name=rank-{i}]", str(i + 1))
    judge.click("#save-ranking")
    judge.wait_for_selector("text=Ranking of publication")
    org.goto(stack.url + address + "results/")
    agreement = org.inner_text("#agreement")
    assert "undefined so far" in agreement and "nan" not in agreement.lower()
    org.screenshot(path=str(out / "replay-03b-study-results-kendall-w.png"), full_page=True)

    # 2. an unranked board: research methods have no gold
    stack.cli("server", "load-bundle", methods_bundle(tmp_path / "methods", home),
              "--organizer", "organizer", "--wait")
    for user, team in (("alice", "Team Alpha"), ("bob", "Team Beta")):
        stack.cli("server", "add-user", user, "--password", acc[user],
                  "--competition", "rcc-methods", "--team", team)
        submit(stack, user, tmp_path / "methods" / f"{team.split()[1].lower()}.json",
               "rcc-methods", "phase1", "methods", "methods")
    org.goto(stack.url + "/c/rcc-methods/leaderboard/phase1/methods/")
    headers = [h.strip() for h in org.locator("#leaderboard thead th").all_inner_texts()]
    assert "Rank" not in headers and "" not in headers and "Most frequent values" in headers
    assert "not ranked" in org.inner_text("#task-line")
    assert "by ;" not in org.inner_text("#board-rule")
    assert org.locator("#overlap tbody tr").count() == 2
    org.screenshot(path=str(out / "replay-04-methods-board.png"), full_page=True)

    # 3. MATERIAL: several runs per team, each named; a misnamed archive refused
    mat = material_bundle(tmp_path / "material")
    b = yaml.safe_load((mat / "bundle.yaml").read_text())
    b["phases"][0]["leaderboard"] = "public"
    b["phases"][0]["datasets"][0]["board"] = {"runs": "all"}
    (mat / "bundle.yaml").write_text(yaml.safe_dump(b))
    stack.cli("server", "load-bundle", mat, "--organizer", "organizer", "--wait")
    runs = {}
    for user, team in (("alice", "NIST"), ("bob", "Other")):
        stack.cli("server", "add-user", user, "--password", acc[user],
                  "--competition", "mat", "--team", team)
    alice = login(browser, stack, "alice", acc["alice"])     # add-user ended her session
    names = [CANONICAL.format(lang="1A"), "sysB.tgz", "my-run.tgz"]
    for k, name in enumerate(names):
        f = tmp_path / name
        f.write_bytes(archive(mat, drop=k))
        runs[name] = submit(stack, "alice", f, "mat", "dev", "clir", "clir-1a", primary=k == 1)
    (tmp_path / "theirs.tgz").write_bytes(archive(mat, drop=2))
    submit(stack, "bob", tmp_path / "theirs.tgz", "mat", "dev", "clir", "clir-1a")
    alice.goto(stack.url + "/c/mat/leaderboard/dev/clir-1a/")
    cells = alice.locator("#leaderboard tr[data-team='NIST'] td.run").all_inner_texts()
    assert any(c.startswith("sysA") and names[0] in c for c in cells)
    assert any(c.startswith("sysB primary") for c in cells)
    assert alice.locator("#leaderboard tr[data-team='NIST'] a.run-name").count() == 3
    assert alice.locator("#leaderboard tr[data-team='Other'] a.run-name").count() == 0
    alice.screenshot(path=str(out / "replay-05-material-board.png"), full_page=True)
    alice.click("#leaderboard a.run-name:has-text('sysB')")
    alice.wait_for_selector("#crumbs")
    assert alice.url.endswith(f"/s/{runs['sysB.tgz']}/")
    alice.screenshot(path=str(out / "replay-06-result-page-crumbs.png"))
    alice.click("#crumb-leaderboard")
    alice.wait_for_selector("#leaderboard")
    wrong = tmp_path / CANONICAL.format(lang="1B")
    wrong.write_bytes(archive(mat))
    alice.goto(stack.url + "/c/mat/submit/")
    alice.set_input_files("#file", str(wrong))
    alice.click("#submit-button")
    alice.wait_for_selector("#problems")
    assert f"{wrong.name}: archive name: says language 1B, the pack is 1A" in \
        alice.inner_text("#problems")
    alice.screenshot(path=str(out / "replay-07-material-misnamed-upload.png"), full_page=True)

    # 4. a second SV-Ident run: the comparison says how many units and what decides
    sentences = list(csv.DictReader(open(home / "demo-bundle/svident-dev-sentences.tsv",
                                         encoding="utf-8"), delimiter="\t"))
    second = tmp_path / "svident-second.json"
    second.write_text(json.dumps({r["uuid"]: int(bool(re.search(r"\b(survey|Umfrage|asked)\b",
                                                                r["sentence"], re.I)))
                                  for r in sentences}))
    sid = submit(stack, "alice", second, "demo", "development", "svident-detection",
                 "svident-dev")
    alice.goto(f"{stack.url}/s/{sid}/")
    decision = alice.inner_text("#comparison-decision")
    units = int(re.search(r"(\d+) paired units?", decision).group(1))
    assert ("No decision" in decision) == (units < 10)
    table = alice.inner_text("#comparison")
    assert "p (bootstrap)" in table and "95% CI low" in table and "nan" not in table.lower()
    alice.screenshot(path=str(out / "replay-08-comparison.png"), full_page=True)

    # 5. SV-Ident disambiguation on the trial data: the MAP@k family in words
    trial = sv_trial_bundle(tmp_path / "sv-trial")
    stack.cli("server", "load-bundle", trial, "--organizer", "organizer", "--wait")
    stack.cli("server", "add-user", "alice", "--password", acc["alice"],
              "--competition", "sv-trial", "--team", "Team Alpha")
    sid = submit(stack, "alice", trial / "run.json", "sv-trial", "trial", "disambiguation",
                 "trial-en")
    alice = login(browser, stack, "alice", acc["alice"])
    alice.goto(f"{stack.url}/s/{sid}/")
    metrics = alice.inner_text("#metrics")
    for words in ("MAP@1", "MAP@10", "P@10", "R-precision"):
        assert words in metrics, words
    assert "Map@" not in alice.content()
    alice.screenshot(path=str(out / "replay-08b-map-at-k.png"), full_page=True)

    # 6. choosing a team to join (dave: the demo's carol is Team Gamma's lead in
    # material-demo); the organizer is in no baseline team
    stack.cli("server", "add-user", "dave", "--password", "dave-pass-123")
    dave = login(browser, stack, "dave", "dave-pass-123")
    dave.goto(stack.url + "/c/demo/team/")
    options = dave.locator("#team-join-name option").all_inner_texts()
    assert options == ["Team Alpha (1 member)", "Team Beta (1 member)"]
    dave.screenshot(path=str(out / "replay-09-join-a-team.png"), full_page=True)
    org.goto(stack.url + "/c/demo/team/")
    assert org.locator("#hand-lead").count() == 0
    org.goto(stack.url + "/c/demo/leaderboard/development/rcc-dev/")
    assert "are highlighted" not in org.inner_text("#task-line")
    assert org.locator("tr[data-own]").count() == 0
    org.screenshot(path=str(out / "replay-10-organizer-board.png"), full_page=True)
    # the organizer's export answers a script's token
    import urllib.request
    req = urllib.request.Request(stack.url + "/c/demo/organize/results.csv",
                                 headers={"Authorization": f"Token {token(stack, 'organizer')}"})
    with urllib.request.urlopen(req) as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("text/csv")
