"""Runs (issue 24): fact sheets through service, API and web form; the concurrent-run
limit; organizer actions on one run and their append-only history; runs a team
takes off the board."""
from __future__ import annotations

import json

import pytest

from shareval.platform.leaderboards import rows as leaderboard
from shareval.platform.submissions import queue, runs, service
from shareval.platform.submissions.models import Job, Score, SubmissionEvent

from ..factories import Upload, make_world, run_with_accuracy

SHEET = {"required": ["method", "training"], "training": ["constrained", "unconstrained"],
         "fields": [{"name": "ensemble", "type": "bool", "required": True},
                    {"name": "gpu_hours", "type": "number"},
                    {"name": "encoder", "type": "choice", "choices": ["none", "bert"]}]}
GOOD = {"method": "BiLSTM-CRF", "training": "constrained", "ensemble": "no",
        "gpu_hours": "2.5", "paper": "https://example.org/p.pdf", "encoder": "bert"}


@pytest.fixture
def rw(db, tmp_path):
    return make_world(tmp_path, extra={"factsheet": SHEET},
                      options={"dev": {"concurrent": 2, "board": {"team_visibility": True}}})


def up(w, user, team, ds, correct, **kw):
    return service.submit(w["users"][user], w["teams"][team], w["ds"][ds],
                          Upload(f"{user}-{correct}.tsv", run_with_accuracy(correct)), **kw)


def test_fact_sheet_is_validated_against_the_bundle_schema(rw):
    with pytest.raises(service.SubmissionError) as e:
        up(rw, "alice", "Team A", "dev", 12, factsheet={"method": "", "training": "weird",
                                                        "gpu_hours": "lots", "colour": "red",
                                                        "paper": "ftp://x"})
    text = "\n".join(e.value.problems)
    assert e.value.status == 400
    for expected in ("factsheet.method: required", "factsheet.training: one of constrained",
                     "factsheet.gpu_hours: a number", "factsheet.colour: not a field",
                     "factsheet.paper: an http(s) URL", "factsheet.ensemble: required"):
        assert expected in text, text
    assert not rw["teams"]["Team A"].submissions.exists()       # refused before storing
    sub = up(rw, "alice", "Team A", "dev", 12, factsheet=GOOD)
    assert sub.factsheet == {"method": "BiLSTM-CRF", "training": "constrained",
                             "paper": "https://example.org/p.pdf", "ensemble": False,
                             "gpu_hours": 2.5, "encoder": "bert"}


def test_bundle_refuses_a_bad_fact_sheet_schema(tmp_path):
    from shareval.formats.errors import InvalidInput
    from shareval.platform.bundles.loader import read_bundle

    from ..factories import make_bundle
    root = make_bundle(tmp_path / "b", extra={"factsheet": {
        "required": ["method", "shoe_size"],
        "fields": [{"name": "Bad Name"}, {"name": "x", "type": "colour"},
                   {"name": "c", "type": "choice"}]}})
    with pytest.raises(InvalidInput) as e:
        read_bundle(root)
    text = e.value.render()
    for expected in ("factsheet.required", "fields[0].name", "fields[1].type",
                     "fields[2].choices"):
        assert expected in text, text


def test_fact_sheet_through_the_api_and_the_web_form(rw, client):
    client.force_login(rw["users"]["bob"])
    r = client.post("/api/submissions/", {
        "competition": "tiny", "phase": "dev", "task": "labels", "method": "api-method",
        "factsheet": json.dumps({"training": "unconstrained", "ensemble": True}),
        "file": Upload("b.tsv", run_with_accuracy(11)).as_file()})
    assert r.status_code == 201, r.content
    assert r.json()["factsheet"]["method"] == "api-method"
    assert r.json()["factsheet"]["ensemble"] is True
    r = client.post("/api/submissions/", {"competition": "tiny", "phase": "dev", "task": "labels",
                                          "file": Upload("b.tsv", run_with_accuracy(11)).as_file()})
    assert r.status_code == 400 and any("factsheet.method" in p for p in r.json()["problems"])
    page = client.get("/c/tiny/submit/").content.decode()
    assert 'name="fs_method"' in page and 'name="fs_encoder"' in page
    r = client.post("/c/tiny/submit/", {"dataset": rw["ds"]["dev"].pk, "fs_method": "form-m",
                                        "fs_training": "constrained", "fs_ensemble": "true",
                                        "file": Upload("c.tsv", run_with_accuracy(9)).as_file()})
    assert r.status_code == 302, r.content.decode()[:2000]
    sub = rw["teams"]["Team B"].submissions.order_by("-created").first()
    assert sub.factsheet["method"] == "form-m" and sub.factsheet["ensemble"] is True
    page = client.get(f"/s/{sub.pk}/").content.decode()
    assert "form-m" in page and 'id="factsheet-view"' in page


