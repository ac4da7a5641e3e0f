"""The annotation workbench end to end in chromium on shared RCC data (issue 39): the
demo's project (platform/demo_workbench: three publications citing NHANES years, nine
publication–data set pairs, the RCC linker's suggestions; the demo has both annotators'
work on the first publication already) coded by two annotators from
*Your work*; one codes a family member by selecting it; agreement appears on the
organizer's page; the organizer curates a disagreement; the gold, exported as an RCC
folder, scores 1.0 against itself with ``shareval score rcc-mentions`` and becomes a
new dataset's reference in one step; an XMI export imported back gives identical
annotations. Screenshots go to $SHAREVAL_SCREENS (default /tmp/i39-shots)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import expect

from shareval.formats.errors import Problems
from shareval.formats.standoff import annotation_key
from shareval.formats.xmi import read_xmi

from . import test_browser
from ..conftest import SHARED_DATA
from .factories import live_stack, make_bundle
from .test_browser_workbench_unit import Page, shots

pytestmark = [*test_browser.pytestmark, pytest.mark.realdata]
ROOT = Path(__file__).resolve().parents[2]
BUILD = """
from pathlib import Path
from shareval.platform import setup
setup()
from shareval.platform.server import migrate
migrate()
from django.contrib.auth import get_user_model
from shareval.platform.competitions.models import Competition, CompetitionTask
from shareval.platform.demo_workbench.build import build_projects
U = get_user_model()
comp = Competition.objects.get(slug="tiny")
users = {"organizer": U.objects.get(username="org"), "annotator": U.objects.get(username="ann1"),
         "judge": U.objects.get(username="ann2")}
