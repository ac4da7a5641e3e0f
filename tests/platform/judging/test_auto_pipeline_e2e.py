"""The automatic assessment through the pages, as people use it: the organizer ticks
"assess every run automatically" on the campaign form, two teams upload on the
submit page, the judge answers on the judging page (no organizer form in between),
and the board and the run pages show the estimates and the cost."""
from __future__ import annotations

import json

import yaml

from shareval.platform.judging.models import Campaign, LateEvaluation, RunOutput
from shareval.platform.submissions import queue
from shareval.platform.submissions.models import Submission

from .auto_world import CHAIN, answer, make_world, run


def test_upload_judge_and_read_the_estimates_through_the_pages(
        db, tmp_path, client, django_capture_on_commit_callbacks):
    w = make_world(tmp_path, metric="judged_precision")
    comp, ds = w["comp"], w["ds"]["dev"]
    client.force_login(w["org"])
    config = {k: v for k, v in CHAIN.items() if k != "auto"}
    r = client.post(f"/c/{comp.slug}/organize/campaigns/", {
        "title": "Every run", "dataset": ds.pk, "design": Campaign.CHAIN, "k": 1,
        "timeout": 30, "judges": "judge", "config": yaml.safe_dump(config), "auto": "on",
        "on_leaderboard": "on", "n": 50, "docs": 0, "seed": 0})
    assert r.status_code == 302, r.content.decode()[:2000]
    camp = Campaign.objects.get(title="Every run")
    assert camp.config["auto"] is True and not camp.items.exists()
    for user, text in (("alice", run(4, 1)), ("bob", run(2, 2))):
        client.force_login(w["users"][user])
        r = client.post(f"/c/{comp.slug}/submit/", {
            "dataset": ds.pk, "file": _file("run.tsv", text)})
        assert r.status_code == 302
    with django_capture_on_commit_callbacks(execute=True):
        queue.drain()
    assert RunOutput.objects.filter(campaign=camp).count() == 2 and camp.items.exists()
    client.force_login(w["users"]["judge"])
    answered = 0
    while True:
        client.post(f"/judging/{camp.pk}/")                       # take the next item
        a = camp.items.model.objects.filter(
            campaign=camp, assignments__judge=w["users"]["judge"],
            assignments__status="in_progress").first()
        if a is None:
            break
        page = client.get(f"/judging/{camp.pk}/").content.decode()
        assert "Team A" not in page and "Team B" not in page     # judges never see teams
        assignment = a.assignments.get(judge=w["users"]["judge"])
        r = client.post(f"/judging/{camp.pk}/", {"assignment": assignment.pk,
                                                 "answer": json.dumps(answer(a)),
                                                 "started": "1"})
        assert r.status_code == 302
        answered += 1
    assert answered > 0
    assert not LateEvaluation.objects.exclude(stage=LateEvaluation.DONE).exists()
    client.force_login(w["users"]["alice"])
    board = client.get(f"/c/{comp.slug}/leaderboard/dev/dev/").content.decode()
    assert "Precision (judged)" in board and "(judged: Every run)" not in board
    sub = Submission.objects.get(team=w["teams"]["Team A"])
    page = client.get(f"/s/{sub.pk}/").content.decode()
    assert 'id="assessment-estimates"' in page and 'id="assessment-cost"' in page
    assert "Precision (judged)" in page                # the score itself
    m = sub.current_score.result["metrics"]
    # the interval in the estimate's own row, its bounds no rows of their own
    assert f"{m['judged_precision']:.4f} [{m['judged_precision_low']:.3f}, " \
           f"{m['judged_precision_high']:.3f}]" in page
    assert 'title="judged_precision_low"' not in page


def _file(name, text):
    from django.core.files.uploadedfile import SimpleUploadedFile
    return SimpleUploadedFile(name, text.encode())


def test_the_campaign_page_offers_no_manual_late_runs(db, tmp_path, client,
                                                      django_capture_on_commit_callbacks):
    from shareval.platform.judging import service
    from .auto_world import upload
    w = make_world(tmp_path)
    camp = service.create_campaign(w["ds"]["dev"], "Every run", Campaign.CHAIN, 1, 30, CHAIN,
                                   [w["users"]["judge"]])
    a = upload(w, "Team A", run(4, 1), name="a.tsv")
    with django_capture_on_commit_callbacks(execute=True):
        queue.drain()
    b = upload(w, "Team B", run(2, 2))
    queue.drain()                        # drawn later (the sweep); not by the form
    client.force_login(w["org"])
    url = f"/c/{w['comp'].slug}/organize/campaigns/{camp.pk}/"
    page = client.get(url).content.decode()
    assert f'value="{b.pk}"' not in page and f'value="{a.pk}"' not in page
    r = client.post(url + "late/", {"submission": b.pk, "half_width": "0.1", "pilot": "10"},
                    follow=True)
    assert "assesses every team" in r.content.decode()
    assert not RunOutput.objects.filter(submission=b).exists()
