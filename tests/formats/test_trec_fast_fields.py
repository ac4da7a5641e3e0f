"""The fast (pyarrow) TREC reader reads the same columns as the line reader, or leaves
the file to it: found by an attacking review (issue 41). Each case differed before:
a NUL byte made a short id share another's code (a borrowed judgment) or a long id
tie with its prefix; whitespace other than the file's delimiter (a tab in a
space-separated file, form feed, unit separator, NEL, no-break or em space) splits a
column for the line reader only; pyarrow dropped a leading byte order mark. A second
review found three more: an empty column (two adjacent tabs) was a value for pyarrow
and no column for the line reader, pyarrow read hexadecimal integers ("0x10") that
Python's int() refuses, and pyarrow dropped a byte order mark where the second half
of a split file starts."""
import pytest

from shareval.formats import trec as trec_format
from shareval.formats import trec_arrow
from shareval.formats.errors import InvalidInput, Problems
from shareval.formats.trec import read_qrels
from shareval.tasks import get

MEASURES = "map,p@10,r_precision,ndcg@10,mrr"
LONG = "x" * 10


def _both(tmp_path, monkeypatch, qrels: str, run: str):
    (tmp_path / "qrels").write_text(qrels, encoding="utf-8")
    (tmp_path / "run").write_text(run, encoding="utf-8")
    out = []
    for threshold in (1 << 30, 0):                    # line reader, then the fast one
        monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", threshold)
        try:
            r = get("trec").score(str(tmp_path / "qrels"), str(tmp_path / "run"),
                                  measures=MEASURES)
            out.append((r.metrics, r.breakdowns))
        except InvalidInput as e:
            out.append(str(e))
    return out


