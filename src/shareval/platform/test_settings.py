"""Settings for the test suite: a fresh data folder for every test process.

Always a new folder, never an inherited SHAREVAL_HOME: pytest-xdist workers
inherit the controller's environment, and two workers writing the same
hidden-reference paths would see each other's files.
"""
import atexit
import os
import shutil
import tempfile

os.environ["SHAREVAL_HOME"] = tempfile.mkdtemp(prefix="shareval-test-")

# the code-run workspace must be reachable by the sandbox user when tests run as
# root (the data folder above is 0700)
_coderuns = tempfile.mkdtemp(prefix="shareval-test-coderuns-")
os.chmod(_coderuns, 0o711)
atexit.register(shutil.rmtree, _coderuns, True)
os.environ.setdefault("SHAREVAL_CODERUN_DIR", _coderuns)

from .settings import *  # noqa: E402,F401,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast test users only
