"""Shared fixtures: the real data folder (skipped with a reason when absent) and the CLI."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]

from shareval.cli import main  # noqa: E402  (pyproject's pythonpath: this tree's src)

# The tests' child processes (an upload's validator, CLI runs) import the shareval the
# tests import: under mutmut that is the mutated copy, which mutmut puts first on
# sys.path but not in the environment (the validator imported the installed one).
_SRC = str(Path(__import__("shareval").__file__).resolve().parents[1])
if os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] != _SRC:
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [_SRC, *filter(None, [os.environ.get("PYTHONPATH")])])
SHARED_DATA = Path(os.environ.get("SHAREVAL_SHARED_DATA", ROOT.parent / "shared" / "data"))

# Mutation runs (bench/mutate.py sets SHAREVAL_HYPOTHESIS_PROFILE=mutation): every
# property test runs at most MUTATION_EXAMPLES examples, the same ones each run
# (derandomized, no example database), so that a mutant costs seconds, not half a
# minute. Deterministic tests are unchanged. A score measured so is a lower bound.
MUTATION_EXAMPLES = 30
MUTATION = os.environ.get("SHAREVAL_HYPOTHESIS_PROFILE") == "mutation"
settings.register_profile("mutation", max_examples=MUTATION_EXAMPLES, derandomize=True,
                          database=None, deadline=None)
if MUTATION:
    settings.load_profile("mutation")


def pytest_collection_modifyitems(items):
    """Under the mutation profile, cap the examples a test's own @settings asks for."""
    if not MUTATION:
        return
    for item in items:
        test = getattr(item, "obj", None)
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if own is not None and own.max_examples > MUTATION_EXAMPLES:
            test._hypothesis_internal_use_settings = settings(
                own, max_examples=MUTATION_EXAMPLES, derandomize=True, database=None)


@pytest.fixture(scope="session", autouse=True)
def own_data_folder():
    """A test process forked from one that had loaded the Django settings (mutmut
    forks each mutant's pytest from its fork server) works in data folders of its
    own, removed at the end of its session (shareval.platform.test_settings)."""
    from django.conf import settings as django_settings

    from shareval.platform import test_settings
    home = test_settings.own_home()
    yield
    if home is not None:
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(django_settings.CODERUN_DIR, ignore_errors=True)


@pytest.fixture(autouse=True)
def _umask_kept():
    """A test that runs a server command in this process gets the server's umask
    (077): the next test starts with the process's own again."""
    before = os.umask(0o022)
    os.umask(before)
    yield
    os.umask(before)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (SHARED_DATA / "rcc" / "train" / "data_set_citations.json").is_file():
        pytest.skip(f"real data not found at {SHARED_DATA} (set SHAREVAL_SHARED_DATA)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def demo_detection_model(shared_data, tmp_path_factory) -> Path:
    """The demo's SV-Ident detection model trained without the demo's documents, trained
    once per test session (about a minute) by the function `make demo` uses, for every
    demo built here."""
    from shareval.platform.demo import DETECTION_MODEL, held_out_detection_model
    path = tmp_path_factory.mktemp("demo-model") / DETECTION_MODEL
    held_out_detection_model(shared_data, path, log=lambda text: None)
    return path


@pytest.fixture
def cli(capsys):
    """Run the CLI in-process; returns (exit code, stdout, stderr)."""
    def run(*args):
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return code, out.out, out.err
    return run


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# Mutation runs: with SHAREVAL_MUTATION_FAILLOG set (bench/mutate.py sets it), every
# failing test phase is appended to that file as one JSON line with the mutant under
# test, the process and the error's last lines, so a kill can be traced to the test
# and the reason (mutmut sends its forked children's output to /dev/null).
FAILLOG = os.environ.get("SHAREVAL_MUTATION_FAILLOG")


def pytest_runtest_logreport(report):
    if not FAILLOG or not report.failed:
        return
    import json
    text = getattr(report, "longreprtext", "") or str(report.longrepr)
    line = {"mutant": os.environ.get("MUTANT_UNDER_TEST", ""), "test": report.nodeid,
            "when": report.when, "pid": os.getpid(), "error": text.splitlines()[-12:]}
    with open(FAILLOG, "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")
