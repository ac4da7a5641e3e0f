"""TREC qrels (``qid iter docno rel``) and runs (``qid Q0 docno rank score tag``).

Well-formed files (one space or one tab between columns) are read by pyarrow's
multi-threaded CSV reader. Anything it rejects, and any file with duplicates or
non-finite scores, is re-read line by line so that every problem is reported
with its line number; that path also accepts irregular whitespace, as
trec_eval does.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ..metrics.ranking import Encoded
from .errors import Problems, locate_not_utf8

QRELS_FIELDS = ("query_id", "iteration", "doc_id", "relevance")
RUN_FIELDS = ("query_id", "Q0", "doc_id", "rank", "score", "run_tag")


@dataclass
class TrecTable:
    """A parsed qrels or run: ids as integer codes into per-file dictionaries."""
    path: str
    kind: str                      # "qrels" or "run"
    q_codes: np.ndarray
    q_dict: pa.Array               # distinct query ids, in order of first appearance
    d_codes: np.ndarray
    d_dict: pa.Array               # distinct document ids
    value: np.ndarray              # relevance (int64) or score (float64)
    tags: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.value)

    def qids(self) -> list[str]:
        """Query id of every line."""
        return self.q_dict.take(pa.array(self.q_codes)).to_pylist()

    def docs(self) -> list[str]:
        return self.d_dict.take(pa.array(self.d_codes)).to_pylist()


PARALLEL_ROWS = 2_000_000


def _encode_column(col) -> tuple[np.ndarray, pa.Array]:
    """Dictionary codes of a string column (codes in order of first appearance).

    Hashing millions of ids is single-threaded in pyarrow, so a large column
    is encoded as two halves on two threads whose dictionaries are then unified.
    """
    if isinstance(col, pa.ChunkedArray) and len(col) >= PARALLEL_ROWS and col.num_chunks >= 2:
        from concurrent.futures import ThreadPoolExecutor
        half = col.num_chunks // 2
        with ThreadPoolExecutor(2) as pool:
            (ca, da), (cb, db) = pool.map(_encode_column, [pa.chunked_array(col.chunks[:half]),
                                                           pa.chunked_array(col.chunks[half:])])
        ma, mb, dictionary = _unify(da, db)
        return np.concatenate([ma[ca], mb[cb]]), dictionary
    enc = col.dictionary_encode()
    if isinstance(enc, pa.ChunkedArray):
        if enc.num_chunks == 0:
            return np.zeros(0, dtype=np.int64), pa.array([], pa.string())
        dictionary = enc.chunks[0].dictionary
        codes = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in enc.chunks])
    else:
        dictionary = enc.dictionary
        codes = enc.indices.to_numpy(zero_copy_only=False)
    return codes.astype(np.int64, copy=False), dictionary


def _table(path, kind, qids, docs, value, tags) -> TrecTable:
    q_codes, q_dict = _encode_column(qids)
    d_codes, d_dict = _encode_column(docs)
    return TrecTable(str(path), kind, q_codes, q_dict, d_codes, d_dict, value, tags)


def read_qrels(path, problems: Problems) -> TrecTable | None:
    return _read(Path(path), "qrels", problems)


def read_run(path, problems: Problems) -> TrecTable | None:
    return _read(Path(path), "run", problems)


def _read(path: Path, kind: str, problems: Problems) -> TrecTable | None:
    if not path.is_file():
        problems.fatal(path, None, "file",
                       "does not exist" if not path.exists() else "is not a file")
        return None
    table = _read_fast(path, kind)
    if table is not None:
        return table
    return _read_slow(path, kind, problems)


def _delimiter(path: Path) -> str | None:
    with open(path, "rb") as f:
        head = f.readline()
    if b"\t" in head and b" " not in head.strip():
        return "\t"
    if b" " in head and b"\t" not in head:
        return " "
    return None


def _read_fast(path: Path, kind: str) -> TrecTable | None:
    delim = _delimiter(path)
    if delim is None:
        return None
    names = QRELS_FIELDS if kind == "qrels" else RUN_FIELDS
    types = {"query_id": pa.string(), "doc_id": pa.string(), "iteration": pa.string(),
             "Q0": pa.string(), "run_tag": pa.string(), "relevance": pa.int64(),
             "rank": pa.int64(), "score": pa.float64()}
    try:
        t = pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(column_names=list(names), block_size=1 << 24),
            parse_options=pacsv.ParseOptions(delimiter=delim, quote_char=False,
                                             escape_char=False, newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(
                column_types={n: types[n] for n in names}, null_values=[],
                strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError, OSError):
        return None
    if t.num_rows == 0:
        return None
    if kind == "run":
        value = t["score"].to_numpy()
        if not np.all(np.isfinite(value)):
            return None
        tags = pc.unique(t["run_tag"]).to_pylist()
    else:
        value = t["relevance"].to_numpy()
        tags = []
    table = _table(path, kind, t["query_id"], t["doc_id"], value, tags)
    # an empty id (two adjacent delimiters) or a duplicate: let the slow path report lines
    if _has_empty(table.q_dict) or _has_empty(table.d_dict) or _has_duplicates(table):
        return None
    return table


def _has_empty(dictionary: pa.Array) -> bool:
    return len(dictionary) > 0 and pc.min(pc.utf8_length(dictionary)).as_py() == 0


def _has_duplicates(t: TrecTable) -> bool:
    keys = np.sort(t.q_codes * np.int64(max(len(t.d_dict), 1)) + t.d_codes)
    return bool(np.any(keys[1:] == keys[:-1]))


def _read_slow(path: Path, kind: str, problems: Problems) -> TrecTable | None:
    names = QRELS_FIELDS if kind == "qrels" else RUN_FIELDS
    qids: list[str] = []
    docs: list[str] = []
    values: list = []
    tags: dict[str, int] = {}
    first_line: dict[tuple[str, str], int] = {}
    ok = True
    seen_data = False
    try:
        f = open(path, encoding="utf-8")
    except OSError as e:
        problems.fatal(path, None, "file", f"cannot be read ({e.strerror})")
        return None
    with f:
        try:
            for lineno, line in enumerate(f, 1):
                if problems.full:
                    break
                parts = line.split()
                if not parts:
                    continue
                first, seen_data = not seen_data, True
                if len(parts) != len(names):
                    # on the first line: the wrong layout (a qrels for a run, JSON, ...)
                    report = problems.fatal if first else problems.add
                    report(path, lineno, "line", f"expected {len(names)} whitespace-separated "
                                                 f"columns ({' '.join(names)}), found {len(parts)}")
                    if first:
                        return None
                    ok = False
                    continue
                q, d = parts[0], parts[2]
                if kind == "qrels":
                    v = _int(parts[3])
                    if v is None:
                        problems.add(path, lineno, "relevance", f"not an integer: {parts[3]!r}")
                        ok = False
                        continue
                else:
                    if _int(parts[3]) is None:
                        problems.add(path, lineno, "rank", f"not an integer: {parts[3]!r}")
                        ok = False
                    v = _float(parts[4])
                    if v is None:
                        problems.add(path, lineno, "score", f"not a finite number: {parts[4]!r}")
                        ok = False
                        continue
                    tags.setdefault(parts[5], lineno)
                key = (q, d)
                if key in first_line:
                    what = "judgment" if kind == "qrels" else "document"
                    problems.add(path, lineno, "doc_id",
                                 f"duplicate {what} {d!r} for query {q!r} "
                                 f"(first at line {first_line[key]})")
                    ok = False
                    continue
                first_line[key] = lineno
                qids.append(q)
                docs.append(d)
                values.append(v)
        except UnicodeDecodeError:              # decoded by blocks: find the byte again
            locate_not_utf8(problems, path)
            return None
    if not qids and ok:
        problems.add(path, None, "file", f"no {kind} lines found")
        return None
    if not ok:
        return None
    dtype = np.int64 if kind == "qrels" else np.float64
    return _table(path, kind, pa.array(qids, pa.string()), pa.array(docs, pa.string()),
                  np.asarray(values, dtype=dtype), list(tags))


def _int(s: str) -> int | None:
    try:
        return int(s)
    except ValueError:
        return None


def _float(s: str) -> float | None:
    try:
        v = float(s)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _unify(a: pa.Array, b: pa.Array) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """Map two dictionaries into one: (codes of a's entries, codes of b's, union)."""
    both = pa.concat_arrays([a, b]).dictionary_encode()
    idx = both.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return idx[: len(a)], idx[len(a):], both.dictionary


def _byte_order_rank(dictionary: pa.Array) -> np.ndarray:
    """Rank of each entry in ascending byte order (= trec_eval's strcmp)."""
    order = pc.sort_indices(dictionary).to_numpy()
    rank = np.empty(len(dictionary), dtype=np.int64)
    rank[order] = np.arange(len(dictionary), dtype=np.int64)
    return rank


def encode(qrels: TrecTable, run: TrecTable) -> tuple[Encoded, list[str]]:
    """Integer-encode a qrels and a run together; returns (encoding, query ids).

    Query codes follow first appearance (qrels first), so a run written in the
    qrels' query order needs no sorting.
    """
    qa, qb, qdict = _unify(qrels.q_dict, run.q_dict)
    da, db, ddict = _unify(qrels.d_dict, run.d_dict)
    run_q, run_d = qb[run.q_codes], db[run.d_codes]
    qrels_q, qrels_d = qa[qrels.q_codes], da[qrels.d_codes]
    rel = qrels.value.astype(np.int64, copy=False)
    n = np.int64(max(len(ddict), 1))
    value_set = pa.array(qrels_q * n + qrels_d)

    def judge(rows):
        """Hash join on (query, doc): fast whatever the order of the rows."""
        if rel.size == 0:
            return np.zeros(run_q.size if rows is None else rows.size, dtype=np.int64)
        rq = run_q if rows is None else run_q[rows]
        rd = run_d if rows is None else run_d[rows]
        idx = pc.index_in(pa.array(rq * n + rd), value_set=value_set)
        found = idx.is_valid().to_numpy(zero_copy_only=False)
        return np.where(found, rel[idx.fill_null(0).to_numpy()], 0)

    enc = Encoded(len(qdict), len(ddict), run_q, run_d, run.value.astype(np.float64, copy=False),
                  qrels_q, qrels_d, rel, lambda: _byte_order_rank(ddict), judge=judge)
    return enc, qdict.to_pylist()


def write_run(path, run: dict, tag: str = "shareval") -> None:
    """Write ``{qid: {docid: score}}`` as a TREC run, ranked by score."""
    with open(path, "w", encoding="utf-8") as f:
        for qid, docs in run.items():
            ranked = sorted(docs.items(), key=lambda kv: (-kv[1], kv[0]))
            for rank, (d, s) in enumerate(ranked, 1):
                f.write(f"{qid} Q0 {d} {rank} {s!r} {tag}\n")


def write_qrels(path, qrels: dict) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for qid, docs in qrels.items():
            for d, r in docs.items():
                f.write(f"{qid} 0 {d} {int(r)}\n")
