"""Drawing the items to judge, with each item's inclusion probability.

Designs (docs/assessment.md):

* ``uniform``: n items without replacement from each submission, on its
  own; one row per (submission, item) with probability n / |X_i|. The same
  item drawn for two submissions is still judged once (rows share the item).
* ``joint``: the same per-submission draws, pooled: one row per distinct
  item, listing every submission whose output contains it, with the
  probability that any draw included it, 1 - prod_j (1 - n_j / |X_j|).
  A submission's precision then uses every judged item it contains, so
  overlapping submissions share judgments (Horvitz-Thompson/Hajek weights
  keep the estimate unbiased).

Recall (``--docs D``): D documents drawn uniformly from the documents any
submission touched; every pooled item in them is listed with
``drawn_for = recall`` so judges annotate those documents exhaustively.
``drawn_by`` names the submissions whose draw picked the item (the strata
of Chaganty et al.'s importance estimator); a first ``# sizes:`` line
gives every output's size |X_j| and an ``# overlaps:`` line the items each
pair of outputs shares, |X_i & X_j|, for its heuristic weights.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .judgments import quote_name
from .outputs import Output

COLUMNS = ["item", "doc", "submissions", "inclusion_probability", "drawn_for", "drawn_by"]


@dataclass
class Row:
    item: str
    doc: str
    submissions: list[str]
    inclusion_probability: float
    drawn_for: str
    drawn_by: list[str]


def _draw(out: Output, n: int, rng) -> list[str]:
    keys = out.keys()
    take = min(n, len(keys))
    idx = rng.choice(len(keys), size=take, replace=False) if take else []
    return [keys[i] for i in sorted(idx)]


def draw_sample(outputs: list[Output], n: int | dict[str, int], design: str = "joint",
                docs: int = 0, seed: int = 0) -> list[Row]:
    """``n``: items drawn per submission, or a mapping name -> n_j."""
    if design not in ("uniform", "joint"):
        raise ValueError("design must be 'uniform' or 'joint'")
    per = n if isinstance(n, dict) else {o.name: n for o in outputs}
    if min(per.values(), default=0) < 0 or docs < 0:
        raise ValueError("sample sizes must be >= 0")
    rng = np.random.default_rng(seed)
    contains: dict[str, list[str]] = {}
    doc_of: dict[str, str] = {}
    for o in outputs:
        for k, d in o.items.items():
            contains.setdefault(k, []).append(o.name)
            doc_of.setdefault(k, d)
    frac = {o.name: (min(per[o.name], len(o)) / len(o) if len(o) else 0.0) for o in outputs}
    rows: list[Row] = []
    drawn = {o.name: _draw(o, per[o.name], rng) for o in outputs}
    if design == "uniform":
        for o in outputs:
            rows += [Row(k, doc_of[k], [o.name], frac[o.name], "precision", [o.name])
                     for k in drawn[o.name]]
    else:
        by: dict[str, list[str]] = {}
        for o in outputs:
            for k in drawn[o.name]:
                by.setdefault(k, []).append(o.name)
        for k in sorted(by):
            subs = contains[k]
            pi = 1 - float(np.prod([1 - frac[s] for s in subs]))
            rows.append(Row(k, doc_of[k], list(subs), pi, "precision", by[k]))
    if docs:
        all_docs = sorted(set(doc_of.values()))
        pick = rng.choice(len(all_docs), size=min(docs, len(all_docs)), replace=False)
        chosen = {all_docs[i] for i in pick}
        for k in sorted(contains):
            if doc_of[k] in chosen:
                rows.append(Row(k, doc_of[k], list(contains[k]), len(chosen) / len(all_docs),
                                "recall", []))
    return rows


def sizes_comment(outputs: list[Output]) -> str:
    """Output sizes |X_j|, which the importance estimator needs beside the rows."""
    return "# sizes: " + ",".join(f"{quote_name(o.name)}={len(o)}" for o in outputs)


def pair_overlaps(outputs: list[Output]) -> dict[str, int]:
    """{"A+B": |X_A & X_B|} for every pair of outputs sharing items (names quoted)."""
    out = {}
    for i, a in enumerate(outputs):
        keys = set(a.items)
        for b in outputs[i + 1:]:
            n = len(keys.intersection(b.items))
            if n:
                out[f"{quote_name(a.name)}+{quote_name(b.name)}"] = n
    return out


def overlaps_comment(outputs: list[Output]) -> str:
    """The '# overlaps:' line the heuristic importance weights need."""
    return "# overlaps: " + ",".join(f"{k}={v}" for k, v in pair_overlaps(outputs).items())


def write_sample(rows: list[Row], path: str | Path | None, stream=None,
                 sizes: str | None = None) -> None:
    """``sizes``: the header comment lines (sizes, overlaps) written before the rows."""
    f = open(path, "w", encoding="utf-8", newline="") if path else stream
    try:
        for line in sizes.splitlines() if sizes else ():
            f.write(line + "\n")
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow([r.item, r.doc, ",".join(map(quote_name, r.submissions)),
                        f"{r.inclusion_probability:.10g}", r.drawn_for,
                        ",".join(map(quote_name, r.drawn_by))])
    finally:
        if path:
            f.close()
