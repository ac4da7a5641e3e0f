"""Inter-annotator agreement.

Kappas and nominal alpha take a reliability matrix: one row per annotator, one
column per item, integer label codes with ``-1`` for a missing judgment.
:func:`krippendorff_alpha` takes units of any hashable values (frozensets for
set-valued coding) with a distance; :func:`span_agreement` compares two
annotators' spans; :func:`token_labels` turns spans into per-token nominal codes.
"""
from __future__ import annotations

import bisect
import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence

import numpy as np

MISSING = -1


def _codes(matrix) -> tuple[np.ndarray, int]:
    m = np.asarray(matrix, dtype=np.int64)
    if m.ndim != 2:
        raise ValueError("expected a 2-d matrix: annotators x items")
    n_labels = int(m.max()) + 1 if m.size and m.max() >= 0 else 0
    return m, n_labels


def cohen_kappa(a, b) -> float:
    """Cohen's kappa between two annotators over the items both labelled.

    NaN when chance agreement is 1 (both used one and the same label) or no
    item was labelled by both: kappa is undefined there (as in scikit-learn).

    Observed agreement 3/4, chance agreement 1/2: (3/4 - 1/2) / (1 - 1/2)

    >>> cohen_kappa([0, 0, 1, 1], [0, 1, 1, 1])
    0.5
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    keep = (a != MISSING) & (b != MISSING)
    a, b = a[keep], b[keep]
    if a.size == 0:
        return float("nan")
    L = int(max(a.max(), b.max())) + 1
    cm = np.bincount(a * L + b, minlength=L * L).reshape(L, L).astype(float)
    n = cm.sum()
    po = np.trace(cm) / n
    pe = float(cm.sum(axis=1) @ cm.sum(axis=0)) / (n * n)
    if pe == 1.0:
        return float("nan")
    return float((po - pe) / (1.0 - pe))


def fleiss_kappa(matrix) -> float:
    """Fleiss' kappa; every item must have the same number (>= 2) of judgments."""
    m, L = _codes(matrix)
    counts = _category_counts(m, L)               # items x labels
    per_item = counts.sum(axis=1)
    if per_item.size == 0:
        return float("nan")
    n = per_item[0]
    if n < 2 or np.any(per_item != n):
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of judgments per item")
    N = counts.shape[0]
    p_j = counts.sum(axis=0) / (N * n)
    P_i = (np.sum(counts * counts, axis=1) - n) / (n * (n - 1))
    P_bar = P_i.mean()
    P_e = float(np.sum(p_j * p_j))
    if P_e == 1.0:
        return float("nan")
    return float((P_bar - P_e) / (1.0 - P_e))


def krippendorff_alpha_nominal(matrix) -> float:
    """Krippendorff's alpha for nominal data with missing values.

    Items with fewer than two judgments are not pairable and are dropped
    (Krippendorff 2011). NaN when no item is pairable or when only one label
    value occurs (expected disagreement 0).
    """
    m, L = _codes(matrix)
    counts = _category_counts(m, L)
    m_u = counts.sum(axis=1)
    counts = counts[m_u >= 2]
    m_u = m_u[m_u >= 2]
    if counts.size == 0:
        return float("nan")
    # coincidence matrix o_ck = sum_u n_uc * n_uk / (m_u - 1) (minus the diagonal self-pairs)
    w = 1.0 / (m_u - 1.0)
    o = (counts * w[:, None]).T @ counts
    o[np.diag_indices_from(o)] -= (counts * w[:, None]).sum(axis=0)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    d_o = n - np.trace(o)
    d_e = (n * n - np.sum(n_c * n_c)) / (n - 1.0)
    if d_e == 0:
        return float("nan")
    return float(1.0 - d_o / d_e)


def _category_counts(m: np.ndarray, n_labels: int) -> np.ndarray:
    """items x labels counts of judgments (missing ignored)."""
    items = np.broadcast_to(np.arange(m.shape[1]), m.shape)
    keep = m != MISSING
    flat = items[keep] * n_labels + m[keep]
    return np.bincount(flat, minlength=m.shape[1] * n_labels).reshape(m.shape[1], n_labels
                                                                       ).astype(float)


def pairwise_cohen(matrix) -> dict[tuple[int, int], float]:
    """Cohen's kappa for every pair of annotators (row indices)."""
    m, _ = _codes(matrix)
    out = {}
    for i in range(m.shape[0]):
        for j in range(i + 1, m.shape[0]):
            out[(i, j)] = cohen_kappa(m[i], m[j])
    return out


