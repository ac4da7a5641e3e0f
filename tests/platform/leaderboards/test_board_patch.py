"""A cached board patched team by team (board_cache.py: only the teams whose
mark changed are rebuilt) equals a board built from scratch, after every step
of seeded random sequences of the changes boards read: new runs (scored, with
ties), primary flags, cancellations, disqualification and reinstatement, a run
taken off the board and put back, fact-sheet edits, notes, team renames and
signal-less re-scores; and the dataset-wide changes, which keep the cached
entries (board_cache.py keys them by what they read) and warm the boards
(board_warm.py): a release and its undoing, the blind flag, the task's
metric and direction, the dataset's board options; on a several-runs board with a column choice and on a
one-row-per-team board with a private part, with scores shown and hidden; the
page's table body too. Runs in both server modes (SQLite, PostgreSQL).
"""
from __future__ import annotations

import datetime as dt
import random
import re

import pytest

from shareval.platform.leaderboards import cache as board_cache
from shareval.platform.leaderboards import html as board_html
from shareval.platform.leaderboards import boards
from shareval.platform.competitions.models import (CompetitionTask, Dataset, Membership, Phase,
                                                   Team)
from shareval.platform.submissions import queue, runs, service
from shareval.platform.submissions.service import SubmissionError
from shareval.platform.submissions.models import Score, Submission

from ..factories import ITEMS, Upload, make_world, run_with_accuracy

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


WIDE = ("release", "blind", "direction", "metric", "options")


def wide(w, rng: random.Random, op: str) -> str:
    """A change of a whole dataset, saved as the settings pages save it."""
    ds = Dataset.objects.get(pk=w["ds"][rng.choice(["dev", "eval"])].pk)
    if op in ("release", "blind"):
        ph = Phase.objects.get(pk=ds.phase_id)
        if op == "release":
            ph.released = rng.choice([Phase.HIDDEN, Phase.TOP, Phase.DETAILED])
        else:
            ph.blind = not ph.blind
        ph.save()
        return f"{op} {ph.slug}: {ph.released} blind={ph.blind}"
    if op in ("direction", "metric"):
        task = CompetitionTask.objects.get(pk=ds.task_id)
        if op == "direction":
            task.lower_is_better = not task.lower_is_better
        else:
            task.primary_metric = "accuracy" if task.metric != "accuracy" else \
                rng.choice(["", "f1_macro"])
        task.save()
        return f"{op} {task.lower_is_better} {task.primary_metric!r}"
    ds.board = rng.choice([
        SEVERAL, dict(SEVERAL, max_runs=1), dict(SEVERAL, max_runs=None), {},
        {"runs": "all", "columns": [{"metric": "accuracy", "precision": rng.choice([1, 2])}]},
        {"columns": [{"metric": "accuracy"}, {"metric": "f1_macro", "precision": 2}]}])
    ds.save()
    return f"options {ds.slug} {ds.board}"


