"""What code submissions hand to the limited child process that validates uploads
(``submissions/isolate.py``): unpacking a bundle and reading its manifest (at
upload, and into a run's folder before the run), and validating and scoring a
test run's output against the public sample. A bundle that unpacks to
gigabytes or an output of hundreds of megabytes then costs the child, never
the web process or the long-lived code worker.

Each job is ``function(job, limit) -> verdict fields``; it calls ``limit()``
once its imports are done. No Django here: the child imports this module.
"""
from __future__ import annotations

from pathlib import Path


def bundle_job(job: dict, limit) -> dict:
    """``job``: ``archive`` (the stored bundle), ``unpacked_mb``, and ``dest`` (a folder
    to write the files into, or None to only check them). Returns the problems, or
    the manifest as ``result``."""
    from shareval.formats.archive import Limits as ArchiveLimits
    from shareval.formats.errors import Problems, listing
    from shareval.platform.submissions.isolate import unpacked_too_large
    from shareval.sandbox.bundle import read_manifest, unpack, write_tree
    limit()
    path, most = job["archive"], job["unpacked_mb"] * 2 ** 20
    big = unpacked_too_large(path, most)
    if big:
        return {"problems": [f"{path}: {big}"], "total": 1}
    problems = Problems()
    files = unpack(Path(path), problems, ArchiveLimits(max_bytes=most))
    manifest = read_manifest(files, problems) if not problems else None
    if problems or manifest is None:
        return {"problems": listing(problems.items, problems.total), "total": problems.total}
    if job.get("dest"):
        write_tree(files, Path(job["dest"]))
    return {"result": {"command": manifest.command, "requirements": manifest.requirements,
                       "limits": manifest.limits}}


def score_job(job: dict, limit) -> dict:
    """``job``: ``task`` (a registry name), ``submission`` (the output), ``reference``
    (or None: validated only) and ``options``. Returns the problems, or the score as
    ``result`` (``{"score": None}`` without a reference)."""
    from shareval import tasks
    from shareval.formats.errors import InvalidInput
    task = tasks.get(job["task"])
    limit()
    try:
        warnings = task.validate(job["submission"], job["reference"])
        score = task.score(job["reference"], job["submission"], **job["options"]).to_dict() \
            if job["reference"] else None
    except InvalidInput as e:
        return {"problems": e.lines(), "total": e.total}
    return {"warnings": [str(w) for w in warnings], "result": {"score": score}}
