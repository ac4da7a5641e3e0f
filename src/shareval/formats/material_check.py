"""Whether a MATERIAL system output file is clean, with numpy only (issue 41).

Validating an upload needs a verdict, not the decoded file. The numba scanner
(``scan``) decodes fast but numba, its compiled code and its document table held
~170 MB of the upload child, whatever the file's size. This check answers the
same question for a 3-column file (``DocID<TAB>Y|N<TAB>confidence``) a block of
lines at a time, with the pack's ids as they are stored (``DocIds``): True only
when every line is well formed, names an expected document exactly once (hash
hit confirmed byte for byte) and every expected document is there, which is when
the line validator (``material.read_output_lines``) accepts the file. False sends
the file to that validator, which reports every problem with its line.
"""
from __future__ import annotations

import numpy as np

from .docids import DocIds
from .strhash import _MASKS, hashes_at, windows_at

BLOCK_BYTES = 1 << 20            # bytes checked at once (whole lines): bounded temporaries
TAB, LF, DOT, ZERO, NINE, YES, NO = 9, 10, 46, 48, 57, 89, 78
TICKS = 100_000                  # confidence 1.0 in units of 1e-5


def output_file_clean(data: bytes, ids: DocIds, expected: np.ndarray) -> bool:
    buf = np.frombuffer(data, dtype=np.uint8)
    if buf.size == 0:
        return False
    seen = np.zeros(len(ids), dtype=bool)
    lines = 0
    start = 0
    while start < buf.size:
        end = min(start + BLOCK_BYTES, buf.size)
        if end < buf.size:                          # whole lines: up to a block's last LF
            cut = data.rfind(b"\n", start, end)
            if cut < 0:                             # a line longer than a block
                cut = data.find(b"\n", end)
            end = buf.size if cut < 0 else cut + 1
        docs = _block_docs(buf[start:end], ids)
        if docs is None:
            return False
        seen[docs] = True
        lines += docs.size
        start = end
    # each line a different expected document, and every expected one listed
    return lines == int(np.count_nonzero(seen)) and np.array_equal(seen, expected)


def _block_docs(block: np.ndarray, ids: DocIds) -> np.ndarray | None:
    """The document of each line of ``block`` (whole lines, the last LF optional), or
    None when a line is not ``DocID<TAB>Y|N<TAB>d.d{1,5}`` (<= 1.0) of a known DocID."""
    ends = np.flatnonzero(block == LF)
    if ends.size == 0 or ends[-1] != block.size - 1:
        ends = np.append(ends, block.size)          # the file's last line, without LF
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    tabs = np.flatnonzero(block == TAB)
    if tabs.size != 2 * ends.size:
        return None
    first, second = tabs[0::2], tabs[1::2]
    # exactly two tabs on each line (given twice as many tabs as lines), a non-empty
    # DocID, a one-letter decision
    if not (np.all(first > starts) and np.all(second < ends) and np.all(second == first + 2)):
        return None
    decision = block[first + 1]
    if not np.all((decision == YES) | (decision == NO)):
        return None
    if not _confidences_ok(block, second + 1, ends):
        return None
    return _documents(block, starts, first - starts, ids)


def _confidences_ok(block: np.ndarray, begin: np.ndarray, ends: np.ndarray) -> bool:
    """Each ``block[begin:end]`` is a digit, '.', 1 to 5 digits, and at most 1.0."""
    size = ends - begin
    if not (np.all(size >= 3) and np.all(size <= 7)):
        return False
    whole = block[begin]
    if not (np.all((whole >= ZERO) & (whole <= NINE)) and np.all(block[begin + 1] == DOT)):
        return False
    value = (whole.astype(np.int64) - ZERO) * TICKS
    scale = TICKS // 10
    for j in range(2, 7):
        has = size > j
        digit = block[np.where(has, begin + j, begin)].astype(np.int64) - ZERO
        if not np.all(~has | ((digit >= 0) & (digit <= 9))):
            return False
        value += np.where(has, digit, 0) * scale
        scale //= 10
    return bool(np.all(value <= TICKS))


def _documents(block: np.ndarray, begin: np.ndarray, lens: np.ndarray,
               ids: DocIds) -> np.ndarray | None:
    """The document whose id is each ``block[begin:begin + lens]``; None if one is not
    an id of ``ids`` (or the ids share a hash: left to the line validator)."""
    hashes, order, buckets, bits = ids.lookup()
    if hashes.size == 0 or (hashes.size > 1 and np.any(hashes[1:] == hashes[:-1])):
        return None
    h = hashes_at(block, begin, lens)
    bucket = h >> np.uint64(64 - bits)
    at, end = buckets[bucket].astype(np.int64), buckets[bucket + np.uint64(1)]
    at = np.minimum(at, hashes.size - 1)
    todo = np.flatnonzero(hashes[at] != h)
    while todo.size:                                # the next entries of their buckets
        at[todo] += 1
        if np.any(at[todo] >= end[todo]):
            return None                             # not in its bucket: not an id
        todo = todo[hashes[at[todo]] != h[todo]]
    docs = order[at]
    # confirmed byte for byte: a hash hit alone could be another string
    if not np.array_equal(ids.offsets[docs + 1] - ids.offsets[docs], lens):
        return None
    theirs = ids.offsets[docs]
    for j in range(0, int(lens.max()), 8):
        mask = _MASKS[np.clip(lens - j, 0, 8)]
        mine = windows_at(block, np.minimum(begin + j, block.size - 1)) & mask
        if not np.array_equal(mine, windows_at(ids.data, np.minimum(theirs + j,
                                                                   ids.data.size - 1)) & mask):
            return None
    return docs
