"""SV-Ident detection uploads validated against the reference's uuids alone (issue 41).

The task's validation reads the whole reference (a ``Sentence`` per line, after
the table's rows as dicts): 1.3 GB for a 120 MB reference, whatever the upload.
A detection file is valid when every line is ``uuid<TAB>0|1`` and its uuids are
the reference's, each once. Here both files are streamed: the reference's uuid
column is parsed as ``read_table`` parses it (the same csv dialect on the same
lines) and the submission's lines as ``read_detection`` reads them, and only a
64-bit hash per uuid is kept (``formats.strhash``). The two sorted hash arrays
equal, without repeats: the file is accepted (no warnings, as the task gives).
Anything else (a problem, an unusual reference, a JSON submission, a hash shared
by two uuids) goes to the task's own validation, which reports it.

The reference's own checks (is_variable, lang, doc_id, annotator columns) are not
repeated: the server takes a reference only once the task has loaded it (the
bundle loader), so in the upload child it is known to be valid; ``validate``
is used there only, never by ``shareval validate``.
"""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

BATCH = 1 << 11                  # uuids hashed at once (~1.5 KB of numpy each)


def warnings(task, submission: str, reference: str | None) -> list[str] | None:
    """The task's warnings for a valid detection TSV (none), or None when the task's
    own validation must say (a problem, or a file this pass does not read)."""
    from shareval.formats.jsonfile import sniff_container
    if task.name != "svident-detection" or reference is None:
        return None
    ref, sub = Path(reference), Path(submission)
    if not ref.is_file() or not sub.is_file() or ref.suffix.lower() == ".csv" \
            or sniff_container(sub) is not None:
        return None
    ref_keys = _sorted_keys(_reference_uuids(ref))
    if ref_keys is None or ref_keys.size == 0 or bool(np.any(ref_keys[1:] == ref_keys[:-1])):
        return None
    sub_keys = _sorted_keys(_detection_uuids(sub))
    if sub_keys is None or not np.array_equal(ref_keys, sub_keys):
        return None
    return []


class _Refer(Exception):
    """Something the task's validation must look at."""


def _sorted_keys(uuids) -> np.ndarray | None:
    parts, batch = [], []
    try:
        for u in uuids:
            batch.append(u)
            if len(batch) == BATCH:
                parts.append(_hashes(batch))
                batch = []
        if batch:
            parts.append(_hashes(batch))
    except (_Refer, UnicodeDecodeError, OSError, csv.Error):
        return None
    keys = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)
    keys.sort()
    return keys


def _hashes(batch: list[str]) -> np.ndarray:
    """The 64-bit string hash of each uuid (``formats.strhash``, numpy only: pyarrow's
    import alone is ~40 MB of the child)."""
    from shareval.formats.strhash import span_hashes
    encoded = [u.encode("utf-8") for u in batch]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    if np.diff(offsets).min() <= 0:               # an empty uuid
        raise _Refer
    return span_hashes(np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets)


def _reference_uuids(path: Path):
    """The uuid cell of each row, as ``read_reference`` reads it through ``read_table``
    (TSV: csv with QUOTE_NONE over the text's "\\n" lines); _Refer for what it would
    report or read otherwise (a ragged row, a file that is not UTF-8)."""
    from shareval.formats import table
    for block in table._blocks(path):
        block.decode("utf-8")                      # UnicodeDecodeError: the reader says
    reader = csv.reader(_text_lines(table, path), delimiter="\t", quoting=csv.QUOTE_NONE)
    header = [h.strip() for h in next(reader, [])]
    canon = table._canonical(header, {"sentence": ("text",), "mention_type": ("type",)})
    names = [canon.get(h, h) for h in header]
    if "uuid" not in names or "is_variable" not in names or "doc_id" not in names:
        raise _Refer
    col = len(names) - 1 - names[::-1].index("uuid")      # a row is a dict: the last wins
    for record in reader:
        if not record or (len(record) == 1 and not record[0].strip()):
            continue
        if len(record) != len(header):
            raise _Refer
        uuid = record[col].strip()
        if not uuid:
            raise _Refer
        yield uuid


def _text_lines(table, path: Path):
    """The lines ``table._lines`` gives of the whole text, block by block (a block ends
    after a b"\\n"), the BOM removed as ``read_text`` does."""
    for i, block in enumerate(table._blocks(path)):
        text = block.decode("utf-8")
        if i == 0:
            text = text.removeprefix("\ufeff")
        yield from table._lines(text)


def _detection_uuids(path: Path):
    """The uuids of a detection TSV as ``read_detection`` reads them; _Refer at the first
    line it would report."""
    from shareval.formats import table
    from shareval.formats.errors import Problems
    problems = Problems()
    for line, text in table.iter_lines(path, problems):
        parts = text.split("\t")
        if line == 1 and parts[0].strip().lower() == "uuid":
            continue
        if len(parts) != 2 or parts[1].strip() not in ("0", "1"):
            raise _Refer
        yield parts[0].strip()
    if problems:
        raise _Refer
