"""A large run read against its qrels drops, block by block as it is read, the ids no
score reads (trec_arrow.read_fast with judged ids, trec_rows.block_keep): what it keeps
is what dropping after the read keeps, and every score equals the line reader's. The
size threshold is lowered here so small files take that path, in blocks of 1 kB."""
import random

import numpy as np
import pyarrow as pa
import pytest

from shareval.formats import trec as trec_format
from shareval.formats import trec_arrow, trec_rows
from shareval.formats.errors import InvalidInput
from shareval.tasks import get

from .test_trec_rows import _same, _score_both

LONG = "-document-with-a-long-identifier"


@pytest.fixture
def dropping(monkeypatch):
    monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    monkeypatch.setattr(trec_format, "DROP_WHILE_READING_BYTES", 0)
    monkeypatch.setattr(trec_arrow, "DROP_WHILE_READING_BYTES", 0)
    monkeypatch.setattr(trec_arrow, "BLOCK_BYTES", 1024)


def _write(tmp_path, seed, comeback=False):
    """Queries of 2-12 rows in score order, scores from a few values (ties within and
    across blocks), a third of the ids judged; ``comeback``: a query's rows in two
    places."""
    rng = random.Random(seed)
    qrels, rows = [], []
    for q in range(80):
        docs = [f"{rng.choice('abcxyz')}{q}-{i}{LONG}" for i in range(rng.randrange(2, 13))]
        scores = sorted((rng.choice((1.0, 1.5, 2.0, 2.5, 3.0 + 1e-9, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0))
                         for _ in docs),
                        reverse=True)
        for d in docs:
            if rng.random() < 0.33:
                qrels.append(f"q{q} 0 {d} {rng.choice((0, 1, 2))}\n")
        qrels.append(f"q{q} 0 never-retrieved-{q}{LONG} 1\n")
        rows += [(f"q{q}", d, s) for d, s in zip(docs, scores)]
    if comeback:
        rows = rows[len(rows) // 2:] + rows[:len(rows) // 2]
        rows = rows[:5] + rows[-3:] + rows[5:-3]      # the last query's tail moves up
    (tmp_path / "qrels").write_text("".join(qrels))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} {i} {s!r} tag\n"
                                          for i, (q, d, s) in enumerate(rows, 1)))
    return tmp_path / "qrels", tmp_path / "run", rows


@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_what_is_kept_while_reading_and_the_scores(tmp_path, monkeypatch, dropping, seed,
                                                   split):
    monkeypatch.setattr(trec_arrow, "SPLIT_BYTES", 0 if split else 1 << 40)
    qrels, run, rows = _write(tmp_path, seed)
    ref, sub = get("trec").load(str(qrels), str(run))
    assert sub.ids_dropped and sub.docs_per_row
    judged = {line.split()[2] for line in qrels.read_text().splitlines()}
    s32 = np.array([s for _, _, s in rows], dtype=np.float32)
    q = [q for q, _, _ in rows]
    tied = np.zeros(len(rows), dtype=bool)
    same = (s32[1:] == s32[:-1]) & (np.array(q[1:]) == np.array(q[:-1]))
    tied[1:] |= same
    tied[:-1] |= same
    ids = sub.d_dict.to_pylist()
    for k, (_, doc, _) in enumerate(rows):
        if doc in judged or tied[k]:
            assert ids[k] == doc                 # what any score reads
        else:
            assert ids[k] in (doc, "")
    assert ids.count("") > len(rows) // 8
    # a tie between two unjudged rows on either side of a block boundary: both kept
    bounds = np.cumsum([len(c) for c in sub.d_dict.chunks])[:-1]
    across = [b for b in bounds if same[b - 1] and rows[b - 1][1] not in judged
              and rows[b][1] not in judged]
    if seed == 0:
        assert across, "the data should hold a tie across a block boundary"
    for b in across:
        assert ids[b - 1] == rows[b - 1][1] and ids[b] == rows[b][1]
    _same(*_score_both(monkeypatch, qrels, run))


def test_a_query_coming_back_later_is_read_again_with_every_id(tmp_path, monkeypatch,
                                                               dropping):
    qrels, run, _ = _write(tmp_path, 1, comeback=True)
    _, sub = get("trec").load(str(qrels), str(run))
    assert not sub.ids_dropped and "" not in sub.d_dict.to_pylist()
    _same(*_score_both(monkeypatch, qrels, run))


def test_an_undecided_duplicate_check_reads_again_with_every_id(tmp_path, monkeypatch,
                                                                dropping):
    qrels, run, _ = _write(tmp_path, 2)
    real = trec_rows.has_duplicates
    calls = []

    def undecided_first(*args):
        calls.append(1)
        return None if len(calls) == 1 else real(*args)
    monkeypatch.setattr(trec_rows, "has_duplicates", undecided_first)
    _, sub = get("trec").load(str(qrels), str(run))
    assert len(calls) == 2 and not sub.ids_dropped and "" not in sub.d_dict.to_pylist()


