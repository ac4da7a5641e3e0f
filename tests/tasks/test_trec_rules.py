"""The trec task's result fields (docs/conventions.md, "Ranking"), whole, on cases small
enough to count by hand: counts, warnings with their query previews, the per-query
table with num_rel and num_ret, conventions, measure lists and option errors."""
import pytest

from shareval.formats.errors import InvalidInput, Problems
from shareval.formats.trec import read_qrels, read_run, write_qrels, write_run
from shareval.metrics.ranking import parse_measure
from shareval.tasks import get
from shareval.tasks.trec import parse_measures


def files(folder, qrels, run):
    write_qrels(folder / "qrels", qrels)
    write_run(folder / "run", run)
    return folder / "qrels", folder / "run"


def test_whole_result_by_hand(tmp_path):
    qrels = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"d": 0}, "q3": {"e": 1}}
    run = {"q1": {"b": 3.0, "a": 2.0, "x": 1.0}, "q2": {"d": 1.0}, "q8": {"z": 1.0}}
    q, r = files(tmp_path, qrels, run)
    res = get("trec").score(q, r, measures="P@2, MAP ,map")
    # q1 ranks b (0), a (1), x: P@2 1/2; AP over R = 2: (1/2) / 2; q2 and q3 score 0
    assert res.metrics == {"p@2": pytest.approx(0.5 / 3), "map": pytest.approx(0.25 / 3)}
    assert res.breakdowns["per_query"] == {
        "q1": {"p@2": 0.5, "map": 0.25, "num_rel": 2, "num_ret": 3},
        "q2": {"p@2": 0.0, "map": 0.0, "num_rel": 0, "num_ret": 1},
        "q3": {"p@2": 0.0, "map": 0.0, "num_rel": 1, "num_ret": 0}}
    assert res.counts == {"queries_evaluated": 3, "queries_in_qrels": 3, "queries_in_run": 3,
                          "queries_without_relevant": 1, "queries_missing_from_run": 1,
                          "run_queries_not_in_qrels": 1, "qrels_lines": 5, "run_lines": 5}
    assert res.warnings == [
        "1 queries have no relevant document (included with 0): q2",
        "1 judged queries are missing from the run (scored 0): q3",
        "1 run queries have no judgments (ignored): q8"]
    assert (res.conventions["rel_level"], res.conventions["exclude_empty"],
            res.conventions["score_precision"]) == (1, False, "float")
    # --rel-level 2: only c counts in q1, and c was not retrieved
    two = get("trec").score(q, r, measures="map", rel_level=2, exclude_empty=True)
    assert two.breakdowns["per_query"] == {"q1": {"map": 0.0, "num_rel": 1, "num_ret": 3}}
    # conventions.md, General: counts are integers (1, not 1.0, in the JSON)
    assert [type(two.breakdowns["per_query"]["q1"][k]) for k in ("num_rel", "num_ret")] == \
        [int, int]
    assert two.conventions["rel_level"] == 2 and two.conventions["exclude_empty"] is True
    assert two.counts["queries_without_relevant"] == 2
    assert two.counts["queries_missing_from_run"] == 0         # q3 is not evaluated
    assert two.warnings[0] == "2 queries have no relevant document (excluded from the " \
                              "averages): q2, q3"


def test_warnings_preview_five_queries_and_count_the_rest(tmp_path):
    qrels = {f"q{i}": {"a": 1} for i in range(7)}
    q, r = files(tmp_path, qrels, {"q0": {"a": 1.0}, **{f"u{i}": {"a": 1.0} for i in range(6)}})
    res = get("trec").score(q, r, measures="map")
    assert res.warnings == [
        "6 judged queries are missing from the run (scored 0): q1, q2, q3, q4, q5 (+1 more)",
        "6 run queries have no judgments (ignored): u0, u1, u2, u3, u4 (+1 more)"]


def test_no_relevant_anywhere_scores_0_with_a_warning(tmp_path):
    q, r = files(tmp_path, {"q1": {"a": 0}}, {"q1": {"a": 1.0}})
    res = get("trec").score(q, r, measures="map", exclude_empty=True)
    assert res.metrics == {"map": 0.0} and res.counts["queries_evaluated"] == 0
    assert res.warnings[0] == "no query has a relevant document: every measure is 0"
    assert res.breakdowns["per_query"] == {}


