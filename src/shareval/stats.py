"""Statistics every leaderboard needs: annotator agreement and paired significance."""
from __future__ import annotations

import math
from contextlib import nullcontext
from itertools import combinations
from pathlib import Path

import numpy as np

from . import __version__
from .formats.errors import InvalidInput, Problem, Problems
from .formats.labels import read_annotations
from .metrics import agreement, significance
from .progress import steps
from .tasks import get
from .tasks.base import Result

AGREEMENT_CONVENTIONS = {
    "data": "nominal labels; one row per (item, annotator); an empty label or a missing row "
            "is a missing judgment",
    "cohen_kappa": "over items both annotators labelled; with more than two annotators, the "
                   "mean over annotator pairs (pairs in the breakdown)",
    "fleiss_kappa": "only when every item has the same number (>= 2) of judgments",
    "krippendorff_alpha": "nominal metric; items with fewer than two judgments are not pairable "
                          "and are dropped",
    "undefined": "NaN (null in JSON) where chance agreement is 1 or nothing is pairable",
}


def agreement_result(path) -> Result:
    problems = Problems()
    ann = read_annotations(path, problems)
    problems.raise_if_any()
    labels = sorted({v for v in ann.judgments.values()})
    code = {v: i for i, v in enumerate(labels)}
    item_idx = {it: j for j, it in enumerate(ann.items)}
    m = np.full((len(ann.annotators), len(ann.items)), agreement.MISSING, dtype=np.int64)
    for i, a in enumerate(ann.annotators):
        for it in ann.items:
            v = ann.judgments.get((it, a))
            if v is not None:
                m[i, item_idx[it]] = code[v]
    warnings = []
    pairs = {}
    for i, j in combinations(range(len(ann.annotators)), 2):
        both = int(np.sum((m[i] >= 0) & (m[j] >= 0)))
        pairs[f"{ann.annotators[i]} & {ann.annotators[j]}"] = {
            "cohen_kappa": agreement.cohen_kappa(m[i], m[j]), "items": both}
    kappas = [p["cohen_kappa"] for p in pairs.values() if not math.isnan(p["cohen_kappa"])]
    metrics = {
        "cohen_kappa": float(np.mean(kappas)) if kappas else float("nan"),
        "krippendorff_alpha": agreement.krippendorff_alpha_nominal(m),
        "observed_agreement": agreement.observed_agreement(m),
    }
    try:
        metrics["fleiss_kappa"] = agreement.fleiss_kappa(m)
    except ValueError as e:
        metrics["fleiss_kappa"] = float("nan")
        warnings.append(f"Fleiss' kappa not computed: {e}")
    if len(ann.annotators) < 2:
        warnings.append("fewer than two annotators: agreement is undefined")
    per_label = {lab: {"judgments": int(np.sum(m == code[lab]))} for lab in labels}
    return Result("agreement", f"agreement/1 (shareval {__version__})",
                  dict(AGREEMENT_CONVENTIONS), metrics,
                  breakdowns={"pairwise": pairs, "per_label": per_label},
                  counts={"items": len(ann.items), "annotators": len(ann.annotators),
                          "judgments": len(ann.judgments), "labels": len(labels)},
                  warnings=warnings)


# Fewer paired units than this, and neither test means anything: the randomization
# test cannot reach p < 0.05 below 6 units (its smallest p is 2/2^n), and the bootstrap
# draws its resamples from too few distinct ones (35 for 4 units) for a p or an interval.
MIN_UNITS = 10
ALPHA = 0.05
COMPARE_CONVENTIONS = {
    "units": "the task's evaluation units (queries, documents or publications), paired",
    "decision": f"the randomization test decides: A and B differ when p < {ALPHA} with at "
                f"least {MIN_UNITS} paired units; the bootstrap gives the interval",
    "bootstrap": "paired bootstrap over units (within languages for SV-Ident); percentile CI "
                 "of metric(A) - metric(B); two-sided p with add-one smoothing",
    "randomization": "approximate paired randomization test, swapping A/B per unit; two-sided "
                     "p = (1 + #{|d*| >= |d|}) / (1 + samples)",
}


