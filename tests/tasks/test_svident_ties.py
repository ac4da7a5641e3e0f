"""SV-Ident Task 2 ranks tied scores as the organizers' script does, by default.

The official scorer (vadis-project/sv-ident, scripts/evaluate_task2.py at 5b5f25f) gives
the submitted JSON, as ``json.load`` reads it, to ranx 0.2.8, which ranks each sentence
by the reverse of numba's ``np.argsort`` of the float64 scores in the order the file
lists the variables. ``ties="official"`` (the default) is that rule; ``ties="id"`` is
the rule shareval had before (single precision, ties by variable id descending).

Checked three ways:
- against the official script itself, run in its pinned environment (Python 3.9,
  ranx 0.2.8, numpy < 2; ``bench/oracle/svident_task2.sh`` builds it, and the test is
  skipped without it), on many random corpora with ties in short and long lists and
  scores equal only in single precision: every unit, language and overall value;
- against an oracle written here from the documented rule (numba's quicksort as its
  source describes it, metrics and averages by hand), on hypothesis inputs: always runs;
- on worked examples, and on the real trial data with runs that have ties.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import random
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from shareval.formats.errors import InvalidInput
from shareval.metrics.ranking import reversed_argsort_order
from shareval.tasks import get
from tests.conftest import ROOT, SHARED_DATA, write

TASK = get("svident-disambiguation")
ORACLE = Path(os.environ.get("SHAREVAL_SVIDENT_ORACLE", ROOT.parent / "oracle-svident"))
DRIVER = ROOT / "bench" / "oracle" / "svident_task2_driver.py"
OFFICIAL_SHA256 = "2ffa1c0c1bd59a520661a6a71ec428d65efd3a44dfcb68bc8b6cf36eb5556824"
# shareval's name -> ranx 0.2.8's
METRICS = {"map@1": "map@1", "map@5": "map@5", "map@10": "map@10", "map@20": "map@20",
           "r_precision": "r-precision", "p@10": "precision@10"}
HEADER = "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"
POOL = [str(n) for n in range(1, 41)] + [f"v{n}" for n in range(40)]


# ------------------------------------------------------------------ the documented rule

SMALL = 15   # numba sorts a range by insertion when high - low < 15, i.e. up to 15 items


def numba_argsort(values: list[float]) -> list[int]:
    """``np.argsort`` as numba compiles it (numba/misc/quicksort.py), written from its
    description: ranges of 16 items or more are partitioned around the median of their
    first, middle and last item (Hoare's scan, the pivot parked at the end); smaller
    ranges are insertion-sorted, which keeps equal items in their order."""
    idx = list(range(len(values)))

    def less(a, b):
        return values[idx[a]] < values[idx[b]]

    def swap(a, b):
        idx[a], idx[b] = idx[b], idx[a]

    def partition(low, high):
        mid = (low + high) // 2
        if less(mid, low):
            swap(low, mid)
        if less(high, mid):
            swap(high, mid)
        if less(mid, low):
            swap(low, mid)
        pivot = values[idx[mid]]
        swap(high, mid)
        i, j = low, high - 1
        while True:
            while i < high and values[idx[i]] < pivot:
                i += 1
            while j >= low and pivot < values[idx[j]]:
                j -= 1
            if i >= j:
                break
            swap(i, j)
            i, j = i + 1, j - 1
        swap(i, high)
        return i

    def insertion(low, high):
        for i in range(low + 1, high + 1):
            k, j = idx[i], i
            while j > low and values[k] < values[idx[j - 1]]:
                idx[j] = idx[j - 1]
                j -= 1
            idx[j] = k

    def sort(low, high):          # the ranges are disjoint: their order does not matter
        while high - low >= SMALL:
            p = partition(low, high)
            sort(low, p - 1)
            low = p + 1
        insertion(low, high)

    sort(0, len(values) - 1)
    return idx


def official_ranking(items: list[tuple[str, float]]) -> list[str]:
    """The variables in ranked order: the reverse of the argsort of the doubles in file order."""
    return [items[i][0] for i in reversed(numba_argsort([float(s) for _, s in items]))]


def id_ranking(items: list[tuple[str, float]]) -> list[str]:
    """Score descending in single precision, ties by id descending (byte order)."""
    return [v for v, _ in sorted(items, key=lambda x: (np.float32(x[1]), x[0].encode()),
                                 reverse=True)]


def stable_reversed_ranking(items):
    """Ties in file order read backwards at every length: right only up to 15 items."""
    order = sorted(range(len(items)), key=lambda i: (float(items[i][1]), i), reverse=True)
    return [items[i][0] for i in order]


def sentence_values(ranked: list[str], relevant: set[str]) -> dict[str, float]:
    hits, ap = 0, defaultdict(float)
    for r, v in enumerate(ranked, 1):
        if v in relevant:
            hits += 1
            for k in (1, 5, 10, 20):
                if r <= k:
                    ap[k] += hits / r
    top = lambda k: sum(v in relevant for v in ranked[:k])  # noqa: E731
    n = len(relevant)
    return {**{f"map@{k}": ap[k] / n for k in (1, 5, 10, 20)},
            "r_precision": top(n) / n, "p@10": top(10) / 10}


def oracle_scores(corpus: dict, ranking, empty_units: str = "skip") -> dict:
    """{"overall", "per_language", "per_unit" {(doc, lang)}}: sentence values, the mean
    per (document, language), per language over its units, then over languages. A unit
    with no ranked sentence is left out (``empty_units="skip"``) or scores 0."""
    units, ranked_in = defaultdict(list), set()
    for s in corpus["sentences"]:
        if s["relevant"]:
            ranked = ranking(s["run"]) if s["run"] else []
            units[(s["doc"], s["lang"])].append(sentence_values(ranked, set(s["relevant"])))
            if s["run"]:
                ranked_in.add((s["doc"], s["lang"]))
    if empty_units == "skip":
        units = {u: vs for u, vs in units.items() if u in ranked_in}
    per_unit = {u: {m: sum(v[m] for v in vs) / len(vs) for m in METRICS}
                for u, vs in units.items()}
    langs = sorted({lang for _, lang in per_unit})
    per_language = {lang: {m: float(np.mean([v[m] for (_, la), v in per_unit.items()
                                              if la == lang])) for m in METRICS}
                    for lang in langs}
    overall = {m: float(np.mean([per_language[la][m] for la in langs])) for m in METRICS}
    return {"overall": overall, "per_language": per_language, "per_unit": per_unit}


# ------------------------------------------------------------------ random corpora

def ulps(base: float, n: int) -> list[float]:
    """base and the next n-1 doubles above it: distinct doubles, one float32."""
    out = [base]
    for _ in range(n - 1):
        out.append(float(np.nextafter(out[-1], np.inf)))
    assert len({np.float32(x) for x in out}) == 1
    return out


def scores_for(rng: random.Random, n: int) -> list:
    mode = rng.choice(["levels", "levels", "ints", "equal", "single", "single", "distinct"])
    if mode == "levels":
        return [rng.choice([0.0, -0.0, 0.5, 1.0, 2.0, -1.5]) for _ in range(n)]
    if mode == "ints":                       # JSON integers, as a system may write them
        return [rng.randint(0, 3) for _ in range(n)]
    if mode == "equal":
        return [rng.choice([0.3, 1, 7.25])] * n
    if mode == "single":                     # equal only in single precision, and ties
        groups = [ulps(b, 4) for b in (0.1, 0.7, 3.0, 1e-3)]
        return [rng.choice(rng.choice(groups)) for _ in range(n)]
    return [rng.random() for _ in range(n)]


def make_corpus(rng: random.Random) -> dict:
    """Documents in English and/or German; each sentence with a relevant variable is
    ranked, its variables in a random order, a short list (1-15) or a long one (16-70)."""
    sentences, k = [], 0
    for d in range(rng.randint(1, 4)):
        langs = rng.sample(["en", "de"], rng.randint(1, 2))
        for _ in range(rng.randint(1, 6)):
            relevant = rng.sample(POOL, rng.randint(1, 4)) if rng.random() < 0.85 else []
            n = rng.randint(1, 15) if rng.random() < 0.55 else rng.randint(16, 70)
            cand = rng.sample(POOL, n)
            for v in relevant:               # most relevant variables are ranked somewhere
                if v not in cand and rng.random() < 0.7:
                    cand[rng.randrange(n)] = v
            run = list(zip(cand, scores_for(rng, n))) if relevant else []
            sentences.append({"uuid": f"u{k}", "doc": f"doc{d}", "lang": rng.choice(langs),
                              "relevant": relevant, "run": run})
            k += 1
    units = sorted({(s["doc"], s["lang"]) for s in sentences})
    for unit in units[1:]:                  # a unit the run leaves out (the script skips it)
        if rng.random() < 0.15:
            for s in sentences:
                if (s["doc"], s["lang"]) == unit:
                    s["run"] = []
    if not any(s["relevant"] and s["run"] for s in sentences):
        s = sentences[0]
        s["relevant"] = [POOL[0]]
        s["run"] = [(POOL[0], 1.0), (POOL[1], 1.0)]
    return {"sentences": sentences}


def reference_text(corpus: dict) -> str:
    return HEADER + "".join(
        f"s\t{int(bool(s['relevant']))}\t{';'.join(s['relevant'])}\tR\t{s['doc']}\t"
        f"{s['uuid']}\t{s['lang']}\n" for s in corpus["sentences"])


def run_text(corpus: dict) -> str:
    """The run as JSON: sentences in reference order, variables in the drawn order."""
    return json.dumps({s["uuid"]: dict(s["run"]) for s in corpus["sentences"] if s["run"]})


def score(tmp: Path, corpus: dict, **options):
    ref = write(tmp / "ref.tsv", reference_text(corpus))
    return TASK.score(ref, write(tmp / "run.json", run_text(corpus)), **options)


def values_of(result) -> dict:
    """A result in the oracle's shape."""
    return {"overall": {m: result.metrics[m] for m in METRICS},
            "per_language": {la: {m: row[m] for m in METRICS}
                             for la, row in result.breakdowns["per_language"].items()},
            "per_unit": {(row["doc_id"], row["lang"]): {m: row[m] for m in METRICS}
                         for row in result.breakdowns["per_document"].values()}}


def assert_same(got: dict, expected: dict, tol: float = 1e-9) -> None:
    assert got["per_unit"].keys() == expected["per_unit"].keys()
    assert got["per_language"].keys() == expected["per_language"].keys()
    for part in ("overall",):
        for m in METRICS:
            assert got[part][m] == pytest.approx(expected[part][m], abs=tol), (part, m)
    for part in ("per_language", "per_unit"):
        for key, row in expected[part].items():
            for m in METRICS:
                assert got[part][key][m] == pytest.approx(row[m], abs=tol), (part, key, m)


def differ(a: dict, b: dict, tol: float = 1e-9) -> bool:
    return any(abs(a["per_unit"][u][m] - b["per_unit"][u][m]) > tol
               for u in a["per_unit"] for m in METRICS)


# ------------------------------------------------------------------ the ordering itself

@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0.0, -0.0, 1.0, 2.0, 0.5, 3.0]), max_size=80),
                min_size=1, max_size=4), st.randoms(use_true_random=False), st.booleans())
