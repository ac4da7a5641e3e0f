"""Rank correlation: Spearman's rho and its permutation test.

Used to ask whether a system does better on some documents than on others, e.g.
its per-document F1 against the document's length.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

EXACT_MAX_N = 8                  # up to 8! = 40,320 permutations: enumerate them all
BATCH_ELEMENTS = 4_000_000       # bounds memory of one Monte Carlo batch


def average_ranks(x) -> np.ndarray:
    """1-based ranks, ties getting the mean of the ranks they span.

    NaN anywhere gives all-NaN ranks (there is no order to rank in), as
    ``scipy.stats.rankdata`` does.

    >>> average_ranks([10, 30, 20, 30]).tolist()
    [1.0, 3.5, 2.0, 3.5]
    """
    x = np.asarray(x, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"average_ranks: expected a 1-d list, got shape {x.shape}")
    if np.isnan(x).any():
        return np.full(x.shape, np.nan)
    order = np.argsort(x, kind="stable")
    xs = x[order]
    # start of each run of equal values, and the end (exclusive)
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    ends = np.r_[starts[1:], len(xs)]
    run_rank = (starts + 1 + ends) / 2.0          # mean of ranks starts+1 .. ends
    ranks = np.empty(len(x))
    ranks[order] = np.repeat(run_rank, ends - starts)
    return ranks


def _centred_ranks(x, y) -> tuple[np.ndarray, np.ndarray] | None:
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError("spearman: expected two 1-d lists")
    if len(x) != len(y):
        raise ValueError(f"spearman: the two lists differ in length ({len(x)} vs {len(y)})")
    if len(x) < 3 or np.isnan(x).any() or np.isnan(y).any():
        return None
    rx, ry = average_ranks(x), average_ranks(y)
    cx, cy = rx - rx.mean(), ry - ry.mean()
    if not cx.any() or not cy.any():          # a constant list: no correlation defined
        return None
    return cx, cy


def spearman(x, y) -> float:
    """Spearman's rho: Pearson's correlation of the average ranks (ties handled
    as ``scipy.stats.spearmanr`` does). NaN when there are fewer than 3 pairs,
    either list is constant, or a value is NaN.

    Without ties, rho = 1 - 6 * sum(d^2) / (n (n^2 - 1)); here d = (0, 1, 1, 0):
    1 - 6 * 2 / (4 * 15) = 0.8

    >>> round(spearman([1, 2, 3, 4], [10, 30, 20, 40]), 12)
    0.8
    """
    c = _centred_ranks(x, y)
    if c is None:
        return float("nan")
    cx, cy = c
    return float(np.clip(cx @ cy / math.sqrt((cx @ cx) * (cy @ cy)), -1.0, 1.0))


def spearman_test(x, y, samples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """(rho, two-sided p) of the permutation test of "no association".

    The null distribution permutes y against x. For n <= 8 every permutation is
    enumerated and p = #{|rho*| >= |rho|} / n!  (exact); above, ``samples``
    random permutations with add-one smoothing:
    p = (1 + #{|rho*| >= |rho|}) / (1 + samples). p is NaN when rho is.

    Four pairs, rho = 0.8: of the 24 orders of y, 8 reach |rho*| >= 0.8 (the
    identity and the reversal, and the 3 + 3 that differ from one of them by one
    swap of neighbours), so p = 8/24:

    >>> rho, p = spearman_test([1, 2, 3, 4], [10, 30, 20, 40])
    >>> round(rho, 12), round(p, 12)
    (0.8, 0.333333333333)
    """
    c = _centred_ranks(x, y)
    if c is None:
        return float("nan"), float("nan")
    cx, cy = c
    denom = math.sqrt((cx @ cx) * (cy @ cy))   # the same for every permutation of y
    rho = float(np.clip(cx @ cy / denom, -1.0, 1.0))
    threshold = abs(rho) * denom - 1e-9 * denom
    n = len(cx)
    if n <= EXACT_MAX_N:
        perms = np.array(list(itertools.permutations(range(n))), dtype=np.intp)
        dots = cy[perms] @ cx
        return rho, float(np.mean(np.abs(dots) >= threshold))
    if samples < 1:
        raise ValueError("spearman_test: samples must be at least 1")
    rng = np.random.default_rng(seed)
    size = max(1, BATCH_ELEMENTS // n)
    extreme = 0
    for start in range(0, samples, size):
        b = min(size, samples - start)
        perm = rng.permuted(np.broadcast_to(cy, (b, n)), axis=1)
        extreme += int(np.sum(np.abs(perm @ cx) >= threshold))
    return rho, (1 + extreme) / (1 + samples)
