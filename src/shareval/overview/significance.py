"""Significance across every pair of systems of a table: the paired randomization test
and paired bootstrap on the task's units (as ``shareval compare``), Holm-corrected over
all pairs, and the groups of systems that do not differ (the overview's "clusters")."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..metrics.multiple import holm
from ..metrics.significance import paired_bootstrap, randomization_test
from ..stats import ALPHA, MIN_UNITS, too_few_units
from ..tasks.base import UnitStats

DIFFER, SAME, UNDECIDED = "differ", "no difference", "cannot decide"


@dataclass
class PairTest:
    a: str
    b: str
    units: int
    difference: float
    ci_low: float
    ci_high: float
    p_randomization: float
    p_bootstrap: float
    p_holm: float
    verdict: str
    note: str = ""


@dataclass
class Matrix:
    systems: list[str]
    values: dict[str, float]
    tests: dict[tuple[str, str], PairTest]
    groups: list[list[str]]
    notes: list[str] = field(default_factory=list)


def value(us: UnitStats) -> float:
    return float(us.aggregate(np.asarray(us.stats)[None], np.asarray(us.weights)[None])[0])


def interval(us: UnitStats, samples: int = 10_000, confidence: float = 0.95,
             seed: int = 0) -> tuple[float, float]:
    """Bootstrap percentile interval of one system's metric, units resampled within
    their strata (languages for SV-Ident). (NaN, NaN) when it would mean nothing: fewer
    than ``MIN_UNITS`` units, or a stratum of one unit (it never varies)."""
    stats = np.asarray(us.stats, dtype=float)
    if stats.ndim == 1:
        stats = stats[:, None]
    w = np.asarray(us.weights, dtype=float)
    if not interval_defined(us):
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    groups = [np.arange(len(w))] if us.strata is None else \
        [np.flatnonzero(np.asarray(us.strata) == g) for g in np.unique(us.strata)]
    batch = max(1, 4_000_000 // max(1, len(w) * stats.shape[1]))
    vals = []
    for start in range(0, samples, batch):
        n = min(batch, samples - start)
        idx = np.concatenate([g[rng.integers(0, len(g), size=(n, len(g)))] for g in groups],
                             axis=1)
        vals.append(us.aggregate(stats[idx], w[idx]))
    v = np.concatenate(vals)
    alpha = 1 - confidence
    lo, hi = np.quantile(v, [alpha / 2, 1 - alpha / 2])
    return (float(lo), float(hi))


def interval_defined(us: UnitStats, min_units: int = MIN_UNITS) -> bool:
    if len(us.units) < min_units:
        return False
    if us.strata is not None:
        _, counts = np.unique(np.asarray(us.strata), return_counts=True)
        return bool(counts.min() >= 2)
    return True


def _pair(a: str, ua: UnitStats, b: str, ub: UnitStats, samples, seed, confidence) -> PairTest:
    nan = float("nan")
    if list(ua.units) != list(ub.units):
        return PairTest(a, b, 0, value(ua) - value(ub), nan, nan, nan, nan, nan, UNDECIDED,
                        "the two runs were scored on different units")
    n = len(ua.units)
    if n < MIN_UNITS:
        return PairTest(a, b, n, value(ua) - value(ub), nan, nan, nan, nan, nan, UNDECIDED,
                        too_few_units(n))
    boot = paired_bootstrap(ua.stats, ub.stats, ua.aggregate, ua.weights, ua.strata, samples,
                            confidence, seed)
    rand = randomization_test(ua.stats, ub.stats, ua.aggregate, ua.weights, samples, seed)
    return PairTest(a, b, n, boot.statistic, boot.ci_low, boot.ci_high, rand.p_value,
                    boot.p_value, nan, "")


def all_pairs(named: list[tuple[str, UnitStats]], samples: int = 10_000, seed: int = 0,
              alpha: float = ALPHA, lower_is_better: bool = False,
              confidence: float = 0.95) -> Matrix:
    values = {name: value(us) for name, us in named}
    sign = 1 if lower_is_better else -1
    systems = sorted(values, key=lambda s: (np.isnan(values[s]), sign * np.nan_to_num(values[s]),
                                            s.lower()))
    stats = dict(named)
    pairs = [_pair(a, stats[a], b, stats[b], samples, seed, confidence)
             for i, a in enumerate(systems) for b in systems[i + 1:]]
    adjusted = holm([t.p_randomization for t in pairs])
    tests: dict[tuple[str, str], PairTest] = {}
    for t, p in zip(pairs, adjusted):
        if not t.verdict:
            t.p_holm = float(p)
            t.verdict = DIFFER if p < alpha else SAME
        tests[(t.a, t.b)] = t
        tests[(t.b, t.a)] = PairTest(t.b, t.a, t.units, -t.difference, -t.ci_high, -t.ci_low,
                                     t.p_randomization, t.p_bootstrap, t.p_holm, t.verdict,
                                     t.note)
    notes = []
    undecided = sum(t.verdict == UNDECIDED for t in pairs)
    if undecided:
        notes.append(f"{undecided} of {len(pairs)} pairs cannot be decided; they count as not "
                     f"differing in the groups")
    return Matrix(systems, values, tests, groups(systems, lambda x, y:
                                                  tests[(x, y)].verdict == DIFFER), notes)


def groups(order: list[str], differ) -> list[list[str]]:
    """Maximal runs of consecutive systems (best first) no two of which differ; a run
    inside another is dropped; every system is in at least one run."""
    runs = []
    for i in range(len(order)):
        j = i
        while j + 1 < len(order) and not any(differ(order[k], order[j + 1])
                                             for k in range(i, j + 1)):
            j += 1
        runs.append((i, j))
    kept = [r for r in runs if not any(o != r and o[0] <= r[0] and r[1] <= o[1] for o in runs)]
    return [order[i:j + 1] for i, j in kept]
