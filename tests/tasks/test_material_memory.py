"""MATERIAL uploads' memory (issue 41): documents.tsv's lines read one at a time, the
scanner's document table built without a bytes object per id, and a submission of
large files scanned one file ahead; the same pack, table, verdict and scores."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from shareval.formats import material, scan
from shareval.tasks import get
from shareval.tasks.material import base

from .test_material import SYSTEM, folder, make_pack


@pytest.mark.parametrize("text", ["", "\n", "a", "a\n", "a\nb", "a\r\nb\r\n\n\nc\n", "\n\nx",
                                  "d\tgenre\u2028x\n\x0by\n"])
def test_split_lines_is_split(text):
    assert list(material._split_lines(text)) == text.split("\n")


def _old_table(doc_ids):
    encoded = [d.encode("utf-8") for d in doc_ids]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(e) for e in encoded])
    return offsets, np.frombuffer(b"".join(encoded), dtype=np.uint8)


@pytest.mark.parametrize("ids", [[], ["a"], [f"MATERIAL_EVAL1-1A_{i:08d}" for i in range(500)],
                                 ["d\u00e9j\u00e0", "x", "\U0001F600y", "plain"]])
def test_doc_table_same_bytes_and_lookups(ids):
    table = scan.doc_table(ids)
    offsets, data = _old_table(ids)
    assert np.array_equal(table.offsets, offsets) and np.array_equal(table.data, data)
    for k, d in enumerate(ids):
        raw = np.frombuffer(d.encode("utf-8"), dtype=np.uint8)
        assert scan._lookup(raw, 0, raw.size, table.keys, table.slots, table.data,
                            table.offsets) == k


def test_large_files_scanned_one_ahead(tmp_path, monkeypatch):
    """Past IN_FLIGHT_BYTES, a file is read only once the file two before it is scanned
    (at most two files held), and the scores are those of the default reading."""
    pack = make_pack(tmp_path / "pack")
    sub = folder(tmp_path, {f"{q}.tsv": text for q, text in SYSTEM.items()})
    task = get("material-clir")
    expected = task.score(str(pack), str(sub)).to_dict()
    events, lock = [], threading.Lock()
    real_scan, real_iter = base.scan_file, base.iter_submission_files

    def slow_scan(data, *args, **kwargs):
        time.sleep(0.05)
        out = real_scan(data, *args, **kwargs)
        with lock:
            events.append(("scanned", data))
        return out

    def counted(*args, **kwargs):
        for name, data in real_iter(*args, **kwargs):
            with lock:
                events.append(("read", data))
            yield name, data

    monkeypatch.setattr(base, "scan_file", slow_scan)
    monkeypatch.setattr(base, "iter_submission_files", counted)
    monkeypatch.setattr(base, "IN_FLIGHT_BYTES", 1)
    assert task.score(str(pack), str(sub)).to_dict() == expected
    reads = [d for kind, d in events if kind == "read"]
    assert len(reads) == 3
    for i in range(len(reads) - 2):
        assert events.index(("scanned", reads[i])) < events.index(("read", reads[i + 2]))
