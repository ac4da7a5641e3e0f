"""The ``program`` task (docs/code-submissions.md, "Organizers' own scoring programs"):
the organizers' scorer runs in the sandbox with the reference at ``/reference`` and
a copy of the submission under ``/submission/``; its ``result.json`` becomes the
result; exit status 2 is a rejection whose stderr lines are the problems; the
upload is only checked to be readable and non-empty."""
from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from shareval.formats.errors import InvalidInput
from shareval.sandbox import bwrap
from shareval.tasks import get
from shareval.tasks import program

_why = bwrap.probe(bwrap.sandbox_user("pool"))
needs_sandbox = pytest.mark.skipif(bool(_why), reason=_why or "sandbox available")

# counts the reference's lines equal to one of the submission's; writes what it saw
SCORER = r"""
import json, sys, pathlib
ref, sub, out = sys.argv[1:4]
gold = pathlib.Path(ref).read_text().split()
mine = pathlib.Path(sub).read_text().split()
hits = sum(x in gold for x in mine)
try:
    pathlib.Path(ref).write_text("changed")
    ref_writable = True
except OSError:
    ref_writable = False
pathlib.Path(out, "result.json").write_text(json.dumps({
    "metrics": {"hits": hits, "precision": hits / len(mine), "undefined": None, 7: 1},
    "breakdowns": {"per_item": {x: {"hit": x in gold} for x in mine}},
    "counts": {"items": len(mine)},
    "conventions": {"what": "exact lines", "argv": sys.argv[1:4],
                    "ref_writable": ref_writable},
    "warnings": ["first", 2]}))
"""


@pytest.fixture
def coderuns(monkeypatch):
    """A workspace root the sandbox users can reach (pytest's tmp_path is 0700)."""
    root = Path(tempfile.mkdtemp(prefix="shareval-program-test-"))
    os.chmod(root, 0o711)
    monkeypatch.setenv("SHAREVAL_CODERUN_DIR", str(root))
    yield root
    shutil.rmtree(root, ignore_errors=True)


# the manifest's limits replace the defaults (LIMITS); a CPU limit below the defaults also
# lets the tests run under a parent's lower RLIMIT_CPU (mutmut's per-mutant limit)
MANIFEST = "command: python score.py {reference} {submission} {output}\nlimits: {cpu_seconds: 60}\n"


def scorer(tmp_path, body=SCORER, manifest=MANIFEST):
    d = tmp_path / "scorer"
    d.mkdir(exist_ok=True)
    (d / "shareval-system.yaml").write_text(manifest)
    (d / "score.py").write_text(body)
    return d


def files(tmp_path, gold="a\nb\nc\n", mine="a\nx\nc\nb\n"):
    ref, sub = tmp_path / "gold.txt", tmp_path / "my-run.txt"
    ref.write_text(gold)
    sub.write_text(mine)
    return ref, sub


def test_reference_must_exist_and_is_passed_on_as_a_path(tmp_path):
    task = get("program")
    with pytest.raises(InvalidInput) as e:
        task.load_reference(tmp_path / "nowhere")
    assert [str(p) for p in e.value.problems] == [f"{tmp_path / 'nowhere'}: reference: not found"]
    (tmp_path / "ref").mkdir()
    assert task.load_reference(str(tmp_path / "ref")) == tmp_path / "ref"


def test_a_submission_is_only_checked_to_be_readable_and_non_empty(tmp_path):
    task = get("program")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(InvalidInput) as e:
        task.validate(empty)
    assert [str(p) for p in e.value.problems] == [f"{empty}: file: is empty"]
    with pytest.raises(InvalidInput) as e:
        task.validate(tmp_path / "missing.txt")
    (problem,) = e.value.problems
    assert str(problem).startswith(f"{tmp_path / 'missing.txt'}: file: cannot be read (")
    assert "No such file" in str(problem)
    one = tmp_path / "one.txt"
    one.write_bytes(b"\xff")                  # any content: the program judges it
    assert task.validate(one) == []
    assert task.load_submission(str(one)) == one


