"""Official tables (leaderboards/official.py, /c/<c>/results/<phase>/): each team's
primary run only, ranked with shared ranks, teams without a primary named apart,
CSV and LaTeX (best per column in bold), and nothing before the results are
released to anyone but the organizers (top-line first, breakdowns when detailed)."""
from __future__ import annotations

import csv
import io

import pytest

from shareval.platform.competitions.models import Phase
from shareval.platform.leaderboards import official
from shareval.platform.submissions.queue import drain

from ..factories import make_world, submit


@pytest.fixture
def world(db, tmp_path):
    return make_world(tmp_path)


def _eval_runs(w):
    submit(w, "alice", "Team A", "eval", 12, primary=True)
    submit(w, "alice", "Team A", "eval", 19)                 # contrastive: better, not counted
    submit(w, "bob", "Team B", "eval", 12, primary=True)     # ties with Team A
    drain()


def test_primaries_only_ranked_with_shared_ranks_and_teams_without_primary_named(world):
    from django.contrib.auth import get_user_model

    from shareval.platform.competitions.models import Membership, Team
    w = world
    _eval_runs(w)
    dave = get_user_model().objects.get(username="dave")
    t = Team.objects.create(competition=w["comp"], name="Team C", lead=dave)
    Membership.objects.create(team=t, user=dave, status=Membership.APPROVED)
    w["teams"]["Team C"] = t
    submit(w, "dave", "Team C", "eval", 20)                  # the best run, but no primary
    drain()
    phase = w["comp"].phases.get(slug="eval")
    [t] = official.tables(phase, detailed=False)
    assert [(r["team"], r["rank"]) for r in t.rows] == [("Team A", 1), ("Team B", 1)]
    accuracy = [k for k, _ in t.columns].index("accuracy")
    assert [r["cells"][accuracy] for r in t.rows] == [12 / 20, 12 / 20]
    assert t.without_primary == ["Team C"]
    rows = list(csv.reader(io.StringIO(official.as_csv(t))))
    assert rows[0][:3] == ["rank", "team", "run"]
    assert [r[1] for r in rows[1:]] == ["Team A", "Team B", "Team C"]
    assert rows[3][2] == "(no primary run)"


def test_latex_is_booktabs_with_the_best_of_each_column_in_bold(world):
    w = world
    submit(w, "alice", "Team A", "eval", 16, primary=True)
    submit(w, "bob", "Team B", "eval", 11, primary=True)
    drain()
    [t] = official.tables(w["comp"].phases.get(slug="eval"), detailed=False)
    tex = official.as_latex(t, "Evaluation: labels")
    assert r"\toprule" in tex and r"\bottomrule" in tex and r"\caption{Evaluation: labels}" in tex
    line_a = next(x for x in tex.splitlines() if "Team A" in x)
    line_b = next(x for x in tex.splitlines() if "Team B" in x)
    assert r"\textbf{0.8000}" in line_a and r"\textbf" not in line_b.split("&")[2]


def test_nothing_before_release_then_top_line_then_detailed(world, client):
    w = world
    _eval_runs(w)
    url = "/c/tiny/results/eval/"
    assert client.get(url).status_code == 200
    body = client.get(url).content.decode()
    assert "not released yet" in body and "Team A" not in body
    assert client.get(url + "eval.csv").status_code == 404
    client.force_login(w["org"])
    body = client.get(url).content.decode()
    assert "Team A" in body and "not released yet" not in body
    assert client.get(url + "eval.csv").status_code == 200
    client.logout()
    phase = w["comp"].phases.get(slug="eval")
    phase.released = Phase.TOP
    phase.save()
    body = client.get(url).content.decode()
    assert "Team A" in body and "Team B" in body
    assert client.get(url + "eval.csv").status_code == 200
    assert client.get(url + "eval.png").status_code == 404      # plots: detailed only


def test_a_hidden_leaderboard_phase_is_404_to_everyone_but_organizers(world, client):
    w = world
    phase = w["comp"].phases.get(slug="eval")
    phase.leaderboard_public = False
    phase.released = Phase.DETAILED
    phase.save()
    assert client.get("/c/tiny/results/eval/").status_code == 404
    client.force_login(w["users"]["alice"])
    assert client.get("/c/tiny/results/eval/").status_code == 404
    client.force_login(w["org"])
    assert client.get("/c/tiny/results/eval/").status_code == 200


def test_a_run_group_is_one_table_of_primaries_from_its_primary_datasets(db, tmp_path):
    """MATERIAL 8.1: per language one table; the primary comes from the E2E dataset,
    the group's contrastive runs never enter it; a team without a primary is named."""
    from ..submissions.test_run_groups import grouped_world
    w = grouped_world(tmp_path)
    submit(w, "alice", "Team A", "eval", 14, primary=True)
    submit(w, "alice", "Team A", "eval-clir", 20)           # contrastive, best: not counted
    submit(w, "bob", "Team B", "eval-clir", 18)             # Team B forgets its primary
    drain()
    phase = w["comp"].phases.get(slug="eval")
    sets = official.run_sets(phase)
    assert [(s.slug, [d.slug for d in s.datasets], [d.slug for d in s.primary_from])
            for s in sets] == [("lang-1a", ["eval", "eval-clir"], ["eval"])]
    [t] = official.tables(phase, detailed=True)
    assert [(r["team"], r["rank"]) for r in t.rows] == [("Team A", 1)]
    accuracy = [k for k, _ in t.columns].index("accuracy")
    assert t.rows[0]["cells"][accuracy] == 14 / 20
    assert t.without_primary == ["Team B"]


def test_breakdowns_are_titled_by_the_value_they_show():
    """An E2E table's breakdowns give the E2E AQWV, a CLIR table's the CLIR AQWV."""
    rows = [{"team": "Team A", "result": {"breakdowns": {"per_domain": {
        "Lifestyle": {"aqwv": 0.5}}}}}]
    for task, title in (("material-e2e", "E2E AQWV by domain"),
                        ("material-clir", "CLIR AQWV by domain")):
        label = official._breakdown_label(official.COLUMNS[task])
        [b] = official._breakdowns(rows, label)
        assert b["title"] == title and b["rows"][0]["values"] == [0.5]
    assert official._breakdown_label([("accuracy", "accuracy")]) == "AQWV"


def test_the_organizer_is_told_what_participants_see_now(world, client):
    w = world
    _eval_runs(w)
    client.force_login(w["org"])
    phase = w["comp"].phases.get(slug="eval")

    def told():
        body = client.get("/c/tiny/results/eval/").content.decode()
        return body[body.index('id="organizer-view"'):].split("</span>")[0]
    assert "participants see them once you release the results" in told()
    for level, words in ((Phase.TOP, "Participants see the top-line tables"),
                         (Phase.DETAILED, "Participants see these tables with the breakdowns")):
        phase.released = level
        phase.save()
        assert words in told() and "once you release the results" not in told()
