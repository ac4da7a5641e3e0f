"""Run document ids longer than 8 bytes, kept one per row (ClueWeb's 25 bytes, UUIDs).

A dictionary of a run's documents costs a hash table of every distinct id (about 110
bytes each, 0.25 s and 200 MB for 2 million UUIDs) though scoring needs few of them: a
run's row is joined to the qrels (whose dictionary is small), its id is compared only
with the other ids of its query (duplicates) and sorted only when its score is tied.
So the ids stay as read, one per row, and:

* duplicates are found by a 64-bit hash of each id per query, the rare rows whose
  (query, hash) repeats compared exactly, so a hash collision is never taken for a
  duplicate;
* a row's document code is its qrels dictionary index when judged, else ``qrels
  documents + row``: equal codes mean equal ids, which is all the join needs;
* tie-break keys come from the tied rows' ids read 8 bytes at a time as numbers.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .strhash import arrow_hashes, arrow_offsets, windows_at
from .trec_table import arrow_bools as _bools
from .trec_table import arrow_codes
from .trec_table import arrow_numpy as _to_numpy


def factorize(keys: np.ndarray, dtype=np.int32) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct keys, index of each key among them, as ``dtype``). ``np.unique``
    with ``return_inverse`` sorts stably (timsort); any sort will do here, and
    quicksort's argsort is 1.5x faster (measured on 2M keys)."""
    order = np.argsort(keys)
    ranked = keys[order]
    new = np.empty(ranked.size, dtype=bool)
    new[:1] = True
    np.not_equal(ranked[1:], ranked[:-1], out=new[1:])
    codes = np.empty(keys.size, dtype=dtype)
    codes[order] = np.cumsum(new, dtype=dtype) - 1
    return ranked[new], codes


# the top k bytes of a uint64 (a big-endian word's first k bytes)
HIGH_BYTES = np.array([0] + [((1 << (8 * k)) - 1) << (8 * (8 - k)) for k in range(1, 9)],
                      dtype=np.uint64)


def row_hashes(col: pa.ChunkedArray) -> np.ndarray:
    """The ``strhash`` of each row's id (uint64), chunk by chunk: no run-sized
    temporaries."""
    out = np.empty(len(col), dtype=np.uint64)
    at = 0
    for chunk in col.chunks:
        out[at:at + len(chunk)] = arrow_hashes(chunk)
        at += len(chunk)
    return out


BLOCK_ROWS = 1 << 20            # rows of key temporaries at a time


def has_duplicates(q_codes: np.ndarray, col: pa.ChunkedArray,
                   hashes: np.ndarray) -> bool | None:
    """Whether some query lists the same id twice (``hashes``: ``row_hashes(col)``, of
    the ids as read); None when two rows of a query share a hash and one of their ids
    was dropped (``block_keep``), so only the text as read could tell."""
    def keys(rows: slice) -> np.ndarray:    # (query, upper half of the id's hash)
        key = q_codes[rows].astype(np.uint64)
        key <<= np.uint64(32)
        key |= hashes[rows] >> np.uint64(32)
        return key

    n = len(q_codes)
    blocks = [slice(i, i + BLOCK_ROWS) for i in range(0, n, BLOCK_ROWS)]
    ranked = np.empty(n, dtype=np.uint64)
    for b in blocks:
        ranked[b] = keys(b)
    grouped = q_codes.size < 2 or bool(np.all(q_codes[1:] >= q_codes[:-1]))
    ranked.sort(kind="stable" if grouped else "quicksort")
    same = ranked[1:] == ranked[:-1]
    if not same.any():
        return False
    shared = np.unique(ranked[1:][same])
    del ranked, same
    rows = np.concatenate([np.flatnonzero(np.isin(keys(b), shared)) + b.start for b in blocks])
    # of these, the rows sharing their query and whole hash: their ids compared exactly
    q, h = q_codes[rows], hashes[rows]
    order = np.lexsort((h, q))
    q, h = q[order], h[order]
    twin = (q[1:] == q[:-1]) & (h[1:] == h[:-1])
    if not twin.any():
        return False
    pick = np.zeros(rows.size, dtype=bool)
    pick[1:] |= twin
    pick[:-1] |= twin
    rows = np.sort(rows[order][pick])
    taken = _take(col, rows)
    if pc.min(pc.binary_length(taken)).as_py() == 0:
        return None                 # a dropped id ("", block_keep): not decidable here
    ids = pc.dictionary_encode(taken)
    codes = _to_numpy(ids.indices).astype(np.int64)
    pairs = q_codes[rows].astype(np.int64) * np.int64(len(ids.dictionary)) + codes
    return np.unique(pairs).size < pairs.size


