"""Code runs and the leaderboard cache (competitions/board_cache.py): a write of
a code run that changes a board (its resources appear or vanish) gives the
dataset a new token, so the very next load shows it. Each test first loads the
board, so its rows (and the page's table body) are cached."""
from __future__ import annotations

import pytest

from shareval.platform.submissions import queue as scoring_queue, service as subs

from ..factories import Upload, run_with_accuracy
from ..coderuns.test_coderuns import code_bundle, code_world  # noqa: F401 -- the fixture
from ..coderuns.test_coderuns_records import BUNDLE, submit_code, world  # noqa: F401


@pytest.fixture(autouse=True)
def cache_on(settings):
    settings.BOARD_CACHE = True


@pytest.fixture
def scored(world):                               # noqa: F811
    """A scored run of Team A on the code dataset, and a code submission whose
    final run is running (its output not linked yet)."""
    from shareval.platform.coderuns.models import CodeDataset, CodeRun
    CodeDataset.objects.filter(dataset=world["ds"]).update(mode=CodeDataset.BOTH)
    cs = submit_code(world, primary=True)
    cs.runs.update(state=CodeRun.OK)
    sub = subs.submit(world["alice"], world["team"], world["ds"],
                      Upload("o.tsv", run_with_accuracy(15)), primary=True)
    scoring_queue.drain()
    final = CodeRun.objects.create(code_submission=cs, stage=CodeRun.FINAL,
                                   state=CodeRun.RUNNING)
    return {**world, "cs": cs, "sub": sub, "final": final}


def api(client, w):
    client.force_login(w["org"])
    return client.get(f"/api/competitions/{w['comp'].slug}/leaderboard/dev/dev-code/").json()


def page(client, w):
    client.force_login(w["org"])
    return client.get(f"/c/{w['comp'].slug}/leaderboard/dev/dev-code/").content.decode()


def test_a_finished_code_run_shows_on_the_next_board_load(scored, client):
    from shareval.platform.coderuns.models import CodeRun
    from shareval.platform.coderuns.runner import _finish
    w = scored
    first = api(client, w)
    assert first["rows"][0]["efficiency"] is None and first["efficiency_columns"] == []
    assert "Runtime (s)" not in page(client, w)
    # the runner links the output with one UPDATE (no signal of Submission or Score)
    _finish(w["final"], CodeRun.OK, "finished", output_submission=w["sub"],
            wall_seconds=3.25, cpu_seconds=1.5, peak_mb=42.0)
    again = api(client, w)
    assert again["rows"][0]["efficiency"] == {"runtime_s": 3.25, "cpu_s": 1.5, "peak_mb": 42.0}
    body = page(client, w)
    assert "Runtime (s)" in body and "3.25" in body


def test_editing_or_removing_a_code_run_shows_on_the_next_load(scored, client):
    from shareval.platform.coderuns.models import CodeRun
    w = scored
    assert api(client, w)["rows"][0]["efficiency"] is None
    final = w["final"]                       # a save (the admin, a script): a signal bumps
    final.state, final.output_submission = CodeRun.OK, w["sub"]
    final.wall_seconds, final.cpu_seconds, final.peak_mb = 2.0, 1.0, 10.0
    final.save()
    assert api(client, w)["rows"][0]["efficiency"]["runtime_s"] == 2.0
    assert "Runtime (s)" in page(client, w)
    w["cs"].delete()                         # its runs go with it; the output run stays
    again = api(client, w)
    assert again["rows"][0]["efficiency"] is None and again["efficiency_columns"] == []
    assert "Runtime (s)" not in page(client, w)
