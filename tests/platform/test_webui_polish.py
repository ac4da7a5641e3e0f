"""What the pages still showed raw after the first round of issue 22 (its
screenshots): task keys in headings and menus, the scorer's registry key, a
repeated document column, a header-less column, the viewer's team unmarked on
the leaderboard, empty Method columns, a home card without the phase, and a
submit command wrapped inside its URL. Database-backed tests run in both
server modes (tests/platform/conftest.py picks SQLite or PostgreSQL)."""
from __future__ import annotations

import datetime as dt
import json
import re
import shlex
import subprocess
import sys
from types import SimpleNamespace

from shareval.platform.competitions.phase_status import current_phase
from shareval.platform.submissions import queue
from shareval.platform.submissions.breakdowns import breakdown_tables
from shareval.platform.labels import scorer_label

from .factories import submit
from .judging.test_judging import judged  # noqa: F401 (fixture)
from .test_webui import text_of


# --- result pages ----------------------------------------------------------------

def test_scorer_label_names_no_registry_key():
    assert scorer_label("program/1 (shareval 0.1.0)") == \
        "the organizers' scoring program (run by shareval 0.1.0)"
    assert scorer_label("svident-detection/1 (shareval 0.1.0)") == \
        "shareval 0.1.0, scorer version 1"
    assert scorer_label("") == ""


def test_result_page_has_no_task_key_and_history_columns_all_have_headers(world, client):
    sub = submit(world)
    queue.drain()
    client.force_login(world["org"])
    page = client.get(f"/s/{sub.pk}/").content.decode()
    text = text_of(page)
    assert "(classification)" not in text and "classification/" not in text
    assert re.search(r"Scored by shareval \S+, scorer version 1", text)
    history = page.split("Score history (organizers)")[1]
    assert "<th></th>" not in history and "<th>Current</th>" in history
    assert "yes (shown above)" in history


def test_breakdown_does_not_repeat_the_unit_column():
    units = {"d1": {"f1_macro": 0.5, "doc_id": "d1", "lang": "en"},
             "d2": {"f1_macro": 0.7, "doc_id": "d2", "lang": "de"}}
    t = breakdown_tables({"per_document": units}, {})[0]
    assert [h["label"] for h in t["headers"]] == ["Document", "F1 (macro)", "Language"]
    # a field equal to the unit in only some rows is data, and stays
    units["d2"]["doc_id"] = "other"
    t = breakdown_tables({"per_document": units}, {})[0]
    assert "Document" in [h["label"] for h in t["headers"][1:]]


def test_pr_plot_title_and_axes_read_as_words(tmp_path, monkeypatch):
    from shareval import plots
    seen = {}
    real = plots._save

    def spy(fig, ax, path, title):
        seen.update(title=title, x=ax.get_xlabel(), y=ax.get_ylabel())
        return real(fig, ax, path, title)
    monkeypatch.setattr(plots, "_save", spy)
    ref = tmp_path / "ref.json"
    ref.write_text(json.dumps([{"publication_id": 1, "data_set_id": 10},
                               {"publication_id": 2, "data_set_id": 11}]))
    run = tmp_path / "run.json"
    run.write_text(json.dumps([{"publication_id": 1, "data_set_id": 10, "score": 0.9,
                                "mention_list": []},
                               {"publication_id": 2, "data_set_id": 12, "score": 0.5,
                                "mention_list": []}]))
    from shareval.tasks import get
    plots.save_figure(get("rcc-citations").score(str(ref), str(run)), tmp_path / "pr.png")
    assert (tmp_path / "pr.png").read_bytes()[:4] == b"\x89PNG"
    assert (seen["x"], seen["y"]) == ("Recall", "Precision")
    assert "rcc" not in seen["title"].lower() and seen["title"][0].isupper()