def step(w, rng: random.Random, minutes: list, wide_share: float = 0.0) -> str:
    """One random change; returns what it was (for the failure message)."""
    if rng.random() < wide_share:
        return wide(w, rng, rng.choice(WIDE))
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
def test_a_patched_board_equals_a_full_rebuild_after_random_changes(
        world5, client, settings, monkeypatch, django_capture_on_commit_callbacks, seed):
    w, rng, minutes = world5, random.Random(seed), [0]
    calls, recording = [], [None]         # (change, the teams board_cache.board rebuilt)
    entries = boards.entries
    monkeypatch.setattr(board_cache.boards, "entries", lambda *a, teams=None, **k: (
        recording[0] and calls.append((recording[0], teams)), entries(*a, teams=teams, **k))[1])
    checks = [("dev", True, "public"), ("dev", False, "public")] + [
        ("eval", shown, part) for shown in (True, False) for part in ("public", "private")]
    client.force_login(w["org"])
    done = wide_done = 0
    for i in range(60):
        try:
            with django_capture_on_commit_callbacks(execute=True):   # warms, as in production
                what = step(w, rng, minutes, wide_share=0.3)
            done += 1
            wide_done += what.split()[0] in WIDE
        except SubmissionError:
            continue
        for slug, shown, part in checks:
            ds = Dataset.objects.select_related("task", "phase").get(pk=w["ds"][slug].pk)
            recording[0] = what.split()[0]
            patched = board_cache.board(ds, shown, part)[:3]
            recording[0] = None
            assert patched == board_cache._build(ds, shown, part), (i, what, slug, shown, part)
        if i % 8 == 7 or what.split()[0] in WIDE:   # the page: patched body vs one afresh
            cached = [strip(client.get(p).content.decode()) for p in PAGES]
            settings.BOARD_CACHE = False
            board_html._memo.clear()
            assert cached == [strip(client.get(p).content.decode()) for p in PAGES], (i, what)
            settings.BOARD_CACHE = True
    assert done >= 40 and wide_done >= 8
    patches = [c for op, c in calls if c is not None and op not in WIDE]
    # most team changes rebuilt one team's rows; whole rebuilds for new keys, deletes
    assert len(patches) > len([op for op, _ in calls if op not in WIDE]) / 2
    assert all(len(c) <= 2 for c in patches)
    rows = board_cache.board(Dataset.objects.get(pk=w["ds"]["dev"].pk))[1]
    assert len({r["team"] for r in rows}) >= 3 and len({r["rank"] for r in rows}) >= 3


def test_dataset_wide_changes_are_built_when_they_commit(
        world5, client, settings, monkeypatch, django_capture_on_commit_callbacks):
    """After a release, a new direction or new options, the next viewer's request
    builds nothing: the change's commit built the board it asks for (board_warm)."""
    w, rng, minutes = world5, random.Random(3), [0]
    for k in range(6):                  # three runs each of two teams, then random changes
        team = ("Team A", "Team B")[k % 2]
        service.submit(w["leads"][team], w["teams"][team], w["ds"]["eval"],
                       Upload("run.tsv", run_with_accuracy(5 + 2 * k)),
                       now=NOW - dt.timedelta(hours=5 - k))
    queue.drain()
    for _ in range(12):
        try:
            step(w, rng, minutes)
        except SubmissionError:
            pass
    built = []
    entries = boards.entries
    monkeypatch.setattr(board_cache.boards, "entries", lambda *a, teams=None, **k: (
        built.append(teams), entries(*a, teams=teams, **k))[1])
    ev = Dataset.objects.get(pk=w["ds"]["eval"].pk)
    page = "/c/tiny/leaderboard/eval/eval/"
    api = "/api/competitions/tiny/leaderboard/eval/eval/"
    phase, task = Phase.objects.get(pk=ev.phase_id), CompetitionTask.objects.get(pk=ev.task_id)

    def release(level):
        phase.released = level
        phase.save()

    def flip():
        task.lower_is_better = not task.lower_is_better
        task.save()

    def metric():
        task.primary_metric = "accuracy" if task.metric != "accuracy" else "f1_macro"
        task.save()

    def options(board):
        ev.board = board
        ev.save()

    for change, warmed in ((lambda: release(Phase.TOP), True), (flip, True),
                           (lambda: options({"runs": "all", "max_runs": 2}), True),
                           (lambda: options({"runs": "all", "max_runs": 1}), True),
                           (metric, True), (lambda: options({"runs": "all"}), True),
                           (lambda: release(Phase.HIDDEN), True), (flip, False)):
        settings.BOARD_WARM = warmed
        with django_capture_on_commit_callbacks(execute=True):
            change()
        built.clear()
        body = client.get(page).content.decode()
        data = client.get(api).json()
        assert (built == []) is warmed, built
        # what was warmed is what a fresh build gives, scores only once released
        assert ("private" if phase.released != Phase.HIDDEN else "public") == data["part"]
        assert (data["scores"] == "shown") is (phase.released != Phase.HIDDEN)
        settings.BOARD_CACHE = False
        board_html._memo.clear()
        assert strip(body) == strip(client.get(page).content.decode())
        assert data == client.get(api).json()
        settings.BOARD_CACHE = True


