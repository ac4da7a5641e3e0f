"""Validating an upload in the child (``isolate``) with memory bounded by the file.

Validation needs a verdict, not the parsed submission. A large TREC run is read
by the task's reader into a full table (every column, then integer codes for the
ids), which peaks at several times the file's size. Here a large run is read in
blocks by the same pyarrow parser with the same options (``trec_arrow``), each
block is checked as the fast reader checks the whole table (every value as the
line reader reads it, finite scores, no comment) and only an 8-byte key per line
is kept: a hash of its query and document ids, for the duplicate check. Whatever
this pass cannot accept (a block the parser refuses, a value the line reader
reads otherwise, a byte order mark where a block starts, a non-finite score, a
comment, two equal keys: a duplicate or, rarely, two pairs with the same hash)
goes to the task's own validation, so every problem is reported by the same
code, with the same text, as before; an accepted run gets the same warnings (run
tags) as the task gives. An SV-Ident detection file is checked against the reference's uuids
alone (``lean_svident``).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from shareval.formats.strhash import arrow_spans, span_hashes

BLOCK_BYTES = 1 << 22              # bytes of the file parsed at once
LONGEST_LINE = 1 << 24             # longer: the task's reader (nothing is kept for it here)


def validate(task, submission: str, reference: str | None, name: str | None) -> list[str]:
    """``task.validate(submission, reference, name)``: the same warnings, or the same
    InvalidInput; a large TREC run is checked without its table when it can be."""
    if task.name == "svident-detection":
        from .lean_svident import warnings as svident_warnings
        warnings = svident_warnings(task, submission, reference)
        return warnings if warnings is not None else task.validate(submission, reference, name)
    if task.name != "trec":
        return task.validate(submission, reference, name)
    ref = task.reference(reference) if reference is not None else None
    warnings = trec_run_warnings(submission)
    if warnings is not None:
        return warnings
    sub = task.submission(submission, ref, name)
    return list(getattr(sub, "warnings", []))


def trec_run_warnings(path: str | Path) -> list[str] | None:
    """The warnings ``TrecTask.load_submission`` gives a run its fast reader accepts,
    found block by block; None when the run needs the task's reader (a small file,
    a file the fast reader would not take, or one with a problem)."""
    from shareval.formats import trec
    path = Path(path)
    try:
        if not path.is_file() or path.stat().st_size < trec.SMALL_FILE_BYTES:
            return None
    except OSError:
        return None
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    from shareval.formats import trec_arrow
    delim = trec_arrow._delimiter(path)
    if delim is None:
        return None
    names = list(trec.RUN_FIELDS)
    tags: dict[str, None] = {}
    keys: list[np.ndarray] = []
    rows = 0
    options = trec_arrow.checked_options(names, delim, use_threads=False)
    try:
        for block in _line_blocks(path):
            # pyarrow's streaming reader reads ahead of its consumer (the whole file,
            # measured); blocks of whole lines parsed one at a time stay small
            if block.startswith(trec_arrow.BOM):
                return None             # each parse would drop it from the query id
            batch = pacsv.read_csv(pa.BufferReader(block), **options)
            del block
            if batch.num_rows == 0:
                continue
            batch = batch.combine_chunks()
            if not trec_arrow.plain_batch(batch, names):
                return None
            key = _block_keys(batch)
            if key is None:
                return None
            keys.append(key)
            rows += batch.num_rows
            for tag in pc.unique(batch.column("run_tag")).to_pylist():
                tags.setdefault(tag)
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError, OSError, _TooLong):
        return None
    if rows == 0:
        return None
    all_keys = np.concatenate(keys) if len(keys) > 1 else keys[0]
    del keys
    all_keys.sort()
    if bool(np.any(all_keys[1:] == all_keys[:-1])):
        return None                     # a duplicate (or a hash collision): the reader tells
    tag_list = list(tags)
    if len(tag_list) > 1:
        return [f"{path}: run has {len(tag_list)} different run tags: "
                f"{', '.join(tag_list[:5])}"]
    return []


class _TooLong(Exception):
    """A line longer than any a run has: left to the task's reader."""


def _line_blocks(path: Path):
    """The file's bytes in blocks of about BLOCK_BYTES, each ending at a line's end."""
    rest = b""
    with open(path, "rb") as f:
        while True:
            data = f.read(BLOCK_BYTES)
            if not data:
                break
            data = rest + data
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                if len(data) > LONGEST_LINE:
                    raise _TooLong
                rest = data
                continue
            rest = data[cut:]
            yield data[:cut]
    if rest:
        yield rest


def _block_keys(batch) -> np.ndarray | None:
    """A 64-bit key per line of a parsed block (equal ids, equal keys); None when the
    block holds what the fast reader refuses: a non-finite score, a query id starting
    with '#' (a comment), an empty query or document id."""
    import pyarrow.compute as pc
    score = batch.column("score").chunk(0)
    values = np.frombuffer(score.buffers()[1], dtype=np.float64, count=len(score),
                           offset=score.offset * 8)
    if not np.all(np.isfinite(values)):
        return None
    q, d = batch.column("query_id").chunk(0), batch.column("doc_id").chunk(0)
    if pc.any(pc.starts_with(q, "#")).as_py():
        return None
    hq, hd = _string_hashes(q), _string_hashes(d)
    if hq is None or hd is None:
        return None
    with np.errstate(over="ignore"):
        return hq * np.uint64(0x9E3779B97F4A7C15) + hd


def _string_hashes(arr) -> np.ndarray | None:
    """A 64-bit hash of each string of a null-free pyarrow string array (equal strings,
    equal hashes: ``formats.strhash``); None when one is empty."""
    data, offsets = arrow_spans(arr)
    if offsets.size < 2 or np.diff(offsets).min() <= 0:
        return None
    return span_hashes(data, offsets)
