"""The pyarrow reader for large TREC files (imported only for files of 2 MB or more).

Ids are read as plain string columns (the CSV reader's threads parse them
fastest that way; per-block dictionaries cost twice as much with their
unification) and then dictionary-encoded in one pass, so only int32 codes
plus one copy of each distinct id are kept past reading.

Arrays cross between numpy and pyarrow through their buffers: pyarrow's
``to_numpy`` and ``pa.array`` import pandas (0.2 s or more) to check types.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ..metrics.ranking import Encoded, distinct_codes
from . import trec_rows
from .strhash import arrow_hashes, arrow_offsets, windows_at
from .trec_table import (DROP_WHILE_READING_BYTES, QRELS_FIELDS, RUN_FIELDS, TrecTable,
                         arrow_codes)
from .trec_table import arrow_bools as _bools
from .trec_table import arrow_numpy as _to_numpy

_IDS = pa.string()
# the CSV reader's block, parsed into one chunk: the streaming reader holds a few blocks
# ahead, so 16 MB blocks held 270 MB more than 4 MB ones at 10M lines, no faster
BLOCK_BYTES = 1 << 22
# integers are read as text: pyarrow's integer parser also takes hexadecimal ("0x10"),
# which Python's int(), the line reader's, refuses (``_integers`` checks the text)
_INTEGERS = ("relevance", "rank")
_TYPES = {"query_id": _IDS, "doc_id": _IDS, "iteration": _IDS, "Q0": _IDS, "run_tag": _IDS,
          "relevance": _IDS, "rank": _IDS, "score": pa.float64()}


# pyarrow's CSV reader skips a UTF-8 byte order mark where a stream starts
BOM = b"\xef\xbb\xbf"


def _delimiter(path: Path) -> str | None:
    """The one delimiter of the file's lines, or None (the line reader's file): also for
    a leading UTF-8 byte order mark, which pyarrow skips and the line reader keeps."""
    with open(path, "rb") as f:
        head = f.readline()
    if head.startswith(BOM):
        return None
    if b"\t" in head and b" " not in head.strip():
        return "\t"
    if b" " in head and b"\t" not in head:
        return " "
    return None


# whitespace str.split() splits on, beyond ASCII (the line reader's columns)
_UNICODE_SPACE = "[\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}]"


def _plain(col: pa.Array) -> bool:
    """Whether every value of a text column is one field for the line reader as well:
    not empty (two adjacent delimiters: one column fewer for str.split()), no byte up
    to 0x20 (the other delimiter, tab, form feed, NUL, ...: str.split() would cut
    there, and NUL would pad short ids into another id's code) and no Unicode
    whitespace. ASCII text is checked by its smallest and largest byte."""
    if not len(col):
        return True
    data, offsets, _ = arrow_offsets(col)
    if int(np.diff(offsets).min()) == 0:
        return False
    if int(data.min()) <= 0x20:
        return False
    if int(data.max()) < 0x80:
        return True
    return not pc.any(pc.match_substring_regex(col, _UNICODE_SPACE)).as_py()


_LONGEST_INTEGER = len(str(-2 ** 63))


def _integers(col: pa.Array) -> bool:
    """Whether every value of an integer column (read as text) is an optional minus
    and ASCII digits, at most 20 bytes; anything else goes to the line reader, which
    takes "+" and refuses "_", other scripts' digits and int()'s limit of 4,300 digits
    (leading zeros too; -2**63 has 20 bytes)."""
    if not len(col):
        return True
    data, offsets, first = arrow_offsets(col)
    lengths = np.diff(offsets)
    if int(lengths.min()) == 0 or int(lengths.max()) > _LONGEST_INTEGER:
        return False
    not_digit = np.subtract(data, ord("0"), dtype=np.uint8) > 9
    if not not_digit.any():
        return True
    at = np.flatnonzero(not_digit)
    if not bool(np.all(data[at] == ord("-"))):
        return False
    # a minus only first, and followed by a digit
    value = np.searchsorted(offsets, at + first, side="right") - 1
    return bool(np.all(offsets[value] - first == at)) and bool(np.all(lengths[value] > 1))


def _chunks(col):
    return col.chunks if isinstance(col, pa.ChunkedArray) else [col]


def plain_batch(batch, names) -> bool:
    """Whether every column of a parsed block that is text is what the line reader
    would read (``_plain``, ``_integers``): else the file is left to it."""
    for name in names:
        if batch.schema.field(name).type != pa.string():
            continue
        check = _integers if name in _INTEGERS else _plain
        if not all(check(chunk) for chunk in _chunks(batch.column(name))):
            return False
    return True


def integer_values(col) -> np.ndarray:
    """The int64 values of an integer column that ``_integers`` accepted (ArrowInvalid
    beyond 64 bits: the line reader reports it)."""
    return _to_numpy(pc.cast(col, pa.int64()))


def checked_options(names, delim: str, **read) -> dict:
    """``csv_options`` with every column read, the ignored ones too, for ``plain_batch``
    (an ignored column holding a tab splits a line into more columns for the line
    reader)."""
    options = csv_options(names, delim, **read)
    options["convert_options"].include_columns = list(names)
    return options


def csv_options(names, delim: str, **read) -> dict:
    """pyarrow.csv.read_csv's options for a TREC file with these columns: one
    definition for the fast reader and the upload child's block check, so that both
    accept exactly the same lines. ``read``: more ReadOptions (block size, threads)."""
    return dict(
        read_options=pacsv.ReadOptions(column_names=list(names), **read),
        parse_options=pacsv.ParseOptions(delimiter=delim, quote_char=False,
                                         escape_char=False, newlines_in_values=False),
        convert_options=pacsv.ConvertOptions(
            # iteration and Q0 are ignored (as trec_eval does): checked for presence only
            include_columns=[n for n in names if n not in ("iteration", "Q0")],
            column_types={n: _TYPES[n] for n in names}, null_values=[],
            strings_can_be_null=False, quoted_strings_can_be_null=False))


def read_fast(path: Path, kind: str, qrels=None) -> TrecTable | None:
    """The table, or None when the file needs the line reader (which reports problems).
    ``qrels``: the qrels table the run is scored against, or a Future of it (read
    meanwhile), for a run of ``DROP_WHILE_READING_BYTES`` or more to drop the ids no
    score reads as it is read."""
    delim = _delimiter(path)
    if delim is None:
        return None
    names = QRELS_FIELDS if kind == "qrels" else RUN_FIELDS
    judged = None
    if kind == "run" and qrels is not None and \
            path.stat().st_size >= DROP_WHILE_READING_BYTES:
        judged = Judged(qrels)
    try:
        columns = _stream(path, kind, delim, names, judged)
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError, OSError):
        return None
    if columns is None:
        return None
    q_codes, q_dict, docs, value, tags, hashes, dropped = columns
    if dropped and not trec_rows.run_grouped(q_codes, value):
        return read_fast(path, kind)      # a query comes back later: every id is needed
    # ids are kept per row when long, and in a run read against its qrels (whose ids
    # are mostly dropped): sorting 10M short ids into a dictionary cost more (1.0-1.7 s)
    # than hashing them, and held more once the unscored ones are gone
    per_row = kind == "run" and (judged is not None or _longest(docs) > SHORT_ID_BYTES)
    if per_row:                 # long ids: no run dictionary (trec_rows)
        d_codes, d_dict, d_sorted = np.arange(len(docs), dtype=_code_type(len(docs))), docs, False
    else:
        d_codes, d_dict, d_sorted = _codes(docs, short_ids=True)
    del docs
    table = TrecTable(str(path), kind, q_codes, q_dict, d_codes, d_dict, value, tags,
                      sorted_d_dict=d_dict if d_sorted else None, docs_per_row=per_row,
                      ids_dropped=dropped)
    # a comment line parsed as data (the CSV reader has no comments; a comment with
    # another column count fails above) or a duplicate: the line reader skips comments
    # and reports problems by line (an empty value was refused block by block)
    if _has_comment(q_dict):
        return None
    if per_row:
        table.d_hashes = hashes if hashes is not None else trec_rows.row_hashes(d_dict)
        duplicates = trec_rows.has_duplicates(q_codes, d_dict, table.d_hashes)
        if duplicates is None:
            return read_fast(path, kind)  # two ids share a hash, one dropped: read them all
        if duplicates:
            return None
    elif _has_duplicates(table):
        return None
    return table


# from this size the file is parsed as two halves at once (one a thread): one reader
# waits on its reads and page faults as much as it parses (9.9M lines: 1.1 -> 0.75 s;
# a 60 MB run: 0.30 -> 0.21 s)
SPLIT_BYTES = 16 << 20


def _stream(path: Path, kind: str, delim: str, names, judged=None):
    """(query codes, query dictionary, document id column, values, run tags, hashes of
    the ids as read with ``judged`` (else None), whether ids were dropped), or None (no
    rows, a value the line reader reads otherwise (``plain_batch``), a non-finite score,
    or a byte order mark where the second half starts). The file is parsed a block at a
    time and each block's query ids, tags and ranks are reduced at once to codes (or
    dropped), so only the document ids are ever held as text: a 10M-line run's query,
    rank and tag columns cost 300 MB as strings and numbers (measured in
    docs/dev/i41-ranking.md). With ``judged`` (``Judged``) each block's ids are hashed and
    those no score reads left "" (``trec_rows.block_keep``) as they are read, or once
    the qrels is."""
    size = path.stat().st_size
    mid = _line_start(path, size // 2) if size >= SPLIT_BYTES else size
    if 0 < mid < size and _starts_with_bom(path, mid):
        return None     # pyarrow would drop it from the id; the line reader keeps it
    if not 0 < mid < size:
        parts = [_read_part(path, None, kind, delim, names, judged)]
    else:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(1) as pool:
            second = pool.submit(_read_part, path, (mid, size), kind, delim, names, judged)
            parts = [_read_part(path, (0, mid), kind, delim, names, judged), second.result()]
    if any(p is None for p in parts):
        return None
    local_codes, q_dicts, docs, values, hashes = (
        [x for p in parts for x in p[k]] for k in (0, 1, 2, 3, 5))
    tags = list(dict.fromkeys(t for p in parts for t in p[4]))
    dropped = any(p[6] for p in parts)
    del parts
    if not values:
        return None
    # one dictionary of query ids, in order of first appearance (each block's is)
    q_both = pa.concat_arrays(q_dicts).dictionary_encode()
    to_global = _to_numpy(q_both.indices)
    rows = sum(c.size for c in local_codes)
    q_codes = np.empty(rows, dtype=_code_type(rows))
    at, first = 0, 0
    for codes, block_dict in zip(local_codes, q_dicts):
        q_codes[at:at + codes.size] = to_global[first + codes]
        at += codes.size
        first += len(block_dict)
    del local_codes
    value = values[0] if len(values) == 1 else np.concatenate(values)
    del values
    if judged is None:
        hashes = None       # read_fast hashes per-row ids when it needs to
    else:
        hashes = hashes[0] if len(hashes) == 1 else np.concatenate(hashes)
    return (q_codes, q_both.dictionary, pa.chunked_array(docs, pa.string()), value, tags,
            hashes, dropped)


def _line_start(path: Path, at: int) -> int:
    """The offset of the first line starting after byte ``at``."""
    with open(path, "rb") as f:
        f.seek(at)
        f.readline()
        return f.tell()


def _starts_with_bom(path: Path, at: int) -> bool:
    with open(path, "rb") as f:
        f.seek(at)
        return f.read(3) == BOM


class _Range:
    """Bytes start..end of a file, read as a stream (for pyarrow's PythonFile). Reads
    are pyarrow buffers from pyarrow's allocator: as Python bytes, the C library kept
    290 MB of freed blocks of a 10M-line run."""
    closed = False

    def __init__(self, path: Path, start: int, end: int):
        self._f = pa.OSFile(str(path))
        self._f.seek(start)
        self._left = end - start

    def read(self, n: int = -1):
        data = self._f.read_buffer(self._left if n < 0 or n > self._left else n)
        self._left -= data.size
        return data

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self._f.close()
        self.closed = True


def _read_part(path: Path, span, kind: str, delim: str, names, judged=None):
    """(local query codes, query dictionaries, document ids, values: one per block; run
    tags; the ids' hashes per block, with ``judged``; whether ids were dropped) of the
    file or of its bytes ``span`` (whole lines), or None on a value the line reader
    reads otherwise (``plain_batch``) or a non-finite score."""
    source = path if span is None else pa.PythonFile(_Range(path, *span), mode="r")
    reader = pacsv.open_csv(source, **checked_options(names, delim, block_size=BLOCK_BYTES))
    local_codes, q_dicts, docs, values, tags = [], [], [], [], {}
    hashes, dropped = [], False
    waiting: list[int] = []             # blocks of long ids not yet dropped from
    try:
        for batch in reader:
            if batch.num_rows == 0:
                continue
            if not plain_batch(batch, names):
                return None
            if kind == "run":
                value = _to_numpy(batch.column("score"))
                if not np.all(np.isfinite(value)):
                    return None
                tags.update(dict.fromkeys(pc.unique(batch.column("run_tag")).to_pylist()))
            else:
                value = integer_values(batch.column("relevance"))
            encoded = pc.dictionary_encode(batch.column("query_id"))
            codes = _to_numpy(encoded.indices)
            doc = batch.column("doc_id")
            if judged is not None:
                hashes.append(arrow_hashes(doc))
                waiting.append(len(docs))
            local_codes.append(codes)
            q_dicts.append(encoded.dictionary)
            docs.append(doc)
            values.append(value)
            del batch, encoded, doc
            if waiting and judged.ready():
                dropped |= _drop_blocks(waiting, judged.marks(), local_codes, values,
                                        hashes, docs)
        if waiting:                          # the qrels was still being read: wait for it
            dropped |= _drop_blocks(waiting, judged.marks(), local_codes, values, hashes,
                                    docs)
    finally:
        if span is not None:
            source.close()
    return local_codes, q_dicts, docs, values, list(tags), hashes, dropped


def _drop_blocks(waiting: list[int], marks, local_codes, values, hashes, docs) -> bool:
    """Leave "" in place of the ids no score reads (``trec_rows.block_keep``) in the
    blocks ``waiting`` (emptied); whether some were. No marks (the qrels could not be
    read): nothing is dropped."""
    dropped = False
    for k in waiting if marks is not None else ():
        keep = trec_rows.block_keep(local_codes[k], values[k], hashes[k], marks)
        if keep is not None and not keep.all():
            docs[k] = trec_rows.blank_unkept(docs[k], keep)
            dropped = True
    waiting.clear()
    return dropped


class Judged:
    """The marks of a qrels' judged ids (``trec_rows.judged_marks``), for a run read
    while the qrels is: ``qrels`` a table, or a Future of one (None, or an error, when
    it cannot be read: the run then keeps every id). Shared by the reading threads."""

    def __init__(self, qrels):
        import threading
        self._qrels = qrels
        self._marks = None
        self._done = False
        self._lock = threading.Lock()

    def ready(self) -> bool:
        done = getattr(self._qrels, "done", None)
        return done is None or done()

    def marks(self):
        """The marks, waiting for the qrels if it is still being read; None without."""
        with self._lock:
            if not self._done:
                qrels = self._qrels
                if hasattr(qrels, "result"):
                    try:
                        qrels = qrels.result()
                    except BaseException:           # its reader reports it
                        qrels = None
                if qrels is not None:
                    self._marks = trec_rows.judged_marks(as_arrow(qrels.d_dict))
                self._done = True
            return self._marks


def _code_type(n: int):
    """int32 codes when they fit: half the memory of a 10M-row run's code column."""
    return np.int32 if n < 2 ** 31 else np.int64


def _strings(items: list[str]) -> pa.Array:
    data = [s.encode() for s in items]
    offsets = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in data], out=offsets[1:])
    return pa.Array.from_buffers(pa.large_string(), len(data), [
        None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))]).cast(pa.string())


