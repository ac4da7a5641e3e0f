"""Django settings, all taken from SHAREVAL_* environment variables.

SHAREVAL_HOME          folder for the SQLite file, uploads and hidden references
                       (default ./shareval-home)
SHAREVAL_DATABASE_URL  postgres://user:pass@host:port/db (default: SQLite in HOME)
SHAREVAL_BROKER_URL    redis://host:port/n: score with Celery workers (default:
                       an in-process worker thread)
SHAREVAL_SECRET_KEY    required when SHAREVAL_DEBUG is not set
SHAREVAL_MAX_UPLOAD_MB upload size limit (default 200); validation limits below
SHAREVAL_HTTPS         1: served over HTTPS behind a reverse proxy that sets
                       X-Forwarded-Proto and X-Forwarded-For: secure cookies,
                       HSTS, redirect to HTTPS, client IP from the proxy
SHAREVAL_TRUSTED_PROXY the proxy's address in HTTPS mode (default 127.0.0.1)
SHAREVAL_HSTS_SECONDS  HSTS max-age in HTTPS mode (default 31536000, one year)
SHAREVAL_LOGIN_FAILURE_LIMIT   wrong passwords before a lock-out (default 5)
SHAREVAL_LOGIN_COOLOFF_MINUTES how long a lock-out lasts (default 15)
SHAREVAL_EMAIL          console (default: mail printed on the server's output),
                       file (one file per message in SHAREVAL_EMAIL_DIR, default
                       HOME/mail) or smtp (SHAREVAL_SMTP_HOST, _PORT (587), _USER,
                       _PASSWORD, _TLS (1) / _SSL)
SHAREVAL_MAIL_FROM     the sender address (default shareval@localhost)
SHAREVAL_SITE_URL      the server's address in mailed links (default http://127.0.0.1:8000)
SHAREVAL_INVITATION_DAYS how long a mailed invitation link works (default 14)
SHAREVAL_MAIL_REQUESTS_PER_ADDRESS, _PER_CLIENT  password-reset and verification mails
                       per address (default 3) and per client (default 10) in an hour
SHAREVAL_BOARD_CACHE   0: build leaderboard rows on every request instead of
                       caching them until a run, score or team changes (default 1)
SHAREVAL_BOARD_WARM    0: after a dataset-wide change (release, task, board options,
                       deletes) leave the board's rebuild to its next request instead
                       of building it when the change commits (default 1)
SHAREVAL_BOARD_CACHE_URL redis://host:port/db: keep leaderboards in Redis, shared by
                       all server processes (default: in each process's memory)
"""
from __future__ import annotations

import datetime as dt
import os
import secrets
from pathlib import Path

import dj_database_url
from csp.constants import NONCE

HOME = Path(os.environ.get("SHAREVAL_HOME", "shareval-home")).resolve()
HOME.mkdir(parents=True, exist_ok=True)
UPLOAD_DIR = HOME / "uploads"          # submissions, named by UUID
PRIVATE_DIR = HOME / "private"         # hidden references and bundle files
PUBLIC_DIR = HOME / "public"           # files released to participants
RESULTS_DIR = HOME / "results"         # plots written by scorers

DEBUG = bool(os.environ.get("SHAREVAL_DEBUG"))
_key_file = HOME / "secret-key"
if os.environ.get("SHAREVAL_SECRET_KEY"):
    SECRET_KEY = os.environ["SHAREVAL_SECRET_KEY"]
else:
    # A per-installation key kept beside the data, never a constant in the code.
    if not _key_file.exists():
        _key_file.write_text(secrets.token_urlsafe(50))
        _key_file.chmod(0o600)
    SECRET_KEY = _key_file.read_text().strip()

ALLOWED_HOSTS = os.environ.get("SHAREVAL_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",")
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("SHAREVAL_CSRF_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "axes",
    "csp",
    # the platform's apps, lowest first: each imports only apps listed before it
    # (pyproject.toml's import-linter contract)
    "shareval.platform.notifications",
    "shareval.platform.accounts",
    "shareval.platform.competitions",
    "shareval.platform.access",
    "shareval.platform.submissions",
    "shareval.platform.coderuns",
    "shareval.platform.leaderboards",
    "shareval.platform.judging",
    "shareval.platform.reports",
    "shareval.platform.workbench",
    "shareval.platform.annotation",
    "shareval.platform.bundles",
    "shareval.platform.pages",
]

MIDDLEWARE = [
    "shareval.platform.bodylimit.BodyLimitMiddleware",    # before anything reads the body
    "shareval.platform.uploadgate.UploadGate",            # uploads leave pages their threads
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "shareval.platform.errors.NulInPathNotFound",         # before any view queries a part
    "shareval.platform.errors.MethodNotAllowedPage",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",          # last, as django-axes requires
]

ROOT_URLCONF = "shareval.platform.urls"
WSGI_APPLICATION = "shareval.platform.wsgi.application"
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "DIRS": [Path(__file__).parent / "templates"],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
        "csp.context_processors.nonce",
        "shareval.platform.work.header",        # the header's "Your work" link
    ]},
}]

