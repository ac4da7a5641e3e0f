"""The digest a dataset's reference is known by (a file, or a folder's files in
order): scores are kept per digest, so a changed reference scores anew."""
from __future__ import annotations

import hashlib
from pathlib import Path


def tree_digest(path: Path) -> str:
    h = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for f in files:
        h.update(str(f.relative_to(path) if f != path else f.name).encode() + b"\0")
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()
