"""Server benchmark: leaderboard latency at 50 teams x 200 submissions, and 50
concurrent uploads, against a real server started on 127.0.0.1.

    python bench/platform.py [--teams 50] [--runs 200] [--requests 200] [--uploads 50]

Set SHAREVAL_DATABASE_URL (and SHAREVAL_BROKER_URL with a running
``shareval server worker``) to measure PostgreSQL/Celery instead of the embedded
SQLite + in-process worker. Steps, all in one run:

1. a fresh data folder; a competition with one classification dataset; teams x
   runs submissions with scores written straight to the database (bulk insert:
   the leaderboard reads exactly what scoring would have stored);
2. ``shareval server run`` as a subprocess (waitress, 8 threads);
3. GET the leaderboard page (HTML) and its API (JSON) ``--requests`` times
   each, sequentially, with scores shown and then hidden (the dataset switched
   to ``feedback: false``); p50/p95/max latency; the ratio to a trivial endpoint
   (``/api/competitions/``) measured the same way shows the leaderboard's own cost;
4. ``--uploads`` uploads at once, one per team, through the REST API
   (``shareval.client.submit``): errors, wall time, uploads/s, and the time
   until every one is scored.
"""
from __future__ import annotations

import os
import sys

# This file is named as the issue asks, which shadows the standard library's
# `platform` module for anything imported from this folder: drop the folder.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)

import argparse
import concurrent.futures as cf
import datetime as dt
import random
import statistics
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

ITEMS = [f"i{k:03d}" for k in range(200)]
LABELS = ["pos", "neg", "neu"]


def tsv(labels):
    return "item\tlabel\n" + "".join(f"{i}\t{l}\n" for i, l in labels.items())


def build(home: Path, teams: int, runs: int, seed: int = 0):
    import yaml
    rng = random.Random(seed)
    gold = {i: rng.choice(LABELS) for i in ITEMS}
    b = home / "bundle"
    b.mkdir(parents=True)
    (b / "gold.tsv").write_text(tsv(gold))
    now = dt.datetime.now(dt.timezone.utc)
    (b / "bundle.yaml").write_text(yaml.safe_dump({
        "slug": "bench", "title": "Benchmark", "tasks": [{"slug": "labels", "task": "classification"}],
        "phases": [{"slug": "dev", "title": "Dev", "start": (now - dt.timedelta(days=1)).isoformat(),
                    "end": (now + dt.timedelta(days=30)).isoformat(), "datasets": [
                        {"slug": "dev", "task": "labels", "reference": "gold.tsv",
                         "quotas": [{"limit": 100000, "window": "week"}]}]}]}))
    os.environ["SHAREVAL_HOME"] = str(home)
    import shareval.platform as platform
    platform.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from shareval.platform.accounts.models import ApiToken
    from shareval.platform.competitions.bundle import load_bundle
    from shareval.platform.competitions.models import Membership, Team
    from shareval.platform.submissions.models import Score, Submission
    call_command("migrate", verbosity=0)
    User = get_user_model()
    org = User.objects.create_user("org", password="x", is_staff=True)
    comp, _ = load_bundle(b, org)
    ds = comp.phases.get().datasets.get()
    task = ds.task.registry_task
    tokens = []
    subs, scores = [], []
    for t in range(teams):
        u = User.objects.create_user(f"user{t}", password="x")
        team = Team.objects.create(competition=comp, name=f"Team {t:02d}", lead=u)
        Membership.objects.create(team=team, user=u, status=Membership.APPROVED)
        tokens.append(ApiToken.issue(u, "bench")[1])
        for r in range(runs):
            s = Submission(team=team, dataset=ds, user=u, stored_name=f"none-{t}-{r}",
                           original_name="run.tsv", state=Submission.SCORED,
                           created=now - dt.timedelta(minutes=r))
            subs.append(s)
            acc = rng.random()
            metrics = {"accuracy": acc, "f1_macro": acc * 0.9, "precision_macro": acc * 0.95,
                       "recall_macro": acc * 0.85}
            scores.append(Score(submission=s, scorer_version=task.scorer_version,
                                reference_digest=ds.reference_digest, primary=acc * 0.9,
                                result={"metrics": metrics, "breakdowns": {}}))
    Submission.objects.bulk_create(subs, batch_size=2000)
    Score.objects.bulk_create(scores, batch_size=2000)
    upload = home / "upload.tsv"
    upload.write_text(tsv({i: rng.choice(LABELS) for i in ITEMS}))
    return tokens, upload


def latencies(url: str, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        with urllib.request.urlopen(url, timeout=60) as r:
            r.read()
        out.append(time.perf_counter() - t)
    return out


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--teams", type=int, default=50)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--uploads", type=int, default=50)
    ap.add_argument("--port", type=int, default=8765)
    a = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="shareval-bench-"))
    t0 = time.perf_counter()
    tokens, upload = build(home, a.teams, a.runs)
    print(f"built {a.teams} teams x {a.runs} scored submissions in "
          f"{time.perf_counter() - t0:.1f} s ({home})")
    env = dict(os.environ, SHAREVAL_HOME=str(home), SHAREVAL_LOG="WARNING")
    server = subprocess.Popen([sys.executable, "-m", "shareval.cli", "server", "run", "--port",
                               str(a.port)], env=env, stdout=open(home / "server.log", "w"),
                              stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{a.port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(base + "/api/competitions/", timeout=2).read()
                break
            except OSError:
                time.sleep(0.1)
        rows = []
        from shareval.platform.competitions.models import Dataset
        page, api = "/c/bench/leaderboard/dev/dev/", "/api/competitions/bench/leaderboard/dev/dev/"
        for label, path, feedback in (
                ("trivial endpoint /api/competitions/", "/api/competitions/", True),
                ("leaderboard page (HTML)", page, True), ("leaderboard API (JSON)", api, True),
                # the same board with scores hidden (feedback: false), as before a release
                ("hidden-score page (HTML)", page, False), ("hidden-score API (JSON)", api, False)):
            Dataset.objects.update(feedback=feedback)
            latencies(base + path, 5)                       # warm-up
            xs = latencies(base + path, a.requests)
            rows.append((label, statistics.median(xs), pct(xs, 0.95), max(xs)))
        Dataset.objects.update(feedback=True)
        triv = rows[0][1]
        print(f"\nLatency over {a.requests} sequential requests "
              f"({a.teams} teams x {a.runs} submissions = {a.teams * a.runs} scores):")
        print(f"{'endpoint':<40}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'p50/trivial':>13}")
        for label, p50, p95, mx in rows:
            print(f"{label:<40}{p50 * 1e3:>9.1f}{p95 * 1e3:>9.1f}{mx * 1e3:>9.1f}"
                  f"{p50 / triv:>13.1f}")

        from shareval.client import request, submit
        n = min(a.uploads, len(tokens))
        t = time.perf_counter()
        with cf.ThreadPoolExecutor(n) as ex:
            results = list(ex.map(lambda tok: submit(base, tok, upload, "bench", "dev", "labels"),
                                  tokens[:n]))
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
        return 0 if errors == 0 and not pending else 1
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    sys.exit(main())
