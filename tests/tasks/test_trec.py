"""The trec task from files: trec_eval -c averaging, score precision, file rules, pytrec_eval parity."""
import math
import random
import tempfile
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from hypothesis import given, settings, strategies as st

from shareval.cli import main
from shareval.formats import trec as trec_format
from shareval.formats.errors import InvalidInput, Problems
from shareval.formats.trec import read_qrels, read_run, write_qrels, write_run
from shareval.tasks import get

MEASURES = ("map", "map@5", "p@5", "recall@5", "r_precision", "ndcg@5", "ndcg", "mrr")
TREC_NAMES = {"map": "map", "map@5": "map_cut_5", "p@5": "P_5", "recall@5": "recall_5",
              "r_precision": "Rprec", "ndcg@5": "ndcg_cut_5", "ndcg": "ndcg", "mrr": "recip_rank"}
TREC_MEASURES = {"map", "map_cut", "P", "recall", "Rprec", "ndcg_cut", "ndcg", "recip_rank"}


def files(folder, qrels, run):
    folder = Path(folder)
    write_qrels(folder / "qrels", qrels)
    write_run(folder / "run", run)
    return folder / "qrels", folder / "run"


# -- an oracle written from the measures' definitions (trec_eval's documentation) --------

def oracle(judged: dict, retrieved: dict, precision: str) -> dict:
    """Every measure of one query: rank by score (float32 or double), ties by docno desc."""
    def key(item):
        score = np.float32(item[1]) if precision == "float" else item[1]
        return (score, item[0].encode())
    ranked = [d for d, _ in sorted(retrieved.items(), key=key, reverse=True)]
    rels = [judged.get(d, 0) for d in ranked]
    hit = [r >= 1 for r in rels]
    R = sum(r >= 1 for r in judged.values())

    def ratio(a, b):
        return a / b if b else 0.0

    def ap(k):
        top = hit[:k]
        return ratio(sum(sum(top[:i + 1]) / (i + 1) for i, h in enumerate(top) if h), R)

    def dcg(gains, k):
        return sum(max(g, 0) / math.log2(i + 2) for i, g in enumerate(gains[:k]))

    ideal = sorted(judged.values(), reverse=True)
    n = len(ranked) + len(judged) + 1
    return {"map": ap(n), "map@5": ap(5), "p@5": sum(hit[:5]) / 5,
            "recall@5": ratio(sum(hit[:5]), R), "r_precision": ratio(sum(hit[:R]), R),
            "ndcg@5": ratio(dcg(rels, 5), dcg(ideal, 5)), "ndcg": ratio(dcg(rels, n), dcg(ideal, n)),
            "mrr": next((1 / (i + 1) for i, h in enumerate(hit) if h), 0.0)}


@st.composite
def collections(draw, negative=False):
    """Qrels with queries judged without any relevant document, runs that skip judged
    queries and add unjudged ones, and scores that tie or nearly tie in float32.

    Negative judgments only with ``negative``: pytrec_eval's trec_eval indexes arrays
    by judgment, and after a few hundred evaluators with -1 judgments it hangs."""
    base = st.sampled_from([0.25, 0.5, 1.0, 3.0])
    near = st.builds(lambda b, k: b + k * 1e-9, base, st.integers(0, 3))   # float32 ties
    score = st.one_of(base, near, st.floats(-10, 10, allow_nan=False))
    qrels, run = {}, {}
    for q in range(draw(st.integers(1, 6))):
        docs = [f"d{i:02d}" for i in range(draw(st.integers(1, 12)))]
        judged = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1, max_size=len(docs)))
        empty = draw(st.booleans())                    # judged, but nothing relevant
        low = -1 if negative else 0
        qrels[f"q{q}"] = {d: 0 if empty else draw(st.integers(low, 3)) for d in judged}
        if draw(st.integers(0, 3)):                    # sometimes missing from the run
            retrieved = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1))
            run[f"q{q}"] = {d: draw(score) for d in retrieved}
    if not run or draw(st.booleans()):                 # an empty run file is an error
        run["unjudged"] = {"x": 1.0}
    return qrels, run


# -- trec_eval -c averaging --------------------------------------------------------------

