"""Cached leaderboards (competitions/board_cache.py) and pages whose query count must
not grow with the number of runs (issue 22, page performance).

Every test first loads a board, so its rows are cached, then changes something
the board reads, and checks that the very next load shows the change; the
visibility rules themselves are test_visibility.py's, run with the cache on.
No test measures time: bench/server.py does.
"""
from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from shareval.platform.competitions.models import Dataset, Phase
from shareval.platform.submissions import queue, service
from shareval.platform.submissions.models import Score, Submission

from .conftest import Upload, run_with_accuracy

NOW = dt.datetime.now(dt.timezone.utc)
DEV, EVAL = "/api/competitions/tiny/leaderboard/dev/dev/", \
    "/api/competitions/tiny/leaderboard/eval/eval/"


@pytest.fixture(autouse=True)
def cache_on(settings):
    settings.BOARD_CACHE = True


def run(w, user, team, ds, correct, hours_ago, **kw):
    return service.submit(w["users"][user], w["teams"][team], w["ds"][ds],
                          Upload(f"{user}-{correct}.tsv", run_with_accuracy(correct)),
                          now=NOW - dt.timedelta(hours=hours_ago), **kw)


def board(client, url=DEV) -> list[tuple]:
    rows = client.get(url).json()["rows"]
    return [(r["team"], r["rank"], r["runs"], r["metrics"].get("f1_macro"), r["run"])
            for r in rows]


def score_queries(client, url) -> list[str]:
    with CaptureQueriesContext(connection) as q:
        assert client.get(url).status_code == 200
    return [x["sql"] for x in q.captured_queries if "submissions_score" in x["sql"]]


@pytest.fixture
def two(world):
    run(world, "alice", "Team A", "dev", 12, 3)
    run(world, "bob", "Team B", "dev", 15, 2)
    queue.drain()
    return world


def test_a_second_load_reads_no_scores_and_a_new_score_shows_at_once(two, client):
    first = board(client)
    assert [t for t, *_ in first] == ["Team B", "Team A", "Baseline"]
    page = "/c/tiny/leaderboard/dev/dev/"
    client.get(page)
    assert score_queries(client, DEV) == [] and score_queries(client, page) == []
    run(two, "alice", "Team A", "dev", 19, 1)               # A's new best run
    assert board(client) == first                            # queued, not scored: same board
    queue.drain()
    now = board(client)
    assert now[0][:3] == ("Team A", 1, 2) and now[1][:2] == ("Team B", 2)
    assert now[0][3] > first[0][3]
    assert "Team A" in client.get(page).content.decode().split("Team B")[0]   # page too


def test_primary_flag_cancel_and_queryset_updates_show_at_once(two, client):
    a = Submission.objects.get(team=two["teams"]["Team A"])
    better = run(two, "alice", "Team A", "dev", 19, 1)
    queue.drain()
    assert board(client)[0][::4] == ("Team A", "best")
    service.make_primary(a, two["users"]["alice"])           # the worse run, flagged
    rows = board(client)
    assert rows[0][0] == "Team B" and ("Team A", 2, 2) == rows[1][:3] and \
        rows[1][4] == "primary"
    service.cancel(a, two["users"]["alice"])
    assert [r[2] for r in board(client) if r[0] == "Team A"] == [1]
    # writes that send no signal (queryset update) also replace the token
    Submission.objects.filter(pk=better.pk).update(state=Submission.FAILED)
    assert "Team A" not in [r[0] for r in board(client)]
    Score.objects.filter(submission__team=two["teams"]["Team B"]).update(primary=0.01)
    assert board(client)[-1][0] == "Team B"


def test_team_name_task_direction_and_a_stale_dataset_save(two, client):
    board(client)
    t = two["teams"]["Team B"]
    t.name = "Team Bravo"
    t.save()
    assert board(client)[0][0] == "Team Bravo"
    task = two["ds"]["dev"].task
    task.lower_is_better = True
    task.save()
    assert board(client)[0][0] == "Baseline"                  # the lowest F1 now ranks first
    stale = Dataset.objects.get(pk=two["ds"]["dev"].pk)       # loaded before the next change
    run(two, "bob", "Team B", "dev", 2, 1)
    queue.drain()
    stale.title = "Development set"
    stale.save()                       # writes its old token back: must not revive old rows
    assert board(client)[0][:3] == ("Team Bravo", 1, 2)