def observed_agreement(matrix) -> float:
    """Share of agreeing pairs among all pairable judgment pairs."""
    m, L = _codes(matrix)
    counts = _category_counts(m, L)
    m_u = counts.sum(axis=1)
    pairs = m_u * (m_u - 1)
    agree = np.sum(counts * (counts - 1), axis=1)
    total = pairs.sum()
    return float(agree.sum() / total) if total else float("nan")


# --- distances between set-valued codings --------------------------------------------

def jaccard_distance(a: set, b: set) -> float:
    """1 - |a & b| / |a | b|; two empty sets are identical codings (distance 0).

    >>> jaccard_distance({1, 2}, {2, 3})
    0.6666666666666667
    >>> jaccard_distance(set(), set())
    0.0
    """
    union = len(a | b)
    return 1.0 - len(a & b) / union if union else 0.0


def masi_distance(a: set, b: set) -> float:
    """MASI distance (Passonneau 2006): 1 - J * M, J the Jaccard similarity and M the
    monotonicity weight: 1 identical, 2/3 one a subset of the other, 1/3 overlapping,
    0 disjoint. Two empty sets are identical (distance 0); an empty and a non-empty set
    are disjoint (distance 1).

    >>> masi_distance({1, 2}, {1, 2, 3, 4})    # subset: 1 - (2/4) * (2/3)
    0.6666666666666667
    >>> masi_distance(set(), set())
    0.0
    """
    if a == b:
        return 0.0
    shared = len(a & b)
    if shared == 0:
        return 1.0
    monotonicity = 2 / 3 if shared == min(len(a), len(b)) else 1 / 3
    return 1.0 - shared / len(a | b) * monotonicity


def nominal_distance(a, b) -> float:
    """0 for equal values, 1 otherwise."""
    return 0.0 if a == b else 1.0


DISTANCES: dict[str, Callable[[object, object], float]] = {
    "nominal": nominal_distance, "jaccard": jaccard_distance, "masi": masi_distance}


# --- Krippendorff's alpha with any distance ---------------------------------------------

def krippendorff_alpha(units: Sequence[Sequence[Hashable]],
                       distance: str | Callable[[object, object], float] = "nominal"
                       ) -> float:
    """Krippendorff's alpha over ``units``, each the list of values its coders gave it
    (any number of coders; a coder who skipped a unit is simply absent, and ``None``
    counts as missing too). ``distance`` is "nominal", "jaccard", "masi" or a function
    of two values that is 0 for equal ones.

    Coincidence formulation (Krippendorff 2011): within a unit of m values every
    ordered pair of distinct positions counts 1/(m - 1); alpha = 1 - D_o / D_e with
    D_o the mean distance over those pairs and D_e the mean distance over all pairs
    of the pairable values. Units with fewer than 2 values are not pairable and are
    dropped. NaN when undefined: no pairable unit, or D_e = 0 (the pairable values
    are all alike, so there is no variation to agree on).

    Krippendorff's (2011) nominal example with missing values:

    >>> units = [[1, 1, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2],
    ...          [1, 2, 3, 4], [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [5, 5, 5],
    ...          [1, 1], [3]]
    >>> round(krippendorff_alpha(units), 3)
    0.743
    """
    delta = _distance_function(distance)
    index: dict[Hashable, int] = {}
    shapes: Counter = Counter()       # identical units (most tokens are "O", "O") count once
    for unit in units:
        values = [v for v in unit if v is not None]
        if len(values) < 2:
            continue
        counts = Counter(index.setdefault(v, len(index)) for v in values)
        shapes[(len(values), tuple(sorted(counts.items())))] += 1
    if not shapes:
        return float("nan")
    coincidences = np.zeros((len(index), len(index)))
    for (m, counts), times in shapes.items():
        for (c, n_c), (k, n_k) in itertools.product(counts, counts):
            coincidences[c, k] += times * n_c * (n_k - (c == k)) / (m - 1)
    values = list(index)
    d = np.array([[delta(x, y) for y in values] for x in values], dtype=float)
    n_c = coincidences.sum(axis=1)
    n = n_c.sum()
    expected = (np.outer(n_c, n_c) - np.diag(n_c)) / (n - 1)
    d_observed = float((coincidences * d).sum()) / n
    d_expected = float((expected * d).sum()) / n
    if d_expected == 0:
        return float("nan")
    return float(1.0 - d_observed / d_expected)


