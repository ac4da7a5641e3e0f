"""Upload validation in the child (issue 41): a large TREC run is checked block by
block (``lean``) with the same verdict, problems and warnings as the task's own
validation, and with memory bounded by a fraction of the file."""
from __future__ import annotations

import random

import pyarrow as pa
import pytest

from shareval import tasks
from shareval.formats import trec
from shareval.formats.errors import InvalidInput
from shareval.platform.submissions import isolate, lean

from ...memory import python_peak

TREC = tasks.get("trec")


@pytest.fixture(autouse=True)
def block_path_from_256_kb(monkeypatch):
    """The files here are 256 KB and more: the size from which the block path
    takes a run when the line reader's threshold is that low (it is 2 MB now,
    since pyarrow's import costs more than it saves below)."""
    monkeypatch.setattr(trec, "SMALL_FILE_BYTES", 1 << 18)


def run_lines(queries=60, docs=300, tag="bench", seed=1, sep=" "):
    rng = random.Random(seed)
    out = []
    for q in range(queries):
        for r, d in enumerate(rng.sample(range(10 ** 6), docs)):
            out.append(sep.join([f"q{q:03d}", "Q0", f"doc-{d}", str(r + 1),
                                 f"{1 - r / docs:.6f}", tag]) + "\n")
    return out


def qrels(path):
    path.write_text("".join(f"q{q:03d} 0 doc-{d} 1\n" for q in range(60) for d in range(5)))
    return path


def verdict(fn):
    try:
        return "ok", fn()
    except InvalidInput as e:
        return "refused", e.lines()


def variants():
    """Name -> file bytes: large enough for the fast reader (>= 256 KB)."""
    base = run_lines()
    mid = len(base) // 2
    v = {"valid": "".join(base)}
    v["two tags"] = "".join(base[:mid] + [ln.replace(" bench", " other") for ln in base[mid:]])
    v["duplicate far apart"] = "".join(base + [base[3]])
    v["duplicate adjacent"] = "".join(base[:mid] + [base[mid]] + base[mid:])
    v["comment line"] = "".join(base[:mid] + ["# a comment here x y\n"] + base[mid:])
    v["comment of six columns"] = "".join(base[:mid] + ["#c Q0 d 1 1.0 t\n"] + base[mid:])
    v["nan score"] = "".join(base[:mid] + ["q001 Q0 new 1 nan bench\n"] + base[mid:])
    v["inf score"] = "".join(base + ["q001 Q0 new 1 inf bench\n"])
    v["bad rank"] = "".join(base[:mid] + ["q001 Q0 new one 0.5 bench\n"] + base[mid:])
    v["five columns"] = "".join(base[:mid] + ["q001 Q0 new 1 0.5\n"] + base[mid:])
    v["seven columns"] = "".join(base[:mid] + ["q001 Q0 new 1 0.5 bench x\n"] + base[mid:])
    v["blank lines"] = "".join(base[:mid] + ["\n", "\n"] + base[mid:])
    v["crlf"] = "".join(ln.replace("\n", "\r\n") for ln in base)
    v["no final newline"] = "".join(base).rstrip("\n")
    v["tabs"] = "".join(run_lines(sep="\t"))
    v["mixed"] = "".join(base[:mid] + [ln.replace(" ", "\t") for ln in base[mid:]])
    v["empty doc id"] = "".join(run_lines(sep="\t")[:mid] + ["q001\tQ0\t\t1\t0.5\tbench\n"]
                                + run_lines(sep="\t")[mid:])
    v["same doc, other query"] = "".join(base + [base[0].replace("q000", "q999", 1)])
    v["qrels given as run"] = "".join(f"q{q} 0 d{d} 1\n" for q in range(300) for d in range(100))
    return {k: s.encode() for k, s in v.items()}


VARIANTS = variants()


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_same_verdict_as_the_task(tmp_path, name):
    run = tmp_path / "run.txt"
    run.write_bytes(VARIANTS[name])
    ref = str(qrels(tmp_path / "qrels.txt"))
    assert run.stat().st_size >= 1 << 18
    assert verdict(lambda: lean.validate(TREC, str(run), ref, "run.txt")) == \
        verdict(lambda: TREC.validate(str(run), ref, "run.txt"))


def test_not_utf8_same_verdict(tmp_path):
    run = tmp_path / "run.txt"
    run.write_bytes(VARIANTS["valid"] + b"q001 Q0 caf\xe9 1 0.5 bench\n")
    expected = verdict(lambda: TREC.validate(str(run), None, "run.txt"))
    assert expected[0] == "refused" and "encoding" in expected[1][0]
    assert verdict(lambda: lean.validate(TREC, str(run), None, "run.txt")) == expected