def test_release_and_visibility_changes_show_at_once_and_hidden_rows_hold_no_score(world,
                                                                                  client):
    run(world, "alice", "Team A", "eval", 17, 5)
    run(world, "bob", "Team B", "eval", 13, 4)
    queue.drain()
    client.force_login(world["org"])
    shown = board(client, EVAL)                               # organizer: cached with scores
    assert shown[0][3] is not None
    client.logout()
    hidden = board(client, EVAL)
    assert [r[3] for r in hidden] == [None, None] and [r[1] for r in hidden] == [None, None]
    phase = world["ds"]["eval"].phase
    phase.released = Phase.TOP
    phase.save()
    assert board(client, EVAL) == shown
    phase.released = Phase.HIDDEN
    phase.save()
    assert board(client, EVAL) == hidden
    # a scheduled release needs no write at all: visibility is decided per request
    Phase.objects.filter(pk=phase.pk).update(release_top_at=NOW - dt.timedelta(minutes=1))
    assert board(client, EVAL) == shown
    # feedback: false on an open, non-blind dataset hides the scores at once
    ds = world["ds"]["dev"]
    run(world, "bob", "Team B", "dev", 15, 2)
    queue.drain()
    assert board(client)[0][3] is not None
    ds.feedback = False
    ds.save()
    assert all(r[3] is None and r[1] is None for r in board(client))
    html = client.get("/c/tiny/leaderboard/dev/dev/").content.decode()
    assert 'id="scores-hidden"' in html and 'data-v="0.' not in html


def test_cache_off_gives_the_same_board(two, client, settings):
    on = board(client)
    settings.BOARD_CACHE = False
    assert board(client) == on


def _queries(client, url) -> int:
    with CaptureQueriesContext(connection) as q:
        assert client.get(url).status_code == 200
    return len(q)


def test_run_lists_make_the_same_queries_for_2_or_8_runs(world, client):
    """No query per run (the list pages made 5-6 per run: 1,005 for 200 runs)."""
    client.force_login(world["users"]["alice"])
    pages = ["/c/tiny/submissions/", "/api/submissions/?competition=tiny"]
    for k in range(2):
        run(world, "alice", "Team A", "dev", 10 + k, 20 - k)
    queue.drain()
    few = [_queries(client, p) for p in pages]
    for k in range(6):
        run(world, "alice", "Team A", "dev", 12 + k, 10 - k)
    queue.drain()
    assert [_queries(client, p) for p in pages] == few
    client.force_login(world["org"])
    pages.append("/c/tiny/organize/")
    few = [_queries(client, p) for p in pages]
    run(world, "bob", "Team B", "dev", 14, 1)
    queue.drain()
    assert [_queries(client, p) for p in pages] == few


def test_run_lists_are_paged_newest_first(world, client, monkeypatch):
    from shareval.platform.submissions import views
    monkeypatch.setattr(views, "RUNS_PAGE", 2)
    runs = [run(world, "alice", "Team A", "dev", 10 + k, 5 - k) for k in range(3)]
    client.force_login(world["users"]["alice"])
    first = client.get("/c/tiny/submissions/").content.decode()
    second = client.get("/c/tiny/submissions/?page=2").content.decode()
    assert [str(r.pk) in first for r in runs] == [False, True, True]
    assert [str(r.pk) in second for r in runs] == [True, False, False]
    assert 'id="runs-pager"' in first and "Runs 1–2 of 3" in first
    api = "/api/submissions/?competition=tiny"
    assert [s["id"] for s in client.get(api).json()] == [str(r.pk) for r in runs[::-1]]
    assert [s["id"] for s in client.get(api + "&limit=2").json()] == \
        [str(r.pk) for r in runs[:0:-1]]
    assert [s["id"] for s in client.get(api + "&limit=2&offset=2").json()] == [str(runs[0].pk)]
    assert client.get(api + "&limit=x").status_code == 400