def test_every_judged_query_counts_by_default_as_trec_eval_c(tmp_path):
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 0}, "q3": {"d": 2}}
    run = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}, "q9": {"z": 1.0}}
    q, r = files(tmp_path, qrels, run)
    res = get("trec").score(q, r, measures="map,p@1")
    # q1 = 1; q2 judged with nothing relevant = 0; q3 missing from the run = 0
    assert res.metrics == {"map": pytest.approx(1 / 3), "p@1": pytest.approx(1 / 3)}
    assert res.counts["queries_evaluated"] == 3
    assert res.counts["queries_without_relevant"] == 1
    assert res.counts["queries_missing_from_run"] == 1
    assert res.counts["run_queries_not_in_qrels"] == 1
    assert set(res.breakdowns["per_query"]) == {"q1", "q2", "q3"}
    assert res.conventions["exclude_empty"] is False
    assert any("1 queries have no relevant document (included with 0)" in w for w in res.warnings)
    # the old default, on request
    old = get("trec").score(q, r, measures="map,p@1", exclude_empty=True)
    assert old.metrics == {"map": 0.5, "p@1": 0.5}
    assert set(old.breakdowns["per_query"]) == {"q1", "q3"}
    assert any("(excluded from the averages)" in w for w in old.warnings)
    # include_empty is kept for old bundles and scripts: it is now the default
    assert get("trec").score(q, r, measures="map", include_empty=True).metrics["map"] == \
        pytest.approx(1 / 3)
    with pytest.raises(InvalidInput, match="exclude_empty: contradicts include_empty"):
        get("trec").score(q, r, exclude_empty=True, include_empty=True)
    assert get("trec").unit_stats(q, r).units == ["q1", "q2", "q3"]
    assert get("trec").unit_stats(q, r, exclude_empty=True).units == ["q1", "q3"]


def _pytrec_c_averages(qrels, run):
    """pytrec_eval per query, and the trec_eval -c mean: every judged query, missing = 0."""
    per_query = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(run)
    means = {m: sum(per_query[q][t] if q in per_query else 0.0 for q in qrels) / len(qrels)
             for m, t in TREC_NAMES.items()}
    return per_query, means


@settings(max_examples=200, deadline=None)
@given(collections())
def test_default_equals_pytrec_eval_with_trec_eval_c_averaging(data):
    qrels, run = data
    with tempfile.TemporaryDirectory() as tmp:
        res = get("trec").score(*files(tmp, qrels, run), measures=",".join(MEASURES))
    per_query, means = _pytrec_c_averages(qrels, run)
    assert res.counts["queries_evaluated"] == len(qrels)
    for m, t in TREC_NAMES.items():
        assert res.metrics[m] == pytest.approx(means[m], abs=1e-9), m
        for q, values in per_query.items():
            assert res.breakdowns["per_query"][q][m] == pytest.approx(values[t], abs=1e-9), (q, m)


@pytest.mark.parametrize("arrow_kinds", [("qrels", "run"), ("run",), ("qrels",)])
@settings(max_examples=60, deadline=None)
@given(data=collections())
def test_pyarrow_reader_equals_pytrec_eval_alone_or_mixed_with_the_line_reader(arrow_kinds, data):
    """The pyarrow join maps qrels documents onto the run's codes (documents only
    judged get codes after them); ties and documents judged but not retrieved included."""
    from shareval.formats import trec_arrow
    qrels, run = data
    fast = trec_arrow.read_fast
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(trec_format, "SMALL_FILE_BYTES", 0)
        mp.setattr(trec_arrow, "read_fast",
                   lambda path, kind, *judged: fast(path, kind, *judged) if kind in arrow_kinds
                   else None)
        res = get("trec").score(*files(tmp, qrels, run), measures=",".join(MEASURES))
    per_query, means = _pytrec_c_averages(qrels, run)
    for m, t in TREC_NAMES.items():
        assert res.metrics[m] == pytest.approx(means[m], abs=1e-9), m
        for q, values in per_query.items():
            assert res.breakdowns["per_query"][q][m] == pytest.approx(values[t], abs=1e-9), (q, m)


