"""Board options (issue 24): several runs per team, chosen columns and precision, and
the public/private split, whose private part must not reach participants before
release through any page, API answer or file."""
from __future__ import annotations

import datetime as dt
import json

import pytest

from shareval.formats.errors import InvalidInput
from shareval.platform.leaderboards import boards
from shareval.platform.bundles.loader import read_bundle
from shareval.platform.competitions.models import Phase
from shareval.platform.submissions import queue, service, splits
from shareval.platform.submissions.models import Score

from ..factories import ITEMS, Upload, make_bundle, make_world, run_with_accuracy, shows_number
from ..access.test_visibility import seen, swap_scores

NOW = dt.datetime.now(dt.timezone.utc)
SEVERAL = {"runs": "all", "max_runs": 2,
           "columns": [{"metric": "f1_macro", "precision": 3}, {"metric": "accuracy",
                                                                "precision": 2}]}
PRIVATE = ITEMS[10:]          # the second half of the items is the private part


def up(w, user, team, ds, correct, at=None, **kw):
    return service.submit(w["users"][user], w["teams"][team], w["ds"][ds],
                          Upload(f"{user}-{correct}.tsv", run_with_accuracy(correct)),
                          now=at or NOW, **kw)


@pytest.fixture
def several(db, tmp_path):
    w = make_world(tmp_path, options={"dev": {"board": SEVERAL}, "eval": {"board": SEVERAL}})
    h = dt.timedelta(hours=1)
    runs = {"a1": up(w, "alice", "Team A", "dev", 17, NOW - 5 * h, primary=True,
                     factsheet={"method": "big"}),
            "a2": up(w, "alice", "Team A", "dev", 19, NOW - 4 * h, factsheet={"method": "bigger"}),
            "a3": up(w, "alice", "Team A", "dev", 8, NOW - 3 * h),
            "b1": up(w, "bob", "Team B", "dev", 18, NOW - 2 * h),
            "e1": up(w, "alice", "Team A", "eval", 17, NOW - 5 * h, primary=True),
            "e2": up(w, "alice", "Team A", "eval", 9, NOW - 4 * h),
            "e3": up(w, "bob", "Team B", "eval", 13, NOW - 3 * h)}
    queue.drain()
    return {**w, "runs": runs}


def test_several_runs_per_team_primary_first_ranked_together(several, client):
    r = several["runs"]
    board = client.get("/api/competitions/tiny/leaderboard/dev/dev/").json()
    rows = [(x["team"], x["run"], x["method"], x["rank"]) for x in board["rows"]]
    # A keeps 2 runs (max_runs): its primary (17) and its best other (19), not the 8
    assert rows == [("Team A", "contrastive", "bigger", 1), ("Team B", "contrastive", "", 2),
                    ("Team A", "primary", "big", 3), ("Baseline", "primary", "", 4)]
    assert board["runs_per_team"] == "several" and [x["runs"] for x in board["rows"]][:1] == [3]
    assert r["a3"].created.isoformat() not in json.dumps(board)
    html = client.get("/c/tiny/leaderboard/dev/dev/").content.decode()
    assert "Several runs per team" in html and html.count('class="method"') == 2


def test_columns_and_precision_from_the_bundle(several, client):
    board = client.get("/api/competitions/tiny/leaderboard/dev/dev/").json()
    assert board["columns"] == ["f1_macro", "accuracy"]
    assert board["precision"] == {"f1_macro": 3, "accuracy": 2}
    for row in board["rows"]:
        assert set(row["metrics"]) == {"f1_macro", "accuracy"}     # others are not sent
        for k, d in (("f1_macro", 3), ("accuracy", 2)):
            assert row["metrics"][k] == round(row["metrics"][k], d)
    html = client.get("/c/tiny/leaderboard/dev/dev/").content.decode()
    assert "Precision" not in html and "0.95<" in html          # a2: accuracy 19/20, 2 digits


def test_several_runs_on_a_blind_board_depend_on_no_score(several, client):
    w = several
    pages = ["/api/competitions/tiny/leaderboard/eval/eval/", "/c/tiny/leaderboard/eval/eval/"]
    rows = client.get(pages[0]).json()["rows"]
    assert [(x["team"], x["run"], x["rank"], x["metrics"]) for x in rows] == [
        ("Team A", "primary", None, {}), ("Team A", "contrastive", None, {}),
        ("Team B", "contrastive", None, {})]
    before = {who: seen(client, w, who, pages) for who in (None, "alice", "bob")}
    swap_scores(w["ds"]["eval"])
    after = {who: seen(client, w, who, pages) for who in (None, "alice", "bob")}
    assert before == after
    assert boards.board_rows(w["ds"]["eval"], True)[1][0]["metrics"]   # organizers see scores


