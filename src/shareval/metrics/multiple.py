"""Corrections for multiple comparisons.

An overview paper tests every pair of systems at once: with 20 systems that is
190 tests, and at p < 0.05 about ten "differences" would turn up by chance alone.
:func:`holm` adjusts the p-values so that deciding on ``adjusted < alpha``
keeps the chance of any false "differ" over the whole family below alpha.
"""
from __future__ import annotations

import numpy as np


def holm(p) -> np.ndarray:
    """Holm-Bonferroni step-down adjusted p-values, in the order given.

    With the m p-values sorted ascending, p(1) <= ... <= p(m), the i-th (1-based)
    becomes max over j <= i of (m - j + 1) * p(j), capped at 1: never smaller
    than the raw p, and monotone in it (a smaller raw p never gets a larger
    adjusted one). NaN entries (tests that were not run) stay NaN and do not
    count in m. Tied p-values get the same adjusted value.

    Three tests, p = 0.01, 0.04, 0.03. Sorted: 0.01 * 3 = 0.03; 0.03 * 2 = 0.06;
    0.04 * 1 = 0.04, raised to 0.06 to stay monotone:

    >>> holm([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
    >>> holm([0.5, float("nan"), 0.02]).tolist()
    [0.5, nan, 0.04]
    """
    p = np.asarray(p, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"holm: expected a 1-d list of p-values, got shape {p.shape}")
    known = ~np.isnan(p)
    bad = known & ~((p >= 0) & (p <= 1))
    if bad.any():
        raise ValueError(f"holm: p-values must lie in [0, 1]; got {p[bad][0]!r} "
                         f"at position {int(np.flatnonzero(bad)[0])}")
    out = np.full(p.shape, np.nan)
    idx = np.flatnonzero(known)
    m = len(idx)
    if m == 0:
        return out
    order = idx[np.argsort(p[idx], kind="stable")]
    scaled = (m - np.arange(m)) * p[order]
    out[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return out
