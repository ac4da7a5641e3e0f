"""Load the KBP demo into the server: the month's documents, three teams' runs with
known errors (assessment.kbp_sim, from the annotations), the automatic precision
campaign that judges every run as it arrives, and a recall campaign on
``RECALL_DOCS`` documents.

Simulated judges and annotators (assessment.kbp_judges) answer from the
annotations with small error rates, as a crowd would, all but a few items: the
demo's ``judge`` account gives the second answer to a few control items (known
answers, in no estimate, indistinguishable from the others), its ``annotator``
account annotates the last recall document. Team Gamma's run comes after the other two
were judged: it is evaluated on demand, reusing their judgments, and its cost
is on its run page. Alice's second run is written for the walk-through
(``runs/alpha-2.tsv``): sent from the submit page, its items go to the judges.
"""
from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

from django.utils import timezone

from shareval.assessment.kbp_judges import Annotator, walk
from shareval.assessment.kbp_sim import Oracle, TeamProfile, make_runs, write_tsv
from shareval.formats.errors import Problems
from shareval.formats.kbp import read_reference

from shareval.platform.demo_kbp import bundle as kbp_bundle

LEADS = {"alice": "Team Alpha", "bob": "Team Beta", "carol": "Team Gamma"}
# known errors: shares of the annotated relations kept, relabelled, moved; spurious per doc
PROFILES = [TeamProfile("Team Alpha", keep=0.7, wrong_relation=0.08, wrong_span=0.04,
                        spurious_per_doc=1.0),
            TeamProfile("Team Beta", keep=0.45, wrong_relation=0.15, wrong_span=0.08,
                        spurious_per_doc=2.0),
            TeamProfile("Team Gamma", keep=0.6, wrong_relation=0.1, wrong_span=0.05,
                        spurious_per_doc=1.5),
            TeamProfile("Team Alpha 2", keep=0.75, wrong_relation=0.06, wrong_span=0.03,
                        spurious_per_doc=0.8)]
FILES = {"Team Alpha": "alpha.tsv", "Team Beta": "beta.tsv", "Team Gamma": "gamma.tsv",
         "Team Alpha 2": "alpha-2.tsv"}
CROWD = ("crowd-judge-1", "crowd-judge-2")
CROWD_ANNOTATOR = "crowd-annotator-1"
JUDGE_ERROR, ANNOTATOR_MISS, ANNOTATOR_ERROR = 0.05, 0.03, 0.03
LEFT_FOR_THE_JUDGE = 4          # control items whose second answer is the judge account's
RECALL_DOCS = 10
PRECISION = {"auto": True, "half_width": 0.05, "pilot": 50, "controls": 10,
             "hourly_rate": 12.0, "seconds_per_judgment": 15.0,
             "instructions": "Read the highlighted sentence (open the whole document if it "
                             "does not settle the question) and answer each question about "
                             "the marked subject and object."}
RECALL = {"hourly_rate": 12.0, "seconds_per_judgment": 240.0,
          "instructions": "Mark every relation of the inventory that the document states "
                          "between two mentions, accepting the right suggestions and "
                          "rejecting the wrong ones."}


class _Upload:
    def __init__(self, name: str, data: bytes):
        self.name, self.data = name, data

    def chunks(self):
        yield self.data


def write_runs(out: Path, oracle: Oracle) -> dict[str, Path]:
    (out / "runs").mkdir(parents=True, exist_ok=True)
    paths = {}
    for run in make_runs(oracle, PROFILES, seed=kbp_bundle.SEED):
        paths[run.name] = out / "runs" / FILES[run.name]
        write_tsv(run.predictions, paths[run.name])
    return paths


def build_competition(home: Path, kbp_data: Path, users: dict, now: dt.datetime,
                      console, include=()) -> dict:
    """Write, load and fill ``kbp-demo``; returns what the console shows (``include``:
    documents taken besides the drawn ones, by title)."""
    from shareval.platform.bundles.loader import load_bundle
    from shareval.platform.competitions.models import Membership, Team
    from shareval.platform.judging.auto import metric_names
    from shareval.platform.submissions.queue import drain
    out = home / kbp_bundle.SLUG
    out.mkdir(parents=True, exist_ok=True)
    kbp_bundle.write_files(kbp_data, out, include)
    ref = read_reference(out / "reference", Problems())
    oracle = Oracle(ref)
    runs = write_runs(out, oracle)
    metric = next(m for m in metric_names() if m == "judged_f1")
    kbp_bundle.write_bundle(out, now, metric)
    comp, _ = load_bundle(out, users["organizer"])
    teams = {}
    for account, name in LEADS.items():
        t = teams[name] = Team.objects.create(competition=comp, name=name, lead=users[account])
        Membership.objects.create(team=t, user=users[account], status=Membership.APPROVED)
    ds = comp.phases.get(slug=kbp_bundle.PHASE).datasets.get(slug=kbp_bundle.DATASET)
    start, _ = kbp_bundle.month(now)
    precision, recall = _campaigns(ds, users)
    from shareval.platform.judging import auto
    inline, auto.INLINE = auto.INLINE, True       # draws in this thread, in order
    try:
        # the month's first two runs, judged; then Team Gamma's, on demand
        for k, team in enumerate(("Team Alpha", "Team Beta")):
            _submit(users, teams, ds, team, runs[team], start + dt.timedelta(days=1, hours=k))
        drain()
        auto.draw_all(precision)          # what the scored runs' commit hooks did (if any)
        _crowd_judges(precision, oracle, leave=LEFT_FOR_THE_JUDGE)
        _submit(users, teams, ds, "Team Gamma", runs["Team Gamma"],
                start + dt.timedelta(days=4))
        drain()
        auto.draw_all(precision)
        _crowd_judges(precision, oracle, leave=LEFT_FOR_THE_JUDGE)
    finally:
        auto.INLINE = inline
    from shareval.platform.judging.build import build_from_runs
    build_from_runs(recall, RECALL_DOCS, RECALL_DOCS, kbp_bundle.SEED)
    _crowd_annotator(recall, oracle, leave=1)
    console.print(f"{kbp_bundle.SLUG}: {precision.items.count()} relation items judged by a "
                  f"simulated crowd ({LEFT_FOR_THE_JUDGE} left to the judge account), "
                  f"{recall.items.count()} recall documents (1 left to the annotator account)")
    return {"competition": comp, "campaigns": [precision, recall], "runs": runs}