@settings(max_examples=100, deadline=None)
@given(collections())
def test_exclude_empty_averages_only_queries_with_a_relevant_document(data):
    qrels, run = data
    with tempfile.TemporaryDirectory() as tmp:
        res = get("trec").score(*files(tmp, qrels, run), measures="map,ndcg@5", exclude_empty=True)
    per_query, _ = _pytrec_c_averages(qrels, run)
    kept = [q for q, j in qrels.items() if any(r >= 1 for r in j.values())]
    assert sorted(res.breakdowns["per_query"]) == sorted(kept)
    for m in ("map", "ndcg@5"):
        expected = sum(per_query[q][TREC_NAMES[m]] if q in per_query else 0.0 for q in kept)
        assert res.metrics[m] == pytest.approx(expected / len(kept) if kept else 0.0, abs=1e-9)


@settings(max_examples=150, deadline=None)
@given(collections())
def test_oracle_equals_pytrec_eval_in_single_precision(data):
    """The oracle is checked against trec_eval before it judges the double mode."""
    qrels, run = data
    per_query, _ = _pytrec_c_averages(qrels, run)
    for q, values in per_query.items():
        mine = oracle(qrels[q], run[q], "float")
        for m, t in TREC_NAMES.items():
            assert mine[m] == pytest.approx(values[t], abs=1e-9), (q, m)


@settings(max_examples=200, deadline=None)
@given(collections(negative=True))
def test_score_precision_double_equals_oracle(data):
    qrels, run = data
    with tempfile.TemporaryDirectory() as tmp:
        res = get("trec").score(*files(tmp, qrels, run), measures=",".join(MEASURES),
                                score_precision="double")
    assert res.conventions["score_precision"] == "double"
    for m in MEASURES:
        values = [oracle(qrels[q], run.get(q, {}), "double")[m] for q in qrels]
        assert res.metrics[m] == pytest.approx(sum(values) / len(values), abs=1e-9), m
        for q, v in zip(qrels, values):
            assert res.breakdowns["per_query"][q][m] == pytest.approx(v, abs=1e-9), (q, m)


def test_float32_near_tie_differs_between_trec_eval_9_and_10(tmp_path):
    # equal as float32, so trec_eval 9.x ranks b (docno desc) first; 10.0 ranks a first
    hi, lo = 0.9566925804034677, 0.9566925655091452
    assert np.float32(hi) == np.float32(lo) and hi > lo
    q, r = files(tmp_path, {"q": {"a": 1, "b": 0}}, {"q": {"a": hi, "b": lo}})
    assert get("trec").score(q, r, measures="mrr").metrics["mrr"] == 0.5
    assert get("trec").score(q, r, measures="mrr", score_precision="double").metrics["mrr"] == 1.0
    with pytest.raises(InvalidInput, match="score_precision: must be float or double"):
        get("trec").score(q, r, score_precision="half")


def test_cli_flags(tmp_path, capsys):
    q, r = files(tmp_path, {"q1": {"a": 1}, "q2": {"b": 0}}, {"q1": {"a": 1.0}})
    args = ["score", "trec", "-r", str(q), "-s", str(r), "--measures", "map", "--format", "json",
            "--quiet"]
    assert main(args) == 0
    assert '"map": 0.5' in capsys.readouterr().out
    assert main(args + ["--exclude-empty"]) == 0
    assert '"map": 1.0' in capsys.readouterr().out
    assert main(args + ["--score-precision", "double"]) == 0
    assert '"score_precision": "double"' in capsys.readouterr().out
    assert main(args + ["--score-precision", "single"]) == 2
    assert "<arguments>: score_precision: must be float or double" in capsys.readouterr().err


# -- file rules ------------------------------------------------------------------------

@pytest.fixture(params=["lines", "arrow"])
def reader(request, monkeypatch):
    """Both readers: Python lines (small files) and pyarrow (large files)."""
    if request.param == "arrow":
        monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    return request.param


def test_comment_and_blank_lines_are_skipped(tmp_path, reader):
    (tmp_path / "qrels").write_text("# judged by NIST\nq 0 a 1\n\nq 0 b 0\n#q 0 c 1\n")
    (tmp_path / "run").write_text("q Q0 b 1 0.9 t\n  # a comment\nq Q0 a 2 0.1 t\n")
    res = get("trec").score(tmp_path / "qrels", tmp_path / "run", measures="mrr,map")
    assert res.metrics == {"mrr": 0.5, "map": 0.5}
    assert res.counts["qrels_lines"] == 2 and res.counts["run_lines"] == 2