build_projects(comp, Path(%r), users)
CompetitionTask.objects.create(competition=comp, slug="mentions", task_name="rcc-mentions")
"""
GOOD = ("National", "NHANES", "Nutrition")      # what ann2 accepts of the suggestions


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    if not (SHARED_DATA / "rcc" / "train" / "texts").is_dir():
        pytest.skip(f"the RCC texts are not in {SHARED_DATA} (set SHAREVAL_SHARED_DATA)")
    tmp = tmp_path_factory.mktemp("wbwalk")
    s = live_stack(tmp, users=("org", "ann1", "ann2"), bundle=make_bundle)
    env = dict(s.env, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]))
    subprocess.run([sys.executable, "-c", BUILD % str(SHARED_DATA)], env=env, cwd=ROOT,
                   check=True, timeout=600)
    s.start()
    yield s
    s.stop()


def suggestion_text(st, s):
    b = st["unit"]["page_begin"]
    return st["unit"]["text"][s["begin"] - b:s["end"] - b]


def code_all(ann: Page, picky: bool) -> dict:
    """Code every unit from the first: decide each suggestion (``picky``: reject those
    without a survey name), select the second "NHANES" of publication 1497 by hand,
    answer "uses the data set", mark done, next unit. Returns notes seen per unit."""
    p, notes = ann.p, {}
    p.click("#work-link")
    p.click("a.open-work >> text=Start")        # the project, from the work list
    p.click("a.open-unit >> nth=0")
    for _ in range(9):
        p.wait_for_selector("#wb-text.r6o-annotatable")
        st = ann.state()
        key = st["unit"]["key"]
        notes[key] = [a["note"] for a in st["annotations"] if a["note"]]
        for s in st["suggestions"]:
            if s["verdict"] is None:
                good = not picky or any(w in suggestion_text(st, s) for w in GOOD)
                ann.saved(ann.press("a" if good else "r"))
        if key == "1497|483":
            v = ann.version()
            ann.select("NHANES", nth=1)
            ann.saved(v)
            p.keyboard.press("Escape")
        if not any(a["kind"] == "answer" and a["value"] == "yes" for a in ann.state()["annotations"]):
            ann.saved(ann.press("y"))           # the demo coded publication 1853 already
        ann.saved(ann.press("d"))
        assert ann.state()["status"] == "done"
        if st["nav"]["next"]:
            ann.press("n")
            p.wait_for_url(f"**{st['nav']['next']}")
    ann.no_csp_violation()
    return notes


def test_two_annotators_agreement_curation_export_dataset_and_xmi(browser, world, tmp_path):
    ann1 = Page(browser, world, "ann1")
    notes = code_all(ann1, picky=False)
    # the family member: the hand-made span of 1497|483 is coded for 1497|484 too
    assert any("coded for family member" in n for n in notes["1497|484"]), notes
    ann1.p.goto(world.url + "/c/tiny/workbench/rcc-gold/")
    ann1.p.screenshot(path=str(shots() / "walk-annotator-list.png"), full_page=True)
    assert "Your units: 9 of 9 done" in ann1.p.inner_text("#my-units")
    ann2 = Page(browser, world, "ann2")
    code_all(ann2, picky=True)
    ann2.p.goto(world.url + "/c/tiny/workbench/rcc-gold/u/" +
                str(ann2.state()["unit"]["id"]) + "/")

    org = Page(browser, world, "org")
    p = org.p
    p.goto(world.url + "/c/tiny/workbench/rcc-gold/")
    body = p.inner_text("body")
    assert "Cohen" in body and "Krippendorff" in body and "MASI" in body
    p.screenshot(path=str(shots() / "walk-agreement.png"), full_page=True)
    gold_before = p.inner_text("#gold")

    # the organizer curates the first disagreement: takes what both annotators have
    p.click("#agreement a[href*='curate'] >> nth=0")
    p.wait_for_selector("#cur-grid")
    takes = p.locator("#cur-grid .cur-col >> nth=1").locator("button", has_text="Take")
    for _ in range(takes.count()):          # a taken row loses its button
        v = org.version()
        takes.first.click()
        org.saved(v)
    v = org.version()
    p.keyboard.press("d")
    org.saved(v)
    p.screenshot(path=str(shots() / "walk-curated.png"), full_page=True)
    p.goto(world.url + "/c/tiny/workbench/rcc-gold/")
    assert p.inner_text("#gold") != gold_before

    # the gold as an RCC folder scores 1.0 against itself
    with p.expect_download() as dl:
        p.click("#exports a[href$='/export/rcc/']")
    folder = tmp_path / "gold"
    zipfile.ZipFile(dl.value.path()).extractall(folder)
    out = subprocess.run([sys.executable, "-m", "shareval.cli", "score", "rcc-mentions", "-r",
                          str(folder), str(folder / "data_set_mentions.json"), "--format",
                          "json"], capture_output=True, text=True, cwd=ROOT, timeout=300,
                         env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    m = json.loads(out.stdout)["metrics"]
    assert m["exact_f1"] == 1.0 and m["partial_f1"] == 1.0, out.stderr
    assert m["exact_tp"] > 0 if "exact_tp" in m else True

    # ... and is a new dataset's reference in one step
    p.select_option("#dataset-form select[name=phase]", "dev")
    p.select_option("#dataset-form select[name=task]", "mentions")
    p.fill("#dataset-form input[name=slug]", "gold-mentions")
    p.click("#dataset-form button")
    expect(p.locator("body")).to_contain_text("dataset dev/gold-mentions made from the gold of")
    ref = next(Path(world.home).rglob("rcc-gold/dev/gold-mentions")) / "reference"
    assert json.loads((ref / "data_set_citations.json").read_text()) == \
        json.loads((folder / "data_set_citations.json").read_text())

    # INCEpTION round trip: export XMI, import it as org's annotations, export org's
    with p.expect_download() as dl:
        p.click("#exports a[href$='/export/xmi/']")
    xmi = tmp_path / "gold-xmi.zip"
    dl.value.save_as(xmi)
    p.set_input_files("#import-form input[type=file]", str(xmi))
    p.select_option("#import-form select[name=format]", "xmi")
    p.click("#import-form button")
    expect(p.locator("body")).to_contain_text("imported")
    with p.expect_download() as dl:
        p.evaluate("location.href = '/c/tiny/workbench/rcc-gold/export/xmi/?who=org'")
    back = tmp_path / "org-xmi.zip"
    dl.value.save_as(back)
    first, again = read_xmi(xmi, Problems()), read_xmi(back, Problems())
    key = lambda docs: {d.id: annotation_key(d) for d in docs}   # noqa: E731
    ids = set(key(first))
    assert ids and {k: v for k, v in key(again).items() if k in ids} == key(first)
    org.no_csp_violation()
