"""Run groups (bundle ``groups:``): one quota and one primary run per team over
several datasets of a phase (MATERIAL 8.1: five runs per language over its CLIR
and E2E datasets, exactly one primary, an E2E run); the deadline check names the
teams without a primary. Every refusal names its rule and changes nothing."""
from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.core import mail as outbox
from django.utils import timezone

from shareval.platform.bundles.loader import load_bundle
from shareval.platform.competitions.models import Dataset, RunGroup
from shareval.platform.competitions.reminders import send_due
from shareval.platform.submissions import deadline, service
from shareval.platform.submissions.models import Submission

from ..factories import Upload, make_world, run_with_accuracy, submit

GROUP = {"slug": "lang-1a", "title": "Language 1A", "datasets": ["eval", "eval-clir"],
         "quotas": [{"limit": 5, "window": "phase"}],
         "primary": {"required": True, "from": ["eval"]}}
FULL = ("quota reached: 5 of 5 runs used for Language 1A (eval, eval-clir) in this phase; "
        "no more submissions in this phase")
CONTRASTIVE_ONLY = "eval-clir runs are contrastive in Language 1A: the primary is a run of eval"


def grouped_world(tmp_path, group: dict | None = None) -> dict:
    """make_world's competition with a second dataset ``eval-clir`` in the blind eval
    phase and the two in one run group (loaded by reloading the bundle)."""
    w = make_world(tmp_path)
    root = tmp_path / "bundle"
    doc = yaml.safe_load((root / "bundle.yaml").read_text())
    ev = doc["phases"][1]
    ev["datasets"][0]["quotas"] = []                 # the group's quota only
    ev["datasets"].append({"slug": "eval-clir", "task": "labels", "reference": "gold-eval.tsv"})
    ev["groups"] = [group or GROUP]
    (root / "bundle.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    load_bundle(root, w["org"])
    for name, u in w["users"].items():              # reminders go to addresses
        u.email = f"{name}@lab.example"
        u.save()
    w["ds"] = {d.slug: d for d in Dataset.objects.filter(phase__competition=w["comp"])}
    w["group"] = RunGroup.objects.get(phase__competition=w["comp"], slug="lang-1a")
    return w


@pytest.fixture
def gw(db, tmp_path):
    return grouped_world(tmp_path)


@pytest.fixture
def open_group(db, tmp_path):
    """Both datasets may hold the primary (no ``from``)."""
    return grouped_world(tmp_path, dict(GROUP, primary={"required": True}))


def stored_files() -> set[str]:
    return set(os.listdir(settings.UPLOAD_DIR)) if Path(settings.UPLOAD_DIR).is_dir() else set()


def state(team) -> list[tuple]:
    """Everything stored about a team's runs: ids, kinds, states, history."""
    return [(s.pk, s.kind, s.state, [e.message for e in s.events.order_by("at", "pk")])
            for s in Submission.objects.filter(team=team).order_by("created", "pk")]


def test_a_group_quota_counts_runs_of_all_its_datasets_and_the_sixth_is_refused(gw):
    for k, ds in enumerate(["eval", "eval", "eval-clir", "eval", "eval-clir"]):
        submit(gw, ds=ds, correct=10 + k)
    team = gw["teams"]["Team A"]
    for ds in ("eval", "eval-clir"):
        [st] = service.quota_states(team, gw["ds"][ds])
        assert st.used == 5 and st.left == 0
        assert st.describe() == FULL.removeprefix("quota reached: ")
    before, files = state(team), stored_files()
    for ds in ("eval-clir", "eval"):
        with pytest.raises(service.SubmissionError) as e:
            submit(gw, ds=ds)
        assert e.value.status == 429 and e.value.message == FULL
    assert state(team) == before and stored_files() == files
    # the other team counts its own runs; a dataset outside the group keeps its own quota
    [b] = service.quota_states(gw["teams"]["Team B"], gw["ds"]["eval-clir"])
    assert b.used == 0 and b.describe().startswith("0 of 5 runs used for Language 1A")
    assert [s.describe() for s in service.quota_states(team, gw["ds"]["dev"])] == \
        ["0 of 200 per calendar week used"]


def test_the_group_quota_is_shown_on_the_submit_and_competition_pages(gw, client):
    submit(gw, ds="eval-clir")
    client.force_login(gw["users"]["alice"])
    for url in ("/c/tiny/submit/", "/c/tiny/"):
        body = client.get(url).content.decode()
        assert "1 of 5 runs used for Language 1A (eval, eval-clir) in this phase" in body, url
    assert "contrastive runs only in Language 1A" in client.get("/c/tiny/").content.decode()
    api = client.get("/api/competitions/tiny/").json()
    [clir] = [d for p in api["phases"] for d in p["datasets"] if d["slug"] == "eval-clir"]
    assert clir["group"] == {"slug": "lang-1a", "title": "Language 1A", "primary": False,
                             "primary_required": True}
    assert clir["quotas"] == ["5 in this phase for Language 1A (eval, eval-clir)"]


def test_a_primary_in_one_dataset_demotes_the_teams_primary_in_the_other(open_group):
    w = open_group
    first = submit(w, ds="eval", primary=True)
    other_team = submit(w, user="bob", team="Team B", ds="eval", primary=True)
    second = submit(w, ds="eval-clir", primary=True)
    first.refresh_from_db()
    assert (first.kind, second.kind) == ("contrastive", "primary")
    assert service.group_primary(w["teams"]["Team A"], w["group"]) == second
    msgs = lambda s: [e.message for e in s.events.all()]                # noqa: E731
    assert any("no longer primary" in m and "one primary per team in Language 1A" in m
               for m in msgs(first)), msgs(first)
    assert any(f"primary in place of run {first.pk} of eval" in m for m in msgs(second))
    # flagging on the run's page (the service) demotes across datasets the same way
    service.make_primary(first, w["users"]["alice"])
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.kind, second.kind) == ("primary", "contrastive")
    assert any(f"primary in place of run {second.pk} of eval-clir" in m for m in msgs(first))
    assert any("no longer primary" in m for m in msgs(second))
    other_team.refresh_from_db()
    assert other_team.kind == "primary"                        # another team's is untouched
    assert Submission.objects.filter(team=w["teams"]["Team A"], kind="primary").count() == 1