def _distance_function(distance):
    if callable(distance):
        return distance
    if distance not in DISTANCES:
        raise ValueError(f"distance: {distance!r} is not one of {', '.join(DISTANCES)} "
                         "or a function")
    return DISTANCES[distance]


# --- span agreement between two annotators ----------------------------------------------

SPAN_MODES = ("exact", "partial")


def match_spans(a: Sequence[tuple], b: Sequence[tuple], mode: str = "exact"
                ) -> list[tuple[int, int]]:
    """One-to-one matching of spans ``(begin, end, label, target)`` (target optional),
    as (index in a, index in b) pairs sorted by the index in a.

    exact: same begin, end, label and target. partial: the character ranges
    [begin, end) share at least one character and label and target are equal (an
    empty span overlaps nothing). Both are maximum matchings, so the number of pairs
    does not depend on tie-breaking. Which pairs: the spans of a are taken by
    (begin, end, label, target, index) and each tries the spans of b it overlaps most
    first (then by position, then index), moving earlier pairs only when that frees
    a partner (augmenting paths): the same input always gives the same pairs.

    >>> a = [(0, 10, "D", ""), (4, 6, "D", "")]
    >>> b = [(2, 5, "D", ""), (8, 12, "D", "")]
    >>> match_spans(a, b, "partial")       # first choices kept for good would match one
    [(0, 1), (1, 0)]
    """
    if mode not in SPAN_MODES:
        raise ValueError(f"mode: {mode!r} is not one of {', '.join(SPAN_MODES)}")
    a, b = [_span(s) for s in a], [_span(s) for s in b]
    order_a = sorted(range(len(a)), key=lambda i: (a[i], i))
    if mode == "exact":
        free: dict[tuple, list[int]] = defaultdict(list)
        for j in sorted(range(len(b)), key=lambda j: (b[j], j), reverse=True):
            free[b[j]].append(j)
        pairs = [(i, free[a[i]].pop()) for i in order_a if free.get(a[i])]
        return sorted(pairs)
    by_kind: dict[tuple, list[int]] = defaultdict(list)
    for j, s in enumerate(b):
        by_kind[s[2:]].append(j)
    candidates = []
    for i in order_a:
        near = [j for j in by_kind.get(a[i][2:], ()) if _overlap(a[i], b[j]) > 0]
        near.sort(key=lambda j: (-_overlap(a[i], b[j]), b[j], j))
        candidates.append(near)
    matched = _maximum_matching(candidates, len(b))
    return sorted((order_a[row], j) for row, j in enumerate(matched) if j is not None)


def span_agreement(a: Sequence[tuple], b: Sequence[tuple], mode: str = "exact") -> dict:
    """Agreement of annotator b with annotator a on spans (see :func:`match_spans`).

    tp_a / tp_b: spans of a / of b matched (equal, the matching being one-to-one);
    precision = tp_b / n_b, recall = tp_a / n_a, f1 = (tp_a + tp_b) / (n_a + n_b),
    which is 2PR / (P + R) and symmetric in a and b. NaN when undefined: precision
    when b marked nothing, recall when a marked nothing, f1 when neither did (f1 is 0
    when only one of them marked something).

    >>> r = span_agreement([(0, 4, "D", "x"), (9, 12, "D", "")], [(0, 4, "D", "x")])
    >>> r["precision"], r["recall"], round(r["f1"], 3)
    (1.0, 0.5, 0.667)
    """
    pairs = match_spans(a, b, mode)
    return _span_scores(len(pairs), len(pairs), len(a), len(b))


def pairwise_span_f1(annotations_by_coder: Mapping, mode: str = "exact") -> dict:
    """Span agreement for every pair of coders and its mean F1.

    ``annotations_by_coder``: coder -> {unit: spans} (or coder -> spans for one unit).
    A pair is compared on the units both coded (a unit coded with no span is an empty
    list, not an absent key), counts pooled over those units. Returns
    ``{"mean_f1", "pairs": {(coder_a, coder_b): {..., "units"}}}`` with pairs in the
    coders' order; the mean is over pairs whose f1 is defined, NaN if none is.

    >>> r = pairwise_span_f1({"ann": {"u1": [(0, 4, "D", "")], "u2": []},
    ...                       "bob": {"u1": [(0, 4, "D", "")], "u2": [(5, 9, "D", "")]}})
    >>> r["mean_f1"], r["pairs"][("ann", "bob")]["units"]
    (0.6666666666666666, 2)
    """
    by_unit = {c: (v if isinstance(v, Mapping) else {None: v})
               for c, v in annotations_by_coder.items()}
    pairs = {}
    for ca, cb in itertools.combinations(by_unit, 2):
        shared = [u for u in by_unit[ca] if u in by_unit[cb]]
        tp = n_a = n_b = 0
        for u in shared:
            tp += len(match_spans(by_unit[ca][u], by_unit[cb][u], mode))
            n_a += len(by_unit[ca][u])
            n_b += len(by_unit[cb][u])
        pairs[(ca, cb)] = {**_span_scores(tp, tp, n_a, n_b), "units": len(shared)}
    defined = [p["f1"] for p in pairs.values() if not math.isnan(p["f1"])]
    return {"mean_f1": sum(defined) / len(defined) if defined else float("nan"),
            "pairs": pairs}


