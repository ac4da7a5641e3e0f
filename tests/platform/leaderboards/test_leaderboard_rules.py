"""The board rules of ``leaderboards/rows.py`` and ``leaderboards/boards.py``
(docs/platform.md, "Leaderboards"), on rows written straight to the database so
every score, timestamp and state is chosen: which run is a team's row, the order,
ranks (ties share one: 1, 2, 2, 4), run counts, timestamps and columns with
scores shown; with scores hidden (blind or ``feedback: false`` before release) the
latest run by team name, no ranks, no metrics, nothing read from a score.

Teams are made so that the order by name differs from the order of creation
(``Aardvark`` is made last), and scores include 0.0, so an order that forgot
the name, or read a zero as missing, shows. It is the file that owns both
modules in ``bench/mutate.py``.
"""
from __future__ import annotations

from shareval.platform.leaderboards import boards
from shareval.platform.leaderboards import rows as leaderboard
from shareval.platform.submissions.models import Score, Submission

from ..rules_world import H, rw, scored, team  # noqa: F401  (rw: fixture)


def view(rows, *keys):
    keys = keys or ("team", "rank", "run", "runs")
    return [tuple(r[k] for k in keys) for r in rows]


def test_one_row_per_team_best_run_ranked_ties_share_a_rank(rw):
    w, t = rw, rw["now"]
    team(w, "Aardvark", "dave")
    a = [scored(w, "Team A", "dev", 0.6, t - 5 * H), scored(w, "Team A", "dev", 0.8, t - 4 * H),
         scored(w, "Team A", "dev", 0.7, t - 3 * H)]
    b = scored(w, "Team B", "dev", 0.8, t - 2 * H)
    z = scored(w, "Aardvark", "dev", 0.8, t - 1 * H)
    base = scored(w, "Baseline", "dev", 0.0, t - 6 * H)
    cols, rows = leaderboard.rows(w["ds"]["dev"])
    assert cols == ["accuracy"]
    # three teams tie at 0.8: rank 1 each, by name; the next rank is 4
    assert view(rows) == [("Aardvark", 1, "best", 1), ("Team A", 1, "best", 3),
                          ("Team B", 1, "best", 1), ("Baseline", 4, "best", 1)]
    assert [r["submitted"] for r in rows] == [z.created.isoformat(), a[1].created.isoformat(),
                                              b.created.isoformat(), base.created.isoformat()]
    assert [r["metrics"] for r in rows] == [{"accuracy": 0.8}] * 3 + [{"accuracy": 0.0}]
    assert [r["baseline"] for r in rows] == [False, False, False, True]


def test_ranks_after_a_tie_and_a_zero_score_is_a_score(rw):
    w, t = rw, rw["now"]
    scored(w, "Team A", "dev", 0.9, t - 3 * H)
    scored(w, "Team B", "dev", 0.0, t - 2 * H)          # zero: lowest, not missing
    scored(w, "Baseline", "dev", 0.5, t - H)
    team(w, "Aardvark", "dave")
    scored(w, "Aardvark", "dev", 0.5, t)
    _, rows = leaderboard.rows(w["ds"]["dev"])
    assert view(rows, "team", "rank") == [("Team A", 1), ("Aardvark", 2), ("Baseline", 2),
                                          ("Team B", 4)]


def test_lower_is_better_and_a_missing_primary_goes_last(rw):
    w, t = rw, rw["now"]
    w["task"].lower_is_better = True
    w["task"].save()
    scored(w, "Team A", "dev", 0.3, t - 4 * H)
    scored(w, "Team A", "dev", 0.2, t - 3 * H)          # A's best is its lowest
    scored(w, "Team A", "dev", None, t - 5 * H)         # ... not its run without a value
    scored(w, "Team B", "dev", 0.0, t - 2 * H)
    scored(w, "Baseline", "dev", None, t - H)          # scored, but no primary value
    ds = w["ds"]["dev"]
    ds.refresh_from_db()
    _, rows = leaderboard.rows(ds)
    assert view(rows, "team", "rank", "metrics") == [
        ("Team B", 1, {"accuracy": 0.0}), ("Team A", 2, {"accuracy": 0.2}),
        ("Baseline", 3, {"accuracy": None})]


