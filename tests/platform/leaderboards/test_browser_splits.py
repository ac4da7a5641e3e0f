"""Browser walk-through of a split board (issue 24): a team uploads a TREC run on the
submit page; the TREC and SV-Ident boards say they show the public part and show its
scores; the organizer releases the phase on the organizer page and the boards turn
to the private part. SHAREVAL_SCREENSHOTS=DIR keeps the screenshots."""
from __future__ import annotations

from shareval.tasks import get
from shareval.tasks.splits import score_parts

from ..test_browser import login, pytestmark, wait_scored  # noqa: F401 (marks: browser, skipif)
from ..bundles.test_browser_records import shot
from .test_split_tasks import TASKS, split_of, write_bundle


def board_values(page, url, slug) -> tuple[str, dict[str, str]]:
    page.goto(f"{url}/c/splits/leaderboard/dev/{slug}/")
    rows = page.locator("#leaderboard tbody tr").all_inner_texts()
    return page.inner_text("#board-part"), {
        r.split("\t")[1].strip(): r.split("\t")[3].strip() for r in rows}


def test_split_boards_in_the_browser(browser, stack, tmp_path):
    root = tmp_path / "bundle"
    runs = write_bundle(root)
    token = stack.seed(root, "splits", tokens=("bob",))["bob"]
    stack.start()
    alice = login(browser, stack, "alice")
    for slug in ("trec", "detect"):
        alice.goto(stack.url + "/c/splits/submit/")
        option = alice.locator("#dataset option", has_text=slug).first
        alice.select_option("#dataset", value=option.get_attribute("value"))
        alice.set_input_files("#file", str(runs[slug][1]["Team A"]))
        alice.click("#submit-button")
        assert wait_scored(alice) == "scored"
        env = {"SHAREVAL_SERVER": stack.url, "SHAREVAL_TOKEN": token}
        stack.cli("submit", "-c", "splits", "-p", "dev", "-t", slug, "--wait",
                  runs[slug][1]["Team B"], extra_env=env)
    shot(alice, tmp_path, "split-1-run-page-public-part.png")
    assert "public" in alice.inner_text("body").lower()

    expected = {}
    for slug in ("trec", "detect"):
        task = get(TASKS[slug])
        ref, files = runs[slug]
        for team, path in files.items():
            pub, priv = score_parts(task, str(ref), str(path), split_of(slug, root), {})
            expected[(slug, team)] = (f"{pub['metrics'][task.primary_metric]:.4f}",
                                      f"{priv['metrics'][task.primary_metric]:.4f}")
    anon = browser.new_context().new_page()
    for slug in ("trec", "detect"):
        note, shown = board_values(anon, stack.url, slug)
        assert "public part" in note
        assert shown == {t: expected[(slug, t)][0] for t in ("Team A", "Team B")}, shown
    shot(anon, tmp_path, "split-2-board-public.png")

    org = login(browser, stack, "org")
    org.goto(stack.url + "/c/splits/organize/")
    assert "split datasets: a release shows the private part" in org.inner_text("body")
    org.click("#release-dev-top")
    org.wait_for_selector("#release-dev-current")
    for slug in ("trec", "detect"):
        note, shown = board_values(anon, stack.url, slug)
        assert "private part" in note
        assert shown == {t: expected[(slug, t)][1] for t in ("Team A", "Team B")}, shown
    shot(anon, tmp_path, "split-3-board-private-after-release.png")
