"""Invitations and the lead role in a browser: an organizer invites two addresses of a
private competition with terms, approval and team approval; each signs up with
the link from the mail (file backend); one forms a team, the other joins; the
lead hands the lead role over, the organizer approves the team and the new
lead, and the team page shows the history; the used link is refused.

Screenshots go to $SHAREVAL_SCREENS (default: the test's temporary folder).
"""
from __future__ import annotations

import os
import re
import tarfile
from pathlib import Path

import pytest
import yaml

from .test_competition_access import restricted_bundle
from ..test_browser import ARGS, CHROMIUM, login
from .test_browser_access import MAIL_STACK, mails

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                 reason=f"Debian chromium not found at {CHROMIUM}")]


def wait_mail(page, folder, subject_part, to):
    for _ in range(60):
        found = [m for m in mails(folder) if subject_part in m["Subject"] and m["To"] == to]
        if found:
            return found[-1]
        page.wait_for_timeout(250)
    raise AssertionError(f"no mail {subject_part!r} to {to}: "
                         f"{[(m['To'], m['Subject']) for m in mails(folder)]}")


def sign_up(browser, url, name):
    page = browser.new_context().new_page()
    page.set_default_timeout(30_000)
    page.goto(url)
    page.wait_for_selector("#join-form")
    page.fill("#id_username", name)
    page.fill("#id_password1", f"{name.title()}-pass-4711x")
    page.fill("#id_password2", f"{name.title()}-pass-4711x")
    page.check("#join-accept")
    return page


@MAIL_STACK
def test_invitation_links_and_lead_handover(stack, tmp_path):
    from playwright.sync_api import sync_playwright
    shots = Path(os.environ.get("SHAREVAL_SCREENS", tmp_path / "screens"))
    shots.mkdir(parents=True, exist_ok=True)

    def shot(page, name):
        page.screenshot(path=str(shots / f"lead-{name}.png"), full_page=True)

    root = restricted_bundle(tmp_path / "bundle", "lead-demo", team_approval=True)
    doc = yaml.safe_load((root / "bundle.yaml").read_text())
    doc["invite"] = []                    # only the mailed links let people in
    (root / "bundle.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    tgz = tmp_path / "bundle.tgz"
    with tarfile.open(tgz, "w:gz") as t:
        t.add(root, arcname="lead-demo")
    stack.cli("server", "load-bundle", tgz, "--organizer", "org")
    mail_dir = tmp_path / "mail"
    c = stack.url + "/c/lead-demo"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        # 1. the organizer invites two addresses
        org = login(browser, stack, "org")
        org.goto(c + "/organize/access/")
        org.fill("#invite-input", "ina@lab.example carl@lab.example")
        org.click("#invite-submit")
        org.wait_for_selector("text=Sign-up links mailed to 2 addresses")
        shot(org, "01-organizer-invited-two-addresses")
        links = {}
        for who in ("ina", "carl"):
            m = wait_mail(org, mail_dir, "You are invited", f"{who}@lab.example")
            links[who] = re.search(r"(http://\S+/join/\S+/)", m.get_payload()).group(1)
            assert links[who].startswith(c + "/join/")
        # 2. ina signs up with her link (terms on the same page) and forms a team
        ina = sign_up(browser, links["ina"], "ina")
        assert ina.input_value("#id_email") == "ina@lab.example"
        shot(ina, "02-sign-up-with-the-invitation-link")
        ina.click("#join-submit")
        ina.wait_for_selector("text=You are registered")
        ina.goto(c + "/team/")
        ina.fill("#team-create-name", "Ina's lab")
        ina.click("#team-create")
        ina.wait_for_selector("#team-pending")
        # 3. carl signs up and asks to join; ina lets him in
        carl = sign_up(browser, links["carl"], "carl")
        carl.click("#join-submit")
        carl.wait_for_selector("text=You are registered")
        carl.goto(c + "/team/")
        carl.select_option("#team-join-name", "Ina's lab")      # chosen, not typed
        carl.click("button[value=join]")
        carl.wait_for_selector("text=its lead must approve")
        ina.goto(c + "/team/")
        ina.click("button[value=approve]")
        ina.wait_for_selector("text=carl joined the team")
        # 4. ina hands the lead to carl: a proposal, as the competition approves leads
        ina.select_option("#hand-lead-user", "carl")
        ina.click("#hand-lead-button")
        ina.wait_for_selector("#lead-proposed")
        assert "ina leads until then" in ina.inner_text("#lead-proposed")
        shot(ina, "03-lead-handover-waits-for-the-organizers")
        wait_mail(ina, mail_dir, "asks to change its lead", "org@host.example")
        # 5. the organizer approves the team and the new lead
        org.goto(c + "/organize/")
        org.locator("button[id^=approve-team-]").click()
        org.wait_for_selector("text=Ina's lab: approved")
        shot(org, "04-organizer-sees-the-proposed-lead")
        org.locator("button[id^=approve-lead-]").click()
        org.wait_for_selector("text=carl leads the team")
        wait_mail(org, mail_dir, "lead of team Ina's lab", "ina@lab.example")
        # 6. the team page: carl leads, the history has every step
        carl.goto(c + "/team/")
        assert "(lead)" in carl.inner_text("main")
        history = carl.inner_text("#team-history")
        for step in ("created", "asked to join", "let in", "lead proposed", "approved",
                     "lead approved"):
            assert step in history, (step, history)
        shot(carl, "05-new-lead-and-the-team-history")
        # 7. the link works once
        other = browser.new_context().new_page()
        r = other.goto(links["ina"])
        assert r.status == 410 and "already used" in other.inner_text("#join-error")
        shot(other, "06-used-link-refused")
        browser.close()
