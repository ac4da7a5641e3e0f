"""Code submissions under the access rules (visibility, registration, finalist
phases), with run records (concurrent limits, per-run actions, board columns)
and the run mail. No sandbox needed: runs are queued, not executed, or their
outcome is written as the runner would."""
from __future__ import annotations

from functools import partial

import pytest
from django.core import mail as outbox

from shareval.platform.competitions.models.access import PhaseLimit
from shareval.platform.leaderboards.payloads import leaderboard_payload
from shareval.platform.submissions import queue as scoring_queue, runs, service as subs

from .. import factories
from ..factories import Upload, run_with_accuracy, tgz
from .test_coderuns import code_bundle, code_world  # noqa: F401 -- the fixture

BUNDLE = {"shareval-system.yaml": "command: python main.py {input} {output}\n",
          "main.py": "print('never run here')\n"}
submit_code = partial(factories.submit_code, files=BUNDLE)


@pytest.fixture
def world(code_world, monkeypatch):            # noqa: F811 -- the imported fixture
    from shareval.platform.coderuns import service
    monkeypatch.setattr(service, "sandbox_problem", lambda: "")
    code_world["alice"].email = "alice@lab.example"
    code_world["alice"].save()
    return code_world


def test_a_private_competition_hides_its_code_routes(world, client):
    from django.contrib.auth import get_user_model
    cs = submit_code(world)
    comp = world["comp"]
    comp.visibility = comp.PRIVATE
    comp.save()
    olga = get_user_model().objects.create_user("olga", password="olga-pass-123")
    client.force_login(olga)
    assert client.get(f"/c/{comp.slug}/code/").status_code == 404
    r = client.post("/api/code/", {"competition": comp.slug, "phase": "dev", "task": "labels",
                                   "dataset": "dev-code", "file": Upload("s.tgz", tgz(BUNDLE))})
    assert r.status_code == 404 and comp.slug in r.json()["error"]    # as for a missing one
    assert client.get(f"/code/{cs.pk}/").status_code == 404
    client.force_login(world["alice"])          # a member of a team is invited: she sees it
    assert client.get(f"/code/{cs.pk}/").status_code == 200


def test_registration_and_finalist_phases_refuse_code_like_files(world):
    comp = world["comp"]
    comp.registration_approval = True
    comp.save()
    with pytest.raises(subs.SubmissionError, match="register for this competition"):
        submit_code(world)
    comp.registration_approval = False
    comp.save()
    PhaseLimit.objects.create(phase=world["ds"].phase)
    with pytest.raises(subs.SubmissionError, match="limited to the teams") as e:
        submit_code(world)
    assert e.value.status == 403
    world["ds"].phase.limit.teams.add(world["team"])
    assert submit_code(world).runs.count() == 1


def test_concurrent_limit_counts_code_runs_and_uploads_together(world):
    from shareval.platform.coderuns.models import CodeDataset, CodeRun
    ds = world["ds"]
    ds.concurrent = 1
    ds.save()
    cs = submit_code(world)
    with pytest.raises(subs.SubmissionError, match="too many runs at once") as e:
        submit_code(world)
    assert e.value.status == 429
    CodeDataset.objects.filter(dataset=ds).update(mode=CodeDataset.BOTH)
    with pytest.raises(subs.SubmissionError, match="too many runs at once"):
        subs.submit(world["alice"], world["team"], ds, Upload("r.tsv", run_with_accuracy(10)))
    cs.runs.update(state=CodeRun.OK)            # the run is done: room again
    sub = subs.submit(world["alice"], world["team"], ds, Upload("r.tsv", run_with_accuracy(10)))
    with pytest.raises(subs.SubmissionError, match="too many runs at once"):
        submit_code(world)                      # the upload being scored counts for code
    scoring_queue.drain()
    sub.refresh_from_db()
    assert sub.state == "scored"
    assert submit_code(world).runs.count() == 1


def test_a_failed_code_run_is_mailed_like_a_failed_upload(world,
                                                          django_capture_on_commit_callbacks):
    from shareval.platform.coderuns.runner import _finish
    cs = submit_code(world)
    run = cs.runs.get()
    outbox.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        _finish(run, "timeout", "the run took longer than 20 s")
    assert [m.to for m in outbox.outbox] == [["alice@lab.example"]]
    assert "could not be scored" in outbox.outbox[0].subject
    assert f"/code/{cs.pk}/" in outbox.outbox[0].body
    with django_capture_on_commit_callbacks(execute=True):
        _finish(run, "timeout", "again")        # the same run: mailed once
    assert len(outbox.outbox) == 1