def _take(col: pa.ChunkedArray, rows: np.ndarray) -> pa.Array:
    """``col.take(rows)`` for ascending ``rows``, chunk by chunk: a chunked array's take
    joins every chunk first (a copy of the whole text)."""
    starts = np.cumsum([0] + [len(c) for c in col.chunks])
    cut = np.searchsorted(rows, starts)
    return pa.concat_arrays([c.take(arrow_codes(rows[cut[k]:cut[k + 1]] - starts[k]))
                             for k, c in enumerate(col.chunks)] or [pa.array([], pa.string())])


def _place(code: np.ndarray, found: pa.Array, rows: np.ndarray | None) -> None:
    """Set ``code`` (at ``rows``, or all) to the qrels index ``found`` where it is valid."""
    m = len(found)
    if m and found.null_count < m:
        valid = _bools(found.is_valid())
        at = np.flatnonzero(valid) if rows is None else rows[valid]
        code[at] = _to_numpy(found)[valid]                # null slots hold any value


# below this many bytes of ids they are all kept: dropping costs 0.1 s per million rows
# (a 2M-line run with many ties: 1.0 -> 1.25 s) and matters only for memory at scale
DROP_MIN_BYTES = 128 << 20
JUDGED_BITS = 24                # a 16 MB mark per 24-bit hash prefix of the qrels' ids


def drop_unscored_ids(run, qrels_dict: pa.Array) -> None:
    """Leave "" in place of each id no score of ``run`` (a table the caller owns, its ids
    kept per row) against a qrels of distinct ids ``qrels_dict`` can depend on: ids in
    no qrels whose score no other row of their query shares. Nothing reads those: they
    are unjudged for the join, and only tied rows are ever ordered by id. Every id is
    kept unless the run lists each query's rows together by score, as every tool
    writes runs (else finding the ties would need a sort of the run).

    A read table has no empty id (the reader refuses one), so "" marks a dropped id and
    never matches a qrels id; duplicates were checked on the ids as read. Ties are found
    in single precision, which holds every tie in double precision too. With the
    table's ``d_hashes`` an id is kept when the first bits of its hash are those of a
    qrels id's: every judged id is, and a few others (a superset does no harm: the join
    is exact). A 10M-line run of UUIDs keeps 56 MB of its 377 MB of ids (8% judged, 7%
    sharing a hash prefix; measured). The table's chunks are replaced one by one, so
    its ids are never held twice."""
    hashes, run.d_hashes = run.d_hashes, None
    if run.ids_dropped:
        return
    text = sum(c.buffers()[2].size for c in run.d_dict.chunks if len(c) and c.buffers()[2])
    if text < DROP_MIN_BYTES:
        return
    keep = _tied_rows(run.q_codes, run.value)
    if keep is None:
        return
    n = keep.size
    if hashes is None:
        at = 0
        for found in pc.index_in(run.d_dict, value_set=qrels_dict).chunks:
            if len(found) and found.null_count < len(found):
                keep[at:at + len(found)] |= _bools(found.is_valid())
            at += len(found)
    else:
        judged, shift = judged_marks(qrels_dict), _judged_shift()
        for i in range(0, n, BLOCK_ROWS):
            keep[i:i + BLOCK_ROWS] |= judged[hashes[i:i + BLOCK_ROWS] >> shift]
        del judged
    del hashes
    chunks, run.d_dict = run.d_dict.chunks, None
    at = 0
    for k, c in enumerate(chunks):
        at += len(c)
        chunks[k] = blank_unkept(c, keep[at - len(c):at])
        del c
    run.d_dict = pa.chunked_array(chunks, pa.string())


def _judged_shift() -> np.uint64:
    return np.uint64(64 - JUDGED_BITS)


