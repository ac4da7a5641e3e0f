"""Run ids longer than 8 bytes kept one per row (formats/trec_rows.py): duplicates by
hash with exact confirmation, the qrels join, and the tie-break within runs of equal
scores, 8 bytes of the ids at a time. Every case is checked against the
line reader, which keeps a dictionary and sorts ids as Python strings."""
import random

import numpy as np
import pytest

from shareval.formats import trec as trec_format
from shareval.formats import strhash, trec_rows
from shareval.formats.errors import InvalidInput, Problems
from shareval.formats.trec import read_run
from shareval.tasks import get

MEASURES = "map,map@10,p@10,r_precision,ndcg@10,mrr"


def _score_both(monkeypatch, qrels, run, **options):
    """(line reader result, pyarrow result): the qrels always line by line when small."""
    monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 1 << 30)
    lines = get("trec").score(str(qrels), str(run), measures=MEASURES, **options)
    monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", min(qrels.stat().st_size,
                                                             run.stat().st_size))
    fast = get("trec").score(str(qrels), str(run), measures=MEASURES, **options)
    return lines, fast


def _same(a, b):
    assert a.metrics == b.metrics
    assert a.breakdowns == b.breakdowns


def _tricky_ids(rng: random.Random, n: int) -> list[str]:
    """Long ids sharing 8-byte prefixes, prefixes of each other, non-ASCII bytes."""
    stems = ["abcdefgh", "abcdefgi", "clueweb12-0000", "ééééé", "doc0000", "Z"]
    out = set()
    while len(out) < n:
        stem = rng.choice(stems)
        tail = rng.choice(["", "0", "9", "é", "00", str(rng.randrange(1000))])
        out.add((stem + tail) if len(stem + tail) > 8 else stem + tail + "-long-tail")
    return sorted(out)


@pytest.mark.parametrize("seed", range(4))
def test_tied_long_ids_rank_as_the_line_reader_ranks_them(tmp_path, monkeypatch, seed):
    rng = random.Random(seed)
    qrels, run = [], []
    for q in range(30):
        docs = _tricky_ids(rng, 25)
        rng.shuffle(docs)
        for d in rng.sample(docs, 6):
            qrels.append(f"q{q} 0 {d} {rng.choice((0, 1, 2))}\n")
        qrels.append(f"q{q} 0 never-retrieved-document {1}\n")
        run += [f"q{q} Q0 {d} {i} {rng.randrange(3)} t\n" for i, d in enumerate(docs, 1)]
    (tmp_path / "qrels").write_text("".join(qrels))
    (tmp_path / "run").write_text("".join(run))
    table = read_run(tmp_path / "run", Problems())            # the threshold is 2 MB here
    assert not table.docs_per_row
    lines, fast = _score_both(monkeypatch, tmp_path / "qrels", tmp_path / "run")
    _same(lines, fast)


def test_ids_sharing_their_first_8_bytes_order_by_the_rest(tmp_path, monkeypatch):
    # byte order ascending: abcdefgh < abcdefgh0 < abcdefgh9 < abcdefghé; descending ranks
    docs = ["abcdefgh0", "abcdefghé", "abcdefgh", "abcdefgh9", "other-document"]
    (tmp_path / "run").write_text("".join(f"q Q0 {d} 1 1.0 t\n" for d in docs))
    expected = ["other-document", "abcdefghé", "abcdefgh9", "abcdefgh0", "abcdefgh"]
    monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    assert read_run(tmp_path / "run", Problems()).docs_per_row
    for i, d in enumerate(expected):
        (tmp_path / "qrels").write_text(f"q 0 {d} 1\n")
        r = get("trec").score(str(tmp_path / "qrels"), str(tmp_path / "run"), measures="mrr")
        assert r.metrics["mrr"] == pytest.approx(1 / (i + 1)), d


