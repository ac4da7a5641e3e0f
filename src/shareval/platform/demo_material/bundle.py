"""bundle.yaml of the ``material-demo`` competition (docs/organizers.md syntax).

Times are relative to the build: the development phase runs around it; the
evaluation week (blind, five days) ended one day before it, so the summary
judging can start at once. Data files are released on dates (the DevTest
packs at the development start, the Eval packs at the week's start, the open
queries' relevance after the week) to registered teams or the phase's teams.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import yaml

from shareval.platform.demo_material import corpus

SLUG = "material-demo"
TITLE = "MATERIAL demo: CLIR and E2E, languages 1A and 1B"
DESCRIPTION = (
    "Built by `make demo` from a synthetic evaluation period (docs/material.md, 'Try it on "
    "the demo'): per language a DevTest and an Eval pack of about 300 English "
    "'translations' of news and topical text and of broadcast and conversation "
    "transcripts, 24 queries (query pack 1 open, packs 2 and 3 closed), and three teams' "
    "runs from simple word-matching systems. The official AQWV counts the closed queries "
    "only. In the evaluation week each team may send 5 runs per language over its E2E and "
    "CLIR datasets, one of them the primary, which must be an E2E run (plan 8.1).")
WEEK_DAYS = 5


# the data-use declarations of plan 6.4-6.5, asked of every run (docs/records.md)
DECLARATIONS = {"required": ["method"], "fields": [
    {"name": "open_query_use", "label": "Use of the open queries (query pack 1)", "type": "text",
     "required": True, "help": "automatic or manual exploration, data harvesting: say what"},
    {"name": "human_in_loop", "label": "A person in the loop", "type": "bool", "required": True,
     "refuse": {"value": True, "phases": ["evaluation-week"],
                "reason": "closed queries allow no human in the loop (plan 6.5)"}}]}


def week(now: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """The evaluation week: five days, ended one day before ``now``."""
    end = (now - dt.timedelta(days=1)).replace(minute=0, second=0, microsecond=0)
    return end - dt.timedelta(days=WEEK_DAYS), end


def development(now: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    start, _ = week(now)
    return start - dt.timedelta(days=40), now + dt.timedelta(days=60)


def _iso(t: dt.datetime) -> str:
    return t.replace(microsecond=0).isoformat()


def _released(file: str, when: dt.datetime, audience: str = "registered") -> dict:
    return {"file": file, "release": _iso(when), "audience": audience}


def write_bundle(out: Path, now: dt.datetime) -> Path:
    """bundle.yaml in ``out``, the folder ``generate`` wrote."""
    dev_start, dev_end = development(now)
    week_start, week_end = week(now)
    dev_sets, week_sets, groups = [], [], []
    for lang in corpus.LANGUAGES:
        low = lang.lower()
        dev_sets.append({
            "slug": f"clir-{low}-devtest", "task": "material-clir",
            "title": f"CLIR {lang} DevTest", "reference": f"packs/{lang}-devtest",
            "public": [_released(f"public/{lang}-queries.tsv", dev_start),
                       _released(f"public/{lang}-devtest.tgz", dev_start)],
            "quotas": [{"limit": 200, "window": "week"}]})
        eval_files = [_released(f"public/{lang}-queries.tsv", dev_start),
                      _released(f"public/{lang}-eval.tgz", week_start),
                      _released(f"public/{lang}-eval-open-relevance.tsv", week_end, "phase")]
        for task in ("e2e", "clir"):
            week_sets.append({
                "slug": f"{task}-{low}-eval", "task": f"material-{task}",
                "title": f"{task.upper()} {lang} Eval", "reference": f"packs/{lang}-eval",
                "public": eval_files})
        groups.append({"slug": f"lang-{low}", "title": f"Language {lang}",
                       "datasets": [f"e2e-{low}-eval", f"clir-{low}-eval"],
                       "quotas": [{"limit": 5, "window": "phase"}],
                       "primary": {"required": True, "from": [f"e2e-{low}-eval"]}})
    bundle = {
        "slug": SLUG, "title": TITLE, "description": DESCRIPTION,
        "time_zone": "America/New_York",
        "tasks": [{"slug": "material-clir", "task": "material-clir",
                   "title": "MATERIAL CLIR (AQWV)"},
                  {"slug": "material-e2e", "task": "material-e2e",
                   "title": "MATERIAL end to end (judged summaries)"}],
        "phases": [
            {"slug": "development", "title": "Development (DevTest)", "start": _iso(dev_start),
             "end": _iso(dev_end), "leaderboard": "public", "datasets": dev_sets},
            {"slug": "evaluation-week", "title": "Evaluation week (blind)",
             "start": _iso(week_start), "end": _iso(week_end), "blind": True,
             "leaderboard": "public", "datasets": week_sets, "groups": groups}],
        "factsheet": DECLARATIONS,
    }
    (out / "bundle.yaml").write_text(yaml.safe_dump(bundle, sort_keys=False))
    return out
