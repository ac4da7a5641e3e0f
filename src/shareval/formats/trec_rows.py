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

from .strhash import arrow_hashes, arrow_spans, windows_at
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


_HIGH = np.array([0] + [((1 << (8 * k)) - 1) << (8 * (8 - k)) for k in range(1, 9)],
                 dtype=np.uint64)


def has_duplicates(q_codes: np.ndarray, col: pa.ChunkedArray) -> bool:
    """Whether some query lists the same id twice."""
    def keys() -> np.ndarray:           # (query, upper half of the id's hash)
        key = q_codes.astype(np.uint64) << np.uint64(32)
        at = 0
        for chunk in col.chunks:        # chunk by chunk: no run-sized hash temporaries
            key[at:at + len(chunk)] |= arrow_hashes(chunk) >> np.uint64(32)
            at += len(chunk)
        return key

    ranked = keys()
    grouped = q_codes.size < 2 or bool(np.all(q_codes[1:] >= q_codes[:-1]))
    ranked.sort(kind="stable" if grouped else "quicksort")
    same = ranked[1:] == ranked[:-1]
    if not same.any():
        return False
    # the rows sharing a (query, hash): their ids compared exactly
    rows = np.flatnonzero(np.isin(keys(), ranked[1:][same]))
    ids = pc.dictionary_encode(col.take(arrow_codes(rows))).combine_chunks()
    codes = _to_numpy(ids.indices).astype(np.int64)
    pairs = q_codes[rows].astype(np.int64) * np.int64(len(ids.dictionary)) + codes
    return np.unique(pairs).size < pairs.size


def join(qrels_dict: pa.Array, docs: pa.ChunkedArray):
    """(document code of each run row, number of codes, ``Encoded.doc_tiebreak``), for
    a run whose ids are kept per row (``docs``) and a qrels whose codes index
    ``qrels_dict`` (distinct ids)."""
    n_judged = len(qrels_dict)
    n = len(docs)
    # int32 when they fit (as the dictionary readers' codes): half the memory at 10M rows
    code = np.arange(n_judged, n_judged + n, dtype=np.int32 if n_judged + n < 2 ** 31 else np.int64)
    at = 0
    for found in pc.index_in(docs, value_set=qrels_dict).chunks:
        m = len(found)
        if m and found.null_count < m:
            valid = _bools(found.is_valid())
            block = code[at:at + m]
            block[valid] = _to_numpy(found)[valid]        # null slots hold any value
        at += m
    sources = [qrels_dict if qrels_dict.type == pa.string() else qrels_dict.cast(pa.string())]
    sources += [c for c in docs.chunks if len(c)]
    starts = np.cumsum([0] + [len(c) for c in sources], dtype=np.int64)

    spans = [arrow_spans(c) for c in sources]          # views: no copy of the text
    longest = max((int(np.diff(offsets).max()) for _, offsets in spans if offsets.size > 1),
                  default=0)

    def piece(codes: np.ndarray, start: int, width: int) -> np.ndarray:
        """Bytes start..start+width-1 (width <= 8) of the id of each code as a big-endian
        integer, zero-padded on the right (0 past the id's end): in the ids' byte order
        (strcmp's) among ids equal before ``start``."""
        out = np.zeros(codes.size, dtype=np.uint64)
        which = np.searchsorted(starts, codes, side="right") - 1
        present = np.flatnonzero(np.bincount(which, minlength=len(sources)))
        for k in present.tolist():                     # one source at a time
            rows = np.flatnonzero(which == k) if present.size > 1 else slice(None)
            data, offsets = spans[k]
            local = codes[rows] - starts[k]
            begin = offsets[local] + start
            left = np.clip(offsets[local + 1] - begin, 0, width)
            w = windows_at(data, np.minimum(begin, data.size - 1)).byteswap()
            w &= _HIGH[left]
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
        done = 0                                       # bytes of the ids compared so far
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
            key = (g << np.uint64(8 * width)) | piece(codes[order[at]], done, width)
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