def test_a_duplicate_long_id_is_reported_by_line(tmp_path, monkeypatch):
    monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    (tmp_path / "run").write_text("q1 Q0 clueweb12-0000tw-05-12114 1 2.0 t\n"
                                  "q2 Q0 clueweb12-0000tw-05-12114 1 2.0 t\n"
                                  "q1 Q0 clueweb12-0000tw-05-12115 2 1.0 t\n"
                                  "q1 Q0 clueweb12-0000tw-05-12114 3 0.5 t\n")
    (tmp_path / "qrels").write_text("q1 0 clueweb12-0000tw-05-12114 1\n")
    with pytest.raises(InvalidInput) as e:
        get("trec").score(str(tmp_path / "qrels"), str(tmp_path / "run"))
    text = e.value.render()
    assert ":4:" in text and "clueweb12-0000tw-05-12114" in text


def test_the_same_long_id_in_two_queries_is_no_duplicate(tmp_path, monkeypatch):
    monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    (tmp_path / "run").write_text("q1 Q0 clueweb12-0000tw-05-12114 1 2.0 t\n"
                                  "q2 Q0 clueweb12-0000tw-05-12114 1 2.0 t\n")
    table = read_run(tmp_path / "run", Problems())
    assert table is not None and table.docs_per_row and len(table) == 2


def test_a_hash_collision_is_never_taken_for_a_duplicate(tmp_path, monkeypatch):
    """Every id hashed alike: each query's rows collide and are compared exactly."""
    rng = random.Random(7)
    run = [f"q{q} Q0 {d} {i} {rng.random()} t\n"
           for q in range(20) for i, d in enumerate(_tricky_ids(rng, 15), 1)]
    (tmp_path / "run").write_text("".join(run))
    (tmp_path / "qrels").write_text("".join(
        f"q{q} 0 {rng.choice(_tricky_ids(rng, 15))} 1\n" for q in range(20)))
    monkeypatch.setattr(trec_rows, "arrow_hashes",
                        lambda chunk: np.zeros(len(chunk), np.uint64))
    monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    table = read_run(tmp_path / "run", Problems())
    assert table is not None and table.docs_per_row        # not sent to the line reader
    lines, fast = _score_both(monkeypatch, tmp_path / "qrels", tmp_path / "run")
    _same(lines, fast)
    dup = run + [run[3].replace(" 4 ", " 99 ")]             # q0's 4th id again
    (tmp_path / "run").write_text("".join(dup))
    assert read_run(tmp_path / "run", Problems()) is None  # Problems raised by load_checked


def test_hashes_see_every_byte_and_the_length():
    import pyarrow as pa
    ids = ["abcdefgh", "abcdefgh\x01", "abcdefgi", "x" * 17, "x" * 16 + "y", "é" * 5,
           "é" * 4 + "e"]
    col = pa.chunked_array([pa.array(ids[:3]), pa.array(ids[3:])])
    h = np.concatenate([strhash.arrow_hashes(c) for c in col.chunks])
    assert len(set(h.tolist())) == len(ids)
    again = strhash.arrow_hashes(pa.array(ids[::-1]))
    assert again.tolist() == h.tolist()[::-1]                  # the same id, the same hash


def test_a_split_of_a_per_row_run_scores_as_the_line_reader(tmp_path, monkeypatch):
    from shareval.tasks import splits
    rng = random.Random(3)
    run = [f"q{q} Q0 {d} {i} {rng.randrange(4)} t\n"
           for q in range(12) for i, d in enumerate(_tricky_ids(rng, 10), 1)]
    qrels = [f"q{q} 0 {d} 1\n" for q in range(12) for d in _tricky_ids(rng, 10)[:4]]
    (tmp_path / "run").write_text("".join(run))
    (tmp_path / "qrels").write_text("".join(qrels))
    task = get("trec")
    results = []
    for threshold in (1 << 30, 0):
        monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", threshold)
        ref, sub = task.load(str(tmp_path / "qrels"), str(tmp_path / "run"))
        ref, sub = splits._trec(ref, sub, lambda q: q in {"q1", "q4", "q7", "q10"})
        assert sub.docs_per_row == (threshold == 0)
        results.append(task._score(ref, sub, ["map", "mrr"], False, False, "float", 1))
    _same(*results)