def test_reversed_argsort_order_is_numba_quicksort_reversed(groups, rng, interleave):
    """Each query ranked as the documented quicksort's argsort, reversed, of its scores in
    run order, also when the queries' rows are interleaved in the run; each query's
    rows end up together."""
    labels = [i for i, g in enumerate(groups) for _ in g]
    if interleave:
        rng.shuffle(labels)
    taken = [0] * len(groups)
    q, s, pos = [], [], []
    for i in labels:
        q.append(i)
        s.append(groups[i][taken[i]])
        pos.append(taken[i])
        taken[i] += 1
    order = reversed_argsort_order(np.array(q, dtype=np.int64), np.array(s, dtype=float))
    order = list(range(len(q))) if order is None else order.tolist()
    assert sorted(order) == list(range(len(q)))
    ranked_q = [q[r] for r in order]
    assert sum(a != b for a, b in zip(ranked_q, ranked_q[1:])) == max(len(set(q)) - 1, 0)
    for i, g in enumerate(groups):
        assert [pos[r] for r in order if q[r] == i] == numba_argsort(g)[::-1], g


def test_up_to_15_variables_ties_come_in_file_order_read_backwards():
    """The short-list rule, without the quicksort: insertion sort is stable."""
    for n in range(2, 16):
        order = reversed_argsort_order(np.zeros(n, dtype=np.int64), np.ones(n))
        assert order.tolist() == list(range(n))[::-1]
    mixed = [1.0, 2.0, 1.0, 2.0, 1.0]
    assert reversed_argsort_order(np.zeros(5, dtype=np.int64), np.array(mixed)).tolist() == \
        [3, 1, 4, 2, 0]
    # from 16 on, the partitions reorder the tied items (worked example below)
    order16 = reversed_argsort_order(np.zeros(16, dtype=np.int64), np.ones(16)).tolist()
    assert order16 != list(range(16))[::-1]
    assert order16 == numba_argsort([1.0] * 16)[::-1]


