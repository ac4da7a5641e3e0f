"""A task with no gold and no primary metric (RCC research methods) gets a board
that says it ranks nothing and shows what there is: each team's descriptive
metrics and most frequent values, and the overlap between teams, in the API and
the page, with no blank header, rank or rule."""
from __future__ import annotations

import datetime as dt
import json
import re

import pytest
import yaml

from ..factories import Upload
from ..test_webui import text_of as raw_text

# team -> values per publication: A and B share v30..v59 out of v0..v89 (30 of 90)
RUNS = {"Team A": [f"v{k}" for k in range(60)],
        "Team B": [f"v{k}" for k in range(30, 90)],
        "Team C": ["survey", "regression"]}


def text_of(html: str) -> str:
    return " ".join(raw_text(html).split())


def methods(values: list[str]) -> str:
    return json.dumps([{"publication_id": k % 7, "method": v} for k, v in enumerate(values)])


@pytest.fixture
def methods_board(db, tmp_path):
    from django.contrib.auth import get_user_model

    from shareval.platform.bundles.loader import load_bundle
    from shareval.platform.competitions.models import Membership, Team
    from shareval.platform.submissions import queue, service
    root = tmp_path / "b"
    root.mkdir()
    now = dt.datetime.now(dt.timezone.utc)
    iso = lambda t: t.replace(microsecond=0).isoformat()       # noqa: E731
    (root / "bundle.yaml").write_text(yaml.safe_dump({
        "slug": "rcc-methods", "title": "RCC methods",
        "tasks": [{"slug": "methods", "task": "rcc-fields-methods"}],
        "phases": [{"slug": "p1", "title": "Phase 1", "start": iso(now - dt.timedelta(days=1)),
                    "end": iso(now + dt.timedelta(days=9)), "leaderboard": "public",
                    "datasets": [{"slug": "methods", "task": "methods"}]}]}))
    User = get_user_model()
    org = User.objects.create_user("org", password="org-pass-123", is_staff=True)
    comp, _ = load_bundle(root, org)
    ds = comp.phases.get().datasets.get()
    for name, values in RUNS.items():
        u = User.objects.create_user(name.split()[1].lower(), password="x-pass-123")
        t = Team.objects.create(competition=comp, name=name, lead=u)
        Membership.objects.create(team=t, user=u, status=Membership.APPROVED)
        if name == "Team C":       # an earlier run: the board shows the latest, unranked
            service.submit(u, t, ds, Upload("old.json", methods(["old"])))
        service.submit(u, t, ds, Upload("run.json", methods(values)))
    assert queue.drain() == 4
    return ds


URL = "/c/rcc-methods/leaderboard/p1/methods/"


def test_the_api_board_ranks_nothing_and_gives_distributions_and_overlap(methods_board, client):
    b = client.get("/api/competitions/rcc-methods/leaderboard/p1/methods/").json()
    assert b["ranked"] is False and b["primary_metric"] is None
    assert b["columns"] == ["distinct_values", "values_per_publication"]
    assert [r["team"] for r in b["rows"]] == ["Team A", "Team B", "Team C"]
    assert {r["rank"] for r in b["rows"]} == {None}
    a, bb, c = b["rows"]
    assert a["metrics"]["distinct_values"] == 60 and a["run"] == "latest"
    assert c["distribution"] == [["regression", 1], ["survey", 1]]   # not the older run
    assert a["overlap"]["Team B"] == {"jaccard": pytest.approx(30 / 90), "shared": 30}
    assert a["overlap"]["Team C"] == {"jaccard": 0.0, "shared": 0}
    assert "not ranked" in b["rule"] and " by ;" not in b["rule"] and "best run" not in b["rule"]


def test_the_page_has_no_rank_no_blank_header_and_an_overlap_table(methods_board, client):
    page = client.get(URL).content.decode()
    head = page.split('<table class="sortable" id="leaderboard">')[1].split("</thead>")[0]
    headers = [raw_text(h).strip() for h in re.findall(r"<th[^>]*>(.*?)</th>", head)]
    assert "Rank" not in headers and "" not in headers
    assert "Most frequent values" in headers and "Distinct values" in headers
    rows = page.split("<tbody>")[1].split("</tbody>")[0]
    assert rows.count("<tr") == 3 and all(
        r.count("<td") == len(headers) for r in rows.split("<tr")[1:])
    text = text_of(page)
    assert re.search(r"not ranked ?: this task has no gold and no primary metric", text)
    assert "by ;" not in text and "ranked by" not in text
    assert "v0 (1) · v1 (1)" in text and "55 more" in text
    overlap = text_of(page.split('id="overlap"')[1].split("</table>")[0])
    assert "0.333 (30 shared)" in overlap and "0.000 (0 shared)" in overlap


def test_several_runs_per_team_are_unranked_too(methods_board, client):
    ds = methods_board
    ds.board = {"runs": "all"}
    ds.save()
    b = client.get("/api/competitions/rcc-methods/leaderboard/p1/methods/").json()
    assert {r["rank"] for r in b["rows"]} == {None} and len(b["rows"]) == 4
    assert [r["team"] for r in b["rows"]] == ["Team A", "Team B", "Team C", "Team C"]
    assert "" not in b["columns"]
    assert [r["distribution"] for r in b["rows"][2:]] == [[["regression", 1], ["survey", 1]],
                                                          [["old", 1]]]
    assert all("overlap" not in r for r in b["rows"])      # several rows per team: no matrix
    page = client.get(URL).content.decode()
    assert "old (1)" in page and 'id="overlap"' not in page