def test_several_run_tags_are_warned(tmp_path):
    (tmp_path / "qrels").write_text("q1 0 a 1\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 2.0 tagA\nq1 Q0 b 2 1.0 tagB\n")
    res = get("trec").score(tmp_path / "qrels", tmp_path / "run", measures="map")
    assert f"{tmp_path / 'run'}: run has 2 different run tags: tagA, tagB" in res.warnings
    assert res.metrics == {"map": 1.0}
    # like every warning's preview, it names at most five of them
    lines = "".join(f"q1 Q0 d{i} {i + 1} {9.0 - i} tag{i}\n" for i in range(7))
    (tmp_path / "run").write_text(lines)
    res = get("trec").score(tmp_path / "qrels", tmp_path / "run", measures="map")
    assert f"{tmp_path / 'run'}: run has 7 different run tags: tag0, tag1, tag2, tag3, tag4" \
        in res.warnings


def test_measure_lists():
    assert parse_measures(" NDCG@10, map,,map ") == ["ndcg@10", "map"]
    assert parse_measures(["P@5", "mrr"]) == ["p@5", "mrr"]
    with pytest.raises(InvalidInput) as e:
        parse_measures(" , ")
    assert [str(p) for p in e.value.problems] == ["<arguments>: measures: no measure given"]
    with pytest.raises(InvalidInput) as e:
        parse_measures("map,bogus,p@x")
    assert [(p.file, p.field) for p in e.value.problems] == [("<arguments>", "measures")] * 2
    # each problem says why its measure is not known (the measure parser's own words)
    expected = []
    for name in ("bogus", "p@x"):
        with pytest.raises(ValueError) as v:
            parse_measure(name)
        expected.append(f"<arguments>: measures: {v.value}")
    assert [str(p) for p in e.value.problems] == expected and "'bogus'" in expected[0]


def test_option_errors_are_listed_together(tmp_path):
    q, r = files(tmp_path, {"q1": {"a": 1}}, {"q1": {"a": 1.0}})
    with pytest.raises(InvalidInput) as e:
        get("trec").score(q, r, exclude_empty=True, include_empty=True, score_precision="half")
    assert [str(p) for p in e.value.problems] == [
        "<arguments>: exclude_empty: contradicts include_empty; give one of them",
        "<arguments>: score_precision: must be float or double, not 'half'"]
    with pytest.raises(InvalidInput):
        get("trec").unit_stats(q, r, score_precision="half")


def test_unit_stats_for_another_metric(tmp_path):
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 0}, "q3": {"d": 1}}
    run = {"q1": {"x": 2.0, "a": 1.0}, "q2": {"c": 1.0}, "q3": {"d": 1.0}}
    q, r = files(tmp_path, qrels, run)
    s = get("trec").unit_stats(q, r, metric="p@1")
    assert s.metric == "p@1" and s.units == ["q1", "q2", "q3"]
    assert s.stats.tolist() == [[0.0], [0.0], [1.0]] and s.weights.tolist() == [1, 1, 1]
    assert float(s.aggregate(s.stats, s.weights)) == pytest.approx(1 / 3)
    m = get("trec").unit_stats(q, r, rel_level=1, exclude_empty=True)
    assert m.metric == "map" and m.units == ["q1", "q3"]
    assert m.stats[:, 0].tolist() == [pytest.approx(0.25), 1.0]


def test_both_empty_options_are_an_error_for_paired_comparison_too(tmp_path):
    # conventions.md, Ranking: giving --exclude-empty and --include-empty together is an error
    q, r = files(tmp_path, {"q1": {"a": 1}}, {"q1": {"a": 1.0}})
    with pytest.raises(InvalidInput) as e:
        get("trec").unit_stats(q, r, exclude_empty=True, include_empty=True)
    assert [str(p) for p in e.value.problems] == [
        "<arguments>: exclude_empty: contradicts include_empty; give one of them"]


