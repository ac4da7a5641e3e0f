"""Words and numbers the pages show: metric and count labels, counts as whole
numbers, undefined values, the order of metric columns (the same on SQLite and
PostgreSQL), and the significance comparison with a team's earlier run."""
from __future__ import annotations

import re

import pytest

from shareval import stats
from shareval.platform.labels import label, number, ordered, value
from shareval.platform.submissions import queue
from shareval.platform.submissions.models import Score

from .factories import submit
from .test_webui import text_of

RAW = ("Ci low", "Ci high", "P bootstrap", "P randomization", "Map@1", "Partial f0 5", "nan",
       "n/a")


def test_metric_and_count_names_read_as_words():
    assert [label(k) for k in ("map@1", "map@10", "p@10", "recall@100", "ndcg@10")] == \
        ["MAP@1", "MAP@10", "P@10", "Recall@100", "nDCG@10"]
    assert label("partial_f0_5") == "F0.5 (partial match)"
    assert label("exact_fp") == "FP (exact match)"
    assert [label(k) for k in ("ci_low", "ci_high", "p_bootstrap", "p_randomization")] == \
        ["95% CI low", "95% CI high", "p (bootstrap)", "p (randomization)"]
    assert label("x3_raw") == "X3 (raw judgments)"


def test_counts_are_whole_and_undefined_values_are_a_dash():
    assert value("tp", 59.0) == "59" and value("x1", 4.0) == "4"
    assert value("num_rel", 2.0) == "2" and value("records", 12) == "12"
    assert value("f1", 1.0) == "1.0000"                     # a score, not a count
    assert value("false_alarms", 0.25) == "0.2500"          # a rate under a count's name
    assert number(float("nan")) == "—" and number("NaN") == "—"
    assert value("f1", float("nan")) == "—"


def test_metric_columns_follow_the_declared_order():
    assert ordered(["recall_macro", "precision_macro", "f1_macro"], first="f1_macro") == \
        ["f1_macro", "precision_macro", "recall_macro"]
    assert ordered(["ndcg@10", "p@10", "map@10", "map@1", "zz", "aa", "p@5"]) == \
        ["map@1", "map@10", "p@5", "p@10", "ndcg@10", "aa", "zz"]


def test_board_csv_and_result_page_list_metrics_in_one_order_whatever_the_json_order(
        world, client, settings):
    """PostgreSQL's JSON columns keep keys in their own order (shorter keys first),
    SQLite's in the scorer's: the pages must not depend on either."""
    settings.BOARD_CACHE = False
    sub = submit(world)
    queue.drain()

    def columns():
        return client.get("/api/competitions/tiny/leaderboard/dev/dev/").json()["columns"]
    as_scored = columns()
    for score in Score.objects.all():               # the stored key order, reversed
        m = score.result["metrics"]
        score.result = dict(score.result, metrics=dict(reversed(list(m.items()))))
        score.save()
    assert columns() == as_scored == [
        "f1_macro", "precision_macro", "recall_macro", "accuracy", "f1_micro",
        "precision_micro", "recall_micro", "f1_weighted", "precision_weighted",
        "recall_weighted"]
    client.force_login(world["org"])
    header = client.get("/c/tiny/organize/results.csv").content.decode().splitlines()[0]
    shown = [c for c in header.split(",") if c in as_scored]
    assert shown == ordered(shown)
    page = client.get(f"/s/{sub.pk}/").content.decode()
    titles = re.findall(r'<td title="([^"]+)">', page.split('id="metrics"')[1].split("</table>")[0])
    assert titles == as_scored


def comparison(units: int, p_boot: float, p_rand: float) -> dict:
    return {"previous": None, "metric": "f1_macro", "units": units,
            "metrics": {"f1_macro A": 0.75, "f1_macro B": 0.5, "difference": 0.25,
                        "ci_low": 0.1, "ci_high": 0.4, "p_bootstrap": p_boot,
                        "p_randomization": p_rand}, "conventions": {}}


def test_a_comparison_on_too_few_units_decides_nothing_and_says_which_test_decides(
        world, client):
    first = submit(world, correct=10)
    queue.drain()
    sub = submit(world, correct=15)
    queue.drain()
    score = sub.current_score
    assert score.comparison["units"] == 20 and score.comparison["previous"] == str(first.pk)
    client.force_login(world["users"]["alice"])
    page = client.get(f"/s/{sub.pk}/").content.decode()
    text = text_of(page)
    assert "randomization test decides" in text and "20 paired units" in text
    for raw in RAW:
        assert not re.search(rf"\b{re.escape(raw)}\b", text), raw
    assert "p (bootstrap)" in text and "95% CI low" in text and "Difference (A − B)" in text

    Score.objects.filter(pk=score.pk).update(comparison=dict(
        comparison(4, 0.001, 0.1104), previous=str(first.pk)))
    text = text_of(client.get(f"/s/{sub.pk}/").content.decode())
    decision = re.sub(r"\s+", " ", text.split("Against your previous best")[1])
    assert "No decision: only 4 paired units" in decision
    assert "with fewer than 10 neither test means anything" in decision

    Score.objects.filter(pk=score.pk).update(comparison=dict(
        comparison(40, 0.001, 0.004), previous=str(first.pk)))
    text = text_of(client.get(f"/s/{sub.pk}/").content.decode())
    assert "A and B differ (randomization test, p < 0.05)" in text


def test_the_command_line_comparison_warns_below_the_threshold():
    assert stats.decision(4, 0.001).startswith("no decision")
    assert stats.decision(10, 0.2) == "no significant difference (randomization test, p ≥ 0.05)"
    assert "4 paired units" in stats.too_few_units(4)
    assert stats.MIN_UNITS == 10 and "randomization test decides" in \
        stats.COMPARE_CONVENTIONS["decision"]


@pytest.mark.parametrize("judges", [1, 2])
def test_kendalls_w_is_never_nan_on_the_results_page(judges):
    from django.template.loader import render_to_string
    nan = float("nan")
    cons = {"order": ["A", "B"], "points": {"A": 1, "B": 0}, "rankings": judges,
            "w": nan if judges == 1 else 1.0, "mean_w": nan if judges == 1 else 1.0,
            "undefined": judges == 1, "publications": [], "kemeny": None}
    html = render_to_string("annotation/results.html", {
        "st": {"title": "S", "pk": 1}, "comp": {"slug": "c"}, "cons": cons, "scores": [],
        "status": {"reviewed": 0, "sampled": 0}, "trail": []})
    agreement = text_of(html.split('id="agreement"')[1].split("</p>")[0])
    assert "nan" not in agreement.lower()
    assert ("undefined" in agreement) == (judges == 1)
