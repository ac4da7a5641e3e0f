"""Visibility rules of leaderboards and result pages (docs/platform.md), checked on
order, ranks, counts and timestamps, not only on blanked values.

The strongest check is a swap: everything a participant or anonymous visitor
sees of a board whose scores are hidden must stay byte for byte the same when
the stored scores of the runs are exchanged, since nothing shown may depend on
a score (issue 20, finding 1).
"""
from __future__ import annotations

import datetime as dt
import re

import pytest

from shareval.platform.leaderboards import rows as leaderboard
from shareval.platform.competitions.models import Phase
from shareval.platform.submissions import queue, service
from shareval.platform.submissions.models import Score

from ..factories import shows_number, submit

NOW = dt.datetime.now(dt.timezone.utc)


@pytest.fixture
def blind(world):
    """Eval (blind, open, unreleased): A's best run is its first, B has one run.
    By score the order would be A (17) then B (13); A's latest run scores 9."""
    w = world
    runs = {"a1": submit(w, "alice", "Team A", "eval", 17, at=NOW - dt.timedelta(hours=5)),
            "a2": submit(w, "carol", "Team A", "eval", 9, at=NOW - dt.timedelta(hours=3)),
            "b1": submit(w, "bob", "Team B", "eval", 13, at=NOW - dt.timedelta(hours=4))}
    queue.drain()
    for s in runs.values():
        s.refresh_from_db()
    return {**w, "runs": runs}


def swap_scores(dataset) -> None:
    """Rotate the stored scores (results and primary values) among the dataset's runs."""
    scores = list(Score.objects.filter(submission__dataset=dataset, current=True)
                  .order_by("pk"))
    assert len(scores) >= 2
    values = [(s.result, s.primary) for s in scores]
    for s, (result, primary) in zip(scores, values[1:] + values[:1]):
        s.result, s.primary = result, primary
        s.save(update_fields=["result", "primary"])


def seen(client, w, user, pages) -> dict[str, str]:
    client.logout()
    if user is not None:
        client.force_login(w["users"][user])
    out = {}
    for url in pages:
        r = client.get(url)
        assert r.status_code == 200, (url, r.status_code)
        # per-request tokens (CSRF, the CSP nonce) differ on every load, whatever the scores
        body = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", r.content.decode())
        out[url] = re.sub(r'nonce="[^"]*"', "", body)
    return out


def participant_pages(w, runs) -> list[str]:
    c = w["comp"].slug
    return [f"/api/competitions/{c}/leaderboard/eval/eval/", f"/c/{c}/leaderboard/eval/eval/",
            f"/api/competitions/{c}/", f"/c/{c}/", f"/c/{c}/submissions/",
            f"/api/submissions/?competition={c}", f"/api/submissions/{runs['a1'].pk}/",
            f"/s/{runs['a1'].pk}/", f"/s/{runs['a2'].pk}/"]


def test_nothing_shown_of_a_blind_board_depends_on_the_scores(blind, client):
    w, runs = blind, blind["runs"]
    pages = participant_pages(w, runs)
    views = {None: pages[:4], "bob": pages[:4], "alice": pages}    # anonymous, B, A
    before = {who: seen(client, w, who, urls) for who, urls in views.items()}
    swap_scores(w["ds"]["eval"])
    after = {who: seen(client, w, who, urls) for who, urls in views.items()}
    for who in before:
        for url in before[who]:
            assert before[who][url] == after[who][url], (who, url)
    # and the swap did change what the organizer sees: the test can tell
    org_before = leaderboard.rows(w["ds"]["eval"])[1]
    swap_scores(w["ds"]["eval"])
    assert leaderboard.rows(w["ds"]["eval"])[1] != org_before


def test_blind_board_rows_latest_run_by_team_name_no_ranks(blind, client):
    w, runs = blind, blind["runs"]
    board = client.get(f"/api/competitions/{w['comp'].slug}/leaderboard/eval/eval/").json()
    assert board["columns"] == [] and board["human"] == []
    rows = board["rows"]
    assert [r["team"] for r in rows] == ["Team A", "Team B"]        # by name, not by score
    assert [r["rank"] for r in rows] == [None, None]
    assert [r["metrics"] for r in rows] == [{}, {}]
    assert [r["run"] for r in rows] == ["latest", "latest"]
    # A's row is its latest run (a2, the worse one), never its best (a1)
    assert rows[0]["submitted"] == runs["a2"].created.isoformat()
    assert rows[1]["submitted"] == runs["b1"].created.isoformat()
    assert [r["runs"] for r in rows] == [2, 1]
    html = client.get(f"/c/{w['comp'].slug}/leaderboard/eval/eval/").content.decode()
    assert len(re.findall(r'<td class="num"></td>', html)) == 2          # empty rank cells
    assert "latest scored run" in html and "no ranks" in html
    assert runs["a1"].created.isoformat()[:16] not in html


