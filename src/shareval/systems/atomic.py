"""Writing a cache file so that a concurrent reader never sees half of it."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, save) -> bool:
    """``save(file)`` into a temporary file beside ``path``, flushed to disk and
    renamed over it; the folder is made the user's alone (0700). False when the
    folder cannot be written: a cache then only costs the next run its rebuild."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            save(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        return True
    except OSError:
        return False
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