def test_extra_run_columns_are_ignored_with_a_warning(tmp_path, reader):
    (tmp_path / "qrels").write_text("q 0 a 1\n")
    run = tmp_path / "run"
    run.write_text("q Q0 b 1 0.9 t\nq Q0 a 2 0.1 t extra 7\n")
    res = get("trec").score(tmp_path / "qrels", run, measures="mrr")
    assert res.metrics["mrr"] == 0.5
    assert f"{run}:2: 1 run line has more than 6 columns; the columns after run_tag are " \
           f"ignored (as trec_eval does)" in res.warnings
    # the warning names the first such line and counts them all
    run.write_text("q Q0 b 1 0.9 t\nq Q0 a 2 0.1 t extra\nq Q0 c 3 0.0 t x y\n")
    res = get("trec").score(tmp_path / "qrels", run, measures="mrr")
    assert [w for w in res.warnings if "columns" in w] == [
        f"{run}:2: 2 run lines have more than 6 columns; the columns after run_tag are "
        f"ignored (as trec_eval does)"]


def test_extra_qrels_columns_are_an_error(tmp_path, reader):
    (tmp_path / "qrels").write_text("q 0 a 1\nq 0 b 1 x\n")
    problems = Problems()
    assert read_qrels(tmp_path / "qrels", problems) is None
    assert [str(p) for p in problems.items] == [
        f"{tmp_path / 'qrels'}:2: line: expected 4 whitespace-separated columns "
        f"(query_id iteration doc_id relevance), found 5"]


def test_arrow_and_line_readers_agree(tmp_path, monkeypatch):
    rng = random.Random(3)
    lines = "".join(f"q{rng.randint(0, 30)} Q0 d{i} {i} {rng.random()!r} tag{i % 2}\n"
                    for i in range(3000))
    (tmp_path / "run").write_text(lines)
    small = read_run(tmp_path / "run", Problems())
    monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    large = read_run(tmp_path / "run", Problems())
    assert isinstance(small.q_dict, list) and not isinstance(large.q_dict, list)
    assert small.qids() == large.qids() and small.docs() == large.docs()
    assert small.value.tolist() == large.value.tolist()
    assert sorted(small.tags) == sorted(large.tags) == ["tag0", "tag1"]


def test_file_scoring_equals_pytrec_eval_on_both_readers(tmp_path, monkeypatch):
    rng = random.Random(5)
    qrels, run = {}, {}
    for q in range(60):
        docs = [f"D{rng.randint(0, 400)}" for _ in range(40)]
        qrels[f"{q}"] = {d: rng.choice([0, 0, 1, 2]) for d in docs[:15]}
        run[f"{q}"] = {d: rng.choice([0.1, 0.2, 0.3, rng.random()]) for d in docs}
    q, r = files(tmp_path, qrels, run)
    _, means = _pytrec_c_averages(qrels, run)
    small = get("trec").score(q, r, measures=",".join(MEASURES))
    monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    large = get("trec").score(q, r, measures=",".join(MEASURES))
    for m in MEASURES:
        assert small.metrics[m] == pytest.approx(means[m], abs=1e-9)
        assert large.metrics[m] == pytest.approx(means[m], abs=1e-9)
    # only cutoff measures: the scorer skips rows below the deepest cutoff
    cut = get("trec").score(q, r, measures="map@5,p@5,ndcg@5,r_precision")
    for m in ("map@5", "p@5", "ndcg@5", "r_precision"):
        assert cut.metrics[m] == pytest.approx(small.metrics[m], abs=1e-12)


def test_unsorted_run_is_ranked_by_score(tmp_path):
    (tmp_path / "qrels").write_text("q 0 a 1\nq 0 b 0\n")
    (tmp_path / "run").write_text("q Q0 b 1 0.1 t\nq Q0 a 2 0.9 t\n")
    res = get("trec").score(tmp_path / "qrels", tmp_path / "run", measures="mrr")
    assert res.metrics["mrr"] == 1.0