_db_url = os.environ.get("SHAREVAL_DATABASE_URL")
if _db_url:
    DATABASES = {"default": dj_database_url.parse(_db_url, conn_max_age=60)}
else:
    DATABASES = {"default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": HOME / "shareval.sqlite3",
        # IMMEDIATE: every transaction takes the write lock at BEGIN, so the
        # quota check and the insert that follows it cannot interleave.
        "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 30,
                    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"},
    }}
DATABASES["default"]["TEST"] = {"NAME": os.environ.get("SHAREVAL_TEST_DB_NAME")} \
    if os.environ.get("SHAREVAL_TEST_DB_NAME") else {}

# Leaderboard rows are cached per dataset under a token that every write they
# depend on replaces (leaderboards/cache.py); SHAREVAL_BOARD_CACHE=0 turns it off.
BOARD_CACHE = os.environ.get("SHAREVAL_BOARD_CACHE", "1") not in ("", "0")
# A dataset-wide change builds the boards it changed right after it commits
# (leaderboards/warm.py); SHAREVAL_BOARD_WARM=0 leaves that to the next request.
BOARD_WARM = os.environ.get("SHAREVAL_BOARD_WARM", "1") not in ("", "0")
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
          "boards": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                     "LOCATION": "shareval-boards", "OPTIONS": {"MAX_ENTRIES": 500}}}
if os.environ.get("SHAREVAL_BOARD_CACHE_URL"):      # redis://...: one cache for all processes
    CACHES["boards"] = {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                        "LOCATION": os.environ["SHAREVAL_BOARD_CACHE_URL"],
                        "KEY_PREFIX": "shareval-boards"}

BROKER_URL = os.environ.get("SHAREVAL_BROKER_URL", "")
SCORING_QUEUE = os.environ.get("SHAREVAL_QUEUE", "shareval-scoring")   # one per installation
LEASE_SECONDS = float(os.environ.get("SHAREVAL_LEASE_SECONDS", "30"))
HEARTBEAT_SECONDS = float(os.environ.get("SHAREVAL_HEARTBEAT_SECONDS", str(LEASE_SECONDS / 3)))
MAX_ATTEMPTS = int(os.environ.get("SHAREVAL_MAX_ATTEMPTS", "3"))
SCORING_TIMEOUT = float(os.environ.get("SHAREVAL_SCORING_TIMEOUT", "3600"))
# Uploads up to this size are also scored by a lane of their own (0: no lane).
SMALL_JOB_BYTES = int(float(os.environ.get("SHAREVAL_SMALL_JOB_KB", "1024")) * 2**10)
# Diagnostic knob: sleep this long (seconds) before scoring, so a test or an
# operator can kill a worker mid-job and watch the job be re-queued.
SCORING_DELAY = float(os.environ.get("SHAREVAL_SCORING_DELAY", "0"))

# Code submissions (coderuns, docs/code-submissions.md): the sandbox's workspace
# (as root outside the server's home, which the runs' uids cannot enter and whose
# path the sandbox would see among its mounts), the user runs drop to when the
# worker is root ("pool": a fresh unused uid per run, 1000001-1999999; or a user
# name), the Celery queue of code runs, in-process code workers (embedded mode).
_SANDBOX_HOME = "/var/lib/shareval-sandbox" if os.geteuid() == 0 else str(HOME / "coderuns")
CODERUN_DIR = Path(os.environ.get("SHAREVAL_CODERUN_DIR", _SANDBOX_HOME)).resolve()
CODERUN_USER = os.environ.get("SHAREVAL_CODERUN_USER", "pool")
CODERUN_QUEUE = os.environ.get("SHAREVAL_CODERUN_QUEUE", SCORING_QUEUE + "-coderuns")
# organizers' scoring programs (tasks/program.py) run in the same workspace
os.environ.setdefault("SHAREVAL_CODERUN_DIR", str(CODERUN_DIR))
os.environ.setdefault("SHAREVAL_CODERUN_USER", CODERUN_USER)
CODERUN_WORKERS = int(os.environ.get("SHAREVAL_CODERUN_WORKERS", "1"))

MAX_UPLOAD_BYTES = int(float(os.environ.get("SHAREVAL_MAX_UPLOAD_MB", "200")) * 2**20)
# Validation runs in a child process with these limits (submissions/isolate.py);
# the memory is what validation may add to the child's start-up address space
# (a 199 MB TREC run needs about 1.8 GB, on the command line too).
VALIDATION_MEMORY_MB = int(os.environ.get("SHAREVAL_VALIDATION_MEMORY_MB", "3072"))
VALIDATION_CPU_SECONDS = int(os.environ.get("SHAREVAL_VALIDATION_CPU_SECONDS", "300"))
VALIDATION_WALL_SECONDS = float(os.environ.get("SHAREVAL_VALIDATION_WALL_SECONDS", "600"))
VALIDATION_SLOTS = int(os.environ.get("SHAREVAL_VALIDATION_SLOTS", "2"))
# CPU priority (nice, 0-19) of the scoring workers (`server worker`) and of the
# children that validate uploads: pages come first on a small machine.
BACKGROUND_NICE = int(os.environ.get("SHAREVAL_BACKGROUND_NICE", "10"))
# Server threads for uploads beyond `server run --threads` (which serve pages);
# more uploads at once are answered 503 (uploadgate.py).
UPLOAD_THREADS = int(os.environ.get("SHAREVAL_UPLOAD_THREADS", "24"))
MAX_UNPACKED_MB = int(os.environ.get("SHAREVAL_MAX_UNPACKED_MB", "1024"))
# Rejected uploads do not count against a quota, but at most this many per team
# and hour are validated; further uploads are refused (429) until the hour passes.
MAX_REJECTED_PER_HOUR = int(os.environ.get("SHAREVAL_MAX_REJECTED_PER_HOUR", "20"))
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 2**20
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 2**20
FILE_UPLOAD_PERMISSIONS = 0o600

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
     "OPTIONS": {"min_length": 8}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# Login lock-out (django-axes): after LIMIT wrong passwords for one username from