def test_a_missing_primary_goes_last_when_higher_is_better(rw):
    w, t = rw, rw["now"]
    scored(w, "Team A", "dev", None, t - 2 * H)
    scored(w, "Team A", "dev", 0.1, t - 3 * H)          # the team's scored value wins
    scored(w, "Team B", "dev", None, t - H)
    scored(w, "Baseline", "dev", -0.5, t)
    _, rows = leaderboard.rows(w["ds"]["dev"])
    assert view(rows, "team", "rank", "runs") == [("Team A", 1, 2), ("Baseline", 2, 1),
                                                  ("Team B", 3, 1)]
    assert rows[0]["metrics"] == {"accuracy": 0.1}


def test_primary_run_is_the_row_even_when_worse(rw):
    w, t = rw, rw["now"]
    scored(w, "Team A", "dev", 0.9, t - 3 * H)
    p = scored(w, "Team A", "dev", 0.2, t - 2 * H, kind=Submission.PRIMARY)
    scored(w, "Team B", "dev", 0.5, t - H)
    _, rows = leaderboard.rows(w["ds"]["dev"])
    assert view(rows) == [("Team B", 1, "best", 1), ("Team A", 2, "primary", 2)]
    assert rows[1]["submitted"] == p.created.isoformat()
    # an unscored primary: the best scored run stands in
    w2 = {**w}
    Submission.objects.filter(pk=p.pk).update(state=Submission.RUNNING)
    _, rows = leaderboard.rows(w2["ds"]["dev"])
    assert view(rows) == [("Team A", 1, "best", 1), ("Team B", 2, "best", 1)]


def test_equal_scores_within_a_team_pick_the_earliest_run(rw):
    w, t = rw, rw["now"]
    late = scored(w, "Team A", "dev", 0.5, t - H)
    early = scored(w, "Team A", "dev", 0.5, t - 2 * H)
    _, rows = leaderboard.rows(w["ds"]["dev"])
    assert rows[0]["submitted"] == early.created.isoformat() != late.created.isoformat()
    # same instant: the first score written
    first = scored(w, "Team B", "dev", 0.5, t - 3 * H)
    scored(w, "Team B", "dev", 0.5, t - 3 * H, metrics={"f1_macro": 0.1})
    cols, rows = leaderboard.rows(w["ds"]["dev"])
    assert cols == ["accuracy"] and rows[1]["team"] == "Team B"     # not the later f1_macro
    assert rows[1]["submitted"] == first.created.isoformat()


def test_runs_that_never_appear(rw):
    w, t = rw, rw["now"]
    for state in (Submission.CANCELLED, Submission.FAILED, Submission.REJECTED,
                  Submission.RUNNING, Submission.QUEUED, Submission.VALIDATED):
        scored(w, "Team A", "dev", 0.99, t - H, state=state)
    scored(w, "Team A", "dev", 0.98, t - H, disqualified="copied")
    scored(w, "Team A", "dev", 0.97, t - H, on_board=False)
    old = scored(w, "Team A", "dev", 0.96, t - H, current=False)
    Score.objects.create(submission=old, scorer_version="v2", reference_digest="d",
                         result={"metrics": {"accuracy": 0.1}}, primary=0.1, current=True)
    scored(w, "Team B", "dev", 0.95, t - 2 * H, state=Submission.CANCELLED)
    scored(w, "Team B", "eval", 0.94, t - 2 * H)            # another dataset's board
    scored(w, "Baseline", "eval", 0.93, t - 2 * H)
    kept = scored(w, "Team A", "dev", 0.3, t - 3 * H)
    _, rows = leaderboard.rows(w["ds"]["dev"])
    assert view(rows, "team", "runs", "metrics") == [("Team A", 2, {"accuracy": 0.3})]
    assert rows[0]["submitted"] == kept.created.isoformat()
    _, rows = leaderboard.rows(w["ds"]["dev"], scores=False)
    assert view(rows, "team", "runs") == [("Team A", 2)]
    _, rows = boards.all_rows(w["ds"]["dev"], True)
    assert view(rows, "team", "runs", "metrics") == [("Team A", 2, {"accuracy": 0.3}),
                                                     ("Team A", 2, {"accuracy": 0.1})]


