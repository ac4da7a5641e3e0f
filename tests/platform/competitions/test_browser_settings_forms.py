"""Browser walk-through of the Settings page on the demo (`make demo`'s competition):
the organizer makes the competition private, writes terms and then changes them
(version 2), adds a Markdown page, uploads two versions of the RCC data catalog,
and is shown a refused team size beside its field. A participant in a team still
sees the competition; the judge (no team, not invited) and anonymous visitors
get 404. Screenshots go to $SHAREVAL_SCREENS when set (else the test's
temporary folder)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .. import test_browser
from ..judging.test_browser_judging_demo import _login

pytestmark = [*test_browser.pytestmark, pytest.mark.realdata]


def test_organizer_edits_the_settings_in_the_browser(browser, demo, tmp_path, shared_data):
    stack, accounts = demo
    shots = Path(os.environ.get("SHAREVAL_SCREENS", tmp_path / "screens"))
    shots.mkdir(parents=True, exist_ok=True)

    def shot(page, name):
        page.screenshot(path=str(shots / f"settings-{name}.png"), full_page=True)

    org = _login(browser, stack, "organizer", accounts["organizer"])
    org.goto(stack.url + "/c/demo/organize/")
    org.click("#settings")
    org.wait_for_selector("text=Who can see the competition")
    assert org.is_checked("#visibility-public")
    shot(org, "1-settings")

    # private: the judge (no team) and anonymous visitors no longer find it
    org.check("#visibility-private")
    org.click("#save-visibility")
    org.wait_for_selector("text=Visibility: private")
    assert org.is_checked("#visibility-private")
    assert "public → private" in org.inner_text("#change-log")
    anon = browser.new_context().new_page()
    assert anon.goto(stack.url + "/c/demo/").status == 404
    judge = _login(browser, stack, "judge", accounts["judge"])
    assert judge.goto(stack.url + "/c/demo/").status == 404
    alice = _login(browser, stack, "alice", accounts["alice"])
    assert alice.goto(stack.url + "/c/demo/").status == 200       # in Team Alpha

    # terms, then a changed text: version 2
    org.fill("#terms-text", "Participants cite the overview paper.")
    org.click("#save-registration")
    org.wait_for_selector("text=Terms of participation created (version 1)")
    org.fill("#terms-text", "Participants cite the overview paper and describe their "
                            "system in a fact sheet.")
    org.click("#save-registration")
    org.wait_for_selector("text=version 1 → 2")
    assert "now version 2" in org.inner_text("#registration")
    shot(org, "2-terms-version-2")
    alice.goto(stack.url + "/c/demo/register/")
    assert "describe their system" in alice.inner_text("main")

    # a refused value stays in its field with the bundle's words beside it
    org.fill("#max-team-size", "0")
    org.click("#save-teams")
    org.wait_for_selector("#teams .errorlist")
    assert org.inner_text("#teams .errorlist") == "a positive integer"
    assert org.input_value("#max-team-size") == "0"
    org.locator("#teams").scroll_into_view_if_needed()
    org.locator("#teams").screenshot(path=str(shots / "settings-3-refused-team-size.png"))

    # a Markdown page
    org.goto(stack.url + "/c/demo/organize/settings/")
    org.click("#new-page")
    org.fill("#page-slug", "schedule")
    org.fill("#page-title", "Schedule")
    org.fill("#page-body", "# Schedule\n\n- **Development** opens now\n- Evaluation: "
                           "one week, *blind*\n\n[Rules of the RCC](https://example.org/rcc)")
    shot(org, "4-new-page")
    org.click("#save-page")
    org.wait_for_selector("text=Schedule created (version 1)")
    alice.goto(stack.url + "/c/demo/")
    alice.click("main a[href='/c/demo/pages/schedule/']")
    alice.wait_for_url("**/pages/schedule/")
    assert "Development" in alice.inner_text("main strong")
    shot(alice, "5-page-as-participant")

    # the RCC catalog, twice: version 1 is the real file, version 2 one id fewer
    real = shared_data / "rcc" / "catalog" / "dataset_text_dict.json"
    ids = list(json.loads(real.read_text()))
    smaller = tmp_path / "datasets-v2.txt"
    smaller.write_text("\n".join(ids[1:]) + "\n")
    for n, f in ((1, real), (2, smaller)):
        org.fill("#catalog-slug", "rcc-datasets")
        org.select_option("#catalog-kind", "dataset")
        org.set_input_files("#catalog-file", str(f))
        if n == 1:                          # RCC's development dataset checks it
            org.check("#catalog-phase-development")
        org.click("#upload-catalog")
        org.wait_for_selector(f"text=Catalog rcc-datasets: version {n}")
    table = org.inner_text("#catalogs table")
    assert f"{len(ids)} dataset ids" in table and f"{len(ids) - 1} dataset ids" in table
    assert table.count("Development") == 1              # v2 now, moved from v1
    shot(org, "6-catalog-versions")
    org.goto(stack.url + "/c/demo/organize/settings/#changes")
    log = org.inner_text("#change-log")
    for words in ("visibility", "page terms", "page schedule", "catalog rcc-datasets"):
        assert words in log
    assert "organizer" in log
    org.locator("#change-log").screenshot(path=str(shots / "settings-7-change-log.png"))
