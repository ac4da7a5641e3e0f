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

from .strhash import arrow_hashes, arrow_spans, windows
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
    code = np.arange(n_judged, n_judged + n, dtype=np.int64)
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
    longest_words = -(-max((int(np.diff(arrow_spans(c)[1]).max()) for c in sources if len(c)),
                           default=0) // 8)

    def words(codes: np.ndarray, j: int) -> np.ndarray:
        """Bytes 8j..8j+7 of the id of each code as a big-endian integer, zero-padded
        on the right (0 past the id's end): ids' byte order (strcmp) word by word."""
        out = np.zeros(codes.size, dtype=np.uint64)
        which = np.searchsorted(starts, codes, side="right") - 1
        for k in np.unique(which).tolist():            # one source at a time: no copies
            rows = np.flatnonzero(which == k)
            data, offsets = arrow_spans(sources[k])
            local = codes[rows] - starts[k]
            begin = offsets[local] + 8 * j
            left = np.clip(offsets[local + 1] - begin, 0, 8)
            w = windows(data)[np.minimum(begin, max(data.size - 1, 0))].byteswap()
            w &= _HIGH[left]
            out[rows] = w
        return out

    def tiebreak(codes: np.ndarray, runs: np.ndarray) -> np.ndarray:
        """Keys in byte order of the ids within each run of equal (query, score): the
        tied rows sorted by (run, first 8 bytes), then the rows still sharing their run
        and bytes so far by the next 8, until each stands alone (a query holds an id
        once). Numbers only: no id is copied."""
        first = words(codes, 0)
        order = np.lexsort((first, runs))
        key, word = runs[order].astype(np.int64), first[order]
        del first
        j = 0
        while j < longest_words:
            same = (key[1:] == key[:-1]) & (word[1:] == word[:-1])
            if not same.any():
                break
            # segments of equal (run, bytes so far): re-sorted by the next word
            segment = np.cumsum(np.concatenate(([True], ~same)))
            tied = np.zeros(order.size, dtype=bool)
            tied[1:] |= same
            tied[:-1] |= same
            at = np.flatnonzero(tied)
            j += 1
            nxt = words(codes[order[at]], j)
            local = np.lexsort((nxt, segment[at]))
            order[at] = order[at][local]
            key = segment                      # finer groups: the segments so far
            word = np.zeros(order.size, dtype=np.uint64)
            word[at] = nxt[local]
        rank = np.empty(codes.size, dtype=np.int64)
        rank[order] = np.arange(codes.size, dtype=np.int64)
        return rank

    return code, n_judged + n, tiebreak
