"""The per-run cgroups' file protocol (sandbox/cgroup.py) on a stand-in
hierarchy: which files are written and read for cgroup v1 and v2. On a real
host the kernel's own files answer; tests/sandbox/test_filesystem.py runs the
v1 path for real where the worker may create cgroups."""
from __future__ import annotations

from pathlib import Path

import pytest

from shareval.sandbox import cgroup


def fake(tmp_path, monkeypatch, version: int):
    root = tmp_path / "cg"
    if version == 1:
        mem = root / "memory" / "job"
        pids = root / "pids"
        for d in (mem, pids):
            d.mkdir(parents=True)
        (mem / "memory.limit_in_bytes").write_text("9223372036854771712\n")
        monkeypatch.setattr(cgroup, "_mounts", lambda: {"memory": root / "memory",
                                                        "pids": root / "pids"})
        monkeypatch.setattr(cgroup, "_own_paths", lambda: {"memory": "/job", "pids": "/"})
        return mem, pids
    base = root / "unified" / "svc"
    base.mkdir(parents=True)
    (base / "cgroup.subtree_control").write_text("cpu memory pids\n")
    monkeypatch.setattr(cgroup, "_mounts", lambda: {"": root / "unified"})
    monkeypatch.setattr(cgroup, "_own_paths", lambda: {"": "/svc"})
    return base, base


class _Kernel:
    """Creating a folder in a cgroup file system makes its control files."""

    def __init__(self, monkeypatch, files: list[str]):
        real = Path.mkdir

        def mkdir(p, *a, **kw):
            real(p, *a, **kw)
            for f in files:
                (p / f).write_text("")
        monkeypatch.setattr(Path, "mkdir", mkdir)


def test_v1_writes_the_memory_limit_without_swap_and_a_pids_limit(tmp_path, monkeypatch):
    mem, pids = fake(tmp_path, monkeypatch, 1)
    _Kernel(monkeypatch, ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"])
    monkeypatch.delenv("SHAREVAL_CODERUN_CGROUP", raising=False)
    cg = cgroup.create(256 << 20, 192)
    assert cg is not None and not cg.v2
    assert cg.memory.parent == mem and cg.pids.parent == pids
    assert (cg.memory / "memory.limit_in_bytes").read_text() == str(256 << 20)
    assert (cg.memory / "memory.memsw.limit_in_bytes").read_text() == str(256 << 20)
    assert (cg.pids / "pids.max").read_text() == "192"
    assert cg.procs_files() == sorted([str(cg.memory / "cgroup.procs"),
                                       str(cg.pids / "cgroup.procs")])
    (cg.memory / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\n"
                                                  "oom_kill 2\n")
    (cg.memory / "memory.stat").write_text("cache 900\nrss 100\nshmem 20\nmapped_file 3\n")
    assert cg.oom_kills() == 2 and cg.held_bytes() == 120


def test_v2_uses_one_folder_for_memory_and_pids(tmp_path, monkeypatch):
    base, _ = fake(tmp_path, monkeypatch, 2)
    _Kernel(monkeypatch, ["memory.max", "memory.swap.max", "pids.max"])
    monkeypatch.delenv("SHAREVAL_CODERUN_CGROUP", raising=False)
    cg = cgroup.create(100 << 20, 64)
    assert cg is not None and cg.v2 and cg.memory == cg.pids and cg.memory.parent == base
    assert (cg.memory / "memory.max").read_text() == str(100 << 20)
    assert (cg.memory / "memory.swap.max").read_text() == "0"
    assert (cg.memory / "pids.max").read_text() == "64"
    assert cg.procs_files() == [str(cg.memory / "cgroup.procs")]
    (cg.memory / "memory.events").write_text("low 0\nhigh 0\nmax 5\noom 1\noom_kill 1\n")
    (cg.memory / "memory.stat").write_text("anon 300\nfile 5000\nshmem 40\n")
    assert cg.oom_kills() == 1 and cg.held_bytes() == 340


def test_v2_without_memory_in_the_subtree_gives_no_cgroup(tmp_path, monkeypatch):
    base, _ = fake(tmp_path, monkeypatch, 2)
    (base / "cgroup.subtree_control").write_text("cpu pids\n")
    assert cgroup.parents() is None and cgroup.create(1 << 20, 8) is None


def test_off_gives_no_cgroup(tmp_path, monkeypatch):
    fake(tmp_path, monkeypatch, 1)
    monkeypatch.setenv("SHAREVAL_CODERUN_CGROUP", "off")
    assert cgroup.parents() is None


def test_a_dead_workers_cgroups_are_swept_a_live_ones_kept(tmp_path, monkeypatch):
    mem, pids = fake(tmp_path, monkeypatch, 1)
    monkeypatch.delenv("SHAREVAL_CODERUN_CGROUP", raising=False)
    dead = mem / f"{cgroup.PREFIX}999999999-abc"
    alive = mem / f"{cgroup.PREFIX}1-abc"            # pid 1 is always alive
    for d in (dead, alive):
        d.mkdir()
    cgroup._sweep(cgroup.parents())
    assert not dead.exists() and alive.exists()


@pytest.mark.parametrize("text", ["", "rss x\n"])
def test_unreadable_counts_are_zero(tmp_path, text):
    (tmp_path / "memory.stat").write_text(text)
    cg = cgroup.RunCgroup(tmp_path, None, False)
    assert cg.held_bytes() == 0 and cg.oom_kills() == 0 and cg.pids_refused() == 0