def test_blind_board_primary_run_is_the_row_without_scores(blind, client):
    w, runs = blind, blind["runs"]
    service.make_primary(runs["a1"], w["users"]["alice"])
    rows = client.get(f"/api/competitions/{w['comp'].slug}/leaderboard/eval/eval/").json()["rows"]
    assert (rows[0]["team"], rows[0]["run"]) == ("Team A", "primary")
    assert rows[0]["submitted"] == runs["a1"].created.isoformat()
    assert rows[0]["rank"] is None and rows[0]["metrics"] == {}


def test_latest_run_wins_even_when_a_later_upload_is_still_unscored(blind, client):
    w, runs = blind, blind["runs"]
    pending = submit(w, "alice", "Team A", "eval", 20, at=NOW - dt.timedelta(hours=1))
    rows = client.get(f"/api/competitions/{w['comp'].slug}/leaderboard/eval/eval/").json()["rows"]
    assert rows[0]["submitted"] == runs["a2"].created.isoformat() and rows[0]["runs"] == 2
    queue.drain()
    rows = client.get(f"/api/competitions/{w['comp'].slug}/leaderboard/eval/eval/").json()["rows"]
    assert rows[0]["submitted"] == pending.created.isoformat() and rows[0]["runs"] == 3


def test_released_board_ranks_by_score_best_run_and_organizer_always(blind, client):
    w, runs = blind, blind["runs"]
    client.force_login(w["org"])
    rows = client.get(f"/api/competitions/{w['comp'].slug}/leaderboard/eval/eval/").json()["rows"]
    assert [(r["team"], r["rank"], r["run"]) for r in rows] == [("Team A", 1, "best"),
                                                                ("Team B", 2, "best")]
    assert rows[0]["submitted"] == runs["a1"].created.isoformat()
    phase = w["ds"]["eval"].phase
    phase.released = Phase.TOP
    phase.save()
    client.force_login(w["users"]["bob"])
    board = client.get(f"/api/competitions/{w['comp'].slug}/leaderboard/eval/eval/").json()
    assert [(r["team"], r["rank"]) for r in board["rows"]] == [("Team A", 1), ("Team B", 2)]
    assert board["rows"][0]["metrics"]["accuracy"] == pytest.approx(17 / 20)
    assert board["columns"][0] == "f1_macro"


def test_tied_scores_share_a_rank_and_then_go_by_team_name(world):
    w = world
    submit(w, "bob", "Team B", "dev", 15, at=NOW - dt.timedelta(hours=2))
    submit(w, "alice", "Team A", "dev", 15, at=NOW - dt.timedelta(hours=1))     # same file
    queue.drain()
    _, rows = leaderboard.rows(w["ds"]["dev"])
    assert [(r["team"], r["rank"]) for r in rows] == [("Team A", 1), ("Team B", 1),
                                                      ("Baseline", 3)]
    assert rows[0]["metrics"] == rows[1]["metrics"]


def test_lower_is_better_reverses_the_ranking(world):
    w = world
    submit(w, "alice", "Team A", "dev", 18, at=NOW - dt.timedelta(hours=2))
    submit(w, "bob", "Team B", "dev", 14, at=NOW - dt.timedelta(hours=1))
    queue.drain()
    task = w["ds"]["dev"].task
    task.lower_is_better = True
    task.save()
    w["ds"]["dev"].refresh_from_db()
    _, rows = leaderboard.rows(w["ds"]["dev"])
    assert [(r["team"], r["rank"]) for r in rows] == [("Baseline", 1), ("Team B", 2),
                                                      ("Team A", 3)]


@pytest.fixture
def no_feedback(world):
    w = world
    ds = w["ds"]["dev"]
    ds.feedback = False
    ds.save()
    runs = {"a1": submit(w, "alice", "Team A", "dev", 19, at=NOW - dt.timedelta(hours=3)),
            "a2": submit(w, "alice", "Team A", "dev", 5, at=NOW - dt.timedelta(hours=2))}
    queue.drain()
    return {**w, "runs": runs}


def test_feedback_false_dataset_shows_no_scores_and_no_score_order(no_feedback, client):
    w, runs = no_feedback, no_feedback["runs"]
    c = w["comp"].slug
    client.force_login(w["users"]["alice"])
    board = client.get(f"/api/competitions/{c}/leaderboard/dev/dev/").json()
    assert board["scores"] != "shown" and board["columns"] == []
    assert [(r["team"], r["rank"], r["run"], r["metrics"]) for r in board["rows"]] == [
        ("Baseline", None, "primary", {}), ("Team A", None, "latest", {})]
    assert board["rows"][1]["submitted"] == runs["a2"].created.isoformat()
    mine = client.get(f"/api/submissions/{runs['a1'].pk}/").json()["score"]
    assert mine == {"hidden": "scores of this phase are not released yet"}
    for url in (f"/s/{runs['a1'].pk}/", f"/c/{c}/submissions/", f"/c/{c}/leaderboard/dev/dev/"):
        body = client.get(url).content.decode()
        assert not shows_number(body, "0.95") and not shows_number(body, "0.25"), url
    swapped = client.get(f"/api/competitions/{c}/leaderboard/dev/dev/").json()
    swap_scores(w["ds"]["dev"])
    assert client.get(f"/api/competitions/{c}/leaderboard/dev/dev/").json() == swapped


