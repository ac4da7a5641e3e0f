"""Migrations: the models and the migrations agree, and a database migrated
under the old migration names (with ticket codes) upgrades in place and keeps
its rows."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.recorder import MigrationRecorder

from shareval.platform.competitions.models import Competition, Page, Registration

# (app, old name) -> new name: the files renamed; each new one ``replaces`` the old
RENAMED = {
    ("competitions", "0003_access24_eligibility"): "0003_eligibility",
    ("competitions", "0004_runs24_records"): "0004_records",
    ("competitions", "0005_perf22_indexes"): "0005_indexes",
    ("competitions", "0006_forms24_setting_changes"): "0006_setting_changes",
    ("competitions", "0007_board22_marks"): "0007_board_marks",
    ("competitions", "0008_org24_team_lead_invitations"): "0008_team_lead_invitations",
    ("submissions", "0002_runs24_records"): "0002_records",
    ("submissions", "0003_perf22_indexes"): "0003_indexes",
    ("annotation", "0002_org24_archive_times"): "0002_archive_times",
    ("coderuns", "0001_code25_initial"): "0001_initial",
    ("judging", "0002_judge23_ondemand"): "0002_ondemand",
    ("notifications", "0001_access24_mail"): "0001_initial",
}
# the last migration before the constraints lost their ticket code
BEFORE = ("competitions", "0009_baseline_teams_without_members")
AFTER = ("competitions", "0010_constraint_names")


def test_the_models_need_no_new_migration():
    # in a fresh interpreter: tests that register tasks change this one's model state
    env = {k: v for k, v in os.environ.items() if k != "SHAREVAL_DATABASE_URL"}
    env["DJANGO_SETTINGS_MODULE"] = "shareval.platform.test_settings"
    r = subprocess.run([sys.executable, "-m", "django", "makemigrations", "--check", "--dry-run"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def _constraints(table: str) -> set[str]:
    with connection.cursor() as cursor:
        return set(connection.introspection.get_constraints(cursor, table))


@pytest.mark.django_db(transaction=True)
def test_a_database_migrated_under_the_old_names_upgrades_and_keeps_its_rows():
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])                   # the constraints under their old names
    assert "access24_registration_unique" in _constraints("competitions_registration")
    user = get_user_model().objects.create_user("reg", password="x")
    comp = Competition.objects.create(slug="kept", title="Kept")
    Registration.objects.create(competition=comp, user=user)
    Page.objects.create(competition=comp, slug="rules", title="Rules", body="Be kind.")
    # a server deployed before the rename recorded the old file names
    recorder = MigrationRecorder(connection)
    for (app, old), new in RENAMED.items():
        recorder.migration_qs.filter(app=app, name=new).update(name=old)

    executor = MigrationExecutor(connection)
    leaves = executor.loader.graph.leaf_nodes()
    plan = [m.app_label + "." + m.name for m, _ in executor.migration_plan(leaves)]
    # the renamed files count as applied: what is left is 0010 and the migrations after it
    assert plan[0] == ".".join(AFTER)
    assert not set(plan) & {f"{app}.{new}" for (app, _), new in RENAMED.items()}, plan
    executor.migrate(leaves)

    applied = set(recorder.migration_qs.values_list("app", "name"))
    assert {(app, new) for (app, _), new in RENAMED.items()} <= applied
    assert AFTER in applied
    names = _constraints("competitions_registration")
    assert "registration_unique" in names and "access24_registration_unique" not in names
    assert "page_unique" in _constraints("competitions_page")
    assert Registration.objects.get(competition__slug="kept").user.username == "reg"
    assert Page.objects.get(competition=comp).body == "Be kind."
