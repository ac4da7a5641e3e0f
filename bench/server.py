"""Server benchmark: every page a user opens, timed against a real server on
127.0.0.1, at 50 teams x 200 runs or at scale (500 teams x 100,000 runs), on
SQLite or PostgreSQL; then concurrent uploads.

    PYTHONPATH=src python bench/server.py [--teams 50] [--runs 200] [--requests 100]
        [--uploads 50] [--port 8100] [--database-url postgres://.../shareval_bench]

Without ``--database-url`` the server uses the embedded SQLite file in a fresh
data folder and its in-process worker. With it, the named PostgreSQL database
is dropped and created afresh (it must be a database of its own: everything in
it is lost), and the server's in-process worker scores the uploads. Steps:

1. seeding: a competition with one classification dataset; ``--teams`` teams of
   one member each; ``--runs`` scored runs per team (each with its score, a
   per-class breakdown and two events) written with ``bulk_create`` in batches,
   so the pages read exactly what scoring would have stored; every team flags
   its best run primary, as teams do. The seeding time is printed.
2. the queries each page makes, counted in-process (Django test client and
   ``CaptureQueriesContext``) as the team member, organizer or visitor who opens it;
3. ``shareval server run`` as a subprocess (waitress, 8 threads);
4. each page ``--requests`` times, sequentially, with the session cookie of the
   user who opens it: p50/p95/max latency and the server's CPU time per request
   (on a shared machine latency includes waiting for a core; CPU time does
   not); the leaderboard again with scores hidden
   (``feedback: false``), and the leaderboard's first request after a change
   (:func:`after_a_change`): after one team's new score (its rows patched),
   after a release made through the server (the board built when it commits)
   and after a new token written by another process (the whole board rebuilt);
   ``--json FILE`` writes the table; ``--pages WORD`` times only the pages whose
   label holds WORD (and the trivial endpoint);
5. ``--uploads`` uploads at once, one per team, through the REST API
   (``shareval.client.submit``): errors, wall time, and the time until every
   one is scored (``--uploads 0`` skips this).

``--reuse DIR`` runs the pages again on the data folder (and ``--database-url``)
an earlier run seeded, migrated to the code on ``PYTHONPATH``: a before/after
of a change on the same data, without seeding 100,000 runs twice.

The results CSV export (every score of the competition, 100,000 rows at scale)
is a download, not a page, and is not timed here.
"""
from __future__ import annotations

import os
import sys

# This file is named as the issue asks, which shadows the standard library's
# `platform` module for anything imported from this folder: drop the folder.
HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0]) == HERE:
    sys.path.pop(0)
sys.path.append(HERE)          # last: for _timing, after the standard library

import argparse
import concurrent.futures as cf
import datetime as dt
import json
import random
import statistics
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from _pages import session_for  # noqa: E402  (bench/, appended above)
from _timing import pct  # noqa: E402

ITEMS = [f"i{k:03d}" for k in range(200)]
LABELS = ["pos", "neg", "neu"]
BATCH = 5000


def tsv(labels):
    return "item\tlabel\n" + "".join(f"{i}\t{l}\n" for i, l in labels.items())


