"""The output limit counts what a run's output folder shows, not the disk
blocks it took: apparent sizes (a sparse file counts its holes) and entries
(files, folders, links: ``output_files``). The server never reads a sparse
file's holes: such a file is not collected (docs/code-submissions.md)."""
from __future__ import annotations

import os

import pytest

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


DEEP = """
import os, sys
os.chdir(sys.argv[2])
for _ in range(1200):
    os.mkdir("a"); os.chdir("a")
open("f", "w").write("x")
"""

LONG_PATHS = """
import os, sys
os.chdir(sys.argv[2])
for i in range(18):                     # past PATH_MAX (4096) below the output
    os.mkdir("d" * 250); os.chdir("d" * 250)
for i in range(30):
    open(f"big{i}", "wb").write(b"x" * (4 << 20))
for i in range(2000):
    open(f"e{i}", "w").close()
"""

UNLINKED = """
import os, sys, time
fds = []
for i in range(20):                     # 900 MB on disk that no listing shows
    fd = os.open(f"{sys.argv[2]}/d{i}", os.O_CREAT | os.O_WRONLY)
    os.unlink(f"{sys.argv[2]}/d{i}")
    for _ in range(45):
        os.write(fd, b"y" * (1 << 20))
    fds.append(fd)
time.sleep(4)
"""


@needs_sandbox
def test_folders_nested_too_deep_stop_the_run_and_its_folder_is_removed(sandboxed, workspace):
    rep, _ = sandboxed(DEEP, {"wall_seconds": 30})
    assert rep.result.state == "output", rep.result
    assert "nested more than 32 deep" in rep.result.message
    assert list((workspace.root / "runs").iterdir()) == []


@needs_sandbox
@pytest.mark.parametrize("program", [DEEP, FOLDERS.replace("time.sleep(2)", "")],
                         ids=["deep", "many"])
def test_a_run_that_ends_before_the_watchdog_looks_is_measured_at_its_end(
        sandboxed, workspace, monkeypatch, program):
    # a fast machine finishes these between two samples; here no sample is ever taken
    monkeypatch.setattr("shareval.sandbox.run.POLL", 3600)
    rep, _ = sandboxed(program, {"wall_seconds": 30})
    assert rep.result.exit_code == 0
    assert rep.result.state == "output", rep.result
    assert list((workspace.root / "runs").iterdir()) == []


@needs_sandbox
def test_paths_past_path_max_are_counted_and_stop_the_run(sandboxed, workspace):
    rep, _ = sandboxed(LONG_PATHS, {"output_mb": 5, "output_files": 100, "wall_seconds": 30})
    assert rep.result.state == "output", rep.result
    assert list((workspace.root / "runs").iterdir()) == []


@needs_sandbox
def test_files_removed_but_held_open_count_against_the_output_limit(sandboxed):
    rep, _ = sandboxed(UNLINKED, {"output_mb": 50, "wall_seconds": 30})
    assert rep.result.state == "output", rep.result


def test_the_tree_walk_and_removal_survive_any_depth_and_length(tmp_path):
    from shareval.sandbox import tree
    root = tmp_path / "out"
    root.mkdir()
    fd = os.open(root, os.O_RDONLY)
    for _ in range(1500):                            # by descriptors: no path is built
        os.mkdir("a" * 200, dir_fd=fd)
        nxt = os.open("a" * 200, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nxt
    os.close(fd)
    u = tree.usage(root)
    assert u.too_deep and u.entries == tree.MAX_DEPTH + 1
    tree.remove(root)
    assert not root.exists()