def test_unit_stats_for_compare(tmp_path):
    q, r = files(tmp_path, {"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}})
    u = get("trec").unit_stats(q, r)
    assert u.units == ["q1", "q2"] and u.stats[:, 0].tolist() == [1.0, 0.0]


# -- start-up: scoring a small run must not pay for the whole platform -------------------

HEAVY = {"pyarrow", "pandas", "numba", "rich", "django", "sklearn", "scipy", "matplotlib"}
IMPORT_CHECK = """
import sys
from shareval.formats import trec
trec.SMALL_FILE_BYTES = int(sys.argv[3])
from shareval.cli import main
rc = main(["score", "trec", "-r", sys.argv[1], "-s", sys.argv[2], "--format", "json",
           "-o", sys.argv[1] + ".json", "--quiet"])
print(rc, sorted(set(sys.argv[4].split(",")) & set(sys.modules)))
"""


@pytest.mark.parametrize("small_file_bytes, expected", [(1 << 18, "0 []"),
                                                         (0, "0 ['pyarrow']")])
def test_scoring_imports_only_what_it_needs(tmp_path, small_file_bytes, expected):
    import subprocess
    import sys
    q, r = files(tmp_path, {"q1": {"a": 1, "b": 0}}, {"q1": {"a": 1.0, "b": 2.0}})
    out = subprocess.run([sys.executable, "-c", IMPORT_CHECK, str(q), str(r),
                          str(small_file_bytes), ",".join(HEAVY)],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == expected


def test_large_json_results_hold_the_same_data(tmp_path, monkeypatch):
    import json
    from shareval import report
    q, r = files(tmp_path, {"q1": {"a": 1}, "q2": {"b": 0}, "q3": {"c": 1}},
                 {"q1": {"a": 1.0}, "q2": {"b": 1.0}})
    res = get("trec").score(q, r)
    small = report.result_json(res)
    monkeypatch.setattr(report, "LARGE_JSON_ROWS", 1)       # one row per line from here
    large = report.result_json(res)
    assert large != small and json.loads(large) == json.loads(small) == res.to_dict()
    assert '      "q1": {"map": 1.0,' in large


def test_large_run_read_beside_the_qrels_reports_the_qrels_problems_first(tmp_path, monkeypatch):
    monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)     # the run is read in a thread
    good_q, good_r = files(tmp_path, {"q1": {"a": 1}}, {"q1": {"a": 1.0}})
    (tmp_path / "bad_qrels").write_text("q1 0 a 1\nq1 0 b x\n")
    (tmp_path / "bad_run").write_text("q1 Q0 a 1 0.5 t\nq1 Q0 b 2 nan t\n")
    with pytest.raises(InvalidInput) as e:
        get("trec").score(tmp_path / "bad_qrels", tmp_path / "bad_run")
    assert [str(p) for p in e.value.problems] == [
        f"{tmp_path / 'bad_qrels'}:2: relevance: not an integer: 'x'"]
    with pytest.raises(InvalidInput) as e:
        get("trec").score(good_q, tmp_path / "bad_run")
    assert [str(p) for p in e.value.problems] == [
        f"{tmp_path / 'bad_run'}:2: score: not a finite number: 'nan'"]
    assert get("trec").score(good_q, good_r, measures="map").metrics == {"map": 1.0}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab9Zé", min_size=1, max_size=6), min_size=1, max_size=40),
       st.integers(1, 4))
def test_short_document_ids_decode_to_the_ids(words, chunks):
    """Ids of at most 8 bytes, of any widths, take the sorting path (byte-order
    dictionary), longer ones the hash path; either way the dictionary indexed by the
    codes gives back every id, and equal ids share a code."""
    import numpy as np
    import pyarrow as pa
    from shareval.formats import trec_arrow
    for ids in (words, [w.ljust(4, "x")[:4] for w in words], [w * 2 for w in words]):
        size = -(-len(ids) // chunks)
        col = pa.chunked_array([pa.array(ids[k:k + size], pa.string())
                                for k in range(0, len(ids), size)], pa.string())
        codes, dictionary, in_byte_order = trec_arrow._codes(col, short_ids=True)
        assert dictionary.take(pa.array(codes)).to_pylist() == ids
        assert len(set(dictionary.to_pylist())) == len(dictionary) == len(set(ids))
        short = trec_arrow._short_id_codes(col)
        assert (short is not None) == (max(len(i.encode()) for i in ids) <= 8) == in_byte_order
        if short is not None:                 # byte order, as trec_eval's strcmp
            assert dictionary.to_pylist() == sorted(set(ids), key=str.encode)
            assert np.array_equal(codes, short[0])