def test_feedback_false_follows_the_release_by_hand_and_by_schedule(no_feedback, client):
    w = no_feedback
    c = w["comp"].slug
    phase = w["ds"]["dev"].phase
    phase.release_top_at = NOW + dt.timedelta(hours=1)
    phase.save()
    board = client.get(f"/api/competitions/{c}/leaderboard/dev/dev/").json()
    assert board["scores"] != "shown"
    phase.release_top_at = NOW - dt.timedelta(minutes=1)
    phase.save()
    board = client.get(f"/api/competitions/{c}/leaderboard/dev/dev/").json()
    assert board["scores"] == "shown"
    assert [(r["team"], r["rank"], r["run"]) for r in board["rows"]] == [
        ("Team A", 1, "best"), ("Baseline", 2, "primary")]
    phase.release_top_at, phase.released = None, Phase.TOP
    phase.save()
    assert client.get(f"/api/competitions/{c}/leaderboard/dev/dev/").json()["scores"] == "shown"


def test_judged_columns_follow_the_score_rules(blind, client):
    import json as _json

    from django.contrib.auth import get_user_model

    from shareval.platform.judging import build, service as judging
    from shareval.platform.judging.models import Campaign
    w = blind
    camp = Campaign.objects.create(dataset=w["ds"]["eval"], slug="sbs", title="SbS",
                                   design=Campaign.SIDE_BY_SIDE, judges_per_item=1)
    build.load_items(camp, "\n".join(_json.dumps({"key": f"p{i}", "payload": {"systems": [
        {"team": "Team A", "output": ["x"]}, {"team": "Team B", "output": ["y"]}]}})
        for i in range(3)))
    judge = get_user_model().objects.create_user("j", password="x-pass-123")
    camp.judges.set([judge])
    while (a := judging.next_assignment(camp, judge)) is not None:
        assert judging.submit(a, {"scores": {"Team A": 1, "Team B": -1}})
    url = f"/api/competitions/{w['comp'].slug}/leaderboard/eval/eval/"
    client.force_login(w["users"]["alice"])
    board = client.get(url).json()
    assert board["human"] == [] and all("human" not in r for r in board["rows"])
    assert "judged" not in client.get(f"/c/{w['comp'].slug}/leaderboard/eval/eval/")\
        .content.decode()
    client.force_login(w["org"])
    board = client.get(url).json()
    assert [h["campaign"] for h in board["human"]] == ["SbS"]
    assert [r["human"][0]["estimate"] for r in board["rows"]] == [3, -3]


def test_blind_board_with_board_options_depends_on_no_score(tmp_path, db, client):
    """Several runs per team, chosen columns, a run taken off the board and a
    disqualified one (issue 24): the blind board still shows nothing that depends
    on a score, and neither removed run appears."""
    from shareval.platform.submissions import runs

    from ..factories import make_world
    w = make_world(tmp_path, options={"eval": {"board": {
        "runs": "all", "team_visibility": True, "columns": [{"metric": "accuracy",
                                                            "precision": 2}]}}})
    h = dt.timedelta(hours=1)
    rs = [submit(w, "alice", "Team A", "eval", 17, at=NOW - 5 * h),
          submit(w, "carol", "Team A", "eval", 9, at=NOW - 4 * h),
          submit(w, "bob", "Team B", "eval", 13, at=NOW - 3 * h),
          submit(w, "bob", "Team B", "eval", 15, at=NOW - 2 * h)]
    queue.drain()
    runs.set_on_board(rs[1], w["users"]["alice"], False)
    runs.disqualify(rs[3], w["org"], "late")
    pages = ["/api/competitions/tiny/leaderboard/eval/eval/", "/c/tiny/leaderboard/eval/eval/"]
    rows = client.get(pages[0]).json()["rows"]
    assert [(r["team"], r["rank"], r["metrics"]) for r in rows] == [
        ("Team A", None, {}), ("Team B", None, {})]
    assert [r["submitted"] for r in rows] == [rs[0].created.isoformat(),
                                              rs[2].created.isoformat()]
    before = {who: seen(client, w, who, pages) for who in (None, "alice", "bob")}
    swap_scores(w["ds"]["eval"])
    assert before == {who: seen(client, w, who, pages) for who in (None, "alice", "bob")}