def test_columns_primary_first_then_scalar_metrics_in_order(rw):
    w, t = rw, rw["now"]
    w["task"].primary_metric = "f1"
    w["task"].save()
    scored(w, "Team A", "dev", 0.4, t - H, metrics={"f1": 0.7, "recall": 0.6, "ok": True,
                                                   "per_label": {"x": 1}, "note": "n"})
    scored(w, "Team B", "dev", 0.9, t - 2 * H, metrics={"f1": 0.5, "precision": 1})
    ds = w["ds"]["dev"]
    ds.refresh_from_db()
    cols, rows = leaderboard.rows(ds)
    # the rows' order follows the primary value stored with the score (A 0.4, B 0.9);
    # the columns after the primary one in the declared order (platform/labels.py),
    # whatever order the rows' metrics came in
    assert cols == ["f1", "precision", "recall", "accuracy"]
    assert view(rows, "team", "rank") == [("Team B", 1), ("Team A", 2)]
    assert rows[0]["metrics"] == {"f1": 0.5, "accuracy": 0.9, "recall": None, "precision": 1}
    assert rows[1]["metrics"] == {"f1": 0.7, "accuracy": 0.4, "recall": 0.6,
                                  "precision": None}
    assert leaderboard.scalar_metrics({"metrics": {"a": 1, "b": 2.5, "c": False, "d": None,
                                                   "e": "x"}}) == {"a": 1, "b": 2.5}
    assert leaderboard.scalar_metrics({}) == {} == leaderboard.scalar_metrics({"metrics": None})


def test_private_part_ranks_by_the_private_scores(rw):
    w, t = rw, rw["now"]
    scored(w, "Team A", "dev", 0.9, t - 2 * H, private=0.1, private_metrics={"f1": 0.2})
    scored(w, "Team A", "dev", 0.2, t - 3 * H, private=0.6)
    scored(w, "Team B", "dev", 0.5, t - H, private=0.4)
    _, pub = leaderboard.rows(w["ds"]["dev"])
    cols, priv = leaderboard.rows(w["ds"]["dev"], part="private")
    assert view(pub, "team", "rank", "metrics") == [("Team A", 1, {"accuracy": 0.9}),
                                                    ("Team B", 2, {"accuracy": 0.5})]
    assert view(priv, "team", "rank", "metrics") == [("Team A", 1, {"accuracy": 0.6}),
                                                     ("Team B", 2, {"accuracy": 0.4})]
    assert cols == ["accuracy"]


def test_hidden_board_latest_run_by_name_no_rank_no_metrics(rw):
    w, t = rw, rw["now"]
    team(w, "Aardvark", "dave")
    a_best = scored(w, "Team A", "eval", 0.9, t - 5 * H)
    a_last = scored(w, "Team A", "eval", 0.1, t - 2 * H)
    b = scored(w, "Team B", "eval", 0.5, t - 4 * H)
    z = scored(w, "Aardvark", "eval", 0.3, t - 3 * H)
    cols, rows = leaderboard.rows(w["ds"]["eval"], scores=False)
    assert cols == []
    assert view(rows, "team", "rank", "run", "runs", "metrics") == [
        ("Aardvark", None, "latest", 1, {}), ("Team A", None, "latest", 2, {}),
        ("Team B", None, "latest", 1, {})]
    assert [r["submitted"] for r in rows] == [z.created.isoformat(),
                                              a_last.created.isoformat(),
                                              b.created.isoformat()]
    assert a_best.created.isoformat() not in {r["submitted"] for r in rows}
    assert leaderboard.blind_rows(w["ds"]["eval"]) == rows


def test_hidden_board_primary_then_last_written_at_one_instant(rw):
    w, t = rw, rw["now"]
    p = scored(w, "Team A", "eval", 0.1, t - 5 * H, kind=Submission.PRIMARY)
    scored(w, "Team A", "eval", 0.9, t - H)
    scored(w, "Team B", "eval", 0.9, t - 2 * H)
    last = scored(w, "Team B", "eval", 0.2, t - 2 * H, metrics={"f1_macro": 0.3})
    rows = leaderboard.blind_rows(w["ds"]["eval"])
    assert view(rows) == [("Team A", None, "primary", 2), ("Team B", None, "latest", 2)]
    assert rows[0]["submitted"] == p.created.isoformat()
    assert rows[1]["submitted"] == last.created.isoformat()


