"""Which systems of a shared task differ: every pair tested, Holm-corrected, grouped.

For each pair of systems scored on the same units: the paired bootstrap's
percentile interval of the difference and its p, and the paired randomization
test's p (``shareval.metrics.significance``, the same tests as ``shareval
compare``). The randomization p-values of all pairs are Holm-adjusted together
(``shareval.metrics.multiple.holm``) and a pair differs when its adjusted p is
below alpha. ``groups`` are the clusters overview papers draw over a ranking.

Speed: a matrix of k systems has k (k - 1) / 2 pairs. The bootstrap draws its
resamples once (the draws ``paired_bootstrap`` makes with the same seed) and
computes each system's metric on them once, so every pair's interval and p are
exactly those ``paired_bootstrap`` gives, at the cost of k metric evaluations.
The randomization test swaps A and B per unit, so it must be run per pair; for
the library's aggregates (``weighted_mean``, ``micro_f1``, ``aqwv``) the swapped metrics
are computed for all pairs at once from the same swap draws
``randomization_test`` makes, giving its p exactly; any other aggregate calls
``randomization_test`` pair by pair.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..metrics.multiple import holm
from ..metrics.significance import BATCH_ELEMENTS, paired_bootstrap, randomization_test
from ..stats import MIN_UNITS, too_few_units
from ..tasks.base import UnitStats, aqwv, micro_f1, weighted_mean

DIFFER, SAME, UNDECIDED = "differ", "no difference", "cannot decide"


@dataclass
class PairTest:
    a: str
    b: str
    units: int
    difference: float          # metric(a) - metric(b)
    ci_low: float              # paired bootstrap percentile CI of the difference
    ci_high: float
    p_randomization: float
    p_bootstrap: float
    p_holm: float              # Holm-adjusted randomization p over the decided pairs
    verdict: str               # "differ" | "no difference" | "cannot decide"
    note: str = ""             # why "cannot decide"

    def mirrored(self) -> "PairTest":
        """The same test read as b against a."""
        return PairTest(self.b, self.a, self.units, -self.difference, -self.ci_high,
                        -self.ci_low, self.p_randomization, self.p_bootstrap, self.p_holm,
                        self.verdict, self.note)


@dataclass
class Matrix:
    systems: list[str]         # best first by value (lower_is_better respected), ties by name
    values: dict[str, float]
    tests: dict[tuple[str, str], PairTest]   # both orders; (b, a) mirrors (a, b)
    groups: list[list[str]]    # runs of consecutive systems no two of which differ
    notes: list[str] = field(default_factory=list)


def _resample_batches(n_units: int, width: int, strata, samples: int, seed: int):
    """The unit indices ``paired_bootstrap`` draws with this seed, batch by batch."""
    rng = np.random.default_rng(seed)
    groups = [np.arange(n_units)] if strata is None else \
        [np.flatnonzero(np.asarray(strata) == g) for g in np.unique(strata)]
    size = max(1, BATCH_ELEMENTS // max(1, n_units * width))
    for start in range(0, samples, size):
        n = min(size, samples - start)
        yield np.concatenate([g[rng.integers(0, len(g), size=(n, len(g)))] for g in groups],
                             axis=1)


def _swap_batches(n_units: int, width: int, samples: int, seed: int):
    """The per-unit swaps ``randomization_test`` draws with this seed, batch by batch."""
    rng = np.random.default_rng(seed)
    size = max(1, BATCH_ELEMENTS // max(1, n_units * width))
    for start in range(0, samples, size):
        n = min(size, samples - start)
        yield rng.random((n, n_units)) < 0.5


def _stats(us: UnitStats) -> np.ndarray:
    s = np.asarray(us.stats, dtype=float)
    return s.reshape(len(us.units), -1)


def _value(us: UnitStats) -> float:
    if len(us.units) == 0:
        return float("nan")
    return float(us.aggregate(_stats(us)[None], np.asarray(us.weights, dtype=float)[None])[0])


def interval(us: UnitStats, samples: int = 10_000, confidence: float = 0.95,
             seed: int = 0) -> tuple[float, float]:
    """Bootstrap percentile interval of one system's metric: units resampled with
    replacement, within their strata when ``us.strata`` is set (so every resample
    keeps each language's share, as the metric's own weighting does). (NaN, NaN)
    with fewer than 2 units: one unit resamples to itself, which is no interval."""
    if len(us.units) < 2:
        return float("nan"), float("nan")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    stats = _stats(us)
    w = np.asarray(us.weights, dtype=float)
    values = np.concatenate([us.aggregate(stats[idx], w[idx]) for idx in _resample_batches(
        len(w), stats.shape[1], us.strata, samples, seed)])
    alpha = 1.0 - confidence
    lo, hi = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def interval_defined(us: UnitStats, min_units: int = MIN_UNITS) -> bool:
    """Whether a bootstrap interval means anything: at least ``min_units`` units (as
    the paired tests need) and no stratum of a single unit (it never varies)."""
    if len(us.units) < min_units:
        return False
    if us.strata is not None:
        _, counts = np.unique(np.asarray(us.strata), return_counts=True)
        return bool(counts.min() >= 2)
    return True


def _same_setup(x: UnitStats, y: UnitStats) -> str:
    """Why x and y cannot be paired ('' when they can)."""
    if list(x.units) != list(y.units):
        shared = len(set(x.units) & set(y.units))
        return (f"evaluated on different units ({len(x.units)} and {len(y.units)}, "
                f"{shared} shared)")
    if x.metric != y.metric:
        return f"different metrics ({x.metric} and {y.metric})"
    if x.aggregate is not y.aggregate or _stats(x).shape != _stats(y).shape:
        return "different per-unit statistics"
    if not np.array_equal(np.asarray(x.weights, dtype=float),
                          np.asarray(y.weights, dtype=float)):
        return "different unit weights"
    sx = None if x.strata is None else np.asarray(x.strata).tolist()
    sy = None if y.strata is None else np.asarray(y.strata).tolist()
    if sx != sy:
        return "different strata"
    return ""


def _fast_differences(aggregate, a: np.ndarray, b: np.ndarray, w: np.ndarray):
    """For the library's aggregates: a function of a swap batch (batch, n) -> the
    swapped differences metric(A*) - metric(B*), (batch, pairs); a, b: (n, s, pairs).
    None for any other aggregate, and for ``aqwv`` when A and B disagree on which
    queries have relevant documents (a swap would then change the denominators)."""
    if aggregate is weighted_mean:
        # metric(A*) - metric(B*) = sum_i w_i (1 - 2 swap_i) (a_i - b_i) / sum(w)
        d = (w[:, None] * (a[:, 0, :] - b[:, 0, :])) / w.sum()
        return lambda swap: (1.0 - 2.0 * swap) @ d
    if aggregate is micro_f1:
        # totals of A* = totals of A + swap @ (b - a); of B* = totals of B - swap @ (b - a)
        ta, tb = a.sum(axis=0), b.sum(axis=0)             # (3, pairs)
        delta = (b - a).reshape(len(w), -1)               # (n, 3 * pairs)

        def f1(t):
            tp, fp, fn = t[:, 0], t[:, 1], t[:, 2]
            den = 2 * tp + fp + fn
            return np.where(den > 0, 2 * tp / np.where(den > 0, den, 1), 0.0)

        def diffs(swap):
            moved = (swap.astype(float) @ delta).reshape(len(swap), *ta.shape)
            return f1(ta[None] + moved) - f1(tb[None] - moved)
        return diffs
    if aggregate is aqwv and np.array_equal(a[:, 1, :], b[:, 1, :]):
        # the queries with relevant documents (column 1) are the same in A and B (one
        # reference), so both means keep their denominators under a swap: linear, as above
        rel = w @ a[:, 1, :]                              # (pairs,)
        d = -(w[:, None] * (a[:, 0, :] - b[:, 0, :])) / rel \
            - (w[:, None] * (a[:, 2, :] - b[:, 2, :])) / w.sum()
        return lambda swap: (1.0 - 2.0 * swap) @ d
    return None


def _test_class(members: list[str], named: dict[str, UnitStats], pairs: list[tuple[str, str]],
                values: dict[str, float], samples: int, seed: int, confidence: float) -> dict:
    """Bootstrap and randomization results of ``pairs`` (all within one class of
    systems sharing units, weights and strata): {(a, b): (lo, hi, p_boot, p_rand)}."""
    ref = named[members[0]]
    w = np.asarray(ref.weights, dtype=float)
    stats = {s: _stats(named[s]) for s in members}
    width = stats[members[0]].shape[1]
    n = len(w)
    # bootstrap: every system's metric on the shared resamples
    resampled = {s: [] for s in members}
    for idx in _resample_batches(n, width, ref.strata, samples, seed):
        ww = w[idx]
        for s in members:
            resampled[s].append(ref.aggregate(stats[s][idx], ww))
    resampled = {s: np.concatenate(v) for s, v in resampled.items()}
    alpha = 1.0 - confidence
    out = {}
    for a, b in pairs:
        d = resampled[a] - resampled[b]
        observed = values[a] - values[b]
        lo, hi = np.quantile(d, [alpha / 2, 1 - alpha / 2])
        tail = (np.sum(d <= 0) + 1) / (samples + 1) if observed >= 0 else \
            (np.sum(d >= 0) + 1) / (samples + 1)
        out[(a, b)] = [float(lo), float(hi), float(min(1.0, 2 * tail)), float("nan")]
    # randomization: every pair on the shared swaps
    fast = _fast_differences(ref.aggregate, np.stack([stats[a] for a, _ in pairs], axis=-1),
                             np.stack([stats[b] for _, b in pairs], axis=-1), w) \
        if pairs else None
    if fast is not None:
        observed = np.array([values[a] - values[b] for a, b in pairs])
        extreme = np.zeros(len(pairs), dtype=np.int64)
        for swap in _swap_batches(n, width, samples, seed):
            extreme += np.sum(np.abs(fast(swap)) >= np.abs(observed) - 1e-12, axis=0)
        for k, pair in enumerate(pairs):
            out[pair][3] = float((extreme[k] + 1) / (samples + 1))
    else:
        for a, b in pairs:
            out[(a, b)][3] = randomization_test(stats[a], stats[b], ref.aggregate, w,
                                                samples, seed).p_value
    return out


def all_pairs(named: list[tuple[str, UnitStats]], samples: int = 10_000, seed: int = 0,
              alpha: float = 0.05, lower_is_better: bool = False,
              confidence: float = 0.95) -> Matrix:
    """Test every pair of the named systems (see the module's docstring).

    A pair "cannot decide" when the two were not scored on the same units (or
    weights, strata, metric), when they share fewer than ``MIN_UNITS`` units, or
    when either metric is undefined (NaN); such pairs keep whatever p-values could
    be computed but take no part in the Holm correction (p_holm NaN). The others
    differ when p_holm < alpha.
    """
    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha}")
    names = [n for n, _ in named]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"system names must be unique; repeated: {', '.join(dup)}")
    stats = dict(named)
    values = {n: _value(us) for n, us in named}
    sign = 1.0 if lower_is_better else -1.0
    systems = sorted(names, key=lambda n: (math.isnan(values[n]),
                                           sign * values[n] if not math.isnan(values[n]) else 0,
                                           n.lower(), n))
    # classes of systems that can be paired; pairs in rank order (a ranked above b)
    classes: list[list[str]] = []
    for s in systems:
        for c in classes:
            if not _same_setup(stats[c[0]], stats[s]):
                c.append(s)
                break
        else:
            classes.append([s])
    class_of = {s: i for i, c in enumerate(classes) for s in c}
    ranked_pairs = [(a, b) for i, a in enumerate(systems) for b in systems[i + 1:]]
    results: dict = {}
    for i, members in enumerate(classes):
        pairs = [(a, b) for a, b in ranked_pairs if class_of[a] == i and class_of[b] == i
                 and len(stats[a].units) > 0
                 and not math.isnan(values[a]) and not math.isnan(values[b])]
        if pairs:
            results.update(_test_class(members, stats, pairs, values, samples, seed,
                                       confidence))
    nan = float("nan")
    tests: dict[tuple[str, str], PairTest] = {}
    decided = []
    for a, b in ranked_pairs:
        units = len(stats[a].units)
        why = _same_setup(stats[a], stats[b])
        if not why and units < MIN_UNITS:
            why = too_few_units(units)
        undefined = [s for s in (a, b) if math.isnan(values[s])]
        if not why and undefined:
            why = f"the metric is undefined (NaN) for {' and '.join(undefined)}"
        if why:
            units = len(set(stats[a].units) & set(stats[b].units))
        lo, hi, pb, pr = results.get((a, b), (nan, nan, nan, nan))
        t = PairTest(a, b, units, values[a] - values[b], lo, hi, pr, pb, nan,
                     UNDECIDED if why else "", why)
        tests[(a, b)] = t
        if not why:
            decided.append(t)
    for t, p in zip(decided, holm([t.p_randomization for t in decided])):
        t.p_holm = float(p)
        t.verdict = DIFFER if p < alpha else SAME
    for (a, b), t in list(tests.items()):
        tests[(b, a)] = t.mirrored()
    notes = []
    undecided = len(ranked_pairs) - len(decided)
    if undecided:
        notes.append(f"{undecided} of {len(ranked_pairs)} pairs cannot be decided; the Holm "
                     f"correction runs over the other {len(decided)}")
    return Matrix(systems, values, tests, groups(systems, tests), notes)


def groups(systems: list[str], tests) -> list[list[str]]:
    """The maximal runs of consecutive systems (in the given rank order) no two of
    which differ; an undecided pair does not differ. Every system is in one at least.
    ``tests``: the matrix's {(a, b): PairTest}, or a function differ(a, b) -> bool.

    >>> t = lambda a, b, v: ((a, b), PairTest(a, b, 10, 0, 0, 0, 0, 0, 0, v))
    >>> groups(["A", "B", "C"], dict([t("A", "B", "no difference"),
    ...                               t("A", "C", "differ"), t("B", "C", "no difference")]))
    [['A', 'B'], ['B', 'C']]
    """
    def differ(a, b):
        if callable(tests):
            return bool(tests(a, b))
        t = tests.get((a, b)) or tests.get((b, a))
        return t is not None and t.verdict == DIFFER

    runs: list[list[str]] = []
    end = 0
    for i in range(len(systems)):
        j = max(end, i + 1)
        while j < len(systems) and not any(differ(systems[k], systems[j])
                                           for k in range(i, j)):
            j += 1
        if j > end:                      # a run ending where an earlier one did is inside it
            runs.append(systems[i:j])
            end = j
    return runs
