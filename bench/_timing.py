"""Timing helpers shared by the benchmarks (server.py, uploads.py)."""
from __future__ import annotations


def pct(xs, q: float) -> float:
    """The ``q`` quantile of ``xs`` (0 <= q <= 1): the sorted value at rank
    round(q * (n - 1)), no interpolation; NaN when ``xs`` is empty."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))] if xs else float("nan")