def judged_marks(qrels_dict: pa.Array) -> np.ndarray:
    """A mark (bool) per ``JUDGED_BITS``-bit prefix of the hash of each qrels id."""
    judged, shift = np.zeros(1 << JUDGED_BITS, dtype=bool), _judged_shift()
    for i in range(0, len(qrels_dict), BLOCK_ROWS >> 4):        # bounded temporaries
        judged[arrow_hashes(qrels_dict.slice(i, BLOCK_ROWS >> 4)) >> shift] = True
    return judged


def blank_unkept(ids: pa.Array, keep: np.ndarray) -> pa.Array:
    """``ids`` with "" where ``keep`` is False (a new array: only the kept text)."""
    bits = np.packbits(keep, bitorder="little")
    mask = pa.Array.from_buffers(pa.bool_(), len(ids), [None, pa.py_buffer(bits)])
    return pc.if_else(mask, ids, "")


def block_keep(q_codes: np.ndarray, score: np.ndarray, hashes: np.ndarray,
               judged: np.ndarray) -> np.ndarray | None:
    """``drop_unscored_ids``' rule for one block of a run as it is read (``q_codes``
    the block's own), or None when the block does not list each query's rows together
    by score: the rows whose id is judged (``judged_marks``), tied with another row of
    its query, or of the block's first or last query, whose rows may go on in the
    blocks beside it. A dropped row's query then lies inside its block, so its ties
    were all seen, provided no query comes back in another block: ``run_grouped``
    checks that once the whole run is read."""
    keep = _tied_rows(q_codes, score)
    if keep is None or keep.size == 0:
        return None
    keep |= q_codes == q_codes[0]
    keep |= q_codes == q_codes[-1]
    keep |= judged[hashes >> _judged_shift()]
    return keep


def run_grouped(q_codes: np.ndarray, score: np.ndarray) -> bool:
    """Whether each query's rows are together in non-increasing score order (single
    precision), as ``_tied_rows`` needs."""
    return _tied_rows(q_codes, score) is not None


def _tied_rows(q_codes: np.ndarray, score: np.ndarray) -> np.ndarray | None:
    """Rows whose (query, single-precision score) another row shares, when each query's
    rows are together in non-increasing score order; else None."""
    n = q_codes.size
    with np.errstate(over="ignore"):        # beyond float32: inf, as when ranking
        s = score.astype(np.float32)
    same_q = q_codes[1:] == q_codes[:-1]
    groups = n - int(np.count_nonzero(same_q))
    if n and groups != int(np.count_nonzero(np.bincount(q_codes))) or \
            np.any(same_q & (s[1:] > s[:-1])):
        return None
    tied = same_q & (s[1:] == s[:-1])
    keep = np.zeros(n, dtype=bool)
    keep[1:] |= tied
    keep[:-1] |= tied
    return keep


def _common_prefix(first: np.ndarray) -> int:
    """How many leading bytes every id shares, of their first 8 bytes ``first`` (big-
    endian, 0 past an id's end): "doc", "clueweb12-" order nothing, so the tie-break
    starts after them (a sort of every tied row fewer)."""
    if first.size < 2:
        return 0
    differ = int(np.bitwise_or.reduce(first ^ first[0]))
    # bytes are big-endian from the top; a byte past an id's end reads 0, so an id
    # that is a prefix of the others differs from them there
    return 8 - (differ.bit_length() + 7) // 8


