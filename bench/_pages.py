"""The start shared by the in-process page benchmarks (kbp_pages.py, workbench.py):
REPS and --data from the command line, a temporary home, then Django set up on it
(SQLite, migrated, any host) once the caller knows its data is there."""
from __future__ import annotations

import argparse
import os
import tempfile


def arguments(doc: str, prefix: str, reps: int = 200):
    """(args, data folder or None); the home is a new temporary folder."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("reps", nargs="?", type=int, default=reps)
    ap.add_argument("--data", default=None)
    args = ap.parse_args()
    os.environ["SHAREVAL_HOME"] = tempfile.mkdtemp(prefix=prefix)
    os.environ.setdefault("SHAREVAL_LOG", "WARNING")
    from shareval.demo import find_data
    return args, find_data(args.data)


def start_django() -> str:
    """Set Django up on the temporary home and migrate; the home's path."""
    import shareval.platform as platform
    platform.setup()
    from django.conf import settings
    from django.core.management import call_command
    call_command("migrate", verbosity=0)
    settings.ALLOWED_HOSTS = ["*"]
    return os.environ["SHAREVAL_HOME"]


def session_for(user) -> str:
    """A logged-in session cookie for ``user``, as the login page would make."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore
    s = SessionStore()
    s[SESSION_KEY], s[HASH_SESSION_KEY] = str(user.pk), user.get_session_auth_hash()
    s[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    s.save()
    return s.session_key
