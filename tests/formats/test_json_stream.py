"""JSON records read a chunk at a time (``textstream``, issue 41) give what the whole
text gave: the same records with their lines, and the same problems (line, column,
message), wherever the chunks end: inside a string, a number, a multi-byte
character, a BOM, between records."""
from __future__ import annotations

import json
import random

import pytest

from shareval.formats import jsonfile, textstream
from shareval.formats.errors import Problems

RECS = [{"publication_id": i, "data_set_id": str(i * 7), "score": 0.5 + i / 1e4,
         "mention_list": [f"Survey {i} of caf\u00e9s \u2013 \U0001F600", "x\\ny \"q\""],
         "big": 1.5e-10 * i, "neg": -12345678901234567890} for i in range(40)]

GOOD = [
    json.dumps(RECS),
    json.dumps(RECS, indent=2),
    "\ufeff" + json.dumps(RECS, indent=1),
    "[\n" + ",\n".join(json.dumps(r) for r in RECS) + "\n]\n  \n",
    "[1, 2.5e+10, -0.0, true, null, \"s\", 12345678901234567890, 3]",
    "[]", "  [ ]  ",
]
BAD = [
    "", "   ", "{}", "[1, 2", "[1 2]", "[1,]", "[{\"a\": 1}, {\"a\": }]",
    json.dumps(RECS, indent=2)[:-30],                         # cut inside a record
    json.dumps(RECS, indent=2) + "\n[]",                      # content after the array
    json.dumps(RECS, indent=2).replace('"score": 0.5012', '"score": 0.5012e', 1),
    json.dumps(RECS, indent=2).replace('"x\\\\ny', '"x\nny', 1),   # a raw newline
    json.dumps(RECS, indent=2).replace('"Survey 30', '"Survey \\q30', 1),
    json.dumps(RECS, indent=2).replace('"Survey 33', '"Survey \\u12G433', 1),
    json.dumps(RECS).replace('{"publication_id": 20', '{"publication_id" 20', 1),
    json.dumps(RECS)[:-1] + ', "unterminated]',
    "[" * 5000 + "]" * 5000,
    "[1, 2, Infinity, NaN, -Infinity]",
    "[1, 2, Infin]",
]
OBJECTS = [
    json.dumps({f"u{i}": i % 2 for i in range(300)}, indent=2),
    '{"a": 1, "b": 2, "a": 3}',
    '{"a": 1, 2: 3}',
    '{"a" 1}',
    json.dumps({f"u{i}": {"v": i} for i in range(200)})[:-5],
]


def _read(path, expect, chunk, monkeypatch):
    monkeypatch.setattr(textstream, "CHUNK_BYTES", chunk)
    problems = Problems()
    it = jsonfile.iter_records(path, problems, expect, "uuid")
    records = None if it is None else list(it)
    return records, [str(p) for p in problems.items]


@pytest.mark.parametrize("text", GOOD + BAD, ids=range(len(GOOD + BAD)))
def test_arrays_read_in_chunks_as_whole(tmp_path, monkeypatch, text):
    path = tmp_path / "f.json"
    path.write_text(text, encoding="utf-8")
    whole = _read(path, "array", 1 << 30, monkeypatch)
    for chunk in (1, 2, 3, 5, 64, 1000):
        assert _read(path, "array", chunk, monkeypatch) == whole, chunk


@pytest.mark.parametrize("text", OBJECTS, ids=range(len(OBJECTS)))
def test_objects_read_in_chunks_as_whole(tmp_path, monkeypatch, text):
    path = tmp_path / "f.json"
    path.write_text(text, encoding="utf-8")
    whole = _read(path, "object", 1 << 30, monkeypatch)
    for chunk in (1, 3, 7, 100):
        assert _read(path, "object", chunk, monkeypatch) == whole, chunk


def test_good_files_give_the_records_json_parses(tmp_path, monkeypatch):
    path = tmp_path / "f.json"
    path.write_text(json.dumps(RECS, indent=2), encoding="utf-8")
    records, problems = _read(path, "array", 3, monkeypatch)
    assert problems == [] and [v for _, _, v in records] == RECS
    text = path.read_text()
    starts = [text.index('"publication_id": %d,' % i) for i in range(40)]
    assert [line for line, _, _ in records] == [text.count("\n", 0, s) for s in starts]


@pytest.mark.parametrize("where", [0, 1, 2, 700, 701, -2, -1])
@pytest.mark.parametrize("bad", [b"\xff", b"\xe2\x82", b"\xc3"])
def test_bad_utf8_reported_as_read_text_does(tmp_path, monkeypatch, where, bad):
    from shareval.formats.errors import read_text
    data = json.dumps(RECS[:10], indent=2).encode()
    where = where % len(data)
    path = tmp_path / "f.json"
    path.write_bytes(data[:where] + bad + data[where:])
    expected = Problems()
    assert read_text(path, expected) is None
    for chunk in (1, 2, 5, 1 << 20):
        assert _read(path, "array", chunk, monkeypatch) == (None, [str(p) for p in expected.items])


def test_missing_file_and_folder(tmp_path, monkeypatch):
    from shareval.formats.errors import read_text
    for path in (tmp_path / "nope.json", tmp_path):
        expected = Problems()
        read_text(path, expected)
        assert _read(path, "array", 4, monkeypatch) == (None, [str(p) for p in expected.items])


def test_random_cuts_and_edits(tmp_path, monkeypatch):
    """Files cut or with one character replaced at random: the same verdict in chunks."""
    rng = random.Random(41)
    base = json.dumps(RECS[:12], indent=2)
    path = tmp_path / "f.json"
    for _ in range(60):
        i = rng.randrange(len(base))
        text = base[:i] if rng.random() < .3 else base[:i] + rng.choice('[]{},:"\\ 0e.-') + base[i + 1:]
        path.write_text(text, encoding="utf-8")
        whole = _read(path, "array", 1 << 30, monkeypatch)
        assert _read(path, "array", rng.choice((1, 2, 3, 9, 33)), monkeypatch) == whole