def test_disqualified_and_hidden_runs_leave_the_several_runs_board(several, client):
    w, r = several, several["runs"]
    from shareval.platform.submissions import runs
    runs.disqualify(r["a2"], w["org"], "late")
    rows = client.get("/api/competitions/tiny/leaderboard/dev/dev/").json()["rows"]
    assert [(x["team"], x["run"], x["method"]) for x in rows if x["team"] == "Team A"] == [
        ("Team A", "primary", "big"), ("Team A", "contrastive", "")]


# ---------------------------------------------------------------------------
# public/private split

@pytest.fixture
def split(db, tmp_path):
    (tmp_path / "bundle").mkdir(parents=True)
    (tmp_path / "bundle" / "private.txt").write_text("\n".join(PRIVATE) + "\n")
    w = make_world(tmp_path, options={"dev": {"split": {"private": "private.txt"}}})
    # A gets the first 15 items right: all 10 public ones, 5 of the 10 private ones;
    # B gets 8 right: 8 public, no private one. Public: A > B; private: A > B but apart
    runs = {"a": up(w, "alice", "Team A", "dev", 15), "b": up(w, "bob", "Team B", "dev", 8)}
    queue.drain()
    for s in runs.values():
        s.refresh_from_db()
    return {**w, "runs": runs}


def private_values(w) -> set[str]:
    out = set()
    for s in w["runs"].values():
        m = s.current_score.private_result["metrics"]
        for k in ("accuracy", "f1_macro"):
            out |= {repr(m[k]), f"{m[k]:.4f}"}
    return out


def test_both_parts_are_scored_at_scoring_time(split):
    a = split["runs"]["a"].current_score
    assert a.result["metrics"]["accuracy"] == 1.0 and a.result["counts"]["items"] == 10
    assert a.private_result["metrics"]["accuracy"] == 0.5
    assert a.private_result["counts"]["items"] == 10
    assert a.primary == a.result["metrics"]["f1_macro"]
    assert a.private_primary == a.private_result["metrics"]["f1_macro"]
    assert a.comparison is None           # a paired test would read the private units


def test_private_part_never_leaks_before_release(split, client):
    w = split
    a, b = w["runs"]["a"], w["runs"]["b"]
    secret = private_values(w) - {"1.0", "1.0000", "0.0", "0.0000"}
    assert secret
    c = w["comp"].slug
    pages = [f"/api/competitions/{c}/leaderboard/dev/dev/", f"/c/{c}/leaderboard/dev/dev/",
             f"/api/competitions/{c}/leaderboard/dev/dev/?part=private",
             f"/c/{c}/leaderboard/dev/dev/?part=private", f"/api/competitions/{c}/",
             f"/c/{c}/", f"/c/{c}/submissions/", f"/api/submissions/?competition={c}",
             f"/api/submissions/{a.pk}/", f"/s/{a.pk}/"]
    views = {None: pages[:6], "bob": pages[:6] + [f"/api/submissions/{b.pk}/", f"/s/{b.pk}/"],
             "alice": pages}
    for who, urls in views.items():
        for url, body in seen(client, w, who, urls).items():
            for v in secret:
                assert not shows_number(body, v), (who, url, v)
    client.force_login(w["users"]["alice"])
    assert client.get(f"/api/submissions/{a.pk}/").json()["score"]["private"] == {
        "hidden": "scored; shown once the organizers release the results"}
    for url in (f"/c/{c}/organize/results.csv", f"/c/{c}/organize/runs.csv",
                f"/c/{c}/organize/export.tgz", f"/c/{c}/organize/submissions.zip"):
        assert client.get(url).status_code == 404, url
    client.force_login(w["org"])
    board = client.get(f"/api/competitions/{c}/leaderboard/dev/dev/?part=private").json()
    assert board["part"] == "private"
    assert board["rows"][0]["metrics"]["accuracy"] == 0.5
    assert "private_accuracy" in client.get(f"/c/{c}/organize/results.csv").content.decode()