def test_a_dataset_save_keeps_a_newer_token(world5):
    """A dataset loaded before a bump and saved after it does not bring back the
    old token, whose rows may be cached (Dataset.save leaves it to bump)."""
    stale = Dataset.objects.get(pk=world5["ds"]["eval"].pk)
    board_cache.bump(board_cache.Q(pk=stale.pk))
    newer = Dataset.objects.get(pk=stale.pk).board_token
    assert newer != stale.board_token
    stale.title = "renamed"
    stale.save()
    fresh = Dataset.objects.get(pk=stale.pk)
    assert (fresh.board_token, fresh.title) == (newer, "renamed")


def test_boards_in_redis_are_shared_by_processes(world5, client, settings, monkeypatch,
                                                 django_capture_on_commit_callbacks):
    """``SHAREVAL_BOARD_CACHE_URL``: the board a release built is found by another
    process (a second cache client on the same Redis database) without a build."""
    import os

    from django.core.cache import caches
    url = os.environ.get("SHAREVAL_TEST_BROKER_URL") or os.environ.get("SHAREVAL_TEST_REDIS")
    if not url or not url.startswith("redis"):
        pytest.skip("no Redis (SHAREVAL_TEST_BROKER_URL)")
    prefix = f"test-boards-{os.getpid()}-{random.randrange(10 ** 9)}"
    settings.CACHES = dict(settings.CACHES, boards={
        "BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url,
        "KEY_PREFIX": prefix})
    w, ev = world5, Dataset.objects.get(pk=world5["ds"]["eval"].pk)
    for k in range(4):
        team = ("Team A", "Team B")[k % 2]
        service.submit(w["leads"][team], w["teams"][team], ev,
                       Upload("run.tsv", run_with_accuracy(5 + 3 * k)), now=NOW)
    queue.drain()
    phase = Phase.objects.get(pk=ev.phase_id)
    phase.released = Phase.TOP
    with django_capture_on_commit_callbacks(execute=True):
        phase.save()
    del caches["boards"]            # a new client: what another server process would open
    built = []
    entries = boards.entries
    monkeypatch.setattr(board_cache.boards, "entries", lambda *a, teams=None, **k: (
        built.append(teams), entries(*a, teams=teams, **k))[1])
    data = client.get("/api/competitions/tiny/leaderboard/eval/eval/").json()
    import redis
    r = redis.Redis.from_url(url)
    keys = list(r.scan_iter(f"{prefix}:*"))
    r.delete(*keys)                 # only this test's keys: the database may be a broker's
    assert built == [] and data["scores"] == "shown" and len(data["rows"]) >= 2
    assert keys


def test_one_warm_up_per_transaction(world5, monkeypatch, django_capture_on_commit_callbacks):
    """Several dataset-wide writes in one transaction (a cascade of deletes) build
    each board once, after the commit; a rolled-back transaction builds nothing."""
    from django.db import transaction

    from shareval.platform.leaderboards import warm as board_warm
    warmed = []
    monkeypatch.setattr(board_warm, "warm", lambda ids: warmed.append(ids))
    ev, dev = (Dataset.objects.get(pk=world5["ds"][s].pk) for s in ("eval", "dev"))
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(3):
            board_cache.bump(board_cache.Q(pk=ev.pk))
        dev.save()
    assert warmed == [sorted([ev.pk, dev.pk])]
    with django_capture_on_commit_callbacks(execute=True):
        try:
            with transaction.atomic():
                ev.save()
                raise RuntimeError
        except RuntimeError:
            pass
        dev.save()
    assert warmed[1:] == [[dev.pk]]