# ------------------------------------------------------------------ the oracle written here

@settings(max_examples=120, deadline=None)
@given(st.randoms(use_true_random=False))
def test_both_rules_equal_the_oracle_written_here(tmp_path_factory, rng):
    """Per unit, per language and overall, both rules as documented; and the inputs make
    the rules differ, so a broken rule cannot pass for the other."""
    corpus = make_corpus(rng)
    tmp = tmp_path_factory.mktemp("ties")
    official = values_of(score(tmp, corpus))
    by_id = values_of(score(tmp, corpus, ties="id"))
    assert_same(official, oracle_scores(corpus, official_ranking))
    assert_same(by_id, oracle_scores(corpus, id_ranking))
    zero = values_of(score(tmp, corpus, empty_units="zero"))
    assert_same(zero, oracle_scores(corpus, official_ranking, empty_units="zero"))


def test_the_random_corpora_tell_the_rules_apart(tmp_path):
    """How often the rules give another unit value on make_corpus's inputs (the
    differential test's): by id, and by file order reversed at every length (the
    long-list rule read as the short-list one)."""
    id_differs = stable_differs = 0
    for seed in range(60):
        corpus = make_corpus(random.Random(seed))
        official = oracle_scores(corpus, official_ranking)
        id_differs += differ(official, oracle_scores(corpus, id_ranking))
        stable_differs += differ(official, oracle_scores(corpus, stable_reversed_ranking))
    assert id_differs >= 30 and stable_differs >= 10, (id_differs, stable_differs)


