"""Corrections for many tests at once (every pair of teams on a leaderboard)."""
from __future__ import annotations

import numpy as np


def holm(p) -> np.ndarray:
    """Holm-Bonferroni step-down adjusted p-values, in the order given.

    The i-th smallest of m p-values becomes max over j <= i of (m - j + 1) p_(j),
    capped at 1 (Holm 1979). NaN entries stay NaN and do not count in m.

    >>> holm([0.01, 0.04, 0.03]).round(2).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = len(ok)
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    scaled = (m - np.arange(m)) * p[order]
    out[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return out