def test_a_program_task_needs_its_scorer_folder_and_manifest(tmp_path):
    ref, sub = files(tmp_path)
    with pytest.raises(InvalidInput) as e:
        get("program").score(ref, sub)
    assert [str(p) for p in e.value.problems] == [
        "<task options>: scorer: a program task needs its scorer folder"]
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "score.py").write_text("print(1)\n")
    with pytest.raises(InvalidInput) as e:
        get("program").score(ref, sub, scorer=str(bare))
    assert any("shareval-system.yaml" in str(p) for p in e.value.problems)


def test_workspace_root_is_the_configured_folder_or_a_private_0711_one(monkeypatch, tmp_path):
    monkeypatch.setenv("SHAREVAL_CODERUN_DIR", str(tmp_path / "ws"))
    assert program.workspace_root() == tmp_path / "ws"
    monkeypatch.delenv("SHAREVAL_CODERUN_DIR")
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    root = program.workspace_root()
    assert root == tmp_path / f"shareval-coderuns-{os.getuid()}"
    assert stat.S_IMODE(root.stat().st_mode) == 0o711
    assert program.workspace_root() == root            # a second call reuses it


def test_reference_digest_follows_the_file(tmp_path):
    p = tmp_path / "gold.txt"
    p.write_text("a\n")
    d = program._digest(p)
    assert len(d) == 24 and int(d, 16) >= 0
    assert program._digest(p) == d
    p.write_text("a\nb\n")
    assert program._digest(p) != d
    q = tmp_path / "other.txt"
    q.write_text("a\nb\n")
    os.utime(q, ns=(p.stat().st_atime_ns, p.stat().st_mtime_ns))
    assert program._digest(q) != program._digest(p)   # the path is part of it


def test_default_limits_are_the_documented_ones():
    assert program.LIMITS == {"wall_seconds": 1800, "cpu_seconds": 1800, "memory_mb": 8192,
                              "processes": 64, "output_mb": 256}


@needs_sandbox
def test_the_program_result_becomes_the_result(tmp_path, coderuns):
    ref, sub = files(tmp_path)
    r = get("program").score(ref, sub, scorer=str(scorer(tmp_path)))
    # the submission has a, x, c, b; the reference a, b, c: 3 hits of 4 lines
    assert r.metrics == {"hits": 3, "precision": 0.75, "undefined": None, "7": 1}
    assert r.breakdowns == {"per_item": {"a": {"hit": True}, "x": {"hit": False},
                                         "c": {"hit": True}, "b": {"hit": True}}}
    assert r.counts == {"items": 4}
    assert r.warnings == ["first", "2"]
    assert r.task == "program"
    # the task's own convention stays beside the program's
    assert r.conventions["scorer"] == "the organizers' program (see its documentation)"
    assert r.conventions["what"] == "exact lines"
    # placeholders: the reference at /reference, the submission by its own name
    assert r.conventions["argv"] == ["/reference", "/submission/my-run.txt", "/output"]
    # mounted read-only: the program could not change the organizers' reference
    assert r.conventions["ref_writable"] is False
    assert ref.read_text() == "a\nb\nc\n"
    # the run's folder is removed afterwards
    assert list((coderuns / "runs").iterdir()) == []


@needs_sandbox
def test_only_the_metrics_are_required(tmp_path, coderuns):
    body = ("import json, sys, pathlib\n"
            "pathlib.Path(sys.argv[3], 'result.json').write_text(json.dumps("
            "{'metrics': {'f1': 0.5}, 'breakdowns': None, 'warnings': []}))\n")
    ref, sub = files(tmp_path)
    r = get("program").score(ref, sub, scorer=str(scorer(tmp_path, body)))
    assert (r.metrics, r.breakdowns, r.counts, r.warnings) == ({"f1": 0.5}, {}, {}, [])
    assert r.conventions == {"scorer": "the organizers' program (see its documentation)"}


@needs_sandbox
@pytest.mark.parametrize("stderr,problems", [
    ("bad line 1\\n\\n  \\nbad line 2\\n", ["bad line 1", "bad line 2"]),
    ("", ["rejected"]),
])
def test_exit_status_2_is_a_rejection_with_one_problem_per_stderr_line(tmp_path, coderuns,
                                                                       stderr, problems):
    body = f"import sys\nsys.stderr.write('{stderr}')\nsys.exit(2)\n"
    ref, sub = files(tmp_path)
    with pytest.raises(InvalidInput) as e:
        get("program").score(ref, sub, scorer=str(scorer(tmp_path, body)))
    assert [str(p) for p in e.value.problems] == [f"my-run.txt: scorer: {x}" for x in problems]
    assert list((coderuns / "runs").iterdir()) == []


