"""What a campaign's judging cost, per submission, and what reuse saved.

Judgments are done assignments; judge time is their recorded seconds (the
campaign's mean where a time is missing); money is time at the campaign's
hourly rate (``hourly_rate``, default 12 per hour: spec 002's $12/h). An
item drawn for several teams (the joint design) splits its judgments equally
among them; recall items are their own row. A late submission's reuse is
the judgments of campaign items its draws found already there.
"""
from __future__ import annotations

from collections import defaultdict

from shareval.platform.judging.models import Assignment, Draw, LateEvaluation
from shareval.platform.judging.ondemand import rate, seconds_per_judgment

RECALL = "(recall documents)"


def campaign_costs(campaign) -> dict:
    per_hour, mean_s = rate(campaign), seconds_per_judgment(campaign)
    judgments: dict[str, float] = defaultdict(float)
    seconds: dict[str, float] = defaultdict(float)
    done = (Assignment.objects.filter(item__campaign=campaign, status=Assignment.DONE)
            .values_list("item_id", "item__drawn_for", "item__drawn_by", "seconds"))
    per_item: dict[int, int] = defaultdict(int)
    for item_id, drawn_for, drawn_by, secs in done:
        per_item[item_id] += 1
        owners = [RECALL] if drawn_for == "recall" or not drawn_by else drawn_by
        for o in owners:
            judgments[o] += 1 / len(owners)
            seconds[o] += (secs if secs and 0 < secs < 3600 else mean_s) / len(owners)
    reuse: dict[str, dict] = {}
    for ev in LateEvaluation.objects.filter(campaign=campaign).select_related("output"):
        items = set(Draw.objects.filter(evaluation=ev, reused=True).values_list("item_id",
                                                                                flat=True))
        n = sum(per_item.get(i, 0) for i in items)
        reuse[ev.output.name] = {"items": len(items), "judgments": n,
                                 "saved": n * mean_s / 3600 * per_hour}
    rows = []
    for name in sorted(set(judgments) | set(reuse), key=lambda n: (n == RECALL, n)):
        hours = seconds[name] / 3600
        r = reuse.get(name, {})
        rows.append({"name": name, "judgments": judgments[name], "hours": hours,
                     "money": hours * per_hour, "reused_items": r.get("items"),
                     "reused_judgments": r.get("judgments"), "saved": r.get("saved")})
    total_h = sum(seconds.values()) / 3600
    return {"rows": rows, "rate": per_hour, "seconds": mean_s,
            "judgments": sum(judgments.values()), "hours": total_h, "money": total_h * per_hour,
            "saved": sum(r["saved"] for r in reuse.values())}
