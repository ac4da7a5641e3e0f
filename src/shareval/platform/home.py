"""The server's data folder is readable by the server's user only.

It holds the SQLite database and its WAL, the hidden references, the uploads,
the secret key and mailed links. Every server process (``shareval server``
commands, the WSGI application, Celery workers) sets the umask 077 before it
creates anything, so new files are 0600 and new folders 0700, and each start
locks the folder itself and what lies directly in it, so a data folder made by
an older version is private too.

One exception: the code-run folder (``SHAREVAL_CODERUN_DIR``, by default
``HOME/coderuns``) must be reachable by the sandbox's unprivileged users. When
it lies inside the data folder, the data folder is 0711 (they may pass
through, not list it) and every other entry in it stays 0700 or 0600; when it
lies elsewhere, the data folder is 0700.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

UMASK = 0o077


def private_umask() -> None:
    """New files 0600 and folders 0700 in this process and its children."""
    os.umask(UMASK)


def lock(home: Path, coderun_dir: Path) -> None:
    """``home`` 0700 (0711 if ``coderun_dir`` lies inside it), each entry directly in
    it 0700 (folders) or 0600 (files), the code-run folder's top excepted: the
    workspace makes that 0711 itself. Links are left alone."""
    home, coderun_dir = Path(home).resolve(), Path(coderun_dir).resolve()
    through = coderun_dir.is_relative_to(home) and coderun_dir != home
    os.chmod(home, 0o711 if through else 0o700)
    for entry in os.scandir(home):
        path = Path(entry.path)
        if entry.is_symlink() or (through and coderun_dir.is_relative_to(path)):
            continue
        mode = os.lstat(path).st_mode
        if stat.S_ISDIR(mode):
            os.chmod(path, 0o700)
        elif stat.S_ISREG(mode):
            os.chmod(path, 0o600)
