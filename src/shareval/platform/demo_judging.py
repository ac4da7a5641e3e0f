"""The demo's judging part: two teams' runs, a judge account and ready campaigns.

Team runs are real, simple systems computed from ../shared/data (never from
the demo's hidden references):

* SV-Ident: two keyword rules narrower than the baseline's (Team Alpha: the
  words of asking; Team Beta: scales, agreement and percentages).
* RCC: mention matching: dataset mentions of the *training* part's gold
  citations (those the demo's phases do not hold), found in the development
  publications' texts; Team Alpha uses mentions seen at least twice, Team Beta
  at least five times. Each citation carries the mentions found, so judges see
  the passages around them.

The RCC reference folder also gets the development publications' texts and
the catalog, from which the judging pages show passages and dataset titles.
"""
from __future__ import annotations

import json
import re
import shutil
from collections import Counter, defaultdict
from pathlib import Path


ALPHA_WORDS = re.compile(r"\b(question(ed|s)?|asked|respondents?|Frage[n]?|gefragt|Befragten?)\b",
                         re.I)
BETA_WORDS = re.compile(r"(\b\d+(\.\d+)?\s?%|\bscale\b|\bagree|Skala|stimme|zufrieden|satisf)",
                        re.I)
TOKEN = re.compile(r"\w+")
# (team, dataset) -> (method name for the fact sheet, the run's description): what
# the pages show of the demo teams' runs
TEAM_METHODS = {
    ("Team Alpha", "svident-dev"): (
        "Question-word rule", "a sentence mentions a variable when it has a question word "
        "(question, asked, respondents; Frage, gefragt, Befragte)"),
    ("Team Beta", "svident-dev"): (
        "Scale-word rule", "a sentence mentions a variable when it has a percentage or a "
        "scale word (scale, agree, satisfied; Skala, stimme, zufrieden)"),
    ("Team Alpha", "rcc-dev"): (
        "Known mentions (2+ citations)", "datasets whose known mentions (cited at least "
        "twice in the training part) occur in the publication's text"),
    ("Team Beta", "rcc-dev"): (
        "Known mentions (5+ citations)", "datasets whose known mentions (cited at least "
        "five times in the training part) occur in the publication's text"),
}

SVIDENT_INSTRUCTIONS = (
    "A survey variable is a question of a survey (or the measure built from it), e.g. "
    "'satisfaction with democracy' asked in the ALLBUS. Decide from the highlighted sentence; "
    "its neighbours are only context.")
SVIDENT_CHAIN = [
    {"id": "correct", "text": "Does the highlighted sentence mention a survey variable "
                              "(a survey question, or a measure built from survey answers)?"}]
RCC_INSTRUCTIONS = (
    "For this publication, read the title and the passages (the full text is one click away). "
    "Score each system's list of datasets: +1 if it names the data the publication uses, "
    "0 if partly, -1 if it names data the publication does not use.")


def add_rcc_content(data: Path, ref: Path, dev: set[str]) -> None:
    """The development publications' texts and the catalog, beside the reference."""
    texts = ref / "texts"
    texts.mkdir(exist_ok=True)
    for pid in dev:
        src = data / "rcc/train/texts" / f"{pid}.json"
        if src.is_file():
            shutil.copyfile(src, texts / src.name)
    cat = data / "rcc/catalog/dataset_text_dict.json"
    if cat.is_file():
        shutil.copyfile(cat, ref / "dataset_text_dict.json")


def _mention_table(cits: list[dict], dev: set[str], least: int) -> dict[tuple, str]:
    """token tuple of a mention -> the dataset it names most often (training part only)."""
    votes: dict[str, Counter] = defaultdict(Counter)
    for c in cits:
        if str(c["publication_id"]) in dev:
            continue
        for m in c.get("mention_list") or []:
            if len(m) >= 6:
                votes[m][str(c["data_set_id"])] += 1
    out = {}
    for m, ds in votes.items():
        (top, n), = ds.most_common(1)
        if n >= least:
            out[tuple(TOKEN.findall(m))] = (top, m)
    return {k: v for k, v in out.items() if k}


