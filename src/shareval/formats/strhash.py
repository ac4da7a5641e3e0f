"""64-bit hashes of strings held as UTF-8 bytes and offsets (numpy only: the upload
child checks SV-Ident uuids without importing pyarrow). Equal strings, equal
hashes, whatever array or block they come from; different strings may collide, so
every user confirms a shared hash exactly or hands the file to a slower exact path
(``trec_rows.has_duplicates``, ``platform.submissions.lean``)."""
from __future__ import annotations

import numpy as np

_MASKS = np.array([0] + [(1 << (8 * k)) - 1 for k in range(1, 8)] + [2**64 - 1],
                  dtype=np.uint64)
_SEED, _MIX = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9)


def windows(data: np.ndarray) -> np.ndarray:
    """The 8 bytes starting at each byte of ``data`` (then 8 zero bytes), as one
    little-endian uint64 view over a padded copy: ``windows(d)[i]`` holds d[i:i+8]."""
    padded = np.zeros(data.size + 8, dtype=np.uint8)
    padded[:data.size] = data
    return np.ndarray(shape=(padded.size - 7,), dtype="<u8", buffer=padded, strides=(1,))


def windows_at(data: np.ndarray, begin: np.ndarray) -> np.ndarray:
    """``windows(data)[begin]`` without copying ``data``: the 8 bytes at each index of
    ``begin`` (0 <= begin < data.size) as little-endian uint64, zeros past the end."""
    n = data.size
    out = np.zeros(begin.size, dtype=np.uint64)
    if n == 0:
        return out
    inside = begin <= n - 8
    if n >= 8:
        view = np.ndarray(shape=(n - 7,), dtype="<u8", buffer=data, strides=(1,))
        out[inside] = view[begin[inside]]
    near_end = ~inside
    if near_end.any():
        m = min(n, 8)
        tail = windows(data[n - m:])                  # the last bytes, padded: a few
        out[near_end] = tail[begin[near_end] - (n - m)]
    return out


def span_hashes(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The hash of each string ``data[offsets[i]:offsets[i + 1]]`` (uint8 bytes, int64
    offsets from 0), 8 bytes at a time."""
    start = offsets[:-1]
    lens = np.diff(offsets)
    if lens.size == 0:
        return np.zeros(0, dtype=np.uint64)
    words = windows(data)
    last = words.size - 1
    return hashes_of(lambda j: words[np.minimum(start + j, last)], lens)


def hashes_at(data: np.ndarray, begin: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """``span_hashes``' hash of each string ``data[begin[i]:begin[i] + lens[i]]``, the
    strings anywhere in ``data`` (a file's fields between tabs), without copying it."""
    if lens.size == 0:
        return np.zeros(0, dtype=np.uint64)
    last = max(data.size - 1, 0)
    return hashes_of(lambda j: windows_at(data, np.minimum(begin + j, last)), lens)


def hashes_of(words_at, lens: np.ndarray) -> np.ndarray:
    """The hash of strings of lengths ``lens`` whose bytes j..j+7 ``words_at(j)`` gives
    (a new array, masked here in place past each string's end)."""
    h = lens.astype(np.uint64) * _SEED
    shortest = int(lens.min())
    for j in range(0, int(lens.max()), 8):
        w = words_at(j)
        w &= _MASKS[np.clip(lens - j, 0, 8)]            # bytes past the string's end: 0
        mixed = h ^ w
        mixed *= _MIX
        mixed ^= mixed >> np.uint64(31)
        # a string's hash depends on its bytes only, not on the longest of its array
        h = mixed if j < shortest else np.where(lens > j, mixed, h)
    return h


def arrow_offsets(arr) -> tuple[np.ndarray, np.ndarray, int]:
    """(bytes, offsets as stored, first offset) of a null-free pyarrow string array:
    views, no copy (string i is ``bytes[offsets[i] - first:offsets[i + 1] - first]``)."""
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=len(arr) + 1,
                            offset=arr.offset * 4)
    lo, hi = int(offsets[0]), int(offsets[-1])
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8, count=hi - lo, offset=lo) \
        if hi > lo else np.zeros(0, dtype=np.uint8)
    return data, offsets, lo


def arrow_spans(arr) -> tuple[np.ndarray, np.ndarray]:
    """(bytes, int64 offsets from 0) of a null-free pyarrow string array; the bytes are
    a view, the offsets a copy."""
    data, offsets, lo = arrow_offsets(arr)
    return data, offsets.astype(np.int64) - lo


def arrow_hashes(arr) -> np.ndarray:
    """``span_hashes`` of a null-free pyarrow string array."""
    return span_hashes(*arrow_spans(arr))
