"""A competition on a three-document KBP reference (kbp_tiny's two plus "Berlin")
with two teams' runs, for the exhaustive (recall) campaign tests.

Text of "Berlin": "Berlin is the capital of Germany . Anna Berg visited Berlin ."
                   0      7  10  14      22 25      33 35   40   45      53     60
"""
from __future__ import annotations

import shutil
from pathlib import Path

from shareval.formats.kbp_runs import item_key

from tests.tasks.kbp_tiny import DOCUMENTS, HEADER, RELATIONS, write_reference

from ..factories import Upload, make_world


def _m(sent, start, end, name):
    return {"sent_id": sent, "pos": [start, end], "name": name, "type": "LOC"}


BERLIN = {"title": "Berlin",
          "sents": [["Berlin", "is", "the", "capital", "of", "Germany", "."],
                    ["Anna", "Berg", "visited", "Berlin", "."]],
          "vertexSet": [[_m(0, 0, 1, "Berlin"), _m(1, 3, 4, "Berlin")],
                        [_m(0, 5, 6, "Germany")], [_m(1, 0, 2, "Anna Berg")]],
          "labels": [{"h": 0, "t": 1, "r": "P17"}, {"h": 1, "t": 0, "r": "P36"}]}
DOCS = DOCUMENTS + [BERLIN]

# relation mentions of the runs, as item keys
BIRTH = item_key("Anna Berg", (0, 9), "P19", (22, 26))         # true
RESID = item_key("Anna Berg", (29, 33), "P551", (22, 26))      # false: Oslo is no residence
OSLO = item_key("Oslo", (0, 4), "P17", (23, 29))               # true
BERLIN_DE = item_key("Berlin", (0, 6), "P17", (25, 32))        # true
BERLIN2_DE = item_key("Berlin", (53, 59), "P17", (25, 32))     # true (second mention)

RUN_A = ["Anna Berg\tAnna Berg\t0\t9\tP19\tOslo\t22\t26\t1",
         "Oslo\tOslo\t0\t4\tcountry\tNorway\t23\t29\t1",
         "Berlin\tBerlin\t0\t6\tP17\tGermany\t25\t32\t1"]
RUN_B = ["Anna Berg\tAnna Berg\t0\t9\tP19\tOslo\t22\t26\t1",
         "Anna Berg\tBerg\t29\t33\tP551\tOslo\t22\t26\t1",
         "Berlin\tBerlin\t53\t59\tP17\tGermany\t25\t32\t1"]
OUTPUTS = {"Team A": {BIRTH, OSLO, BERLIN_DE}, "Team B": {BIRTH, RESID, BERLIN2_DE}}


def run_tsv(lines) -> str:
    return HEADER + "".join(x + "\n" for x in lines)


def kbp_world(tmp_path: Path, documents=None, source: Path | None = None) -> dict:
    """make_world with both datasets on the KBP reference and no baseline (needs db);
    ``source``: a reference folder copied in instead (the real data)."""
    root = tmp_path / "bundle"
    if source is not None:
        (root / "kbp").mkdir(parents=True)
        for f in ("re-docred-dev.json", "relations.json"):
            shutil.copyfile(source / f, root / "kbp" / f)
    else:
        write_reference(root / "kbp", documents or DOCS, RELATIONS)
    return make_world(tmp_path, baseline=False,
                      extra={"tasks": [{"slug": "rel", "task": "kbp-relations"}]},
                      options={"dev": {"task": "rel", "reference": "kbp"},
                               "eval": {"task": "rel", "reference": "kbp"}})


def submit_runs(w: dict, runs=None) -> None:
    """Team A and Team B each submit their run to dev; scored."""
    from shareval.platform.submissions import queue
    from shareval.platform.submissions import service as subs
    runs = runs or {"Team A": RUN_A, "Team B": RUN_B}
    lead = {"Team A": "alice", "Team B": "bob"}
    for team, lines in runs.items():
        subs.submit(w["users"][lead[team]], w["teams"][team], w["ds"]["dev"],
                    Upload(f"{team[-1].lower()}.tsv", run_tsv(lines)))
    queue.drain()


def campaign(w: dict, judges, k: int = 1, n: int = 3, seed: int = 0, config=None):
    """An exhaustive campaign on dev built from the runs (service.create_campaign)."""
    from shareval.platform.judging import service
    return service.create_campaign(w["ds"]["dev"], "Recall docs", "exhaustive", k, 30,
                                   config or {"gold_every": 0}, judges, n=n, seed=seed)