def test_a_trec_run_keeps_each_sentences_file_order(tmp_path):
    """The same run as JSON and as a TREC run (lines of several sentences interleaved,
    each sentence's lines in the JSON's order) scores the same; reversed, it does not."""
    corpus = make_corpus(random.Random(7))
    ref = write(tmp_path / "ref.tsv", reference_text(corpus))
    lines = [(s["uuid"], v, sc) for s in corpus["sentences"] for v, sc in s["run"]]
    trec = "".join(f"{lines[i][0]} Q0 {lines[i][1]} 0 {float(lines[i][2])!r} t\n"
                   for i in _interleave(lines))
    as_json = TASK.score(ref, write(tmp_path / "r.json", run_text(corpus)))
    as_trec = TASK.score(ref, write(tmp_path / "r.trec", trec))
    assert as_trec.metrics == as_json.metrics
    backwards = {s["uuid"]: dict(s["run"][::-1]) for s in corpus["sentences"] if s["run"]}
    turned = TASK.score(ref, write(tmp_path / "b.json", json.dumps(backwards)))
    assert turned.metrics != as_json.metrics


def _interleave(lines):
    """Line indexes with the sentences mixed, each sentence's lines in their order."""
    by_q = defaultdict(list)
    for i, (q, _, _) in enumerate(lines):
        by_q[q].append(i)
    queues = list(by_q.values())
    out = []
    while any(queues):
        for qu in queues:
            if qu:
                out.append(qu.pop(0))
    return out


