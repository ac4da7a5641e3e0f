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
* tie-break keys come from sorting the ids of the tied rows only.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..metrics.ranking import distinct_codes
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


def _chunk_prefixes(chunk: pa.Array) -> np.ndarray:
    """The first 8 bytes of each id as a big-endian integer, zero-padded on the right:
    ordered as the ids' byte order (strcmp) up to their 8th byte."""
    data, offsets = arrow_spans(chunk)
    out = windows(data)[offsets[:-1]].byteswap()          # first byte highest
    out &= _HIGH[np.minimum(np.diff(offsets), 8)]
    return out


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

    def ids_of(codes: np.ndarray) -> tuple[list[pa.Array], np.ndarray]:
        """The ids of ``codes`` (judged ones first) and the position of each among them."""
        judged = codes < n_judged
        where = np.concatenate([np.flatnonzero(judged), np.flatnonzero(~judged)])
        parts = [qrels_dict.take(arrow_codes(codes[judged]))] + list(
            docs.take(arrow_codes(codes[~judged] - n_judged)).chunks)
        return [p.cast(pa.string()) for p in parts if len(p)], where

    def tiebreak(codes: np.ndarray, runs: np.ndarray | None = None) -> np.ndarray:
        """Keys in byte order of the ids within each run of equal (query, score): the
        first 8 bytes of each id ranked by a numeric sort, and the ids of one run that
        share their first 8 bytes sorted as strings. Without ``runs``: one sort of the
        distinct ids."""
        if runs is None:
            unique, inverse = distinct_codes(codes)
            parts, where = ids_of(unique)
            order = _to_numpy(pc.sort_indices(pa.chunked_array(parts, pa.string())))
            rank = np.empty(unique.size, dtype=np.int64)
            rank[where[order]] = np.arange(unique.size, dtype=np.int64)
            return rank[inverse]
        parts, where = ids_of(codes)
        prefix = np.empty(codes.size, dtype=np.uint64)
        prefix[where] = np.concatenate([_chunk_prefixes(p) for p in parts])
        levels, rank = factorize(prefix, np.int64)
        key = runs.astype(np.int64) * np.int64(levels.size) + rank
        del levels
        ranked_key = np.sort(key)
        same = ranked_key[1:] == ranked_key[:-1]
        if not same.any():
            return rank
        # ids of one run sharing their first 8 bytes: ordered by the whole id after
        # their prefix, by a second key below the prefix's rank
        rows = np.flatnonzero(np.isin(key, ranked_key[1:][same]))
        sub_parts, sub_where = ids_of(codes[rows])
        ids = pa.chunked_array(sub_parts, pa.string())
        sub_key = key[rows][sub_where]
        order = _to_numpy(pc.sort_indices(pa.table({"k": arrow_codes(sub_key), "id": ids}),
                                          sort_keys=[("k", "ascending"), ("id", "ascending")]))
        sorted_key = sub_key[order]
        first = np.searchsorted(sorted_key, sorted_key)        # start of each key's group
        second = np.empty(rows.size, dtype=np.int64)
        second[sub_where[order]] = np.arange(rows.size, dtype=np.int64) - first
        width = np.int64(int(second.max()) + 1)
        out = rank * width
        out[rows] += second
        return out

    tiebreak.within_runs = True
    return code, n_judged + n, tiebreak
