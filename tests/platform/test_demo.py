"""The `make demo` competition, built from ../shared/data (skipped without it)."""
from __future__ import annotations

import datetime as dt

import pytest

from shareval.platform.competitions import leaderboard
from shareval.platform.competitions.bundle import load_bundle
from shareval.platform.demo import build_bundle
from shareval.platform.submissions.queue import drain


@pytest.mark.realdata
def test_demo_competition_builds_and_scores_its_baselines(db, tmp_path, shared_data, client):
    from django.contrib.auth import get_user_model
    org = get_user_model().objects.create_user("organizer", password="x", is_staff=True)
    root = build_bundle(shared_data, tmp_path / "demo", dt.datetime.now(dt.timezone.utc))
    comp, made = load_bundle(root, org)
    assert len(made) == 3 and drain() == 3
    for s in made:
        s.refresh_from_db()
        assert s.state == "scored", [e.message for e in s.events.all()]
    dev = comp.phases.get(slug="development")
    sv = dev.datasets.get(slug="svident-dev")
    cols, rows = leaderboard.rows(sv)
    assert cols[0] == "f1_macro" and rows[0]["baseline"]
    assert 0.3 < rows[0]["metrics"]["f1_macro"] < 0.9        # a weak but real baseline
    rcc = dev.datasets.get(slug="rcc-dev")
    _, rows = leaderboard.rows(rcc)
    assert 0 < rows[0]["metrics"]["f1"] < 0.5
    board = client.get("/api/competitions/demo/leaderboard/evaluation/svident-eval/").json()
    assert board["scores"].startswith("hidden") and board["rows"][0]["metrics"] == {}