def _numpy(col: pa.ChunkedArray) -> np.ndarray:
    if col.num_chunks == 1:
        return _to_numpy(col.chunk(0))
    return np.concatenate([_to_numpy(c) for c in col.chunks])


SHORT_ID_BYTES = 8


def _short_id_codes(col: pa.ChunkedArray) -> tuple[np.ndarray, pa.Array] | None:
    """Codes for ids of at most 8 bytes, of any widths (``d0000042``, MS MARCO's
    ``7521068``), found by sorting them as big-endian integers, zero-padded on the right.
    No id holds a zero byte, so padding keeps ids distinct and keeps their byte order
    (strcmp's: a prefix first): the dictionary is in byte order and each code is its
    id's tie-break key. Arrow's hash table costs about 110 bytes per distinct id (560 MB
    for the 5 million of a 193 MB run) and is slower than this sort; this costs about 24.
    None when some id is longer (or empty: the line reader reports it)."""
    if col.num_chunks == 0 or col.null_count or col.type != pa.string():
        return None
    n = len(col)
    keys = np.zeros(n, dtype=np.uint64)
    at = 0
    for chunk in col.chunks:          # checked per chunk, before any copy of the column
        m = len(chunk)
        if m == 0:
            continue
        data, offsets, lo = arrow_offsets(chunk)
        lens = np.diff(offsets)
        if int(lens.max()) > SHORT_ID_BYTES or int(lens.min()) == 0:
            return None
        # the 8 bytes at each id's start, as a big-endian integer, cut after the id
        word = windows_at(data, offsets[:-1].astype(np.int64) - lo).byteswap()
        word &= trec_rows.HIGH_BYTES[lens]
        keys[at:at + m] = word
        del word
        at += m
    unique, codes = trec_rows.factorize(keys)
    del keys
    padded = unique.astype(">u8").view(np.uint8).reshape(-1, SHORT_ID_BYTES)
    lens = SHORT_ID_BYTES - (padded[:, ::-1] != 0).argmax(axis=1)
    text = padded[padded != 0]                    # row by row: each id's bytes
    dict_offsets = np.zeros(unique.size + 1, dtype=np.int32)
    np.cumsum(lens, out=dict_offsets[1:])
    dictionary = pa.Array.from_buffers(pa.string(), int(unique.size), [
        None, pa.py_buffer(dict_offsets), pa.py_buffer(np.ascontiguousarray(text).tobytes())])
    return codes, dictionary