def rcc_mention_run(data: Path, dev_pubs: list[str], least: int) -> list[dict]:
    """Citations found by matching known mentions (token sequences) in each text."""
    cits = json.loads((data / "rcc/train/data_set_citations.json").read_text())
    table = _mention_table(cits, set(dev_pubs), least)
    first: dict[str, list[tuple]] = defaultdict(list)
    for toks in table:
        first[toks[0]].append(toks)
    out = []
    for pid in dev_pubs:
        p = data / "rcc/train/texts" / f"{pid}.json"
        if not p.is_file():
            continue
        obj = json.loads(p.read_text())
        toks = TOKEN.findall(f"{obj.get('abstract', '')}\n{obj.get('reduced_content', '')}")
        found: dict[str, set[str]] = defaultdict(set)
        for i, t in enumerate(toks):
            for cand in first.get(t, ()):
                if tuple(toks[i:i + len(cand)]) == cand:
                    ds, mention = table[cand]
                    found[ds].add(mention)
        for ds, ms in sorted(found.items()):
            out.append({"publication_id": int(pid), "data_set_id": int(ds),
                        "mention_list": sorted(ms), "score": round(min(1.0, 0.4 + 0.2 * len(ms)),
                                                                   3)})
    return out


def team_runs(data: Path, out: Path) -> dict[tuple[str, str], Path]:
    """(team, dataset slug) -> run file, for the development phase."""
    import csv
    runs = {}
    with open(out / "svident-dev-sentences.tsv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    for team, rule in (("Team Alpha", ALPHA_WORDS), ("Team Beta", BETA_WORDS)):
        p = out / f"svident-dev-{team.split()[1].lower()}.json"
        p.write_text(json.dumps({r["uuid"]: int(bool(rule.search(r["sentence"]))) for r in rows}))
        runs[team, "svident-dev"] = p
    pubs = [str(p["publication_id"]) for p in
            json.loads((out / "rcc-dev-publications.json").read_text())]
    for team, least in (("Team Alpha", 2), ("Team Beta", 5)):
        p = out / f"rcc-dev-{team.split()[1].lower()}.json"
        p.write_text(json.dumps(rcc_mention_run(data, pubs, least), indent=1))
        runs[team, "rcc-dev"] = p
    return runs


def set_up_judging(comp, users: dict, teams: dict, runs: dict, console) -> list:
    """Submit the teams' runs, score them, and create the demo's campaigns."""
    from shareval.platform.judging.models import Campaign
    from shareval.platform.judging.service import create_campaign
    from shareval.platform.submissions import service as subs
    from shareval.platform.submissions.queue import drain
    dev = comp.phases.get(slug="development")
    for (team, slug), path in runs.items():
        ds = dev.datasets.get(slug=slug)
        method, description = TEAM_METHODS[team, slug]
        subs.submit(users[teams[team].lead.username], teams[team], ds,
                    _Upload(path.name, path.read_bytes()), primary=True,
                    description=description, factsheet={"method": method})
    drain()
    judge = users["judge"]
    made = []
    made.append(create_campaign(
        dev.datasets.get(slug="svident-dev"), "SV-Ident: is a variable mentioned?",
        Campaign.CHAIN, 1, 60, {"chains": {"default": SVIDENT_CHAIN}, "gold_every": 0,
                                "instructions": SVIDENT_INSTRUCTIONS},
        [judge], hourly_rate=12.0, seconds=4.5, n=40, seed=1))
    made.append(create_campaign(
        dev.datasets.get(slug="rcc-dev"), "RCC: which datasets does the publication use?",
        Campaign.SIDE_BY_SIDE, 1, 60, {"instructions": RCC_INSTRUCTIONS, "gold_every": 0},
        [judge], on_leaderboard=True, n=15, seed=1))
    for c in made:
        console.print(f"judging campaign {c.title!r}: {c.items.count()} items")
    return made


class _Upload:
    def __init__(self, name: str, data: bytes):
        self.name, self.data = name, data

    def chunks(self):
        yield self.data
