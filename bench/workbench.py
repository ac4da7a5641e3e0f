"""Annotation workbench latency on the longest shared RCC publication (issue 39: goal
server time p95 <= 100 ms), in-process (Django test client, SQLite in a temporary
home, no network). A project of that publication (a unit per data set pair the
reference and the linker give, suggestions on) is made; an annotator opens the unit
page, loads its state (first and last page of the text), searches the catalog and
saves one annotation, REPS times each. Prints median, p95 and p95 over the goal.

    PYTHONPATH=src python bench/workbench.py [REPS] [--data ../shared/data]
"""
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0]) == HERE:
    sys.path.pop(0)
sys.path.append(HERE)
from _pages import arguments, start_django  # noqa: E402
from _timing import pct  # noqa: E402

args, data = arguments(__doc__, "shareval-workbench-")
texts = data / "rcc" / "train" / "texts" if data else None
if texts is None or not texts.is_dir():
    print(f"skipped: the RCC texts are not in {texts} (../shared/data/rcc/train/texts)")
    sys.exit(0)
start_django()
from django.contrib.auth import get_user_model  # noqa: E402
from django.test import Client  # noqa: E402

from shareval.platform.competitions.models import Competition  # noqa: E402
from shareval.platform.workbench import service, sources  # noqa: E402
from shareval.platform.workbench.models import Assignment  # noqa: E402

longest = max(texts.glob("*.json"), key=lambda p: p.stat().st_size).stem
User = get_user_model()
org = User.objects.create_user("organizer", password="x", is_staff=True)
ann = User.objects.create_user("annotator", password="x")
comp = Competition.objects.create(slug="bench", title="Bench")
comp.organizers.add(org)
t0 = time.monotonic()
pr = service.create_project(comp, "gold", "Gold", "rcc-publications", org)
n = sources.load_rcc(pr, texts, [longest], data / "rcc" / "catalog" / "dataset_text_dict.json",
                     data / "rcc" / "train" / "data_set_citations.json")
service.assign(pr, [ann])
unit = pr.units.get()
a = Assignment.objects.get(unit=unit, user=ann)
print(f"publication {longest}: {len(unit.text)} characters, {n['entries']} catalog entries, "
      f"{n['suggestions']} suggestions; project made in {time.monotonic() - t0:.1f} s")
c = Client()
c.force_login(ann)
base = f"/c/bench/workbench/gold/u/{unit.pk}/"
last = service.unit_state(a)["unit"]["pages"] - 1


def timed(fn):
    out = []
    for _ in range(args.reps):
        t = time.perf_counter()
        r = fn()
        out.append((time.perf_counter() - t) * 1000)
        assert r.status_code == 200, (r.status_code, r.content[:300])
    return out


version = [a.version]
saved = [0]


def save():
    saved[0] += 1
    i = saved[0]
    r = c.post(base + "ops", json.dumps({"version": version[0], "ops": [
        {"op": "add", "kind": "span", "begin": i * 10, "end": i * 10 + 5}]}),
        content_type="application/json")
    version[0] = r.json()["version"] if r.status_code == 200 else version[0]
    return r


times = {}
for name, fn in (("unit page (HTML)", lambda: c.get(base)),
                 ("state, first page", lambda: c.get(base + "state")),
                 (f"state, last page ({last + 1} pages)", lambda: c.get(f"{base}state?page={last}")),
                 ("catalog search 'national survey'",
                  lambda: c.get("/c/bench/workbench/gold/entries?q=national+survey")),
                 ("save one annotation", save)):
    times[name] = []
    times[name] = timed(fn)
print(f"{'request':<40} {'median ms':>10} {'p95 ms':>8} {'p95/goal':>9}")
for name, xs in times.items():
    print(f"{name:<40} {statistics.median(xs):>10.1f} {pct(xs, 0.95):>8.1f} "
          f"{pct(xs, 0.95) / 100:>9.2f}")
