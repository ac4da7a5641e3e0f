"""Cached leaderboards (competitions/board_cache.py) and pages whose query count must
not grow with the number of runs (issue 22, page performance).

Every test first loads a board, so its rows are cached, then changes something
the board reads, and checks that the very next load shows the change; the
visibility rules themselves are access/test_visibility.py's, run with the cache on.
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

from ..factories import Upload, run_with_accuracy

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


# ---------------------------------------------------------------------------
# board options and run actions, with the cache on

SEVERAL = {"runs": "all", "team_visibility": True,
           "columns": [{"metric": "f1_macro", "precision": 3}]}


def rows_of(client, url=DEV) -> list[tuple]:
    return [(r["team"], r["run"], r.get("method", ""), r["metrics"].get("f1_macro"))
            for r in client.get(url).json()["rows"]]


def token(w, ds="dev") -> tuple:
    """What names a board's cached rows: the dataset's token and its teams' marks."""
    from shareval.platform.competitions.models import BoardMark
    d = Dataset.objects.get(pk=w["ds"][ds].pk)
    return d.board_token, sorted(BoardMark.objects.filter(dataset=d)
                                 .values_list("team_id", "token"))


@pytest.fixture
def several(db, tmp_path):
    from ..factories import make_world
    w = make_world(tmp_path, options={"dev": {"board": SEVERAL}})
    w["runs"] = {"a1": run(w, "alice", "Team A", "dev", 17, 5, primary=True,
                           factsheet={"method": "big"}),
                 "a2": run(w, "alice", "Team A", "dev", 19, 4, factsheet={"method": "bigger"}),
                 "b1": run(w, "bob", "Team B", "dev", 18, 3)}
    queue.drain()
    return w


def test_disqualify_reinstate_and_a_note_show_at_once(several, client):
    from shareval.platform.submissions import runs
    w, a2 = several, several["runs"]["a2"]
    first = rows_of(client)
    assert [r[2] for r in first if r[0] == "Team A"] == ["bigger", "big"]
    runs.disqualify(a2, w["org"], "late")
    after = rows_of(client)
    assert len(after) == len(first) - 1 and "bigger" not in [r[2] for r in after]
    runs.reinstate(a2, w["org"])
    assert rows_of(client) == first
    before = token(w)
    runs.annotate(a2, w["org"], "checked by hand")            # no row changes, but a new mark
    assert token(w) != before and rows_of(client) == first


def test_a_team_hiding_a_run_and_editing_its_fact_sheet_show_at_once(several, client):
    from shareval.platform.submissions import runs
    w, a2 = several, several["runs"]["a2"]
    first = rows_of(client)
    runs.set_on_board(a2, w["users"]["alice"], False)
    assert [r for r in rows_of(client) if r[2] == "bigger"] == []
    runs.set_on_board(a2, w["users"]["alice"], True)
    assert rows_of(client) == first
    runs.edit_factsheet(a2, w["users"]["alice"], {"method": "biggest"})
    assert [r[2] for r in rows_of(client) if r[0] == "Team A"] == ["biggest", "big"]
    html = client.get("/c/tiny/leaderboard/dev/dev/").content.decode()   # the cached body too
    assert "biggest" in html and ">bigger<" not in html


def test_board_options_are_part_of_the_key(several, client):
    w = several
    assert len([r for r in rows_of(client) if r[0] == "Team A"]) == 2
    # a queryset update sends no signal: the options' digest in the key still tells
    Dataset.objects.filter(pk=w["ds"]["dev"].pk).update(board={"runs": "all", "max_runs": 1})
    assert len([r for r in rows_of(client) if r[0] == "Team A"]) == 1
    Dataset.objects.filter(pk=w["ds"]["dev"].pk).update(board={})
    body = client.get(DEV).json()
    assert body["runs_per_team"] == "one" and "method" not in body["rows"][0]
    assert "accuracy" in body["columns"]                      # no column choice any more


@pytest.fixture
def split(db, tmp_path):
    from ..factories import ITEMS, make_world
    (tmp_path / "bundle").mkdir(parents=True)
    (tmp_path / "bundle" / "private.txt").write_text("\n".join(ITEMS[10:]) + "\n")
    w = make_world(tmp_path, options={"dev": {"split": {"private": "private.txt"}}})
    # A: all 10 public items right, 5 of the 10 private ones; B: 8 public, no private one
    w["runs"] = {"a": run(w, "alice", "Team A", "dev", 15, 2),
                 "b": run(w, "bob", "Team B", "dev", 8, 1)}
    queue.drain()
    return w


def accuracy(client, url=DEV) -> dict:
    body = client.get(url).json()
    return {"part": body["part"], **{r["team"]: r["metrics"]["accuracy"] for r in body["rows"]}}


def test_private_part_never_comes_out_of_the_cache_before_release(split, client):
    from ..factories import shows_number
    w = split
    client.force_login(w["org"])
    assert accuracy(client, DEV + "?part=private") == {
        "part": "private", "Team A": 0.5, "Team B": 0.0, "Baseline": 0.0}
    page = client.get("/c/tiny/leaderboard/dev/dev/?part=private").content.decode()
    assert shows_number(page, "0.5000")                     # private rows and body cached
    for who in (None, "alice", "bob"):
        client.logout()
        if who:
            client.force_login(w["users"][who])
        assert accuracy(client) == {"part": "public", "Team A": 1.0, "Team B": 0.8,
                                    "Baseline": 1.0}, who
        assert accuracy(client, DEV + "?part=private")["part"] == "public", who
        for url in ("/c/tiny/leaderboard/dev/dev/", "/c/tiny/leaderboard/dev/dev/?part=private"):
            assert not shows_number(client.get(url).content.decode(), "0.5000"), (who, url)
    # the release is decided per request (the key holds the part): the next load shows it
    Phase.objects.filter(pk=w["ds"]["dev"].phase_id).update(released=Phase.TOP)
    assert accuracy(client)["part"] == "private" and accuracy(client)["Team A"] == 0.5


def test_split_scores_written_later_show_at_once(split, client):
    w = split
    client.force_login(w["org"])
    assert accuracy(client, DEV + "?part=private")["Team B"] == 0.0
    # a re-score that changes only the private part (a queryset update, no signal)
    Score.objects.filter(submission=w["runs"]["b"]).update(
        private_primary=0.9, private_result={"metrics": {"f1_macro": 0.9, "accuracy": 0.9}})
    assert accuracy(client, DEV + "?part=private")["Team B"] == 0.9
    assert accuracy(client, DEV + "?part=public")["Team B"] == 0.8
    run(w, "bob", "Team B", "dev", 18, 0, primary=True)      # 10 public + 8 private right
    queue.drain()
    assert accuracy(client, DEV + "?part=public")["Team B"] == 1.0
    assert accuracy(client, DEV + "?part=private")["Team B"] == 0.8
