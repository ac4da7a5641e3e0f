"""The leaderboard's first request after a change, in-process (Django test client),
on a data folder seeded by ``bench/server.py`` (its path is printed after seeding):
after one team's new score (a score rewritten, as scoring does; a different team
each time), after a dataset-wide change made in this process and built when it
commits (``board_warm.py``): a release or its undoing (``feedback: false``, so
scores show only once released) and a flip of the task's direction, each after
a new board token so that nothing is cached (the worst case), the change itself
timed too; and after a new token alone with warming off (as another server
process sees a change: the whole board rebuilt). Prints wall time and the
request's CPU time (``process_time``; on PostgreSQL the database's own CPU is
not in it). Run it with another
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
from shareval.platform.leaderboards.cache import bump  # noqa: E402
from shareval.platform.competitions.models import CompetitionTask, Dataset, Phase  # noqa: E402
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


def change(kind: str, i: int) -> None:
    if kind == "a team's new score":
        Score.objects.filter(pk=picks.pop()).update(primary=F("primary") * 1.0001)
        return
    settings.BOARD_WARM = False
    bump(Q())                        # nothing cached: the board is built from every run
    settings.BOARD_WARM = True
    if kind == "a release (warmed)":
        phase = Phase.objects.get(slug="dev")
        phase.released = Phase.TOP if i % 2 == 0 else Phase.HIDDEN
        phase.save(update_fields=["released"])
    elif kind == "a direction flip (warmed)":
        task = CompetitionTask.objects.get()
        task.lower_is_better = not task.lower_is_better
        task.save()


kinds = ("a team's new score", "a release (warmed)", "a direction flip (warmed)",
         "a new token, not warmed")
for kind in kinds:
    n = n_team if kind.startswith("a team") else n_wide
    Dataset.objects.update(feedback="release" not in kind)
    for name, p in paths.items():
        wall, cpu, made, made_cpu = [], [], [], []
        for i in range(n):
            t, u = time.perf_counter(), time.process_time()
            change(kind, i)
            made.append((time.perf_counter() - t) * 1e3)
            made_cpu.append((time.process_time() - u) * 1e3)
            t, u = time.perf_counter(), time.process_time()
            r = c.get(p)
            wall.append((time.perf_counter() - t) * 1e3)
            cpu.append((time.process_time() - u) * 1e3)
            assert r.status_code == 200
        t, u = time.perf_counter(), time.process_time()
        for _ in range(n):
            c.get(p)
        cached = (time.process_time() - u) / n * 1e3
        print(f"{name:5} first after {kind:27}: n={n} wall p50 "
              f"{statistics.median(wall):7.1f} p95 {pct(wall, .95):7.1f} max {max(wall):7.1f} ms; "
              f"CPU p50 {statistics.median(cpu):7.1f} max {max(cpu):7.1f} ms "
              f"(cached: {cached:.1f} ms CPU; the change itself: wall p50 "
              f"{statistics.median(made):.1f} ms, CPU p50 {statistics.median(made_cpu):.1f} ms)",
              flush=True)
Phase.objects.filter(slug="dev").update(released=Phase.HIDDEN)
Dataset.objects.update(feedback=True)