def join(qrels_dict: pa.Array, docs: pa.ChunkedArray):
    """(document code of each run row, number of codes, ``Encoded.doc_tiebreak``), for
    a run whose ids are kept per row (``docs``) and a qrels whose codes index
    ``qrels_dict`` (distinct ids)."""
    n_judged = len(qrels_dict)
    n = len(docs)
    # int32 when they fit (as the dictionary readers' codes): half the memory at 10M rows
    code = np.arange(n_judged, n_judged + n, dtype=np.int32 if n_judged + n < 2 ** 31 else np.int64)
    blanks = [np.flatnonzero(np.diff(arrow_offsets(c)[1]) > 0) if len(c) else None
              for c in docs.chunks]
    if all(b is None or b.size == len(c) for b, c in zip(blanks, docs.chunks)):
        at = 0
        for found in pc.index_in(docs, value_set=qrels_dict).chunks:
            _place(code[at:at + len(found)], found, None)
            at += len(found)
    else:               # ids left "" by ``scored_only``: only the others are looked up
        starts = np.cumsum([0] + [len(c) for c in docs.chunks])
        rows = np.concatenate([b + starts[k] for k, b in enumerate(blanks) if b is not None])
        kept = pa.concat_arrays([c.take(arrow_codes(b)) for c, b in zip(docs.chunks, blanks)
                                 if b is not None])
        found = pc.index_in(kept, value_set=qrels_dict)
        _place(code, found, rows)
    del blanks
    sources = [qrels_dict if qrels_dict.type == pa.string() else qrels_dict.cast(pa.string())]
    sources += [c for c in docs.chunks if len(c)]
    starts = np.cumsum([0] + [len(c) for c in sources], dtype=np.int64)

    # views, no copy of the text; offsets as stored (int32): only tied rows' are widened
    spans = [arrow_offsets(c) for c in sources]
    longest = max((int(np.diff(offsets).max()) for _, offsets, _ in spans if offsets.size > 1),
                  default=0)

    def piece(codes: np.ndarray, start: int, width: int) -> np.ndarray:
        """Bytes start..start+width-1 (width <= 8) of the id of each code as a big-endian
        integer, zero-padded on the right (0 past the id's end): in the ids' byte order
        (strcmp's) among ids equal before ``start``."""
        out = np.zeros(codes.size, dtype=np.uint64)
        which = np.searchsorted(starts, codes, side="right") - 1
        # rows grouped by source once (a scan per source cost rows x chunks); a stable
        # sort of 16-bit integers is a radix sort
        small = which.astype(np.int16) if len(sources) < 2 ** 15 else which
        by_source = np.argsort(small, kind="stable")
        bounds = np.searchsorted(which[by_source], np.arange(len(sources) + 1))
        for k in np.flatnonzero(np.diff(bounds)).tolist():     # one source at a time
            rows = by_source[bounds[k]:bounds[k + 1]]
            data, offsets, lo = spans[k]
            local = codes[rows] - starts[k]
            begin = offsets[local].astype(np.int64) - lo + start
            left = np.clip(offsets[local + 1] - lo - begin, 0, width)
            w = windows_at(data, np.minimum(begin, data.size - 1)).byteswap()
            w &= HIGH_BYTES[left]
            out[rows] = w >> np.uint64(8 * (8 - width))
        return out

    def tiebreak(codes: np.ndarray, runs: np.ndarray) -> np.ndarray:
        """Keys in byte order of the ids within each run of equal (query, score). The
        tied rows, grouped by run, are sorted by a few bytes of their ids at a time,
        packed below their group's number in one integer key; only rows still sharing
        their group with another are sorted by the next bytes (a query holds an id
        once, so each ends alone). Numbers only: no id is copied."""
        n = codes.size
        if n and np.all(runs[1:] >= runs[:-1]):
            order = np.arange(n)
            runs_sorted = runs
        else:
            order = np.argsort(runs, kind="stable")
            runs_sorted = runs[order]
        group = np.cumsum(np.concatenate(([True], runs_sorted[1:] != runs_sorted[:-1]))) - 1
        # every id's first 8 bytes, once: the first pass (and the prefix all ids share,
        # "doc", "clueweb12-", which orders nothing and is skipped) read them from here
        first = piece(codes, 0, 8)
        done = _common_prefix(first)                   # bytes of the ids compared so far
        while done < longest:
            same = group[1:] == group[:-1]
            if not same.any():
                break
            tied = np.zeros(n, dtype=bool)
            tied[1:] |= same
            tied[:-1] |= same
            at = np.flatnonzero(tied)
            g = group[at].astype(np.uint64)
            width = max(1, min(7, (64 - int(g[-1]).bit_length()) // 8))
            rows = order[at]
            if done + width <= 8:
                bytes_ = (first[rows] << np.uint64(8 * done)) >> np.uint64(64 - 8 * width)
            else:
                bytes_ = piece(codes[rows], done, width)
            key = (g << np.uint64(8 * width)) | bytes_
            del rows, bytes_
            local = np.argsort(key)
            order[at] = order[at][local]
            # new groups: a boundary wherever the group or the bytes compared change
            ranked = key[local]
            cut = np.concatenate(([True], group[1:] != group[:-1]))
            cut[at[1:]] |= ranked[1:] != ranked[:-1]
            group = np.cumsum(cut) - 1
            done += width
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n, dtype=np.int64)
        return rank

    return code, n_judged + n, tiebreak
