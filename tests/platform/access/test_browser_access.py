"""Access walk-through in a browser: a private competition with terms, approval
and a data licence; a participant of the invited domain verifies her address
(the invitation counts only then), asks, is approved, accepts the licence,
downloads the data (logged), submits and gets the "scored" mail (file backend);
the finalist-only phase refuses the team; outsiders get a 404.

Screenshots go to $SHAREVAL_SCREENS (default: the test's temporary folder).
"""
from __future__ import annotations

import email
import os
import re
import tarfile
from pathlib import Path

import pytest
import yaml

from ..factories import run_with_accuracy
from .test_competition_access import restricted_bundle
from ..test_browser import ARGS, CHROMIUM, login, wait_scored

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                 reason=f"Debian chromium not found at {CHROMIUM}")]


def mails(folder: Path) -> list[email.message.Message]:
    out = []
    for f in sorted(folder.glob("*.log")) if folder.exists() else []:
        for chunk in f.read_text().split("-" * 79):
            if chunk.strip():
                out.append(email.message_from_string(chunk.strip()))
    return out


# a server that mails to files, with links to itself, and an organizer with an address
MAIL_STACK = pytest.mark.stack(users=("org",), emails={"org": "org@host.example"}, mail=True,
                               start=True)


@MAIL_STACK
def test_private_competition_walk_through(stack, tmp_path):
    from playwright.sync_api import sync_playwright
    shots = Path(os.environ.get("SHAREVAL_SCREENS", tmp_path / "screens"))
    shots.mkdir(parents=True, exist_ok=True)

    def shot(page, name):
        page.screenshot(path=str(shots / f"{name}.png"), full_page=True)

    root = restricted_bundle(tmp_path / "bundle", "rcc-private")
    doc = yaml.safe_load((root / "bundle.yaml").read_text())
    doc["phases"][1]["teams"] = []              # the finalists are chosen later
    doc["phases"][1]["title"] = "Phase 2 (finalists)"
    (root / "bundle.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    tgz = tmp_path / "bundle.tgz"
    with tarfile.open(tgz, "w:gz") as t:
        t.add(root, arcname="rcc-private")
    mail_dir = tmp_path / "mail"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        # 1. the organizer loads the bundle
        org = login(browser, stack, "org")
        org.goto(stack.url + "/organize/new/")
        org.set_input_files("#bundle", str(tgz))
        org.click("#load-bundle")
        org.wait_for_url("**/c/rcc-private/organize/")
        org.click("#access")
        org.wait_for_selector("#visibility-setting")
        assert "private" in org.inner_text("#visibility-setting")
        shot(org, "01-organizer-access-settings")
        # 2. outsiders: the competition does not exist for them
        anon = browser.new_context().new_page()
        r = anon.goto(stack.url + "/c/rcc-private/")
        assert r.status == 404
        anon.goto(stack.url + "/")
        assert "rcc-private" not in anon.content()
        shot(anon, "02-anonymous-home-without-the-private-competition")
        # 3. a participant from the invited domain makes an account and registers
        pia = browser.new_context(accept_downloads=True).new_page()
        pia.set_default_timeout(30_000)
        pia.goto(stack.url + "/accounts/register/")
        pia.fill("#id_username", "pia")
        pia.fill("#id_email", "pia@uni.example")
        pia.fill("#id_password1", "Pia-pass-4711x")
        pia.fill("#id_password2", "Pia-pass-4711x")
        shot(pia, "02b-participant-registers-an-account")
        pia.click("input[type=submit]")
        pia.wait_for_url(stack.url + "/")
        # a typed address proves nothing: the invitation by domain waits for the link
        assert "rcc-private" not in pia.content()
        assert "A link to verify pia@uni.example is on its way" in pia.content()
        shot(pia, "03a-registered-address-not-verified-yet")
        assert pia.goto(stack.url + "/c/rcc-private/").status == 404
        assert "pia@uni.example is not verified yet" in pia.inner_text("#verify-hint")
        shot(pia, "03b-private-competition-404-says-verify")
        pia.click("#profile-link")
        pia.wait_for_selector("#address-unverified")
        shot(pia, "03c-profile-address-not-verified")
        verify = [m for m in mails(mail_dir) if "Verify your e-mail" in m["Subject"]]
        assert [m["To"] for m in verify] == ["pia@uni.example"]
        link = re.search(r"https?://\S+/accounts/verify/\S+/", verify[0].get_payload())[0]
        pia.goto(link)
        shot(pia, "03d-verification-page")
        pia.click("#verify-submit")
        pia.wait_for_selector("#address-verified")
        shot(pia, "03e-address-verified")
        assert pia.goto(link).status == 404                     # the link works once
        assert "already used" in pia.inner_text("#verify-invalid")
        shot(pia, "03f-verification-link-used")
        pia.goto(stack.url + "/")
        assert "rcc-private" in pia.content()         # listed for the invited domain
        pia.goto(stack.url + "/c/rcc-private/")
        shot(pia, "03-participant-sees-the-private-competition")
        pia.click("#register-link")
        pia.wait_for_selector("#terms")
        pia.check("#accept-terms")
        shot(pia, "04-participant-accepts-the-terms")
        pia.click("#register-submit")
        pia.wait_for_selector("#registration-state")
        assert "waiting for the organizers" in pia.inner_text("#registration-state")
        shot(pia, "05-registration-pending")
        # 4. the organizer approves
        org.goto(stack.url + "/c/rcc-private/organize/access/")
        org.click("#approve-pia")
        org.wait_for_selector("text=pia: registration approved")
        shot(org, "06-organizer-approved-the-registration")
        # 5. the participant forms a team, accepts the licence and downloads the data
        pia.goto(stack.url + "/c/rcc-private/team/")
        pia.fill("#team-create-name", "Pia's lab")
        pia.click("#team-create")
        pia.wait_for_selector("text=You are in")
        pia.goto(stack.url + "/c/rcc-private/data/")
        assert "Data licence" in pia.inner_text("#download-refusal")
        pia.check("#accept-licence")
        pia.click("#licence-submit")
        pia.wait_for_selector("#licence-accepted")
        with pia.expect_download() as dl:
            pia.click("a.data-file")
        assert Path(dl.value.path()).read_text() == "RESTRICTED-TEXT-MARKER\n"
        shot(pia, "07-licence-accepted-and-data-downloaded")
        org.goto(stack.url + "/c/rcc-private/organize/access/")
        log = org.inner_text("#download-log")
        assert "pia" in log and "data/texts.txt" in log
        org.locator("#downloads").scroll_into_view_if_needed()
        shot(org, "08-organizer-sees-the-download-log")
        # 6. a run on the open phase is scored, and the mail says so
        run = tmp_path / "run.tsv"
        run.write_text(run_with_accuracy(15))
        pia.goto(stack.url + "/c/rcc-private/submit/")
        pia.select_option("#dataset", label=pia.locator("#dataset option",
                                                        has_text="Development").first.inner_text())
        pia.set_input_files("#file", str(run))
        pia.click("#submit-button")
        pia.wait_for_selector("#state")
        assert wait_scored(pia) == "scored"
        shot(pia, "09-run-scored")
        scored = []
        for _ in range(40):
            scored = [m for m in mails(mail_dir) if "was scored" in m["Subject"]]
            if scored:
                break
            pia.wait_for_timeout(250)
        assert scored and scored[0]["To"] == "pia@uni.example", [m["Subject"] for m in
                                                                 mails(mail_dir)]
        (shots / "10-scored-mail.txt").write_text(scored[0].as_string())
        assert f"{stack.url}/s/" in scored[0].get_payload()
        subjects = [m["Subject"] for m in mails(mail_dir)]
        assert any("asks to take part" in s for s in subjects)          # to the organizer
        assert any("registration approved" in s for s in subjects)      # to pia
        # 7. the finalist-only phase refuses a team that was not chosen
        pia.goto(stack.url + "/c/rcc-private/submit/")
        pia.select_option("#dataset", label=pia.locator("#dataset option",
                                                        has_text="Phase 2").first.inner_text())
        pia.set_input_files("#file", str(run))
        pia.click("#submit-button")
        pia.wait_for_selector("text=limited to the teams the organizers chose")
        shot(pia, "11-finalist-phase-refuses-the-team")
        browser.close()
