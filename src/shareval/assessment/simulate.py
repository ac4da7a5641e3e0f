"""Simulation studies of the estimators on synthetic ground truth.

A world has documents with true and false candidate items; each system
outputs true items with its own recall and false items with its own
eagerness, both driven by shared item difficulty, so systems overlap as
real ones do. Each simulation draws a sample with the library
(``draw_sample``), answers it from the truth, estimates with the library
(``estimate_all``), and records estimate and interval against the truth.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..metrics.estimation import WEIGHTINGS
from ..progress import progress
from .estimate import estimate_all
from .judgments import Judgment, Judgments, unquote_name
from .outputs import Output
from .sample import draw_sample, pair_overlaps


@dataclass
class World:
    outputs: list[Output]
    truth: dict[str, bool]
    true_items: set[str]

    def precision(self, o: Output) -> float:
        return sum(self.truth[k] for k in o.items) / len(o)

    def recall(self, o: Output) -> float:
        return sum(self.truth[k] for k in o.items) / len(self.true_items)


def make_world(seed: int = 0, docs: int = 300, systems: int = 6, per_doc: float = 8.0,
               coverage: float = 1.0) -> World:
    """``coverage`` < 1: system s outputs only from its own band of that share of
    the documents (bands start s/S apart and wrap), so outputs overlap unevenly:
    neighbours much, distant systems little or not at all."""
    if not 0 < coverage <= 1:
        raise ValueError("coverage must be in (0, 1]")
    rng = np.random.default_rng(seed)
    truth: dict[str, bool] = {}
    doc_of: dict[str, str] = {}
    for d in range(docs):
        for kind, count in (("t", rng.poisson(per_doc) + 1), ("f", rng.poisson(per_doc))):
            for i in range(count):
                k = f"d{d}|{kind}{i}"
                truth[k] = kind == "t"
                doc_of[k] = f"d{d}"
    keys = sorted(truth)
    ease = dict(zip(keys, rng.random(len(keys))))
    outputs = []
    for s in range(systems):
        recall = 0.35 + 0.4 * s / max(1, systems - 1)        # 0.35 .. 0.75
        eager = 0.15 + 0.25 * rng.random()                   # share of false items taken
        items = {}
        start = s * docs // systems
        for k in keys:
            noise = 0.15 * rng.standard_normal()
            take = ease[k] + noise < (recall if truth[k] else eager)
            in_band = (int(doc_of[k][1:]) - start) % docs < coverage * docs
            if take and in_band:
                items[k] = doc_of[k]
        outputs.append(Output(f"sys{s}", items))
    return World(outputs, truth, {k for k, v in truth.items() if v})


def judgments_for(world: World, rows, outputs) -> Judgments:
    """Perfect judges: the answer is the truth (annotators also add true items
    of the recall documents that no system output)."""
    recs = [Judgment(r.item, tuple(r.submissions), "j1", "correct", float(world.truth[r.item]),
                     r.inclusion_probability, r.doc, r.drawn_for, tuple(r.drawn_by), i)
            for i, r in enumerate(rows)]
    rdocs = {r.doc for r in rows if r.drawn_for == "recall"}
    pooled = {r.item for r in rows if r.drawn_for == "recall"}
    for k in sorted(world.true_items):
        d = k.split("|")[0]
        if d in rdocs and k not in pooled:
            recs.append(Judgment(k, (), "j1", "correct", 1.0, 1.0, d, "recall", (), 0))
    sizes = {o.name: len(o) for o in outputs}
    overlaps = {tuple(sorted(map(unquote_name, k.split("+")))): v
                for k, v in pair_overlaps(outputs).items()}
    return Judgments(recs, sizes, overlaps)


@dataclass
class Summary:
    method: str
    metric: str
    bias: float              # mean over simulations and systems of estimate - truth
    worst_bias_se: float     # max over systems of |mean bias| / its standard error
    coverage: float          # share of intervals holding the truth
    median_width: float


def run_simulations(world: World, sims: int = 1000, n: int = 60, docs: int = 30,
                    seed: int = 1) -> dict[tuple[str, str], Summary]:
    """``n``: mean draws per system; system s of S draws n (0.5 + s / (S - 1)),
    so draw counts differ (as for submissions evaluated at different times) and
    the size and uniform importance weightings differ.
    A progress bar counts the simulations on a terminal."""
    truth_p = {o.name: world.precision(o) for o in world.outputs}
    S = len(world.outputs)
    per = {o.name: int(round(n * (0.5 + s / max(1, S - 1)))) if S > 1 else n
           for s, o in enumerate(world.outputs)}
    truth_r = {o.name: world.recall(o) for o in world.outputs}
    rec: dict[tuple[str, str, str], list] = {}
    for i in progress(range(sims), total=sims, what="simulating"):
        for design in ("uniform", "joint"):
            rows = draw_sample(world.outputs, per, design, docs, seed=seed * 100_003 + i)
            j = judgments_for(world, rows, world.outputs)
            methods = [("design", None)] + ([("importance", w) for w in WEIGHTINGS]
                                            if design == "joint" else [])
            for method, weights in methods:
                table, _ = estimate_all(j, method, bootstrap=0, weights=weights or "heuristic")
                label = f"{design}/importance-{weights}" if weights else design
                for s, row in table.items():
                    for metric, truth in (("precision", truth_p[s]), ("recall", truth_r[s])):
                        if metric == "recall" and design == "joint":
                            continue                 # same documents as uniform: not repeated
                        rec.setdefault((label, metric, s), []).append(
                            (row[metric] - truth, row[f"{metric}_low"] <= truth <= row[f"{metric}_high"],
                             row[f"{metric}_high"] - row[f"{metric}_low"]))
                    if weights:
                        rec.setdefault((label, "recall_importance", s), []).append(
                            (row["recall_importance"] - truth_r[s], np.nan, np.nan))
    out = {}
    for key in sorted({(a, b) for a, b, _ in rec}):
        per = [np.array(v, dtype=float) for (a, b, _), v in rec.items() if (a, b) == key]
        allv = np.concatenate(per)
        ratios = [abs(v[:, 0].mean()) / (v[:, 0].std(ddof=1) / np.sqrt(len(v))) for v in per]
        has_ci = not np.all(np.isnan(allv[:, 1]))
        out[key] = Summary(key[0], key[1], float(allv[:, 0].mean()), float(max(ratios)),
                           float(np.nanmean(allv[:, 1])) if has_ci else float("nan"),
                           float(np.nanmedian(allv[:, 2])) if has_ci else float("nan"))
    return out