def test_demo_pairs_scorer_writes_a_per_publication_breakdown(tmp_path):
    """The demo's organizer scorer (the "pairs" dataset): per-publication rows, so
    the result page has a table and unit bars, and totals that add up."""
    from shareval.platform.demo_code import PAIRS_SCORER
    (tmp_path / "score.py").write_text(PAIRS_SCORER)
    ref = [{"publication_id": 1, "data_set_id": 10}, {"publication_id": 1, "data_set_id": 11},
           {"publication_id": 2, "data_set_id": 12}]
    run = [{"publication_id": 1, "data_set_id": 10}, {"publication_id": 3, "data_set_id": 9}]
    (tmp_path / "ref.json").write_text(json.dumps(ref))
    (tmp_path / "run.json").write_text(json.dumps(run))
    subprocess.run([sys.executable, str(tmp_path / "score.py"), str(tmp_path / "ref.json"),
                    str(tmp_path / "run.json"), str(tmp_path)], check=True)
    doc = json.loads((tmp_path / "result.json").read_text())
    per = doc["breakdowns"]["per_publication"]
    assert set(per) == {"1", "2", "3"}
    assert per["1"]["hits"] == 1 and per["1"]["pair_recall"] == 0.5
    assert per["1"]["pair_precision"] == 1.0 and per["3"]["pair_f1"] == 0.0
    assert sum(r["hits"] for r in per.values()) == doc["counts"]["hits"] == 1


def test_unit_plot_draws_publications_bars_or_a_histogram(world, tmp_path, monkeypatch):
    from shareval import plots
    from shareval.platform.submissions import scoring
    titles = []
    real = plots._save
    monkeypatch.setattr(plots, "_save",
                        lambda fig, ax, path, title: titles.append(title) or
                        real(fig, ax, path, title))
    sub = SimpleNamespace(pk="x", dataset=world["ds"]["dev"])
    result = {"breakdowns": {"per_publication": {str(i): {"f1": i / 100} for i in range(80)}}}
    names = scoring.unit_bars(sub, result, "f1")
    assert names and names[0].startswith("per_publication-")
    assert titles == ["F1 per publication: 80 publications"]        # too many for bars
    result = {"breakdowns": {"per_publication": {str(i): {"f1": i / 10} for i in range(5)}}}
    scoring.unit_bars(sub, result, "f1")
    assert titles[-1] == "F1 per publication"


# --- the demo's runs -------------------------------------------------------------

def test_demo_team_runs_have_a_method_and_a_description_in_words():
    from shareval.platform.demo_judging import TEAM_METHODS
    assert set(TEAM_METHODS) == {(t, d) for t in ("Team Alpha", "Team Beta")
                                 for d in ("svident-dev", "rcc-dev")}
    for method, description in TEAM_METHODS.values():
        assert method and description
        assert ".py" not in description and "docs:" not in description


# --- submit page -----------------------------------------------------------------

def test_submit_command_breaks_between_options_and_still_parses(world, client):
    client.force_login(world["users"]["alice"])
    page = client.get("/c/tiny/submit/").content.decode()
    ds = world["ds"]["dev"]
    command = re.search(rf'id="command-{ds.pk}">(.*?)</pre>', page, re.S).group(1)
    lines = command.splitlines()
    assert len(lines) == 3 and all(len(x) <= 80 for x in lines)
    assert lines[-1].strip() == "--server http://testserver --wait"       # the URL whole
    # the shell drops a backslash-newline (a continuation); shlex does not: do it here
    assert command.count("\\\n") == 2
    argv = shlex.split(command.replace("\\\n", " "))
    assert argv[:3] == ["shareval", "submit", "dev-run.tsv"] and argv[-1] == "--wait"
    assert argv[argv.index("--task") + 1] == "labels"
    css = client.get("/").content.decode()
    assert "break-all" not in css                     # the page never splits a word
    menu = re.search(r'<select name="dataset".*?</select>', page, re.S).group(0)
    assert "(classification)" not in menu and "Development · dev" in menu


# --- leaderboard -----------------------------------------------------------------

def test_leaderboard_heading_has_no_task_key_and_marks_the_viewers_team(world, client):
    submit(world, "alice", "Team A", correct=15)
    submit(world, "bob", "Team B", correct=12)
    queue.drain()
    url = "/c/tiny/leaderboard/dev/dev/"

    def own_rows(user):
        client.logout()
        if user:
            client.force_login(world["users"][user])
        page = client.get(url).content.decode()
        assert "(classification)" not in text_of(page)
        return re.findall(r'<tr[^>]*data-team="([^"]+)"[^>]*data-own="yes"', page), page

    rows, page = own_rows("alice")
    assert rows == ["Team A"] and "the rows of your team" in text_of(page)
    assert own_rows("bob")[0] == ["Team B"]           # the same cached body, another viewer
    assert own_rows("carol")[0] == ["Team A"]         # a member, not the lead
    rows, page = own_rows(None)
    assert rows == [] and "your team" not in text_of(page)
    assert own_rows("dave")[0] == []                  # signed in, in no team


