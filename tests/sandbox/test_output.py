"""The output limit counts what a run's output folder shows, not the disk
blocks it took: apparent sizes (a sparse file counts its holes) and entries
(files, folders, links: ``output_files``). The server never reads a sparse
file's holes: such a file is not collected (docs/code-submissions.md)."""
from __future__ import annotations

import os

from shareval.sandbox.run import output_usage
from shareval.sandbox.workspace import collect

from .conftest import needs_sandbox

SPARSE = """
import os, sys, time
with open(sys.argv[2] + "/sparse", "wb") as f:
    f.truncate(80 << 20)           # 80 MB that take no disk block
time.sleep(2)
"""

FOLDERS = """
import os, sys, time
for i in range(20000):
    os.mkdir(f"{sys.argv[2]}/d{i}")
time.sleep(2)
"""

EMPTY_FILES = """
import sys, time
for i in range(20000):
    open(f"{sys.argv[2]}/f{i}", "w").close()
time.sleep(2)
"""


@needs_sandbox
def test_a_sparse_file_counts_its_apparent_size(sandboxed):
    rep, _ = sandboxed(SPARSE, {"output_mb": 1})
    assert rep.result.state == "output", rep.result
    assert "output limit of 1 MB" in rep.result.message


@needs_sandbox
def test_empty_folders_count_against_the_number_of_entries(sandboxed):
    rep, _ = sandboxed(FOLDERS, {"output_files": 1000, "output_mb": 1024})
    assert rep.result.state == "output", rep.result
    assert "1000 files and folders" in rep.result.message


@needs_sandbox
def test_empty_files_count_against_the_number_of_entries(sandboxed):
    rep, _ = sandboxed(EMPTY_FILES, {"output_files": 1000, "output_mb": 1024})
    assert rep.result.state == "output", rep.result


@needs_sandbox
def test_a_sparse_file_under_the_limit_is_not_collected(sandboxed):
    program = SPARSE.replace("time.sleep(2)", "open(sys.argv[2] + '/labels.tsv', 'w')"
                                              ".write('item\\tlabel\\n')")
    rep, _ = sandboxed(program, {"output_mb": 200})
    assert rep.result.state == "ok", rep.result
    assert "sparse: a sparse file (it has holes); ignored" in rep.output.notes
    assert rep.output.path.suffix == ".tgz"           # done.txt and labels.tsv, no sparse


def test_output_usage_counts_apparent_sizes_and_every_entry(tmp_path):
    (tmp_path / "sub").mkdir()
    with open(tmp_path / "sub" / "holes", "wb") as f:
        f.truncate(5_000_000)
    (tmp_path / "empty").touch()
    os.symlink("/etc/passwd", tmp_path / "link")
    size, entries = output_usage(tmp_path)
    assert entries == 4
    assert size >= 5_000_000 + len("/etc/passwd")
    assert output_usage(tmp_path, max_entries=2)[1] == 3     # stops past the cap


def test_collect_reads_no_hole(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    with open(out / "holes.tsv", "wb") as f:
        f.seek(1 << 30)
        f.write(b"x")                 # 1 GB apparent, one block
    got = collect(out, tmp_path / "submission")
    assert got.path is None
    assert got.notes == ["holes.tsv: a sparse file (it has holes); ignored"]
