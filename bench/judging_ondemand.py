"""On-demand evaluation in the server, on the demo's SV-Ident data.

    PYTHONPATH=src python bench/judging_ondemand.py [--reps 200] [--home DIR]

1. Builds the demo (``make demo``'s competition, in ``--home``, default a
   temporary folder) and answers every item of its SV-Ident campaign
   truthfully (from the hidden reference's ``is_variable``), 1 judge per item,
   6 seconds each.
2. Adds a late submission (Team Gamma: a third keyword rule) with a target
   half-width of 0.05 and answers its items truthfully until it is done;
   prints the estimate, its interval, the true precision, the draws, the new
   and reused judgments and the cost.
3. Coverage: repeats step 2 ``--reps`` times (a different seed each time,
   each repetition rolled back) and reports how often the 95% interval holds
   the true precision, with the mean half-width, bias and judgments.
"""
from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

GAMMA = re.compile(r"\b(survey|Umfrage|data|Daten|interview\w*|measured|Skala|scale)\b", re.I)


class Rollback(Exception):
    pass


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--home", default=None)
    ap.add_argument("--half-width", type=float, default=0.05)
    ap.add_argument("--pilot", type=int, default=50)
    a = ap.parse_args()
    home = Path(a.home or tempfile.mkdtemp(prefix="shareval-ondemand-"))
    from shareval.platform import setup
    setup(SHAREVAL_HOME=home)
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django.utils import timezone
    from rich.console import Console

    from shareval.platform.competitions.models import Membership, Team
    from shareval.platform.demo import run_demo_server
    from shareval.platform.judging import costs, ondemand
    from shareval.platform.judging.models import Assignment, Campaign, Item
    from shareval.platform.submissions import service as subs
    from shareval.platform.submissions.queue import drain

    run_demo_server(argparse.Namespace(data=None, host="127.0.0.1", port=8200, no_serve=True),
                    Console(quiet=True))
    camp = Campaign.objects.get(design=Campaign.CHAIN, dataset__slug="svident-dev")
    ref = camp.dataset.reference_file
    truth = {r["uuid"]: int(r["is_variable"]) for r in
             csv.DictReader(open(ref, encoding="utf-8"), delimiter="\t")}
    judge = get_user_model().objects.get(username="judge")

    def answer_open(c) -> int:
        """Every item short of its judgment gets the truthful one (6 s)."""
        now = timezone.now()
        todo = Item.objects.filter(campaign=c).exclude(assignments__status=Assignment.DONE)
        Assignment.objects.bulk_create([Assignment(
            item=i, judge=judge, status=Assignment.DONE, deadline=now, done=now, seconds=6.0,
            answer={"answers": {"correct": "yes" if truth.get(i.key) else "no"},
                    "correct": bool(truth.get(i.key))}) for i in todo])
        return len(todo)

    answer_open(camp)
    comp = camp.dataset.phase.competition
    user = get_user_model().objects.create_user("gamma", password="gamma-pass-123")
    team = Team.objects.create(competition=comp, name="Team Gamma", lead=user)
    Membership.objects.create(team=team, user=user, status=Membership.APPROVED)
    sents = {u: 0 for u in truth}
    rows = list(csv.DictReader(open(ref, encoding="utf-8"), delimiter="\t"))
    for r in rows:
        sents[r["uuid"]] = int(bool(GAMMA.search(r["sentence"])))

    class Up:
        name = "gamma.json"

        def chunks(self):
            yield json.dumps(sents).encode()
    sub = subs.submit(user, team, camp.dataset, Up())
    drain()
    sub.refresh_from_db()
    positives = [u for u, v in sents.items() if v == 1]
    true_p = float(np.mean([truth[u] for u in positives]))

    def late(seed: int):
        t0 = time.time()
        ev = ondemand.add_late(camp, sub, a.half_width, None, a.pilot, seed)
        new = 0
        while True:
            ev.refresh_from_db()
            if ev.stage == "done":
                break
            n = answer_open(camp)
            new += n
            ondemand.advance_all(camp)
        return ev, new, time.time() - t0

    ev, new, secs = late(0)
    cost = costs.campaign_costs(camp)
    row = next(r for r in cost["rows"] if r["name"] == "Team Gamma")
    print(f"late submission Team Gamma: {len(positives)} positive sentences, true precision "
          f"{true_p:.4f}")
    print(f"  estimate {ev.estimate:.4f} [{ev.low:.4f}, {ev.high:.4f}] half-width "
          f"{(ev.high - ev.low) / 2:.4f} (target {a.half_width}) outcome {ev.outcome}, "
          f"main stage planned {ev.planned} draws")
    print(f"  draws: pilot {ev.draws.filter(stage='pilot').count()}, main "
          f"{ev.draws.filter(stage='main').count()}; new judgments {new}; reused items "
          f"{row['reused_items']} ({row['reused_judgments']} judgments)")
    print(f"  cost {row['money']:.2f} ({row['hours']:.3f} judge hours at "
          f"{cost['rate']:.2f}/h), saved by reuse {row['saved']:.2f}; campaign total "
          f"{cost['judgments']:.0f} judgments, {cost['money']:.2f}  [{secs:.1f} s]")
    ev.draws.all().delete()
    Item.objects.filter(campaign=camp, drawn_for="ondemand").delete()
    ev.output.delete()

    hits, widths, errs, news = [], [], [], []
    t0 = time.time()
    for rep in range(a.reps):
        try:
            with transaction.atomic():
                ev, new, _ = late(1000 + rep)
                hits.append(ev.low <= true_p <= ev.high)
                widths.append((ev.high - ev.low) / 2)
                errs.append(ev.estimate - true_p)
                news.append(new)
                raise Rollback
        except Rollback:
            pass
        if (rep + 1) % 25 == 0:
            print(f"  {rep + 1} repetitions: coverage {np.mean(hits):.3f}", file=sys.stderr)
    n = len(hits)
    se = np.sqrt(np.mean(hits) * (1 - np.mean(hits)) / n)
    print(f"coverage over {n} repetitions: {np.mean(hits):.3f} (nominal 0.95; ± {1.96 * se:.3f}"
          f" binomial), mean half-width {np.mean(widths):.4f}, share reaching the target "
          f"{np.mean(np.array(widths) <= a.half_width):.3f}, bias {np.mean(errs):+.4f} "
          f"(s.e. {np.std(errs) / np.sqrt(n):.4f}), new judgments mean {np.mean(news):.1f}  "
          f"[{time.time() - t0:.0f} s]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
