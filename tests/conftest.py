"""Shared fixtures: the real data folder (skipped with a reason when absent) and the CLI."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from shareval.cli import main

ROOT = Path(__file__).resolve().parents[1]
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


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (SHARED_DATA / "rcc" / "train" / "data_set_citations.json").is_file():
        pytest.skip(f"real data not found at {SHARED_DATA} (set SHAREVAL_SHARED_DATA)")
    return SHARED_DATA


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