def test_a_clir_run_offered_as_primary_is_refused_and_nothing_changes(gw, client):
    e2e = submit(gw, ds="eval", primary=True)
    clir = submit(gw, ds="eval-clir")
    team = gw["teams"]["Team A"]
    before, files = state(team), stored_files()
    with pytest.raises(service.SubmissionError) as e:
        submit(gw, ds="eval-clir", primary=True)
    assert (e.value.status, e.value.message) == (400, CONTRASTIVE_ONLY)
    with pytest.raises(service.SubmissionError) as e:
        service.make_primary(clir, gw["users"]["alice"])
    assert e.value.message == CONTRASTIVE_ONLY
    client.force_login(gw["users"]["alice"])
    page = client.post("/c/tiny/submit/", {"dataset": gw["ds"]["eval-clir"].pk, "primary": "on",
                                           "file": Upload("r.tsv", run_with_accuracy(9))
                                           .as_file()})
    assert page.status_code == 200 and CONTRASTIVE_ONLY in page.content.decode()
    api = client.post("/api/submissions/", {
        "competition": "tiny", "phase": "eval", "task": "eval-clir", "primary": "true",
        "file": Upload("r.tsv", run_with_accuracy(9)).as_file()})
    assert api.status_code == 400 and api.json()["error"] == CONTRASTIVE_ONLY
    r = client.post(f"/api/submissions/{clir.pk}/primary/")
    assert r.status_code == 400 and r.json()["error"] == CONTRASTIVE_ONLY
    r = client.post(f"/s/{clir.pk}/primary/", follow=True)
    assert CONTRASTIVE_ONLY in r.content.decode()
    assert state(team) == before and stored_files() == files
    assert service.group_primary(team, gw["group"]) == e2e


def test_the_deadline_check_lists_and_mails_each_team_without_a_primary_once(gw, client):
    submit(gw, ds="eval-clir")                                       # Team A: no primary
    submit(gw, user="bob", team="Team B", ds="eval", primary=True)    # Team B: has one
    assert [(g.slug, [t.name for t in teams]) for g, teams in
            deadline.missing_primaries(gw["ds"]["eval"].phase)] == [("lang-1a", ["Team A"])]
    client.force_login(gw["org"])
    body = client.get("/c/tiny/organize/").content.decode()
    table = body[body.index('id="missing-primaries"'):]
    assert "Language 1A" in table and "Team A" in table[:table.index("</table>")]
    assert "Team B" not in table[:table.index("</table>")]
    [ev] = [p for p in client.get("/api/competitions/tiny/").json()["phases"]
            if p["slug"] == "eval"]
    assert ev["missing_primaries"] == {"lang-1a": ["Team A"]}
    client.force_login(gw["users"]["bob"])                  # participants never see the list
    assert all("missing_primaries" not in p
               for p in client.get("/api/competitions/tiny/").json()["phases"])
    now = timezone.now()
    outbox.outbox.clear()
    assert send_due(now, within=dt.timedelta(days=8))["primaries"] == 2      # alice and carol
    mails = [m for m in outbox.outbox if "no primary run" in m.subject]
    assert sorted(a for m in mails for a in m.to) == sorted(
        u.email for u in (gw["users"]["alice"], gw["users"]["carol"]))
    assert all("Your team, Team A, has no primary run for Language 1A (eval, eval-clir)" in m.body
               for m in mails)
    outbox.outbox.clear()
    assert send_due(now, within=dt.timedelta(days=8))["primaries"] == 0      # once
    assert not [m for m in outbox.outbox if "no primary run" in m.subject]


