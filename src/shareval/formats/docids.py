"""A collection's document ids and per-document labels, held compactly.

A MATERIAL pack lists up to ~500,000 documents. As Python strings in a list, plus a
dict of them, plus a label string per document, they held ~125 MB of the upload
child (issue 41); here the ids are one UTF-8 buffer and offsets (~30 bytes a
document) and labels one small code each. A str is made only when one is asked for;
the id -> position dict only when a line validator needs it (a file with a problem).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from .strhash import hashes_at

HASH_BLOCK = 1 << 16               # ids hashed at once


class DocIds(Sequence):
    """Document ids (str) in collection order, stored as ``data`` (uint8, UTF-8) and
    ``offsets`` (int64, n + 1): id k is ``data[offsets[k]:offsets[k + 1]]``."""

    def __init__(self, data: np.ndarray, offsets: np.ndarray):
        # ``data`` may go on past the last id: 8 zero bytes there let ``words`` read
        # 8 bytes at any id's byte without a copy
        self._buffer = data
        self.data = data[:int(offsets[-1])]
        self.offsets = offsets
        self._index: dict[str, int] | None = None
        self._lookup: tuple[np.ndarray, np.ndarray] | None = None

    @classmethod
    def of(cls, ids: Iterable[str]) -> DocIds:
        data, lengths = bytearray(), []
        for d in ids:
            raw = d.encode("utf-8")
            data += raw
            lengths.append(len(raw))
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum(lengths)
        data += bytes(8)
        return cls(np.frombuffer(data, dtype=np.uint8), offsets)

    def __len__(self) -> int:
        return self.offsets.size - 1

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        k = int(k)
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError("document index out of range")
        return self.data[self.offsets[k]:self.offsets[k + 1]].tobytes().decode("utf-8")

    def __iter__(self):
        text = self.data.tobytes()
        bounds = self.offsets.tolist()
        for a, b in zip(bounds, bounds[1:]):
            yield text[a:b].decode("utf-8")

    def __eq__(self, other) -> bool:
        if isinstance(other, DocIds):
            return np.array_equal(self.offsets, other.offsets) and \
                np.array_equal(self.data, other.data)
        return isinstance(other, (list, tuple)) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # mutable caches; equal by content

    def __repr__(self) -> str:
        return f"DocIds({len(self)} documents)"

    def words(self) -> np.ndarray:
        """The 8 bytes at each byte of the ids as little-endian uint64 (zeros past the
        last id; ``strhash.windows``), a view when the ids were stored with room."""
        end = int(self.offsets[-1])
        if self._buffer.size < end + 8:
            self._buffer = np.concatenate([self.data, np.zeros(8, dtype=np.uint8)])
            self.data = self._buffer[:end]
        elif np.any(self._buffer[end:end + 8]):
            raise ValueError("the bytes after the last id must be zeros")
        return np.ndarray(shape=(end + 1,), dtype="<u8", buffer=self._buffer, strides=(1,))

    def index(self) -> dict[str, int]:
        """id -> position, built on first use (the line validators' lookup)."""
        if self._index is None:
            self._index = {d: k for k, d in enumerate(self)}
        return self._index

    def lookup(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """(the ids' 64-bit hashes sorted, the document of each, where each bucket of
        hashes starts, the bits of a bucket number), built once: a hash is looked up in
        its bucket (its top bits), ~1 entry, not by a binary search over all. Any user
        confirms a hit by comparing bytes (``formats.material_check``)."""
        if self._lookup is None:
            n = len(self)
            h = np.empty(n, dtype=np.uint64)
            for a in range(0, n, HASH_BLOCK):         # a block at a time: small temporaries
                b = min(a + HASH_BLOCK, n)
                h[a:b] = hashes_at(self.data, self.offsets[a:b], np.diff(self.offsets[a:b + 1]))
            small = np.int32 if n < 2 ** 31 else np.int64
            order = np.argsort(h, kind="stable")
            h.sort()                                    # in place: no second array
            order = order.astype(small)
            bits = max(1, (n - 1).bit_length())
            shift = np.uint64(64 - bits)
            starts = np.empty(2 ** bits + 1, dtype=small)
            for a in range(0, 2 ** bits, HASH_BLOCK):   # where each bucket's hashes start
                b = min(a + HASH_BLOCK, 2 ** bits)
                starts[a:b] = np.searchsorted(h, np.arange(a, b, dtype=np.uint64) << shift)
            starts[-1] = n
            self._lookup = (h, order, starts, bits)
        return self._lookup


class Labels(Sequence):
    """A label (str) per document as a small code each; "" means none given."""

    def __init__(self, codes: np.ndarray, names: list[str]):
        self.codes = codes
        self.names = names

    @classmethod
    def of(cls, labels: Iterable[str]) -> Labels:
        names: dict[str, int] = {}
        codes = [names.setdefault(x, len(names)) for x in labels]
        return cls(np.asarray(codes, dtype=np.int32), list(names))

    def __len__(self) -> int:
        return self.codes.size

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self.names[c] for c in self.codes[k].tolist()]
        return self.names[int(self.codes[k])]

    def __eq__(self, other) -> bool:
        return list(self) == list(other) if isinstance(other, (Labels, list, tuple)) else False

    __hash__ = None  # type: ignore[assignment]

    def masks(self) -> dict[str, np.ndarray]:
        """{label: bool per document}, labels sorted, "" left out."""
        return {name: self.codes == self.names.index(name)
                for name in sorted(set(self.names) - {""})}
