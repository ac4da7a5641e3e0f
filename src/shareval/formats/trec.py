"""TREC qrels (``qid iter docno rel``) and runs (``qid Q0 docno rank score tag``).

Rules follow trec_eval 10.0 (get_qrels.c, get_trec_results.c): blank lines
and lines whose first non-blank character is ``#`` are skipped in both files;
columns after a run's sixth are ignored (with a warning; trec_eval ignores
them silently); a qrels line with more than four columns is an error.

Small files (< 2 MB) are read line by line in Python (no pyarrow import, so scoring a
small run takes a fraction of a second). Large well-formed files (one space or
one tab between columns, no comments) are read by pyarrow's multi-threaded CSV
reader and their ids dictionary-encoded right after, so only integer codes are
kept. Anything the fast reader rejects, and any file with duplicates or
non-finite scores, is re-read line by line so that every problem is reported
with its line number.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..metrics.ranking import Encoded, distinct_codes
from .errors import Problems, locate_not_utf8
from .trec_table import (DROP_WHILE_READING_BYTES, QRELS_FIELDS, RUN_FIELDS,  # noqa: F401
                         TrecTable)

# below this size a file is parsed in Python: importing pyarrow (0.15 s) costs more than
# it saves. The line reader takes about 4 us a line, pyarrow about 2 (ids encoded,
# duplicates checked), so the break-even is near 80,000 lines: 2 MB of 25-byte lines
# (numeric ids), 1 MB of 70-byte ones (UUIDs); measured in docs/dev/i41-ranking.md
SMALL_FILE_BYTES = 1 << 21


def read_qrels(path, problems: Problems) -> TrecTable | None:
    return _read(Path(path), "qrels", problems)


def read_run(path, problems: Problems, qrels=None) -> TrecTable | None:
    """``qrels`` (a table, or a Future of one being read): the run is scored against
    it, so a large run may leave "" in place of the ids no score reads
    (``trec_arrow.read_fast``)."""
    return _read(Path(path), "run", problems, qrels)


def _read(path: Path, kind: str, problems: Problems, qrels=None) -> TrecTable | None:
    if not path.is_file():
        problems.fatal(path, None, "file",
                       "does not exist" if not path.exists() else "is not a file")
        return None
    if path.stat().st_size >= SMALL_FILE_BYTES:
        from . import trec_arrow
        table = trec_arrow.read_fast(path, kind, qrels)
        if table is not None:
            return table
    return _read_lines(path, kind, problems)


def _read_lines(path: Path, kind: str, problems: Problems) -> TrecTable | None:
    names = QRELS_FIELDS if kind == "qrels" else RUN_FIELDS
    width = len(names)
    q_index: dict[str, int] = {}
    d_index: dict[str, int] = {}
    q_codes: list[int] = []
    d_codes: list[int] = []
    values: list = []
    tags: dict[str, int] = {}
    first_line: dict[tuple[int, int], int] = {}
    extra: list[int] = []
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
                if not parts or parts[0].startswith("#"):
                    continue
                first, seen_data = not seen_data, True
                if len(parts) != width and not (kind == "run" and len(parts) > width):
                    # on the first line: the wrong layout (a qrels for a run, JSON, ...)
                    report = problems.fatal if first else problems.add
                    report(path, lineno, "line", f"expected {width} whitespace-separated "
                                                 f"columns ({' '.join(names)}), found {len(parts)}")
                    if first:
                        return None
                    ok = False
                    continue
                if len(parts) > width:
                    extra.append(lineno)
                # conversions inline (no helper call a line): this loop is most of the
                # time of scoring a small file
                if kind == "qrels":
                    try:
                        v = int(parts[3])
                        if "_" in parts[3] or not parts[3].isascii():   # int() takes them
                            raise ValueError
                    except ValueError:
                        problems.add(path, lineno, "relevance", f"not an integer: {parts[3]!r}")
                        ok = False
                        continue
                    if not -2 ** 63 <= v < 2 ** 63:
                        problems.add(path, lineno, "relevance",
                                     f"out of range (a 64-bit integer): {parts[3]!r}")
                        ok = False
                        continue
                else:
                    try:
                        int(parts[3])
                        if "_" in parts[3] or not parts[3].isascii():
                            raise ValueError
                    except ValueError:
                        problems.add(path, lineno, "rank", f"not an integer: {parts[3]!r}")
                        ok = False
                    try:
                        v = float(parts[4])
                    except ValueError:
                        v = math.nan
                    if v - v != 0:                  # nan or +-inf
                        problems.add(path, lineno, "score", f"not a finite number: {parts[4]!r}")
                        ok = False
                        continue
                    tags.setdefault(parts[5], lineno)
                q, d = parts[0], parts[2]
                qc = q_index.setdefault(q, len(q_index))
                dc = d_index.setdefault(d, len(d_index))
                first = first_line.setdefault((qc, dc), lineno)
                if first != lineno:
                    what = "judgment" if kind == "qrels" else "document"
                    problems.add(path, lineno, "doc_id",
                                 f"duplicate {what} {d!r} for query {q!r} "
                                 f"(first at line {first})")
                    ok = False
                    continue
                q_codes.append(qc)
                d_codes.append(dc)
                values.append(v)
        except UnicodeDecodeError:              # decoded by blocks: find the byte again
            locate_not_utf8(problems, path)
            return None
    if not q_codes and ok:
        problems.add(path, None, "file", f"no {kind} lines found")
        return None
    if not ok:
        return None
    notes = []
    if extra:
        lines = "1 run line has" if len(extra) == 1 else f"{len(extra)} run lines have"
        notes.append(f"{path}:{extra[0]}: {lines} more than 6 columns; "
                     f"the columns after run_tag are ignored (as trec_eval does)")
    dtype = np.int64 if kind == "qrels" else np.float64
    return TrecTable(str(path), kind, np.asarray(q_codes, dtype=np.int64), list(q_index),
                     np.asarray(d_codes, dtype=np.int64), list(d_index),
                     np.asarray(values, dtype=dtype), list(tags), notes)


def encode(qrels: TrecTable, run: TrecTable) -> tuple[Encoded, list[str]]:
    """Integer-encode a qrels and a run together; returns (encoding, query ids).

    Query codes follow first appearance (qrels first), so a run written in the
    qrels' query order needs no sorting.
    """
    if not (isinstance(qrels.q_dict, list) and isinstance(run.q_dict, list)
            and isinstance(qrels.d_dict, list) and isinstance(run.d_dict, list)):
        from . import trec_arrow
        return trec_arrow.encode(qrels, run)
    qa, qb, qids = _unify_lists(qrels.q_dict, run.q_dict)
    da, db, docs = _unify_lists(qrels.d_dict, run.d_dict)

    def tiebreak(codes: np.ndarray, runs: np.ndarray) -> np.ndarray:
        # rank among the given documents in ascending byte order (= trec_eval's strcmp;
        # UTF-8 preserves code point order, so Python's str order is the same)
        unique, inverse = distinct_codes(codes)
        ids = [docs[c] for c in unique.tolist()]
        rank = np.empty(unique.size, dtype=np.int64)
        rank[np.array(sorted(range(len(ids)), key=ids.__getitem__), dtype=np.int64)] = \
            np.arange(unique.size, dtype=np.int64)
        return rank[inverse]

    enc = Encoded(len(qids), len(docs), qb[run.q_codes], db[run.d_codes], run.value,
                  qa[qrels.q_codes], da[qrels.d_codes], qrels.value, tiebreak)
    return enc, qids


def _unify_lists(a: list[str], b: list[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Map two id lists into one: (codes of a's entries, codes of b's, union)."""
    index = {x: i for i, x in enumerate(a)}
    for x in b:
        index.setdefault(x, len(index))
    return (np.arange(len(a), dtype=np.int64),
            np.fromiter((index[x] for x in b), dtype=np.int64, count=len(b)), list(index))


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