def compare_result(task_name: str, reference, sub_a, sub_b, samples: int = 10_000,
                   confidence: float = 0.95, seed: int = 0, show_progress: bool = False) -> Result:
    """Paired bootstrap and randomization test of A against B. ``show_progress``:
    a progress bar on a terminal (``shareval compare``; never the server's scoring)."""
    task = get(task_name)
    with (steps(4, f"compare: reading {Path(str(sub_a)).name}") if show_progress
          else nullcontext(lambda n=1, what=None: None)) as advance:
        ref = task.reference(reference)
        try:
            ua = task.unit_stats(ref, sub_a)
            advance(what=f"compare: reading {Path(str(sub_b)).name}")
            ub = task.unit_stats(ref, sub_b)
        except NotImplementedError as e:
            raise InvalidInput([Problem("<arguments>", None, "task", str(e))]) from None
        return compare_unit_stats(task_name, ua, ub, str(sub_a), str(sub_b), samples,
                                  confidence, seed, advance)


def compare_unit_stats(task_name: str, ua, ub, name_a: str, name_b: str,
                       samples: int = 10_000, confidence: float = 0.95, seed: int = 0,
                       advance=lambda n=1, what=None: None) -> Result:
    """``compare_result`` from the per-unit statistics of A and B (``Task.unit_stats``),
    computed now or stored with their scores: no file is read."""
    if ua.units != ub.units:
        raise InvalidInput([Problem(name_b, None, "units",
                                    "the two submissions are evaluated on different units")])
    value_a = float(ua.aggregate(ua.stats[None], ua.weights[None])[0])
    value_b = float(ub.aggregate(ub.stats[None], ub.weights[None])[0])
    # the two tests resample in batches: 1 step each, shared by their batches
    width = np.asarray(ua.stats).reshape(len(ua.weights), -1).shape[1]
    per = 1 / significance.batch_count(samples, len(ua.weights), width)
    advance(what=f"compare: paired bootstrap ({samples} samples)")
    boot = significance.paired_bootstrap(ua.stats, ub.stats, ua.aggregate, ua.weights,
                                         ua.strata, samples, confidence, seed,
                                         on_batch=lambda: advance(per))
    advance(0, what=f"compare: randomization test ({samples} samples)")
    rand = significance.randomization_test(ua.stats, ub.stats, ua.aggregate, ua.weights,
                                           samples, seed, on_batch=lambda: advance(per))
    metrics = {f"{ua.metric} A": value_a, f"{ua.metric} B": value_b,
               "difference": boot.statistic, "ci_low": boot.ci_low, "ci_high": boot.ci_high,
               "p_bootstrap": boot.p_value, "p_randomization": rand.p_value}
    conventions = dict(COMPARE_CONVENTIONS, metric=ua.metric, confidence=confidence,
                       samples=samples, seed=seed)
    warnings = [too_few_units(len(ua.units))] if len(ua.units) < MIN_UNITS else []
    return Result(f"compare:{task_name}", f"compare/1 (shareval {__version__})", conventions,
                  metrics, counts={"units": len(ua.units), "A": name_a, "B": name_b},
                  warnings=warnings)


def too_few_units(units: int) -> str:
    return (f"only {units} paired unit{'s' if units != 1 else ''}: with fewer than "
            f"{MIN_UNITS} neither test means anything, whatever its p")


def decision(units: int | None, p_randomization) -> str:
    """What a comparison supports, in words (the randomization test decides)."""
    if units is not None and units < MIN_UNITS:
        return "no decision: " + too_few_units(units)
    if not isinstance(p_randomization, (int, float)) or p_randomization != p_randomization:
        return "no decision: the randomization test gave no p"
    if p_randomization < ALPHA:
        return f"A and B differ (randomization test, p < {ALPHA})"
    return f"no significant difference (randomization test, p ≥ {ALPHA})"
