"""Browser: the submit page's copy buttons, a paged and sorted breakdown, error pages."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .factories import make_bundle
from .stack import Stack
from .test_browser import login, make_team, pytestmark  # noqa: F401 (marks: browser, skipif)

CLASSES = [f"c{k:02d}" for k in range(60)]
ITEMS = [f"i{k:03d}" for k in range(120)]


def tsv(labels):
    return "item\tlabel\n" + "".join(f"{i}\t{lab}\n" for i, lab in labels)


def sixty_classes_bundle(tmp_path):
    """The tiny bundle with 60 classes, so a breakdown needs two pages."""
    root = make_bundle(tmp_path / "bundle")
    gold = [(i, CLASSES[k % 60]) for k, i in enumerate(ITEMS)]      # 60 classes: 2 pages
    (root / "gold-dev.tsv").write_text(tsv(gold))
    (root / "items.txt").write_text("\n".join(ITEMS) + "\n")
    (root / "baseline.tsv").write_text(tsv((i, lab if k % 3 else CLASSES[(k + 1) % 60])
                                           for k, (i, lab) in enumerate(gold)))
    return root


@pytest.mark.stack(users=("org", "alice"), bundle=sixty_classes_bundle, start=True)
def test_copy_buttons_paging_and_error_pages(browser, stack, tmp_path):
    alice = login(browser, stack, "alice")
    alice.context.grant_permissions(["clipboard-read", "clipboard-write"],
                                    origin=stack.url)
    make_team(alice, stack, "Team A")
    alice.goto(stack.url + "/c/tiny/submit/")
    guide = alice.locator(".guide:visible")
    assert guide.count() == 1                        # only the chosen dataset's guide
    command = guide.locator("pre.command").inner_text()
    argv = command.replace("\\\n", " ").split()        # shell continuations joined
    assert " ".join(argv).startswith("shareval submit dev-run.tsv --competition tiny --phase dev")
    assert all(len(line) <= 80 for line in command.splitlines())   # no wrap inside the URL
    guide.locator("button.copy", has_text="Copy command").click()
    alice.wait_for_selector(".guide:not([hidden]) button.copy:has-text('Copied')")
    assert alice.evaluate("navigator.clipboard.readText()") == command
    alice.select_option("#dataset", index=1)          # the other dataset's guide
    assert "--phase eval" in alice.locator(".guide:visible pre.command").inner_text()
    alice.screenshot(path=str(tmp_path / "submit.png"), full_page=True)

    org = login(browser, stack, "org")
    org.goto(stack.url + "/c/tiny/organize/")
    org.locator("tr", has_text="Baseline").locator("a").first.click()   # the baseline run
    org.wait_for_selector("#breakdowns")
    table = org.locator("#table-per_class tbody tr")
    assert table.count() == 50 and "page 1 of 2" in org.inner_text("#pager-per_class")
    org.click("#pager-per_class a.next")
    org.wait_for_url("**page=2**")
    assert org.locator("#table-per_class tbody tr").count() == 10
    org.click("#table-per_class th >> text=F1")       # sort by F1 ascending, back to page 1
    org.wait_for_url("**sort=f1**")
    f1 = [float(x) for x in org.locator("#table-per_class tbody tr td:nth-child(4)")
          .all_inner_texts()]
    assert f1 == sorted(f1) and len(f1) == 50
    org.click("#table-per_class th >> text=F1")       # again: descending
    org.wait_for_url("**order=desc**")
    f1 = [float(x) for x in org.locator("#table-per_class tbody tr td:nth-child(4)")
          .all_inner_texts()]
    assert f1 == sorted(f1, reverse=True)
    org.screenshot(path=str(tmp_path / "result.png"), full_page=True)

    r = org.goto(stack.url + "/no/such/page/")
    assert r.status == 404 and "Page not found" in org.inner_text("#error-title")
    r = org.goto(stack.url + "/c/tiny/organize/rescore/labels/")
    assert r.status == 405 and "takes a form" in org.inner_text("#error-title")
    org.goto(stack.url + "/accounts/logout/")
    org.click("#logout-confirm")
    expect(org.locator("main")).to_contain_text("You are logged out")


def test_material_result_page_shows_the_det_plot(browser, tmp_path):
    """The DET curve of a MATERIAL CLIR run, drawn by chromium (``SHAREVAL_SCREENSHOTS``
    names a folder to keep the screenshot in)."""
    import os
    from pathlib import Path

    from .test_webui import material_bundle
    root = material_bundle(tmp_path / "bundle")
    (tmp_path / "home").mkdir()
    s = Stack(tmp_path / "home")
    s.cli("server", "add-user", "org", "--password", "org-pass-123", "--organizer")
    s.cli("server", "load-bundle", root, "--organizer", "org", "--wait")
    s.start()
    try:
        org = login(browser, s, "org")
        org.goto(s.url + "/c/mat/organize/")
        org.locator("tr", has_text="Baseline").locator("a").first.click()
        img = org.locator("img.plot")
        img.wait_for()
        assert img.count() == 1
        # loaded and decoded: a broken image has no natural size
        assert org.evaluate("() => { const i = document.querySelector('img.plot');"
                            " return i.complete && i.naturalWidth; }") == 600
        assert "Scored" in org.inner_text("#state")
        out = Path(os.environ.get("SHAREVAL_SCREENSHOTS") or tmp_path)
        org.screenshot(path=str(out / "material-clir-result.png"), full_page=True)
    finally:
        s.stop()