def test_an_empty_id_while_dropping_is_reported_by_line(tmp_path, dropping):
    qrels, run, rows = _write(tmp_path, 0)
    lines = run.read_text().replace(" ", "\t").splitlines(keepends=True)
    parts = lines[30].split("\t")
    parts[2] = ""
    lines[30] = "\t".join(parts)
    run.write_text("".join(lines))
    with pytest.raises(InvalidInput) as e:
        get("trec").load(str(qrels), str(run))
    assert ":31" in "\n".join(e.value.lines())


@pytest.mark.parametrize("against_qrels", [True, False])
def test_short_ids_are_kept_per_row_in_a_run_read_against_its_qrels(
        tmp_path, monkeypatch, dropping, against_qrels):
    """Ids of at most 8 bytes (MS MARCO's numbers): per row and dropped when the run
    is read against its qrels, a dictionary in byte order otherwise; the same scores,
    ties included."""
    rng = random.Random(5)
    (tmp_path / "qrels").write_text("".join(f"q{q} 0 {q}{i} 1\n" for q in range(60)
                                            for i in rng.sample(range(40), 3)))
    (tmp_path / "run").write_text("".join(
        f"q{q} Q0 {q}{i} {k} {s} t\n" for q in range(60)
        for k, (i, s) in enumerate(sorted(((i, rng.choice((1, 2, 3, 4, 5, 6)))
                                           for i in range(40)), key=lambda x: -x[1]), 1)))
    ref = get("trec").reference(str(tmp_path / "qrels"))
    sub = trec_arrow.read_fast(tmp_path / "run", "run", ref if against_qrels else None)
    assert sub.docs_per_row == against_qrels and sub.ids_dropped == against_qrels
    _same(*_score_both(monkeypatch, tmp_path / "qrels", tmp_path / "run"))


def test_duplicates_undecidable_only_when_a_twin_hash_lost_its_id():
    col = pa.chunked_array([pa.array(["first" + LONG, "", "other" + LONG])])
    q = np.zeros(3, dtype=np.int32)
    assert trec_rows.has_duplicates(q, col, np.array([5, 5, 9], dtype=np.uint64)) is None
    # the same upper half, different whole hashes: no text is needed
    assert trec_rows.has_duplicates(q, col, np.array([5, 6, 7], dtype=np.uint64)) is False
    twice = pa.chunked_array([pa.array(["same" + LONG, "same" + LONG])])
    assert trec_rows.has_duplicates(q[:2], twice, np.array([5, 5], dtype=np.uint64)) is True
    other = pa.chunked_array([pa.array(["one" + LONG, "two" + LONG])])
    assert trec_rows.has_duplicates(q[:2], other, np.array([5, 5], dtype=np.uint64)) is False


class _Later:
    """A Future of the qrels that is not done for its first ``wait`` looks."""

    def __init__(self, value, wait, error=None):
        self.value, self.wait, self.error = value, wait, error

    def done(self):
        self.wait -= 1
        return self.wait < 0

    def result(self):
        if self.error:
            raise self.error
        return self.value


@pytest.mark.parametrize("wait", [0, 3, 10 ** 6])
def test_blocks_read_before_the_qrels_are_dropped_from_once_it_is(tmp_path, dropping, wait):
    """The run is read while the qrels is: blocks read before it is done keep their ids
    until it is (or until the run is read), then lose the same ones."""
    qrels, run, _ = _write(tmp_path, 0)
    ref = get("trec").reference(str(qrels))
    now = trec_arrow.read_fast(run, "run", ref)
    later = trec_arrow.read_fast(run, "run", _Later(ref, wait))
    assert now.ids_dropped and later.ids_dropped
    assert later.d_dict.to_pylist() == now.d_dict.to_pylist()


def test_a_qrels_that_cannot_be_read_leaves_every_id(tmp_path, dropping):
    qrels, run, _ = _write(tmp_path, 0)
    t = trec_arrow.read_fast(run, "run", _Later(None, 2, InvalidInput([])))
    assert not t.ids_dropped and "" not in t.d_dict.to_pylist()


def test_the_qrels_problems_come_first(tmp_path, dropping):
    qrels, run, _ = _write(tmp_path, 0)
    qrels.write_text("q1 0 d1 notanumber\n" + qrels.read_text())
    run.write_text("q1 Q0 d1 1 x t\n" + run.read_text())
    with pytest.raises(InvalidInput) as e:
        get("trec").load(str(qrels), str(run))
    assert str(qrels) in e.value.lines()[0]