# ------------------------------------------------------------------ the official script

ORACLE_CASES = int(os.environ.get("SHAREVAL_SVIDENT_ORACLE_CASES", "400"))


def official_scorer() -> tuple[Path, Path]:
    """The oracle environment's Python and the official script, or a skip saying how to
    build them; a script other than the official one is an error, not a skip."""
    python, script = ORACLE / "venv" / "bin" / "python", ORACLE / "evaluate_task2.py"
    if not (python.is_file() and script.is_file()):
        pytest.skip(f"the official SV-Ident Task 2 scorer is not built at {ORACLE}: run "
                    f"bash bench/oracle/svident_task2.sh (or set SHAREVAL_SVIDENT_ORACLE)")
    digest = hashlib.sha256(script.read_bytes()).hexdigest()
    assert digest == OFFICIAL_SHA256, f"{script} is not evaluate_task2.py of commit 5b5f25f"
    return python, script


def run_official(cases: list[dict], tmp: Path) -> list[dict]:
    """The official script's result for each case, in one process (ranx loads slowly)."""
    python, script = official_scorer()
    (tmp / "cases.json").write_text(json.dumps(cases))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    done = subprocess.run([str(python), str(DRIVER), str(script), str(tmp / "cases.json"),
                           str(tmp / "out.json")], env=env, capture_output=True, text=True,
                          timeout=3600)
    assert done.returncode == 0, done.stderr[-3000:]
    outs = json.loads((tmp / "out.json").read_text())
    errors = [o["error"] for o in outs if "error" in o]
    assert not errors, f"the official script refused {len(errors)} cases: {errors[0]}"
    return outs


def official_case(corpus: dict) -> dict:
    """The four files evaluate_task2.py reads: qrels of the evaluated sentences, the run
    (the same JSON text shareval reads), uuid -> language and uuid -> document."""
    evaluated = [s for s in corpus["sentences"] if s["relevant"]]
    return {"qrels": {s["uuid"]: {v: 1 for v in s["relevant"]} for s in evaluated},
            "run": run_text(corpus),
            "langs": {s["uuid"]: s["lang"] for s in corpus["sentences"]},
            "docs": {s["uuid"]: s["doc"] for s in corpus["sentences"]},
            "metrics": list(METRICS.values())}


def from_official(out: dict) -> dict:
    """The script's output in the oracle's shape (it lists a language without units as {})."""
    return {"overall": {m: out["macro_scores"][t] for m, t in METRICS.items()},
            "per_language": {lang: {m: row[t] for m, t in METRICS.items()}
                             for lang, row in out["macro_language_scores"].items() if row},
            "per_unit": {(doc, lang): {m: row[t] for m, t in METRICS.items()}
                         for lang, docs in out["document_scores"].items()
                         for doc, row in docs.items()}}


