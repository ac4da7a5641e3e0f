"""The report's tables built from stored results (pure: no server): cells by hand."""
import numpy as np
import pytest

from shareval.overview.report import Run, breakdown_tables, dataset_section, results_table
from shareval.tasks.base import UnitStats, weighted_mean


def rcc_run(label, per_pub):
    tp, fp, fn = (sum(v[i] for v in per_pub.values()) for i in range(3))
    p, r = tp / (tp + fp), tp / (tp + fn)
    return Run(label, label, "primary", True, {
        "metrics": {"f1": 2 * p * r / (p + r), "precision": p, "recall": r,
                    "tp": tp, "fp": fp, "fn": fn},
        "breakdowns": {"per_publication": {k: {"tp": a, "fp": b, "fn": c}
                                           for k, (a, b, c) in per_pub.items()}}})


def test_rcc_per_topic_is_micro_over_the_topic_publications():
    runs = [rcc_run("A", {"1": (2, 1, 0), "2": (1, 0, 1), "3": (0, 2, 2)}),
            rcc_run("B", {"1": (1, 0, 1), "2": (2, 0, 0), "3": (1, 1, 1)})]
    props = {"1": {"topic": "Health"}, "2": {"topic": "Health"}, "3": {"topic": "Labour"},
             "4": {"topic": "Unused"}}
    tables = {t.slug: t for t in breakdown_tables("x", "X", runs, "f1", False, props)}
    t = tables["x-per-publication-by-topic"]
    row = next(r for r in t.rows if r["value"] == "Health" and r["system"] == "A")
    # A on Health: tp 3, fp 1, fn 1 -> P 3/4, R 3/4, F1 3/4
    assert (row["units"], row["v:precision"], row["v:recall"], row["v:f1"]) == (2, .75, .75, .75)
    row = next(r for r in t.rows if r["value"] == "Labour" and r["system"] == "B")
    assert row["v:f1"] == pytest.approx(0.5)          # tp 1, fp 1, fn 1
    assert "Unused" not in {r["value"] for r in t.rows}   # no unit of that topic was scored
    assert any("micro" in n for n in t.notes)


def test_breakdown_separates_key_counts_from_results():
    runs = [Run(n, n, "primary", True, {
        "metrics": {"f1_macro": v},
        "breakdowns": {"per_document": {"d1": {"f1_macro": v, "sentences": 10, "positives": 4,
                                               "doc_id": "d1", "lang": "en"}}}})
        for n, v in (("A", 0.5), ("B", 0.25))]
    t = next(t for t in breakdown_tables("x", "X", runs, "f1_macro", False)
             if t.slug == "x-per-document")
    keys = [c.key for c in t.columns]
    # counts the same for every run are the document's own; the doc_id repeating the key goes
    assert keys == ["key", "p:sentences", "p:positives", "p:negatives", "p:lang", "system",
                    "v:f1_macro"]
    assert t.rows[0]["p:negatives"] == 6


def test_results_table_without_stats_says_why_and_ranks_ties_alike():
    runs = [Run(n, n, "primary", True, {"metrics": {"f1": v, "recall": float("nan")}})
            for n, v in (("A", 0.50001), ("B", 0.5), ("C", 0.1))]
    t = results_table("x", "X", runs, "f1", False, None, {})
    assert [r["rank"] for r in t.rows] == [1, 1, 3]       # 0.5000 and 0.5000 as written
    assert any("no interval for A, B, C" in n for n in t.notes)
    assert any("Recall is undefined" in n for n in t.notes)
    assert all(r["recall"] is None for r in t.rows)


def test_section_with_one_unit_per_language_gives_no_interval():
    def us(v):
        return UnitStats("m", ["d1 (en)", "d2 (de)"], np.array([[v], [v / 2]]), weighted_mean,
                         np.array([.5, .5]), np.array(["en", "de"]))
    runs = [Run(n, n, "primary", True, {"metrics": {"m": v}}, us(v))
            for n, v in (("A", 0.8), ("B", 0.4))]
    sec = dataset_section("x", "X", runs, "m", False, samples=200)
    res = sec.tables[0]
    assert all(r["ci"] is None for r in res.rows)
    assert any("only 2 units" in n for n in res.notes)
    # no pair decidable: no p matrix, no groups, only the list of pairs saying why
    assert [t.slug for t in sec.tables[:2]] == ["x-results", "x-pairs"]
    pair = sec.tables[1].rows[0]
    assert pair["verdict"] == "cannot decide"
    # no interval and no p where no test means anything; the reason is in the notes
    assert pair["ci"] is None and pair["p_bootstrap"] is None and pair["p_holm"] is None
    assert any("only 2 paired units" in n for n in sec.tables[1].notes)
