"""A canonical MATERIAL archive name (plan 8.2.1.2) sets the run's kind by its
SubmissionType; an uploader's explicit choice of the other kind (service, web
form, API, ``shareval submit --contrastive``) is refused naming both, and
nothing is stored."""
from __future__ import annotations

import pytest

from shareval.platform.submissions import service
from shareval.platform.submissions.models import Submission

from ..factories import Upload
from .test_material_runs import CANONICAL, archive, material, submit  # noqa: F401 -- fixture

PRIMARY = CANONICAL.format(lang="1A")
CONTRASTIVE = PRIMARY.replace("-primary-", "-contrastive-")


def test_the_name_sets_the_kind_when_the_uploader_chose_none(material):      # noqa: F811
    assert submit(material, "alice", "NIST", PRIMARY).kind == Submission.PRIMARY
    assert submit(material, "alice", "NIST", CONTRASTIVE).kind == Submission.CONTRASTIVE
    assert submit(material, "alice", "NIST", "sysB.tgz").kind == Submission.CONTRASTIVE
    # an agreeing choice is fine
    assert submit(material, "alice", "NIST", PRIMARY, primary=True).kind == Submission.PRIMARY
    assert submit(material, "alice", "NIST", CONTRASTIVE, primary=False).kind == \
        Submission.CONTRASTIVE


@pytest.mark.parametrize("name, chose, says", [(PRIMARY, False, "primary"),
                                               (CONTRASTIVE, True, "contrastive")])
def test_a_choice_contradicting_the_name_is_refused_and_nothing_stored(
        material, name, chose, says):                                         # noqa: F811
    before = Submission.objects.count()
    with pytest.raises(service.SubmissionError) as e:
        submit(material, "alice", "NIST", name, primary=chose)
    other = "contrastive" if chose is False else "primary"
    assert e.value.status == 400
    assert e.value.message.startswith(f"{name}: the file name says {says} but the upload was "
                                       f"marked {other}")
    assert Submission.objects.count() == before


def test_the_form_and_the_api_refuse_the_contradiction_alike(material, client):  # noqa: F811
    m = material
    client.force_login(m["users"]["alice"])
    body = {"dataset": m["ds"].pk, "contrastive": "on",
            "file": Upload(PRIMARY, archive(m["root"])).as_file()}
    page = client.post("/c/mat/submit/", body)
    said = "the file name says primary but the upload was marked contrastive"
    assert page.status_code == 200 and said in page.content.decode()
    api = client.post("/api/submissions/", {
        "competition": "mat", "phase": "dev", "task": m["ds"].slug, "kind": "contrastive",
        "file": Upload(PRIMARY, archive(m["root"])).as_file()})
    assert api.status_code == 400 and said in api.json()["error"]
    assert not Submission.objects.filter(team=m["teams"]["NIST"]).exists()
    # older clients send primary=false when no choice was made: the name decides
    api = client.post("/api/submissions/", {
        "competition": "mat", "phase": "dev", "task": m["ds"].slug, "primary": "false",
        "file": Upload(PRIMARY, archive(m["root"])).as_file()})
    assert api.status_code == 201 and api.json()["kind"] == "primary"


@pytest.mark.parametrize("flags, sent", [([], {"primary": "false"}),
                                         (["--contrastive"], {"primary": "false",
                                                              "kind": "contrastive"}),
                                         (["--primary"], {"primary": "true"})])
def test_shareval_submit_sends_the_choice_only_when_one_was_made(tmp_path, monkeypatch,
                                                                 flags, sent):
    from shareval import client
    from shareval.cli import main as cli_main
    seen = {}

    def fake_upload(server, path, token, body, ctype, timeout):
        boundary = ctype.split("boundary=")[1]
        for part in body.split(f"--{boundary}".encode()):
            head, _, value = part.partition(b"\r\n\r\n")
            if b'name="' in head and b"filename" not in head:
                seen[head.split(b'name="')[1].split(b'"')[0].decode()] = \
                    value.removesuffix(b"\r\n").decode()
        return 201, {"id": "x", "state": "validated", "kind": "primary"}
    monkeypatch.setattr(client, "upload", fake_upload)
    run = tmp_path / PRIMARY
    run.write_bytes(b"x")
    cli_main(["submit", str(run), "-c", "mat", "-p", "dev", "-t", "clir-1a", "--token", "t",
              *flags])
    assert {k: seen.get(k) for k in sent} == sent
    assert ("kind" in seen) == ("kind" in sent)


def test_the_names_training_condition_fills_the_sheet_and_a_contradiction_is_refused(
        material):                                                            # noqa: F811
    run = submit(material, "alice", "NIST", CONTRASTIVE)
    assert run.factsheet["training"] == "unconstrained"
    before = Submission.objects.count()
    with pytest.raises(service.SubmissionError) as e:
        service.submit(material["users"]["alice"], material["teams"]["NIST"], material["ds"],
                       Upload(CONTRASTIVE, archive(material["root"])),
                       factsheet={"training": "constrained"})
    assert e.value.message == (f"{CONTRASTIVE}: the file name says training condition "
                               f"unconstrained but the fact sheet says constrained: rename "
                               f"the file or change the sheet")
    assert Submission.objects.count() == before
    web = submit(material, "alice", "NIST", "sysB.tgz")      # no canonical name: nothing set
    assert "training" not in web.factsheet


def test_a_run_named_contrastive_cannot_be_made_primary_by_its_team(material):  # noqa: F811
    run = submit(material, "alice", "NIST", CONTRASTIVE)
    with pytest.raises(service.SubmissionError) as e:
        service.make_primary(run, material["users"]["alice"])
    assert e.value.message == (f"{CONTRASTIVE}: the file name says contrastive: a primary run "
                               f"is uploaded under a name that says primary")
    run.refresh_from_db()
    assert run.kind == Submission.CONTRASTIVE
    # the organizers may still correct the record; their action is in the run's history
    service.make_primary(run, material["org"], reason="the team's e-mail of 14 May")
    run.refresh_from_db()
    assert run.kind == Submission.PRIMARY
    assert "the team's e-mail of 14 May" in run.events.last().message


def test_a_sheet_correction_cannot_contradict_the_names_training_condition(
        material):                                                            # noqa: F811
    """The run page's correction form and the API's factsheet action go through
    runs.edit_factsheet: the name's condition holds there too (i37 security review)."""
    from shareval.platform.submissions import runs
    run = submit(material, "alice", "NIST", CONTRASTIVE)
    alice = material["users"]["alice"]
    with pytest.raises(service.SubmissionError) as e:
        runs.edit_factsheet(run, alice, {**run.factsheet, "training": "constrained"})
    assert "the file name says training condition unconstrained" in e.value.message
    runs.edit_factsheet(run, alice, {k: v for k, v in run.factsheet.items()
                                     if k != "training"})       # left out: the name fills it
    run.refresh_from_db()
    assert run.factsheet["training"] == "unconstrained"
