"""The competition server: a Django project with one app per domain.

The apps are layered: lower ones (mail, accounts, competitions) know nothing
of higher ones (leaderboards, judging, bundles, pages) and announce events
that the higher ones subscribe to; the import-linter contracts in
``pyproject.toml`` check it. docs/dev/architecture.md lists the apps.

The embedded default is SQLite plus an in-process worker thread; setting
``SHAREVAL_DATABASE_URL`` and ``SHAREVAL_BROKER_URL`` switches to PostgreSQL
and Celery with Redis.
"""
import os


def setup(**env) -> None:
    """Configure Django for use outside ``manage.py`` (CLI, tests, benches)."""
    for k, v in env.items():
        os.environ[k] = str(v)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shareval.platform.settings")
    import django
    django.setup()
