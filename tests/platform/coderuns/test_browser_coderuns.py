"""Browser walk-through of a code submission (Playwright + Debian chromium):
a team uploads a bundle on the Submit code page, sees its test run's log,
score and resources and the final run's bare outcome; the organizer sees the
final run's log, releases the blind phase, and the team then sees the score.
Screenshots go to SHAREVAL_SCREENSHOTS (default: the test's temporary folder).
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import yaml

from shareval.sandbox import bwrap

from ..factories import gold, make_bundle
from ..stack import Stack
from ..test_browser import CHROMIUM, login
from .test_coderuns_security import SYSTEM, bundle

_why = bwrap.probe(bwrap.sandbox_user("pool"))
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no Debian chromium"),
              pytest.mark.skipif(bool(_why), reason=_why or "sandbox available")]


def blind_code_bundle(root: Path) -> Path:
    make_bundle(root, slug="tiny", baseline=False)
    b = yaml.safe_load((root / "bundle.yaml").read_text())
    (root / "hidden").mkdir()
    (root / "hidden" / "items.txt").write_text("\n".join(gold()) + "\n")
    (root / "sample").mkdir()
    (root / "sample" / "items.txt").write_text("\n".join(list(gold())[:10]) + "\n")
    (root / "sample-gold.tsv").write_text("item\tlabel\n" + "".join(
        f"{i}\t{v}\n" for i, v in list(gold().items())[:10]))
    b["phases"][1]["datasets"].append({
        "slug": "eval-code", "title": "Eval (code)", "task": "labels",
        "reference": "gold-eval.tsv", "submission": "code",
        "code": {"input": "hidden", "sample_input": "sample",
                 "sample_reference": "sample-gold.tsv", "limits": {"wall_seconds": 30}}})
    (root / "bundle.yaml").write_text(yaml.safe_dump(b, sort_keys=False))
    return root


@pytest.fixture
def code_stack(tmp_path):
    (tmp_path / "home").mkdir()
    work = Path(f"/tmp/shareval-coderuns-browser-{os.getpid()}")
    work.mkdir(mode=0o711, exist_ok=True)
    os.chmod(work, 0o711)
    s = Stack(tmp_path / "home", SHAREVAL_CODERUN_DIR=str(work / "ws"))
    s.cli("server", "add-user", "org", "--password", "org-pass-123", "--organizer")
    s.cli("server", "load-bundle", blind_code_bundle(tmp_path / "bundle"), "--organizer", "org")
    s.cli("server", "add-user", "alice", "--password", "alice-pass-123",
          "--competition", "tiny", "--team", "Team A")
    s.start()
    if s.workers:           # PostgreSQL + Celery: a code worker as well
        import subprocess
        from ..stack import SHAREVAL
        s.workers.append(subprocess.Popen(SHAREVAL + ["server", "worker", "--code"],
                                          env=s.env, start_new_session=True,
                                          stdout=open(s.home / "code-worker.log", "ab"),
                                          stderr=subprocess.STDOUT))
    yield s
    s.stop()
    import shutil
    shutil.rmtree(work, ignore_errors=True)


def wait_text(page, text: str, timeout: float = 120):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if text in page.content():
            return
        time.sleep(1)
        page.reload()
    raise AssertionError(f"{text!r} not shown in time")


def test_team_submits_code_sees_test_log_and_organizer_releases_final_score(
        browser, code_stack, tmp_path):
    shots = Path(os.environ.get("SHAREVAL_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    st = code_stack
    system = tmp_path / "mysystem.tgz"
    system.write_bytes(bundle("print('reading', __import__('sys').argv[1])\n" + SYSTEM))

    alice = login(browser, st, "alice")
    alice.goto(st.url + "/c/tiny/")
    alice.click("#submit-code-link")
    alice.select_option("#dataset", index=0)
    alice.set_input_files("#file", str(system))
    alice.check("#primary")
    alice.screenshot(path=str(shots / "code-1-upload.png"), full_page=True)
    alice.click("#submit-button")
    alice.wait_for_url("**/code/*/")
    wait_text(alice, "final run, attempt 1: <span class=\"state\">succeeded")
    body = alice.content()
    assert "reading /input" in body                           # the test run's log
    assert "Score on the sample" in body and "accuracy" in body
    assert "Peak memory" in body
    final = alice.locator(".run", has_text="final run").inner_text()
    assert "Log" not in final and "stdout" not in final       # no final-run log for teams
    alice.screenshot(path=str(shots / "code-2-team-runs.png"), full_page=True)
    sub_link = alice.locator(".run", has_text="final run").locator("a").first
    sub_link.click()
    alice.wait_for_selector("#state")
    wait_text(alice, 'data-state="scored"')
    share = sum(v == "pos" for v in gold().values()) / len(gold())
    assert "Scores of this phase are not released yet" in alice.content()
    assert f"{share:.4f}" not in alice.content()
    alice.screenshot(path=str(shots / "code-3-team-final-before-release.png"), full_page=True)
    final_url = alice.url

    org = login(browser, st, "org")
    org.goto(st.url + "/c/tiny/organize/")
    org.locator("#code-submissions a").first.click()
    org.wait_for_url("**/code/*/")
    final = org.locator(".run", has_text="final run").inner_text()
    assert "final run, attempt 1: ok" in final and "Log" in final    # organizers see logs
    assert "Run again (organizers)" in org.content()
    org.screenshot(path=str(shots / "code-4-organizer-code-page.png"), full_page=True)
    org.goto(st.url + "/c/tiny/organize/")
    org.click("#release-eval-detailed")
    org.wait_for_selector("#release-eval-detailed-current, #release-eval-current")
    org.screenshot(path=str(shots / "code-5-organizer-release.png"), full_page=True)

    alice.goto(final_url)
    assert f"{share:.4f}" in alice.content()
    alice.screenshot(path=str(shots / "code-6-team-score-released.png"), full_page=True)
