"""Judging-page and annotation-page latency on the longest Re-DocRED document (issue 38:
goal p95 <= 100 ms of server time), in-process (Django test client, SQLite in a
temporary home, no network): the kbp-demo competition is built, then a relation item
of the longest document is given to the judge account and the longest document to
the annotator account, and each page is requested REPS times. Prints median, p95 and
p95 over the goal; also the run page with its assessment and the board.

    PYTHONPATH=src python bench/kbp_pages.py [REPS] [--data ../shared/data]
"""
import datetime as dt
import os
import statistics
import sys
import time
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0]) == HERE:
    sys.path.pop(0)
sys.path.append(HERE)
from _pages import arguments, start_django  # noqa: E402
from _timing import pct  # noqa: E402

args, data = arguments(__doc__, "shareval-kbp-pages-")
kbp = data / "kbp" if data else None
if kbp is None or not (kbp / "re-docred-dev.json").is_file():
    print(f"skipped: Re-DocRED is not in {kbp} (../shared/data/kbp)")
    sys.exit(0)
home = start_django()
from django.contrib.auth import get_user_model  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from shareval.formats.errors import Problems  # noqa: E402
from shareval.formats.kbp import read_reference  # noqa: E402
from shareval.platform.demo import ACCOUNTS  # noqa: E402
from shareval.platform.demo_kbp import bundle, server  # noqa: E402
from shareval.platform.judging import build, content, exhaustive_build  # noqa: E402
from shareval.platform.judging.models import Assignment, Item  # noqa: E402


class Quiet:
    def print(self, *a, **k):
        pass


ref = read_reference(kbp, Problems())
longest = max(ref.documents.values(), key=lambda d: len(d.text))
users = {n: get_user_model().objects.create_user(n, password="x", is_staff=o)
         for n, o, _ in ACCOUNTS}
t0 = time.monotonic()
built = server.build_competition(Path(home), kbp, users, timezone.now(), Quiet(),
                                 include=[longest.title])
print(f"kbp-demo built in {time.monotonic() - t0:.1f} s; the longest document: "
      f"{longest.title!r}, {len(longest.text)} characters, "
      f"{sum(map(len, longest.sentences))} tokens")
precision, recall = built["campaigns"]
ds = precision.dataset
res = content.Resources(ds)
doc = res.kbp.documents[longest.title]
units = content.run_units("kbp-relations", built["runs"]["Team Alpha"], res)
key, unit = max(((k, u) for k, u in units.items() if u.doc == longest.title),
                key=lambda ku: ku[0])
item, _ = Item.objects.get_or_create(
    campaign=precision, key=key, drawn_for="bench",
    defaults={"doc": unit.doc, "payload": build.unit_payload("kbp-relations", res, key, unit,
                                                             "default")})
now = timezone.now()
Assignment.objects.filter(judge=users["judge"], status="in_progress").update(status="expired")
Assignment.objects.create(item=item, judge=users["judge"], status="in_progress",
                          deadline=now + dt.timedelta(days=1))
pooled = {}
for path in built["runs"].values():            # every team's mentions: the suggestions
    pooled.update(exhaustive_build.run_mentions(ds, path).get(longest.title, {}))
doc_item, _ = Item.objects.get_or_create(
    campaign=recall, key=longest.title, drawn_for="recall",
    defaults={"doc": longest.title,
              "payload": exhaustive_build.document_payload(doc, res.kbp.relations, pooled)})
Assignment.objects.filter(judge=users["annotator"]).exclude(item=doc_item).delete()
Assignment.objects.get_or_create(item=doc_item, judge=users["annotator"],
                                 defaults={"status": "in_progress",
                                           "deadline": now + dt.timedelta(days=1)})


def timed(user, path: str, expect: str) -> list[float]:
    c = Client()
    c.force_login(user)
    r = c.get(path)
    assert r.status_code == 200 and expect in r.content.decode(), (path, r.status_code)
    out = []
    for _ in range(args.reps):
        t = time.perf_counter()
        c.get(path)
        out.append((time.perf_counter() - t) * 1000)
    return out


sub = built["competition"].phases.get(slug=bundle.PHASE).datasets.get(
    slug=bundle.DATASET).submissions.filter(team__name="Team Gamma").first()
pages = [("judging page (relation item, longest document)", users["judge"],
          f"/judging/{precision.pk}/", longest.title),
         ("annotation page (longest document, its suggestions)", users["annotator"],
          f"/judging/{recall.pk}/", "suggestion"),
         ("run page with its assessment (Team Gamma)", users["carol"], f"/s/{sub.pk}/",
          "Assessment by judges"),
         ("leaderboard (judged F1)", users["alice"],
          f"/c/{bundle.SLUG}/leaderboard/{bundle.PHASE}/{bundle.DATASET}/", "Team Beta")]
print(f"{len(pooled)} suggestions on the annotation page")
print(f"\n{args.reps} requests each, in-process; goal: p95 <= 100 ms\n")
print(f"{'page':<54} {'median ms':>10} {'p95 ms':>8} {'p95/goal':>9}")
for name, user, path, expect in pages:
    ms = timed(user, path, expect)
    p95 = pct(ms, 0.95)
    print(f"{name:<54} {statistics.median(ms):>10.1f} {p95:>8.1f} {p95 / 100:>9.2f}")
