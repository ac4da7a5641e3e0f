"""Browser tests: Playwright driving Debian's chromium (headless) against a real server.

Skipped with a reason when /usr/bin/chromium is absent (.ci/run installs it).
"""
from __future__ import annotations

import os
import tarfile
import time
from pathlib import Path

import pytest

from .factories import make_bundle, run_with_accuracy, shows_number

CHROMIUM = os.environ.get("SHAREVAL_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                 reason=f"Debian chromium not found at {CHROMIUM}")]


def login(browser, stack, user):
    page = browser.new_context().new_page()
    page.set_default_timeout(30_000)
    page.goto(stack.url + "/accounts/login/")
    page.fill("#id_username", user)
    page.fill("#id_password", f"{user}-pass-123")
    page.click("#login-submit")
    page.wait_for_url(stack.url + "/")
    return page


def make_team(page, stack, name):
    page.goto(stack.url + "/c/tiny/team/")
    page.fill("#team-create-name", name)
    page.click("#team-create")
    page.wait_for_selector("text=You are in")


def upload(page, stack, tmp_path, dataset_label, content, name="run.tsv"):
    f = tmp_path / name
    f.write_text(content)
    page.goto(stack.url + "/c/tiny/submit/")
    page.select_option("#dataset", label=page.locator("#dataset option", has_text=dataset_label)
                       .first.inner_text())
    page.set_input_files("#file", str(f))
    page.click("#submit-button")


def wait_scored(page, timeout=90):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        state = page.get_attribute("#state", "data-state")
        if state in ("scored", "failed"):
            return state
        time.sleep(0.5)
        page.reload()
    raise AssertionError("not scored in time")


@pytest.mark.stack(users=("org", "alice", "bob"), start=True)
def test_organizer_bundle_two_teams_leaderboard_and_blind_release(browser, stack, tmp_path):
    bundle = make_bundle(tmp_path / "bundle")
    tgz = tmp_path / "bundle.tgz"
    with tarfile.open(tgz, "w:gz") as t:
        t.add(bundle, arcname="tiny")

    org = login(browser, stack, "org")
    org.goto(stack.url + "/organize/new/")
    org.set_input_files("#bundle", str(tgz))
    org.click("#load-bundle")
    org.wait_for_selector("text=Competition Tiny tiny loaded")
    assert "/c/tiny/organize/" in org.url

    alice = login(browser, stack, "alice")
    make_team(alice, stack, "Team A")
    upload(alice, stack, tmp_path, "Development", "item\tlabel\ni00\tpos\ni00\tneg\n", "bad.tsv")
    problems = alice.inner_text("#problems")
    assert "bad.tsv:3" in problems and "duplicate" in problems.lower()
    assert "did not pass validation" in alice.inner_text("#submit-error")

    bob = login(browser, stack, "bob")
    make_team(bob, stack, "Team B")
    upload(bob, stack, tmp_path, "Development", run_with_accuracy(16), "bob.tsv")
    assert wait_scored(bob) == "scored"
    assert "Accuracy" in bob.inner_text("#metrics")
    upload(alice, stack, tmp_path, "Development", run_with_accuracy(12), "alice.tsv")
    assert wait_scored(alice) == "scored"

    anon = browser.new_context().new_page()
    anon.goto(stack.url + "/c/tiny/leaderboard/dev/dev/")
    teams = [t.strip() for t in anon.locator("#leaderboard tbody tr td:nth-child(2)").all_inner_texts()]
    assert [t.split()[0:2] for t in teams] == [["Team", "B"], ["Team", "A"], ["Baseline", "baseline"]]
    assert "baseline" in anon.locator("#leaderboard tbody tr").nth(2).get_attribute("class")
    anon.click("#leaderboard th:has-text('F1 (macro)')")      # sortable: ascending first
    first = anon.locator("#leaderboard tbody tr td:nth-child(2)").first.inner_text()
    assert first.startswith("Baseline")
    anon.screenshot(path=str(tmp_path / "leaderboard.png"), full_page=True)

    # blind phase: nothing until the organizer releases
    upload(bob, stack, tmp_path, "Evaluation", run_with_accuracy(17), "bob-eval.tsv")
    assert wait_scored(bob) == "scored"
    assert "not released" in bob.inner_text("#score-hidden")
    assert bob.locator("#metrics").count() == 0
    anon.goto(stack.url + "/c/tiny/leaderboard/eval/eval/")
    assert anon.locator("#scores-hidden").count() == 1
    assert not shows_number(anon.content(), "0.85")
    assert anon.locator("#leaderboard tbody tr td:nth-child(1)").all_inner_texts() == [""]
    assert "latest scored run" in anon.inner_text("#board-rule")
    org.goto(stack.url + "/c/tiny/organize/")
    org.click("#release-eval-top")
    org.wait_for_selector("text=top-level results released")
    bob.reload()
    assert "0.8500" in bob.inner_text("#metrics")
    assert bob.locator("#breakdowns").count() == 0          # details come later
    anon.reload()
    assert anon.locator("#scores-hidden").count() == 0
    assert "0.8500" in anon.inner_text("#leaderboard")
    org.goto(stack.url + "/c/tiny/organize/")
    org.click("#release-eval-detailed")
    org.wait_for_selector("text=detailed results released")
    bob.reload()
    assert bob.locator("#breakdowns").count() == 1
    bob.screenshot(path=str(tmp_path / "submission.png"), full_page=True)
    if os.environ.get("SHAREVAL_SCREENSHOTS"):
        import shutil
        for n in ("leaderboard.png", "submission.png"):
            shutil.copy(tmp_path / n, Path(os.environ["SHAREVAL_SCREENSHOTS"]) / n)