@pytest.mark.parametrize("name,warned", [("valid", []), ("two tags", True)])
def test_valid_runs_take_the_block_path(tmp_path, name, warned):
    run = tmp_path / "run.txt"
    run.write_bytes(VARIANTS[name])
    got = lean.trec_run_warnings(run)
    assert got is not None                                  # accepted without the reader
    assert got == TREC.validate(str(run))
    assert bool(got) == bool(warned)
    if warned:
        assert got == [f"{run}: run has 2 different run tags: bench, other"]


@pytest.mark.parametrize("name", ["duplicate far apart", "comment line", "nan score",
                                  "bad rank", "mixed", "empty doc id", "qrels given as run"])
def test_problem_files_go_to_the_reader(tmp_path, name):
    run = tmp_path / "run.txt"
    run.write_bytes(VARIANTS[name])
    assert lean.trec_run_warnings(run) is None


def test_small_and_other_tasks_use_the_task(tmp_path, monkeypatch):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 0.5 t\nq1 Q0 d1 2 0.4 t\n")
    assert lean.trec_run_warnings(run) is None
    assert verdict(lambda: lean.validate(TREC, str(run), None, None)) == \
        verdict(lambda: TREC.validate(str(run)))
    seen = []
    other = tasks.get("classification")
    monkeypatch.setattr(other, "validate", lambda *a: seen.append(a) or ["w"])
    assert lean.validate(other, "x", None, "n") == ["w"] and seen == [("x", None, "n")]


def test_line_blocks_end_at_line_ends(tmp_path, monkeypatch):
    monkeypatch.setattr(lean, "BLOCK_BYTES", 10)
    f = tmp_path / "f"
    f.write_bytes(b"abc\ndefghijklmnop\nq\n\nlast")
    blocks = list(lean._line_blocks(f))
    assert b"".join(blocks) == f.read_bytes()
    assert all(b.endswith(b"\n") for b in blocks[:-1])
    monkeypatch.setattr(lean, "LONGEST_LINE", 12)
    f.write_bytes(b"abc\n" + b"x" * 30 + b"\n")
    with pytest.raises(lean._TooLong):
        list(lean._line_blocks(f))


def test_string_hashes_equal_for_equal_strings():
    arr = pa.array(["a", "ab", "ba", "a", "x" * 300, "x" * 299 + "y", "ab"])
    h = lean._string_hashes(arr.slice(0))
    assert h[0] == h[3] and h[1] == h[6]
    assert len({int(x) for x in h}) == 5
    assert lean._string_hashes(pa.array(["a", ""])) is None
    assert list(lean._string_hashes(arr.slice(1, 2))) == list(h[1:3])   # an offset slice


def test_memory_bounded_by_a_fraction_of_the_file(tmp_path, monkeypatch):
    """What Python and numpy hold (tracemalloc) stays under the file's size; pyarrow
    keeps nothing once done (each block's table is freed before the next)."""
    monkeypatch.setattr(lean, "BLOCK_BYTES", 1 << 16)
    run = tmp_path / "run.txt"
    run.write_text("".join(run_lines(queries=100, docs=500)))
    size = run.stat().st_size
    lean.trec_run_warnings(run)                 # imports done before measuring
    before = pa.total_allocated_bytes()
    peak, warnings = python_peak(lambda: lean.trec_run_warnings(run), warm=False)
    assert warnings == []
    assert pa.total_allocated_bytes() - before < size // 20       # nothing kept
    # an 8-byte key per line (~40 bytes), twice while the blocks' keys are joined
    assert peak < size * 0.75, (peak, size)


def test_the_child_uses_the_block_path(tmp_path):
    run = tmp_path / "run.txt"
    run.write_bytes(VARIANTS["two tags"])
    v = isolate.validate("trec", str(run), None, isolate.Limits(), name="run.txt")
    assert not v.problems and not v.crash and not v.limit
    assert v.warnings == [f"{run}: run has 2 different run tags: bench, other"]
    run.write_bytes(VARIANTS["duplicate far apart"])
    v = isolate.validate("trec", str(run), None, isolate.Limits(), name="run.txt")
    assert v.problems and "duplicate document" in v.problems[0]
    assert v.problems == TREC_problems(run)


def TREC_problems(run):
    try:
        TREC.validate(str(run))
    except InvalidInput as e:
        return e.lines()
    return []


def test_child_reports_its_own_peak_not_the_parents(tmp_path):
    """ru_maxrss survives execve: a child started by a large server reported the
    server's size. The child reports its own high-water mark (VmHWM)."""
    held = bytearray(400 * 2 ** 20)
    held[::4096] = b"\1" * len(held[::4096])          # resident, not only reserved
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 0.5 t\n")
    v = isolate.validate("trec", str(run), None, isolate.Limits(), name="run.txt")
    assert not v.problems and not v.crash
    assert 0 < v.max_rss_kb < 300 * 1024
    del held
