"""Browser walk-through (issue 24): a team fills a fact sheet on submit, the board
shows its primary and contrastive runs, the organizer disqualifies a run (the team
sees why), downloads the overview table and exports the competition, which loads
into a fresh server with identical leaderboards. SHAREVAL_SCREENSHOTS=DIR keeps
the screenshots."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from playwright.sync_api import expect


from ..factories import make_bundle, run_with_accuracy
from ..test_browser import login, pytestmark, wait_scored  # noqa: F401 (marks: browser, skipif)

SHEET = {"required": ["method", "training"], "training": ["constrained", "unconstrained"],
         "fields": [{"name": "ensemble", "label": "Ensemble of models", "type": "bool"},
                    {"name": "gpu_hours", "label": "GPU hours", "type": "number"}]}
BOARD = {"runs": "all", "team_visibility": True,
         "columns": [{"metric": "f1_macro", "precision": 3}, {"metric": "accuracy",
                                                             "precision": 2}]}


def shot(page, tmp_path, name):
    page.screenshot(path=str(tmp_path / name), full_page=True)
    if os.environ.get("SHAREVAL_SCREENSHOTS"):
        Path(os.environ["SHAREVAL_SCREENSHOTS"]).mkdir(parents=True, exist_ok=True)
        shutil.copy(tmp_path / name, Path(os.environ["SHAREVAL_SCREENSHOTS"]) / name)


def submit_with_sheet(page, url, tmp_path, name, correct, method, primary):
    f = tmp_path / name
    f.write_text(run_with_accuracy(correct))
    page.goto(url + "/c/tiny/submit/")
    page.select_option("#dataset", label=page.locator("#dataset option",
                                                      has_text="Development").first.inner_text())
    page.set_input_files("#file", str(f))
    if primary:
        page.check("#primary")
    page.fill("#fs_method", method)
    page.select_option("#fs_training", "constrained")
    page.check("#fs_ensemble")
    page.fill("#fs_gpu_hours", "4.5")
    page.fill("#fs_paper", "https://example.org/paper.pdf")


def test_fact_sheet_runs_board_disqualify_and_export_import(browser, stacks, tmp_path):
    a = stacks("home-a")
    for user, org in (("org", True), ("alice", False), ("bob", False)):
        a.cli("server", "add-user", user, "--password", f"{user}-pass-123",
              *(["--organizer"] if org else []))
    a.cli("server", "load-bundle", make_bundle(tmp_path / "b", extra={"factsheet": SHEET},
                                               options={"dev": {"board": BOARD}}),
          "--organizer", "org", "--wait")
    for user, team in (("alice", "Team A"), ("bob", "Team B")):
        a.cli("server", "add-user", user, "--password", f"{user}-pass-123",
              "--competition", "tiny", "--team", team)
    a.start()

    alice = login(browser, a, "alice")
    submit_with_sheet(alice, a.url, tmp_path, "a1.tsv", 17, "", True)
    alice.click("#submit-button")                      # the method is required
    expect(alice.locator("#problems")).to_contain_text("factsheet.method: required")
    assert alice.input_value("#fs_gpu_hours") == "4.5"          # what was typed is kept
    submit_with_sheet(alice, a.url, tmp_path, "a1.tsv", 17, "BiLSTM-CRF", True)
    shot(alice, tmp_path, "1-submit-factsheet.png")
    alice.click("#submit-button")
    assert wait_scored(alice) == "scored"
    assert "BiLSTM-CRF" in alice.inner_text("#factsheet-view")
    shot(alice, tmp_path, "2-run-with-factsheet.png")
    submit_with_sheet(alice, a.url, tmp_path, "a2.tsv", 19, "BiLSTM-CRF + lexicon", False)
    alice.click("#submit-button")
    assert wait_scored(alice) == "scored"

    bob = login(browser, a, "bob")
    submit_with_sheet(bob, a.url, tmp_path, "b1.tsv", 18, "rules", True)
    bob.click("#submit-button")
    assert wait_scored(bob) == "scored"
    bob_run = bob.url

    anon = browser.new_context().new_page()
    anon.goto(a.url + "/c/tiny/leaderboard/dev/dev/")
    rows = anon.locator("#leaderboard tbody tr").all_inner_texts()
    assert [r.split("\t")[1].strip() for r in rows] == ["Team A", "Team B", "Team A",
                                                        "Baseline baseline"]
    assert "Contrastive" in rows[0] and "BiLSTM-CRF + lexicon" in rows[0]
    assert "Primary" in rows[2] and "0.85" in rows[2]          # accuracy at 2 digits
    assert "Several runs per team" in anon.inner_text("#board-rule")
    shot(anon, tmp_path, "3-board-primary-and-contrastive.png")

    org = login(browser, a, "org")
    org.goto(bob_run)
    org.click("#organizer-actions summary")
    org.fill("#disqualify-reason", "trained on the evaluation labels")
    org.click("#disqualify-run")
    org.wait_for_selector("#disqualified")
    shot(org, tmp_path, "4-organizer-disqualifies.png")
    bob.reload()
    assert "trained on the evaluation labels" in bob.inner_text("#disqualified")
    assert "disqualified" in bob.inner_text("#events").lower()
    shot(bob, tmp_path, "5-team-sees-disqualification.png")
    anon.reload()
    assert "Team B" not in anon.inner_text("#leaderboard")

    org.goto(a.url + "/c/tiny/organize/")
    with org.expect_download() as dl:
        org.click("#factsheets-tex")
    tex = Path(dl.value.path()).read_text()
    assert r"BiLSTM-CRF + lexicon" in tex and "rules" not in tex    # disqualified: left out
    with org.expect_download() as dl:
        org.click("#export-competition")
    archive = tmp_path / "tiny-export.tgz"
    dl.value.save_as(archive)
    shot(org, tmp_path, "6-organizer-records.png")

    b = stacks("home-b")                          # a fresh server with its own database
    r = b.cli("server", "import-competition", archive)
    assert "competition tiny imported" in r.stdout, r.stdout
    b.start()
    for path in ("/api/competitions/tiny/leaderboard/dev/dev/",
                 "/api/competitions/tiny/leaderboard/eval/eval/"):
        assert b.api("GET", path) == a.api("GET", path), path
    anon_b = browser.new_context().new_page()
    anon_b.goto(b.url + "/c/tiny/leaderboard/dev/dev/")
    assert anon_b.locator("#leaderboard tbody tr").all_inner_texts() == \
        anon.locator("#leaderboard tbody tr").all_inner_texts()
    shot(anon_b, tmp_path, "7-imported-server-board.png")