@needs_sandbox
def test_a_rejection_lists_at_most_100_problems(tmp_path, coderuns):
    body = "import sys\nfor i in range(150):\n    print(f'p{i}', file=sys.stderr)\nsys.exit(2)\n"
    ref, sub = files(tmp_path)
    with pytest.raises(InvalidInput) as e:
        get("program").score(ref, sub, scorer=str(scorer(tmp_path, body)))
    assert [p.message for p in e.value.problems] == [f"p{i}" for i in range(100)]


@needs_sandbox
@pytest.mark.parametrize("body,message", [
    ("import sys\nprint('boom', file=sys.stderr)\nsys.exit(1)\n", "boom"),   # no result.json
    ("import json, sys, pathlib\npathlib.Path(sys.argv[3], 'result.json').write_text("
     "json.dumps({'metrics': {'f1': 'high'}}))\n", "no metrics mapping of numbers"),
    ("import json, sys, pathlib\npathlib.Path(sys.argv[3], 'result.json').write_text("
     "json.dumps([1, 2]))\n", "no metrics mapping of numbers"),
    ("import json, sys, pathlib\npathlib.Path(sys.argv[3], 'result.json').write_text("
     "json.dumps({'counts': {}}))\n", "no metrics mapping of numbers"),
])
def test_a_failed_program_or_a_result_without_numeric_metrics_is_an_error(tmp_path, coderuns,
                                                                          body, message):
    ref, sub = files(tmp_path)
    with pytest.raises(RuntimeError) as e:
        get("program").score(ref, sub, scorer=str(scorer(tmp_path, body)))
    assert message in str(e.value)
    assert list((coderuns / "runs").iterdir()) == []


@needs_sandbox
def test_a_program_exiting_1_after_writing_its_result_still_scores(tmp_path, coderuns):
    """State "failed" with a result.json: the result is read (only exit 2 rejects)."""
    body = ("import json, sys, pathlib\n"
            "pathlib.Path(sys.argv[3], 'result.json').write_text(json.dumps("
            "{'metrics': {'f1': 0.25}}))\nsys.exit(1)\n")
    ref, sub = files(tmp_path)
    r = get("program").score(ref, sub, scorer=str(scorer(tmp_path, body)))
    assert r.metrics == {"f1": 0.25}


@needs_sandbox
def test_the_manifest_limits_replace_the_defaults(tmp_path, coderuns):
    body = "while True:\n    pass\n"
    ref, sub = files(tmp_path)
    manifest = MANIFEST.replace("cpu_seconds: 60", "cpu_seconds: 1")
    with pytest.raises(RuntimeError) as e:
        get("program").score(ref, sub, scorer=str(scorer(tmp_path, body, manifest)))
    assert str(e.value).startswith("the scoring program stopped: used more than the CPU-time "
                                   "limit of 1 s")


@needs_sandbox
def test_the_program_is_not_root_and_sees_no_links_of_the_scorer_folder(tmp_path, coderuns):
    body = ("import json, os, sys, pathlib\n"
            "pathlib.Path(sys.argv[3], 'result.json').write_text(json.dumps({'metrics': "
            "{'uid': os.getuid(), 'link': int(pathlib.Path('host').exists())}}))\n")
    d = scorer(tmp_path, body)
    (d / "host").symlink_to("/etc/hostname")          # a link in the scorer folder: not copied
    ref, sub = files(tmp_path)
    r = get("program").score(ref, sub, scorer=str(d))
    assert r.metrics["link"] == 0
    assert r.metrics["uid"] != 0                       # never root inside the sandbox


def test_without_a_working_sandbox_nothing_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(bwrap, "probe", lambda user: "bubblewrap cannot create its namespaces")
    ref, sub = files(tmp_path)
    with pytest.raises(RuntimeError, match="^bubblewrap cannot create its namespaces$"):
        get("program").score(ref, sub, scorer=str(scorer(tmp_path)))
