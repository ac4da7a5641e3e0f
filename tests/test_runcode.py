"""`shareval run-code`: a bundle run locally in the server's sandbox, with its
checks and limits. Exit 0 when the run is ok, 1 for any other state, 2 when
the bundle or its requirements are refused (problems as file:line: message)."""
from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path

import pytest

from tests.sandbox.conftest import needs_sandbox

pytestmark = needs_sandbox

MAIN = """
import sys, pathlib
items = pathlib.Path(sys.argv[1], "items.txt").read_text().split()
print("read", len(items), "items")
pathlib.Path(sys.argv[2], "labels.tsv").write_text(
    "item\\tlabel\\n" + "".join(f"{i}\\tpos\\n" for i in items))
"""


@pytest.fixture
def here(tmp_path, monkeypatch):
    ws = Path(f"/tmp/shareval-runcode-test-{os.getpid()}-{secrets.token_hex(4)}")
    ws.mkdir(mode=0o711)
    os.chmod(ws, 0o711)
    monkeypatch.setenv("SHAREVAL_CODERUN_DIR", str(ws))
    (tmp_path / "system").mkdir()
    (tmp_path / "system" / "shareval-system.yaml").write_text(
        "command: python main.py {input} {output}\n")
    (tmp_path / "system" / "main.py").write_text(MAIN)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "items.txt").write_text("i01\ni02\ni03\n")
    (tmp_path / "gold.tsv").write_text("item\tlabel\ni01\tpos\ni02\tneg\ni03\tpos\n")
    yield tmp_path
    shutil.rmtree(ws, ignore_errors=True)


def test_an_ok_run_exits_0_and_copies_the_output(cli, here):
    code, out, err = cli("run-code", here / "system", "--input", here / "in",
                         "--output", here / "out")
    assert code == 0, (out, err)
    assert out.startswith("state: ok (finished)")
    assert "read 3 items" in out and f"output: {here / 'out' / 'labels.tsv'}" in out
    assert (here / "out" / "labels.tsv").read_text().count("\tpos\n") == 3


def test_the_output_is_validated_and_scored_as_the_test_run_does(cli, here):
    code, out, err = cli("run-code", here / "system", "--input", here / "in", "--output",
                         here / "out", "--task", "classification", "--reference",
                         here / "gold.tsv")
    assert code == 0, (out, err)
    assert "state: ok (finished; output valid)" in out and "accuracy 0.6667" in out


def test_an_invalid_output_exits_1(cli, here):
    (here / "system" / "main.py").write_text(
        "import sys\nopen(sys.argv[2] + '/labels.tsv', 'w').write('no header here\\n')\n")
    code, out, err = cli("run-code", here / "system", "--input", here / "in", "--output",
                         here / "out", "--task", "classification", "--reference",
                         here / "gold.tsv")
    assert code == 1
    assert out.startswith("state: invalid (finished; the output did not pass validation:")


def test_a_limit_reached_exits_1_and_says_which(cli, here):
    (here / "system" / "main.py").write_text("while True: pass\n")
    code, out, err = cli("run-code", here / "system", "--input", here / "in", "--output",
                         here / "out", "--limits", "wall_seconds=2,cpu_seconds=60")
    assert code == 1
    assert out.startswith("state: time (stopped: ran longer than the wall-time limit of 2 s)")


def test_a_failing_program_exits_1_with_its_log_tail(cli, here):
    (here / "system" / "main.py").write_text("raise SystemExit('no model file')\n")
    code, out, err = cli("run-code", here / "system", "--input", here / "in", "--output",
                         here / "out")
    assert code == 1
    assert out.startswith("state: failed (exited with status 1)") and "no model file" in out


def test_refused_requirements_exit_2_naming_each_line(cli, here):
    (here / "system" / "requirements.txt").write_text(
        "six\nevil @ http://127.0.0.1:9/e.tar.gz\n-r http://127.0.0.1:9/more.txt\n")
    code, out, err = cli("run-code", here / "system", "--input", here / "in", "--output",
                         here / "out")
    assert code == 2 and out == ""
    assert err.splitlines() == [
        "requirements.txt:2: requirement: URLs and paths are not allowed: name a package of "
        "the index, e.g. 'numpy>=1.26'",
        "requirements.txt:3: requirement: pip options are not allowed (-r): only requirements "
        "such as 'numpy>=1.26'",
        "2 problem(s) found; the bundle was refused, nothing ran."]


def test_a_bundle_without_manifest_or_with_a_bad_limit_exits_2(cli, here):
    (here / "system" / "shareval-system.yaml").unlink()
    code, out, err = cli("run-code", here / "system", "--input", here / "in", "--output",
                         here / "out")
    assert code == 2 and "no shareval-system.yaml at the top of the folder" in err
    code, out, err = cli("run-code", here / "system", "--input", here / "in", "--output",
                         here / "out", "--limits", "memory=12")
    assert code == 2 and "--limits: 'memory=12': expected NAME=NUMBER" in err
