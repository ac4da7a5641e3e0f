"""Records (issue 24): overview-paper tables from fact sheets, bulk downloads with a
manifest, and the competition archive that loads into another server with
identical leaderboards."""
from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from django.conf import settings

from shareval.platform.bundles.archive import export_competition, import_competition
from shareval.platform.competitions.models import Competition
from shareval.platform.submissions import queue, runs, service
from shareval.platform.submissions.models import Submission

from ..factories import Upload, make_world, run_with_accuracy

SHEET = {"required": ["method"], "fields": [{"name": "gpu_hours", "type": "number"}]}
BOARD = {"runs": "all", "columns": [{"metric": "f1_macro", "precision": 3}]}


def up(w, user, team, ds, correct, **kw):
    return service.submit(w["users"][user], w["teams"][team], w["ds"][ds],
                          Upload(f"{user}_{correct}.tsv", run_with_accuracy(correct)), **kw)


@pytest.fixture
def rec(db, tmp_path):
    w = make_world(tmp_path, extra={"factsheet": SHEET},
                   options={"dev": {"board": BOARD}})
    runs_ = {"a1": up(w, "alice", "Team A", "dev", 17, primary=True,
                      factsheet={"method": "Big_Model & co", "gpu_hours": 12,
                                 "paper": "https://example.org/a"}),
             "a2": up(w, "alice", "Team A", "dev", 12, factsheet={"method": "small"}),
             "b1": up(w, "bob", "Team B", "dev", 14, primary=True,
                      factsheet={"method": "rules", "training": "constrained"}),
             "e1": up(w, "bob", "Team B", "eval", 13, factsheet={"method": "rules"})}
    queue.drain()
    return {**w, "runs": runs_}


def test_overview_table_csv_and_latex(rec, client):
    client.force_login(rec["org"])
    r = client.get("/c/tiny/organize/runs.csv?phase=dev")
    rows = list(csv.DictReader(io.StringIO(r.content.decode())))
    assert [(x["team"], x["run"], x["method"]) for x in rows] == [
        ("Team A", "primary", "Big_Model & co"), ("Team B", "primary", "rules"),
        ("Team A", "contrastive", "small"), ("Baseline", "primary", "")]   # best first
    assert rows[0]["gpu_hours"] == "12.0" and rows[0]["paper"] == "https://example.org/a"
    f1 = rec["runs"]["a1"].current_score.result["metrics"]["f1_macro"]
    assert rows[0]["f1_macro"] == str(round(f1, 3))
    assert list(rows[0])[-1] == "f1_macro"          # only the board's columns
    primary = client.get("/c/tiny/organize/runs.csv?runs=primary&team=Team+B").content.decode()
    assert [x["method"] for x in csv.DictReader(io.StringIO(primary))] == ["rules"]  # not e1
    tex = client.get("/c/tiny/organize/runs.tex?phase=dev").content.decode()
    assert r"\begin{tabular}{lllllr}" in tex and r"Big\_Model \& co" in tex
    assert f"{round(f1, 3)}".rstrip("0") in tex and tex.count(r"\\") == 5   # header + 4 runs
    client.force_login(rec["users"]["alice"])
    assert client.get("/c/tiny/organize/runs.csv").status_code == 404


def test_disqualified_runs_are_left_out_of_the_overview_table(rec, client):
    runs.disqualify(rec["runs"]["a2"], rec["org"], "duplicate")
    client.force_login(rec["org"])
    text = client.get("/c/tiny/organize/runs.csv").content.decode()
    assert "small" not in text and "Big_Model" in text


def test_bulk_download_zip_with_manifest(rec, client):
    client.force_login(rec["org"])
    r = client.get("/c/tiny/organize/submissions.zip?phase=dev")
    z = zipfile.ZipFile(io.BytesIO(b"".join(r.streaming_content)))
    manifest = json.loads(z.read("manifest.json"))
    by_id = {e["submission"]: e for e in manifest["runs"]}
    assert set(by_id) == {str(s.pk) for k, s in rec["runs"].items() if k != "e1"} | {
        str(rec["baselines"][0].pk)}
    for sid, e in by_id.items():
        data = z.read(e["path"])
        assert hashlib.sha256(data).hexdigest() == e["sha256"] and len(data) == e["size"]
        assert data == Submission.objects.get(pk=sid).path.read_bytes()
    assert by_id[str(rec["runs"]["a1"].pk)]["method"] == "Big_Model & co"
    rows = list(csv.DictReader(io.StringIO(z.read("manifest.csv").decode())))
    assert len(rows) == len(by_id)
    r = client.get("/c/tiny/organize/submissions.zip?runs=primary&team=Team+B")
    z = zipfile.ZipFile(io.BytesIO(b"".join(r.streaming_content)))
    got = json.loads(z.read("manifest.json"))["runs"]
    assert [e["submission"] for e in got] == [str(rec["runs"]["b1"].pk)]
    client.force_login(rec["users"]["bob"])
    assert client.get("/c/tiny/organize/submissions.zip").status_code == 404


