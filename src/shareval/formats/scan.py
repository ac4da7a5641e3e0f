"""Single-pass scanning of MATERIAL system output files (numba).

A MATERIAL evaluation has about 19.5 million output lines; generic CSV parsing
plus string hashing costs several hundred nanoseconds per line, so the common
case (a well-formed file) is checked and decoded here in one pass over the
bytes. The scanner only answers "clean or not"; a file that is not clean is
re-read by the line-by-line validator, which reports every problem with its
line number.

Documents are found with an open-addressing table of FNV-1a hashes; a hit is
confirmed by comparing the bytes, so hash collisions cannot misidentify one.
Confidences ``d.ddddd`` (1 to 5 decimals, plan 7.4) become integer ticks of
1e-5, which is exact.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._numba_start import nb
from .docids import DocIds

TICKS = 100_000            # confidence 1.0 in ticks of 1e-5
FNV_OFFSET = np.uint64(14695981039346656037)
FNV_PRIME = np.uint64(1099511628211)
CLEAN = 0


@nb.njit(cache=True, nogil=True)
def _fnv1a(buf, start, end):
    h = np.uint64(14695981039346656037)
    for i in range(start, end):
        h = (h ^ np.uint64(buf[i])) * np.uint64(1099511628211)
    return h


@dataclass
class DocTable:
    keys: np.ndarray        # uint64 hash per slot
    slots: np.ndarray       # document index per slot, -1 = empty
    data: np.ndarray        # all document ids' bytes
    offsets: np.ndarray     # start of each id in data (n_docs + 1)
    order: np.ndarray       # document order of the last file scanned (a guess for the next)


def doc_table(doc_ids) -> DocTable:
    """The table of a pack's ``DocIds`` (or of a list of ids): their bytes as stored."""
    ids = doc_ids if isinstance(doc_ids, DocIds) else DocIds.of(doc_ids)
    n = len(ids)
    size = 1
    while size < 4 * max(n, 1):
        size *= 2
    keys = np.zeros(size, dtype=np.uint64)
    slots = np.full(size, -1, dtype=np.int64)
    _fill(ids.data, ids.offsets, keys, slots)
    return DocTable(keys, slots, ids.data, ids.offsets, np.arange(n, dtype=np.int64))


@nb.njit(cache=True, nogil=True)
def _fill(data, offsets, keys, slots):
    mask = np.uint64(keys.size - 1)
    for d in range(offsets.size - 1):
        h = _fnv1a(data, offsets[d], offsets[d + 1])
        s = h & mask
        while slots[s] >= 0:
            s = (s + np.uint64(1)) & mask
        keys[s] = h
        slots[s] = d


@nb.njit(cache=True, nogil=True)
def _lookup(buf, start, end, keys, slots, data, offsets):
    h = _fnv1a(buf, start, end)
    mask = np.uint64(keys.size - 1)
    s = h & mask
    n = end - start
    while slots[s] >= 0:
        if keys[s] == h:
            d = slots[s]
            if offsets[d + 1] - offsets[d] == n:
                same = True
                base = offsets[d]
                for i in range(n):
                    if data[base + i] != buf[start + i]:
                        same = False
                        break
                if same:
                    return d
        s = (s + np.uint64(1)) & mask
    return -1


@nb.njit(cache=True, nogil=True)
def _same(buf, start, end, data, offsets, d):
    base = offsets[d]
    if offsets[d + 1] - base != end - start:
        return False
    for i in range(end - start):
        if data[base + i] != buf[start + i]:
            return False
    return True