def test_cli_reads_a_fact_sheet_file(tmp_path):
    from shareval.client import read_factsheet
    f = tmp_path / "sheet.yaml"
    f.write_text("method: from-file\ngpu_hours: 3\nensemble: true\n")
    assert read_factsheet(str(f), "from-flag") == {"method": "from-flag", "gpu_hours": 3,
                                                   "ensemble": True}
    f.write_text("- a list\n")
    with pytest.raises(ValueError, match="expected a mapping"):
        read_factsheet(str(f), None)


def test_concurrent_limit_counts_queued_and_running_runs(rw):
    a, b = up(rw, "alice", "Team A", "dev", 10, factsheet=GOOD), \
        up(rw, "alice", "Team A", "dev", 11, factsheet=GOOD)
    with pytest.raises(service.SubmissionError) as e:
        up(rw, "carol", "Team A", "dev", 12, factsheet=GOOD)
    assert e.value.status == 429
    assert "2 of team Team A's runs on dev/dev are still queued or being scored " \
           "(limit 2 at a time)" in e.value.message
    up(rw, "bob", "Team B", "dev", 12, factsheet=GOOD)       # other teams are not held up
    queue.drain()
    up(rw, "carol", "Team A", "dev", 12, factsheet=GOOD)
    assert {a.pk, b.pk} <= set(rw["teams"]["Team A"].submissions.values_list("pk", flat=True))


def test_concurrent_limit_is_a_clear_429_in_the_api(rw, client):
    client.force_login(rw["users"]["bob"])
    body = {"competition": "tiny", "phase": "dev", "task": "labels",
            "factsheet": json.dumps(GOOD)}
    for _ in range(2):
        assert client.post("/api/submissions/", dict(body, file=Upload(
            "b.tsv", run_with_accuracy(11)).as_file())).status_code == 201
    r = client.post("/api/submissions/", dict(body, file=Upload(
        "b.tsv", run_with_accuracy(11)).as_file()))
    assert r.status_code == 429 and "too many runs at once" in r.json()["error"]


def test_disqualify_reinstate_annotate_with_an_append_only_history(rw, client):
    w = rw
    sub = up(w, "alice", "Team A", "dev", 15, factsheet=GOOD)
    queue.drain()
    assert "Team A" in [r["team"] for r in leaderboard.rows(w["ds"]["dev"])[1]]
    with pytest.raises(service.SubmissionError):
        runs.disqualify(sub, w["users"]["alice"], "self")           # teams cannot
    with pytest.raises(service.SubmissionError):
        runs.disqualify(sub, w["org"], "  ")                        # a reason is required
    client.force_login(w["org"])
    r = client.post(f"/s/{sub.pk}/run/disqualify/", {"reason": "used the test labels"})
    assert r.status_code == 302
    sub.refresh_from_db()
    assert sub.disqualified == "used the test labels"
    assert "Team A" not in [r["team"] for r in leaderboard.rows(w["ds"]["dev"])[1]]
    client.post(f"/s/{sub.pk}/run/annotate/", {"note": "ORG-ONLY-NOTE"})
    client.post(f"/s/{sub.pk}/run/annotate/", {"note": "TEAM-NOTE", "team_sees": "1"})
    before = list(SubmissionEvent.objects.filter(submission=sub).values_list("pk", "message"))
    client.force_login(w["users"]["alice"])
    page = client.get(f"/s/{sub.pk}/").content.decode()
    api = client.get(f"/api/submissions/{sub.pk}/").json()
    assert "used the test labels" in page and api["disqualified"] == "used the test labels"
    assert "TEAM-NOTE" in page and "ORG-ONLY-NOTE" not in page
    assert "ORG-ONLY-NOTE" not in json.dumps(api)
    assert client.post(f"/api/submissions/{sub.pk}/run/reinstate/").status_code == 403
    client.force_login(w["org"])
    assert "ORG-ONLY-NOTE" in client.get(f"/s/{sub.pk}/").content.decode()
    r = client.post(f"/api/submissions/{sub.pk}/run/reinstate/", {"reason": "appeal upheld"},
                    content_type="application/json")
    assert r.status_code == 200 and r.json()["disqualified"] is None
    assert "Team A" in [r["team"] for r in leaderboard.rows(w["ds"]["dev"])[1]]
    after = list(SubmissionEvent.objects.filter(submission=sub).values_list("pk", "message"))
    assert after[:len(before)] == before and len(after) == len(before) + 1   # appended only
    states = [e["state"] for e in r.json()["events"]]
    assert states[-4:] == ["disqualified", "note", "note", "reinstated"]


def test_rescore_one_run_replaces_its_score_and_records_it(rw, client):
    w = rw
    sub = up(w, "alice", "Team A", "dev", 15, factsheet=GOOD)
    other = up(w, "bob", "Team B", "dev", 12, factsheet=GOOD)
    queue.drain()
    first = Score.objects.get(submission=sub)
    Score.objects.filter(pk=first.pk).update(primary=0.0123)        # a corrupted score
    client.force_login(w["org"])
    r = client.post(f"/api/submissions/{sub.pk}/run/rescore/")
    assert r.status_code == 200 and r.json()["state"] == "queued"
    assert client.post(f"/api/submissions/{sub.pk}/run/rescore/").status_code == 400
    queue.drain()
    sub.refresh_from_db()
    assert sub.state == "scored"
    new = Score.objects.get(submission=sub)
    assert new.pk != first.pk and new.primary == pytest.approx(first.result["metrics"]["f1_macro"])
    assert Job.objects.get(submission=sub).attempts == 1
    assert Score.objects.filter(submission=other).count() == 1       # only this run
    events = list(sub.events.values_list("state", "message", "log"))
    assert any("re-scoring requested by the organizers (org)" in m for _, m, _ in events)
    assert any("previous score" in log for *_, log in events)
    client.force_login(w["users"]["alice"])
    assert client.post(f"/api/submissions/{sub.pk}/run/rescore/").status_code == 403