# --- organizer dashboard ---------------------------------------------------------

def test_dashboard_method_column_only_when_a_run_names_a_method(world, client):
    client.force_login(world["org"])
    submit(world)
    page = client.get("/c/tiny/organize/").content.decode()
    assert "<th>Method</th>" not in page
    submit(world, "bob", "Team B", factsheet={"method": "Tiny transformer"})
    page = client.get("/c/tiny/organize/").content.decode()
    assert "<th>Method</th>" in page and "<td>Tiny transformer</td>" in page
    assert "Re-score all labels submissions" not in page


# --- home page -------------------------------------------------------------------

def test_current_phase_open_upcoming_closed():
    now = dt.datetime(2026, 6, 1, tzinfo=dt.timezone.utc)
    day = dt.timedelta(days=1)
    ph = lambda t, a, b: SimpleNamespace(title=t, start=now + a * day, end=now + b * day)  # noqa
    dev, ev = ph("dev", -5, 10), ph("eval", -1, 3)
    assert current_phase([dev, ev], now) == (ev, "open")       # the one that ends first
    later = ph("later", 2, 9)
    assert current_phase([ph("old", -9, -5), later], now) == (later, "upcoming")
    old = ph("old", -9, -2)
    assert current_phase([ph("older", -20, -10), old], now) == (old, "closed")
    assert current_phase([], now) == (None, "")


def test_home_card_shows_phase_deadline_in_the_competitions_zone(world, client):
    from zoneinfo import ZoneInfo
    comp = world["comp"]
    assert comp.time_zone == "Europe/Berlin"
    ev = comp.phases.get(slug="eval")          # open; ends before dev
    page = client.get("/").content.decode()
    card = text_of(page.split(f'id="phase-now-{comp.slug}"')[1].split("</p>")[0])
    end = ev.end.astimezone(ZoneInfo("Europe/Berlin")).strftime("%Y-%m-%d %H:%M")
    assert "open for submissions" in card and ev.title in card
    assert f"submissions until {end} (Europe/Berlin)" in " ".join(card.split())
    for ph in comp.phases.all():                                 # all over: closed
        ph.start = ph.start - dt.timedelta(days=60)
        ph.end = ph.start + dt.timedelta(days=1)
        ph.save()
    card = text_of(client.get("/").content.decode().split(f'id="phase-now-{comp.slug}"')[1]
                   .split("</p>")[0])
    assert "closed" in card and "ended" in card and "open for" not in card


def test_competition_page_gives_phase_dates_in_the_competitions_zone(world, client):
    from zoneinfo import ZoneInfo
    comp = world["comp"]
    dev = comp.phases.get(slug="dev")
    page = client.get("/c/tiny/").content.decode()
    zone = ZoneInfo("Europe/Berlin")
    start, end = (t.astimezone(zone).strftime("%Y-%m-%d %H:%M") for t in (dev.start, dev.end))
    assert f"{start} → {end} (Europe/Berlin)" in text_of(page)
    assert "(UTC)." not in text_of(page)


# --- judging campaigns (organizer) -----------------------------------------------

def test_campaign_pages_name_datasets_and_columns_in_words(judged, client):
    w = judged
    client.force_login(w["org"])
    listing = client.get("/c/tiny/organize/campaigns/").content.decode()
    head = re.search(r"<thead>.*?</thead>", listing, re.S).group(0)
    assert "<th>Judges per item</th>" in head and "<th>k</th>" not in head
    assert "Development · dev" in text_of(listing) and "dev/dev" not in text_of(listing)
    menu = re.search(r'<select name="dataset">.*?</select>', listing, re.S).group(0)
    assert "labels" not in menu                      # the task key is not the dataset
    page = client.get(f"/c/tiny/organize/campaigns/{w['camp'].pk}/").content.decode()
    text = text_of(page)
    assert "dev/dev" not in text and "k = " not in text and "2 judges per item" in text
    assert re.search(r"of \d+ items have their 2 judgments\.", text)
    for raw in ("<th>judge</th>", "<th>team</th>", "<th>units</th>", "<th>submission</th>"):
        assert raw not in page