def test_a_duplicate_in_another_block_of_the_file_is_found(tmp_path, monkeypatch):
    """The reader parses blocks into chunks; an id's hash must not depend on its chunk
    (on the longest id there)."""
    from shareval.formats import trec_arrow
    monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    monkeypatch.setattr(trec_arrow, "BLOCK_BYTES", 200)
    lines = [f"q1 Q0 short-id-{i:03d} {i} {100 - i} t\n" for i in range(20)]
    lines.insert(3, "q1 Q0 " + "a-much-longer-document-id-" * 3 + " 99 100 t\n")
    lines.append("q1 Q0 short-id-001 21 0.5 t\n")           # blocks away from the first
    (tmp_path / "run").write_text("".join(lines))
    assert read_run(tmp_path / "run", Problems()) is None
    (tmp_path / "run").write_text("".join(lines[:-1]))
    table = read_run(tmp_path / "run", Problems())
    assert table is not None and table.docs_per_row
    import pyarrow as pa
    assert isinstance(table.d_dict, pa.ChunkedArray) and table.d_dict.num_chunks > 2


@pytest.mark.parametrize("seed", range(6))
def test_tie_keys_order_each_run_by_bytes_at_every_word_boundary(seed):
    """join's tie-break on ids sharing 7, 8, 9, 16, 17 or 24 bytes, prefixes of each
    other at word boundaries, multi-byte characters across a boundary, judged and
    unjudged ids, several runs: within each run, keys ascend as the ids' UTF-8 bytes."""
    import pyarrow as pa
    rng = random.Random(seed)
    stems = ["a" * 7, "a" * 8, "a" * 9, "abcdefgh" * 2, "abcdefgh" * 2 + "x", "é" * 12,
             "abcdefgh" * 3, "b"]
    ids = sorted({rng.choice(stems) + rng.choice(["", "0", "é", "aé", "\x7f", "00000000"])
                  for _ in range(400)})
    judged = rng.sample(ids, len(ids) // 3)
    chunks = [ids[i:i + 7] for i in range(0, len(ids), 7)]
    docs = pa.chunked_array([pa.array(c, pa.string()) for c in chunks])
    code, _, tiebreak = trec_rows.join(pa.array(judged, pa.string()), docs)
    rows = np.array(rng.sample(range(len(ids)), len(ids)), dtype=np.int64)
    runs = np.array([rng.randrange(5) for _ in rows], dtype=np.int64)
    keys = tiebreak(code[rows], runs)
    for r in range(5):
        mine = [(int(k), ids[i]) for k, i, rr in zip(keys, rows, runs) if rr == r]
        by_key = [d for _, d in sorted(mine)]
        assert by_key == sorted(by_key, key=lambda d: d.encode()), r


@pytest.mark.parametrize("size", [1, 5, 7, 8, 9, 100])
def test_windows_at_reads_what_the_padded_copy_holds(size):
    rng = np.random.default_rng(size)
    data = rng.integers(1, 256, size, dtype=np.uint8)
    begin = np.arange(size, dtype=np.int64)[::-1].copy()
    assert np.array_equal(strhash.windows_at(data, begin), strhash.windows(data)[begin])
    assert strhash.windows_at(data[:0], begin[:0]).size == 0


# -- ids no score reads are dropped once the qrels is known (drop_unscored_ids) --------

def _write_tied_case(tmp_path, sorted_run=True):
    """Queries where a judged id ties with a larger unjudged one: trec_eval ranks the
    unjudged first (ids descending), so dropping a tied id changes AP."""
    long = "-document-with-a-long-identifier"
    qrels, run = [], []
    for q in range(6):
        judged = f"aa{q}{long}"
        qrels.append(f"q{q} 0 {judged} 1\n")
        qrels.append(f"q{q} 0 never-retrieved-{q}{long} 1\n")
        rows = [(f"zz{q}{long}", 5.0), (judged, 5.0), (f"mm{q}{long}", 4.0),
                (f"bb{q}{long}", 3.0 + 1e-9), (f"cc{q}{long}", 3.0), (f"dd{q}{long}", 1.0)]
        if not sorted_run:
            rows = rows[::-1]
        run += [f"q{q} Q0 {d} {i + 1} {s!r} tag\n" for i, (d, s) in enumerate(rows)]
    (tmp_path / "qrels").write_text("".join(qrels))
    (tmp_path / "run").write_text("".join(run))
    return tmp_path / "qrels", tmp_path / "run"


@pytest.mark.parametrize("precision", ["float", "double"])
@pytest.mark.parametrize("judged_bits", [24, 1])
def test_dropped_ids_are_exactly_the_unjudged_untied_ones_and_scores_stay(
        tmp_path, monkeypatch, precision, judged_bits):
    """Judged rows and rows tied in single precision keep their ids (a superset by hash
    prefix may keep more: judged_bits=1 keeps all); results equal the line reader's."""
    from shareval.formats import trec_arrow
    monkeypatch.setattr(trec_arrow, "BLOCK_BYTES", 256)
    monkeypatch.setattr(trec_rows, "JUDGED_BITS", judged_bits)
    monkeypatch.setattr(trec_rows, "DROP_MIN_BYTES", 0)
    qrels, run = _write_tied_case(tmp_path)
    monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    ref, sub = get("trec").load(str(qrels), str(run))
    assert sub.docs_per_row and sub.d_hashes is None
    ids = sub.d_dict.to_pylist()
    full = [line.split()[2] for line in run.read_text().splitlines()]
    for kept, doc in zip(ids, full):
        must = doc.startswith(("aa", "zz", "bb", "cc"))     # judged, or tied in float
        assert kept == doc if must or judged_bits == 1 else kept in (doc, "")
    if judged_bits == 24:
        assert ids.count("") >= 6          # "mm" and "dd" rows: 12, less hash-prefix luck
    lines, fast = _score_both(monkeypatch, qrels, run, score_precision=precision)
    _same(lines, fast)
    assert fast.breakdowns["per_query"]["q0"]["map"] == pytest.approx(0.25)


def test_a_run_not_in_score_order_keeps_every_id(tmp_path, monkeypatch):
    monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    monkeypatch.setattr(trec_rows, "DROP_MIN_BYTES", 0)
    qrels, run = _write_tied_case(tmp_path, sorted_run=False)
    _, sub = get("trec").load(str(qrels), str(run))
    assert "" not in sub.d_dict.to_pylist()
    _same(*_score_both(monkeypatch, qrels, run))


def test_without_hashes_the_exact_join_decides_what_is_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    qrels, run = _write_tied_case(tmp_path)
    ref = get("trec").reference(str(qrels))
    sub = read_run(run, Problems())
    sub.d_hashes = None
    monkeypatch.setattr(trec_rows, "DROP_MIN_BYTES", 0)
    from shareval.formats.trec_arrow import as_arrow
    trec_rows.drop_unscored_ids(sub, as_arrow(ref.d_dict))
    full = [line.split()[2] for line in run.read_text().splitlines()]
    assert sub.d_dict.to_pylist() == [d if d.startswith(("aa", "zz", "bb", "cc")) else ""
                                      for d in full]


@pytest.mark.parametrize("split", [False, True])
def test_the_streamed_reader_unifies_queries_across_blocks(tmp_path, monkeypatch, split):
    """Queries split between blocks (and halves of the file read at once) and coming
    back later, tags first seen late: the same table as the line reader's."""
    from shareval.formats import trec_arrow
    monkeypatch.setattr(trec_arrow, "BLOCK_BYTES", 128)
    monkeypatch.setattr(trec_arrow, "SPLIT_BYTES", 0 if split else 1 << 40)
    rng = random.Random(3)
    lines = [f"q{rng.randrange(7)} Q0 d{i:05d} {i} {rng.random():.6f} t{rng.randrange(3)}\n"
             for i in range(300)]
    (tmp_path / "run").write_text("".join(lines))
    fast = trec_arrow.read_fast(tmp_path / "run", "run")
    slow = trec_format._read_lines(tmp_path / "run", "run", Problems())
    assert fast is not None and fast.d_dict.num_chunks > 10 if hasattr(fast.d_dict, "num_chunks") \
        else fast is not None
    assert fast.qids() == slow.qids() and fast.docs() == slow.docs()
    assert fast.tags == slow.tags and np.array_equal(fast.value, slow.value)


def test_ids_of_a_small_run_are_all_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    qrels, run = _write_tied_case(tmp_path)
    monkeypatch.setattr(trec_rows, "DROP_MIN_BYTES", run.stat().st_size)
    _, sub = get("trec").load(str(qrels), str(run))
    assert "" not in sub.d_dict.to_pylist() and sub.d_hashes is None


@pytest.mark.parametrize("where", [3, 150, 298])
def test_a_bad_score_in_either_half_goes_to_the_line_reader(tmp_path, monkeypatch, where):
    from shareval.formats import trec_arrow
    monkeypatch.setattr(trec_arrow, "BLOCK_BYTES", 256)
    monkeypatch.setattr(trec_arrow, "SPLIT_BYTES", 0)
    monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    lines = [f"q{i // 10} Q0 d{i:05d} {i} {1000 - i} t\n" for i in range(300)]
    lines[where] = lines[where].replace(f" {1000 - where} ", " inf ")
    (tmp_path / "run").write_text("".join(lines))
    assert trec_arrow.read_fast(tmp_path / "run", "run") is None
    problems = Problems()
    read_run(tmp_path / "run", problems)
    assert [p.line for p in problems.items] == [where + 1]


@pytest.mark.parametrize("codes", [[0, 1, 2, 5, 6, 9], [3, 3, 4, 8], [9], [], [7, 2, 5]])
def test_take_ids_of_a_chunked_column_takes_chunk_by_chunk(codes):
    """Ascending codes are taken from each chunk (no join of every chunk: a split of a
    per-row run); the same ids as Arrow's own take, in any order."""
    import pyarrow as pa
    from shareval.formats.trec_table import take_ids
    col = pa.chunked_array([pa.array([f"id-{i}-long-enough" for i in range(k, k + 4)])
                            for k in (0, 4, 8)] + [pa.array([], pa.string())])
    codes = np.array(codes, dtype=np.int64)
    got = take_ids(col, codes)
    assert got.to_pylist() == [f"id-{i}-long-enough" for i in codes.tolist()]
    if codes.size > 1 and np.all(codes[1:] >= codes[:-1]):
        assert isinstance(got, pa.ChunkedArray)
        assert got.num_chunks == len(set(np.searchsorted([4, 8], codes, side="right").tolist()))


@pytest.mark.parametrize("stem", ["doc", "clueweb12-0000tw-", "abcdefgh"])
def test_ties_among_ids_sharing_a_prefix_rank_as_the_line_reader_ranks_them(
        tmp_path, monkeypatch, stem):
    """Every id starts with ``stem`` (the tie-break skips what all share), some ids
    are the stem alone or prefixes of others: the line reader's order."""
    rng = random.Random(len(stem))
    tails = ["", "1", "10", "100", "2", "9", "1-long-tail-x", "é", "0", "00", "-long-id-z"]
    qrels, run = [], []
    for q in range(25):
        docs = [stem + t for t in rng.sample(tails, 8)]
        for d in rng.sample(docs, 3):
            qrels.append(f"q{q} 0 {d} {rng.choice((1, 2))}\n")
        run += [f"q{q} Q0 {d} {i} {rng.choice((1.0, 2.0))} t\n" for i, d in enumerate(docs, 1)]
    run.append(f"q0 Q0 {stem}-an-id-longer-than-eight-bytes 99 0.5 t\n")
    (tmp_path / "qrels").write_text("".join(qrels))
    (tmp_path / "run").write_text("".join(run))
    lines, fast = _score_both(monkeypatch, tmp_path / "qrels", tmp_path / "run")
    _same(lines, fast)
