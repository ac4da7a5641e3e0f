"""Full-page screenshots of the pages a newcomer sees on a running demo server
(issue 22's before/after evidence): home, competition, submit, one result page
per dataset, the leaderboards, the organizer dashboard, settings, access and
judging pages, the judge's pages, the login page and the error pages.

    shareval server --home HOME demo --host 127.0.0.1 --port 8401 &
    PYTHONPATH=src python bench/screens.py http://127.0.0.1:8401 HOME/demo-accounts.json OUT

HOME/demo-accounts.json is the file the demo writes (user -> password; the demo
also prints the passwords on start). Each page is opened as the user who would
open it: home anonymously, the competition, submit and leaderboard pages as
alice (Team Alpha), the result pages and the dashboard as the organizer; the
403 page is what alice gets for a form posted without its CSRF token (a stale
page), and the dashboard as alice is shot too (it answers her 404); the 405
page is the organizer's GET of a POST-only address; the 404 page is a
competition that does not exist. A page
the server does not have (an older version) is recorded with its HTTP status
in OUT/pages.tsv; a result page is shot for each distinct dataset in the
dashboard's submission list (the first link per dataset). Uses Debian's
chromium (/usr/bin/chromium or $SHAREVAL_CHROMIUM), never a downloaded one.
"""
from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM = os.environ.get("SHAREVAL_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
COMP = "/c/demo"


def _context(browser, base, accounts, user):
    page = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
    page.set_default_timeout(60_000)
    if user:
        page.goto(base + "/accounts/login/")
        page.fill("#id_username", user)
        page.fill("#id_password", accounts[user])
        page.click("#login-submit")
        page.wait_for_load_state()
    return page


def _shot(page, base, out, name, path, rows):
    try:
        resp = page.goto(base + path)
        page.wait_for_load_state("networkidle")
        status = resp.status if resp else 0
    except Exception as e:          # e.g. an empty 405: the browser shows its own error page
        status = f"{page.request.get(base + path).status} ({str(e).splitlines()[0][:60]})"
    _save(page, out, name, path, status, rows)


def _csrf_403(page, base, out, name, rows):
    """A form posted without its CSRF token (a stale page): Django's 403."""
    page.goto(base + COMP + "/")
    with page.expect_navigation() as nav:
        page.evaluate("""() => { const f = document.createElement('form'); f.method = 'post';
            f.action = '%s/submit/'; document.body.appendChild(f); f.submit(); }""" % COMP)
    _save(page, out, name, COMP + "/submit/ (POST, no CSRF token)", nav.value.status, rows)


def _save(page, out, name, path, status, rows):
    height = page.evaluate("document.documentElement.scrollHeight")
    page.screenshot(path=str(out / f"{name}.png"), full_page=True)
    rows.append((name, path, status, height))
    print(f"{name:<28} {status} {height:>6}px  {path}")


def _result_links(page, base):
    """(dataset label, /s/<uuid>/ path) of the first run per dataset on the dashboard."""
    page.goto(base + COMP + "/organize/")
    found: dict[str, str] = {}
    for row in page.locator("table tr").all():
        link = row.locator("a[href^='/s/']")
        cells = row.locator("td").all_inner_texts()
        if link.count() and len(cells) > 2 and cells[2] not in found:
            found[cells[2]] = link.first.get_attribute("href")
    return found


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base")
    ap.add_argument("accounts", help="the demo's demo-accounts.json")
    ap.add_argument("out")
    a = ap.parse_args(argv)
    base, out = a.base.rstrip("/"), Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    accounts = json.loads(Path(a.accounts).read_text())
    rows: list[tuple] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        anon = _context(browser, base, accounts, None)
        _shot(anon, base, out, "01-home", "/", rows)
        _shot(anon, base, out, "12-login", "/accounts/login/?next=" + COMP + "/submit/", rows)
        _shot(anon, base, out, "09-error-404", "/c/no-such-competition/", rows)
        alice = _context(browser, base, accounts, "alice")
        _shot(alice, base, out, "02-competition", COMP + "/", rows)
        _shot(alice, base, out, "03-submit", COMP + "/submit/", rows)
        for ds in ("svident-dev", "rcc-dev"):
            _shot(alice, base, out, f"05-leaderboard-{ds}",
                  f"{COMP}/leaderboard/development/{ds}/", rows)
        _shot(alice, base, out, "10-dashboard-as-participant", COMP + "/organize/", rows)
        _csrf_403(alice, base, out, "10-error-403-csrf", rows)
        org = _context(browser, base, accounts, "organizer")
        for label, href in _result_links(org, base).items():
            slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
            _shot(org, base, out, f"04-result-{slug}", href, rows)
        _shot(org, base, out, "06-organizer", COMP + "/organize/", rows)
        _shot(org, base, out, "07-settings", COMP + "/organize/settings/", rows)
        _shot(org, base, out, "07-access", COMP + "/organize/access/", rows)
        _shot(org, base, out, "08-judging-campaigns", COMP + "/organize/campaigns/", rows)
        first = org.locator("a[href*='/organize/campaigns/']:not([href$='/campaigns/'])").first
        if first.count():
            _shot(org, base, out, "08-judging-campaign", first.get_attribute("href"), rows)
        if "judge" in accounts:
            judge = _context(browser, base, accounts, "judge")
            _shot(judge, base, out, "08-judge-home", "/judging/", rows)
            link = judge.locator("main a[href^='/judging/']:not([href='/judging/'])").first
            if link.count():
                _shot(judge, base, out, "08-judge-item", link.get_attribute("href"), rows)
        _shot(org, base, out, "11-error-405", COMP + "/organize/rescore/svident-detection/",
              rows)
        browser.close()
    (out / "pages.tsv").write_text("page\tpath\tstatus\theight_px\n" + "".join(
        "\t".join(map(str, r)) + "\n" for r in rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