CASES = {
    "nul in a short id": ("q 0 d1 1\n", "q Q0 d1\x00 1 5 t\nq Q0 d2 2 4 t\n"),
    "nul in a short qrels id": ("q 0 d1\x00 1\n", "q Q0 d1 1 5 t\nq Q0 d2 2 4 t\n"),
    "nul after a long id": (f"q 0 {LONG}a 1\n",
                            f"q Q0 {LONG}a\x00 1 5 t\nq Q0 {LONG}a 2 5 t\nq Q0 zz{LONG} 3 1 t\n"),
    "tab in a space file": ("a 0 22345678901 1\nb 0 12345678901 1\n",
                            "a Q0 99999999999 1 5 t\na b\t12345678901 22345678901 9 3.0 t\n"),
    "space in a tab file": (f"a 0 {LONG}8 1\n",
                            f"a\tQ0\t{LONG}1\t1\t5\tt\na\tQ0 {LONG}7\t{LONG}8\t9\t3.0\tt\n"),
    "em space": (f"a 0 {LONG}8 1\n", f"a Q0 {LONG}1 1 5 t\na Q0\u2003{LONG}7 {LONG}8 9 3.0 t\n"),
    "no-break space": (f"a 0 {LONG}8 1\n", f"a Q0 {LONG}1 1 5 t\na Q0\xa0{LONG}7 {LONG}8 9 3 t\n"),
    "next line": (f"a 0 {LONG}8 1\n", f"a Q0 {LONG}1 1 5 t\na Q0\x85{LONG}7 {LONG}8 9 3.0 t\n"),
    "form feed": (f"a 0 {LONG}8 1\n", f"a Q0 {LONG}1 1 5 t\na Q0\x0c{LONG}7 {LONG}8 9 3.0 t\n"),
    "unit separator": (f"a 0 {LONG}8 1\n", f"a Q0 {LONG}1 1 5 t\na Q0\x1f{LONG}7 {LONG}8 9 3 t\n"),
    "bom on the qrels": (f"\ufeffq 0 {LONG}a 1\n", f"q Q0 {LONG}a 1 1 t\n"),
    "bom on the run": (f"q 0 {LONG}a 1\n", f"\ufeffq Q0 {LONG}a 1 1 t\n"),
    "empty Q0": ("q\t0\td1\t1\n", "q\tQ0\td1\t1\t5\tt\nq\t\td2\t2\t4\tt\n"),
    "empty run tag": ("q\t0\td1\t1\n", "q\tQ0\td1\t1\t5\tt\nq\tQ0\td2\t2\t4\t\n"),
    "empty iteration": ("q\t0\td1\t1\nq\t\td2\t1\n", "q\tQ0\td1\t1\t5\tt\n"),
    "empty rank": ("q\t0\td1\t1\n", "q\tQ0\td1\t\t5\tt\n"),
    "empty relevance": ("q\t0\td1\t\n", "q\tQ0\td1\t1\t5\tt\n"),
    "hexadecimal relevance": ("q 0 d1 0x10\n", "q Q0 d1 1 5 t\nq Q0 d2 2 4 t\n"),
    "hexadecimal rank": ("q 0 d1 1\n", "q Q0 d1 0X1f 5 t\nq Q0 d2 2 4 t\n"),
    "negative relevance": ("q 0 d1 1\nq 0 d2 -2\n", "q Q0 d2 1 5 t\nq Q0 d1 2 4 t\n"),
    "signs in ranks": ("q 0 d1 1\n", "q Q0 d1 -1 5 t\nq Q0 d2 +2 4 t\nq Q0 d3 007 3 t\n"),
    "minus after a digit": ("q 0 d1 1\n", "q Q0 d1 1 5 t\nq Q0 d2 2-3 4 t\n"),
    "a lone minus": ("q 0 d1 1\n", "q Q0 d1 - 5 t\nq Q0 d2 2 4 t\n"),
    "two minuses": ("q 0 d1 --1\n", "q Q0 d1 1 5 t\n"),
    "underscore in a rank": ("q 0 d1 1\n", "q Q0 d1 1_000 5 t\n"),
    "arabic-indic digit": ("q 0 d1 \u0663\n", "q Q0 d1 1 5 t\n"),
    # int() refuses more than 4,300 digits (CPython's limit), leading zeros included
    "a rank of 4,301 digits": ("q 0 d1 1\n", "q Q0 d1 " + "1" * 4301 + " 5 t\n"),
    "a relevance of 4,301 digits": ("q 0 d1 " + "0" * 4300 + "1\n", "q Q0 d1 1 5 t\n"),
    "a rank of 25 digits": ("q 0 d1 1\n", "q Q0 d1 " + "9" * 25 + " 5 t\n"),
    "int64 limits": ("q 0 d1 -9223372036854775808\nq 0 d2 9223372036854775807\n",
                     "q Q0 d2 -0000000000000000001 5 t\nq Q0 d1 1 4 t\n"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_fast_reader_agrees_with_the_line_reader(tmp_path, monkeypatch, case):
    lines, fast = _both(tmp_path, monkeypatch, *CASES[case])
    assert fast == lines


def test_non_ascii_ids_without_whitespace_stay_on_the_fast_path(tmp_path):
    (tmp_path / "run").write_text("q Q0 été’doc 1 5 t\nq Q0 naïve 2 4 t\n", encoding="utf-8")
    table = trec_arrow.read_fast(tmp_path / "run", "run")
    assert table is not None and table.docs() == ["été’doc", "naïve"]


def test_a_relevance_beyond_64_bits_is_a_problem_with_its_line(tmp_path):
    (tmp_path / "qrels").write_text("q 0 d1 1\nq 0 d2 99999999999999999999\n")
    problems = Problems()
    assert read_qrels(tmp_path / "qrels", problems) is None
    assert [(p.line, p.field) for p in problems.items] == [(2, "relevance")]


def test_a_byte_order_mark_where_the_second_half_starts(tmp_path, monkeypatch):
    """A file split in two is parsed as two streams: pyarrow skipped a byte order mark
    at the start of the second, so a judgment of "\ufeffq2" became one of "q2"."""
    lines = [f"q1 0 {LONG}{i} 1\n" for i in range(9)] + \
        [f"q2 0 {LONG}{i} 1\n" for i in range(9)]
    size = sum(len(x) for x in lines)
    at = next(k for k in range(len(lines))
              if sum(len(x) for x in lines[:k]) > size // 2)
    lines[at] = "\ufeff" + lines[at]                 # the line the second half starts with
    qrels = "".join(lines)
    run = "".join(f"q2 Q0 {LONG}{i} {i + 1} {9 - i} t\n" for i in range(9))
    monkeypatch.setattr(trec_arrow, "SPLIT_BYTES", 0)
    lines_reader, fast = _both(tmp_path, monkeypatch, qrels, run)
    path = tmp_path / "qrels"
    mid = trec_arrow._line_start(path, path.stat().st_size // 2)
    assert path.read_bytes()[mid:mid + 3] == trec_arrow.BOM      # the case is the one meant
    assert fast == lines_reader


@pytest.mark.parametrize("value,accepted", [
    ("0", True), ("42", True), ("-3", True), ("007", True), ("-0", True),
    ("", False), ("-", False), ("+5", False), ("0x10", False), ("1-2", False),
    ("--1", False), ("1_0", False), ("\u0663", False), (" 5", False), ("5.0", False),
    ("-9223372036854775808", True), ("0" * 21, False), ("1" * 4301, False)])
def test_integer_text_is_what_int_reads(value, accepted):
    """``_integers`` takes a subset of what Python's int() takes (the rest goes to the
    line reader): never a value int() refuses."""
    import pyarrow as pa
    assert trec_arrow._integers(pa.array(["1", value, "2"])) is accepted
    if accepted:
        int(value)


@pytest.mark.parametrize("case", ["nul in a short id", "tab in a space file", "em space",
                                  "bom on the run", "empty Q0", "empty run tag",
                                  "empty rank", "hexadecimal rank", "minus after a digit",
                                  "a rank of 4,301 digits"])
def test_the_upload_check_leaves_such_runs_to_the_task_reader(tmp_path, monkeypatch, case):
    """The upload child's block check accepts exactly the lines the fast reader takes."""
    from shareval.platform.submissions import lean
    monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    (tmp_path / "run").write_text(CASES[case][1], encoding="utf-8")
    assert lean.trec_run_warnings(tmp_path / "run") is None
    (tmp_path / "ok").write_text(f"q Q0 {LONG}a 1 5 t\nq Q0 {LONG}b 2 4 t\n")
    assert lean.trec_run_warnings(tmp_path / "ok") == []


def test_the_upload_check_refuses_a_block_starting_with_a_byte_order_mark(tmp_path, monkeypatch):
    """Each block is parsed on its own: pyarrow would drop the mark from the query id."""
    from shareval.platform.submissions import lean
    monkeypatch.setattr(trec_format, "SMALL_FILE_BYTES", 0)
    monkeypatch.setattr(lean, "BLOCK_BYTES", 32)
    first = f"q Q0 {LONG}a 1 5 t\n"
    assert len(first) < 32
    (tmp_path / "run").write_text(first + f"\ufeffq Q0 {LONG}b 2 4 t\n", encoding="utf-8")
    assert lean.trec_run_warnings(tmp_path / "run") is None
    (tmp_path / "ok").write_text(first + f"q Q0 {LONG}b 2 4 t\n", encoding="utf-8")
    assert lean.trec_run_warnings(tmp_path / "ok") == []
