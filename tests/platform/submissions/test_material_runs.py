"""MATERIAL on the server: a board with several runs per team names each run (its
canonical archive name, or the team's system label) and links it for those who
may open it, with the primary run marked; and an upload's archive name is
checked exactly as ``shareval validate`` checks it (one validation path)."""
from __future__ import annotations

import io
import json
import re
import tarfile
from pathlib import Path

import pytest

from shareval.cli import main as cli_main
from shareval.platform.submissions import queue, service

from ..factories import Upload
from ..test_webui import material_bundle, text_of as raw_text

CANONICAL = "NIST_CLIR-primary-unconstrained-QUERY2-sysA_EVAL1-{lang}-EVAL_20181113_225652.tgz"
NAMES = [CANONICAL.format(lang="1A"), "sysB.tgz", "my-run.tgz"]


def text_of(html: str) -> str:
    return " ".join(raw_text(html).split())


def archive(root: Path, drop: int = 0) -> bytes:
    """The sample CLIR run as a .tgz; ``drop`` turns that many Y decisions into N."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for f in sorted((root / "material-clir").iterdir()):
            lines = f.read_text().splitlines(keepends=True)
            out = []
            for line in lines:
                doc, dec, conf = line.rstrip("\n").split("\t")
                if dec == "Y" and drop:
                    dec, drop = "N", drop - 1
                out.append(f"{doc}\t{dec}\t{conf}\n")
            data = "".join(out).encode()
            info = tarfile.TarInfo(f.name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture
def material(db, tmp_path):
    from django.contrib.auth import get_user_model

    from shareval.platform.bundles.loader import load_bundle
    from shareval.platform.competitions.models import Membership, Team
    root = material_bundle(tmp_path / "bundle")
    User = get_user_model()
    org = User.objects.create_user("organizer", password="x-pass-123", is_staff=True)
    comp, _ = load_bundle(root, org)
    ds = comp.phases.get().datasets.get()
    ds.board = {"runs": "all"}
    ds.save()
    users, teams = {}, {}
    for name, user in (("NIST", "alice"), ("Other", "bob")):
        users[user] = User.objects.create_user(user, password="x-pass-123")
        teams[name] = Team.objects.create(competition=comp, name=name, lead=users[user])
        Membership.objects.create(team=teams[name], user=users[user],
                                  status=Membership.APPROVED)
    return {"root": root, "ds": ds, "org": org, "users": users, "teams": teams}


def submit(m, user, team, name, drop=0, primary=None):
    """``primary``: the uploader's choice (None: none, a canonical name decides)."""
    return service.submit(m["users"][user], m["teams"][team], m["ds"],
                          Upload(name, archive(m["root"], drop)), primary=primary)


URL = "/c/mat/leaderboard/dev/clir-1a/"
API = "/api/competitions/mat/leaderboard/dev/clir-1a/"


def test_each_run_has_its_own_name_a_link_for_those_who_may_open_it_and_the_primary_marked(
        material, client):
    m = material
    runs = [submit(m, "alice", "NIST", n, drop=k, primary=True if k == 1 else None)
            for k, n in enumerate(NAMES)]
    other = submit(m, "bob", "Other", "theirs.tgz")
    assert queue.drain() == 5                   # and the bundle's baseline
    rows = [r for r in client.get(API).json()["rows"] if r["team"] == "NIST"]
    assert sorted(r["run_name"] for r in rows) == ["", "sysA", "sysB"]
    assert {r["run_file"] for r in rows} == {NAMES[0], ""}        # the canonical name whole
    assert [r["run"] for r in rows if r["run_name"] == "sysB"] == ["primary"]
    assert all("id" not in r for r in client.get(API).json()["rows"])      # visitors
    page = client.get(URL).content.decode()
    assert 'class="run-name" href=' not in page and str(runs[0].pk) not in page
    nist = [t for t in page.split("<tr ") if 'data-team="NIST"' in t]
    cells = [text_of(t.split('<td class="run">')[1].split("</td>")[0]) for t in nist]
    assert any(c.startswith("sysA") and c.endswith(NAMES[0]) for c in cells)
    assert any(c.startswith("sysB primary") for c in cells)         # the primary is marked
    assert any(c.startswith("Contrastive run") for c in cells)      # a free name stays private
    assert "my-run" not in page
    # the team opens its own runs from the board, not the other team's
    client.force_login(m["users"]["alice"])
    page = client.get(URL).content.decode()
    for run in runs:
        assert f'href="/s/{run.pk}/"' in page
    assert str(other.pk) not in page
    api = client.get(API).json()["rows"]
    assert {r["id"] for r in api if r["team"] == "NIST"} == {str(r.pk) for r in runs}
    assert all("id" not in r for r in api if r["team"] == "Other")
    client.force_login(m["org"])
    page = client.get(URL).content.decode()
    assert all(f'href="/s/{r.pk}/"' in page for r in runs + [other])


@pytest.mark.parametrize("name, message", [
    (CANONICAL.format(lang="1B"), "archive name: says language 1B, the pack is 1A"),
    ("NIST_DomainID-primary-unconstrained-GOV-MIL-sysA_EVAL1-1A-EVAL_20181113_225652.tgz",
     "archive name: says task DomainID, but this is material-clir"),
])
def test_an_upload_and_the_command_line_refuse_a_misnamed_archive_alike(
        material, tmp_path, capsys, monkeypatch, name, message):
    m = material
    with pytest.raises(service.SubmissionError) as e:
        submit(m, "alice", "NIST", name)
    assert e.value.status == 400
    assert f"{name}: {message}" in e.value.problems
    run = tmp_path / "cli"
    run.mkdir()
    (run / name).write_bytes(archive(m["root"]))
    monkeypatch.chdir(run)
    code = cli_main(["validate", "material-clir", "-r", str(m["root"] / "material-pack"),
                     "-s", name])
    err = capsys.readouterr()
    assert code == 2
    assert f"{name}: {message}" in (err.out + err.err).splitlines()


def test_a_well_named_archive_passes_both(material, tmp_path, capsys, monkeypatch):
    m = material
    submit(m, "alice", "NIST", NAMES[0])
    run = tmp_path / "cli"
    run.mkdir()
    (run / NAMES[0]).write_bytes(archive(m["root"]))
    monkeypatch.chdir(run)
    assert cli_main(["validate", "material-clir", "-r", str(m["root"] / "material-pack"),
                     "-s", NAMES[0]]) == 0
