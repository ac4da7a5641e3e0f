"""The table a TREC qrels or run is read into, shared by both readers (``trec``, line by
line; ``trec_arrow``, with pyarrow) and by the splits that cut it: a leaf module, so
neither reader imports the other's internals. pyarrow is imported only when a table
read by pyarrow is used."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# from this size a run read against its qrels' ids drops, block by block as it is read,
# the ids no score reads (trec_rows.block_keep): a 10M-line run of UUIDs never holds its
# 377 MB of ids at once (docs/dev/i41-ranking.md)
DROP_WHILE_READING_BYTES = 256 << 20

QRELS_FIELDS = ("query_id", "iteration", "doc_id", "relevance")
RUN_FIELDS = ("query_id", "Q0", "doc_id", "rank", "score", "run_tag")


@dataclass
class TrecTable:
    """A parsed qrels or run: ids as integer codes into per-file dictionaries.

    The dictionaries are Python lists for files read line by line and pyarrow
    string arrays for files read by pyarrow.
    """
    path: str
    kind: str                      # "qrels" or "run"
    q_codes: np.ndarray
    q_dict: object                 # distinct query ids, in order of first appearance
    d_codes: np.ndarray
    d_dict: object                 # distinct document ids
    value: np.ndarray              # relevance (int64) or score (float64)
    tags: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)    # accepted oddities, for warnings
    # the dictionary the reader left in byte order (a code is then its id's rank);
    # kept as the object, so a table whose d_dict was replaced (a split) is not trusted
    sorted_d_dict: object = field(default=None, repr=False)
    # a run's ids longer than 8 bytes (read by pyarrow) are kept one per row: d_dict[i]
    # is row i's id (an id repeats across queries) and d_codes is 0..n-1 (trec_rows)
    docs_per_row: bool = False
    # such a run as read: the strhash of each row's id (uint64), for dropping the ids no
    # score reads (trec_rows.scored_only); None once rows are dropped or changed
    d_hashes: object = field(default=None, repr=False)
    # the reader already left "" in place of the ids no score against the qrels it was
    # given reads (trec_rows.block_keep); nothing more to drop
    ids_dropped: bool = False

    def docs_in_byte_order(self) -> bool:
        return self.sorted_d_dict is not None and self.sorted_d_dict is self.d_dict

    def __len__(self) -> int:
        return len(self.value)

    def qids(self) -> list[str]:
        """Query id of every line."""
        return _ids(take_ids(self.q_dict, self.q_codes))

    def docs(self) -> list[str]:
        return _ids(take_ids(self.d_dict, self.d_codes))


def _ids(taken) -> list[str]:
    return taken if isinstance(taken, list) else taken.to_pylist()


def take_ids(dictionary, codes: np.ndarray):
    """The ids of ``codes``: a list from a list dictionary, a pyarrow array from a
    pyarrow one."""
    if isinstance(dictionary, list):
        return [dictionary[c] for c in codes.tolist()]
    if getattr(dictionary, "num_chunks", 1) > 1 and codes.size > 1 and \
            bool(np.all(codes[1:] >= codes[:-1])):
        # chunk by chunk: a chunked array's take joins every chunk first, a copy of the
        # whole text (a split of a run whose ids are kept per row takes rows in order)
        import pyarrow as pa
        starts = np.cumsum([0] + [len(c) for c in dictionary.chunks])
        cut = np.searchsorted(codes, starts)
        return pa.chunked_array([c.take(arrow_codes(codes[cut[k]:cut[k + 1]] - starts[k]))
                                 for k, c in enumerate(dictionary.chunks)
                                 if cut[k + 1] > cut[k]], dictionary.type)
    return dictionary.take(arrow_codes(codes))


def arrow_codes(x: np.ndarray):
    """A pyarrow array over the buffer of an int32/int64/uint64/float64 numpy array
    (``pa.array`` would import pandas, 0.2 s or more, to check types)."""
    import pyarrow as pa
    x = np.ascontiguousarray(x)
    types = {np.dtype(np.int64): pa.int64(), np.dtype(np.int32): pa.int32(),
             np.dtype(np.uint64): pa.uint64(), np.dtype(np.float64): pa.float64()}
    return pa.Array.from_buffers(types[x.dtype], len(x), [None, pa.py_buffer(x)])


_NUMPY = {"int64": np.int64, "int32": np.int32, "uint64": np.uint64, "double": np.float64}


def arrow_numpy(arr) -> np.ndarray:
    """A view of a pyarrow int32/int64/uint64/float64 array's values (pyarrow's
    ``to_numpy`` imports pandas). Null slots hold unspecified values."""
    dtype = np.dtype(_NUMPY[str(arr.type)])
    if len(arr) == 0:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(arr.buffers()[1], dtype=dtype, count=len(arr),
                         offset=arr.offset * dtype.itemsize)


def arrow_bools(arr) -> np.ndarray:
    """A null-free pyarrow boolean array (bit-packed) as numpy bools."""
    if len(arr) == 0:
        return np.zeros(0, dtype=bool)
    bits = np.frombuffer(arr.buffers()[1], dtype=np.uint8)
    return np.unpackbits(bits, bitorder="little", count=len(arr) + arr.offset)[arr.offset:] \
        .astype(bool)