def test_loaded_qrels_and_run_score_as_their_files(tmp_path):
    # Task.score takes a loaded reference and submission as well as paths
    qrels = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}}
    run = {"q1": {"b": 2.0, "x": 1.0}, "q2": {"c": 1.0}}
    q, r = files(tmp_path, qrels, run)
    from_files = get("trec").score(q, r, measures="map,ndcg").to_dict()
    ref, sub = read_qrels(q, Problems()), read_run(r, Problems())
    sub.warnings = []
    assert get("trec").score(ref, sub, measures="map,ndcg").to_dict() == from_files
    assert get("trec").score(q, sub, measures="map,ndcg").to_dict() == from_files


@pytest.fixture(params=["line reader", "fast reader"])
def reader(request, monkeypatch):
    """The column rules hold whichever reader a file's size picks."""
    from shareval.formats import trec as trec_format
    monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES",
                        1 << 30 if request.param == "line reader" else 0)


def _score_text(tmp_path, qrels: str, run: str):
    (tmp_path / "qrels").write_text(qrels, encoding="utf-8")
    (tmp_path / "run").write_text(run, encoding="utf-8")
    return get("trec").score(tmp_path / "qrels", tmp_path / "run", measures="map")


def _problems(tmp_path, qrels: str, run: str) -> list[str]:
    with pytest.raises(InvalidInput) as e:
        _score_text(tmp_path, qrels, run)
    return [str(p).replace(str(tmp_path) + "/", "") for p in e.value.problems]


def test_an_empty_column_makes_a_line_one_column_short(tmp_path, reader):
    # conventions.md, Ranking, columns: two adjacent tabs are one separator
    assert _problems(tmp_path, "q\t0\td\t1\n", "q\tQ0\td\t1\t2.5\tt\nq\t\te\t2\t1.5\tt\n") == [
        "run:2: line: expected 6 whitespace-separated columns "
        "(query_id Q0 doc_id rank score run_tag), found 5"]
    assert _problems(tmp_path, "q\t0\td\t1\nq\t\te\t1\n", "q\tQ0\td\t1\t2.5\tt\n") == [
        "qrels:2: line: expected 4 whitespace-separated columns "
        "(query_id iteration doc_id relevance), found 3"]


def test_integers_are_decimal(tmp_path, reader):
    # conventions.md, Ranking: 0x10 is an error, a sign is allowed, judgments fit 64 bits
    assert _problems(tmp_path, "q 0 d 0x10\n", "q Q0 d 1 2.5 t\n") == [
        "qrels:1: relevance: not an integer: '0x10'"]
    assert _problems(tmp_path, "q 0 d 1\n", "q Q0 d 0X1f 2.5 t\n") == [
        "run:1: rank: not an integer: '0X1f'"]
    assert _problems(tmp_path, "q 0 d 1\nq 0 e 9223372036854775808\n", "q Q0 d 1 2.5 t\n") == [
        "qrels:2: relevance: out of range (a 64-bit integer): '9223372036854775808'"]
    # ASCII digits only: Python's int() would take these, trec_eval's atol reads 1 and 0
    for bad in ("1_0", "\u0661"):
        assert _problems(tmp_path, f"q 0 d {bad}\n", "q Q0 d 1 2.5 t\n") == [
            f"qrels:1: relevance: not an integer: {bad!r}"]
        assert _problems(tmp_path, "q 0 d 1\n", f"q Q0 d {bad} 2.5 t\n") == [
            f"run:1: rank: not an integer: {bad!r}"]
    res = _score_text(tmp_path, "q 0 d -1\nq 0 e +1\n", "q Q0 d -5 2.5 t\nq Q0 e +007 1.5 t\n")
    assert res.metrics == {"map": 0.5}


def test_a_byte_order_mark_belongs_to_the_first_query_id(tmp_path, reader):
    # conventions.md, Ranking, columns: "\ufeffq" is another query than "q"
    res = _score_text(tmp_path, "q 0 d 1\n", "\ufeffq Q0 d 1 2.5 t\n")
    assert res.metrics == {"map": 0.0}
    assert res.counts["queries_in_run"] == 1 and any("\ufeffq" in w for w in res.warnings)


def test_unicode_spaces_separate_columns(tmp_path, reader):
    # conventions.md, Ranking, columns: what str.split() splits at
    res = _score_text(tmp_path, "q 0 d 1\n", "q\u2003Q0\xa0d 1 2.5 t\n")
    assert res.metrics == {"map": 1.0}
