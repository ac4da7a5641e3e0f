"""A KBP competition small enough to check by hand: three typed documents, a
relation inventory with one relation that has no labels, and two teams' runs.

Text of "Anna Berg":
  "Anna Berg was born in Oslo on 3 May 1950 . She studied at the University of Oslo .
   Berg later lived in Paris ."
   Anna Berg 0-9, Oslo 22-26, 3 May 1950 30-40, University of Oslo 62-80, Berg 83-87,
   Paris 103-108
Text of "Oslo": "Oslo is the capital of Norway ."  Oslo 0-4, Norway 23-29
Text of "Karl Lund": "Karl Lund was born in Bergen . He died in Oslo in 1990 ."
   Karl Lund 0-9, Bergen 22-28, Oslo 42-46, 1990 50-54
"""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import yaml

RELATIONS = {"P17": "country", "P19": "place of birth", "P20": "place of death",
             "P36": "capital", "P69": "educated at", "P551": "residence",
             "P569": "date of birth", "P570": "date of death", "P108": "employer"}


def _m(sent, start, end, kind):
    return {"sent_id": sent, "pos": [start, end], "type": kind}


DOCUMENTS = [
    {"title": "Anna Berg",
     "sents": [["Anna", "Berg", "was", "born", "in", "Oslo", "on", "3", "May", "1950", "."],
               ["She", "studied", "at", "the", "University", "of", "Oslo", "."],
               ["Berg", "later", "lived", "in", "Paris", "."]],
     "vertexSet": [[_m(0, 0, 2, "PER"), _m(2, 0, 1, "PER")], [_m(0, 5, 6, "LOC")],
                   [_m(0, 7, 10, "TIME")], [_m(1, 4, 7, "ORG")], [_m(2, 4, 5, "LOC")]],
     "labels": [{"h": 0, "t": 1, "r": "P19"}, {"h": 0, "t": 2, "r": "P569"},
                {"h": 0, "t": 3, "r": "P69"}, {"h": 0, "t": 4, "r": "P551"}]},
    {"title": "Oslo",
     "sents": [["Oslo", "is", "the", "capital", "of", "Norway", "."]],
     "vertexSet": [[_m(0, 0, 1, "LOC")], [_m(0, 5, 6, "LOC")]],
     "labels": [{"h": 0, "t": 1, "r": "P17"}, {"h": 1, "t": 0, "r": "P36"}]},
    {"title": "Karl Lund",
     "sents": [["Karl", "Lund", "was", "born", "in", "Bergen", "."],
               ["He", "died", "in", "Oslo", "in", "1990", "."]],
     "vertexSet": [[_m(0, 0, 2, "PER")], [_m(0, 5, 6, "LOC")], [_m(1, 3, 4, "LOC")],
                   [_m(1, 5, 6, "TIME")]],
     "labels": [{"h": 0, "t": 1, "r": "P19"}, {"h": 0, "t": 2, "r": "P20"},
                {"h": 0, "t": 3, "r": "P570"}]},
]

HEADER = "doc_id\tsubject\tsubject_start\tsubject_end\trelation\tobject\tobject_start\t" \
         "object_end\tevidence\n"
RUN_A = ["Anna Berg\tAnna Berg\t0\t9\tP19\tOslo\t22\t26\t",             # right
         "Anna Berg\tBerg\t83\t87\tresidence\tParis\t103\t108\t2",       # right (by label)
         "Oslo\tOslo\t0\t4\tP17\tNorway\t23\t29\t",                     # right
         "Karl Lund\tKarl Lund\t0\t9\tP20\tBergen\t22\t28\t",            # wrong
         "Anna Berg\tBerg\t83\t87\tP19\tOslo\t22\t26\t"]                  # right
RUN_B = ["Anna Berg\tAnna Berg\t0\t9\tP19\tOslo\t22\t26\t",             # shared with A
         "Anna Berg\tAnna Berg\t0\t9\tP69\tUniversity of Oslo\t62\t80\t1",
         "Karl Lund\tKarl Lund\t0\t9\tP570\t1990\t50\t54\t",
         "Oslo\tNorway\t23\t29\tP36\tOslo\t0\t4\t",
         "Karl Lund\tKarl Lund\t0\t9\tP19\tBergen\t22\t28\t"]


def run_text(lines) -> str:
    return HEADER + "".join(x + "\n" for x in lines)


def write_reference(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "documents.json").write_text(json.dumps(DOCUMENTS), encoding="utf-8")
    (folder / "relations.json").write_text(json.dumps(RELATIONS), encoding="utf-8")
    return folder


def make_kbp_bundle(root: Path) -> Path:
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    root.mkdir(parents=True, exist_ok=True)
    write_reference(root / "ref")
    b = {"slug": "kbp", "title": "KBP", "time_zone": "Europe/Berlin",
         "tasks": [{"slug": "rel", "task": "kbp-relations"}],
         "phases": [{"slug": "dev", "title": "Development",
                     "start": (now - dt.timedelta(days=3)).isoformat(),
                     "end": (now + dt.timedelta(days=30)).isoformat(), "leaderboard": "public",
                     "datasets": [{"slug": "dev", "task": "rel", "reference": "ref",
                                   "quotas": [{"limit": 100, "window": "week"}]}]}]}
    (root / "bundle.yaml").write_text(yaml.safe_dump(b, sort_keys=False))
    return root


def make_kbp_world(tmp_path: Path) -> dict:
    """Organizer, Team A (alice) and Team B (bob) with scored runs, three judges (needs db)."""
    from django.contrib.auth import get_user_model

    from shareval.platform.bundles.loader import load_bundle
    from shareval.platform.competitions.models import Membership, Team
    from shareval.platform.submissions import queue
    from shareval.platform.submissions import service as subs

    from ..factories import Upload
    User = get_user_model()
    org = User.objects.create_user("org", password="org-pass-123", is_staff=True)
    comp, _ = load_bundle(make_kbp_bundle(tmp_path / "bundle"), org)
    ds = comp.phases.get(slug="dev").datasets.get(slug="dev")
    teams = {}
    for name, lead, lines in (("Team A", "alice", RUN_A), ("Team B", "bob", RUN_B)):
        user = User.objects.create_user(lead, password=f"{lead}-pass-123")
        t = Team.objects.create(competition=comp, name=name, lead=user)
        Membership.objects.create(team=t, user=user, status=Membership.APPROVED)
        subs.submit(user, t, ds, Upload(f"{lead}.tsv", run_text(lines)))
        teams[name] = t
    queue.drain()
    judges = [User.objects.create_user(f"judge{i}", password=f"judge{i}-pass-123")
              for i in range(3)]
    return {"comp": comp, "org": org, "ds": ds, "teams": teams, "judges": judges}