def _longest(col: pa.ChunkedArray) -> int:
    """Bytes of the longest id of a string column (0 when empty)."""
    longest = 0
    for chunk in col.chunks:
        if len(chunk):
            offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32, count=len(chunk) + 1,
                                    offset=chunk.offset * 4)
            longest = max(longest, int(np.diff(offsets).max()))
    return longest


def _codes(col: pa.ChunkedArray, short_ids: bool = False
           ) -> tuple[np.ndarray, pa.Array, bool]:
    """int32 codes into one dictionary shared by all chunks, and whether the dictionary
    is in byte order (when ``short_ids`` took the sorting path; else in order of first
    appearance)."""
    if short_ids:
        coded = _short_id_codes(col)
        if coded is not None:
            return (*coded, True)
    col = pc.dictionary_encode(col)
    if col.num_chunks == 0:
        return np.zeros(0, dtype=np.int32), _strings([]), False
    codes = _numpy(pa.chunked_array([c.indices for c in col.chunks], pa.int32()))
    return codes, col.chunk(0).dictionary, False


def _has_comment(q_dict: pa.Array) -> bool:
    return len(q_dict) > 0 and pc.any(pc.starts_with(q_dict, "#")).as_py()


def _has_duplicates(t: TrecTable) -> bool:
    keys = t.q_codes.astype(np.int64) * np.int64(max(len(t.d_dict), 1))
    keys += t.d_codes
    # grouped by query (the usual layout), the keys come in blocks of increasing
    # disjoint ranges, which timsort merges in near-linear time (4x faster)
    grouped = t.q_codes.size < 2 or bool(np.all(t.q_codes[1:] >= t.q_codes[:-1]))
    keys.sort(kind="stable" if grouped else "quicksort")
    return bool(np.any(keys[1:] == keys[:-1]))