def test_hidden_board_does_not_change_when_scores_are_swapped(rw):
    w, t = rw, rw["now"]
    for k, (tm, v) in enumerate((("Team A", 0.9), ("Team B", 0.1), ("Team A", 0.4),
                                 ("Baseline", 0.6), ("Team B", 0.8))):
        scored(w, tm, "eval", v, t - (k + 1) * H)
    before = leaderboard.rows(w["ds"]["eval"], scores=False)
    several = boards.all_rows(w["ds"]["eval"], False)
    shown = leaderboard.rows(w["ds"]["eval"])
    scores = list(Score.objects.order_by("pk"))
    values = [(s.result, s.primary) for s in scores]
    for s, (res, pr) in zip(scores, values[2:] + values[:2]):
        s.result, s.primary = res, pr
        s.save()
    assert leaderboard.rows(w["ds"]["eval"], scores=False) == before
    assert boards.all_rows(w["ds"]["eval"], False) == several
    assert leaderboard.rows(w["ds"]["eval"]) != shown      # the swap is visible with scores


def test_several_runs_per_team_ranked_together(rw):
    w, t = rw, rw["now"]
    ds = w["ds"]["dev"]
    ds.board = {"runs": "all", "max_runs": 2}
    ds.save()
    a = [scored(w, "Team A", "dev", 0.2, t - 4 * H, kind=Submission.PRIMARY,
                factsheet={"method": "bm25"}),
         scored(w, "Team A", "dev", 0.9, t - 3 * H), scored(w, "Team A", "dev", 0.5, t - 2 * H),
         scored(w, "Team A", "dev", 0.7, t - 1 * H)]
    b = scored(w, "Team B", "dev", 0.5, t - 5 * H)
    team(w, "Aardvark", "dave")
    z = scored(w, "Aardvark", "dev", 0.0, t)
    cols, rows = boards.board_rows(ds, True)
    # A keeps its primary and its best other run (max_runs 2); ranks over all rows
    assert cols == ["accuracy"]
    assert view(rows, "team", "rank", "run", "runs", "method") == [
        ("Team A", 1, "contrastive", 4, ""), ("Team B", 2, "contrastive", 1, ""),
        ("Team A", 3, "primary", 4, "bm25"), ("Aardvark", 4, "contrastive", 1, "")]
    assert [r["submitted"] for r in rows] == [a[1].created.isoformat(),
                                              b.created.isoformat(),
                                              a[0].created.isoformat(),
                                              z.created.isoformat()]
    # hidden: by team name, primary first, then latest; no ranks, no metrics
    cols, rows = boards.board_rows(ds, False)
    assert cols == []
    assert view(rows, "team", "rank", "run", "metrics") == [
        ("Aardvark", None, "contrastive", {}), ("Team A", None, "primary", {}),
        ("Team A", None, "contrastive", {}), ("Team B", None, "contrastive", {})]
    assert rows[2]["submitted"] == a[3].created.isoformat()


def test_several_runs_ties_and_lower_is_better(rw):
    w, t = rw, rw["now"]
    ds = w["ds"]["dev"]
    ds.board = {"runs": "all"}
    ds.save()
    w["task"].lower_is_better = True
    w["task"].save()
    ds.refresh_from_db()
    scored(w, "Team B", "dev", 0.3, t - 5 * H)
    scored(w, "Team A", "dev", 0.3, t - 4 * H)
    scored(w, "Team A", "dev", 0.3, t - 6 * H)
    scored(w, "Team A", "dev", None, t - 3 * H)
    scored(w, "Team B", "dev", 0.0, t - 2 * H)
    _, rows = boards.all_rows(ds, True)
    assert view(rows, "team", "rank", "submitted") == [
        ("Team B", 1, (t - 2 * H).isoformat()), ("Team A", 2, (t - 6 * H).isoformat()),
        ("Team A", 2, (t - 4 * H).isoformat()), ("Team B", 2, (t - 5 * H).isoformat()),
        ("Team A", 5, (t - 3 * H).isoformat())]
    _, rows = boards.all_rows(ds, True, part="private")
    assert [r["metrics"]["accuracy"] for r in rows] == [None] * 5


