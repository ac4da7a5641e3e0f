"""Settings for the test suite: a fresh data folder for every test process.

Always a new folder, never an inherited SHAREVAL_HOME: pytest-xdist workers
inherit the controller's environment, and two workers writing the same
hidden-reference paths would see each other's files. A process forked after
these settings were imported (mutmut's fork server imports them once and forks
every mutant's pytest from it) calls :func:`own_home` (tests/conftest.py does,
at the start of each session) for a folder of its own.
"""
import atexit
import os
import shutil
import tempfile
from pathlib import Path

os.environ["SHAREVAL_HOME"] = tempfile.mkdtemp(prefix="shareval-test-")
_OWNER = os.getpid()            # the process whose folder HOME is

# the code-run workspace must be reachable by the sandbox user when tests run as
# root (the data folder above is 0700)
_coderuns = tempfile.mkdtemp(prefix="shareval-test-coderuns-")
os.chmod(_coderuns, 0o711)
atexit.register(shutil.rmtree, _coderuns, True)
os.environ.setdefault("SHAREVAL_CODERUN_DIR", _coderuns)

from shareval.platform.settings import *  # noqa: E402,F401,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast test users only


def own_home() -> Path | None:
    """In a process forked after these settings were loaded: a new data folder
    (and code-run folder), with every setting that pointed into the inherited
    ones moved into the new ones; returns the new folder (None when this process
    made the current one). Two mutants run at once by mutmut each load a bundle
    named ``tiny``, and a shared folder let one replace the hidden reference the
    other was validating a baseline against (a false kill)."""
    global _OWNER
    if os.getpid() == _OWNER:
        return None
    from django.conf import settings
    _OWNER = os.getpid()
    old = {Path(settings.HOME): Path(tempfile.mkdtemp(prefix="shareval-test-")),
           Path(settings.CODERUN_DIR): Path(tempfile.mkdtemp(prefix="shareval-test-coderuns-"))}
    os.chmod(old[Path(settings.CODERUN_DIR)], 0o711)
    for name in dir(settings):
        value = getattr(settings, name)
        if name.isupper() and (isinstance(value, Path) or type(value) is str) and value:
            for before, after in old.items():
                if Path(value) == before or before in Path(value).parents:
                    moved = after / Path(value).relative_to(before)
                    setattr(settings, name, moved if isinstance(value, Path) else str(moved))
    os.environ["SHAREVAL_HOME"] = str(settings.HOME)
    os.environ["SHAREVAL_CODERUN_DIR"] = str(settings.CODERUN_DIR)
    return settings.HOME
