"""Load the MATERIAL demo into the server: the competition, three teams, their runs
as sent during the evaluation week, and the summary-judging campaigns.

The week has ended when the demo is built (so judging can start). Each run is
submitted through the ordinary upload path with ``now`` set to its time in
the week or the development phase: the phase window, the run group's quota of
5 and its one-primary rule, validation and the canonical-name rules apply as
they would have then, and the run's ``created`` is that time.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path

from shareval.platform.demo_material import bundle as material_bundle
from shareval.platform.demo_material.generate import TEAMS, generate

# demo account -> its team in material-demo (Team Gamma forgets its primary)
LEADS = {"alice": "Team Alpha", "bob": "Team Beta", "carol": "Team Gamma"}
SUMMARY_INSTRUCTIONS = (
    "Read the query and the English summary of one retrieved document (its words and its "
    "image). Answer yes if the summary shows that the document is relevant to the query: "
    "for a lexical query, that it contains a translation of the query string; for a "
    "conceptual one (marked +), that it is about the concept. The document itself is not "
    "shown: judge the summary.")


class _Upload:
    def __init__(self, name: str, data: bytes):
        self.name, self.data = name, data

    def chunks(self):
        yield self.data


def build_competition(home: Path, users: dict, now: dt.datetime, console) -> dict:
    """Generate, load and fill ``material-demo``; returns what the console shows."""
    from shareval.platform.bundles.loader import load_bundle
    from shareval.platform.competitions.models import Membership, Team
    from shareval.platform.submissions.queue import drain
    out = home / "material-demo"
    langs = generate(out)
    material_bundle.write_bundle(out, now)
    comp, _ = load_bundle(out, users["organizer"])
    teams = {}
    for account, name in LEADS.items():
        t = teams[name] = Team.objects.create(competition=comp, name=name, lead=users[account])
        Membership.objects.create(team=t, user=users[account], status=Membership.APPROVED)
    runs = [r for lang in langs.values() for r in lang.runs]
    sent = _submit_runs(comp, users, teams, runs, now)
    console.print(f"material-demo: scoring {sent} team runs ...")
    drain()
    campaigns = _campaigns(comp, users["judge"])
    from shareval.platform.demo_material.crowd import LEFT_FOR_THE_JUDGE, answer_all_but_a_few
    for c in campaigns:
        answer_all_but_a_few(c)
        console.print(f"judging campaign {c.title!r}: {c.items.count()} items, answered by "
                      f"three simulated judges but {LEFT_FOR_THE_JUDGE} left to the judge "
                      f"account")
    return {"competition": comp, "campaigns": campaigns}


def _submit_runs(comp, users, teams, runs, now) -> int:
    from shareval.platform.submissions import service as subs
    dev_start, _ = material_bundle.development(now)
    week_start, _ = material_bundle.week(now)
    lead = {team: account for account, team in LEADS.items()}
    n = 0
    for k, (run, path) in enumerate(runs):
        if run.pack == "devtest":
            phase, slug = "development", f"clir-{run.lang.lower()}-devtest"
            when = dev_start + dt.timedelta(days=10, hours=k)
        else:
            phase, slug = "evaluation-week", f"{run.task.lower()}-{run.lang.lower()}-eval"
            when = week_start + dt.timedelta(days=1, hours=k)
        ds = comp.phases.get(slug=phase).datasets.get(slug=slug)
        team = TEAMS[run.team]
        # primary=None: the canonical name's SubmissionType decides (run groups)
        subs.submit(users[lead[team]], teams[team], ds, _Upload(path.name, path.read_bytes()),
                    primary=None, description=run.system.describe(),
                    factsheet={"method": run.system.label, "human_in_loop": False,
                               "open_query_use": "none beyond automatic retrieval"}, now=when)
        n += 1
    return n


def _campaigns(comp, judge) -> list:
    """One summary-relevance campaign per E2E dataset, built from the primary E2E runs
    (the week has ended): three judges per summary; the demo's judge account."""
    from shareval.platform.judging.models import Campaign
    from shareval.platform.judging.service import create_campaign
    week = comp.phases.get(slug="evaluation-week")
    made = []
    for ds in week.datasets.filter(task__task_name="material-e2e").order_by("slug"):
        lang = ds.slug.split("-")[1].upper()
        made.append(create_campaign(
            ds, f"Summaries {lang}", Campaign.RELEVANCE, 3, 60,
            {"build": "primary-e2e", "instructions": SUMMARY_INSTRUCTIONS}, [judge]))
    return made


def urls(base: str) -> list[str]:
    """The material-demo pages the console lists."""
    c = f"{base}/c/{material_bundle.SLUG}"
    boards = [f"{c}/leaderboard/development/clir-{lang.lower()}-devtest/"
              for lang in ("1A", "1B")]
    boards += [f"{c}/leaderboard/evaluation-week/{task}-{lang.lower()}-eval/"
               for lang in ("1A", "1B") for task in ("e2e", "clir")]
    return [f"{c}/"] + boards