def _campaigns(ds, users):
    from shareval.platform.judging.models import Campaign
    from shareval.platform.judging.service import create_campaign
    precision = create_campaign(ds, "Relation mentions (precision)", Campaign.CHAIN, 2, 30,
                                dict(PRECISION), [users["judge"]], seed=kbp_bundle.SEED)
    recall = Campaign.objects.create(
        dataset=ds, slug="recall-documents", title="Recall documents", design="exhaustive",
        judges_per_item=1, timeout_minutes=120, config=dict(RECALL), on_leaderboard=False)
    recall.judges.set([users["annotator"]])
    return precision, recall


def _submit(users, teams, ds, team: str, path: Path, when) -> None:
    from shareval.platform.submissions import service as subs
    lead = {t: a for a, t in LEADS.items()}[team]
    subs.submit(users[lead], teams[team], ds, _Upload(path.name, path.read_bytes()),
                primary=True, description=f"{team}'s relation extractor (demo run with known "
                                          f"errors)", now=when)


def _crowd(names, campaign) -> list:
    from shareval.platform.judging.crowd import crowd_judge
    return [crowd_judge(campaign, name) for name in names]


def _crowd_judges(campaign, oracle: Oracle, leave: int) -> int:
    """Answer every open item k times, moving on-demand evaluations on until no new
    item appears. The last crowd judge leaves ``leave`` control items (known answers,
    in no estimate) to the demo's judge account, so the estimates are complete while
    the judge still has relation items to answer."""
    from shareval.platform.judging import ondemand
    from shareval.platform.judging.models import Assignment
    crowd = _crowd(CROWD, campaign)
    rng = random.Random(f"{kbp_bundle.SEED}-{campaign.slug}")
    left = set(campaign.items.filter(gold__isnull=False).order_by("pk")
               .values_list("pk", flat=True)[:leave])
    total = 0
    while True:
        now = timezone.now()
        rows = []
        for item in campaign.items.order_by("pk").prefetch_related("assignments"):
            have = {a.judge_id for a in item.assignments.all()}
            for n, judge in enumerate(crowd):
                if judge.pk in have or (n == len(crowd) - 1 and item.pk in left):
                    continue
                rows.append(Assignment(item=item, judge=judge, status=Assignment.DONE,
                                       deadline=now, done=now, seconds=rng.uniform(8, 25),
                                       answer=_chain_answer(campaign, item, oracle, rng)))
        if not rows:
            return total
        Assignment.objects.bulk_create(rows)
        total += len(rows)
        ondemand.advance_all(campaign)


def _chain_answer(campaign, item, oracle: Oracle, rng) -> dict:
    from shareval.platform.judging import designs
    if item.gold is not None:       # a control: its known answers (a yes where not asked)
        truths = {q: a == "yes" for q, a in item.gold["answers"].items()}
    else:
        truths = oracle.questions(item.key)
    chain = designs.chain_for(campaign.config, item.payload.get("type"))
    given, _ = walk(chain, lambda q: "yes" if truths.get(q, True) != (
        rng.random() < JUDGE_ERROR) else "no")
    return designs.clean_answer(campaign, item, {"answers": given})


def _crowd_annotator(campaign, oracle: Oracle, leave: int) -> int:
    from shareval.platform.judging import ondemand
    from shareval.platform.judging.models import Assignment
    (annotator,) = _crowd((CROWD_ANNOTATOR,), campaign)
    sim = Annotator(oracle, miss=ANNOTATOR_MISS, error=ANNOTATOR_ERROR, seed=kbp_bundle.SEED)
    now, rows = timezone.now(), []
    for item in list(campaign.items.order_by("pk"))[leave:]:
        marked = sim.annotate(item.doc, [s["key"] for s in item.payload["suggestions"]])
        rows.append(Assignment(item=item, judge=annotator, status=Assignment.DONE,
                               deadline=now, done=now, seconds=240.0,
                               answer={"relations": sorted(marked)}))
    Assignment.objects.bulk_create(rows)
    ondemand.advance_all(campaign)        # stores the recall in the assessed runs' scores
    return len(rows)


def urls(base: str) -> list[str]:
    c = f"{base}/c/{kbp_bundle.SLUG}"
    return [f"{c}/", f"{c}/leaderboard/{kbp_bundle.PHASE}/{kbp_bundle.DATASET}/"]