def fresh_postgres(url: str) -> None:
    """Drop and create the database named in ``url`` (connecting to ``postgres``)."""
    import psycopg
    base, name = url.rsplit("/", 1)
    with psycopg.connect(base + "/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def build(home: Path, teams: int, runs: int, seed: int = 0) -> dict:
    import yaml
    rng = random.Random(seed)
    gold = {i: rng.choice(LABELS) for i in ITEMS}
    b = home / "bundle"
    b.mkdir(parents=True)
    (b / "gold.tsv").write_text(tsv(gold))
    now = dt.datetime.now(dt.timezone.utc)
    (b / "bundle.yaml").write_text(yaml.safe_dump({
        "slug": "bench", "title": "Benchmark",
        "description": "A **benchmark** competition: `labels` for 200 items.",
        "tasks": [{"slug": "labels", "task": "classification"}],
        "phases": [{"slug": "dev", "title": "Dev", "start": (now - dt.timedelta(days=1)).isoformat(),
                    "end": (now + dt.timedelta(days=30)).isoformat(), "datasets": [
                        {"slug": "dev", "task": "labels", "reference": "gold.tsv",
                         "quotas": [{"limit": 100000, "window": "week"}]}]}]}))
    os.environ["SHAREVAL_HOME"] = str(home)
    import shareval.platform as platform
    platform.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.core.management import call_command

    from shareval.platform.accounts.models import ApiToken
    from shareval.platform.bundles.loader import load_bundle
    from shareval.platform.competitions.models import Membership, Team
    from shareval.platform.submissions.models import Score, Submission, SubmissionEvent
    call_command("migrate", verbosity=0)
    User = get_user_model()
    org = User.objects.create_user("org", password="x", is_staff=True)
    comp, _ = load_bundle(b, org)
    ds = comp.phases.get().datasets.get()
    task = ds.task.registry_task
    hashed = make_password("x")                 # one hash: hashing 500 passwords takes minutes
    users = User.objects.bulk_create([User(username=f"user{t}", password=hashed)
                                      for t in range(teams)], batch_size=BATCH)
    team_rows = Team.objects.bulk_create([Team(competition=comp, name=f"Team {t:03d}", lead=u)
                                          for t, u in enumerate(users)], batch_size=BATCH)
    Membership.objects.bulk_create([Membership(team=tm, user=u, status=Membership.APPROVED)
                                    for tm, u in zip(team_rows, users)], batch_size=BATCH)
    per_class = lambda acc: {c: {"precision": acc, "recall": acc * 0.9, "f1": acc * 0.95,  # noqa
                                 "support": 60 + k} for k, c in enumerate(LABELS)}
    confusion = {t: {p: 20 + 5 * (t == p) for p in LABELS} for t in LABELS}
    first_run = {}
    for t, (team, u) in enumerate(zip(team_rows, users)):
        subs, scores, events = [], [], []
        accs = [rng.random() for _ in range(runs)]
        best = max(range(runs), key=accs.__getitem__)
        for r in range(runs):
            created = now - dt.timedelta(minutes=r + t / 1000)
            s = Submission(team=team, dataset=ds, user=u, stored_name=f"none-{t}-{r}",
                           original_name=f"run{r}.tsv", state=Submission.SCORED, created=created,
                           kind=Submission.PRIMARY if r == best else Submission.CONTRASTIVE)
            subs.append(s)
            acc = accs[r]
            metrics = {"accuracy": acc, **{f"{m}_{avg}": acc * f for avg in (
                "micro", "macro", "weighted") for m, f in (("precision", 0.95), ("recall", 0.85),
                                                          ("f1", 0.9))}}
            scores.append(Score(submission=s, scorer_version=task.scorer_version,
                                reference_digest=ds.reference_digest, primary=acc * 0.9,
                                created=created, result={
                                    "metrics": metrics, "counts": {"items": len(ITEMS),
                                                                   "classes": len(LABELS)},
                                    "breakdowns": {"per_class": per_class(acc),
                                                   "confusion_matrix": confusion}}))
            events += [SubmissionEvent(submission=s, state=Submission.QUEUED, at=created),
                       SubmissionEvent(submission=s, state=Submission.SCORED, at=created)]
        first_run[t] = subs[0].pk
        Submission.objects.bulk_create(subs, batch_size=BATCH)
        Score.objects.bulk_create(scores, batch_size=BATCH)
        SubmissionEvent.objects.bulk_create(events, batch_size=BATCH)
    upload = home / "upload.tsv"
    upload.write_text(tsv({i: rng.choice(LABELS) for i in ITEMS}))
    return {"tokens": [], "users": users, "org": org, "run": first_run[0], "upload": upload,
            "issue": lambda n: [ApiToken.issue(u, "bench")[1] for u in users[:n]]}


def reopen(home: Path) -> dict:
    """A data folder (and database) seeded by an earlier run (``--reuse``), migrated
    to this code: the same pages on the same data, e.g. before and after a change."""
    os.environ["SHAREVAL_HOME"] = str(home)
    import shareval.platform as platform
    platform.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from shareval.platform.accounts.models import ApiToken
    from shareval.platform.submissions.models import Submission
    call_command("migrate", verbosity=0)
    User = get_user_model()
    users = list(User.objects.filter(username__startswith="user").order_by("pk"))
    run = Submission.objects.get(stored_name="none-0-0").pk
    return {"users": users, "org": User.objects.get(username="org"), "run": run,
            "upload": home / "upload.tsv",
            "issue": lambda n: [ApiToken.issue(u, "bench")[1] for u in users[:n]]}


def pages(run) -> list[tuple[str, str, str]]:
    """(label, path, who) for every page a user opens; who: anon, member, org."""
    lb = "/c/bench/leaderboard/dev/dev/"
    return [("trivial endpoint /api/competitions/", "/api/competitions/", "anon"),
            ("home /", "/", "anon"),
            ("competition page", "/c/bench/", "member"),
            ("leaderboard page (HTML)", lb, "anon"),
            ("leaderboard API (JSON)", "/api" + lb.replace("/c/", "/competitions/"), "anon"),
            ("result page (team member)", f"/s/{run}/", "member"),
            ("result API (team member)", f"/api/submissions/{run}/", "member"),
            ("my runs /c/bench/submissions/", "/c/bench/submissions/", "member"),
            ("my runs API /api/submissions/", "/api/submissions/?competition=bench", "member"),
            ("submit page", "/c/bench/submit/", "member"),
            ("team page", "/c/bench/team/", "member"),
            ("API tokens page", "/accounts/tokens/", "member"),
            ("organizer dashboard", "/c/bench/organize/", "org"),
            ("organizer: result page", f"/s/{run}/", "org"),
            ("organizer: leaderboard page", lb, "org"),
            ("organizer: judging campaigns", "/c/bench/organize/campaigns/", "org")]


def count_queries(plist, users) -> dict[str, int]:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    clients = {"anon": Client()}
    for who, u in users.items():
        clients[who] = Client()
        clients[who].force_login(u)
    out = {}
    for label, path, who in plist:
        with CaptureQueriesContext(connection) as q:
            r = clients[who].get(path)
        assert r.status_code == 200, (path, r.status_code)
        out[label] = len(q)
    return out


def latencies(url: str, n: int, cookie: str | None) -> list[float]:
    out = []
    headers = {"Cookie": f"sessionid={cookie}"} if cookie else {}
    for _ in range(n):
        t = time.perf_counter()
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                    timeout=120) as r:
            r.read()
            assert r.status == 200, url
        out.append(time.perf_counter() - t)
    return out


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) used so far by process ``pid`` (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def post(url: str, data: dict, token: str) -> None:
    req = urllib.request.Request(url, data=json.dumps(data).encode(), method="POST", headers={
        "Authorization": f"Token {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as r:
        r.read()
        assert r.status == 200, url


CHANGES = ("a team's new score", "a release (warmed)", "a new token by another process")


def after_a_change(base, lb, cookies, n: int, pid: int, org_token: str | None) -> list[dict]:
    """The leaderboard's first request after a change, each request preceded by a
    change: a team's new score (one team's current score rewritten, as scoring a
    run does; a different team each time: its rows patched); a release or its
    undoing made through the server by the organizer (``POST
    /api/competitions/bench/release/dev/``, top and hidden in turn, with
    ``feedback: false`` so that scores show only once released), each preceded by
    a new board token so that the server holds nothing for the board (the worst
    case: a board never built before), which the server builds when the release
    commits (``board_warm.py``): the release request itself is timed too; and a
    new board token written by this process, as another server process or a
    script would (a delete): nothing warmed, the whole board rebuilt at the first
    request."""
    from django.conf import settings
    from django.db.models import F, Q

    from shareval.platform.competitions.models import Dataset
    from shareval.platform.submissions.models import Score
    try:
        from shareval.platform.leaderboards.cache import bump
    except ImportError:                                      # code without the cache
        return []
    settings.BOARD_WARM = False              # this process's bumps build nothing here
    scores = list(Score.objects.filter(current=True).order_by("submission__team_id", "pk")
                  .distinct().values_list("submission__team_id", "pk"))
    one = {}
    for team, pk in scores:
        one.setdefault(team, pk)
    picks = random.Random(1).sample(sorted(one.values()), min(len(one), 2 * n * len(lb)))
    out = []
    for change in CHANGES:
        if change == CHANGES[1] and not org_token:
            continue
        Dataset.objects.update(feedback=change != CHANGES[1])
        for label, path, who in lb:
            xs, made, cpu, made_cpu = [], [], 0.0, 0.0
            for i in range(n):
                if change == CHANGES[0]:
                    Score.objects.filter(pk=picks.pop()).update(primary=F("primary") * 1.0001)
                else:
                    bump(Q())
                if change == CHANGES[1]:
                    c, t = cpu_seconds(pid), time.perf_counter()
                    post(base + "/api/competitions/bench/release/dev/",
                         {"level": "top" if i % 2 == 0 else "hidden"}, org_token)
                    made.append(time.perf_counter() - t)
                    made_cpu += cpu_seconds(pid) - c
                c = cpu_seconds(pid)
                xs += latencies(base + path, 1, cookies[who])
                cpu += cpu_seconds(pid) - c
            out.append({"page": f"{label}, first after {change}", "who": who, "queries": None,
                        "p50": statistics.median(xs) * 1e3, "p95": pct(xs, 0.95) * 1e3,
                        "max": max(xs) * 1e3, "cpu": cpu / n * 1e3})
            if made:
                out.append({"page": f"  (the release request itself, before {label})",
                            "who": "org", "queries": None,
                            "p50": statistics.median(made) * 1e3, "p95": pct(made, 0.95) * 1e3,
                            "max": max(made) * 1e3, "cpu": made_cpu / n * 1e3})
        if change == CHANGES[1]:
            post(base + "/api/competitions/bench/release/dev/", {"level": "hidden"}, org_token)
    Dataset.objects.update(feedback=True)
    return out


def uploads(base, tokens, upload) -> bool:
    from shareval.client import request, submit
    n = len(tokens)
    t = time.perf_counter()
    with cf.ThreadPoolExecutor(n) as ex:
        results = list(ex.map(lambda tok: submit(base, tok, upload, "bench", "dev", "labels"),
                              tokens))
    wall = time.perf_counter() - t
    codes = [c for c, _ in results]
    ids = [(tokens[i], b["id"]) for i, (c, b) in enumerate(results) if c == 201]
    errors = len(codes) - len(ids)
    t2 = time.perf_counter()
    pending = dict(ids)
    while pending and time.perf_counter() - t2 < 600:
        for tok, sid in list(pending.items()):
            c, body = request(base, "GET", f"/api/submissions/{sid}/", tok)
            if c == 200 and body["state"] in ("scored", "failed"):
                pending.pop(tok)
        time.sleep(0.2)
    scored = time.perf_counter() - t
    print(f"\n{n} concurrent uploads (one per team, {upload.stat().st_size} bytes each): "
          f"{len(ids)} accepted, {errors} errors {sorted(set(codes))}, wall {wall:.2f} s, "
          f"{n / wall:.1f} uploads/s; all scored {scored:.2f} s after the first upload "
          f"({len(pending)} not scored)")
    return errors == 0 and not pending


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--teams", type=int, default=50)
    ap.add_argument("--runs", type=int, default=200, help="scored runs per team")
    ap.add_argument("--requests", type=int, default=100, help="sequential requests per page")
    ap.add_argument("--uploads", type=int, default=50)
    ap.add_argument("--port", type=int, default=8100)
    ap.add_argument("--database-url", help="a PostgreSQL database of its own (dropped and "
                    "created afresh); default: SQLite in a fresh data folder")
    ap.add_argument("--json", type=Path, help="write the table here")
    ap.add_argument("--reuse", type=Path, help="the data folder of an earlier run (printed "
                    "after seeding; with its --database-url and --teams/--runs): no seeding")
    ap.add_argument("--pages", help="only the pages whose label holds this word")
    a = ap.parse_args()
    home = a.reuse or Path(tempfile.mkdtemp(prefix="shareval-bench-"))
    if a.database_url:
        if not a.reuse:
            fresh_postgres(a.database_url)
        os.environ["SHAREVAL_DATABASE_URL"] = a.database_url
    db = "PostgreSQL" if a.database_url else "SQLite"
    t0 = time.perf_counter()
    seeded = reopen(home) if a.reuse else build(home, a.teams, a.runs)
    seeding = time.perf_counter() - t0
    print(f"{db}: {'reopened' if a.reuse else 'seeded'} {a.teams} teams x {a.runs} scored "
          f"runs = {a.teams * a.runs} submissions in {seeding:.1f} s ({home})")
    tokens = seeded["issue"](min(a.uploads, a.teams))
    users = {"member": seeded["users"][0], "org": seeded["org"]}
    cookies = {"anon": None, **{who: session_for(u) for who, u in users.items()}}
    plist = [p for p in pages(seeded["run"])
             if not a.pages or a.pages in p[0] or p[0].startswith("trivial")]
    queries = count_queries(plist, users)
    env = dict(os.environ, SHAREVAL_HOME=str(home), SHAREVAL_LOG="WARNING")
    server = subprocess.Popen([sys.executable, "-m", "shareval.cli", "server", "run", "--port",
                               str(a.port)], env=env, stdout=open(home / "server.log", "w"),
                              stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{a.port}"
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(base + "/api/competitions/", timeout=2).read()
                break
            except OSError:
                time.sleep(0.1)
        from shareval.platform.competitions.models import Dataset
        lb = [p for p in plist if p[0].startswith("leaderboard")]
        rows = []
        for label, path, who, feedback in ([(*p, True) for p in plist] + [
                # the same board with scores hidden (feedback: false), as before a release
                (lbl.replace("leaderboard", "hidden-score leaderboard"), path, who, False)
                for lbl, path, who in lb]):
            if Dataset.objects.filter(feedback=not feedback).exists():
                Dataset.objects.update(feedback=feedback)
            latencies(base + path, 5, cookies[who])                  # warm-up
            cpu = cpu_seconds(server.pid)
            xs = latencies(base + path, a.requests, cookies[who])
            cpu = (cpu_seconds(server.pid) - cpu) / a.requests
            rows.append({"page": label, "who": who, "queries": queries.get(label),
                         "p50": statistics.median(xs) * 1e3, "p95": pct(xs, 0.95) * 1e3,
                         "max": max(xs) * 1e3, "cpu": cpu * 1e3})
        Dataset.objects.update(feedback=True)
        from shareval.platform.accounts.models import ApiToken
        org_token = ApiToken.issue(seeded["org"], "bench-org")[1]
        rows += after_a_change(base, lb, cookies, min(a.requests, 20), server.pid, org_token)
        print(f"\n{db}, {a.teams} teams x {a.runs} runs = {a.teams * a.runs} submissions; "
              f"{a.requests} sequential requests per page:")
        w = max(len(r["page"]) for r in rows) + 1
        print(f"{'page':<{w}}{'as':>7}{'queries':>9}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}"
              f"{'cpu ms':>9}")
        for r in rows:
            q = r["queries"] if r["queries"] is not None else ""
            print(f"{r['page']:<{w}}{r['who']:>7}{q:>9}"
                  f"{r['p50']:>9.1f}{r['p95']:>9.1f}{r['max']:>9.1f}"
                  f"{r['cpu'] if 'cpu' in r else float('nan'):>9.1f}")
        print("cpu ms: the server process's CPU time per request (the database's own, on "
              "PostgreSQL, not included): what a request costs whatever else the machine runs")
        worst = max((r for r in rows if "first after" not in r["page"]
                     and not r["page"].startswith("  (")),
                    key=lambda r: r["p95"])
        print(f"worst p95 of the pages: {worst['page']} {worst['p95']:.1f} ms (target <= 100 ms: "
              f"{'met' if worst['p95'] <= 100 else 'NOT met'})")
        misses = [r for r in rows if "first after" in r["page"]]
        if misses:
            miss = max(misses, key=lambda r: r["p95"])
            print(f"worst p95 of a cache miss: {miss['page']} {miss['p95']:.1f} ms (target "
                  f"<= 100 ms: {'met' if miss['p95'] <= 100 else 'NOT met'})")
        if a.json:
            a.json.write_text(json.dumps({"database": db, "teams": a.teams, "runs": a.runs,
                                          "seeding_s": seeding, "requests": a.requests,
                                          "rows": rows}, indent=1))
        ok = uploads(base, tokens, seeded["upload"]) if tokens else True
        return 0 if ok else 1
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    sys.exit(main())
