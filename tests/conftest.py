"""Shared fixtures: the real data folder (skipped with a reason when absent) and the CLI."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from shareval.cli import main

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("SHAREVAL_SHARED_DATA", ROOT.parent / "shared" / "data"))


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