# one client IP, that pair is refused, right password included, for COOLOFF.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend",
                           "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = int(os.environ.get("SHAREVAL_LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = dt.timedelta(minutes=float(os.environ.get("SHAREVAL_LOGIN_COOLOFF_MINUTES",
                                                              "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "shareval/locked.html"
AXES_VERBOSE = False
# Mail: Django's mail framework; the backend is chosen by SHAREVAL_EMAIL.
_email = os.environ.get("SHAREVAL_EMAIL", "console")
if _email == "file":
    EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
    EMAIL_FILE_PATH = os.environ.get("SHAREVAL_EMAIL_DIR", str(HOME / "mail"))
elif _email == "smtp":
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_HOST = os.environ.get("SHAREVAL_SMTP_HOST", "localhost")
    EMAIL_PORT = int(os.environ.get("SHAREVAL_SMTP_PORT", "587"))
    EMAIL_HOST_USER = os.environ.get("SHAREVAL_SMTP_USER", "")
    EMAIL_HOST_PASSWORD = os.environ.get("SHAREVAL_SMTP_PASSWORD", "")
    EMAIL_USE_SSL = os.environ.get("SHAREVAL_SMTP_SSL", "") not in ("", "0")
    EMAIL_USE_TLS = not EMAIL_USE_SSL and os.environ.get("SHAREVAL_SMTP_TLS", "1") != "0"
    EMAIL_TIMEOUT = 20
elif _email == "console":
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
else:
    raise ValueError(f"SHAREVAL_EMAIL={_email!r}: console, file or smtp")
DEFAULT_FROM_EMAIL = os.environ.get("SHAREVAL_MAIL_FROM", "shareval@localhost")
SITE_URL = os.environ.get("SHAREVAL_SITE_URL", "http://127.0.0.1:8000")
INVITATION_DAYS = int(os.environ.get("SHAREVAL_INVITATION_DAYS", "14"))
# Password-reset and verification mails asked for per address and per client in an hour.
MAIL_REQUESTS_PER_ADDRESS = int(os.environ.get("SHAREVAL_MAIL_REQUESTS_PER_ADDRESS", "3"))
MAIL_REQUESTS_PER_CLIENT = int(os.environ.get("SHAREVAL_MAIL_REQUESTS_PER_CLIENT", "10"))

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False   # the submit form's fetch() reads it
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Scripts and styles only from this server or inline with the per-response nonce
# (templates write nonce="{{ CSP_NONCE }}"); no plugins, no framing, no foreign forms.
CONTENT_SECURITY_POLICY = {"DIRECTIVES": {
    "default-src": ["'self'"], "script-src": ["'self'", NONCE], "style-src": ["'self'", NONCE],
    "img-src": ["'self'", "data:"], "object-src": ["'none'"], "base-uri": ["'self'"],
    "form-action": ["'self'"], "frame-ancestors": ["'none'"]}}

HTTPS = os.environ.get("SHAREVAL_HTTPS", "") not in ("", "0")
TRUSTED_PROXY = os.environ.get("SHAREVAL_TRUSTED_PROXY", "127.0.0.1")
if HTTPS:
    # The proxy in front terminates TLS. waitress (`shareval server run`) takes
    # X-Forwarded-Proto/-For from TRUSTED_PROXY only and drops them from anyone
    # else, so REMOTE_ADDR is the real client (the lock-out counts per client).
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("SHAREVAL_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_PRELOAD = True
    CONTENT_SECURITY_POLICY["DIRECTIVES"]["upgrade-insecure-requests"] = True

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "shareval.platform.accounts.auth.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "EXCEPTION_HANDLER": "shareval.platform.api.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_TZ = True
USE_I18N = False
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
STATIC_URL = "static/"
STATIC_ROOT = HOME / "static"          # `shareval server run` collects into it; WhiteNoise serves
STATIC_ROOT.mkdir(exist_ok=True)
WHITENOISE_USE_FINDERS = DEBUG
LOGGING = {
    "version": 1, "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"shareval": {"handlers": ["console"], "level": os.environ.get("SHAREVAL_LOG", "INFO")}},
}
