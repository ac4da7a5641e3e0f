"""``shareval server workbench``: create, assign, curator, export, import, dataset."""
from __future__ import annotations

import argparse
import io
import json

import pytest
from rich.console import Console

from shareval.platform.competitions.models import CompetitionTask
from shareval.platform.workbench import cli, service
from shareval.platform.workbench.models import Assignment


@pytest.fixture
def world(people):
    w, tmp_path = people, people["tmp"]
    texts = tmp_path / "texts"
    texts.mkdir()
    (texts / "11.json").write_text(json.dumps({"abstract": "", "reduced_content":
                                               "We use ALLBUS 2010 and ALLBUS 2012 data."}))
    (tmp_path / "catalog.json").write_text(json.dumps({"7": "ALLBUS 2010", "8": "ALLBUS 2012"}))
    (tmp_path / "cites.json").write_text(json.dumps([
        {"publication_id": 11, "data_set_id": 7}, {"publication_id": 11, "data_set_id": 8}]))
    return w


def run(*argv):
    parser = argparse.ArgumentParser()
    cli.add_parser(parser.add_subparsers(dest="c"))
    out = io.StringIO()
    code = cli.run(parser.parse_args(["workbench", *map(str, argv)]), Console(file=out, width=200))
    return code, out.getvalue()


def test_the_whole_cycle_on_the_command_line(world):
    t = world["tmp"]
    code, out = run("create", "tiny", "gold", "--kind", "rcc-pairs", "--organizer", "org",
                    "--texts", t / "texts", "--publications", "11", "--catalog",
                    t / "catalog.json", "--citations", t / "cites.json", "--no-suggestions",
                    "--per-unit", "2")
    assert code == 0, out
    assert "project tiny/gold: 2 units, 0 suggestions, 2 entries in 1 families" in out
    assert "/c/tiny/workbench/gold/" in out
    code, out = run("assign", "tiny", "gold", "ann1", "ann2", "--calibration", "2")
    assert code == 0 and "4 assignments on 2 units (2 shared for calibration)" in out
    pr = world["comp"].workbench_projects.get(slug="gold")
    for a in Assignment.objects.filter(unit__project=pr):
        b = a.unit.text.index("ALLBUS 2010")
        a.refresh_from_db()
        service.apply_ops(a, a.user, a.version, [
            {"op": "add", "kind": "span", "begin": b, "end": b + 11, "target": "7"},
            {"op": "status", "value": "done"}])
    code, out = run("curator", "tiny", "gold", "org")
    assert code == 0 and "org curates 2 more units" in out
    code, out = run("export", "tiny", "gold", "rcc", "--out", t / "out")
    assert code == 0 and "rcc-gold" not in out and "(2 units)" in out
    cites = json.loads((t / "out" / "gold-rcc" / "data_set_citations.json").read_text())
    assert {c["data_set_id"] for c in cites} == {7, 8}        # 8 by the family copy
    code, out = run("export", "tiny", "gold", "webanno", "--out", t / "out", "--who", "ann1")
    assert code == 0 and (t / "out" / "gold-webanno.zip").is_file()
    code, out = run("import", "tiny", "gold", "webanno", t / "out" / "gold-webanno.zip",
                    "--as", "org")
    assert code == 0 and "imported 2 units as org's annotations" in out
    CompetitionTask.objects.create(competition=world["comp"], slug="m", task_name="rcc-mentions")
    code, out = run("dataset", "tiny", "gold", "dev", "gold", "--organizer", "org")
    assert code == 0 and "dataset dev/gold (rcc-mentions): the gold of 2 units" in out, out


@pytest.mark.parametrize("argv,message", [
    (("create", "nope", "x", "--kind", "svident", "--organizer", "org", "--sentences", "s"),
     "no competition nope"),
    (("create", "tiny", "x", "--kind", "svident", "--organizer", "ann1", "--sentences", "s"),
     "ann1 is not an organizer of tiny"),
    (("create", "tiny", "x", "--kind", "rcc-pairs", "--organizer", "org"),
     "--kind rcc-pairs needs --texts, --publications, --catalog"),
    (("create", "tiny", "x", "--kind", "svident", "--organizer", "org", "--sentences",
      "/nonexistent.tsv"), "workbench create: [Errno 2]"),
    (("assign", "tiny", "nope", "ann1"), "no annotation project tiny/nope"),
    (("import", "tiny", "gold", "xmi", "/nonexistent.zip", "--as", "org"),
     "/nonexistent.zip"),
])
def test_refusals_name_what_is_wrong(world, argv, message):
    service.create_project(world["comp"], "gold", "Gold", "text", world["org"])
    code, out = run(*argv)
    assert code == 1 and message in out, out
    assert not world["comp"].workbench_projects.filter(slug="x").exists()