def _span(s) -> tuple:
    if len(s) == 3:
        return (s[0], s[1], s[2], "")
    if len(s) != 4:
        raise ValueError(f"span {s!r}: expected (begin, end, label, target)")
    return (s[0], s[1], s[2], s[3] or "")


def _overlap(x: tuple, y: tuple) -> int:
    return min(x[1], y[1]) - max(x[0], y[0])


def _span_scores(tp_a: int, tp_b: int, n_a: int, n_b: int) -> dict:
    nan = float("nan")
    return {"tp_a": tp_a, "tp_b": tp_b, "n_a": n_a, "n_b": n_b,
            "precision": tp_b / n_b if n_b else nan,
            "recall": tp_a / n_a if n_a else nan,
            "f1": (tp_a + tp_b) / (n_a + n_b) if n_a + n_b else nan}


def _maximum_matching(candidates: list[list[int]], n_right: int) -> list[int | None]:
    """Maximum bipartite matching by augmenting paths (breadth first, so no recursion
    depth limit); left rows in order, each trying its candidates in order."""
    left_of: list[int | None] = [None] * n_right
    right_of: list[int | None] = [None] * len(candidates)
    for start in range(len(candidates)):
        reached_from: dict[int, int] = {}
        queue, found = [start], None
        for row in queue:                       # the queue grows while it is walked
            for j in candidates[row]:
                if j in reached_from:
                    continue
                reached_from[j] = row
                if left_of[j] is None:
                    found = j
                    break
                queue.append(left_of[j])
            if found is not None:
                break
        while found is not None:               # flip the path back to start
            row = reached_from[found]
            previous = right_of[row]
            right_of[row], left_of[found] = found, row
            found = previous
    return right_of


# --- spans as per-token nominal codes ---------------------------------------------------

OUTSIDE = "O"
_TOKEN = re.compile(r"\w+|[^\w\s]")


def token_offsets(text: str) -> list[tuple[int, int]]:
    """Tokens as (begin, end) offsets: runs of word characters, and every other
    non-space character alone (punctuation).

    >>> token_offsets("ALLBUS 2010, wave 2.")
    [(0, 6), (7, 11), (11, 12), (13, 17), (18, 19), (19, 20)]
    """
    return [m.span() for m in _TOKEN.finditer(text)]


def token_labels(tokens: int | Sequence[tuple[int, int]], spans: Sequence[tuple]
                 ) -> list[str]:
    """One nominal label per token: "O" outside every span, else the label of the
    span(s) sharing at least one character with the token, written "label/target" when
    the span is linked; a token in spans of different labels gets them sorted and
    joined by "+" (a category of its own). ``tokens``: (begin, end) offsets in text
    order, or a text length for one token per character. An empty span covers nothing.

    >>> token_labels(token_offsets("the ALLBUS survey"), [(4, 10, "dataset", "ZA1")])
    ['O', 'dataset/ZA1', 'O']
    """
    if isinstance(tokens, int):
        tokens = [(i, i + 1) for i in range(tokens)]
    begins = [t[0] for t in tokens]
    ends = [t[1] for t in tokens]
    if any(x > y for x, y in itertools.pairwise(begins)) or any(
            x > y for x, y in itertools.pairwise(ends)):
        raise ValueError("tokens: expected (begin, end) offsets in text order")
    found: list[set[str]] = [set() for _ in tokens]
    for s in spans:
        begin, end, label, target = _span(s)
        name = f"{label}/{target}" if target else label
        k = bisect.bisect_right(ends, begin)          # first token ending after begin
        while k < len(tokens) and begins[k] < end:
            if min(end, ends[k]) > max(begin, begins[k]):
                found[k].add(name)
            k += 1
    return ["+".join(sorted(names)) if names else OUTSIDE for names in found]