def _scored_code_output(world, correct: int, wall: float, peak: float, primary=True):
    """An output run as the runner leaves it: a Submission scored, its CodeRun ok."""
    from shareval.platform.coderuns.models import CodeDataset, CodeRun
    CodeDataset.objects.filter(dataset=world["ds"]).update(mode=CodeDataset.BOTH)
    cs = submit_code(world, primary=primary)
    sub = subs.submit(world["alice"], world["team"], world["ds"],
                      Upload("o.tsv", run_with_accuracy(correct)), primary=primary)
    scoring_queue.drain()
    sub.refresh_from_db()
    assert sub.state == "scored"
    cs.runs.update(state=CodeRun.OK)
    CodeRun.objects.create(code_submission=cs, stage=CodeRun.FINAL, state=CodeRun.OK,
                           wall_seconds=wall, cpu_seconds=wall / 2, peak_mb=peak,
                           output_submission=sub)
    return cs, sub


def test_efficiency_columns_follow_the_board_options(world):
    ds = world["ds"]
    _scored_code_output(world, 15, 1.23456, 57.0)
    board = leaderboard_payload(ds, world["org"])
    assert [c["key"] for c in board["efficiency_columns"]] == ["runtime_s", "cpu_s", "peak_mb"]
    assert board["rows"][0]["efficiency"]["runtime_s"] == 1.23456     # not rounded
    assert board["rows"][0]["efficiency"]["peak_mb"] == 57.0
    # chosen like metric columns: only runtime, one digit; the primary metric stays first
    ds.board = {"columns": [{"metric": "runtime_s", "precision": 1}]}
    ds.save()
    board = leaderboard_payload(ds, world["org"])
    assert [c["key"] for c in board["efficiency_columns"]] == ["runtime_s"]
    assert board["columns"] == [ds.task.metric]
    assert board["rows"][0]["efficiency"] == {"runtime_s": pytest.approx(1.2, abs=1e-9)}
    ds.board = {"columns": [{"metric": ds.task.metric}]}    # none chosen: none shown
    ds.save()
    board = leaderboard_payload(ds, world["org"])
    assert board["efficiency_columns"] == [] and board["rows"][0]["efficiency"] is None


def test_several_runs_per_team_each_show_their_own_resources(world, client):
    ds = world["ds"]
    _scored_code_output(world, 15, 2.0, 50.0)
    _scored_code_output(world, 12, 7.0, 90.0, primary=False)
    subs.submit(world["alice"], world["team"], ds, Upload("u.tsv", run_with_accuracy(5)))
    scoring_queue.drain()
    ds.board = {"runs": "all"}
    ds.save()
    board = leaderboard_payload(ds, world["org"])
    assert [r["efficiency"] and r["efficiency"]["runtime_s"] for r in board["rows"]] == \
        [2.0, 7.0, None]
    client.force_login(world["org"])
    page = client.get(f"/c/{world['comp'].slug}/leaderboard/dev/dev-code/").content.decode()
    assert "Runtime (s)" in page and "Peak memory (MB)" in page and "7.00" in page


def test_disqualified_output_blocks_running_the_code_again(world):
    from shareval.platform.coderuns import service
    cs, sub = _scored_code_output(world, 15, 2.0, 50.0)
    runs.disqualify(sub, world["org"], "used the hidden input for training")
    assert leaderboard_payload(world["ds"], world["org"])["rows"] == []
    with pytest.raises(subs.SubmissionError, match="is disqualified") as e:
        service.rerun(cs, world["org"], "final")
    assert e.value.status == 400 and str(sub.pk) in e.value.message
    runs.reinstate(sub, world["org"], "appeal granted")
    assert service.rerun(cs, world["org"], "final").attempt == 2
    runs.rescore(sub, world["org"])            # re-scoring the output needs no sandbox
    scoring_queue.drain()
    sub.refresh_from_db()
    assert sub.state == "scored" and len(leaderboard_payload(world["ds"],
                                                             world["org"])["rows"]) == 1


def test_the_cli_runs_a_system_without_django(tmp_path):
    """A code submission's sandbox runs ``shareval run`` with only the bundle's
    requirements installed: building the CLI's parser must not import django
    (the first ``server rcc-study`` once did, and every RCC bundle failed)."""
    import subprocess
    import sys
    probe = ("import builtins, sys\n"
             "real = builtins.__import__\n"
             "def imp(name, *a, **k):\n"
             "    if name.split('.')[0] in ('django', 'rest_framework'):\n"
             "        raise ModuleNotFoundError(f'No module named {name!r}')\n"
             "    return real(name, *a, **k)\n"
             "builtins.__import__ = imp\n"
             "from shareval import cli\n"
             "sys.exit(cli.main(['run', 'rcc', '--help']))\n")
    import os
    from pathlib import Path

    import shareval
    env = dict(os.environ, PYTHONPATH=str(Path(shareval.__file__).resolve().parents[1]))
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "--catalog" in r.stdout
