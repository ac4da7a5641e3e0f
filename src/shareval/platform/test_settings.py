"""Settings for the test suite: a fresh data folder for every test process.

Always a new folder, never an inherited SHAREVAL_HOME: pytest-xdist workers
inherit the controller's environment, and two workers writing the same
hidden-reference paths would see each other's files.
"""
import os
import tempfile

os.environ["SHAREVAL_HOME"] = tempfile.mkdtemp(prefix="shareval-test-")

from .settings import *  # noqa: E402,F401,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast test users only