def test_release_shows_the_private_part(split, client):
    w = split
    c = w["comp"].slug
    board = client.get(f"/api/competitions/{c}/leaderboard/dev/dev/").json()
    assert board["part"] == "public"
    # the baseline gets the first 10 items right: all public ones, so it ties with A
    assert [(r["team"], r["rank"], r["metrics"]["accuracy"]) for r in board["rows"]] == [
        ("Baseline", 1, 1.0), ("Team A", 1, 1.0), ("Team B", 3, 0.8)]
    Phase.objects.filter(pk=w["ds"]["dev"].phase_id).update(released=Phase.TOP)
    board = client.get(f"/api/competitions/{c}/leaderboard/dev/dev/").json()
    assert board["part"] == "private"
    assert [(r["team"], r["rank"], r["metrics"]["accuracy"]) for r in board["rows"]] == [
        ("Team A", 1, 0.5), ("Baseline", 2, 0.0), ("Team B", 2, 0.0)]
    page = client.get(f"/c/{c}/leaderboard/dev/dev/").content.decode()
    assert "<strong>private</strong> part" in page
    client.force_login(w["users"]["alice"])
    p = client.get(f"/api/submissions/{w['runs']['a'].pk}/").json()["score"]
    assert p["private"]["metrics"]["accuracy"] == 0.5


def test_seeded_fraction_split_is_fixed_by_the_seed(db, tmp_path):
    w = make_world(tmp_path, options={"dev": {"split": {"fraction": 0.5, "seed": 13}}})
    test = splits.private_test({"fraction": 0.5, "seed": 13})
    private = [i for i in ITEMS if test(i)]
    assert 0 < len(private) < len(ITEMS)
    assert private == [i for i in ITEMS if splits.private_test({"fraction": 0.5, "seed": 13})(i)]
    assert private != [i for i in ITEMS if splits.private_test({"fraction": 0.5, "seed": 14})(i)]
    s = up(w, "alice", "Team A", "dev", 20)
    queue.drain()
    sc = Score.objects.get(submission=s)
    assert sc.private_result["counts"]["items"] == len(private)
    assert sc.result["counts"]["items"] == len(ITEMS) - len(private)


def test_bundle_checks_the_split(tmp_path):
    root = make_bundle(tmp_path / "a", options={
        "dev": {"split": {"fraction": 1.5, "seed": 1}},
        "eval": {"split": {"private": "nowhere.txt"}, "concurrent": 0,
                 "board": {"runs": "many", "columns": [{"metric": "x", "precision": 99}]}}})
    with pytest.raises(InvalidInput) as e:
        read_bundle(root)
    text = e.value.render()
    for expected in ("split.fraction", "nowhere.txt not found", "concurrent", "board.runs",
                     "precision"):
        assert expected in text, text
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "all.txt").write_text("\n".join(ITEMS + ["zz"]))
    root = make_bundle(tmp_path / "b", options={"dev": {"split": {"private": "all.txt"}}})
    text = pytest.raises(InvalidInput, read_bundle, root).value.render()
    assert "1 ids are not units of the reference: zz" in text and "both parts need units" in text


def test_split_is_refused_for_a_task_without_support(tmp_path):
    import yaml
    root = make_bundle(tmp_path / "c", options={"dev": {"split": {"fraction": 0.5, "seed": 1}}})
    b = yaml.safe_load((root / "bundle.yaml").read_text())
    b["tasks"][0]["task"] = "rcc-fields-methods"     # no gold, no units
    (root / "bundle.yaml").write_text(yaml.safe_dump(b))
    text = pytest.raises(InvalidInput, read_bundle, root).value.render()
    assert "task rcc-fields-methods does not support a public/private split" in text


def test_competition_api_says_there_is_a_split_but_not_which_units(split, client):
    body = client.get("/api/competitions/tiny/").json()
    dev = body["phases"][0]["datasets"][0]
    assert dev["split"] is True and dev["runs_per_team"] == "one"
    text = json.dumps(body)
    assert "i15" not in text and "private.txt" not in text
    assert [f["name"] for f in body["factsheet"]][:2] == ["method", "paper"]


def test_several_runs_board_costs_the_same_queries_for_more_runs(several, client, settings):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    settings.BOARD_CACHE = False        # count the queries of building it, every time
    w = several
    url = "/api/competitions/tiny/leaderboard/dev/dev/"

    def count():
        with CaptureQueriesContext(connection) as q:
            assert client.get(url).status_code == 200
        return len(q.captured_queries)
    before = count()
    for k in range(6):
        up(w, "bob", "Team B", "dev", 5 + k, factsheet={"method": f"m{k}"})
    queue.drain()
    rows = client.get(url).json()["rows"]
    assert len(rows) == 5 and {r["runs"] for r in rows if r["team"] == "Team B"} == {7}
    assert count() == before
