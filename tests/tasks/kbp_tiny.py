"""A two-document Re-DocRED-style reference small enough to score by hand.

Text of "Anna Berg":  "Anna Berg was born in Oslo . Berg lives in Paris ."
                       0    5    10  14   19 22   27 29   34    40 43    49
Text of "Oslo":       "Oslo is the capital of Norway ."
                       0    5  8   12      20 23     30
"""
from __future__ import annotations

import json
from pathlib import Path

RELATIONS = {"P17": "country", "P19": "place of birth", "P36": "capital",
             "P551": "residence", "P27": "country of citizenship"}


def _m(sent, start, end, name):
    return {"sent_id": sent, "pos": [start, end], "name": name, "type": "X"}


DOCUMENTS = [
    {"title": "Anna Berg",
     "sents": [["Anna", "Berg", "was", "born", "in", "Oslo", "."],
               ["Berg", "lives", "in", "Paris", "."]],
     "vertexSet": [[_m(0, 0, 2, "Anna Berg"), _m(1, 0, 1, "Berg")],
                   [_m(0, 5, 6, "Oslo")], [_m(1, 3, 4, "Paris")]],
     "labels": [{"h": 0, "t": 1, "r": "P19", "evidence": [0]},
                {"h": 0, "t": 2, "r": "P551", "evidence": [1]}]},
    {"title": "Oslo",
     "sents": [["Oslo", "is", "the", "capital", "of", "Norway", "."]],
     "vertexSet": [[_m(0, 0, 1, "Oslo")], [_m(0, 5, 6, "Norway")]],
     "labels": [{"h": 0, "t": 1, "r": "P17", "evidence": [0]},
                {"h": 1, "t": 0, "r": "P36", "evidence": [0]}]},
]

HEADER = ("doc_id\tsubject\tsubject_start\tsubject_end\trelation\tobject\tobject_start\t"
          "object_end\tconfidence\n")
# the gold labels written as a run: one line per gold mention pair
PERFECT = ["Anna Berg\tAnna Berg\t0\t9\tP19\tOslo\t22\t26\t1",
           "Anna Berg\tBerg\t29\t33\tP19\tOslo\t22\t26\t1",
           "Anna Berg\tAnna Berg\t0\t9\tP551\tParis\t43\t48\t1",
           "Anna Berg\tBerg\t29\t33\tresidence\tParis\t43\t48\t1",
           "Oslo\tOslo\t0\t4\tP17\tNorway\t23\t29\t1",
           "Oslo\tNorway\t23\t29\tP36\tOslo\t0\t4\t1"]


def write_reference(folder: Path, documents=None, relations=None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "documents.json").write_text(json.dumps(documents or DOCUMENTS), encoding="utf-8")
    (folder / "relations.json").write_text(json.dumps(relations or RELATIONS), encoding="utf-8")
    return folder
