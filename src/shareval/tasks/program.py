"""``program``: a task scored by the organizers' own program, run in the sandbox.

For a task shareval does not know. The organizers ship a scorer folder with
the same manifest as a code submission (``shareval-system.yaml``), whose
command names ``{reference}``, ``{submission}`` and ``{output}``::

    command: python score.py {reference} {submission} {output}

It runs in the bubblewrap sandbox (``shareval.sandbox``: no network, nothing
of the server visible) with the reference and the submission mounted
read-only, and writes ``{output}/result.json``::

    {"metrics": {"f1": 0.71, ...},            # required: name -> number
     "breakdowns": {"per_document": {...}},   # optional, as shareval's own scorers
     "counts": {...}, "conventions": {...}, "warnings": [...]}

which becomes the result like a built-in scorer's. Validation accepts any
readable, non-empty file (the program is the judge of its content); a
program that rejects a submission exits with status 2 and prints the
problems on stderr, one per line.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from ..formats.errors import InvalidInput, Problem
from . import register
from .base import Option, Result, Task

LIMITS = {"wall_seconds": 1800, "cpu_seconds": 1800, "memory_mb": 8192, "processes": 64,
          "output_mb": 256}


def workspace_root() -> Path:
    """Where scorer runs live: SHAREVAL_CODERUN_DIR (the server sets it), else a
    0711 folder in the system's temporary folder."""
    root = os.environ.get("SHAREVAL_CODERUN_DIR")
    if root:
        return Path(root)
    p = Path(tempfile.gettempdir()) / f"shareval-coderuns-{os.getuid()}"
    if not p.exists():
        p.mkdir()
        os.chmod(p, 0o711)               # not left to the umask
    return p


@register
class ProgramTask(Task):
    name = "program"
    description = "scored by the organizers' own program, run in the sandbox"
    version = "1"
    primary_metric = ""
    options = (Option("scorer", str, None, "the scorer folder (with shareval-system.yaml)"),)
    conventions = {"scorer": "the organizers' program (see its documentation)"}

    def load_reference(self, path):
        p = Path(path)
        if not p.exists():
            raise InvalidInput([Problem(str(p), None, "reference", "not found")])
        return p

    def load_submission(self, path, reference=None):
        p = Path(path)
        try:
            if p.stat().st_size == 0:
                raise InvalidInput([Problem(str(p), None, "file", "is empty")])
        except OSError as e:
            raise InvalidInput([Problem(str(p), None, "file", f"cannot be read ({e})")]) \
                from None
        return p

    def _score(self, reference, submission, scorer=None) -> Result:
        from ..formats.errors import Problems
        from ..sandbox import bwrap
        from ..sandbox.bundle import read_manifest
        from ..sandbox.run import Limits
        from ..sandbox.workspace import Workspace
        if not scorer:
            raise InvalidInput([Problem("<task options>", None, "scorer",
                                        "a program task needs its scorer folder")])
        folder = Path(scorer)
        files = {p.relative_to(folder).as_posix(): p.read_bytes()
                 for p in folder.rglob("*") if p.is_file() and not p.is_symlink()}
        problems = Problems()
        manifest = read_manifest(files, problems)
        if manifest is None:
            raise InvalidInput(problems.items)
        user = bwrap.sandbox_user(os.environ.get("SHAREVAL_CODERUN_USER", "pool"))
        why = bwrap.probe(user)
        if why:
            raise RuntimeError(why)
        ws = Workspace(workspace_root(), user)
        code = ws.prepare_code(files)
        try:
            ref = ws.stage(Path(reference), "scorer-ref-" + _digest(Path(reference)))
            # the submission is copied into this run's folder: never its own folder
            # (the server's uploads) mounted
            sub_dir = code.parent / "submission"
            sub_dir.mkdir()
            os.chmod(sub_dir, 0o755)
            name = Path(submission).name
            shutil.copyfile(submission, sub_dir / name)
            os.chmod(sub_dir / name, 0o644)
            manifest.command = [a.replace("{reference}", "/reference")
                                .replace("{submission}", "/submission/" + name)
                                for a in manifest.command]
            extra = [bwrap.Mount(ref, "/reference"), bwrap.Mount(sub_dir, "/submission")]
            limits = Limits.from_dict({**LIMITS, **manifest.limits})
            rep = ws.execute(code, manifest, code, limits, extra=extra)
            r = rep.result
            out = code.parent / "output" / "result.json"
            if r.state == "failed" and r.exit_code == 2:
                lines = [x for x in r.stderr.splitlines() if x.strip()][:100]
                raise InvalidInput([Problem(Path(submission).name, None, "scorer", x)
                                    for x in lines] or
                                   [Problem(Path(submission).name, None, "scorer", "rejected")])
            if r.state not in ("ok", "failed") or not out.is_file() or out.is_symlink():
                raise RuntimeError(f"the scoring program {r.message}; stderr:\n"
                                   f"{r.stderr[-4000:]}")
            doc = json.loads(out.read_text())
        finally:
            Workspace.remove(code.parent)
        metrics = doc.get("metrics") if isinstance(doc, dict) else None
        if not isinstance(metrics, dict) or not all(
                isinstance(v, (int, float)) or v is None for v in metrics.values()):
            raise RuntimeError("the scoring program's result.json has no metrics mapping "
                               "of numbers")
        res = self.new_result({str(k): v for k, v in metrics.items()},
                              breakdowns=doc.get("breakdowns") or {},
                              counts=doc.get("counts") or {},
                              warnings=[str(w) for w in doc.get("warnings") or []])
        res.conventions.update(doc.get("conventions") or {})
        return res


def _digest(p: Path) -> str:
    import hashlib
    st = p.stat()
    return hashlib.sha256(f"{p.resolve()}:{st.st_size}:{st.st_mtime_ns}".encode()) \
        .hexdigest()[:24]