def test_the_team_without_a_primary_is_told_on_its_own_pages_while_the_phase_is_open(gw, client):
    run = submit(gw, ds="eval")                                      # Team A: no primary
    submit(gw, user="bob", team="Team B", ds="eval", primary=True)    # Team B: has one
    told = ("Team A has no primary run for Language 1A in Evaluation: teams are compared on "
            "their primary runs. Flag one of your eval runs primary on its page")
    client.force_login(gw["users"]["alice"])
    for url in ("/c/tiny/", "/c/tiny/submit/", "/c/tiny/submissions/"):
        assert told in client.get(url).content.decode(), url
    client.force_login(gw["users"]["bob"])
    assert "no primary run" not in client.get("/c/tiny/").content.decode()
    service.make_primary(run, gw["users"]["alice"])
    client.force_login(gw["users"]["alice"])
    assert "no primary run" not in client.get("/c/tiny/").content.decode()
    phase = gw["ds"]["eval"].phase                     # closed: nothing left to flag
    Submission.objects.filter(pk=run.pk).update(kind=Submission.CONTRASTIVE)
    assert told in client.get("/c/tiny/").content.decode()
    phase.end = timezone.now() - dt.timedelta(hours=1)
    phase.save()
    assert "no primary run" not in client.get("/c/tiny/").content.decode()


def test_a_run_that_may_not_be_primary_offers_no_primary_button_and_says_why(gw, client):
    clir = submit(gw, ds="eval-clir")
    e2e = submit(gw, ds="eval")
    client.force_login(gw["users"]["alice"])
    page = client.get(f"/s/{clir.pk}/").content.decode()
    assert 'id="make-primary"' not in page
    assert f"This run cannot be primary: {CONTRASTIVE_ONLY}." in page
    page = client.get(f"/s/{e2e.pk}/").content.decode()
    assert 'id="make-primary"' in page and "cannot be primary" not in page
    client.force_login(gw["org"])
    page = client.get(f"/s/{clir.pk}/").content.decode()
    assert 'id="make-primary"' not in page and CONTRASTIVE_ONLY in page


def test_the_reminder_waits_for_the_window_and_stops_once_the_primary_is_flagged(gw):
    run = submit(gw, ds="eval")
    now = timezone.now()
    assert send_due(now, within=dt.timedelta(days=1))["primaries"] == 0   # closes in 7 days
    service.make_primary(run, gw["users"]["alice"])
    assert deadline.missing_primaries(gw["ds"]["eval"].phase)[0][1] == []
    assert send_due(now, within=dt.timedelta(days=8))["primaries"] == 0


def test_flags_and_cancellations_read_the_run_under_the_team_lock(open_group):
    """A page or API call holds the run as it was read before the team's lock: a
    cancellation that came in meanwhile must not be undone into a cancelled primary,
    and a cancellation must clear a primary flag set meanwhile."""
    w = open_group
    a = submit(w, ds="eval")
    stale = Submission.objects.get(pk=a.pk)
    service.cancel(Submission.objects.get(pk=a.pk), w["users"]["alice"])
    with pytest.raises(service.SubmissionError):
        service.make_primary(stale, w["users"]["alice"])
    a.refresh_from_db()
    assert (a.state, a.kind) == (Submission.CANCELLED, Submission.CONTRASTIVE)
    b = submit(w, ds="eval-clir")
    stale = Submission.objects.get(pk=b.pk)                  # contrastive when read
    service.make_primary(Submission.objects.get(pk=b.pk), w["users"]["alice"])
    service.cancel(stale, w["users"]["alice"])
    b.refresh_from_db()
    assert (b.state, b.kind) == (Submission.CANCELLED, Submission.CONTRASTIVE)
