"""A split board end to end (issue 24), in both server modes (a real server; in
``make test-postgres`` PostgreSQL and Celery workers): TREC and SV-Ident runs sent
with ``shareval submit``; the board API shows the public part, the participant's run
answer hides the private one, and the organizer's release turns the board to it."""
from __future__ import annotations

import json

import pytest

from shareval.tasks import get
from shareval.tasks.splits import score_parts

from .test_split_tasks import TASKS, split_of, write_bundle


def test_split_boards_through_the_cli_and_the_api(stack, tmp_path):
    root = tmp_path / "bundle"
    runs = write_bundle(root)
    tokens = stack.seed(root, "splits")
    stack.start()
    expected, ids = {}, {}
    for slug in ("trec", "detect"):
        ref, files = runs[slug]
        task = get(TASKS[slug])
        for team, user in (("Team A", "alice"), ("Team B", "bob")):
            env = {"SHAREVAL_SERVER": stack.url, "SHAREVAL_TOKEN": tokens[user]}
            r = stack.cli("submit", "-c", "splits", "-p", "dev", "-t", slug, "--wait",
                          files[team], extra_env=env)
            assert "scored" in r.stdout or "accepted" in r.stdout, r.stdout
            ids[(slug, team)] = r.stdout.split("submission ")[1].split()[0]
            pub, priv = score_parts(task, str(ref), str(files[team]), split_of(slug, root), {})
            expected[(slug, team)] = (pub["metrics"][task.primary_metric],
                                      priv["metrics"][task.primary_metric])
    for slug in ("trec", "detect"):
        metric = get(TASKS[slug]).primary_metric
        code, board = stack.api("GET", f"/api/competitions/splits/leaderboard/dev/{slug}/")
        assert code == 200 and board["part"] == "public"
        assert {r["team"]: r["metrics"][metric] for r in board["rows"]} == pytest.approx(
            {t: expected[(slug, t)][0] for t in ("Team A", "Team B")})
        code, body = stack.api("GET", f"/api/submissions/{ids[(slug, 'Team A')]}/",
                               tokens["alice"])
        assert body["score"]["private"] == {
            "hidden": "scored; shown once the organizers release the results"}
        text = json.dumps(body) + json.dumps(board)
        assert repr(expected[(slug, "Team A")][1]) not in text
    code, _ = stack.api("POST", "/api/competitions/splits/release/dev/", tokens["alice"],
                        {"level": "top"})
    assert code in (403, 404)
    code, _ = stack.api("POST", "/api/competitions/splits/release/dev/", tokens["org"],
                        {"level": "top"})
    assert code == 200
    for slug in ("trec", "detect"):
        metric = get(TASKS[slug]).primary_metric
        code, board = stack.api("GET", f"/api/competitions/splits/leaderboard/dev/{slug}/")
        assert board["part"] == "private"
        assert {r["team"]: r["metrics"][metric] for r in board["rows"]} == pytest.approx(
            {t: expected[(slug, t)][1] for t in ("Team A", "Team B")})
        code, body = stack.api("GET", f"/api/submissions/{ids[(slug, 'Team B')]}/",
                               tokens["bob"])
        assert body["score"]["private"]["metrics"][metric] == pytest.approx(
            expected[(slug, "Team B")][1])
