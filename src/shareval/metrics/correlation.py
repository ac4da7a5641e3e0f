"""Rank correlation of per-document scores with document properties (the overview's
"does the score follow the vocabulary size?")."""
from __future__ import annotations

from itertools import permutations

import numpy as np

EXACT_MAX = 8          # 8! = 40,320 orderings: enumerated; above, sampled


def average_ranks(x) -> np.ndarray:
    """1-based ranks, ties given their mean rank.

    >>> average_ranks([10, 20, 10, 30]).tolist()
    [1.5, 3.0, 1.5, 4.0]
    """
    x = np.asarray(x, dtype=float)
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    sx = x[order]
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and sx[j + 1] == sx[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    a = a - a.mean()
    b = b - b.mean()
    den = np.sqrt((a * a).sum() * (b * b).sum())
    return float((a * b).sum() / den) if den > 0 else float("nan")


def spearman(x, y) -> float:
    """Spearman's rho: Pearson's r of the average ranks; NaN when fewer than 3 pairs or
    either side is constant."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) != len(y):
        raise ValueError("x and y differ in length")
    if len(x) < 3:
        return float("nan")
    return _pearson(average_ranks(x), average_ranks(y))


def spearman_test(x, y, samples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """(rho, two-sided p) under the null that y's order is unrelated to x's: the exact
    permutation distribution for n <= 8, else ``samples`` random permutations with
    add-one smoothing, p = (1 + #{|rho*| >= |rho|}) / (1 + samples)."""
    rho = spearman(x, y)
    if rho != rho:
        return rho, float("nan")
    rx, ry = average_ranks(x), average_ranks(y)
    rx = rx - rx.mean()
    ry = ry - ry.mean()
    den = np.sqrt((rx * rx).sum() * (ry * ry).sum())
    n = len(rx)
    if n <= EXACT_MAX:
        perms = np.array(list(permutations(range(n))))
        r = (ry[perms] @ rx) / den
        return rho, float(np.mean(np.abs(r) >= abs(rho) - 1e-12))
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, samples, 10_000):
        k = min(10_000, samples - start)
        idx = np.argsort(rng.random((k, n)), axis=1)
        r = (ry[idx] @ rx) / den
        hits += int(np.sum(np.abs(r) >= abs(rho) - 1e-12))
    return rho, (hits + 1) / (samples + 1)