@nb.njit(cache=True, nogil=True)
def _scan(buf, columns, keys, slots, data, offsets, allowed, decision, ticks, seen,
          meta_start, meta_end, order):
    """Decode one file into per-document arrays; returns CLEAN (0) or 1 at the first anomaly.

    ``order`` holds the document order of the previous file: line k is first
    compared with that document (files of one submission usually share their
    order), and only looked up by hash when it differs. It is updated in place.
    """
    n = buf.size
    i = 0
    line = 0
    while i < n:
        # DocID: bytes up to the tab (tab, LF and CR are all <= 13). The previous
        # file's document at this line is tried first: when its bytes and then a
        # tab are there, the id is known without first scanning for the tab.
        start = i
        d = -1
        if line < order.size:
            guess = order[line]
            if guess >= 0:
                end = start + offsets[guess + 1] - offsets[guess]
                if end < n and buf[end] == 9 and _same(buf, start, end, data, offsets, guess):
                    d = guess
                    i = end
        if d < 0:
            while i < n and buf[i] > 13:
                i += 1
            if i >= n or buf[i] != 9:
                return 1
            d = _lookup(buf, start, i, keys, slots, data, offsets)
            if d < 0:
                return 1
            if line < order.size:
                order[line] = d
        if not allowed[d] or seen[d]:
            return 1
        seen[d] = True
        line += 1
        i += 1
        # HardDecision
        if i >= n:
            return 1
        if buf[i] == 89:            # 'Y'
            decision[d] = True
        elif buf[i] != 78:          # 'N'
            return 1
        i += 1
        if columns == 2:            # a reference file: DocID<TAB>Y|N
            if i < n:
                if buf[i] != 10:
                    return 1
                i += 1
            continue
        if i >= n or buf[i] != 9:
            return 1
        i += 1
        # ConfidenceFactor: digit '.' 1-5 digits
        if i + 2 >= n or buf[i] < 48 or buf[i] > 57 or buf[i + 1] != 46:
            return 1
        value = np.int64(buf[i] - 48)
        i += 2
        k = 0
        while i < n and 48 <= buf[i] <= 57:
            value = value * 10 + (buf[i] - 48)
            k += 1
            i += 1
        if k < 1 or k > 5:
            return 1
        for _ in range(5 - k):
            value *= 10
        if value > 100000:
            return 1
        ticks[d] = value
        if columns == 4:
            if i >= n or buf[i] != 9:
                return 1
            i += 1
            meta_start[d] = i
            while i < n and buf[i] > 13:
                i += 1
            meta_end[d] = i
        # end of line: LF, or the end of the file
        if i < n:
            if buf[i] != 10:
                return 1
            i += 1
    return 0


@dataclass
class Scanned:
    decision: np.ndarray        # bool per document
    ticks: np.ndarray           # int32 per document (confidence * 1e5)
    seen: np.ndarray            # bool per document
    meta: list[str] | None      # 4th column per document (E2E)


def scan_file(data: bytes, table: DocTable, allowed: np.ndarray, columns: int,
              require_all: bool = True) -> Scanned | None:
    """Decode a well-formed file; None when anything is off (use the slow path).

    ``columns``: 2 for a reference (DocID, Y|N), 3 for system output, 4 for E2E.
    ``require_all``: every allowed document must appear (system output); a
    reference may list only some.
    """
    n_docs = allowed.size
    buf = np.frombuffer(data, dtype=np.uint8)
    buf.flags.writeable = False      # a bytearray too: one compiled (cached) signature
    decision = np.zeros(n_docs, dtype=np.bool_)
    ticks = np.zeros(n_docs, dtype=np.int32)
    seen = np.zeros(n_docs, dtype=np.bool_)
    meta_start = np.zeros(n_docs if columns == 4 else 0, dtype=np.int64)
    meta_end = np.zeros(n_docs if columns == 4 else 0, dtype=np.int64)
    status = _scan(buf, columns, table.keys, table.slots, table.data, table.offsets, allowed,
                   decision, ticks, seen, meta_start, meta_end, table.order)
    if status != CLEAN or (require_all and not np.array_equal(seen, allowed)):
        return None
    meta = None
    if columns == 4:
        try:
            meta = [data[s:e].decode("utf-8") if ok else ""
                    for s, e, ok in zip(meta_start.tolist(), meta_end.tolist(), seen.tolist())]
        except UnicodeDecodeError:
            return None
    return Scanned(decision, ticks, seen, meta)