def test_teams_take_runs_off_the_board_only_where_allowed(rw, client):
    w = rw
    a1 = up(w, "alice", "Team A", "dev", 17, factsheet=GOOD)
    a2 = up(w, "alice", "Team A", "dev", 11, factsheet=GOOD)
    e1 = up(w, "alice", "Team A", "eval", 11, factsheet=GOOD)
    queue.drain()
    row = {r["team"]: r for r in leaderboard.rows(w["ds"]["dev"])[1]}["Team A"]
    assert row["submitted"] == a1.created.isoformat() and row["runs"] == 2
    client.force_login(w["users"]["alice"])
    assert client.post(f"/api/submissions/{a1.pk}/run/hide/").status_code == 200
    row = {r["team"]: r for r in leaderboard.rows(w["ds"]["dev"])[1]}["Team A"]
    assert row["submitted"] == a2.created.isoformat() and row["runs"] == 1
    board = client.get("/api/competitions/tiny/leaderboard/dev/dev/").json()
    assert a1.created.isoformat() not in json.dumps(board)
    assert client.get(f"/api/submissions/{a1.pk}/").json()["on_board"] is False
    # eval's board does not let teams choose
    r = client.post(f"/api/submissions/{e1.pk}/run/hide/")
    assert r.status_code == 403 and "do not let teams choose" in r.json()["error"]
    client.force_login(w["users"]["bob"])                          # not bob's run
    assert client.post(f"/api/submissions/{a1.pk}/run/show/").status_code == 404
    client.force_login(w["users"]["alice"])
    assert client.post(f"/api/submissions/{a1.pk}/run/show/").status_code == 200
    assert {r["team"]: r for r in leaderboard.rows(w["ds"]["dev"])[1]}["Team A"]["runs"] == 2


def test_team_edits_its_fact_sheet_until_the_phase_is_frozen(rw, client):
    w = rw
    sub = up(w, "alice", "Team A", "dev", 15, factsheet=GOOD)
    client.force_login(w["users"]["alice"])
    r = client.post(f"/api/submissions/{sub.pk}/run/factsheet/",
                    {"factsheet": dict(GOOD, method="renamed")}, content_type="application/json")
    assert r.status_code == 200 and r.json()["factsheet"]["method"] == "renamed"
    r = client.post(f"/api/submissions/{sub.pk}/run/factsheet/",
                    {"factsheet": {"method": "x"}}, content_type="application/json")
    assert r.status_code == 400 and any("training" in p for p in r.json()["problems"])
    from django.utils import timezone
    w["ds"]["dev"].phase.__class__.objects.filter(pk=w["ds"]["dev"].phase_id).update(
        end=timezone.now())
    r = client.post(f"/api/submissions/{sub.pk}/run/factsheet/",
                    {"factsheet": GOOD}, content_type="application/json")
    assert r.status_code == 403


def test_organizers_correct_a_frozen_runs_sheet_with_a_reason(rw, client):
    from django.utils import timezone
    w = rw
    sub = up(w, "alice", "Team A", "dev", 15, factsheet=GOOD)
    w["ds"]["dev"].phase.__class__.objects.filter(pk=w["ds"]["dev"].phase_id).update(
        end=timezone.now())
    client.force_login(w["org"])
    url = f"/api/submissions/{sub.pk}/run/factsheet/"
    r = client.post(url, {"factsheet": GOOD}, content_type="application/json")
    assert r.status_code == 400 and "needs a reason" in r.json()["error"]
    r = client.post(url, {"factsheet": dict(GOOD, method="fixed"), "reason": "typo"},
                    content_type="application/json")
    assert r.status_code == 200 and r.json()["factsheet"]["method"] == "fixed"
    assert "fact sheet updated (by organizer org: typo)" in r.json()["events"][-1]["message"]


def test_the_runs_page_is_titled_by_the_viewers_team_or_as_their_own(rw, client):
    """A team member sees "Submissions of <team>"; a user in no team (an organizer)
    "Your submissions", not a title with a missing name."""
    slug = rw["comp"].slug
    client.force_login(rw["users"]["alice"])
    assert "<h1>Submissions of Team A ·" in client.get(f"/c/{slug}/submissions/").content.decode()
    client.force_login(rw["org"])
    page = client.get(f"/c/{slug}/submissions/").content.decode()
    assert "<h1>Your submissions ·" in page and "Submissions of  ·" not in page