def test_equals_the_official_script_on_random_corpora(tmp_path, capsys):
    """ORACLE_CASES random corpora (seeded): every unit, language and overall value of
    the six metrics equals the official script's to 1e-9. The same inputs under
    ties="id", or ranked by file order reversed at every length, differ from it."""
    corpora = [make_corpus(random.Random(10_000 + i)) for i in range(ORACLE_CASES)]
    outs = run_official([official_case(c) for c in corpora], tmp_path)
    identical, values = Counter(), Counter()
    id_differs = stable_differs = 0
    for i, (corpus, out) in enumerate(zip(corpora, outs)):
        expected = from_official(out)
        folder = tmp_path / f"c{i}"
        folder.mkdir()
        got = values_of(score(folder, corpus))
        assert_same(got, expected)
        for part in ("per_unit", "per_language"):
            for key, row in expected[part].items():
                identical[part] += sum(got[part][key][m] == row[m] for m in METRICS)
                values[part] += len(METRICS)
        id_differs += differ(values_of(score(folder, corpus, ties="id")), expected)
        stable_differs += differ(oracle_scores(corpus, stable_reversed_ranking), expected)
    sentences = [s for c in corpora for s in c["sentences"] if s["run"]]
    long_tied = sum(len(s["run"]) > SMALL and len({float(x) for _, x in s["run"]})
                    < len(s["run"]) for s in sentences)
    with capsys.disabled():
        # unit values are means in the same order as ranx's; a language's mean adds its
        # units in the official script's set order, which changes with the hash seed
        print(f"\n{ORACLE_CASES} corpora, {len(sentences)} ranked sentences ({long_tied} long "
              f"lists with ties); bit-identical: {identical['per_unit']}/{values['per_unit']} "
              f"unit values, {identical['per_language']}/{values['per_language']} language "
              f"values; corpora where ties=id differs: {id_differs}, where file order "
              f"reversed at every length differs: {stable_differs}")
    assert id_differs >= ORACLE_CASES // 3 and stable_differs >= ORACLE_CASES // 10


def test_the_official_script_pairs_sentences_by_position(tmp_path):
    """Why the differential test writes the run in the reference's order: ranx 0.2.8
    pairs the qrels' i-th sentence with the run's i-th (it only checks that the sets
    of ids are equal), so the official script misreads a run listed in another order.
    shareval pairs sentences by uuid and scores both orders alike."""
    corpus = {"sentences": [
        {"uuid": "u0", "doc": "d", "lang": "en", "relevant": ["a"], "run": [("a", 1.0)]},
        {"uuid": "u1", "doc": "d", "lang": "en", "relevant": ["b"], "run": [("b", 1.0)]}]}
    case = official_case(corpus)
    swapped = dict(case, run=json.dumps({"u1": {"b": 1.0}, "u0": {"a": 1.0}}))
    same, misread = run_official([case, swapped], tmp_path)
    assert same["macro_scores"]["map@10"] == 1.0 and misread["macro_scores"]["map@10"] == 0.0
    ref = write(tmp_path / "ref.tsv", reference_text(corpus))
    sub = write(tmp_path / "swapped.json", swapped["run"])
    assert TASK.score(ref, sub).metrics["map@10"] == 1.0


# ------------------------------------------------------------------ worked examples

def one_sentence(tmp_path, relevant: list[str], run: str, **options):
    ref = write(tmp_path / "ref.tsv", HEADER + f"s\t1\t{';'.join(relevant)}\tR\td\tu\ten\n")
    return TASK.score(ref, write(tmp_path / "run.json", '{"u": ' + run + "}"), **options)


def test_worked_example_a_short_tie_is_read_backwards(tmp_path):
    """Three tied variables listed c, b, a; a is relevant. Officially the ranking is the
    file read backwards (a, b, c): AP 1. By id descending it is c, b, a: AP 1/3."""
    run = '{"c": 1.0, "b": 1.0, "a": 1.0}'
    official = one_sentence(tmp_path, ["a"], run)
    assert official.metrics["map@10"] == 1.0 and official.metrics["r_precision"] == 1.0
    by_id = one_sentence(tmp_path, ["a"], run, ties="id")
    assert by_id.metrics["map@10"] == pytest.approx(1 / 3, abs=1e-15)
    assert by_id.metrics["r_precision"] == 0.0
    # listed a, b, c the two rules agree: the file read backwards is c, b, a
    assert one_sentence(tmp_path, ["a"], '{"a": 1, "b": 1, "c": 1}').metrics["map@10"] == \
        pytest.approx(1 / 3, abs=1e-15)
    assert official.conventions["ties"] == "official"
    assert by_id.conventions["ties"] == "id"
    assert "read backwards" in official.conventions["ranking"]
    assert "id descending" in by_id.conventions["ranking"]
    for r in (official, by_id):
        assert (r.conventions["ties_official"], r.conventions["ties_id"]) == \
            (official.conventions["ranking"], by_id.conventions["ranking"])
    assert (official.conventions["score_precision"], by_id.conventions["score_precision"]) \
        == ("double", "float")


