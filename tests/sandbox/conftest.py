"""A workspace for the sandbox's own tests, and a helper that runs a Python
program in it the way code runs are run (``Workspace.execute``). Skipped, with
the reason, where bubblewrap cannot create namespaces, unless
SHAREVAL_REQUIRE_SANDBOX is set: then they fail."""
from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path

import pytest

from shareval.sandbox import bwrap, cgroup
from shareval.sandbox.bundle import Manifest
from shareval.sandbox.run import Limits
from shareval.sandbox.workspace import Workspace

USER = bwrap.sandbox_user("pool")
WHY = bwrap.probe(USER)
if WHY and os.environ.get("SHAREVAL_REQUIRE_SANDBOX"):
    pytest.fail(f"SHAREVAL_REQUIRE_SANDBOX is set: {WHY}", pytrace=False)
needs_sandbox = pytest.mark.skipif(bool(WHY), reason=WHY or "sandbox available")
HAS_CGROUP = cgroup.parents() is not None
NO_CGROUP_WHY = ("no memory cgroup can be created here (cgroup v1 as root, or a delegated "
                 "v2 subtree with memory enabled, is needed)")


@pytest.fixture
def workspace():
    """A workspace the pool uids can pass through (pytest's own tmp folder is 0700)."""
    root = Path(f"/tmp/shareval-sandbox-test-{os.getpid()}-{secrets.token_hex(4)}")
    root.mkdir(mode=0o711)
    os.chmod(root, 0o711)
    yield Workspace(root, USER)
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def sandboxed(workspace, tmp_path):
    """Run ``program`` (Python source) as a bundle's ``main.py`` with ``limits``;
    returns (Report, the JSON the program printed last, or None). The program
    writes ``done.txt`` to its output when it gets to its end."""
    def run(program: str, limits: dict | None = None, inputs: dict | None = None):
        program += "\nimport sys as _s\nopen(_s.argv[2] + '/done.txt', 'w').write('done')\n"
        code = workspace.prepare_code({"main.py": program.encode()})
        try:
            inp = tmp_path / f"input-{secrets.token_hex(3)}"
            inp.mkdir()
            for name, text in (inputs or {}).items():
                (inp / name).write_text(text)
            staged = workspace.stage(inp, secrets.token_hex(8))
            manifest = Manifest(["python", "main.py", "{input}", "{output}"])
            rep = workspace.execute(code, manifest, staged,
                                    Limits.from_dict({"wall_seconds": 60, **(limits or {})}))
            lines = [x for x in rep.result.stdout.splitlines() if x.startswith("{")]
            return rep, json.loads(lines[-1]) if lines else None
        finally:
            Workspace.remove(code.parent)
    return run
