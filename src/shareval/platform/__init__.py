"""The competition server: a Django project with three apps.

``accounts`` (users, teams, API tokens), ``competitions`` (tasks, phases,
datasets with hidden references, quotas, bundles, leaderboards) and
``submissions`` (uploads, validation, the scoring queue, results).

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