def test_worked_example_equal_only_in_single_precision(tmp_path):
    """0.1 and the next double, 0.10000000000000002, are one float32. Officially the
    larger double ranks first (a, relevant: AP 1); by id, in single precision, they tie
    and b goes first (AP 1/2)."""
    run = '{"b": 0.1, "a": 0.10000000000000002}'
    assert one_sentence(tmp_path, ["a"], run).metrics["map@10"] == 1.0
    assert one_sentence(tmp_path, ["a"], run, ties="id").metrics["map@10"] == 0.5


def test_worked_example_16_tied_variables_are_partitioned(tmp_path):
    """Sixteen equal scores, listed v00..v15; v14 is relevant. From 16 items numba's
    quicksort partitions: the pivot (item 7, median of items 0, 7 and 15, all equal) is
    parked at the end, and since no item is smaller or larger than it, both scans stop
    at every item and swap the pairs (0, 14), (1, 13) ... (6, 8); the pivot goes back to
    position 7 and the two halves (under 16 items) are insertion-sorted, unchanged. The
    argsort is 14, 13, ..., 1, 0, 15; reversed: v15, v00, v01, ..., v14. So v14 is 16th:
    AP@10 0, AP@20 1/16. Read backwards, as up to 15 items, and by id descending it
    would be 2nd (AP 1/2)."""
    names = [f"v{i:02d}" for i in range(16)]
    assert official_ranking([(v, 2.0) for v in names]) == ["v15"] + names[:15]
    run = "{" + ", ".join(f'"{v}": 2.0' for v in names) + "}"
    official = one_sentence(tmp_path, ["v14"], run)
    assert official.metrics["map@10"] == 0.0
    assert official.metrics["map@20"] == pytest.approx(1 / 16, abs=1e-15)
    by_id = one_sentence(tmp_path, ["v14"], run, ties="id")
    assert by_id.metrics["map@10"] == 0.5 and by_id.metrics["r_precision"] == 0.0
    # fifteen of them: read backwards, v14 first
    fifteen = "{" + ", ".join(f'"{v}": 2.0' for v in names[:15]) + "}"
    assert one_sentence(tmp_path, ["v14"], fifteen).metrics["map@10"] == 1.0


def test_ties_option_is_checked_in_score_compare_and_the_cli(tmp_path, cli):
    ref = write(tmp_path / "ref.tsv", HEADER + "s\t1\ta\tR\td\tu\ten\n")
    sub = write(tmp_path / "run.json", '{"u": {"b": 1, "a": 1}}')
    with pytest.raises(InvalidInput) as e:
        TASK.score(ref, sub, ties="random")
    assert str(e.value.problems[0]) == "<arguments>: ties: must be one of official, id, " \
                                       "not 'random'"
    with pytest.raises(InvalidInput) as e:               # before any file is read
        TASK.score(tmp_path / "missing.tsv", tmp_path / "missing.json", ties="random")
    assert [p.field for p in e.value.problems] == ["ties"]
    with pytest.raises(InvalidInput):
        TASK.unit_stats(ref, sub, ties="random")
    assert TASK.unit_stats(ref, sub).stats[0, 0] == 1.0
    assert TASK.unit_stats(ref, sub, ties="id").stats[0, 0] == 0.5
    code, out, _ = cli("score", "svident-disambiguation", "-r", ref, "-s", sub, "--ties", "id",
                       "--format", "json")
    assert code == 0 and json.loads(out)["metrics"]["map@10"] == 0.5
    code, out, _ = cli("score", "svident-disambiguation", "-r", ref, "-s", sub,
                       "--format", "json")
    assert code == 0 and json.loads(out)["metrics"]["map@10"] == 1.0
    code, _, err = cli("score", "svident-disambiguation", "-r", ref, "-s", sub, "--ties", "random")
    assert code == 2
    assert err.splitlines()[0] == "<arguments>: ties: must be one of official, id, not 'random'"