def as_arrow(dictionary) -> pa.Array:
    return dictionary if isinstance(dictionary, pa.Array) else _strings(dictionary)


def _unify(a, b) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """Map two dictionaries into one: (codes of a's entries, codes of b's, union)."""
    both = pa.concat_arrays([as_arrow(a), as_arrow(b)]).dictionary_encode()
    idx = _to_numpy(both.indices).astype(np.int64)
    return idx[: len(a)], idx[len(a):], both.dictionary


def _byte_order_keys(dictionary: pa.Array, codes: np.ndarray) -> np.ndarray:
    """Keys of ``codes`` (entries of ``dictionary``) in ascending byte order of their
    ids (= trec_eval's strcmp). Sorts only the distinct entries among ``codes``: those
    of tied rows, usually a small part of the dictionary."""
    unique, inverse = distinct_codes(codes)
    order = _to_numpy(pc.sort_indices(dictionary.take(arrow_codes(unique))))
    rank = np.empty(unique.size, dtype=np.int64)
    rank[order] = np.arange(unique.size, dtype=np.int64)
    return rank[inverse]


def _docs_joined(qrels_dict, run_dict, run_sorted: bool = False
                 ) -> tuple[np.ndarray, int, Callable[[np.ndarray, np.ndarray], np.ndarray]]:
    """Run document codes stay; the qrels' are mapped onto them (new codes after them
    for documents the run lacks). Returns (code of each qrels entry, number of codes,
    the ``Encoded.doc_tiebreak`` of these codes). Hashes the qrels' dictionary, usually
    the smaller. ``run_sorted``: the run's dictionary is in byte order.
    """
    qrels_dict, run_dict = as_arrow(qrels_dict), as_arrow(run_dict)
    found = pc.index_in(run_dict, value_set=qrels_dict)
    in_run = _bools(found.is_valid())
    qrels_code = np.full(len(qrels_dict), -1, dtype=np.int64)
    qrels_code[_to_numpy(found)[in_run]] = np.flatnonzero(in_run)
    only_qrels = np.flatnonzero(qrels_code < 0)
    qrels_code[only_qrels] = len(run_dict) + np.arange(only_qrels.size)

    def tiebreak(codes: np.ndarray, runs: np.ndarray) -> np.ndarray:
        # tied rows are run rows: their codes are the run dictionary's
        if run_sorted and (codes.size == 0 or int(codes.max()) < len(run_dict)):
            return codes.astype(np.int64, copy=False)
        if codes.size and int(codes.max()) >= len(run_dict):
            both = pa.concat_arrays([run_dict, qrels_dict.take(arrow_codes(only_qrels))])
            return _byte_order_keys(both, codes)
        return _byte_order_keys(run_dict, codes)

    return qrels_code, len(run_dict) + only_qrels.size, tiebreak


