"""Settings for the test suite: a fresh data folder per process unless SHAREVAL_HOME is set."""
import os
import tempfile

os.environ.setdefault("SHAREVAL_HOME", tempfile.mkdtemp(prefix="shareval-test-"))
os.environ.setdefault("SHAREVAL_LEASE_SECONDS", "30")

from .settings import *  # noqa: E402,F401,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast test users only