def boards(client, comp_slug, who=None) -> dict:
    out = {}
    for ph in ("dev", "eval"):
        r = client.get(f"/api/competitions/{comp_slug}/leaderboard/{ph}/{ph}/")
        out[ph] = r.json()
    return out


def test_export_then_import_into_a_fresh_database_gives_identical_boards(rec, client, tmp_path):
    from shareval.platform.judging.build import build_from_runs
    from shareval.platform.judging.models import Campaign
    w = rec
    runs.annotate(w["runs"]["a2"], w["org"], "checked")
    runs.disqualify(w["runs"]["b1"], w["org"], "late")
    camp = Campaign.objects.create(dataset=w["ds"]["eval"], slug="j", title="J",
                                   design=Campaign.CHAIN, judges_per_item=1)
    camp.judges.set([w["users"]["dave"]])
    build_from_runs(camp, n=4)
    views = {}
    for who in (None, "alice", "org"):
        client.logout()
        if who:
            client.force_login(w["org"] if who == "org" else w["users"][who])
        views[who] = (boards(client, "tiny"),
                      client.get(f"/api/submissions/{w['runs']['a2'].pk}/").json()
                      if who else None)
    archive = tmp_path / "tiny.tgz"
    n = export_competition(w["comp"], archive)
    assert n >= 7           # 2 references, 1 released file, 6 uploads (with the baseline)
    items = camp.items.count()
    # a fresh server: no competition, no users, no files
    Competition.objects.all().delete()
    from django.contrib.auth import get_user_model
    get_user_model().objects.all().delete()
    for d in ("UPLOAD_DIR", "PRIVATE_DIR", "PUBLIC_DIR", "RESULTS_DIR"):
        shutil.rmtree(getattr(settings, d), ignore_errors=True)
    comp, created = import_competition(archive)
    assert sorted(created) == ["alice", "bob", "carol", "dave", "org"]
    U = get_user_model()
    for who in (None, "alice", "org"):
        client.logout()
        if who:
            client.force_login(U.objects.get(username=who))
        got = (boards(client, "tiny"),
               client.get(f"/api/submissions/{w['runs']['a2'].pk}/").json() if who else None)
        assert got == views[who], who
    assert Campaign.objects.get(slug="j").items.count() == items
    sub = Submission.objects.get(pk=w["runs"]["a1"].pk)
    assert sub.path.is_file() and sub.factsheet["method"] == "Big_Model & co"
    assert Path(settings.PRIVATE_DIR, comp.phases.get(slug="dev").datasets.get().reference_path
                ).is_file()
    # the imported server goes on working: a new run is validated and scored there
    bob = U.objects.get(username="bob")
    bob.set_password("x")
    bob.save()
    new = service.submit(bob, comp.teams.get(name="Team B"),
                         comp.phases.get(slug="dev").datasets.get(),
                         Upload("n.tsv", run_with_accuracy(20)), factsheet={"method": "m"})
    assert queue.drain() == 1
    new.refresh_from_db()
    assert new.state == "scored"
    with pytest.raises(Exception, match="already has a competition 'tiny'"):
        import_competition(archive)


def test_an_archive_cannot_point_the_server_outside_its_folders(rec, tmp_path):
    import tarfile
    archive = tmp_path / "x.tgz"
    export_competition(rec["comp"], archive)
    with tarfile.open(archive) as t:
        doc = json.load(t.extractfile("competition.json"))
    Competition.objects.all().delete()
    for key, bad in (("reference_path", "../../etc/passwd"), ("stored_name", "../x")):
        d = json.loads(json.dumps(doc))
        if key == "reference_path":
            d["phases"][0]["datasets"][0]["reference_path"] = bad
        else:
            d["submissions"][0]["stored_name"] = bad
        data = json.dumps(d).encode()
        forged = tmp_path / f"{key}.tgz"
        with tarfile.open(forged, "w:gz") as t:
            info = tarfile.TarInfo("competition.json")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
        with pytest.raises(Exception, match="outside this competition's own private folder|not a plain file name"):
            import_competition(forged)
        assert not Competition.objects.exists()