def encode(qrels: TrecTable, run: TrecTable) -> tuple[Encoded, list[str]]:
    """``trec.encode`` for tables with pyarrow dictionaries."""
    qa, qb, qdict = _unify(qrels.q_dict, run.q_dict)
    # the run's query codes in the table's width (int32): 80 MB less at 10M rows
    run_q, qrels_q = qb.astype(run.q_codes.dtype)[run.q_codes], qa[qrels.q_codes]
    if run.docs_per_row:
        run_d, n_docs, tiebreak = trec_rows.join(as_arrow(qrels.d_dict), run.d_dict)
        qrels_d = qrels.d_codes
    else:
        qrels_doc_code, n_docs, tiebreak = _docs_joined(qrels.d_dict, run.d_dict,
                                                        run.docs_in_byte_order())
        run_d, qrels_d = run.d_codes, qrels_doc_code[qrels.d_codes]
    rel = qrels.value.astype(np.int64, copy=False)
    # judgments are joined by ranking.judgments_of (sorted qrels keys and a binary
    # search): faster than an arrow hash join on these sizes, measured
    enc = Encoded(len(qdict), n_docs, run_q, run_d, run.value.astype(np.float64, copy=False),
                  qrels_q, qrels_d, rel, tiebreak)
    return enc, qdict.to_pylist()
