"""The leaderboard's first request after a change, in-process (Django test client),
on a data folder seeded by ``bench/server.py`` (its path is printed after seeding):
after one team's new score (a score rewritten, as scoring does; a different team
each time) and after a dataset-wide change (a new board token, as a release
gives). Prints wall time and the request's CPU time (``process_time``; on
PostgreSQL the database's own CPU is not in it). Run it with another
``PYTHONPATH`` for a before/after on the same data.

    PYTHONPATH=src python bench/board_rebuild.py DATA_FOLDER [TEAM_CHANGES] [WIDE_CHANGES]
    (with SHAREVAL_DATABASE_URL=... for a PostgreSQL bench database)
"""
import os
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0]) == HERE:
    sys.path.pop(0)            # bench/server.py shadows the standard library's platform
sys.path.append(HERE)
os.environ["SHAREVAL_HOME"] = sys.argv[1]
os.environ.setdefault("SHAREVAL_LOG", "WARNING")
import shareval.platform as platform  # noqa: E402
from _timing import pct  # noqa: E402

platform.setup()
from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db.models import F, Q  # noqa: E402
from django.test import Client  # noqa: E402

call_command("migrate", verbosity=0)
settings.ALLOWED_HOSTS = ["*"]
settings.BOARD_CACHE = True
from shareval.platform.competitions.board_cache import bump  # noqa: E402
from shareval.platform.submissions.models import Score  # noqa: E402

n_team = int(sys.argv[2]) if len(sys.argv) > 2 else 6
n_wide = int(sys.argv[3]) if len(sys.argv) > 3 else 4
one = {}
for team, pk in Score.objects.filter(current=True).order_by("submission__team_id", "pk") \
        .values_list("submission__team_id", "pk"):
    one.setdefault(team, pk)
picks = random.Random(7).sample(sorted(one.values()), 2 * n_team)
c = Client()
paths = {"page": "/c/bench/leaderboard/dev/dev/",
         "API": "/api/competitions/bench/leaderboard/dev/dev/"}
for p in paths.values():
    assert c.get(p).status_code == 200
for change, n in (("a team's new score", n_team), ("a dataset-wide change", n_wide)):
    for name, p in paths.items():
        wall, cpu = [], []
        for _ in range(n):
            if change.startswith("a team"):
                Score.objects.filter(pk=picks.pop()).update(primary=F("primary") * 1.0001)
            else:
                bump(Q())
            t, u = time.perf_counter(), time.process_time()
            r = c.get(p)
            wall.append((time.perf_counter() - t) * 1e3)
            cpu.append((time.process_time() - u) * 1e3)
            assert r.status_code == 200
        t, u = time.perf_counter(), time.process_time()
        for _ in range(n):
            c.get(p)
        cached = (time.process_time() - u) / n * 1e3
        print(f"{name:5} first after {change:22}: n={n} wall p50 "
              f"{statistics.median(wall):7.1f} p95 {pct(wall, .95):7.1f} max {max(wall):7.1f} ms; "
              f"CPU p50 {statistics.median(cpu):7.1f} max {max(cpu):7.1f} ms "
              f"(cached: {cached:.1f} ms CPU)", flush=True)
