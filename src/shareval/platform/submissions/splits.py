"""Public/private split of one evaluation set.

A dataset's ``split`` names its private units, either as a list of unit ids
(``split: {private: units.txt}`` in the bundle, one id a line) or as a seeded
hash fraction (``split: {fraction: 0.5, seed: 13}``: a unit is private when
``sha256("seed:unit")`` read as a number in [0, 1) is below the fraction, so
the split is fixed by the seed, independent of the order of the file, and
anyone holding the seed and the unit ids can recompute it).

Every run is scored on both parts at scoring time: the public part is the
``Score.result`` that pages show during the phase; the private part is stored
beside it (``Score.private_result``) and shown only once the phase's results
are released (``access.private_released``).

Only tasks with a restriction function below support a split; the bundle
refuses ``split`` for the others.
"""
from __future__ import annotations

import dataclasses
import hashlib

from shareval.formats.labels import Labels


def private_test(split: dict):
    """A function telling whether a unit id is in the private part."""
    if "units" in split:
        return frozenset(str(u) for u in split["units"]).__contains__
    seed, fraction = split["seed"], float(split["fraction"])

    def hashed(unit: str) -> bool:
        h = hashlib.sha256(f"{seed}:{unit}".encode()).digest()
        return int.from_bytes(h[:8], "big") / 2 ** 64 < fraction
    return hashed


def _labels(ref: Labels, sub: Labels, split: dict, private: bool) -> tuple[Labels, Labels]:
    test = private_test(split)
    keep = {i for i in ref.labels if test(i) == private}
    r = dataclasses.replace(ref, labels={i: v for i, v in ref.labels.items() if i in keep},
                            lines={i: v for i, v in ref.lines.items() if i in keep})
    s = dataclasses.replace(sub, labels={i: v for i, v in sub.labels.items() if i in keep},
                            lines={i: v for i, v in sub.lines.items() if i in keep},
                            warnings=list(sub.warnings))
    return r, s


def _label_units(ref: Labels) -> list[str]:
    return list(ref.labels)


# task name -> (restrict(reference, submission, split, private) -> (ref, sub), units(ref))
SPLITTERS = {"classification": (_labels, _label_units)}


def supported(task_name: str) -> bool:
    return task_name in SPLITTERS


def units(task, reference) -> list[str]:
    return SPLITTERS[task.name][1](task.reference(reference))


def score_parts(task, reference: str, submission: str, split: dict, options: dict):
    """(public result, private result) as dicts: both parts scored from one load."""
    restrict = SPLITTERS[task.name][0]
    ref = task.reference(reference)
    sub = task.submission(submission, ref)
    out = []
    for private in (False, True):
        r, s = restrict(ref, sub, split, private)
        res = task.score(r, s, **options).to_dict()
        res["conventions"]["split"] = (f"{'private' if private else 'public'} part of the "
                                       f"evaluation set: {len(SPLITTERS[task.name][1](r))} units")
        out.append(res)
    return out[0], out[1]
