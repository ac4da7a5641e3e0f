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
from .strhash import _MASKS, hashes_of

BLOCK_BYTES = 1 << 20            # bytes checked at once (whole lines): bounded temporaries
TAB, LF, DOT, YES, NO = 9, 10, 46, 89, 78


def output_file_clean(data, ids: DocIds, expected: np.ndarray) -> bool:
    buf = np.frombuffer(data, dtype=np.uint8)
    if buf.size == 0 or len(ids) == 0:
        return False
    hashes = ids.lookup()[0]
    if hashes.size > 1 and np.any(hashes[1:] == hashes[:-1]):
        return False                                # ids sharing a hash: the line validator
    longest = int(np.diff(ids.offsets).max())
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
        # a copy with zeros after it: 8 bytes can be read at any of its bytes (an id's
        # words, a confidence), past its end too (the longest id's words)
        block = np.zeros(end - start + longest + 8, dtype=np.uint8)
        block[:end - start] = buf[start:end]
        docs = _block_docs(block, end - start, ids, longest)
        if docs is None:
            return False
        seen[docs] = True
        lines += docs.size
        start = end
    # each line a different expected document, and every expected one listed
    return lines == int(np.count_nonzero(seen)) and np.array_equal(seen, expected)


def _block_docs(padded: np.ndarray, size: int, ids: DocIds, longest: int) -> np.ndarray | None:
    """The document of each line of ``padded[:size]`` (whole lines, the last LF
    optional), or None when a line is not ``DocID<TAB>Y|N<TAB>d.d{1,5}`` (<= 1.0) of
    a known DocID."""
    block = padded[:size]
    ends = np.flatnonzero(block == LF)
    if ends.size == 0 or ends[-1] != size - 1:
        ends = np.append(ends, size)                # the file's last line, without LF
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    tabs = np.flatnonzero(block == TAB)
    if tabs.size != 2 * ends.size:
        return None
    first, second = tabs[0::2], tabs[1::2]
    # exactly two tabs on each line (given twice as many tabs as lines), a non-empty
    # DocID no longer than the pack's longest, a one-letter decision
    lens = first - starts
    if not (np.all(lens > 0) and np.all(second < ends) and np.all(second == first + 2)
            and int(lens.max()) <= longest):
        return None
    decision = block[first + 1]
    if not np.all((decision == YES) | (decision == NO)):
        return None
    words = np.ndarray(shape=(padded.size - 7,), dtype="<u8", buffer=padded, strides=(1,))
    if not _confidences_ok(words, second + 1, ends):
        return None
    return _documents(words, starts, lens, ids)


ASCII_ZEROS = np.uint64(0x3030303030303030)     # '0' in every byte
UNDER_TEN = np.uint64(0x7676767676767676)       # + a byte under 10 stays under 0x80
HIGH_BITS = np.uint64(0x8080808080808080)
NOT_BYTE_1 = ~np.uint64(0xFF00)


def _confidences_ok(words: np.ndarray, begin: np.ndarray, ends: np.ndarray) -> bool:
    """Each confidence (``begin`` to ``ends``) is a digit, '.', 1 to 5 digits, and at
    most 1.0: checked on the 8 bytes at its start, a byte per digit at once."""
    size = ends - begin
    if not (np.all(size >= 3) and np.all(size <= 7)):
        return False
    w = words[begin]
    if not np.all((w >> np.uint64(8)) & np.uint64(0xFF) == DOT):
        return False
    # each byte of the confidence minus '0' (the point and the bytes after it: 0) is
    # under 10 exactly when its byte in d | (d + 0x76) has no high bit
    d = (w ^ ASCII_ZEROS) & _MASKS[size] & NOT_BYTE_1
    if np.any((d | (d + UNDER_TEN)) & HIGH_BITS):
        return False
    # 1.0 at most: 0.ddddd, or 1. and zeros
    whole = d & np.uint64(0xFF)
    return bool(np.all((whole == 0) | ((whole == 1) & (d >> np.uint64(16) == 0))))


def _documents(words: np.ndarray, begin: np.ndarray, lens: np.ndarray,
               ids: DocIds) -> np.ndarray | None:
    """The document whose id is each ``lens`` bytes at ``begin``; None if one is not an
    id of ``ids``."""
    hashes, order, buckets, bits = ids.lookup()
    mine = [words[begin + j] for j in range(0, int(lens.max()), 8)]
    fixed = int(lens.min()) == int(lens.max())
    h = hashes_of(lambda j: mine[j // 8], lens)       # masks ``mine`` past each id's end
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
    theirs, pack_words, last = ids.offsets[docs], ids.words(), int(ids.offsets[-1])
    for k, w in enumerate(mine):
        j = 8 * k
        mask = _MASKS[min(int(lens[0]) - j, 8)] if fixed else _MASKS[np.clip(lens - j, 0, 8)]
        if not np.array_equal(w, pack_words[np.minimum(theirs + j, last)] & mask):
            return None
    return docs
