"""Readers of uploads that no longer hold a file whole (issue 41): the same lines, line
numbers and problems as reading the whole text, at any block size."""
from __future__ import annotations

import pytest

from shareval import tasks
from shareval.formats import table
from shareval.formats.errors import InvalidInput, Problems, read_text

from ...memory import python_peak


def whole_text_lines(path, problems):
    """iter_lines as it was: the whole text, then str.splitlines."""
    text = read_text(path, problems)
    if text is None:
        return
    for i, line in enumerate(text.splitlines(), 1):
        if line.strip():
            yield i, line


CASES = {
    "plain": b"a\t1\nb\t0\n",
    "crlf": b"a\t1\r\nb\t0\r\n\r\nc\t1\r\n",
    "cr only": b"a\t1\rb\t0\rc\t1",
    "other breaks": "a\t1\x0bb\t0\x0cc\u2028d\x85e\n\nf\u2029g".encode(),
    "bom": b"\xef\xbb\xbfuuid\tis_variable\na\t1\n",
    "blank lines": b"\n\n  \na\t1\n\t\nb\t0",
    "no final newline": b"a\t1\nb\t0",
    "empty": b"",
    "long line": b"x" * 50 + b"\n" + b"y" * 7 + b"\n",
    "not utf8 late": b"a\t1\nb\t0\nc\xe9\t1\nd\t0\n",
    "not utf8 first": b"\xffa\t1\n",
    "not utf8 after bom": b"\xef\xbb\xbfa\t1\nb\xc3\t0\n",
    "truncated at end": b"a\t1\nb\xe2\x82",
}


@pytest.mark.parametrize("block", [1, 3, 7, 64, 1 << 22])
@pytest.mark.parametrize("name", sorted(CASES))
def test_iter_lines_same_as_whole_text(tmp_path, monkeypatch, name, block):
    monkeypatch.setattr(table, "BLOCK_BYTES", block)
    f = tmp_path / "f.tsv"
    f.write_bytes(CASES[name])
    p_old, p_new = Problems(), Problems()
    assert list(table.iter_lines(f, p_new)) == list(whole_text_lines(f, p_old))
    assert [str(p) for p in p_new.items] == [str(p) for p in p_old.items]


@pytest.mark.parametrize("make", ["missing", "folder"])
def test_iter_lines_unreadable_same_problem(tmp_path, make):
    f = tmp_path / "f.tsv"
    if make == "folder":
        f.mkdir()
    p_old, p_new = Problems(), Problems()
    assert list(table.iter_lines(f, p_new)) == list(whole_text_lines(f, p_old)) == []
    assert [str(p) for p in p_new.items] == [str(p) for p in p_old.items] != []


def test_svident_detection_holds_less_than_the_file(tmp_path, monkeypatch):
    """Reading a detection TSV no longer keeps its text and a list of its lines: the
    peak is what the predictions hold (two dicts keyed by uuid), under 7x the file,
    down from ~10x."""
    monkeypatch.setattr(table, "BLOCK_BYTES", 1 << 16)
    det = tasks.get("svident-detection")
    uuids = [f"{i:08x}-0000-4000-8000-{i * 7919:012x}" for i in range(40000)]
    f = tmp_path / "pred.tsv"
    f.write_text("".join(f"{u}\t{i % 2}\n" for i, u in enumerate(uuids)))
    size = f.stat().st_size
    peak, _ = python_peak(lambda: det.validate(str(f)))
    assert peak < 7 * size, (peak / size)
    f.write_text("".join(f"{u}\t{i % 2}\n" for i, u in enumerate(uuids)) + f"{uuids[3]}\t2\n")
    with pytest.raises(InvalidInput) as e:
        det.validate(str(f))
    assert e.value.lines() == [f"{f}:40001: uuid: duplicate (first at line 4)"]


@pytest.mark.parametrize("text", ["", "a", "a\n", "a\nb", "a\r\nb\rc\x0bd\u2028e\n\n", "\n\n",
                                  'x,"y\nz",w\n1,2,3'])
def test_table_lines_as_stringio(text):
    import io
    assert list(table._lines(text)) == list(io.StringIO(text))


# ---------------------------------------------------------------------------
# RCC citations (issue 41, i41b): the JSON text read a chunk at a time, and validation
# holds only the records it reports

def _rcc_case(tmp_path, name, corpus: bool):
    """(submission, reference) for a named good or bad citations file."""
    import json as _json
    recs = [{"publication_id": 100 + i % 50, "data_set_id": i, "score": 0.5,
             "mention_list": [f"Survey {i}"]} for i in range(300)]
    if name == "unknown publications":
        for i in (5, 77, 78, 200):
            recs[i]["publication_id"] = 9000 + i
    elif name == "bad fields":
        recs[3]["score"] = "x"
        recs[40]["mention_list"] = "m"
        del recs[41]["data_set_id"]
        recs[42]["publication_id"] = None
    elif name == "unknown and bad":
        recs[5]["publication_id"] = 9999
        recs[8]["score"] = None
    text = _json.dumps(recs, indent=2)
    if name == "syntax":
        text = text.replace('"score": 0.5', '"score": 0.5,', 1)
    sub = tmp_path / "sub.json"
    sub.write_text(text)
    ref = tmp_path / "ref"
    ref.mkdir(exist_ok=True)
    (ref / "data_set_citations.json").write_text(_json.dumps(
        [{"publication_id": 100 + i, "data_set_id": i} for i in range(50)]))
    if corpus:
        (ref / "publications.json").write_text(_json.dumps(
            [{"publication_id": 100 + i} for i in range(50)]))
    return sub, ref


def _verdict(fn):
    try:
        return "ok", fn()
    except InvalidInput as e:
        return "refused", e.lines()


@pytest.mark.parametrize("corpus", [True, False])
@pytest.mark.parametrize("name", ["good", "unknown publications", "bad fields",
                                  "unknown and bad", "syntax"])
def test_rcc_validate_same_verdict_as_loading(tmp_path, monkeypatch, name, corpus):
    """RccCitations.validate (records not held) says what loading the submission says."""
    from shareval.formats import textstream
    from shareval.tasks.base import Task
    task = tasks.get("rcc-citations")
    sub, ref = _rcc_case(tmp_path, name, corpus)
    before = _verdict(lambda: Task.validate(task, str(sub), str(ref)))
    for chunk in (5, 1 << 20):
        monkeypatch.setattr(textstream, "CHUNK_BYTES", chunk)
        assert _verdict(lambda: task.validate(str(sub), str(ref))) == before
    assert before[0] == ("ok" if name == "good" or (name == "unknown publications"
                                                     and not corpus) else "refused")


def test_rcc_validate_holds_little_of_the_file(tmp_path, monkeypatch):
    """Validating an indented citations file holds neither its text nor its records:
    the peak is a few chunks, under 0.1x the file (was ~4x: the text, an offset per
    line, a record object per citation)."""
    import json as _json

    from shareval.formats import textstream
    monkeypatch.setattr(textstream, "CHUNK_BYTES", 1 << 16)
    task = tasks.get("rcc-citations")
    f = tmp_path / "sub.json"
    f.write_text(_json.dumps([{"publication_id": i % 997, "data_set_id": i, "score": 0.25,
                               "mention_list": [f"Survey of income {i}", "Panel Study"]}
                              for i in range(60000)], indent=2))
    size = f.stat().st_size
    peak, _ = python_peak(lambda: task.validate(str(f)))
    assert peak < 0.1 * size, (peak / size)
