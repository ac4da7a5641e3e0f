"""The demo's crowd: three simulated judges who have answered every summary of the
campaigns but a few, so that the demo's own ``judge`` account completes each
campaign with its last answers and the organizer can publish the judged scores.

Simulated answers follow the reference pack, with the error rates of the
command-line judgments (``generate.JUDGE_YES``): a summary of a relevant document
is judged relevant with 0.85, of another with 0.1, each judge drawing on its own.
"""
from __future__ import annotations

import random

from django.utils import timezone

from shareval.platform.demo_material import corpus
from shareval.platform.demo_material.generate import JUDGE_YES

CROWD = ("crowd-judge-1", "crowd-judge-2", "crowd-judge-3")
LEFT_FOR_THE_JUDGE = 4           # items per campaign whose third answer is the judge's


def _relevant(pack) -> set[tuple[str, str]]:
    pairs = set()
    for f in (pack / "clir").glob("*.tsv"):
        for line in f.read_text().splitlines():
            doc, _, y = line.partition("\t")
            if y.strip() == "Y":
                pairs.add((f.stem, doc))
    return pairs


def answer_all_but_a_few(campaign) -> int:
    """Store the crowd's answers (done assignments); returns how many."""
    from shareval.platform.judging.models import Assignment
    from shareval.platform.judging.crowd import crowd_judge
    crowd = [crowd_judge(campaign, name) for name in CROWD]
    relevant = _relevant(campaign.dataset.reference_file)
    items = list(campaign.items.filter(gold__isnull=True).order_by("pk"))
    now = timezone.now()
    rng = random.Random(f"{corpus.SEED}-{campaign.slug}-crowd")
    rows = []
    for n, judge in enumerate(crowd):
        # the last simulated judge leaves the first few items to the demo's judge
        for item in items[LEFT_FOR_THE_JUDGE:] if n == len(crowd) - 1 else items:
            p = JUDGE_YES[(item.payload.get("query_id"), item.payload.get("document_id"))
                          in relevant]
            rows.append(Assignment(item=item, judge=judge, status=Assignment.DONE,
                                   deadline=now, done=now, seconds=20.0,
                                   answer={"relevant": rng.random() < p}))
    Assignment.objects.bulk_create(rows)
    return len(rows)