def test_board_columns_and_precision(rw):
    w, t = rw, rw["now"]
    ds = w["ds"]["dev"]
    scored(w, "Team A", "dev", 0.123456, t - H, metrics={"f1": 0.98765, "recall": 0.5})
    ds.board = {"columns": [{"metric": "recall"}, {"metric": "f1", "precision": 2},
                            {"metric": "accuracy", "precision": 3}]}
    ds.save()
    cols, rows = boards.board_rows(ds, True)
    cols, precision = boards.shape(ds, cols, rows)
    assert cols == ["accuracy", "recall", "f1"]
    assert precision == {"f1": 2, "accuracy": 3}
    assert rows[0]["metrics"] == {"accuracy": 0.123, "recall": 0.5, "f1": 0.99}
    # without chosen columns: every column, unrounded
    ds.board = {}
    cols, rows = boards.board_rows(ds, True)
    assert boards.shape(ds, cols, rows) == (["accuracy", "f1", "recall"], {})
    assert rows[0]["metrics"]["accuracy"] == 0.123456


def test_rule_in_words_says_what_the_board_does(rw):
    ds = rw["ds"]["dev"]
    assert "ranked by accuracy, ties share a rank" in boards.rule(ds, True, False)
    assert "latest scored run; by team name, no ranks" in boards.rule(ds, False, False)
    ds.board = {"max_runs": 3}
    assert boards.rule(ds, True, True).startswith("up to 3 runs per team")
    assert "by team name, no ranks" in boards.rule(ds, False, True)
    ds.board = {}
    assert boards.rule(ds, True, True).startswith("every scored run of each team")


# --- ``runs: all`` and the board options, rule by rule (docs/records.md, "Boards")

def _several(w, max_runs=None, lower=False):
    ds = w["ds"]["dev"]
    ds.board = {"runs": "all", **({"max_runs": max_runs} if max_runs else {})}
    ds.save()
    w["task"].lower_is_better = lower
    w["task"].save()
    ds.refresh_from_db()
    return ds


def test_max_runs_keeps_the_primary_then_the_best_others(rw):
    """Runs are made so that the order of creation (the rows' ids) is not the
    order the rule asks for: best first, a zero is a score, no score goes last,
    equal scores keep the earliest run."""
    w, t = rw, rw["now"]
    ds = _several(w, max_runs=2)
    scored(w, "Team A", "dev", None, t - 1 * H)
    scored(w, "Team A", "dev", 0.0, t - 2 * H)
    scored(w, "Team A", "dev", 0.5, t - 3 * H)
    scored(w, "Team A", "dev", 0.1, t - 4 * H, kind=Submission.PRIMARY)
    scored(w, "Team B", "dev", 0.4, t - 1 * H)                   # the later of a tie, made first
    scored(w, "Team B", "dev", 0.4, t - 5 * H)
    scored(w, "Team B", "dev", 0.0, t - 6 * H)
    _, rows = boards.board_rows(ds, True)
    assert view(rows, "team", "rank", "run", "submitted") == [
        ("Team A", 1, "contrastive", (t - 3 * H).isoformat()),
        ("Team B", 2, "contrastive", (t - 5 * H).isoformat()),
        ("Team B", 2, "contrastive", (t - 1 * H).isoformat()),
        ("Team A", 4, "primary", (t - 4 * H).isoformat())]
    # lower is better: the lowest others are kept, a zero the best of them
    ds = _several(w, max_runs=2, lower=True)
    _, rows = boards.board_rows(ds, True)
    assert view(rows, "team", "rank", "submitted") == [
        ("Team A", 1, (t - 2 * H).isoformat()), ("Team B", 1, (t - 6 * H).isoformat()),
        ("Team A", 3, (t - 4 * H).isoformat()), ("Team B", 4, (t - 5 * H).isoformat())]


def test_hidden_several_runs_keep_the_latest_and_list_them_latest_first(rw):
    w, t = rw, rw["now"]
    ds = _several(w, max_runs=3)
    a = [scored(w, "Team A", "dev", 0.9, t - 1 * H, factsheet={"method": "crf"}),
         scored(w, "Team A", "dev", 0.8, t - 4 * H), scored(w, "Team A", "dev", 0.7, t - 2 * H),
         scored(w, "Team A", "dev", 0.6, t - 3 * H)]
    _, rows = boards.board_rows(ds, False)
    assert view(rows, "team", "rank", "submitted", "method", "runs") == [
        ("Team A", None, a[0].created.isoformat(), "crf", 4),
        ("Team A", None, a[2].created.isoformat(), "", 4),
        ("Team A", None, a[3].created.isoformat(), "", 4)]