# ------------------------------------------------------------------ real data

VAL = ORACLE / "data" / "val.tsv"      # the organizers' validation split (the build script)
# official minus id, (MAP@10, R-precision), as measured on the bench's runs
# (bench/svident_ties.py; docs/conventions.md lists them with the validation split's)
MEASURED = {("trial en", "tied"): (0.010054706893787346, 0.04344553913519428),
            ("trial en", "single precision"): (0.011416332177826505, 0.03987535453052693),
            ("trial en", "unscored"): (-0.0022514934512060936, -0.008653343782654128),
            ("trial de", "tied"): (0.014992725194745399, 0.012041746132655212),
            ("trial de", "single precision"): (-0.007297836843291383, -0.011177627086718017),
            ("trial de", "unscored"): (-0.03129170212503546, -0.02207977207977208)}


def bench_runs():
    """bench/svident_ties.py's runs: (data, kind, reference, run, language or None)."""
    spec = importlib.util.spec_from_file_location("svident_ties", ROOT / "bench" /
                                                  "svident_ties.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    if not (SHARED_DATA / "sv-ident" / "trial" / "train" / "en.tsv").is_file():
        pytest.skip(f"SV-Ident data not found at {SHARED_DATA} (set SHAREVAL_SHARED_DATA)")
    return bench, [(name, kind, ref, run, lang)
                   for name, ref, build, lang in bench.datasets(SHARED_DATA, VAL)
                   for kind, run in bench.variants(build())]


def real_corpus(bench, ref: Path, run: dict, lang: str | None) -> dict:
    sentences = []
    for r in bench.rows(ref):
        relevant = bench.trial_relevant(r["variable"]) if lang else \
            bench.shared_ids(r["variable"])
        sentences.append({"uuid": r["uuid"], "doc": r["doc_id"], "lang": lang or r["lang"],
                          "relevant": relevant, "run": list(run.get(r["uuid"], {}).items())})
    return {"sentences": sentences}


def test_real_runs_with_ties_equal_the_documented_rule_and_the_rules_differ(tmp_path):
    """On the trial data's tied, single-precision and unscored runs: the default equals
    the oracle written here, ties=id the id rule, and their differences are those
    measured (the validation split's are in docs/conventions.md)."""
    bench, runs = bench_runs()
    for name, kind, ref, run, lang in runs:
        corpus = real_corpus(bench, ref, run, lang)
        results = bench.score_both(ref, run, tmp_path)
        official, by_id = (values_of(results[t]) for t in ("official", "id"))
        assert_same(official, oracle_scores(corpus, official_ranking))
        assert_same(by_id, oracle_scores(corpus, id_ranking))
        if (name, kind) in MEASURED:
            got = tuple(official["overall"][m] - by_id["overall"][m]
                        for m in ("map@10", "r_precision"))
            assert got == pytest.approx(MEASURED[name, kind], abs=1e-9), (name, kind)


def test_real_runs_with_ties_equal_the_official_script(tmp_path):
    """The same runs, and the validation split's when the build script fetched it, given
    to the official script: every unit, language and overall value to 1e-9."""
    bench, runs = bench_runs()
    cases, corpora = [], []
    for name, kind, ref, run, lang in runs:
        corpus = real_corpus(bench, ref, run, lang)
        corpora.append((name, kind, ref, run))
        cases.append(dict(official_case(corpus), run=json.dumps(run)))
    outs = run_official(cases, tmp_path)
    for (name, kind, ref, run), out in zip(corpora, outs):
        got = values_of(bench.score_both(ref, run, tmp_path)["official"])
        assert_same(got, from_official(out))
    assert ("validation" in {c[0] for c in corpora}) == VAL.is_file()
