"""A cached board patched team by team (board_cache.py: only the teams whose
mark changed are rebuilt) equals a board built from scratch, after every step
of seeded random sequences of the changes boards read: new runs (scored, with
ties), primary flags, cancellations, disqualification and reinstatement, a run
taken off the board and put back, fact-sheet edits, notes, team renames and
signal-less re-scores; on a several-runs board with a column choice and on a
one-row-per-team board with a private part, with scores shown and hidden; the
page's table body too. Runs in both server modes (SQLite, PostgreSQL).
"""
from __future__ import annotations

import datetime as dt
import random
import re

import pytest

from shareval.platform.competitions import board_cache, board_html, boards
from shareval.platform.competitions.models import Dataset, Membership, Team
from shareval.platform.submissions import queue, runs, service
from shareval.platform.submissions.service import SubmissionError
from shareval.platform.submissions.models import Score, Submission

from .conftest import ITEMS, Upload, make_world, run_with_accuracy

NOW = dt.datetime.now(dt.timezone.utc)
SEVERAL = {"runs": "all", "max_runs": 3, "team_visibility": True,
           "columns": [{"metric": "f1_macro", "precision": 3}, {"metric": "accuracy"}]}
PAGES = ("/c/tiny/leaderboard/dev/dev/", "/c/tiny/leaderboard/eval/eval/?part=private")


@pytest.fixture
def world5(db, tmp_path, settings):
    settings.BOARD_CACHE = True
    (tmp_path / "bundle").mkdir(parents=True)
    (tmp_path / "bundle" / "private.txt").write_text("\n".join(ITEMS[10:]) + "\n")
    w = make_world(tmp_path, eval_quota=500, options={
        "dev": {"board": SEVERAL}, "eval": {"split": {"private": "private.txt"}}})
    from django.contrib.auth import get_user_model
    w["leads"] = {"Team A": w["users"]["alice"], "Team B": w["users"]["bob"]}
    for name in ("Team C", "Team D", "Team E"):
        u = get_user_model().objects.create_user(name.lower().replace(" ", ""), password="x")
        t = Team.objects.create(competition=w["comp"], name=name, lead=u)
        Membership.objects.create(team=t, user=u, status=Membership.APPROVED)
        w["teams"][name], w["leads"][name] = t, u
    return w


def step(w, rng: random.Random, minutes: list) -> str:
    """One random change; returns what it was (for the failure message)."""
    team = rng.choice(sorted(w["teams"]))
    lead = w["leads"][team]
    mine = list(Submission.objects.filter(team=w["teams"][team]).order_by("pk"))
    op = rng.choice(["submit"] * 4 + ["primary", "cancel", "disqualify", "reinstate", "hide",
                                      "show", "factsheet", "note", "rename", "rescore"])
    if op == "submit" or not mine:
        minutes[0] += 1
        ds = w["ds"][rng.choice(["dev", "eval"])]
        service.submit(lead, w["teams"][team], ds,
                       Upload("run.tsv", run_with_accuracy(rng.choice([5, 8, 12, 12, 15, 18]))),
                       primary=rng.random() < 0.2, factsheet={"method": rng.choice("xyz")},
                       now=NOW - dt.timedelta(hours=10) + dt.timedelta(minutes=minutes[0]))
        queue.drain()
        return f"submit {team} {ds.slug}"
    sub = rng.choice(mine)
    org = w["org"]
    if op == "primary":
        service.make_primary(sub, lead)
    elif op == "cancel":
        service.cancel(sub, lead)
    elif op == "disqualify":
        runs.disqualify(sub, org, "late")
    elif op == "reinstate":
        runs.reinstate(sub, org)
    elif op in ("hide", "show"):
        runs.set_on_board(sub, org, op == "show", reason="test")
    elif op == "factsheet":
        runs.edit_factsheet(sub, lead, {"method": rng.choice("xyz")})
    elif op == "note":
        runs.annotate(sub, org, "checked")
    elif op == "rename":
        t = w["teams"][team]
        t.name = f"{team} {rng.randrange(100)}"   # renames move the team in the order
        t.save()
    elif op == "rescore":            # a queryset update: no signal, marks by the queryset
        value = rng.choice([0.1, 0.5, 0.5, 0.9])
        Score.objects.filter(submission=sub).update(primary=value, private_primary=value)
    return f"{op} {team} run {sub.pk}"


def strip(html: str) -> str:
    return re.sub(r'(nonce|value)="[^"]*"', "", html)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_patched_board_equals_a_full_rebuild_after_random_changes(world5, client, settings,
                                                                   monkeypatch, seed):
    w, rng, minutes = world5, random.Random(seed), [0]
    calls, recording = [], [False]         # the teams board_cache.board rebuilt
    entries = boards.entries
    monkeypatch.setattr(board_cache.boards, "entries", lambda *a, teams=None, **k: (
        recording[0] and calls.append(teams), entries(*a, teams=teams, **k))[1])
    checks = [("dev", True, "public"), ("dev", False, "public")] + [
        ("eval", shown, part) for shown in (True, False) for part in ("public", "private")]
    client.force_login(w["org"])
    done = 0
    for i in range(40):
        try:
            what = step(w, rng, minutes)
            done += 1
        except SubmissionError:
            continue
        for slug, shown, part in checks:
            ds = Dataset.objects.select_related("task", "phase").get(pk=w["ds"][slug].pk)
            recording[0] = True
            patched = board_cache.board(ds, shown, part)[:3]
            recording[0] = False
            assert patched == board_cache._build(ds, shown, part), (i, what, slug, shown, part)
        if i % 8 == 7:                  # the page: patched body vs one rendered afresh
            cached = [strip(client.get(p).content.decode()) for p in PAGES]
            settings.BOARD_CACHE = False
            board_html._memo.clear()
            assert cached == [strip(client.get(p).content.decode()) for p in PAGES], (i, what)
            settings.BOARD_CACHE = True
    assert done >= 25
    patches = [c for c in calls if c is not None]
    # most changes rebuilt one team's rows; whole rebuilds for new keys, deletes
    assert len(patches) > len(calls) / 2 and all(len(c) <= 2 for c in patches)
    rows = board_cache.board(Dataset.objects.get(pk=w["ds"]["dev"].pk))[1]
    assert len({r["team"] for r in rows}) >= 3 and len({r["rank"] for r in rows}) >= 3