def test_a_teams_rows_depend_on_its_own_runs_only(rw):
    """The board cache rebuilds one team's rows: ``entries`` of some teams are
    those teams' rows as in the whole board, with either board kind."""
    w, t = rw, rw["now"]
    a, b = w["teams"]["Team A"], w["teams"]["Team B"]
    scored(w, "Team A", "dev", 0.3, t - H, private=0.9)
    scored(w, "Team B", "dev", 0.6, t - H, private=0.2)
    for board in ({}, {"runs": "all"}):
        ds = w["ds"]["dev"]
        ds.board = board
        ds.save()
        whole = boards.entries(ds, True, "private")
        assert boards.entries(ds, True) == boards.entries(ds, True, "public")
        assert boards.entries(ds, True, "private", teams=[a.pk]) == {a.pk: whole[a.pk]}
        assert list(boards.entries(ds, False, teams=[b.pk])) == [b.pk]
        _, rows = boards.board_rows(ds, True, part="private")
        assert view(rows, "team", "rank") == [("Team A", 1), ("Team B", 2)]
    assert boards.all_entries(ds, True) == boards.all_entries(ds, True, "public")


def test_several_runs_show_a_code_runs_resources(rw):
    from shareval.platform.coderuns.models import CodeRun, CodeSubmission
    w, t = rw, rw["now"]
    ds = _several(w)
    scored(w, "Team A", "dev", 0.2, t - H)                        # an uploaded file
    out = scored(w, "Team B", "dev", 0.7, t - H)
    code = CodeSubmission.objects.create(team=w["teams"]["Team B"], dataset=ds,
                                         original_name="c.tar.gz", stored_name="c")
    CodeRun.objects.create(code_submission=code, stage=CodeRun.FINAL, state=CodeRun.OK,
                           output_submission=out, wall_seconds=12.5, cpu_seconds=30.0,
                           peak_mb=512.0)
    _, rows = boards.board_rows(ds, True)
    assert [(r["team"], r["efficiency"]) for r in rows] == [
        ("Team B", {"runtime_s": 12.5, "cpu_s": 30.0, "peak_mb": 512.0}), ("Team A", None)]


def test_a_column_left_out_is_not_sent(rw):
    w, t = rw, rw["now"]
    ds = w["ds"]["dev"]
    scored(w, "Team A", "dev", 0.5, t - H, metrics={"f1": 0.25, "recall": 0.75})
    ds.board = {"columns": [{"metric": "f1"}]}
    ds.save()
    cols, rows = boards.board_rows(ds, True)
    assert boards.shape(ds, cols, rows) == (["accuracy", "f1"], {})
    assert rows[0]["metrics"] == {"accuracy": 0.5, "f1": 0.25}


def test_the_rules_in_words_word_for_word(rw):
    ds = rw["ds"]["dev"]
    ds.board = {"max_runs": 3}
    assert boards.rule(ds, True, True) == ("up to 3 runs per team, its primary run first; "
                                           "ranked by accuracy, ties share a rank")
    assert boards.rule(ds, False, True) == (
        "up to 3 runs per team, its primary run first, then the latest; by team name, "
        "no ranks, since nothing may depend on unreleased scores")
    assert boards.rule(ds, True, False) == (
        "its primary run if flagged, else its best run by accuracy; ranked by accuracy, "
        "ties share a rank")
    assert boards.rule(ds, False, False) == (
        "its primary run if flagged, else its latest scored run; by team name, no ranks, "
        "since nothing may depend on unreleased scores")


def test_equal_scores_keep_the_earliest_run_whichever_was_made_first(rw):
    w, t = rw, rw["now"]
    ds = _several(w, max_runs=1)
    team(w, "Aardvark", "dave")
    scored(w, "Team B", "dev", 0.4, t - 1 * H)
    scored(w, "Team B", "dev", 0.4, t - 5 * H)
    scored(w, "Aardvark", "dev", 0.4, t - 5 * H)
    scored(w, "Aardvark", "dev", 0.4, t - 1 * H)
    _, rows = boards.board_rows(ds, True)
    assert view(rows, "team", "rank", "submitted") == [
        ("Aardvark", 1, (t - 5 * H).isoformat()), ("Team B", 1, (t - 5 * H).isoformat())]
